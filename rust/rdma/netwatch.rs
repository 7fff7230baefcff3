// SPDX-License-Identifier: GPL-2.0

//! rcm's watch on the network (neighbour updates, bonding failovers) for
//! rdma_cm: `rcm_net_helpers.c` registers the notifiers and hands each
//! change, from a work queue of its own, to the [`NetChangeHandler`] the
//! watch was started with.

use crate::bindings;
use crate::proto::rdma_cm::sockaddr;
use crate::proto::rdma_cm::SockAddr;
use core::ffi::c_void;
use core::marker::PhantomData;
use kernel::error::to_result;
use kernel::ffi::c_int;
use kernel::prelude::*;

/// A change as the notifiers saw it, valid for the callback: where it
/// happened and the new hardware address.
pub(crate) struct NetChange<'a> {
    /// The namespace, compared with, never followed (it may be gone).
    net: *const c_void,
    ifindex: c_int,
    ha: &'a [u8],
}

impl NetChange<'_> {
    /// Whether the id's resolved route leaves through the changed
    /// interface to a hardware address other than the new one.
    ///
    /// # Safety
    ///
    /// `id` is a live rdma_cm id.
    pub(crate) unsafe fn changes_destination_of(
        &self,
        id: *const bindings::rdma_id_private,
    ) -> bool {
        // SAFETY: per this function's contract; `ha` is valid for its
        // length. An id still resolving may be writing its device address:
        // at worst the comparison is stale (6.12 reads it the same way).
        unsafe {
            bindings::rcm_h_rdma_dst_ha_differs(
                id,
                self.net,
                self.ifindex,
                self.ha.as_ptr(),
                self.ha.len() as u32,
            )
        }
    }

    /// Whether the id is bound to the changed interface with a hardware
    /// address other than the new one.
    ///
    /// # Safety
    ///
    /// `id` is a live rdma_cm id.
    pub(crate) unsafe fn changes_source_of(&self, id: *const bindings::rdma_id_private) -> bool {
        // SAFETY: as in `changes_destination_of`.
        unsafe {
            bindings::rcm_h_rdma_src_ha_differs(
                id,
                self.net,
                self.ifindex,
                self.ha.as_ptr(),
                self.ha.len() as u32,
            )
        }
    }
}

/// What rdma_cm does with a network change (rcm's network work queue).
pub(crate) trait NetChangeHandler {
    /// The neighbour entry of `ip` was updated.
    fn neighbour_updated(ip: SockAddr, change: &NetChange<'_>);
    /// A bond failed over to another hardware address.
    fn failed_over(change: &NetChange<'_>);
}

/// The notifiers, registered for as long as this value lives, their
/// changes handed to `H`.
pub(crate) struct NetWatch<H: NetChangeHandler>(PhantomData<H>);

impl<H: NetChangeHandler> NetWatch<H> {
    /// The table the helper calls through (a constant: it outlives the
    /// watch).
    const TABLE: bindings::rcm_net_callbacks = bindings::rcm_net_callbacks {
        neigh_update: Some(neigh_update::<H>),
        failover: Some(failover::<H>),
    };

    /// Registers the notifiers (once: module init).
    pub(crate) fn start() -> Result<Self> {
        // SAFETY: the helper's notifiers and work queue are static; this
        // runs once, before `Drop` below; the table is static.
        to_result(unsafe { bindings::rcm_h_net_watch_start(&Self::TABLE) })?;
        Ok(NetWatch(PhantomData))
    }
}

impl<H: NetChangeHandler> Drop for NetWatch<H> {
    fn drop(&mut self) {
        // SAFETY: started by `start`; returns once no change is being
        // handed over any more.
        unsafe { bindings::rcm_h_net_watch_stop() };
    }
}

/// How many network changes (neighbour updates, netdev events) were seen
/// so far: a reply path worked out while it had another value may be
/// stale.
pub(crate) fn generation() -> u32 {
    // SAFETY: reads a static counter; any context.
    unsafe { bindings::rcm_h_net_generation() }
}

/// The change's hardware address.
///
/// # Safety
///
/// `ha` is valid for `ha_len` bytes for the returned borrow.
unsafe fn hardware_address<'a>(ha: *const u8, ha_len: u32) -> &'a [u8] {
    if ha.is_null() {
        return &[];
    }
    // SAFETY: per this function's contract.
    unsafe { core::slice::from_raw_parts(ha, ha_len as usize) }
}

/// # Safety
///
/// Called by the helper with `ip` valid for 16 bytes (an IPv4 address in
/// the first 4) and `ha` for `ha_len` bytes.
unsafe extern "C" fn neigh_update<H: NetChangeHandler>(
    net: *const c_void,
    ifindex: c_int,
    family: u16,
    ip: *const u8,
    ha: *const u8,
    ha_len: u32,
) {
    // SAFETY: per this function's contract.
    let ip = unsafe { core::slice::from_raw_parts(ip, 16) };
    let Some(ip) = sockaddr::from_ip(family, ip) else {
        return;
    };
    let change = NetChange {
        net,
        ifindex,
        // SAFETY: per this function's contract.
        ha: unsafe { hardware_address(ha, ha_len) },
    };
    H::neighbour_updated(ip, &change);
}

/// # Safety
///
/// Called by the helper with a valid `ha` of `ha_len` bytes.
unsafe extern "C" fn failover<H: NetChangeHandler>(
    net: *const c_void,
    ifindex: c_int,
    ha: *const u8,
    ha_len: u32,
) {
    let change = NetChange {
        net,
        ifindex,
        // SAFETY: per this function's contract.
        ha: unsafe { hardware_address(ha, ha_len) },
    };
    H::failed_over(&change);
}
