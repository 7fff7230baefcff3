// SPDX-License-Identifier: GPL-2.0

//! Network changes under ids, reported as 6.12 reports them:
//!
//! - a neighbour entry whose hardware address changes under an id that
//!   resolved a RoCE route toward it (`rdma_resolve_route`; not a passive
//!   id, not a route the consumer set) gives that id UNREACHABLE with
//!   -ETIMEDOUT, in whatever state it is: its packets would go to the old
//!   address;
//! - a bonding failover that gives the netdev an id is bound to another
//!   hardware address gives the id ADDR_CHANGE.
//!
//! Ids being removed with their device are not told. The hardware
//! addresses live with the embedding (in the ids' `rdma_dev_addr`), so it
//! compares them; the core says which ids are concerned and reports.

use super::addr::{IpKey, SockAddr};
use super::endpoint::{Id, RdmaCm, RdmaCmError, RdmaId};
use super::event::{EventKind, EventStatus, RdmaEvent};
use super::host::Host;
use super::id_list::{IdLink, IdList};
use super::state::IdState;
use crate::cm::store::{Collections, OrderedMap};

/// An id's link on its neighbour's list of watchers.
fn watch_link<A>(rec: &mut Id<A>) -> &mut IdLink {
    &mut rec.on_watch
}

impl<C: Collections, A: Copy> RdmaCm<C, A> {
    /// `id` watches the neighbour `key` (at the end of its list; only a
    /// neighbour no id watched yet needs memory). The record's
    /// `watches_neighbour` is the caller's to set.
    pub(crate) fn watch(&mut self, key: IpKey, id: RdmaId) -> Result<(), RdmaCmError> {
        if self.watchers.get(&key).is_none() {
            self.watchers
                .try_insert(key, IdList::default())
                .map_err(|_| RdmaCmError::NoMemory)?;
        }
        let list = self.watchers.get_mut(&key).ok_or(RdmaCmError::NoMemory)?;
        list.push_back(&mut self.ids, id, watch_link)
    }

    /// Takes the id `id`, whose record `rec` is (or was until now) in the
    /// table, off its neighbour's list; a list left empty goes.
    pub(crate) fn unwatch(&mut self, id: RdmaId, rec: &Id<A>) {
        if !rec.watches_neighbour {
            return;
        }
        let Some(key) = rec.dst.and_then(|d| d.ip_key()) else {
            return;
        };
        if let Some(list) = self.watchers.get_mut(&key) {
            list.unlink(&mut self.ids, id, rec.on_watch, watch_link);
            if list.len() == 0 {
                self.watchers.remove(&key);
            }
        }
    }

    /// Checks every neighbour's list against the records, which say
    /// `watching` ids watch (the audit).
    pub(crate) fn check_watchers(&self, watching: usize) -> Result<(), &'static str> {
        let mut listed = 0;
        for key in self.watchers.keys() {
            if let Some(list) = self.watchers.get(&key) {
                if list.len() == 0 {
                    return Err("an empty neighbour list is kept");
                }
                listed += list.check(
                    &self.ids,
                    |r| r.on_watch,
                    |r| r.watches_neighbour && r.dst.and_then(|d| d.ip_key()) == Some(key),
                )? as usize;
            }
        }
        if listed != watching {
            return Err("neighbour index misses an id watching");
        }
        Ok(())
    }
}

impl<C: Collections, A: Copy + Ord> RdmaCm<C, A> {
    /// The ids whose resolved RoCE route goes to the neighbour `ip` (its
    /// port and scope aside): the candidates when that neighbour's
    /// hardware address changes.
    /// Found by their destination's address, whatever other ids exist;
    /// `each` is called for each (in the order they began watching) until
    /// it returns false.
    pub fn neighbour_watchers(&mut self, ip: SockAddr, mut each: impl FnMut(RdmaId) -> bool) {
        let Some(key) = ip.ip_key() else {
            return;
        };
        let mut cur = self.watchers.get(&key).and_then(|l| l.first());
        while let Some(id) = cur {
            cur = self.ids.get(&id).and_then(|r| r.on_watch.next());
            if !each(id) {
                return;
            }
        }
    }

    /// The ids bound to a device: the candidates when a netdev's hardware
    /// address changes.
    pub fn ids_with_device(&self) -> impl Iterator<Item = RdmaId> + '_ {
        self.ids
            .keys()
            .filter(move |id| self.ids.get(id).is_some_and(|r| r.device.is_some()))
    }

    /// The embedding found that `id`'s neighbour now has another hardware
    /// address: UNREACHABLE (-ETIMEDOUT). False, and no event, for an id
    /// that is gone, being removed, or not watching.
    pub fn neighbour_changed<H: Host<A>>(&mut self, host: &mut H, id: RdmaId) -> bool {
        let watching = self
            .ids
            .get(&id)
            .is_some_and(|r| r.watches_neighbour && told_of_changes(r.state));
        if watching {
            host.event(
                id,
                RdmaEvent::plain(EventKind::Unreachable, EventStatus::TimedOut),
            );
        }
        watching
    }

    /// The embedding found that the netdev `id` is bound to failed over to
    /// another hardware address: ADDR_CHANGE. False, and no event, for an
    /// id that is gone, being removed, or on no device.
    pub fn address_changed<H: Host<A>>(&mut self, host: &mut H, id: RdmaId) -> bool {
        let concerned = self
            .ids
            .get(&id)
            .is_some_and(|r| r.device.is_some() && told_of_changes(r.state));
        if concerned {
            host.event(id, RdmaEvent::plain(EventKind::AddrChange, EventStatus::Ok));
        }
        concerned
    }
}

/// Whether an id in `state` hears of network changes.
fn told_of_changes(state: IdState) -> bool {
    !matches!(state, IdState::Destroying | IdState::DeviceRemoval)
}
