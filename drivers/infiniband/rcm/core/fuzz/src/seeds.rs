// SPDX-License-Identifier: GPL-2.0

//! Seed inputs: the byte images of `core/tests/wire_vectors.rs`, the MADs
//! two endpoints exchange in every kind of exchange, and `endpoint`
//! programs that walk each exchange through the API, through raw MADs and
//! through forged ones.

use crate::endpoint::{encode, Op, Setup};
use rcm_core::cm::store::btree::Std;
use rcm_core::cm::{
    CommId, Config, Destination, DeviceId, Endpoint, Event, ListenSpec, Received, Sink, Transmit,
};
use rcm_core::reason::{AprStatus, RejectReason, SidrStatus};
use rcm_core::sim::{sample_rep, sample_req};
use rcm_core::timer::IbaTime;
use rcm_core::wire::field::{Mad, MAD_SIZE};
use rcm_core::wire::sidr::{SidrRep, SidrReq};

/// Writes `bytes` at body offset `at` (MAD offset 24 + at).
fn put(mad: &mut Mad, at: usize, bytes: &[u8]) {
    mad[24 + at..24 + at + bytes.len()].copy_from_slice(bytes);
}

fn header_image(attr_id: u16, attr_mod: u32) -> Mad {
    let mut mad = [0u8; MAD_SIZE];
    mad[..16].copy_from_slice(&[1, 0x07, 2, 0x03, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
    mad[16..18].copy_from_slice(&attr_id.to_be_bytes());
    mad[20..24].copy_from_slice(&attr_mod.to_be_bytes());
    mad
}

fn seq<const N: usize>(start: u8) -> [u8; N] {
    core::array::from_fn(|i| start.wrapping_add(i as u8))
}

/// The byte images of `core/tests/wire_vectors.rs`, plus a few that the
/// parser must refuse (wrong class version, method, attribute, length).
pub fn wire_vectors() -> Vec<(&'static str, Vec<u8>)> {
    let mut v: Vec<(&'static str, Vec<u8>)> = Vec::new();

    let mut m = header_image(0x0010, 0xcafe_babe);
    put(&mut m, 0, &[0x11, 0x22, 0x33, 0x44]);
    put(&mut m, 5, &[0x55, 0x66, 0x77]);
    put(&mut m, 8, &[0, 0, 0, 0, 0x01, 0x06, 0x4e, 0x21]);
    put(
        &mut m,
        16,
        &[0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18],
    );
    put(&mut m, 28, &[0x21, 0x22, 0x23, 0x24]);
    put(&mut m, 32, &[0x31, 0x32, 0x33, 0x34]);
    put(&mut m, 36, &[0x41, 0x42, 0x43, 0x44]);
    put(&mut m, 40, &[0x51, 0x52, 0x53, 0b1010_0011]);
    put(&mut m, 44, &[0x61, 0x62, 0x63, 0b1001_0101]);
    put(&mut m, 48, &[0xff, 0xff]);
    put(&mut m, 50, &[0b0101_1110]);
    put(&mut m, 51, &[0b1111_0011]);
    put(&mut m, 52, &[0xa1, 0xa2, 0xb1, 0xb2]);
    put(&mut m, 56, &seq::<16>(0xc0));
    put(&mut m, 72, &seq::<16>(0xd0));
    put(&mut m, 88, &[0x12, 0x34, 0x50, 0x2a]);
    put(&mut m, 92, &[0x77, 0x40, 0b1011_1000, 0b1001_1000]);
    put(&mut m, 96, &[0x01, 0x02, 0x03, 0x04]);
    put(&mut m, 100, &seq::<16>(0xe0));
    put(&mut m, 116, &seq::<16>(0xf0));
    put(&mut m, 132, &[0xfe, 0xdc, 0xb0, 0x3f]);
    put(&mut m, 136, &[0x88, 0x99, 0b0011_0000, 0b1111_1100]);
    put(&mut m, 140, &seq::<92>(0x80));
    v.push(("vec-req", m.to_vec()));
    // The same REQ in class version 1 (REJ 31) and with a wrong method.
    let mut bad = m;
    bad[2] = 1;
    v.push(("vec-req-class-version-1", bad.to_vec()));
    let mut bad = m;
    bad[3] = 0x81;
    v.push(("vec-req-wrong-method", bad.to_vec()));
    v.push(("vec-req-short", m[..255].to_vec()));

    let mut m = header_image(0x0012, 0);
    put(&mut m, 0, &[0, 0, 0, 1, 0, 0, 0, 2]);
    put(&mut m, 8, &[0b1000_0000, 72 << 1, 0x00, 34]);
    v.push(("vec-rej-unknown-reason", m.to_vec()));

    let mut m = header_image(0x0011, 0);
    put(&mut m, 0, &[0xa0, 0xa1, 0xa2, 0xa3, 0xb0, 0xb1, 0xb2, 0xb3]);
    put(&mut m, 8, &[0b0100_0000, 0b1100_0000]);
    put(&mut m, 10, &seq::<222>(1));
    v.push(("vec-mra", m.to_vec()));

    let mut m = header_image(0x0012, 0x15);
    put(&mut m, 0, &[0, 0, 0, 0, 0xb0, 0xb1, 0xb2, 0xb3]);
    put(&mut m, 8, &[0, 5 << 1, 0x00, 28]);
    put(&mut m, 12, &seq::<72>(0x40));
    put(&mut m, 84, &seq::<148>(0x90));
    v.push(("vec-rej", m.to_vec()));

    let mut m = header_image(0x0013, 0x1234_5678);
    put(&mut m, 0, &[0xa0, 0xa1, 0xa2, 0xa3, 0xb0, 0xb1, 0xb2, 0xb3]);
    put(&mut m, 8, &[0x01, 0x23, 0x45, 0x67]);
    put(&mut m, 12, &[0x00, 0x00, 0x11, 0xaa]);
    put(&mut m, 16, &[0x00, 0x00, 0x00, 0xbb]);
    put(&mut m, 20, &[0xc1, 0xc2, 0xc3, 0xcc]);
    put(&mut m, 24, &[0x10, 0x20, 0b0111_1101, 0b1111_0000]);
    put(
        &mut m,
        28,
        &[0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10],
    );
    put(&mut m, 36, &seq::<196>(0x33));
    v.push(("vec-rep", m.to_vec()));

    let mut m = header_image(0x0014, 0);
    put(&mut m, 0, &[1, 2, 3, 4, 5, 6, 7, 8]);
    put(&mut m, 8, &seq::<224>(9));
    v.push(("vec-rtu", m.to_vec()));

    let mut m = header_image(0x0015, 0);
    put(&mut m, 0, &[1, 2, 3, 4, 5, 6, 7, 8, 0xab, 0xcd, 0xef]);
    put(&mut m, 12, &seq::<220>(0x20));
    v.push(("vec-dreq", m.to_vec()));

    let mut m = header_image(0x0016, 0);
    put(&mut m, 0, &[8, 7, 6, 5, 4, 3, 2, 1]);
    put(&mut m, 8, &seq::<224>(0x70));
    v.push(("vec-drep", m.to_vec()));

    let mut m = header_image(0x0017, 0);
    put(&mut m, 0, &[0x12, 0x34, 0x56, 0x78, 0x80, 0x01]);
    put(&mut m, 8, &[0, 0, 0, 0, 0x01, 0x11, 0x12, 0x34]);
    put(&mut m, 16, &seq::<216>(0x21));
    v.push(("vec-sidr-req", m.to_vec()));

    let mut m = header_image(0x0018, 0);
    put(&mut m, 0, &[0x12, 0x34, 0x56, 0x78, 2, 72, 0xaa, 0xbb]);
    put(&mut m, 8, &[0x00, 0x0a, 0x0b, 0xcc]);
    put(&mut m, 12, &[0, 0, 0, 0, 0x01, 0x11, 0x12, 0x34]);
    put(&mut m, 20, &[0x01, 0x23, 0x45, 0x67]);
    put(&mut m, 24, &seq::<72>(0x50));
    put(&mut m, 96, &seq::<136>(0x60));
    v.push(("vec-sidr-rep", m.to_vec()));

    let mut m = header_image(0x0019, 0);
    put(&mut m, 0, &[1, 2, 3, 4, 5, 6, 7, 8]);
    put(&mut m, 12, &[0x0c, 0x0d, 0x0e, 0b1011_1000]);
    put(&mut m, 20, &[0x11, 0x22, 0x33, 0x44]);
    put(&mut m, 24, &seq::<16>(0x80));
    put(&mut m, 40, &seq::<16>(0x90));
    put(&mut m, 56, &[0xab, 0xcd, 0xe0, 0x12, 0x34, 33]);
    put(&mut m, 62, &[0b0111_1000, 0b0111_0000]);
    put(&mut m, 64, &seq::<168>(0xa0));
    v.push(("vec-lap", m.to_vec()));

    let mut m = header_image(0x001a, 0);
    put(&mut m, 0, &[1, 2, 3, 4, 5, 6, 7, 8, 16, 13]);
    put(&mut m, 12, &seq::<72>(0x10));
    put(&mut m, 84, &seq::<148>(0x60));
    v.push(("vec-apr", m.to_vec()));

    let mut m = header_image(0x0001, 0);
    m[3] = 0x81;
    put(
        &mut m,
        0,
        &[1, 2, 0x12, 0x34, 0xab, 0xcd, 0xef, 0b0001_0011],
    );
    put(&mut m, 8, &seq::<16>(0x20));
    put(
        &mut m,
        24,
        &[0x55, 0x6a, 0xbc, 0xde, 0x11, 0x22, 0x33, 0x44],
    );
    put(
        &mut m,
        32,
        &[0x00, 0x01, 0x02, 0x03, 0x0a, 0x0b, 0x0c, 0x0d],
    );
    put(&mut m, 40, &seq::<16>(0x40));
    put(
        &mut m,
        56,
        &[0x66, 0x71, 0x23, 0x45, 0x55, 0x66, 0x77, 0x88],
    );
    put(
        &mut m,
        64,
        &[0x09, 0x00, 0x00, 0x01, 0x80, 0x01, 0x00, 0x00],
    );
    v.push(("vec-class-port-info", m.to_vec()));

    let m = header_image(0x0020, 0);
    v.push(("vec-unknown-attribute", m.to_vec()));
    v
}

/// Collects what an endpoint sends and reports.
#[derive(Default)]
struct Capture {
    sent: Vec<(u32, Mad)>,
    events: Vec<(CommId, Event)>,
}

impl Sink<u32> for Capture {
    fn transmit(&mut self, tx: Transmit<'_, u32>) {
        // Every MAD is delivered with its sender, so every address is one.
        if let Destination::Peer(to) = tx.to {
            self.sent.push((*to, *tx.mad));
        }
    }
    fn event(&mut self, id: CommId, _owner: rcm_core::cm::Owner, event: Event) {
        self.events.push((id, event));
    }
}

/// Two endpoints wired back to back (addresses 0 and 1), MADs delivered
/// at once and in order; every MAD sent is recorded.
struct Pair {
    eps: [Endpoint<u32, Std>; 2],
    log: Vec<(&'static str, Mad)>,
    events: [Vec<(CommId, Event)>; 2],
    now: u64,
}

impl Pair {
    fn new() -> Self {
        let ep = |i: u32| {
            Endpoint::new(Config {
                id_operand: 0x5a5a_0000 ^ i,
                tid_high: i,
                hash_seed: 0xA5A5_0000 ^ u64::from(i),
                peer_window: 2,
            })
        };
        Pair {
            eps: [ep(0), ep(1)],
            log: Vec::new(),
            events: [Vec::new(), Vec::new()],
            now: 0,
        }
    }

    fn guid(n: u32) -> u64 {
        0x1000 + u64::from(n)
    }

    /// Runs `f` on node `n`, then delivers everything it caused.
    fn call<R>(
        &mut self,
        n: u32,
        f: impl FnOnce(&mut Endpoint<u32, Std>, u64, &mut Capture) -> R,
    ) -> R {
        let mut cap = Capture::default();
        let r = f(&mut self.eps[n as usize], self.now, &mut cap);
        self.route(n, cap);
        r
    }

    fn route(&mut self, from: u32, cap: Capture) {
        self.events[from as usize].extend(cap.events);
        for (to, mad) in cap.sent {
            self.log.push((rcm_core::sim::attr_name(peek(&mad)), mad));
            let rx = Received {
                from: Some(from),
                device: DeviceId(0),
                local_ca_guid: Self::guid(to),
            };
            let mut next = Capture::default();
            self.eps[to as usize].handle_mad(self.now, &rx, &mad, &mut next);
            self.route(to, next);
        }
    }

    /// The last event of node `n`.
    fn last(&mut self, n: u32) -> Option<(CommId, Event)> {
        self.events[n as usize].pop()
    }

    fn create(&mut self, n: u32) -> CommId {
        self.call(n, |ep, _, _| ep.create_id(DeviceId(0), Pair::guid(n)))
            .expect("create_id")
    }

    fn listen(&mut self, n: u32, sid: u64) -> CommId {
        let id = self.create(n);
        let spec = ListenSpec::exact(sid);
        self.call(n, |ep, _, out| ep.listen(id, spec, out))
            .expect("listen")
    }

    /// A connects to B; returns (A's id, B's id) after the REP arrives.
    fn req_rep(&mut self, sid: u64, qpn: u32) -> (CommId, CommId) {
        let a = self.create(0);
        let req = sample_req(sid, qpn, 5);
        self.call(0, |ep, now, s| {
            ep.send_req(now, a, &req, 0, 1, IbaTime::new(10), s)
        })
        .expect("send_req");
        let Some((b, Event::ReqReceived { .. })) = self.last(1) else {
            panic!("no REQ_RECEIVED");
        };
        let rep = sample_rep(qpn + 0x100);
        self.call(1, |ep, now, s| ep.send_rep(now, b, &rep, 0, s))
            .expect("send_rep");
        (a, b)
    }
}

fn peek(mad: &Mad) -> u16 {
    u16::from_be_bytes([mad[16], mad[17]])
}

/// Every MAD of a scripted set of exchanges: connect and disconnect, MRA,
/// REJ, LAP/APR, SIDR, and the no-listener and stale paths.
pub fn exchange_mads() -> Vec<(&'static str, Mad)> {
    const SID: u64 = 0x0106_0000_0000_0001;
    let mut p = Pair::new();
    p.listen(1, SID);

    // REQ -> REP -> RTU, LAP -> APR, DREQ -> DREP.
    let (a, b) = p.req_rep(SID, 0x11);
    p.call(0, |ep, _, s| ep.send_rtu(a, b"ready", s))
        .expect("send_rtu");
    let lap = rcm_core::sim::sample_lap();
    p.call(0, |ep, now, s| ep.send_lap(now, a, &lap, s))
        .expect("send_lap");
    p.call(1, |ep, _, s| ep.send_mra(b, 14, &[], s))
        .expect("send_mra (LAP)");
    p.call(1, |ep, _, s| {
        ep.send_apr(b, AprStatus::Success, &[], &[], s)
    })
    .expect("send_apr");
    p.call(0, |ep, now, s| ep.send_dreq(now, a, b"bye", s))
        .expect("send_dreq");
    p.call(1, |ep, now, s| ep.send_drep(now, b, &[], s))
        .expect("send_drep");

    // MRA of a REQ, then REJ by the passive side.
    let a = p.create(0);
    let req = sample_req(SID, 0x21, 3);
    p.call(0, |ep, now, s| {
        ep.send_req(now, a, &req, 7, 1, IbaTime::new(10), s)
    })
    .expect("send_req");
    let Some((b, _)) = p.last(1) else {
        panic!("no REQ_RECEIVED");
    };
    p.call(1, |ep, _, s| ep.send_mra(b, 16, b"wait", s))
        .expect("send_mra");
    p.call(1, |ep, now, s| {
        ep.send_rej(now, b, RejectReason::ConsumerDefined, &[1, 2], b"no", s)
    })
    .expect("send_rej");

    // REJ by the active side after a REP.
    let (a, _) = p.req_rep(SID, 0x31);
    p.call(0, |ep, now, s| {
        ep.send_rej(now, a, RejectReason::NoQp, &[], &[], s)
    })
    .ok();

    // A REQ for nobody: REJ "invalid service id".
    let a = p.create(0);
    let req = sample_req(0x0106_0000_0000_0999, 0x41, 1);
    p.call(0, |ep, now, s| {
        ep.send_req(now, a, &req, 0, 1, IbaTime::new(10), s)
    })
    .expect("send_req");

    // SIDR: accepted and refused.
    p.listen(1, 0x0111_0000_0000_0003);
    for status in [SidrStatus::Success, SidrStatus::Reject] {
        let a = p.create(0);
        let req = SidrReq {
            request_id: 0,
            partition_key: 0xFFFF,
            service_id: 0x0111_0000_0000_0003,
            private_data: [9; 216],
        };
        p.call(0, |ep, now, s| ep.send_sidr_req(now, a, &req, 1, 20, 2, s))
            .expect("send_sidr_req");
        let Some((b, Event::SidrReqReceived { .. })) = p.last(1) else {
            panic!("no SIDR_REQ_RECEIVED");
        };
        let rep = SidrRep {
            status,
            qpn: 0x77,
            qkey: 0x1234,
            ..SidrRep::zeroed()
        };
        p.call(1, |ep, _, s| ep.send_sidr_rep(b, &rep, s))
            .expect("send_sidr_rep");
    }
    p.log
}

/// Two quiet nodes: no loss, 1 ms delay.
pub const QUIET: Setup = Setup {
    nodes: 0,
    seed: 1,
    loss: 0,
    duplicate: 0,
    delay: 0,
    jitter: 0,
};

/// Node 1 listens on service 0 (held 0); node 0 connects (held 1); the
/// REQ arrives and node 1's new id is held 2.
fn connect_ops(qpn: u8, flags: u8) -> Vec<Op> {
    vec![
        Op::Create { node: 1 },
        Op::Listen {
            id: 0,
            sid: 0,
            mask: 0,
            dev: 0,
            share: 0,
        },
        Op::Create { node: 0 },
        Op::SendReq {
            id: 1,
            to: 1,
            sid: 0,
            qpn,
            retries: 5,
            plt: 10,
            flags,
            pd: 4,
        },
        Op::Step { n: 0 },
    ]
}

/// `connect_ops`, then REP and RTU: held 1 and 2 are connected.
fn established_ops(qpn: u8) -> Vec<Op> {
    let mut ops = connect_ops(qpn, 0);
    ops.extend([
        Op::SendRep { id: 2, qpn, pd: 3 },
        Op::Step { n: 0 },
        Op::SendRtu { id: 1, pd: 5 },
        Op::Step { n: 0 },
    ]);
    ops
}

fn disconnect_ops() -> Vec<Op> {
    vec![
        Op::SendDreq { id: 1, pd: 3 },
        Op::Step { n: 0 },
        Op::SendDrep { id: 2, pd: 0 },
        Op::Step { n: 15 },
        Op::Sleep { ms: 2000 },
    ]
}

/// `endpoint` programs: (name, setup, ops).
pub fn programs(mads: &[(String, Vec<u8>)]) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Setup, Vec<Op>)> = Vec::new();
    let mut add = |name: &str, setup: Setup, ops: Vec<Op>| out.push((name.into(), setup, ops));

    let mut ops = established_ops(1);
    ops.extend(disconnect_ops());
    add("life-cycle", QUIET, ops.clone());
    add(
        "life-cycle-lossy",
        Setup {
            nodes: 1,
            seed: 7,
            loss: 150,
            duplicate: 60,
            delay: 2,
            jitter: 9,
        },
        {
            let mut o = ops.clone();
            o.push(Op::Sleep { ms: 60_000 });
            o
        },
    );
    let mut oom = vec![Op::Oom { one_in: 8 }];
    oom.extend(ops.iter().cloned());
    add("life-cycle-oom", QUIET, oom);

    // Both sides disconnect at once; the passive side disconnects.
    let mut o = established_ops(2);
    o.extend([
        Op::SendDreq { id: 1, pd: 0 },
        Op::SendDreq { id: 2, pd: 0 },
        Op::Step { n: 15 },
        Op::Sleep { ms: 5000 },
    ]);
    add("dreq-crossing", QUIET, o);

    // LAP with an MRA, APR; then destroy while established.
    let mut o = established_ops(3);
    o.extend([
        Op::SendLap { id: 1, flags: 0x5c },
        Op::Step { n: 0 },
        Op::SendMra {
            id: 2,
            timeout: 14,
            pd: 0,
        },
        Op::Step { n: 0 },
        Op::SendApr {
            id: 2,
            status: 0,
            info: 0,
            pd: 2,
        },
        Op::Step { n: 0 },
        Op::SendLap { id: 2, flags: 0x21 },
        Op::Step { n: 0 },
        Op::SendApr {
            id: 1,
            status: 3,
            info: 4,
            pd: 0,
        },
        Op::Destroy {
            id: 1,
            reject: true,
        },
        Op::Step { n: 15 },
    ]);
    add("lap-apr-destroy", QUIET, o);

    // MRA (plain and delayed) of a REQ, then REJ; MRA of a REP.
    let mut o = connect_ops(4, 0);
    o.extend([
        Op::SendMra {
            id: 2,
            timeout: 16 | 0x80,
            pd: 4,
        },
        Op::Step { n: 3 },
        Op::SendMra {
            id: 2,
            timeout: 16,
            pd: 4,
        },
        Op::Step { n: 0 },
        Op::SendRej {
            id: 2,
            reason: 28,
            ari: 2,
            pd: 9,
        },
        Op::Step { n: 3 },
    ]);
    add("mra-rej", QUIET, o);
    let mut o = connect_ops(5, 0x97);
    o.extend([
        Op::SendRep {
            id: 2,
            qpn: 5,
            pd: 0,
        },
        Op::Step { n: 0 },
        Op::SendMra {
            id: 1,
            timeout: 12,
            pd: 0,
        },
        Op::Step { n: 0 },
        Op::Sleep { ms: 500 },
        Op::SendRtu { id: 1, pd: 0 },
        Op::Step { n: 2 },
    ]);
    add("mra-rep", QUIET, o);

    // Timeouts: a REQ nobody answers, then a REP nobody confirms.
    let o = vec![
        Op::Create { node: 1 },
        Op::Listen {
            id: 0,
            sid: 1,
            mask: 1,
            dev: 1,
            share: 0,
        },
        Op::Create { node: 0 },
        Op::SendReq {
            id: 1,
            to: 1,
            sid: 1,
            qpn: 6,
            retries: 2,
            plt: 8,
            flags: 0,
            pd: 0,
        },
        Op::Sleep { ms: 60_000 },
        Op::Create { node: 0 },
        Op::SendReq {
            id: 3,
            to: 1,
            sid: 1,
            qpn: 7,
            retries: 2,
            plt: 8,
            flags: 0,
            pd: 0,
        },
        Op::Step { n: 0 },
        Op::SendRep {
            id: 4,
            qpn: 7,
            pd: 0,
        },
        Op::Sleep { ms: 60_000 },
    ];
    add("timeouts", QUIET, o);

    // Stale connection: a second REQ from the same QP; COMM_EST before RTU.
    let mut o = established_ops(7);
    o.extend([
        Op::Create { node: 0 },
        Op::SendReq {
            id: 3,
            to: 1,
            sid: 0,
            qpn: 7,
            retries: 3,
            plt: 10,
            flags: 0,
            pd: 0,
        },
        Op::Step { n: 5 },
        Op::Notify { id: 2, kind: 0 },
        Op::Notify { id: 1, kind: 1 },
        Op::Notify { id: 3, kind: 5 },
        Op::Sleep { ms: 3000 },
    ]);
    add("stale", QUIET, o);

    // SIDR, answered and refused; shared and assigned listens.
    let o = vec![
        Op::Create { node: 1 },
        Op::Listen {
            id: 0,
            sid: 2,
            mask: 0,
            dev: 0,
            share: 9,
        },
        Op::Create { node: 1 },
        Op::Listen {
            id: 1,
            sid: 2,
            mask: 0,
            dev: 0,
            share: 9,
        },
        Op::Create { node: 1 },
        Op::Listen {
            id: 2,
            sid: 3,
            mask: 2,
            dev: 2,
            share: 0,
        },
        Op::Create { node: 0 },
        Op::SendSidrReq {
            id: 3,
            to: 1,
            sid: 2,
            timeout: 20,
            retries: 2,
        },
        Op::Step { n: 0 },
        Op::SendSidrRep {
            id: 4,
            status: 0,
            qpn: 5,
            info: 0,
        },
        Op::Step { n: 0 },
        Op::Create { node: 0 },
        Op::SendSidrReq {
            id: 5,
            to: 1,
            sid: 2,
            timeout: 20,
            retries: 2,
        },
        Op::Step { n: 0 },
        Op::Destroy {
            id: 6,
            reject: true,
        },
        Op::Destroy {
            id: 0,
            reject: true,
        },
        Op::Sleep { ms: 200 },
    ];
    add("sidr-shared-listen", QUIET, o);

    // Destroy in every state of a connection being set up.
    for (i, upto) in [5usize, 6, 7, 8, 9].into_iter().enumerate() {
        let mut o = established_ops(8 + i as u8);
        o.truncate(upto);
        o.push(Op::Destroy {
            id: 2 - (i as u8 % 2),
            reject: i != 2,
        });
        o.push(Op::Step { n: 15 });
        o.push(Op::Sleep { ms: 4000 });
        add(&format!("destroy-{i}"), QUIET, o);
    }

    // Forged MADs of every attribute against both ends of a connection.
    for attr in 0..12u8 {
        let mut o = established_ops(20 + attr);
        for id in [1u8, 2] {
            o.push(Op::Forge {
                id,
                attr,
                arg: attr.wrapping_mul(37),
                tid: 1,
                at: 200,
                patch: Vec::new(),
            });
            o.push(Op::Step { n: 1 });
        }
        add(&format!("forge-{attr}"), QUIET, o);
    }

    // Every captured and vector MAD, raw, to a listening node and to a
    // connected pair.
    for (name, mad) in mads {
        let mut o = established_ops(40);
        for (to, from) in [(1u8, 0u8), (0, 1)] {
            o.push(Op::Raw {
                to,
                from,
                short: false,
                bytes: mad.clone(),
            });
            o.push(Op::Step { n: 1 });
        }
        add(&format!("raw-{name}"), QUIET, o);
    }

    out.into_iter()
        .map(|(name, setup, ops)| (name, encode(&setup, &ops)))
        .collect()
}
