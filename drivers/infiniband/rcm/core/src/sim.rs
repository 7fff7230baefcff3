// SPDX-License-Identifier: GPL-2.0

//! A deterministic simulated fabric for CM endpoints (cargo feature `std`;
//! never part of the module).
//!
//! Nodes are numbered; a node's address is its number. MADs travel through
//! a queue ordered by delivery time, where seeded faults drop, duplicate,
//! delay and so reorder them. Time only moves when [`Fabric::step`] jumps
//! to the next delivery or timer, so a seed replays exactly.

extern crate std;

pub mod rdma;

use crate::cm::store::btree::Std;
use crate::cm::{
    keeps_sender, CommId, Config, Destination, DeviceId, Endpoint, Event, Handled, Millis,
    Received, Sink, State, Transmit, MAX_EVENTS_PER_INPUT, MAX_SENDS_PER_INPUT,
    MAX_STATE_CHANGES_PER_INPUT,
};
use crate::wire::field::Mad;
use crate::wire::mad::peek_attr_id;
use std::boxed::Box;
use std::collections::BTreeMap;
use std::format;
use std::string::String;
use std::vec::Vec;

/// splitmix64: small, fast, good enough to drive a simulation.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (0 when n is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
    /// True with probability `per_mille`/1000.
    pub fn chance(&mut self, per_mille: u32) -> bool {
        self.below(1000) < u64::from(per_mille)
    }
    /// A random element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.below(items.len() as u64) as usize)
    }
}

/// What the fabric does to MADs.
#[derive(Clone, Copy, Debug, Default)]
pub struct Faults {
    /// Drop a MAD with this probability (per mille).
    pub loss: u32,
    /// Deliver a MAD twice with this probability (per mille).
    pub duplicate: u32,
    /// Base one-way delay in ms.
    pub delay_ms: u64,
    /// Extra random delay up to this many ms (reorders MADs).
    pub jitter_ms: u64,
    /// MADs a node's receive queue holds (0: no limit): one arriving
    /// while as many are on their way to it is dropped, as a device drops
    /// what comes when ib_mad has no receive buffer posted.
    pub receive_queue: usize,
}

/// A MAD on the wire.
#[derive(Clone, Debug)]
pub struct Packet {
    /// Sender node.
    pub from: u32,
    /// Receiver node.
    pub to: u32,
    /// The MAD.
    pub mad: Box<Mad>,
}

/// A request retransmitted by a timer: (node, id, attribute, transaction).
pub type RetryKey = (u32, u32, u16, u64);

/// One simulated host.
pub struct Node {
    /// Its connection manager.
    pub ep: Endpoint<u32, Std>,
    /// Its CA GUID.
    pub guid: u64,
    /// Events not yet taken by the consumer, in order.
    pub events: Vec<(CommId, Event)>,
    /// Duplicates counted by the endpoint.
    pub duplicates: u64,
    /// Each id's state as its reported state changes tell it: after every
    /// input it must be the id's state (a transition that bypassed the
    /// sink would leave them apart, and the `rcm:icm_state` trace wrong).
    pub told_states: BTreeMap<CommId, State>,
}

impl Node {
    /// Takes one input's reported state changes and checks them against
    /// the ids' states (see [`Node::told_states`]).
    fn check_told_states(&mut self, n: u32, changes: &[(CommId, State, State)]) {
        assert!(
            changes.len() <= MAX_STATE_CHANGES_PER_INPUT,
            "node {n}: one input made {} state changes (bound {MAX_STATE_CHANGES_PER_INPUT}): {changes:?}",
            changes.len()
        );
        for &(id, from, to) in changes {
            assert_ne!(
                from, to,
                "node {n}: id {id:?} reported a change to its own state"
            );
            if let Some(&told) = self.told_states.get(&id) {
                assert_eq!(
                    from, told,
                    "node {n}: id {id:?} left a state it was not told to be in"
                );
            }
            self.told_states.insert(id, to);
        }
        let ep = &self.ep;
        self.told_states.retain(|id, _| ep.get(*id).is_some());
        // An id nothing was told of is as new ones are: IDLE.
        for id in ep.ids() {
            let told = self.told_states.get(&id).copied().unwrap_or(State::Idle);
            let state = ep.get(id).map(|c| c.state());
            assert_eq!(
                state,
                Some(told),
                "node {n}: id {id:?} changed state untold"
            );
        }
    }
}

/// Collects one call's output.
#[derive(Default)]
pub struct Outbox {
    /// The sender of the MAD being handled, for answers to it
    /// ([`Destination::Sender`]); `None` outside `handle_mad`.
    sender: Option<u32>,
    sent: Vec<(u32, Box<Mad>, bool)>,
    events: Vec<(CommId, Event)>,
    duplicates: u64,
    states: Vec<(CommId, State, State)>,
}

impl Sink<u32> for Outbox {
    fn transmit(&mut self, tx: Transmit<'_, u32>) {
        let to = match tx.to {
            Destination::Peer(to) => *to,
            Destination::Sender => self
                .sender
                .expect("an answer to a sender outside handle_mad"),
        };
        self.sent.push((to, Box::new(*tx.mad), tx.retry));
    }
    fn event(&mut self, id: CommId, _owner: crate::cm::Owner, event: Event) {
        self.events.push((id, event));
    }
    fn duplicate(&mut self, _attr_id: u16) {
        self.duplicates += 1;
    }
    fn state_changed(&mut self, id: CommId, from: State, to: State) {
        self.states.push((id, from, to));
    }
}

/// The simulated fabric.
pub struct Fabric {
    /// The hosts.
    pub nodes: Vec<Node>,
    /// Simulated time.
    pub now: Millis,
    queue: BTreeMap<(Millis, u64), Packet>,
    seq: u64,
    /// The random source for faults (and for the caller's choices).
    pub rng: Rng,
    /// Current fault settings.
    pub faults: Faults,
    /// MADs handed to the fabric, and how many it dropped.
    pub sent: u64,
    /// MADs dropped by faults.
    pub lost: u64,
    /// Timer-driven resends per request, for the retry bound.
    pub timer_retries: BTreeMap<RetryKey, u32>,
    /// The last lines of the run, for failure reports.
    pub trace: Vec<String>,
    /// Keep at most this many trace lines (0: no trace).
    pub trace_limit: usize,
}

impl Fabric {
    /// `n` nodes, seeded; node i has CA GUID 0x1000 + i.
    pub fn new(n: u32, seed: u64, faults: Faults) -> Self {
        let mut rng = Rng::new(seed);
        let nodes = (0..n)
            .map(|i| Node {
                ep: Endpoint::new(Config {
                    id_operand: rng.next_u64() as u32,
                    tid_high: i,
                    hash_seed: rng.next_u64(),
                    // Mostly tiny windows, so that requests park, wake and
                    // end while parked in every kind of run.
                    peer_window: [0, 1, 2, 3, 128][rng.below(5) as usize],
                }),
                guid: 0x1000 + u64::from(i),
                events: Vec::new(),
                duplicates: 0,
                told_states: BTreeMap::new(),
            })
            .collect();
        Fabric {
            nodes,
            now: 0,
            queue: BTreeMap::new(),
            seq: 0,
            rng,
            faults,
            sent: 0,
            lost: 0,
            timer_retries: BTreeMap::new(),
            trace: Vec::new(),
            trace_limit: 0,
        }
    }

    /// Sets every node's window of requests per peer (0: unpaced), which
    /// [`Fabric::new`] draws at random.
    pub fn set_peer_window(&mut self, window: u32) {
        for node in &mut self.nodes {
            node.ep.set_peer_window(window);
        }
    }

    /// Adds a trace line (kept only if tracing is on).
    pub fn note(&mut self, line: String) {
        if self.trace_limit == 0 {
            return;
        }
        if self.trace.len() >= self.trace_limit {
            self.trace.remove(0);
        }
        self.trace.push(line);
    }

    /// Runs an API call on node `n` and routes its output.
    pub fn call<R>(
        &mut self,
        n: u32,
        f: impl FnOnce(&mut Endpoint<u32, Std>, Millis, &mut Outbox) -> R,
    ) -> R {
        let mut out = Outbox::default();
        let now = self.now;
        let r = match self.nodes.get_mut(n as usize) {
            Some(node) => f(&mut node.ep, now, &mut out),
            None => panic!("no node {n}"),
        };
        self.route(n, out, false);
        r
    }

    fn route(&mut self, n: u32, out: Outbox, from_timer: bool) {
        assert!(
            out.events.len() <= MAX_EVENTS_PER_INPUT && out.sent.len() <= MAX_SENDS_PER_INPUT,
            "node {n}: one input produced {} events and {} MADs (bounds {} and {}): {:?}",
            out.events.len(),
            out.sent.len(),
            MAX_EVENTS_PER_INPUT,
            MAX_SENDS_PER_INPUT,
            out.events
        );
        for (to, mad, retry) in out.sent {
            let attr = peek_attr_id(&mad);
            let id = crate::wire::field::Field::new(24, 0, 32).get(&mad) as u32;
            let tid = crate::wire::field::Field::new(8, 0, 64).get(&mad);
            if from_timer && retry {
                *self.timer_retries.entry((n, id, attr, tid)).or_default() += 1;
            } else if !retry {
                // A first send starts a new exchange (C CM ids reuse their
                // transaction id for every request).
                self.timer_retries.remove(&(n, id, attr, tid));
            }
            if self.trace_limit > 0 {
                let ids = mad_ids(&mad);
                self.note(format!(
                    "{:>7} {} -> {} {} {}{}",
                    self.now,
                    n,
                    to,
                    attr_name(attr),
                    ids,
                    if retry { " (again)" } else { "" }
                ));
            }
            self.send(n, to, mad);
        }
        if let Some(node) = self.nodes.get_mut(n as usize) {
            node.duplicates += out.duplicates;
            for (id, ev) in out.events {
                node.events.push((id, ev));
            }
            node.check_told_states(n, &out.states);
        }
    }

    fn send(&mut self, from: u32, to: u32, mad: Box<Mad>) {
        self.sent += 1;
        let queue_full = self.faults.receive_queue > 0
            && self.queue.values().filter(|p| p.to == to).count() >= self.faults.receive_queue;
        if queue_full || self.rng.chance(self.faults.loss) {
            self.lost += 1;
            return;
        }
        let copies = if self.rng.chance(self.faults.duplicate) {
            2
        } else {
            1
        };
        for _ in 0..copies {
            let at = self.now + self.faults.delay_ms + self.rng.below(self.faults.jitter_ms + 1);
            self.seq += 1;
            self.queue.insert(
                (at, self.seq),
                Packet {
                    from,
                    to,
                    mad: mad.clone(),
                },
            );
        }
    }

    /// When the next packet arrives or timer fires.
    pub fn next_time(&self) -> Option<Millis> {
        let packet = self.queue.keys().next().map(|(at, _)| *at);
        let timer = self.nodes.iter().filter_map(|n| n.ep.poll_timeout()).min();
        match (packet, timer) {
            (Some(p), Some(t)) => Some(p.min(t)),
            (p, t) => p.or(t),
        }
    }

    /// Whether nothing is in flight and no timer is armed.
    pub fn quiet(&self) -> bool {
        self.next_time().is_none()
    }

    /// Packets in flight.
    pub fn in_flight(&self) -> usize {
        self.queue.len()
    }

    /// Advances to the next packet or timer and handles everything due
    /// then. Returns false if nothing was pending.
    pub fn step(&mut self) -> bool {
        let Some(t) = self.next_time() else {
            return false;
        };
        self.now = self.now.max(t);
        while let Some((&key, _)) = self.queue.iter().next() {
            if key.0 > self.now {
                break;
            }
            if let Some(p) = self.queue.remove(&key) {
                self.deliver(p);
            }
        }
        for n in 0..self.nodes.len() as u32 {
            let due = self.nodes[n as usize]
                .ep
                .poll_timeout()
                .is_some_and(|t| t <= self.now);
            // One timer at a time, so the per-input bounds are checked
            // for each.
            let mut more = due;
            while more {
                let mut out = Outbox::default();
                let now = self.now;
                more = self.nodes[n as usize].ep.handle_timeouts(now, 1, &mut out);
                self.route(n, out, true);
            }
        }
        true
    }

    /// Delivers one packet now.
    pub fn deliver(&mut self, p: Packet) -> Handled {
        let Some(node) = self.nodes.get_mut(p.to as usize) else {
            return Handled::Dropped(crate::cm::Dropped::Ignored);
        };
        // As the kernel does: the sender's address only where the
        // endpoint keeps it, so that every answer to another message
        // goes through `Destination::Sender`.
        let rx = Received {
            from: keeps_sender(peek_attr_id(&p.mad)).then_some(p.from),
            device: DeviceId(0),
            local_ca_guid: node.guid,
        };
        let mut out = Outbox {
            sender: Some(p.from),
            ..Outbox::default()
        };
        let handled = node.ep.handle_mad(self.now, &rx, &p.mad[..], &mut out);
        if self.trace_limit > 0 {
            self.note(format!(
                "{:>7} {} <- {} {} {} {:?}",
                self.now,
                p.to,
                p.from,
                attr_name(peek_attr_id(&p.mad)),
                mad_ids(&p.mad),
                handled
            ));
        }
        self.route(p.to, out, false);
        handled
    }

    /// Steps until quiet or `limit` steps; returns false on hitting it.
    pub fn run_until_quiet(&mut self, limit: usize) -> bool {
        for _ in 0..limit {
            if !self.step() {
                return true;
            }
        }
        self.quiet()
    }

    /// Takes node `n`'s pending events.
    pub fn take_events(&mut self, n: u32) -> Vec<(CommId, Event)> {
        self.nodes
            .get_mut(n as usize)
            .map(|node| core::mem::take(&mut node.events))
            .unwrap_or_default()
    }
}

/// "local/remote" comm ids of a CM MAD, for traces.
fn mad_ids(mad: &Mad) -> String {
    let field = |at| crate::wire::field::Field::new(at, 0, 32).get(mad);
    format!("{:#x}/{:#x}", field(24), field(28))
}

/// Short name of a CM attribute (the wire module's, as in traces).
pub use crate::wire::attr_name;

/// A REQ as rdma_cm would send it on RoCE: RC, service `service_id`, QPN
/// `qpn`, short CM response timeouts (16 ms) to keep simulated runs brief,
/// `max_cm_retries` retries. Paths carry GIDs only.
pub fn sample_req(service_id: u64, qpn: u32, max_cm_retries: u8) -> crate::wire::req::Req {
    use crate::timer::IbaTime;
    use crate::wire::req::{Req, ReqPath};
    let path = ReqPath {
        local_port_lid: 0xFFFF,
        remote_port_lid: 0xFFFF,
        local_port_gid: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        remote_port_gid: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
        flow_label: 0,
        packet_rate: 3,
        traffic_class: 0,
        hop_limit: 64,
        sl: 0,
        subnet_local: true,
        local_ack_timeout: IbaTime::new(14),
    };
    Req {
        local_comm_id: 0,
        vendor_id: 0,
        service_id,
        local_ca_guid: 0,
        local_qkey: 0,
        local_qpn: qpn,
        responder_resources: 4,
        local_eecn: 0,
        initiator_depth: 4,
        remote_eecn: 0,
        // Small response timeouts keep simulated runs short: 2^(12-8) ms.
        remote_cm_response_timeout: IbaTime::new(12),
        transport_service_type: 0,
        end_to_end_flow_control: true,
        starting_psn: qpn.wrapping_mul(7) & 0xFF_FFFF,
        local_cm_response_timeout: IbaTime::new(12),
        retry_count: 7,
        partition_key: 0xFFFF,
        path_mtu: 3,
        rdc_exists: false,
        rnr_retry_count: 7,
        max_cm_retries,
        srq: false,
        extended_transport_type: 0,
        primary_path: path,
        alternate_path: ReqPath::default(),
        sap_supported: false,
        private_data: [0; 92],
    }
}

/// A REP accepting with QP `qpn`.
pub fn sample_rep(qpn: u32) -> crate::wire::rep::Rep {
    use crate::timer::IbaTime;
    crate::wire::rep::Rep {
        local_comm_id: 0,
        remote_comm_id: 0,
        local_qkey: 0,
        local_qpn: qpn,
        vendor_id_high: 0,
        local_eecn: 0,
        vendor_id_mid: 0,
        starting_psn: qpn.wrapping_mul(11) & 0xFF_FFFF,
        vendor_id_low: 0,
        responder_resources: 2,
        initiator_depth: 2,
        target_ack_delay: IbaTime::new(15),
        failover_accepted: 0,
        end_to_end_flow_control: true,
        rnr_retry_count: 7,
        srq: false,
        local_ca_guid: 0,
        private_data: [0; 196],
    }
}

/// A LAP proposing an alternate path (ids and QPN are filled in by
/// `Endpoint::send_lap`).
pub fn sample_lap() -> crate::wire::lap::Lap {
    use crate::timer::IbaTime;
    crate::wire::lap::Lap {
        local_comm_id: 0,
        remote_comm_id: 0,
        remote_qpn_eecn: 0,
        remote_cm_response_timeout: IbaTime::new(12),
        alternate_local_port_lid: 3,
        alternate_remote_port_lid: 4,
        alternate_local_port_gid: [3; 16],
        alternate_remote_port_gid: [4; 16],
        alternate_flow_label: 0,
        alternate_traffic_class: 0,
        alternate_hop_limit: 1,
        alternate_packet_rate: 3,
        alternate_sl: 0,
        alternate_subnet_local: true,
        alternate_local_ack_timeout: IbaTime::new(14),
        private_data: [0; 168],
    }
}
