// SPDX-License-Identifier: GPL-2.0

//! What the simulation checks after every step and at the end.

use super::{Check, Sim};
use rcm_core::cm::{CommId, State};
use rcm_core::timer::{self, IbaTime};

impl Sim {
    /// Per step: tables consistent, retries bounded, TIMEWAIT tracked.
    pub(super) fn observe(&mut self) -> Check {
        let now = self.f.now;
        for n in 0..self.nodes() {
            let ep = &self.f.nodes[n as usize].ep;
            ep.audit().map_err(|e| format!("node {n}: audit: {e:?}"))?;
            let ids: Vec<CommId> = ep.ids().collect();
            for id in ids {
                let Some(c) = self.f.nodes[n as usize].ep.get(id) else {
                    continue;
                };
                if c.state() == State::Timewait {
                    self.timewait_since.entry((n, id.0)).or_insert(now);
                } else {
                    self.timewait_since.remove(&(n, id.0));
                }
            }
            // Zombies that vanished must have served their TIMEWAIT.
            let gone: Vec<(u32, u32)> = self
                .timewait_since
                .keys()
                .copied()
                .filter(|&(m, id)| m == n && self.f.nodes[n as usize].ep.get(CommId(id)).is_none())
                .collect();
            for key in gone {
                self.timewait_since.remove(&key);
            }
        }
        // Retransmissions by the timer never exceed the exchange's limit.
        for (&(n, id, attr, _), &count) in &self.f.timer_retries {
            let max = self.f.nodes[n as usize]
                .ep
                .get(CommId(id))
                .map_or(15, |c| u32::from(c.max_cm_retries()));
            if count > max {
                return Err(format!(
                    "node {n}: {count} timer retries of attribute {attr:#x} for {id:#x}, limit {max}"
                ));
            }
        }
        Ok(())
    }

    /// TIMEWAIT must last a full ACK timeout of the path.
    pub(super) fn check_timewait(&mut self, n: u32, id: CommId) -> Check {
        let Some(since) = self.timewait_since.remove(&(n, id.0)) else {
            return Ok(());
        };
        let ack = self.f.nodes[n as usize]
            .ep
            .get(id)
            .map(|c| c.qp_params().ack_timeout)
            .unwrap_or(IbaTime::new(0));
        let need = u64::from(timer::timewait_ms(ack));
        if self.f.now - since < need {
            return Err(format!(
                "node {n}: {:#x} left TIMEWAIT after {} ms, needs {need}",
                id.0,
                self.f.now - since
            ));
        }
        Ok(())
    }

    /// Runs until nothing is pending anywhere.
    pub(super) fn drain(&mut self) -> Check {
        for _ in 0..200_000 {
            if self.f.quiet() && self.pending.is_empty() {
                return Ok(());
            }
            self.advance(1)?;
        }
        Err("never went quiet".into())
    }

    /// At quiescence both ends of every connection agree.
    pub(super) fn check_agreement(&self) -> Check {
        if self.chaos {
            return Ok(());
        }
        for &(n, id) in &self.live {
            let Some(c) = self.f.nodes[n as usize].ep.get(CommId(id)) else {
                return Err(format!("node {n}: live id {id:#x} vanished"));
            };
            match c.state() {
                State::Idle | State::Listen | State::Established => {}
                s => return Err(format!("node {n}: {id:#x} still {s} at quiescence")),
            }
            if c.state() != State::Established {
                continue;
            }
            let (Some(&m), rid) = (c.peer(), c.remote_id()) else {
                return Err(format!("node {n}: {id:#x} established without a peer"));
            };
            let excused = self.notified.contains(&(n, id))
                || self.notified.contains(&(m, rid))
                || (self.lossy
                    && (self.destroyed.contains(&(m, rid))
                        || self.meddled.contains(&(m, rid))
                        || self.meddled.contains(&(n, id))
                        || self.timed_out.contains(&(m, rid))
                        || self.timed_out.contains(&(n, id))));
            let peer = self.f.nodes[m as usize].ep.get(CommId(rid));
            let agrees = peer.is_some_and(|p| {
                p.state() == State::Established && p.remote_id() == id && !p.is_destroyed()
            });
            if !agrees && !excused {
                return Err(format!(
                    "node {n}: {id:#x} ESTABLISHED but its peer {m}:{rid:#x} is {:?}",
                    peer.map(|p| (p.state(), p.remote_id(), p.is_destroyed()))
                ));
            }
        }
        Ok(())
    }

    /// Destroying everything leaves every endpoint empty.
    pub(super) fn teardown(&mut self) -> Check {
        let all: Vec<_> = self.live.iter().copied().collect();
        for (n, id) in all {
            self.destroy(n, CommId(id))?;
        }
        self.pending.clear();
        self.drain()?;
        for (i, node) in self.f.nodes.iter().enumerate() {
            if !node.ep.is_empty() || node.ep.table_sizes() != [0; 5] {
                return Err(format!(
                    "node {i}: {} ids and tables {:?} left after destroying everything",
                    node.ep.len(),
                    node.ep.table_sizes()
                ));
            }
        }
        Ok(())
    }
}
