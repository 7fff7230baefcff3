// SPDX-License-Identifier: GPL-2.0

//! Consistency checks over an endpoint's ids and tables, run by the
//! simulation and the exchange tests after every step (the module does
//! not run them).

use super::conn::Timer;
use super::pacing::WindowPlace;
use super::remote_index::Remote;
use super::remote_index::NO_ID;
use super::state::State;
use super::store::{Collections, OrderedMap};
use super::{CommId, Endpoint, NEVER};

/// A broken invariant: what, and on which id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuditError {
    /// The id concerned (0 for table-wide problems).
    pub id: CommId,
    /// What is wrong.
    pub what: &'static str,
}

impl<A: Copy + Ord, C: Collections> Endpoint<A, C> {
    /// Checks that every id and every table entry agree. O(n log n).
    pub fn audit(&self) -> Result<(), AuditError> {
        let fail = |id: CommId, what| Err(AuditError { id, what });
        let (mut remote_ids, mut remote_qpns, mut sidr, mut listeners) = (0, 0, 0, 0);
        let mut kept_mads = 0;
        // Ids in flight and parked in windows.
        let mut windowed = [0u32; 2];
        for id in self.ids() {
            let Some(c) = self.get(id) else {
                return fail(id, "id listed but not found");
            };
            if self.deadlines.get(&(c.deadline_key, id.0)).is_none() {
                return fail(id, "deadline not indexed");
            }
            if c.deadline_key > c.deadline {
                return fail(id, "deadline indexed after it is due");
            }
            let parked = c.window == WindowPlace::Parked;
            if (c.timer == Timer::Idle || parked) != (c.deadline == NEVER) {
                return fail(id, "timer and deadline disagree");
            }
            let retransmits =
                matches!(c.timer, Timer::Retransmit { retries_left, .. } if retries_left > 0);
            let paced = matches!(c.timer, Timer::Paced { .. });
            if (retransmits || paced) && c.request.is_none() {
                return fail(id, "retransmit timer without a request");
            }
            if parked && !paced {
                return fail(id, "parked behind the window without its timer");
            }
            if c.window != WindowPlace::Outside {
                let sending = paced || matches!(c.timer, Timer::Retransmit { .. });
                if c.peer.is_none() || c.request.is_none() || !sending {
                    return fail(id, "in a window without a request to send");
                }
                windowed[usize::from(parked)] += 1;
            }
            for slot in c.kept_slots() {
                kept_mads += 1;
                if self.mads.get(slot).is_none() {
                    return fail(id, "kept MAD outside the pool");
                }
            }
            if (c.timer == Timer::Timewait) != (c.state == State::Timewait) {
                return fail(id, "TIMEWAIT without its timer, or the reverse");
            }
            if c.destroyed && !matches!(c.state, State::DreqSent | State::Timewait) {
                return fail(
                    id,
                    "destroyed id kept in a state that needs no more protocol",
                );
            }
            if c.remote_indexed {
                let keys = c.remote_keys();
                remote_ids += 1;
                if self.remote_ids.get(&self.conns, keys.key(Remote::Id)) != Some(id) {
                    return fail(id, "remote id entry missing");
                }
                remote_qpns += 1;
                if self.remote_qpns.get(&self.conns, keys.key(Remote::Qpn)) != Some(id) {
                    return fail(id, "remote QPN entry missing");
                }
            }
            let connected = c.state.has_remote() && !c.destroyed;
            if connected && !c.remote_indexed {
                return fail(id, "connected id missing from the remote tables");
            }
            if !c.state.has_remote() && c.remote_indexed {
                return fail(id, "unconnected id left in the remote tables");
            }
            if c.in_sidr_table {
                sidr += 1;
                if c.sidr_key().and_then(|k| self.sidr.get(&k)) != Some(&id) {
                    return fail(id, "SIDR entry missing");
                }
            }
            if c.in_sidr_table != (c.state == State::SidrReqRcvd) {
                return fail(id, "SIDR entry and state disagree");
            }
            if let Some(l) = c.listening {
                listeners += 1;
                if self.listeners.get(&l.key) != Some(&id) || c.state != State::Listen {
                    return fail(id, "listener not in the listen table");
                }
            } else if c.state == State::Listen {
                return fail(id, "LISTEN without a registration");
            }
        }
        let none = CommId(0);
        if self.deadlines.len() != self.conns.len() {
            return fail(none, "deadline index has entries of no id");
        }
        if self.remote_ids.len() != remote_ids || self.remote_qpns.len() != remote_qpns {
            return fail(none, "remote tables hold entries of no id");
        }
        if self.sidr.len() != sidr || self.listeners.len() != listeners {
            return fail(none, "SIDR or listen table holds entries of no id");
        }
        if self.mads.in_use() != kept_mads {
            return fail(none, "MAD pool slots in use that no id keeps");
        }
        self.audit_windows(windowed)
    }

    /// Every window's count and parked list against the ids', given the
    /// ids counted in flight and parked.
    fn audit_windows(&self, windowed: [u32; 2]) -> Result<(), AuditError> {
        let fail = |id: u32, what| {
            Err(AuditError {
                id: CommId(id),
                what,
            })
        };
        let mut listed = [0u32; 2];
        for peer in self.windows.keys() {
            let Some(w) = self.windows.get(&peer) else {
                return fail(0, "window listed but not found");
            };
            if w.is_unused() {
                return fail(0, "an unused window kept");
            }
            listed[0] += w.in_flight;
            let in_flight = self.ids().filter(|id| {
                self.get(*id).is_some_and(|c| {
                    c.window == WindowPlace::InFlight && self.window_of(c) == Some(peer)
                })
            });
            if in_flight.count() != w.in_flight as usize {
                return fail(0, "a window's count is not its ids in flight");
            }
            let (mut prev, mut at) = (NO_ID, w.first_parked);
            while at != NO_ID {
                let Some(c) = self.conns.get(at) else {
                    return fail(at, "parked id not found");
                };
                if c.window != WindowPlace::Parked
                    || self.window_of(c) != Some(peer)
                    || c.parked_prev != prev
                {
                    return fail(at, "parked list out of step");
                }
                listed[1] += 1;
                if listed[1] > windowed[1] {
                    return fail(at, "parked list longer than the parked ids");
                }
                (prev, at) = (at, c.parked_next);
            }
            if w.last_parked != prev {
                return fail(prev, "a window's last parked id is not its list's end");
            }
        }
        if listed != windowed {
            return fail(0, "ids in a window that no window lists");
        }
        Ok(())
    }
}
