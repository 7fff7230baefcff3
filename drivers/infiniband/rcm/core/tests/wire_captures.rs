// SPDX-License-Identifier: GPL-2.0

//! Conformance against real MADs: the in-tree C CM's exchanges between two
//! guests (rping, ucmatose, a REJ for a missing listener, udaddy's SIDR),
//! captured by `scripts/capture-cm.sh` into `tests/captures/*.pcap`.
//!
//! Every CM MAD in the captures must parse, and emitting the parsed value
//! must give back the same 256 bytes. The field values are checked against
//! an independent decoder, Wireshark's InfiniBand dissector (`tshark`).

use rcm_core::wire::field::MAD_SIZE;
use rcm_core::wire::{CmMad, CmMessage};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// RoCEv2's UDP port.
const ROCE_PORT: u16 = 4791;
/// BTH + DETH in front of a MAD sent to QP1.
const BTH_DETH: usize = 12 + 8;

/// A CM MAD from a capture, with its frame number (1-based, as tshark).
struct Captured {
    frame: usize,
    mad: [u8; MAD_SIZE],
}

fn captures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/captures");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/captures exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no captures in {}", dir.display());
    files
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// The MADs to QP1 in a classic little-endian pcap of Ethernet frames.
fn read_pcap(path: &Path) -> Vec<Captured> {
    let data = std::fs::read(path).expect("read pcap");
    assert_eq!(&data[..4], &[0xd4, 0xc3, 0xb2, 0xa1], "little-endian pcap");
    assert_eq!(
        u32::from_le_bytes(data[20..24].try_into().unwrap()),
        1,
        "Ethernet"
    );
    let mut out = Vec::new();
    let (mut at, mut frame) = (24, 0);
    while at + 16 <= data.len() {
        frame += 1;
        let caplen = u32::from_le_bytes(data[at + 8..at + 12].try_into().unwrap()) as usize;
        let pkt = &data[at + 16..at + 16 + caplen];
        at += 16 + caplen;
        if pkt.len() < 14 + 20 || be16(pkt, 12) != 0x0800 || pkt[14 + 9] != 17 {
            continue; // not IPv4/UDP
        }
        let udp = 14 + usize::from(pkt[14] & 0x0f) * 4;
        if pkt.len() < udp + 8 || be16(pkt, udp + 2) != ROCE_PORT {
            continue;
        }
        let bth = udp + 8;
        let dest_qp = u32::from_be_bytes([0, pkt[bth + 5], pkt[bth + 6], pkt[bth + 7]]);
        if dest_qp != 1 || pkt.len() < bth + BTH_DETH + MAD_SIZE {
            continue;
        }
        let mut mad = [0u8; MAD_SIZE];
        mad.copy_from_slice(&pkt[bth + BTH_DETH..bth + BTH_DETH + MAD_SIZE]);
        out.push(Captured { frame, mad });
    }
    out
}

#[test]
fn every_captured_mad_parses_and_reemits_byte_for_byte() {
    let mut seen: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut total = 0;
    for path in captures() {
        for c in read_pcap(&path) {
            let parsed = CmMad::parse(&c.mad)
                .unwrap_or_else(|e| panic!("{} frame {}: {e}", path.display(), c.frame));
            let mut again = [0u8; MAD_SIZE];
            parsed.emit(&mut again);
            if again != c.mad {
                let diff: Vec<usize> = (0..MAD_SIZE).filter(|&i| again[i] != c.mad[i]).collect();
                panic!(
                    "{} frame {} ({}): re-emitted bytes differ at {diff:?}",
                    path.display(),
                    c.frame,
                    parsed.message.name()
                );
            }
            *seen.entry(parsed.message.name()).or_default() += 1;
            total += 1;
        }
    }
    eprintln!("captured MADs: {total} {seen:?}");
    for name in [
        "REQ", "REP", "RTU", "REJ", "DREQ", "DREP", "SIDR_REQ", "SIDR_REP",
    ] {
        assert!(seen.contains_key(name), "the captures hold no {name}");
    }
}

/// A tshark field value: hex (`0x..`), decimal, or an IPv4 address.
fn value(s: &str) -> Option<u64> {
    if let Some(hex) = s.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16).ok();
    }
    match s {
        "True" => Some(1),
        "False" => Some(0),
        _ => s.parse().ok(),
    }
}

/// (tshark field, our value) pairs for one message.
fn our_fields(m: &CmMad) -> Vec<(&'static str, u64)> {
    let h = &m.header;
    let mut f = vec![
        ("infiniband.mad.attributeid", u64::from(h.attr_id)),
        ("infiniband.mad.transactionid", h.transaction_id),
        ("infiniband.mad.attributemodifier", u64::from(h.attr_mod)),
        ("infiniband.mad.classversion", u64::from(h.class_version)),
        ("infiniband.mad.method", u64::from(h.method)),
    ];
    match &m.message {
        CmMessage::Req(r) => {
            let p = &r.primary_path;
            f.extend([
                ("infiniband.cm.req.serviceid", r.service_id),
                ("infiniband.cm.req.localcaguid", r.local_ca_guid),
                ("infiniband.cm.req.localqkey", u64::from(r.local_qkey)),
                ("infiniband.cm.req.localqpn", u64::from(r.local_qpn)),
                (
                    "infiniband.cm.req.responderres",
                    u64::from(r.responder_resources),
                ),
                ("infiniband.cm.req.initdepth", u64::from(r.initiator_depth)),
                (
                    "infiniband.cm.req.remoteresptout",
                    u64::from(r.remote_cm_response_timeout.exponent()),
                ),
                (
                    "infiniband.cm.req.transpsvctype",
                    u64::from(r.transport_service_type),
                ),
                (
                    "infiniband.cm.req.e2eflowctrl",
                    u64::from(r.end_to_end_flow_control),
                ),
                ("infiniband.cm.req.startpsn", u64::from(r.starting_psn)),
                (
                    "infiniband.cm.req.localresptout",
                    u64::from(r.local_cm_response_timeout.exponent()),
                ),
                ("infiniband.cm.req.retrcount", u64::from(r.retry_count)),
                ("infiniband.cm.req.pkey", u64::from(r.partition_key)),
                ("infiniband.cm.req.pppmtu", u64::from(r.path_mtu)),
                ("infiniband.cm.req.rdcexist", u64::from(r.rdc_exists)),
                (
                    "infiniband.cm.req.rnrretrcount",
                    u64::from(r.rnr_retry_count),
                ),
                ("infiniband.cm.req.maxcmretr", u64::from(r.max_cm_retries)),
                ("infiniband.cm.req.srq", u64::from(r.srq)),
                (
                    "infiniband.cm.req.ext_transport",
                    u64::from(r.extended_transport_type),
                ),
                (
                    "infiniband.cm.req.prim_locallid",
                    u64::from(p.local_port_lid),
                ),
                (
                    "infiniband.cm.req.prim_remotelid",
                    u64::from(p.remote_port_lid),
                ),
                // Wireshark shows the 20-bit flow label's top 12 bits only
                // (0x9b639 as 0x9b6); the C CM (GENMASK(31, 12) of the
                // word) and rcm read all 20.
                (
                    "infiniband.cm.req.prim_flowlabel",
                    u64::from(p.flow_label >> 8),
                ),
                (
                    "infiniband.cm.req.prim_tfcclass",
                    u64::from(p.traffic_class),
                ),
                ("infiniband.cm.req.prim_hoplim", u64::from(p.hop_limit)),
                ("infiniband.cm.req.prim_sl", u64::from(p.sl)),
                (
                    "infiniband.cm.req.prim_subnetlocal",
                    u64::from(p.subnet_local),
                ),
                (
                    "infiniband.cm.req.prim_localacktout",
                    u64::from(p.local_ack_timeout.exponent()),
                ),
            ]);
        }
        CmMessage::Rep(r) => f.extend([
            (
                "infiniband.cm.rep.remotecommid",
                u64::from(r.remote_comm_id),
            ),
            ("infiniband.cm.rep.localqkey", u64::from(r.local_qkey)),
            ("infiniband.cm.rep.localqpn", u64::from(r.local_qpn)),
            ("infiniband.cm.rep.startpsn", u64::from(r.starting_psn)),
            (
                "infiniband.cm.rep.respres",
                u64::from(r.responder_resources),
            ),
            ("infiniband.cm.rep.initdepth", u64::from(r.initiator_depth)),
            (
                "infiniband.cm.rep.tgtackdelay",
                u64::from(r.target_ack_delay.exponent()),
            ),
            (
                "infiniband.cm.rep.failoveracc",
                u64::from(r.failover_accepted),
            ),
            (
                "infiniband.cm.rep.e2eflowctrl",
                u64::from(r.end_to_end_flow_control),
            ),
            (
                "infiniband.cm.rep.rnrretrcount",
                u64::from(r.rnr_retry_count),
            ),
            ("infiniband.cm.rep.srq", u64::from(r.srq)),
            ("infiniband.cm.rep.localcaguid", r.local_ca_guid),
        ]),
        CmMessage::Rtu(r) => f.extend([
            ("infiniband.cm.rtu.localcommid", u64::from(r.local_comm_id)),
            (
                "infiniband.cm.rtu.remotecommid",
                u64::from(r.remote_comm_id),
            ),
        ]),
        CmMessage::Rej(r) => f.extend([
            ("infiniband.cm.rej.localcommid", u64::from(r.local_comm_id)),
            (
                "infiniband.cm.rej.remotecommid",
                u64::from(r.remote_comm_id),
            ),
            ("infiniband.cm.rej.msgrej", u64::from(r.message_rejected)),
            (
                "infiniband.cm.rej.rejinfolen",
                u64::from(r.rejected_info_length),
            ),
            ("infiniband.cm.rej.reason", u64::from(r.reason.to_wire())),
        ]),
        CmMessage::Dreq(r) => f.extend([
            ("infiniband.cm.dreq.localcommid", u64::from(r.local_comm_id)),
            (
                "infiniband.cm.dreq.remotecommid",
                u64::from(r.remote_comm_id),
            ),
            (
                "infiniband.cm.req.remoteqpneecn",
                u64::from(r.remote_qpn_eecn),
            ),
        ]),
        CmMessage::Drep(r) => f.extend([
            ("infiniband.cm.drsp.localcommid", u64::from(r.local_comm_id)),
            (
                "infiniband.cm.drsp.remotecommid",
                u64::from(r.remote_comm_id),
            ),
        ]),
        _ => {}
    }
    f
}

#[test]
fn field_values_agree_with_tsharks_dissector() {
    // One field list for every message; absent fields come back empty.
    let mut names: Vec<&'static str> = Vec::new();
    for path in captures() {
        for c in read_pcap(&path) {
            for (n, _) in our_fields(&CmMad::parse(&c.mad).expect("parses")) {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
    }
    let mut checked = 0;
    for path in captures() {
        let ours = read_pcap(&path);
        let mut cmd = Command::new("tshark");
        cmd.args(["-r"]).arg(&path).args([
            "-d",
            "udp.port==4791,infiniband",
            "-Y",
            "infiniband.mad",
            "-T",
            "fields",
            "-E",
            "separator=|",
            "-e",
            "frame.number",
        ]);
        for n in &names {
            cmd.args(["-e", n]);
        }
        let out = cmd
            .output()
            .expect("tshark runs (scripts/install-toolchain.sh installs it)");
        assert!(
            out.status.success(),
            "tshark: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let rows: BTreeMap<usize, Vec<String>> = text
            .lines()
            .filter_map(|l| {
                let cols: Vec<String> = l.split('|').map(str::to_string).collect();
                Some((cols.first()?.parse().ok()?, cols))
            })
            .collect();
        assert_eq!(rows.len(), ours.len(), "tshark and we see the same MADs");
        for c in &ours {
            let m = CmMad::parse(&c.mad).expect("parses");
            let row = rows.get(&c.frame).expect("tshark decoded this frame");
            for (name, want) in our_fields(&m) {
                let col = names.iter().position(|n| *n == name).expect("field listed") + 1;
                let got = row.get(col).map(String::as_str).unwrap_or("");
                assert_eq!(
                    value(got),
                    Some(want),
                    "{} frame {} {}: {name} is {got:?} to tshark, {want:#x} to us",
                    path.display(),
                    c.frame,
                    m.message.name()
                );
                checked += 1;
            }
        }
    }
    eprintln!("tshark cross-check: {checked} field values agree");
    assert!(checked > 0);
}
