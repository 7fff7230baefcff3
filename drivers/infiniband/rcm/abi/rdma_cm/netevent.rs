// SPDX-License-Identifier: GPL-2.0

//! Network changes under rdma_cm ids (`rcm_net_helpers.c` watches them):
//! the core says which ids are concerned and reports; the hardware
//! addresses they are compared with live in the ids' `rdma_dev_addr`.

use super::calls::Host;
use super::types::core_sockaddr;
use super::RdmaCmAbi;
use crate::abi::service::{with_service, Service};
use crate::bindings;
use crate::proto::rdma_cm::RdmaId;
use crate::shell::rdma_cm::KernelRdmaCm;
use core::ffi::{c_int, c_void};
use kernel::prelude::*;

/// A change as the notifier saw it: where, and the new hardware address.
struct NetChange {
    net: *const c_void,
    ifindex: c_int,
    ha: *const u8,
    ha_len: u32,
}

/// Which hardware address of an id a change is compared with (a C helper:
/// true if the id is on the changed interface with another address).
type Compare = unsafe extern "C" fn(
    *const bindings::rdma_id_private,
    *const c_void,
    c_int,
    *const u8,
    u32,
) -> bool;

impl RdmaCmAbi {
    /// Tells each of the candidates `pick` names whose address `compare`
    /// finds changed, with `report`. The candidates are a snapshot: the
    /// addresses are compared outside the core's lock.
    fn tell(
        &self,
        s: &Service,
        change: &NetChange,
        pick: impl FnOnce(&mut KernelRdmaCm, &mut KVec<RdmaId>),
        compare: Compare,
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
            // SAFETY: the box's reference keeps the id; the change's
            // address is valid for this call. An id still resolving may be
            // writing its device address: at worst the comparison is stale
            // (6.12 reads it the same way).
            let changed = unsafe {
                compare(
                    b.private(),
                    change.net,
                    change.ifindex,
                    change.ha,
                    change.ha_len,
                )
            };
            if changed {
                self.call(s, |core, host| report(core, host, *id));
            }
        }
    }

    /// A neighbour's hardware address changed: the ids whose RoCE route
    /// goes to it through that interface get UNREACHABLE.
    fn neighbour_update(&self, s: &Service, ip: &bindings::rcm_h_sockaddr, change: &NetChange) {
        let Some(ip) = core_sockaddr(ip) else {
            return;
        };
        // As many as memory allows (a change that cannot be told to
        // every id is told to those it can).
        let pick = |core: &mut KernelRdmaCm, v: &mut KVec<RdmaId>| {
            core.neighbour_watchers(ip, |id| v.push(id, GFP_KERNEL).is_ok())
        };
        self.tell(
            s,
            change,
            pick,
            bindings::rcm_h_rdma_dst_ha_differs,
            |core, host, id| core.neighbour_changed(host, id),
        );
    }

    /// A bond failed over to another hardware address: the ids bound to
    /// it get ADDR_CHANGE.
    fn netdev_failover(&self, s: &Service, change: &NetChange) {
        let pick =
            |core: &mut KernelRdmaCm, v: &mut KVec<RdmaId>| push_all(v, core.ids_with_device());
        self.tell(
            s,
            change,
            pick,
            bindings::rcm_h_rdma_src_ha_differs,
            |core, host, id| core.address_changed(host, id),
        );
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

/// A neighbour entry was updated (rcm's network work queue).
///
/// # Safety
///
/// Called by `rcm_net_helpers.c` with valid `ip` and `ha` (of `ha_len`
/// bytes) for the call.
#[no_mangle]
pub(crate) unsafe extern "C" fn rcm_rdma_neigh_update(
    net: *const c_void,
    ifindex: c_int,
    ip: *const bindings::rcm_h_sockaddr,
    ha: *const u8,
    ha_len: u32,
) {
    // SAFETY: per this function's contract.
    let Some(ip) = (unsafe { ip.as_ref() }) else {
        return;
    };
    let change = NetChange {
        net,
        ifindex,
        ha,
        ha_len,
    };
    with_service(|s| s.consumer().rdma_cm.neighbour_update(&s, ip, &change));
}

/// A bond failed over (rcm's network work queue).
///
/// # Safety
///
/// Called by `rcm_net_helpers.c` with a valid `ha` of `ha_len` bytes.
#[no_mangle]
pub(crate) unsafe extern "C" fn rcm_rdma_netdev_failover(
    net: *const c_void,
    ifindex: c_int,
    ha: *const u8,
    ha_len: u32,
) {
    let change = NetChange {
        net,
        ifindex,
        ha,
        ha_len,
    };
    with_service(|s| s.consumer().rdma_cm.netdev_failover(&s, &change));
}
