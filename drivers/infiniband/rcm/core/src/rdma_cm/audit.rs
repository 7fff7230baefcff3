// SPDX-License-Identifier: GPL-2.0

//! Consistency checks over rdma_cm's ids, its CM id maps and its port
//! table, run by the simulation after every step (the module does not run
//! them).

use super::endpoint::{RdmaCm, RdmaId, RdmaQpType};
use super::state::IdState;
use crate::cm::store::{Collections, OrderedMap};

/// A broken invariant: what, and on which id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RdmaAuditError {
    /// The id concerned (0 for table-wide problems).
    pub id: RdmaId,
    /// What is wrong.
    pub what: &'static str,
}

impl<C: Collections, A: Copy + Ord> RdmaCm<C, A> {
    /// Checks that every id, CM id map entry and port agree. O(n log n).
    pub fn audit(&self) -> Result<(), RdmaAuditError> {
        let fail = |id: RdmaId, what| Err(RdmaAuditError { id, what });
        let mut connections = 0;
        let mut bound = 0;
        let mut on_devices = 0;
        let mut watching = 0;
        for id in self.ids.keys() {
            let Some(r) = self.ids.get(&id) else {
                return fail(id, "id listed but not found");
            };
            if r.state == IdState::Listen && r.cm_listener.is_none() {
                return fail(id, "listening without a CM listener");
            }
            if let Some(holder) = r.cm_listener {
                if self.cm_listeners.get(&holder).is_none() {
                    return fail(id, "CM listener not recorded");
                }
            }
            if let Some(comm) = r.cm {
                connections += 1;
                if self.by_comm.get(&comm) != Some(&id) {
                    return fail(id, "CM id not mapped back to the id");
                }
            }
            let holds_port = self.ports.port_of(id.0).is_some();
            let should = r.src.is_some() && r.listener.is_none();
            if holds_port != should {
                return fail(id, "port held by an unbound id, or missing");
            }
            if let Some(key) = self.ports.port_of(id.0) {
                bound += 1;
                if !self.ports.holders_of(key).any(|h| h == id.0) {
                    return fail(id, "port does not list its holder");
                }
            }
            if r.listener.is_some_and(|l| l == id) {
                return fail(id, "its own listener");
            }
            if r.watches_neighbour {
                watching += 1;
            }
            if r.device.is_some() {
                on_devices += 1;
            }
        }
        if let Err(what) = self.check_watchers(watching) {
            return fail(RdmaId(0), what);
        }
        if let Err(what) = self.check_devices(on_devices) {
            return fail(RdmaId(0), what);
        }
        if self.by_comm.len() != connections {
            return fail(RdmaId(0), "CM id map has entries of no id");
        }
        for holder in self.cm_listeners.keys() {
            let shares = self.cm_listeners.get(&holder).copied().unwrap_or(0);
            let users = self
                .ids
                .keys()
                .filter(|i| {
                    self.ids
                        .get(i)
                        .is_some_and(|r| r.cm_listener == Some(holder))
                })
                .count();
            if usize::try_from(shares).ok() != Some(users) {
                return fail(RdmaId(0), "CM listener share count off");
            }
        }
        if self.ports.ports() > bound {
            return fail(RdmaId(0), "a port with no holder");
        }
        for group in self.groups.keys() {
            let Some(m) = self.groups.get(&group) else {
                continue;
            };
            if self
                .ids
                .get(&m.id)
                .is_none_or(|r| r.qp_type != RdmaQpType::Ud)
            {
                return fail(m.id, "a multicast membership of no UD id");
            }
            if self.groups_of.get(&(m.id, group)).is_none() {
                return fail(m.id, "a membership missing from its id's index");
            }
        }
        if self.groups_of.len() != self.groups.len() {
            return fail(RdmaId(0), "membership index lists no membership");
        }
        Ok(())
    }
}
