// SPDX-License-Identifier: GPL-2.0

//! Deterministic simulation: 2-4 CM endpoints on a fabric that loses,
//! duplicates, delays and reorders MADs, driven by random consumers (listen,
//! connect, accept, reject with private data, MRA, disconnect from either
//! side or both, destroy at any moment, LAP, SIDR, misuse of the API).
//!
//! After every step: every endpoint's tables agree with its ids (`audit`),
//! no event reaches a destroyed id, no id number is handed out twice, no
//! request is retransmitted more often than allowed, TIMEWAIT lasts its
//! full time. At the end the run goes quiet: both ends of every connection
//! agree, and once everything is destroyed every table is empty.
//!
//! `RCM_SIM_SEEDS=N` sets the number of seeds (default 20000), starting at
//! `RCM_SIM_FIRST` (default 0);
//! `RCM_SIM_SEED=S` replays one seed with a trace of its last steps.

use rcm_core::cm::{CmError, CommId, DeviceId, ListenSpec, Millis, State};
use rcm_core::reason::{AprStatus, RejectReason};
use rcm_core::sim::{sample_lap, sample_rep, sample_req, Fabric, Faults, Packet, Rng};
use rcm_core::timer::IbaTime;
use rcm_core::wire::sidr::{SidrRep, SidrReq};
use std::collections::{BTreeMap, BTreeSet};

mod consumer;
mod invariants;
#[path = "../seed_sweep/mod.rs"]
mod seed_sweep;

const SERVICES: [u64; 3] = [
    0x0106_0000_0000_0001,
    0x0106_0000_0000_0002,
    0x0111_0000_0000_0003,
];

/// A consumer's answer, scheduled for later.
#[derive(Clone, Copy, Debug)]
enum Reply {
    Accept,
    Reject,
    MraThenAccept,
    DelayedMraThenAccept,
    Rtu,
    MraThenRtu,
    Drep,
    Apr,
    SidrAccept,
    SidrReject,
    Destroy,
}

struct Sim {
    f: Fabric,
    chaos: bool,
    lossy: bool,
    /// (node, id) of ids the consumer holds.
    live: BTreeSet<(u32, u32)>,
    /// (node, id) of ids the consumer destroyed.
    destroyed: BTreeSet<(u32, u32)>,
    /// Every id number ever handed out, per node.
    ever: BTreeSet<(u32, u32)>,
    /// Consumer replies due at a time.
    pending: Vec<(Millis, u32, CommId, Reply)>,
    /// Ids that saw an exchange fail by timeout (excuses disagreement).
    timed_out: BTreeSet<(u32, u32)>,
    /// Ids whose consumer claimed traffic (COMM_EST) at random: they may
    /// be established alone.
    notified: BTreeSet<(u32, u32)>,
    /// Ids a random API call succeeded on.
    meddled: BTreeSet<(u32, u32)>,
    /// When each id was first seen in TIMEWAIT.
    timewait_since: BTreeMap<(u32, u32), Millis>,
    next_qpn: u32,
    /// Established (node, id, qpn) for provoking stale connections.
    qpns: BTreeMap<(u32, u32), u32>,
}

type Check = Result<(), String>;

impl Sim {
    fn new(seed: u64, trace: bool) -> Self {
        let mut rng = Rng::new(seed);
        let nodes = 2 + rng.below(3) as u32;
        let lossy = rng.chance(600);
        let faults = Faults {
            loss: if lossy { 20 + rng.below(130) as u32 } else { 0 },
            duplicate: rng.below(100) as u32,
            delay_ms: 1 + rng.below(3),
            jitter_ms: rng.below(20),
            // Sometimes a receive queue small enough for bursts to
            // overflow it (a loss like any other).
            receive_queue: if lossy && rng.chance(300) {
                2 + rng.below(6) as usize
            } else {
                0
            },
        };
        let mut f = Fabric::new(nodes, seed ^ 0x5EED, faults);
        if trace {
            f.trace_limit = 20_000;
        }
        Sim {
            f,
            chaos: seed % 10 == 9,
            lossy,
            live: BTreeSet::new(),
            destroyed: BTreeSet::new(),
            ever: BTreeSet::new(),
            pending: Vec::new(),
            timed_out: BTreeSet::new(),
            notified: BTreeSet::new(),
            meddled: BTreeSet::new(),
            timewait_since: BTreeMap::new(),
            next_qpn: 0x100,
            qpns: BTreeMap::new(),
        }
    }

    fn nodes(&self) -> u32 {
        self.f.nodes.len() as u32
    }

    fn create(&mut self, n: u32) -> Result<CommId, String> {
        let guid = self.f.nodes[n as usize].guid;
        let id = self
            .f
            .call(n, |ep, _, _| ep.create_id(DeviceId(0), guid))
            .map_err(|e| format!("create_id: {e:?}"))?;
        if !self.ever.insert((n, id.0)) {
            return Err(format!("node {n}: id {:#x} handed out twice", id.0));
        }
        self.live.insert((n, id.0));
        Ok(id)
    }

    fn random_live(&mut self) -> Option<(u32, CommId)> {
        let all: Vec<_> = self.live.iter().copied().collect();
        self.f.rng.pick(&all).map(|&(n, id)| (n, CommId(id)))
    }

    fn state(&self, n: u32, id: CommId) -> Option<State> {
        self.f.nodes[n as usize].ep.get(id).map(|c| c.state())
    }

    /// An API result: errors are fine when the state moved on, never
    /// anything else.
    fn tolerate<T>(r: Result<T, CmError>) -> Check {
        match r {
            Ok(_) | Err(CmError::InvalidState | CmError::NoSuchId | CmError::AlreadyConnected) => {
                Ok(())
            }
            Err(e) => Err(format!("unexpected API error {e:?}")),
        }
    }

    // ---- random actions ---------------------------------------------------

    fn act(&mut self) -> Check {
        let roll = self.f.rng.below(100);
        match roll {
            0..=7 => self.listen(),
            8..=27 => self.connect(),
            28..=33 => self.disconnect(false),
            34..=36 => self.disconnect(true),
            37..=41 => self.destroy_random(),
            42..=44 => self.lap(),
            45..=49 => self.sidr(),
            50..=52 => self.misuse(),
            53..=54 if self.chaos => self.inject(),
            _ => {
                let steps = 1 + self.f.rng.below(8) as usize;
                self.advance(steps)
            }
        }
    }

    fn listen(&mut self) -> Check {
        let n = self.f.rng.below(u64::from(self.nodes())) as u32;
        let sid = *self.f.rng.pick(&SERVICES).unwrap_or(&SERVICES[0]);
        let id = self.create(n)?;
        let spec = ListenSpec {
            device: if self.f.rng.chance(500) {
                Some(DeviceId(0))
            } else {
                None
            },
            service_id: sid,
            service_mask: 0,
            share_tag: None,
            join: false,
        };
        match self.f.call(n, |ep, _, out| ep.listen(id, spec, out)) {
            Ok(_) => Ok(()),
            Err(CmError::Busy) => self.destroy(n, id),
            Err(e) => Err(format!("listen: {e:?}")),
        }
    }

    fn connect(&mut self) -> Check {
        let n = self.nodes();
        let from = self.f.rng.below(u64::from(n)) as u32;
        let to = (from + 1 + self.f.rng.below(u64::from(n - 1)) as u32) % n;
        let sid = *self.f.rng.pick(&SERVICES).unwrap_or(&SERVICES[0]);
        // Now and then reuse the QP of a live connection: a stale one.
        let stale: Vec<u32> = self
            .qpns
            .iter()
            .filter(|((node, _), _)| *node == from)
            .map(|(_, q)| *q)
            .collect();
        let qpn = match self.f.rng.pick(&stale) {
            Some(&q) if self.f.rng.chance(50) => q,
            _ => {
                self.next_qpn += 1;
                self.next_qpn
            }
        };
        let retries = if self.lossy {
            10 + self.f.rng.below(6) as u8
        } else {
            self.f.rng.below(16) as u8
        };
        let id = self.create(from)?;
        let mut req = sample_req(sid, qpn, retries);
        let pd_len = self.f.rng.below(93) as usize;
        for (i, b) in req.private_data.iter_mut().take(pd_len).enumerate() {
            *b = i as u8 ^ 0x5a;
        }
        let plt = IbaTime::new(8 + self.f.rng.below(4) as u8);
        let line = format!(
            "{:>7} {from}: connect {:#x} to {to} qpn {qpn:#x} retries {retries}",
            self.f.now, id.0
        );
        self.f.note(line);
        let r = self
            .f
            .call(from, |ep, now, s| ep.send_req(now, id, &req, 0, to, plt, s));
        self.qpns.insert((from, id.0), qpn);
        r.map_err(|e| format!("send_req: {e:?}"))
    }

    fn established(&mut self) -> Option<(u32, CommId)> {
        let all: Vec<_> = self
            .live
            .iter()
            .copied()
            .filter(|&(n, id)| self.state(n, CommId(id)) == Some(State::Established))
            .collect();
        self.f.rng.pick(&all).map(|&(n, id)| (n, CommId(id)))
    }

    fn disconnect(&mut self, both: bool) -> Check {
        let Some((n, id)) = self.established() else {
            return Ok(());
        };
        let line = format!("{:>7} {n}: disconnect {:#x} both={both}", self.f.now, id.0);
        self.f.note(line);
        let r = self
            .f
            .call(n, |ep, now, s| ep.send_dreq(now, id, &[1, 2, 3], s));
        Self::tolerate(r)?;
        if both {
            let peer = self.f.nodes[n as usize]
                .ep
                .get(id)
                .and_then(|c| c.peer().copied());
            let rid = self.f.nodes[n as usize].ep.get(id).map(|c| c.remote_id());
            if let (Some(m), Some(rid)) = (peer, rid) {
                if self.live.contains(&(m, rid)) {
                    let r = self
                        .f
                        .call(m, |ep, now, s| ep.send_dreq(now, CommId(rid), &[], s));
                    Self::tolerate(r)?;
                }
            }
        }
        Ok(())
    }

    fn destroy(&mut self, n: u32, id: CommId) -> Check {
        let line = format!(
            "{:>7} {n}: destroy {:#x} ({:?})",
            self.f.now,
            id.0,
            self.state(n, id)
        );
        self.f.note(line);
        let reject = !self.f.rng.chance(100);
        let r = self.f.call(n, |ep, now, s| ep.destroy(now, id, reject, s));
        match r {
            Ok(_) => {
                self.live.remove(&(n, id.0));
                self.destroyed.insert((n, id.0));
                self.qpns.remove(&(n, id.0));
                Ok(())
            }
            Err(e) => Err(format!("destroy {:#x}: {e:?}", id.0)),
        }
    }

    fn destroy_random(&mut self) -> Check {
        match self.random_live() {
            Some((n, id)) => self.destroy(n, id),
            None => Ok(()),
        }
    }

    fn lap(&mut self) -> Check {
        let Some((n, id)) = self.established() else {
            return Ok(());
        };
        let lap = sample_lap();
        let r = self.f.call(n, |ep, now, s| ep.send_lap(now, id, &lap, s));
        Self::tolerate(r)
    }

    fn sidr(&mut self) -> Check {
        let n = self.nodes();
        let from = self.f.rng.below(u64::from(n)) as u32;
        let to = (from + 1) % n;
        let sid = *self.f.rng.pick(&SERVICES).unwrap_or(&SERVICES[0]);
        let id = self.create(from)?;
        let req = SidrReq {
            request_id: 0,
            partition_key: 0xFFFF,
            service_id: sid,
            private_data: [9; 216],
        };
        let retries = if self.lossy { 12 } else { 2 };
        let r = self.f.call(from, |ep, now, s| {
            ep.send_sidr_req(now, id, &req, to, 20, retries, s)
        });
        r.map_err(|e| format!("send_sidr_req: {e:?}"))
    }

    /// A random API call on a random id: it must be refused cleanly or do
    /// something valid.
    fn misuse(&mut self) -> Check {
        let Some((n, id)) = self.random_live() else {
            return Ok(());
        };
        let op = self.f.rng.below(10);
        if op == 7 {
            self.notified.insert((n, id.0));
        }
        let long = [0u8; 300];
        let pd: &[u8] = if self.f.rng.chance(300) { &long } else { &[] };
        let r = self.f.call(n, |ep, now, s| match op {
            0 => ep.send_rep(now, id, &sample_rep(1), 0, s),
            1 => ep.send_rtu(id, pd, s),
            2 => ep.send_dreq(now, id, pd, s),
            3 => ep.send_drep(now, id, pd, s),
            4 => ep.send_mra(id, 20, pd, s),
            5 => ep.send_rej(now, id, RejectReason::ConsumerDefined, &[], pd, s),
            6 => ep.send_apr(id, AprStatus::Reject, &[], pd, s),
            7 => ep.notify_established(id, s),
            8 => ep.notify_path_migrated(id),
            _ => ep.send_sidr_rep(id, &SidrRep::zeroed(), s),
        });
        // A successful random call may end a connection the peer then
        // misses on a lossy fabric.
        if r.is_ok() {
            self.meddled.insert((n, id.0));
        }
        Ok(())
    }

    /// Chaos mode: a MAD off the wire with bytes changed, or random bytes.
    fn inject(&mut self) -> Check {
        let n = self.nodes();
        let to = self.f.rng.below(u64::from(n)) as u32;
        let mut mad = [0u8; 256];
        for b in mad.iter_mut() {
            *b = self.f.rng.next_u64() as u8;
        }
        mad[0] = 1;
        mad[1] = 7;
        mad[2] = 2;
        mad[3] = 3;
        mad[16] = 0;
        mad[17] = 0x10 + self.f.rng.below(11) as u8;
        self.f.deliver(Packet {
            from: (to + 1) % n,
            to,
            mad: Box::new(mad),
        });
        Ok(())
    }

    // ---- time and consumers ------------------------------------------------

    fn advance(&mut self, steps: usize) -> Check {
        for _ in 0..steps {
            self.run_due()?;
            let next_reply = self.pending.iter().map(|p| p.0).min();
            match (self.f.next_time(), next_reply) {
                (Some(t), Some(r)) if r < t => self.f.now = r,
                (None, Some(r)) => self.f.now = self.f.now.max(r),
                (None, None) => return Ok(()),
                _ => {
                    self.f.step();
                }
            }
            self.observe()?;
            self.consume()?;
        }
        Ok(())
    }

    fn run(&mut self) -> Check {
        let steps = 60 + self.f.rng.below(200);
        for _ in 0..steps {
            self.act()?;
            self.observe()?;
            self.consume()?;
        }
        self.drain()?;
        self.check_agreement()?;
        self.teardown()
    }
}

fn run_seed(seed: u64, trace: bool) -> Result<(), (String, Vec<String>)> {
    let mut sim = Sim::new(seed, trace);
    let result = seed_sweep::catch(|| sim.run());
    result.map_err(|e| (e, sim.f.trace.clone()))
}

#[test]
fn random_interactions_keep_every_invariant() {
    if let Some(seed) = seed_sweep::replay_seed() {
        let sim = Sim::new(seed, false);
        eprintln!(
            "seed {seed}: {} nodes, faults {:?}, chaos {}",
            sim.nodes(),
            sim.f.faults,
            sim.chaos
        );
        if let Err((e, trace)) = run_seed(seed, true) {
            panic!("seed {seed}: {e}\nlast steps:\n{}", trace.join("\n"));
        }
        return;
    }
    seed_sweep::sweep(
        "cm simulation",
        1,
        "cargo test --release -p rcm-core --test cm_simulation -- --nocapture",
        |seed| run_seed(seed, false).map_err(|(e, _)| e),
    );
}
