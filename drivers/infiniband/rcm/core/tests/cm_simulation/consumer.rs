// SPDX-License-Identifier: GPL-2.0

//! The simulated consumers: each event gets an answer, now or later.

use super::{Check, Reply, Sim};
use rcm_core::cm::{CommId, Event, Failure, LapState, MRA_FLAG_DELAY};
use rcm_core::reason::{AprStatus, RejectReason, SidrStatus};
use rcm_core::sim::sample_rep;
use rcm_core::wire::sidr::SidrRep;

impl Sim {
    /// Consumers react to their events.
    pub(super) fn consume(&mut self) -> Check {
        for n in 0..self.nodes() {
            for (id, ev) in self.f.take_events(n) {
                let key = (n, id.0);
                if self.destroyed.contains(&key) {
                    return Err(format!(
                        "node {n}: event {} after destroy of {:#x}",
                        ev.name(),
                        id.0
                    ));
                }
                self.react(n, id, ev)?;
            }
        }
        Ok(())
    }

    pub(super) fn react(&mut self, n: u32, id: CommId, ev: Event) -> Check {
        let key = (n, id.0);
        let r = self.f.rng.below(100);
        let reply = match &ev {
            Event::ReqReceived { .. } => {
                if !self.ever.insert(key) {
                    return Err(format!("node {n}: passive id {:#x} reused", id.0));
                }
                self.live.insert(key);
                Some(match r {
                    0..=59 => Reply::Accept,
                    60..=74 => Reply::Reject,
                    75..=84 => Reply::MraThenAccept,
                    85..=89 => Reply::DelayedMraThenAccept,
                    _ => Reply::Destroy,
                })
            }
            Event::SidrReqReceived { .. } => {
                if !self.ever.insert(key) {
                    return Err(format!("node {n}: SIDR id {:#x} reused", id.0));
                }
                self.live.insert(key);
                Some(if r < 80 {
                    Reply::SidrAccept
                } else {
                    Reply::SidrReject
                })
            }
            Event::RepReceived { .. } => Some(match r {
                0..=79 => Reply::Rtu,
                80..=89 => Reply::MraThenRtu,
                90..=94 => Reply::Reject,
                _ => Reply::Destroy,
            }),
            Event::DreqReceived(_) => Some(if r < 90 { Reply::Drep } else { Reply::Destroy }),
            Event::LapReceived(_) => Some(Reply::Apr),
            Event::ReqError(Failure::Timeout)
            | Event::RepError(Failure::Timeout)
            | Event::DreqError(Failure::Timeout)
            | Event::SidrReqError(Failure::Timeout)
            | Event::LapError(Failure::Timeout) => {
                self.timed_out.insert(key);
                None
            }
            Event::TimewaitExit => {
                self.check_timewait(n, id)?;
                None
            }
            _ => None,
        };
        if let Some(reply) = reply {
            let delay = match r % 4 {
                0 => 0,
                1 => self.f.rng.below(5),
                2 => self.f.rng.below(40),
                _ => self.f.rng.below(300),
            };
            self.pending.push((self.f.now + delay, n, id, reply));
        }
        Ok(())
    }

    pub(super) fn run_due(&mut self) -> Check {
        let now = self.f.now;
        let mut due = Vec::new();
        self.pending.retain(|p| {
            if p.0 <= now {
                due.push(*p);
                false
            } else {
                true
            }
        });
        for (_, n, id, reply) in due {
            if !self.live.contains(&(n, id.0)) {
                continue;
            }
            self.reply(n, id, reply)?;
        }
        Ok(())
    }

    pub(super) fn reply(&mut self, n: u32, id: CommId, reply: Reply) -> Check {
        let line = format!(
            "{:>7} {n}: consumer {reply:?} on {:#x} ({:?})",
            self.f.now,
            id.0,
            self.state(n, id)
        );
        self.f.note(line);
        let qpn = {
            self.next_qpn += 1;
            self.next_qpn
        };
        let r = match reply {
            Reply::Accept => {
                let mut rep = sample_rep(qpn);
                rep.private_data[0] = 0xAC;
                let r = self
                    .f
                    .call(n, |ep, now, s| ep.send_rep(now, id, &rep, 0, s));
                if r.is_ok() {
                    self.qpns.insert((n, id.0), qpn);
                }
                r
            }
            Reply::Reject => {
                let reason = RejectReason::ConsumerDefined;
                self.f.call(n, |ep, now, s| {
                    ep.send_rej(now, id, reason, &[], b"no thanks", s)
                })
            }
            Reply::MraThenAccept | Reply::DelayedMraThenAccept => {
                let flag = if matches!(reply, Reply::DelayedMraThenAccept) {
                    MRA_FLAG_DELAY
                } else {
                    0
                };
                let r = self
                    .f
                    .call(n, |ep, _, s| ep.send_mra(id, 14 | flag, &[], s));
                let later = self.f.now + 1 + self.f.rng.below(30);
                self.pending.push((later, n, id, Reply::Accept));
                r
            }
            Reply::Rtu => self.f.call(n, |ep, _, s| ep.send_rtu(id, b"ready", s)),
            Reply::MraThenRtu => {
                let r = self.f.call(n, |ep, _, s| ep.send_mra(id, 14, &[], s));
                let later = self.f.now + 1 + self.f.rng.below(30);
                self.pending.push((later, n, id, Reply::Rtu));
                r
            }
            Reply::Drep => self.f.call(n, |ep, now, s| ep.send_drep(now, id, &[], s)),
            Reply::Apr => {
                let st = if self.f.rng.chance(500) {
                    AprStatus::Success
                } else {
                    AprStatus::Reject
                };
                let mra_first = self.f.rng.chance(300)
                    && self.f.nodes[n as usize].ep.get(id).map(|c| c.lap_state())
                        == Some(LapState::Rcvd);
                if mra_first {
                    let _ = self.f.call(n, |ep, _, s| ep.send_mra(id, 12, &[], s));
                }
                self.f.call(n, |ep, _, s| ep.send_apr(id, st, &[], &[], s))
            }
            Reply::SidrAccept | Reply::SidrReject => {
                let rep = SidrRep {
                    status: if matches!(reply, Reply::SidrAccept) {
                        SidrStatus::Success
                    } else {
                        SidrStatus::Reject
                    },
                    qpn,
                    qkey: 0x1234,
                    ..SidrRep::zeroed()
                };
                self.f.call(n, |ep, _, s| ep.send_sidr_rep(id, &rep, s))
            }
            Reply::Destroy => return self.destroy(n, id),
        };
        Self::tolerate(r)
    }
}
