// SPDX-License-Identifier: GPL-2.0

//! Consistency checks over an endpoint's ids and tables, run by the
//! simulation and the exchange tests after every step (the module does
//! not run them).

use super::conn::Timer;
use super::remote_index::Remote;
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
            if (c.timer == Timer::Idle) != (c.deadline == NEVER) {
                return fail(id, "timer and deadline disagree");
            }
            if matches!(c.timer, Timer::Retransmit { retries_left, .. } if retries_left > 0)
                && c.request.is_none()
            {
                return fail(id, "retransmit timer without a request");
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
        Ok(())
    }
}
