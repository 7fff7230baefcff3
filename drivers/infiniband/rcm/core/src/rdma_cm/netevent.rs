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

use super::addr::SockAddr;
use super::endpoint::{RdmaCm, RdmaId};
use super::event::{EventKind, EventStatus, RdmaEvent};
use super::host::Host;
use super::state::IdState;
use crate::cm::store::{Collections, OrderedMap};

impl<C: Collections, A: Copy + Ord> RdmaCm<C, A> {
    /// The ids whose resolved RoCE route goes to the neighbour `ip` (its
    /// port and scope aside): the candidates when that neighbour's
    /// hardware address changes.
    /// Found by their destination's address, whatever other ids exist;
    /// `each` is called for each (in id order) until it returns false.
    pub fn neighbour_watchers(&mut self, ip: SockAddr, mut each: impl FnMut(RdmaId) -> bool) {
        let Some(key) = ip.ip_key() else {
            return;
        };
        let mut from = RdmaId(0);
        while let Some((k, id)) = self.watchers.first_key_from(&(key, from)) {
            if k != key || !each(id) {
                return;
            }
            match id.0.checked_add(1) {
                Some(next) => from = RdmaId(next),
                None => return,
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
