// SPDX-License-Identifier: GPL-2.0

//! Properties every CM message layout must have, checked over random MADs:
//! parse and emit are inverses, reserved bits go out as zero, and parsing
//! never panics on any input.

use rcm_core::wire::field::{Mad, MAD_SIZE};
use rcm_core::wire::mad::attr;
use rcm_core::wire::{CmMad, ParseError};

/// Small deterministic generator (xorshift64*), so failures replay.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn fill(&mut self, buf: &mut [u8]) {
        for b in buf {
            *b = self.next() as u8;
        }
    }
}

const ATTRS: [(u16, u8); 12] = [
    (attr::CLASS_PORT_INFO, 0x81),
    (attr::REQ, 3),
    (attr::MRA, 3),
    (attr::REJ, 3),
    (attr::REP, 3),
    (attr::RTU, 3),
    (attr::DREQ, 3),
    (attr::DREP, 3),
    (attr::SIDR_REQ, 3),
    (attr::SIDR_REP, 3),
    (attr::LAP, 3),
    (attr::APR, 3),
];

fn with_cm_header(mad: &mut Mad, attr_id: u16, method: u8) {
    mad[0] = 1;
    mad[1] = 0x07;
    mad[2] = 2;
    mad[3] = method;
    mad[16..18].copy_from_slice(&attr_id.to_be_bytes());
}

fn emit(m: &CmMad) -> Mad {
    let mut out = [0u8; MAD_SIZE];
    m.emit(&mut out);
    out
}

#[test]
fn parse_emit_round_trip_on_random_mads() {
    let mut rng = Rng(0x5eed);
    for &(attr_id, method) in &ATTRS {
        for _ in 0..2000 {
            let mut mad = [0u8; MAD_SIZE];
            rng.fill(&mut mad);
            with_cm_header(&mut mad, attr_id, method);
            let parsed = CmMad::parse(&mad).expect("valid header");
            let emitted = emit(&parsed);
            assert_eq!(CmMad::parse(&emitted), Ok(parsed), "attr {attr_id:#x}");
            assert_eq!(emit(&parsed), emitted, "emit is deterministic");
        }
    }
}

/// The bits a layout covers: parse an all-ones MAD and emit it back. The
/// header fields pinned to valid values count as covered in full (all of
/// the header but its reserved word at 18..20 is fields).
fn covered_bits(attr_id: u16, method: u8) -> Mad {
    let mut ones = [0xffu8; MAD_SIZE];
    with_cm_header(&mut ones, attr_id, method);
    let mut covered = emit(&CmMad::parse(&ones).expect("valid header"));
    covered[..18].fill(0xff);
    covered[20..24].fill(0xff);
    covered
}

#[test]
fn reserved_bits_are_ignored_and_zeroed() {
    let mut rng = Rng(42);
    for &(attr_id, method) in &ATTRS {
        let covered = covered_bits(attr_id, method);
        for _ in 0..500 {
            let mut mad = [0u8; MAD_SIZE];
            rng.fill(&mut mad);
            with_cm_header(&mut mad, attr_id, method);
            let parsed = CmMad::parse(&mad).expect("valid header");
            // Flipping reserved bits changes nothing in the parse.
            let mut noisy = mad;
            for (b, c) in noisy.iter_mut().zip(covered.iter()) {
                *b ^= !c;
            }
            assert_eq!(CmMad::parse(&noisy), Ok(parsed), "attr {attr_id:#x}");
            // Emission keeps exactly the covered bits of the input.
            let emitted = emit(&parsed);
            for i in 0..MAD_SIZE {
                assert_eq!(
                    emitted[i],
                    mad[i] & covered[i],
                    "attr {attr_id:#x} byte {i}"
                );
            }
        }
    }
}

#[test]
fn reserved_areas_match_the_ibta_tables() {
    // Bytes of the body (offset from 24) that are reserved in full.
    let reserved: [(u16, &[usize]); 6] = [
        (attr::REQ, &[4, 24, 25, 26, 27]),
        (attr::SIDR_REQ, &[6, 7]),
        (attr::LAP, &[8, 9, 10, 11, 16, 17, 18, 19]),
        (attr::APR, &[10, 11]),
        (attr::REJ, &[]),
        (attr::DREQ, &[]),
    ];
    for (attr_id, bytes) in reserved {
        let covered = covered_bits(attr_id, 3);
        for &b in bytes {
            assert_eq!(
                covered[24 + b],
                0,
                "attr {attr_id:#x} body byte {b} is reserved"
            );
        }
    }
    // Header byte 18..20 is reserved.
    let covered = covered_bits(attr::RTU, 3);
    assert_eq!(&covered[18..20], &[0, 0]);
    // Every RTU/DREP byte but the header's reserved word is used.
    assert!(covered[20..].iter().all(|&b| b == 0xff));
}

#[test]
fn header_errors() {
    let mut mad = [0u8; MAD_SIZE];
    with_cm_header(&mut mad, attr::REQ, 3);
    assert!(CmMad::parse(&mad).is_ok());
    assert_eq!(CmMad::parse(&mad[..255]), Err(ParseError::WrongLength(255)));
    let mut long = [0u8; 257];
    long[..256].copy_from_slice(&mad);
    assert_eq!(CmMad::parse(&long), Err(ParseError::WrongLength(257)));
    assert_eq!(CmMad::parse(&[]), Err(ParseError::WrongLength(0)));

    let mut m = mad;
    m[0] = 2;
    assert_eq!(CmMad::parse(&m), Err(ParseError::BaseVersion(2)));
    let mut m = mad;
    m[1] = 0x03;
    assert_eq!(CmMad::parse(&m), Err(ParseError::NotCmClass(3)));
    let mut m = mad;
    m[2] = 1;
    assert_eq!(CmMad::parse(&m), Err(ParseError::ClassVersion(1)));
    let mut m = mad;
    m[3] = 0x01;
    assert_eq!(
        CmMad::parse(&m),
        Err(ParseError::Method {
            method: 1,
            attr_id: 0x10
        })
    );
    let mut m = mad;
    m[16..18].copy_from_slice(&0x0020u16.to_be_bytes());
    assert_eq!(CmMad::parse(&m), Err(ParseError::UnknownAttribute(0x20)));
    // ClassPortInfo comes as Get, never as Send.
    let mut m = mad;
    m[16..18].copy_from_slice(&attr::CLASS_PORT_INFO.to_be_bytes());
    assert!(matches!(CmMad::parse(&m), Err(ParseError::Method { .. })));
    m[3] = 0x01;
    assert!(CmMad::parse(&m).is_ok());
}

#[test]
fn parse_never_panics() {
    let mut rng = Rng(7);
    for len in [0usize, 1, 24, 255, 256, 257, 512] {
        for _ in 0..2000 {
            let mut buf = vec![0u8; len];
            rng.fill(&mut buf);
            if len >= 4 && rng.next() & 1 == 0 {
                buf[0] = 1;
                buf[1] = 7;
                buf[2] = 2;
            }
            let _ = CmMad::parse(&buf);
        }
    }
}

/// A trace's summary of a MAD, read without a parse, names what the full
/// parse finds: the message, its comm ids and a REJ's reason.
#[test]
fn summary_matches_the_parse() {
    use rcm_core::wire::{CmMessage, MadSummary};
    let mut rng = Rng(0x7ace);
    for &(attr_id, method) in &ATTRS {
        for _ in 0..500 {
            let mut mad = [0u8; MAD_SIZE];
            rng.fill(&mut mad);
            with_cm_header(&mut mad, attr_id, method);
            let parsed = CmMad::parse(&mad).expect("valid header");
            let s = MadSummary::of(&mad);
            assert_eq!(s.name(), parsed.message.name());
            let (local, remote, reason) = match parsed.message {
                CmMessage::ClassPortInfo(_) => (s.local_comm_id, 0, 0),
                CmMessage::Req(m) => (m.local_comm_id, 0, 0),
                CmMessage::Mra(m) => (m.local_comm_id, m.remote_comm_id, 0),
                CmMessage::Rej(m) => (m.local_comm_id, m.remote_comm_id, m.reason.to_wire()),
                CmMessage::Rep(m) => (m.local_comm_id, m.remote_comm_id, 0),
                CmMessage::Rtu(m) => (m.local_comm_id, m.remote_comm_id, 0),
                CmMessage::Dreq(m) => (m.local_comm_id, m.remote_comm_id, 0),
                CmMessage::Drep(m) => (m.local_comm_id, m.remote_comm_id, 0),
                CmMessage::SidrReq(m) => (m.request_id, 0, 0),
                CmMessage::SidrRep(m) => (m.request_id, 0, 0),
                CmMessage::Lap(m) => (m.local_comm_id, m.remote_comm_id, 0),
                CmMessage::Apr(m) => (m.local_comm_id, m.remote_comm_id, 0),
            };
            assert_eq!(
                (s.local_comm_id, s.remote_comm_id, s.rej_reason),
                (local, remote, reason),
                "attr {attr_id:#x}"
            );
        }
    }
    // Not the CM class: no ids.
    let mut mad = [0xffu8; MAD_SIZE];
    mad[1] = 0x03;
    let s = MadSummary::of(&mad);
    assert_eq!((s.local_comm_id, s.remote_comm_id, s.rej_reason), (0, 0, 0));
}

/// A message made zero field by field (`zeroed`, what a sender starts
/// from) is what a zero MAD reads as, for every layout.
#[test]
fn zeroed_is_what_a_zero_mad_reads_as() {
    use rcm_core::wire::{class_port_info, disconnect, lap, mad, mra, rep, req, sidr};
    let zero: Mad = [0; MAD_SIZE];
    assert_eq!(req::Req::zeroed(), req::Req::read(&zero));
    assert_eq!(req::ReqPath::zeroed(), req::ReqPath::read::<76>(&zero));
    assert_eq!(rep::Rep::zeroed(), rep::Rep::read(&zero));
    assert_eq!(rep::Rtu::zeroed(), rep::Rtu::read(&zero));
    assert_eq!(mra::Mra::zeroed(), mra::Mra::read(&zero));
    assert_eq!(mra::Rej::zeroed(), mra::Rej::read(&zero));
    assert_eq!(disconnect::Dreq::zeroed(), disconnect::Dreq::read(&zero));
    assert_eq!(disconnect::Drep::zeroed(), disconnect::Drep::read(&zero));
    assert_eq!(lap::Lap::zeroed(), lap::Lap::read(&zero));
    assert_eq!(lap::Apr::zeroed(), lap::Apr::read(&zero));
    assert_eq!(sidr::SidrReq::zeroed(), sidr::SidrReq::read(&zero));
    assert_eq!(sidr::SidrRep::zeroed(), sidr::SidrRep::read(&zero));
    assert_eq!(mad::MadHeader::zeroed(), mad::MadHeader::read(&zero));
    assert_eq!(
        class_port_info::ClassPortInfo::zeroed(),
        class_port_info::ClassPortInfo::read(&zero)
    );
}
