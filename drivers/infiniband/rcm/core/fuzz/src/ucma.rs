// SPDX-License-Identifier: GPL-2.0

//! Target `ucma_command`: the input is one `write()` to the rdma_ucm
//! device (header, then body). Whatever it holds, the frame check, the
//! input length and the command parser answer without panicking; a
//! command that parses keeps its addresses exactly (written back and read
//! again), and a SET_OPTION's value (the bytes after its struct) parses
//! or is refused.

use rcm_core::rdma_cm::{sockaddr, SockAddr};
use rcm_core::ucma::command::parse;
use rcm_core::ucma::layout::input::HEADER;
use rcm_core::ucma::{Command, Header, Opcode, UserAddr};

/// Runs one write.
pub fn command(data: &[u8]) {
    if Header::too_short(data.len()).is_some() {
        return;
    }
    let mut raw = [0u8; HEADER];
    raw.copy_from_slice(&data[..HEADER]);
    let Ok(header) = Header::parse(data.len(), &raw) else {
        return;
    };
    let Ok(want) = header.op.input_len(&header) else {
        return;
    };
    if matches!(header.op, Opcode::Connect | Opcode::Accept) {
        // The grown structs read what was sent, never past their size.
        assert_eq!(want, usize::from(header.in_len).min(header.op.input_size()));
    }
    let rest = &data[HEADER..];
    let body = &rest[..want.min(rest.len())];
    let Ok(cmd) = parse(&header, body) else {
        return;
    };
    match cmd {
        Command::Bind { addr, .. } | Command::Join { addr, .. } => keeps(&addr),
        Command::ResolveAddr { src, dst, .. } => {
            keeps(&dst);
            if let UserAddr::Addr(a) = src {
                keeps(&a);
            }
        }
        Command::SetOption(opt) => {
            let _ = opt.value(rest.get(want..).unwrap_or(&[]));
        }
        _ => {}
    }
}

fn keeps(addr: &SockAddr) {
    let mut out = [0u8; 128];
    let n = sockaddr::write(addr, &mut out).expect("every family fits a storage");
    assert_eq!(
        sockaddr::read(&out[..n]).as_ref(),
        Some(addr),
        "address changed"
    );
}

/// Seeds: each command at its size with a plausible body.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    (0u32..23)
        .filter_map(Opcode::from_raw)
        .map(|op| {
            let len = op.input_size();
            let mut w = Vec::with_capacity(HEADER + len);
            w.extend_from_slice(&op.raw().to_ne_bytes());
            w.extend_from_slice(&(len as u16).to_ne_bytes());
            w.extend_from_slice(&400u16.to_ne_bytes());
            w.resize(HEADER + len, 0);
            // An IPv4 family where addresses start in most commands.
            for at in [0usize, 8, 16, 24, 28, 144] {
                if at + 2 <= len && op != Opcode::CreateId {
                    w[HEADER + at..HEADER + at + 2].copy_from_slice(&2u16.to_ne_bytes());
                }
            }
            (format!("ucma-{:?}", op).to_lowercase(), w)
        })
        .collect()
}
