// SPDX-License-Identifier: GPL-2.0

//! What the scripted CM exchange tests (`tests/cm_*.rs`) share: a fabric
//! of two simulated endpoints, A and B, and steps on it.

// Each test crate uses a part of it.
#![allow(dead_code, unused_imports)]

pub use rcm_core::cm::store::btree::inject_insert_failures;
pub use rcm_core::cm::store::btree::Std;
pub use rcm_core::cm::{
    keeps_sender, AltPath, CmError, CommId, Config, Destination, DeviceId, Dropped, Endpoint,
    Event, Failure, Handled, LapState, ListenSpec, Owner, QpAttrs, QpTarget, QpType, Received,
    Sink, State, Transmit, Transport, ASSIGN_SERVICE_ID, MRA_FLAG_DELAY,
};
pub use rcm_core::reason::{AprStatus, RejectReason, SidrStatus};
pub use rcm_core::sim::{sample_lap, sample_rep, sample_req, Fabric, Faults};
pub use rcm_core::timer::{self, IbaTime};
pub use rcm_core::wire::field::{Mad, MAD_SIZE};
pub use rcm_core::wire::mad::attr;
pub use rcm_core::wire::sidr::{SidrRep, SidrReq};
pub use rcm_core::wire::{CmMad, CmMessage};

pub const A: u32 = 0;

pub const B: u32 = 1;

pub const SID: u64 = 0x0106_0000_0000_4E20;

pub fn fabric() -> Fabric {
    let mut f = Fabric::new(
        2,
        7,
        Faults {
            delay_ms: 1,
            ..Faults::default()
        },
    );
    f.trace_limit = 200;
    f
}

pub fn create(f: &mut Fabric, n: u32) -> CommId {
    let guid = f.nodes[n as usize].guid;
    f.call(n, |ep, _, _| ep.create_id(DeviceId(0), guid))
        .expect("create_id")
}

pub fn listen(f: &mut Fabric, n: u32, sid: u64) -> CommId {
    let id = create(f, n);
    f.call(n, |ep, _, out| ep.listen(id, ListenSpec::exact(sid), out))
        .expect("listen")
}

pub fn connect(f: &mut Fabric, from: u32, to: u32, sid: u64, qpn: u32, retries: u8) -> CommId {
    let id = create(f, from);
    let req = sample_req(sid, qpn, retries);
    f.call(from, |ep, now, s| {
        ep.send_req(now, id, &req, 0, to, IbaTime::new(10), s)
    })
    .expect("send_req");
    id
}

pub fn state(f: &Fabric, n: u32, id: CommId) -> Option<State> {
    f.nodes[n as usize].ep.get(id).map(|c| c.state())
}

/// Runs until node `n` has an event and returns the first.
pub fn next_event(f: &mut Fabric, n: u32) -> (CommId, Event) {
    for _ in 0..10_000 {
        if !f.nodes[n as usize].events.is_empty() {
            return f.nodes[n as usize].events.remove(0);
        }
        if !f.step() {
            break;
        }
    }
    panic!("node {n}: no event; trace:\n{}", f.trace.join("\n"));
}

pub fn settle(f: &mut Fabric) {
    assert!(f.run_until_quiet(100_000), "fabric never went quiet");
}

pub fn audit(f: &Fabric) {
    for (i, n) in f.nodes.iter().enumerate() {
        if let Err(e) = n.ep.audit() {
            panic!("node {i}: {e:?}\n{}", f.trace.join("\n"));
        }
    }
}

/// A and B connected: (A's id, B's id).
pub fn established(f: &mut Fabric) -> (CommId, CommId) {
    let listener = listen(f, B, SID);
    let a = connect(f, A, B, SID, 0x11, 5);
    let (b, ev) = next_event(f, B);
    assert!(matches!(ev, Event::ReqReceived { listener: l, .. } if l == listener));
    f.call(B, |ep, now, s| ep.send_rep(now, b, &sample_rep(0x22), 0, s))
        .unwrap();
    let (id, ev) = next_event(f, A);
    assert_eq!(id, a);
    assert!(matches!(ev, Event::RepReceived { .. }));
    f.call(A, |ep, _, s| ep.send_rtu(a, b"hello", s)).unwrap();
    let (id, ev) = next_event(f, B);
    assert_eq!(id, b);
    match ev {
        Event::RtuReceived(rtu) => assert_eq!(&rtu.private_data[..5], b"hello"),
        other => panic!("{other:?}"),
    }
    (a, b)
}

pub fn emit(message: CmMessage) -> Mad {
    let mut mad = [0u8; MAD_SIZE];
    CmMad::send(0x1234, 0, message).emit(&mut mad);
    mad
}

pub fn deliver(f: &mut Fabric, from: u32, to: u32, mad: &Mad) -> Handled {
    f.deliver(rcm_core::sim::Packet {
        from,
        to,
        mad: Box::new(*mad),
    })
}

pub fn qp_attrs(f: &Fabric, n: u32, id: CommId, target: QpTarget, lid: bool) -> QpAttrs<u32> {
    f.nodes[n as usize]
        .ep
        .get(id)
        .unwrap()
        .qp_attrs(target, |_| lid)
        .unwrap()
}

/// Captures what one endpoint call sends.
#[derive(Default)]
pub struct Capture {
    pub sent: Vec<(Mad, bool)>,
    /// Each send's address; `None` for the sender of the MAD handled.
    pub to: Vec<Option<u32>>,
    pub events: Vec<(CommId, Event)>,
    /// The owner each event went to, in the same order.
    pub owners: Vec<Owner>,
}

impl Sink<u32> for Capture {
    fn transmit(&mut self, tx: Transmit<'_, u32>) {
        self.sent.push((*tx.mad, tx.retry));
        self.to.push(match tx.to {
            Destination::Peer(to) => Some(*to),
            Destination::Sender => None,
        });
    }
    fn event(&mut self, id: CommId, owner: Owner, event: Event) {
        self.events.push((id, event));
        self.owners.push(owner);
    }
}
