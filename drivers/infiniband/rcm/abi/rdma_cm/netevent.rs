// SPDX-License-Identifier: GPL-2.0

//! Network changes under rdma_cm ids (`rust/rdma/netwatch.rs` watches them):
//! the core says which ids are concerned and reports; the hardware
//! addresses they are compared with live in the ids' `rdma_dev_addr`.

use super::calls::Host;
use super::RdmaCmAbi;
use crate::abi::service::with_part;
use crate::proto::rdma_cm::{RdmaId, SockAddr};
use crate::rdma::netwatch::{NetChange, NetChangeHandler};
use crate::shell::rdma_cm::KernelRdmaCm;
use crate::shell::CmService;
use kernel::prelude::*;

/// Which of an id's hardware addresses a change is compared with.
#[derive(Clone, Copy)]
enum Compared {
    /// Its route's next hop (a neighbour update).
    Destination,
    /// Its own interface's (a failover).
    Source,
}

impl RdmaCmAbi {
    /// Tells each of the candidates `pick` names whose `compared` address
    /// the change makes stale, with `report`. The candidates are a
    /// snapshot: the addresses are compared outside the core's lock.
    fn tell(
        &self,
        s: &CmService,
        change: &NetChange,
        pick: impl FnOnce(&mut KernelRdmaCm, &mut KVec<RdmaId>),
        compared: Compared,
        report: fn(&mut KernelRdmaCm, &mut Host<'_>, RdmaId) -> bool,
    ) {
        let ids = self.call(s, |core, _| {
            let mut v = KVec::new();
            pick(core, &mut v);
            v
        });
        for id in ids.iter() {
            let Some(b) = self.id_box(*id) else {
                continue;
            };
            // SAFETY: the box's reference keeps the id.
            let changed = unsafe {
                match compared {
                    Compared::Destination => change.changes_destination_of(b.private()),
                    Compared::Source => change.changes_source_of(b.private()),
                }
            };
            if changed {
                self.call(s, |core, host| report(core, host, *id));
            }
        }
    }

    /// A neighbour's hardware address changed: the ids whose RoCE route
    /// goes to it through that interface get UNREACHABLE.
    fn neighbour_update(&self, s: &CmService, ip: SockAddr, change: &NetChange) {
        // As many as memory allows (a change that cannot be told to
        // every id is told to those it can).
        let pick = |core: &mut KernelRdmaCm, v: &mut KVec<RdmaId>| {
            core.neighbour_watchers(ip, |id| v.push(id, GFP_KERNEL).is_ok())
        };
        self.tell(s, change, pick, Compared::Destination, |core, host, id| {
            core.neighbour_changed(host, id)
        });
    }

    /// A bond failed over to another hardware address: the ids bound to
    /// it get ADDR_CHANGE.
    fn netdev_failover(&self, s: &CmService, change: &NetChange) {
        let pick =
            |core: &mut KernelRdmaCm, v: &mut KVec<RdmaId>| push_all(v, core.ids_with_device());
        self.tell(s, change, pick, Compared::Source, |core, host, id| {
            core.address_changed(host, id)
        });
    }
}

/// Copies `ids` into `v`, as many as memory allows (a change that cannot
/// be told to every id is told to those it can).
fn push_all(v: &mut KVec<RdmaId>, ids: impl Iterator<Item = RdmaId>) {
    for id in ids {
        if v.push(id, GFP_KERNEL).is_err() {
            break;
        }
    }
}

/// Network changes as rdma_cm handles them (the module's root starts the
/// watch with them).
pub(crate) struct NetCallbacks;

impl NetChangeHandler for NetCallbacks {
    fn neighbour_updated(ip: SockAddr, change: &NetChange) {
        with_part(|s, cm: &RdmaCmAbi| cm.neighbour_update(s, ip, change));
    }

    fn failed_over(change: &NetChange) {
        with_part(|s, cm: &RdmaCmAbi| cm.netdev_failover(s, change));
    }
}
