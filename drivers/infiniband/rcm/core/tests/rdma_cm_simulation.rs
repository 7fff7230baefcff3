// SPDX-License-Identifier: GPL-2.0

//! Deterministic simulation of rdma_cm: 2-3 nodes, each an rdma_cm over a
//! CM endpoint, on a fabric that loses, duplicates and reorders MADs, with
//! a fake resolver whose answers come late or fail. Random consumers
//! resolve, connect (with and without a QP of rdma_cm's), accept, reject,
//! fail their handlers, disconnect, destroy at any moment and misuse the
//! API.
//!
//! After every step: rdma_cm's ids, CM id maps and ports agree (`audit`),
//! as do the CM endpoints'; no event reaches a destroyed id; no connecting
//! id gets more than one outcome (ESTABLISHED, or the consumer's accept
//! after CONNECT_RESPONSE; REJECTED, UNREACHABLE, CONNECT_ERROR,
//! ADDR_ERROR, ROUTE_ERROR), except a REJECTED after ESTABLISHED when the
//! peer gave up before our RTU reached it. Once the run is quiet every
//! connect has its outcome; once everything is destroyed no id, port or
//! CM id is left.
//!
//! `RCM_SIM_SEEDS=N` sets the number of seeds (default 20000, a tenth of
//! them here), `RCM_SIM_FIRST` the first; `RCM_SIM_SEED=S` replays one.

use rcm_core::cm::Millis;
use rcm_core::rdma_cm::{
    BindContext, ConnParams, EventKind, PortSpace, RdmaCmError, RdmaEvent, RdmaId, RdmaQpType,
    SockAddr,
};
use rcm_core::reason::RejectReason;
use rcm_core::sim::rdma::{node_addr, RdmaFabric, SIM_DEVICE, SIM_NET};
use rcm_core::sim::{Faults, Rng};
use std::collections::{BTreeMap, BTreeSet};

mod seed_sweep;

const PORT: u16 = 7174;

/// What a consumer does later.
#[derive(Clone, Copy, Debug)]
enum Later {
    /// The resolver answers the address query.
    AddrAnswer,
    /// The resolver answers the route query.
    RouteAnswer,
    /// Connect a ROUTE_RESOLVED id.
    Connect,
    /// Accept a CONNECT_REQUEST.
    Accept,
    /// Complete a CONNECT_RESPONSE.
    Complete,
    /// Disconnect.
    Disconnect,
    /// Destroy.
    Destroy,
}

type Key = (u32, RdmaId);
type Check = Result<(), String>;

struct Sim {
    f: RdmaFabric,
    rng: Rng,
    live: BTreeSet<Key>,
    destroyed: BTreeSet<Key>,
    /// Ids whose resolution or connect started (the active side), with
    /// the outcomes they got.
    outcomes: BTreeMap<Key, Vec<EventKind>>,
    /// Where each active id connects.
    target: BTreeMap<Key, SockAddr>,
    later: Vec<(Millis, u32, RdmaId, Later)>,
    /// Ids a random call was made on: their outcomes are the caller's.
    meddled: BTreeSet<Key>,
    next_qpn: u32,
    /// Whether a resolver answer fails (per mille).
    resolve_failures: u32,
}

fn cx(random: u32) -> BindContext {
    BindContext {
        device: Ok(SIM_DEVICE),
        local_ports: (32768, 33000),
        random,
        privileged: false,
        bindv6only: false,
    }
}

fn outcome(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::Established
            | EventKind::Rejected
            | EventKind::Unreachable
            | EventKind::ConnectError
            | EventKind::AddrError
            | EventKind::RouteError
    )
}

impl Sim {
    fn new(seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let nodes = 2 + rng.below(2) as u32;
        let lossy = rng.chance(500);
        let faults = Faults {
            loss: if lossy { 10 + rng.below(100) as u32 } else { 0 },
            duplicate: rng.below(60) as u32,
            delay_ms: 1 + rng.below(3),
            jitter_ms: rng.below(10),
            receive_queue: 0,
        };
        let resolve_failures = if rng.chance(300) { 100 } else { 0 };
        Sim {
            f: RdmaFabric::new(nodes, seed ^ 0x5EED, faults),
            rng,
            live: BTreeSet::new(),
            destroyed: BTreeSet::new(),
            outcomes: BTreeMap::new(),
            target: BTreeMap::new(),
            later: Vec::new(),
            meddled: BTreeSet::new(),
            next_qpn: 0x100,
            resolve_failures,
        }
    }

    fn nodes(&self) -> u32 {
        self.f.nodes.len() as u32
    }

    fn now(&self) -> Millis {
        self.f.fabric.now
    }

    fn schedule(&mut self, n: u32, id: RdmaId, what: Later) {
        let at = self.now() + self.rng.below(30);
        self.later.push((at, n, id, what));
    }

    fn create(&mut self, n: u32, ud: bool) -> Result<RdmaId, String> {
        let psn = self.rng.next_u64() as u32;
        let (ps, qp_type) = if ud {
            (PortSpace::Udp, RdmaQpType::Ud)
        } else {
            (PortSpace::Tcp, RdmaQpType::Rc)
        };
        let id = self
            .f
            .call(n, |cm, _| cm.create_id(SIM_NET, ps, qp_type, psn))
            .map_err(|e| format!("create_id: {e:?}"))?;
        self.live.insert((n, id));
        Ok(id)
    }

    fn is_ud(&self, n: u32, id: RdmaId) -> bool {
        self.f.nodes[n as usize].rdma.get(id).map(|r| r.qp_type()) == Some(RdmaQpType::Ud)
    }

    /// API errors are fine when the state moved on, never anything else.
    fn tolerate<T>(r: Result<T, RdmaCmError>) -> Check {
        match r {
            Ok(_) | Err(RdmaCmError::Invalid | RdmaCmError::NoSuchId) => Ok(()),
            // The CM refused, or the QP could not take the attributes of
            // a connection that is gone (as in the kernel).
            Err(RdmaCmError::Cm(_) | RdmaCmError::Qp(_)) => Ok(()),
            Err(e) => Err(format!("unexpected API error {e:?}")),
        }
    }

    fn setup(&mut self) -> Check {
        for (n, ud) in (0..self.nodes()).flat_map(|n| [(n, false), (n, true)]) {
            let l = self.create(n, ud)?;
            // Node 0 listens on its own address, the others on any.
            let addr = if n == 0 {
                node_addr(0, PORT)
            } else {
                SockAddr::V4 {
                    addr: [0; 4],
                    port: PORT,
                }
            };
            let random = self.rng.next_u64() as u32;
            self.f
                .call(n, |cm, h| {
                    cm.bind_addr(l, addr, &cx(random))?;
                    cm.listen(h, l, 16, &cx(random))
                })
                .map_err(|e| format!("listen: {e:?}"))?;
        }
        Ok(())
    }

    fn act(&mut self) -> Check {
        match self.rng.below(100) {
            0..=24 => self.connect(),
            25..=29 => self.destroy_random(),
            30..=33 => self.misuse(),
            34 => self.device_removal(),
            _ => {
                for _ in 0..1 + self.rng.below(6) {
                    self.step()?;
                }
                Ok(())
            }
        }
    }

    fn connect(&mut self) -> Check {
        let n = self.rng.below(u64::from(self.nodes())) as u32;
        // Sometimes a node that does not exist: no neighbour answers.
        let to = self.rng.below(u64::from(self.nodes()) + 1) as u32;
        let dst = node_addr(to, PORT);
        // A third of them UD ids, which resolve the service by SIDR.
        let ud = self.rng.chance(330);
        let id = self.create(n, ud)?;
        let random = self.rng.next_u64() as u32;
        let r = self
            .f
            .call(n, |cm, _| cm.resolve_addr(id, None, dst, 2000, &cx(random)));
        match r {
            Ok(_) => {
                self.outcomes.insert((n, id), Vec::new());
                self.target.insert((n, id), dst);
                self.schedule(n, id, Later::AddrAnswer);
                Ok(())
            }
            // The ephemeral range is small: it may run out.
            Err(RdmaCmError::AddrNotAvailable) => self.destroy(n, id),
            Err(e) => Err(format!("resolve_addr: {e:?}")),
        }
    }

    fn destroy(&mut self, n: u32, id: RdmaId) -> Check {
        if !self.live.remove(&(n, id)) {
            return Ok(());
        }
        self.destroyed.insert((n, id));
        self.f
            .call(n, |cm, h| cm.destroy(h, id))
            .map(|_| ())
            .map_err(|e| format!("destroy {id:?}: {e:?}"))
    }

    fn destroy_random(&mut self) -> Check {
        let all: Vec<Key> = self.live.iter().copied().collect();
        match self.rng.pick(&all).copied() {
            Some((n, id)) => self.destroy(n, id),
            None => Ok(()),
        }
    }

    /// A node's device goes: every id on it hears DEVICE_REMOVAL (its
    /// consumer destroys it), and the node's listener comes back.
    fn device_removal(&mut self) -> Check {
        let n = self.rng.below(u64::from(self.nodes())) as u32;
        let on: Vec<RdmaId> = self.f.nodes[n as usize].rdma.ids_on(SIM_DEVICE).collect();
        for id in on {
            self.meddled.insert((n, id));
            self.f.call(n, |cm, h| cm.device_removal(h, id));
        }
        Ok(())
    }

    /// A random call on a random id, whatever its state.
    fn misuse(&mut self) -> Check {
        let all: Vec<Key> = self.live.iter().copied().collect();
        let Some(&(n, id)) = self.rng.pick(&all) else {
            return Ok(());
        };
        self.meddled.insert((n, id));
        let random = self.rng.next_u64() as u32;
        let roll = self.rng.below(6);
        let data = [0x5A; 8];
        let r = self.f.call_settled(n, |cm, h| match roll {
            0 => cm.connect(h, id, &params(&data, 0)),
            1 => cm.accept(h, id, Some(&params(&data, 0))),
            2 => cm.reject(h, id, &data, RejectReason::ConsumerDefined),
            3 => cm.disconnect(h, id),
            4 => cm.listen(h, id, 1, &cx(random)),
            _ => cm.resolve_route(id, 100).map(|_| ()),
        });
        if roll == 5 && r.is_ok() {
            // The resolver answers this query too.
            self.schedule(n, id, Later::RouteAnswer);
        }
        Self::tolerate(r.or_else(|e| match e {
            RdmaCmError::AddrInUse | RdmaCmError::AddrNotAvailable => Ok(()),
            e => Err(e),
        }))
    }

    fn step(&mut self) -> Check {
        let due = self.later.iter().map(|l| l.0).min();
        match (due, self.f.fabric.next_time()) {
            (Some(d), t) if t.is_none_or(|t| d <= t) => {
                self.f.fabric.now = self.f.fabric.now.max(d);
                let (ready, rest): (Vec<_>, Vec<_>) = self.later.drain(..).partition(|l| l.0 <= d);
                self.later = rest;
                for (_, n, id, what) in ready {
                    self.run_later(n, id, what)?;
                    self.consume()?;
                }
            }
            (_, Some(_)) => {
                self.f.step();
            }
            _ => {}
        }
        self.consume()?;
        self.audit()
    }

    fn run_later(&mut self, n: u32, id: RdmaId, what: Later) -> Check {
        if !self.live.contains(&(n, id)) {
            return Ok(());
        }
        let fail = self.rng.chance(self.resolve_failures);
        let dst = self.target.get(&(n, id)).copied();
        match what {
            Later::AddrAnswer => {
                let Some(dst) = dst else { return Ok(()) };
                let found = if fail {
                    Err(-110)
                } else {
                    self.f.resolve_addr(n, &dst)
                };
                self.f.call(n, |cm, h| cm.addr_resolved(h, id, found));
            }
            Later::RouteAnswer => {
                let Some(dst) = dst else { return Ok(()) };
                let route = if fail {
                    Err(-110)
                } else {
                    self.f.route(n, &dst)
                };
                self.f.call(n, |cm, h| cm.route_resolved(h, id, route));
            }
            Later::Connect => {
                let state = self.f.nodes[n as usize].rdma.get(id).map(|r| r.state());
                if state != Some(rcm_core::rdma_cm::IdState::RouteResolved) {
                    // A random call moved it on.
                    return Ok(());
                }
                if self.rng.chance(500) {
                    self.next_qpn += 1;
                    self.f.create_qp(n, id, self.next_qpn);
                }
                let len = self.rng.below(60) as usize;
                let data = vec![n as u8; len];
                let qpn = self.next_qpn;
                let r = self
                    .f
                    .call(n, |cm, h| cm.connect(h, id, &params(&data, qpn)));
                match r {
                    Ok(()) => {}
                    // too much private data: the consumer gives up
                    Err(RdmaCmError::Invalid) if len > 56 => self.destroy(n, id)?,
                    Err(e) => return Err(format!("connect: {e:?}")),
                }
            }
            Later::Accept => {
                if self.rng.chance(500) {
                    self.next_qpn += 1;
                    self.f.create_qp(n, id, self.next_qpn);
                }
                let qpn = self.next_qpn;
                let r = self
                    .f
                    .call_settled(n, |cm, h| cm.accept(h, id, Some(&params(b"ok", qpn))));
                Self::tolerate(r)?;
                if self.is_ud(n, id) {
                    // A UD id's exchange ends with the answer.
                    self.schedule(n, id, Later::Destroy);
                }
            }
            Later::Complete => {
                // Without a QP of rdma_cm's the consumer's accept ends
                // the connect (no ESTABLISHED on this side).
                let r = self.f.call_settled(n, |cm, h| cm.accept(h, id, None));
                if r.is_ok() {
                    self.record_outcome((n, id), EventKind::Established)?;
                }
                Self::tolerate(r)?;
            }
            Later::Disconnect => {
                let r = self.f.call(n, |cm, h| cm.disconnect(h, id));
                Self::tolerate(r)?;
            }
            Later::Destroy => self.destroy(n, id)?,
        }
        Ok(())
    }

    /// The consumers take their events and react.
    fn consume(&mut self) -> Check {
        for n in 0..self.nodes() {
            let events = self.f.take_events(n);
            let mut gone_now = BTreeSet::new();
            for (id, ev) in events {
                if gone_now.contains(&id) {
                    // Queued before the consumer destroyed it from a
                    // handler: delivery drops it.
                    continue;
                }
                if self.destroyed.contains(&(n, id)) {
                    return Err(format!("node {n}: {:?} for destroyed id {id:?}", ev.kind));
                }
                if self.react(n, id, &ev)? {
                    gone_now.insert(id);
                }
            }
        }
        Ok(())
    }

    /// One outcome of an active id: its first is the connect's; only a
    /// REJ may follow an ESTABLISHED (the peer gave up before our RTU
    /// reached it, which 6.12 reports this way too).
    fn record_outcome(&mut self, key: Key, kind: EventKind) -> Check {
        if self.meddled.contains(&key) {
            return Ok(());
        }
        if let Some(got) = self.outcomes.get_mut(&key) {
            got.push(kind);
            let fine = matches!(
                got.as_slice(),
                [_] | [EventKind::Established, EventKind::Rejected]
            );
            if !fine {
                return Err(format!("{key:?} got outcomes {got:?}"));
            }
        }
        Ok(())
    }

    /// One event's handler; true if it destroyed the id.
    fn react(&mut self, n: u32, id: RdmaId, ev: &RdmaEvent) -> Result<bool, String> {
        let key = (n, id);
        if ev.kind == EventKind::ConnectRequest {
            if !self.live.insert(key) {
                return Err(format!("node {n}: new id {id:?} handed out twice"));
            }
            match self.rng.below(100) {
                0..=69 => self.schedule(n, id, Later::Accept),
                70..=84 => {
                    let r = self.f.call(n, |cm, h| {
                        cm.reject(h, id, b"no", RejectReason::ConsumerDefined)
                    });
                    Self::tolerate(r)?;
                    self.schedule(n, id, Later::Destroy);
                }
                85..=94 => {
                    // the handler returns non-zero
                    self.destroy(n, id)?;
                    return Ok(true);
                }
                _ => {}
            }
            return Ok(false);
        }
        if !self.live.contains(&key) {
            return Err(format!("node {n}: {:?} for unknown id {id:?}", ev.kind));
        }
        if outcome(ev.kind) {
            if std::env::var("RCM_SIM_DEBUG").is_ok() {
                eprintln!("{} {key:?} {:?} {:?}", self.now(), ev.kind, ev.status);
            }
            self.record_outcome(key, ev.kind)?;
        }
        match ev.kind {
            EventKind::AddrResolved
                if self.f.call(n, |cm, _| cm.resolve_route(id, 1000)).is_ok() =>
            {
                self.schedule(n, id, Later::RouteAnswer);
            }
            EventKind::RouteResolved => self.schedule(n, id, Later::Connect),
            EventKind::ConnectResponse => self.schedule(n, id, Later::Complete),
            EventKind::Established if self.is_ud(n, id) => {
                self.schedule(n, id, Later::Destroy);
            }
            EventKind::Established if self.rng.chance(600) => {
                self.schedule(n, id, Later::Disconnect);
            }
            EventKind::Disconnected => self.schedule(n, id, Later::Disconnect),
            EventKind::DeviceRemoval => {
                if self.rng.chance(500) {
                    // the handler returns non-zero
                    self.destroy(n, id)?;
                    return Ok(true);
                }
                self.schedule(n, id, Later::Destroy);
            }
            EventKind::TimewaitExit => self.schedule(n, id, Later::Destroy),
            EventKind::AddrError
            | EventKind::RouteError
            | EventKind::Rejected
            | EventKind::Unreachable
            | EventKind::ConnectError => {
                if self.rng.chance(200) {
                    // the handler returns non-zero
                    self.destroy(n, id)?;
                    return Ok(true);
                }
                self.schedule(n, id, Later::Destroy);
            }
            _ => {}
        }
        Ok(false)
    }

    fn audit(&self) -> Check {
        for (n, node) in self.f.nodes.iter().enumerate() {
            node.rdma
                .audit()
                .map_err(|e| format!("node {n}: rdma_cm audit: {e:?}"))?;
            self.f.fabric.nodes[n]
                .ep
                .audit()
                .map_err(|e| format!("node {n}: CM audit: {e:?}"))?;
            let ours = node.rdma.len();
            let held = self.live.iter().filter(|k| k.0 == n as u32).count();
            if ours != held {
                return Err(format!("node {n}: {ours} ids, consumers hold {held}"));
            }
        }
        Ok(())
    }

    /// No new actions: consumers react until nothing is left to do.
    fn drain(&mut self) -> Check {
        for _ in 0..200_000 {
            if self.later.is_empty() && self.f.fabric.quiet() {
                return Ok(());
            }
            self.step()?;
        }
        Err("does not go quiet".into())
    }

    fn run(&mut self) -> Check {
        self.setup()?;
        for _ in 0..200 {
            self.act()?;
            // The consumers take what the action produced before the next.
            self.consume()?;
        }
        self.drain()?;
        for (key, got) in &self.outcomes {
            if self.live.contains(key) && !self.meddled.contains(key) && got.is_empty() {
                let rec = self.f.nodes[key.0 as usize].rdma.get(key.1);
                let state = rec.map(|r| r.state());
                let cm = rec.and_then(|r| r.cm()).and_then(|c| {
                    self.f.fabric.nodes[key.0 as usize]
                        .ep
                        .get(c)
                        .map(|c| c.state())
                });
                return Err(format!(
                    "{key:?} ended with no outcome: {state:?}, CM {cm:?}"
                ));
            }
        }
        let all: Vec<Key> = self.live.iter().copied().collect();
        for (n, id) in all {
            self.destroy(n, id)?;
            self.consume()?;
        }
        self.drain()?;
        for (n, node) in self.f.nodes.iter().enumerate() {
            if !node.rdma.is_empty() || node.rdma.ports_held() != 0 {
                return Err(format!("node {n}: ids or ports left"));
            }
            if !self.f.fabric.nodes[n].ep.is_empty() {
                return Err(format!("node {n}: CM ids left"));
            }
        }
        Ok(())
    }
}

fn params(data: &[u8], qp_num: u32) -> ConnParams<'_> {
    ConnParams {
        private_data: data,
        responder_resources: 1,
        initiator_depth: 1,
        flow_control: true,
        retry_count: 7,
        rnr_retry_count: 7,
        srq: false,
        qp_num,
        qkey: 0,
    }
}

fn run_seed(seed: u64) -> Check {
    let mut sim = Sim::new(seed);
    seed_sweep::catch(|| sim.run())
}

#[test]
fn random_rdma_cm_consumers_keep_every_invariant() {
    if let Some(seed) = seed_sweep::replay_seed() {
        if let Err(e) = run_seed(seed) {
            panic!("seed {seed}: {e}");
        }
        return;
    }
    seed_sweep::sweep(
        "rdma_cm simulation",
        10,
        "cargo test --profile sim -p rcm-core --test rdma_cm_simulation",
        run_seed,
    );
}
