// SPDX-License-Identifier: GPL-2.0

//! Multicast groups of UD ids on RoCE (`rdma::multicast`):
//! `rdma_join_multicast` and `rdma_leave_multicast`, the IP groups the core
//! asks for ([`IpMulticast`]), and the delivery of MULTICAST_JOIN with the
//! group's address handle while the membership lasts.
//!
//! An IGMP join or leave takes rtnl, which any user with a network
//! namespace can keep busy: the core's call only checks and queues it
//! (in the core's order, under its lock), and the caller applies the
//! queue once the core's lock is released, so that nobody else's rdma_cm
//! call waits for rtnl. The queue is applied under a mutex of its own in
//! order, so a membership is never left before it is joined; a join
//! returns once its change is applied.

use super::exports::on_id;
use super::id::RdmaIdBox;
use super::types::{read_sockaddr, ret};
use super::RdmaCmAbi;
use crate::bindings;
use crate::proto::rdma_cm::{GroupId, RdmaEvent, RdmaId, SockAddr};
use crate::shell::rdma_cm::IpMulticast;
use crate::shell::CmService;
use kernel::ffi::{c_int, c_void};
use kernel::prelude::*;

/// `join_state` of a send-only full member (`BIT(SENDONLY_FULLMEMBER_JOIN)`).
const SEND_ONLY: u8 = 1 << 3;

impl RdmaCmAbi {
    /// `rdma_join_multicast`.
    pub(crate) fn join(
        &self,
        s: &CmService,
        b: &RdmaIdBox,
        group: SockAddr,
        send_only: bool,
        context: u64,
    ) -> c_int {
        let r = self.call(s, |core, host| {
            core.join_multicast(host, b.core, group, send_only, context)
                .map(|_| ())
        });
        ret(r)
    }

    /// `rdma_leave_multicast`: once it returns, no event of the group is
    /// being delivered (the handler lock), so the consumer may free the
    /// group's context.
    pub(crate) fn leave(&self, s: &CmService, b: &RdmaIdBox, group: SockAddr) {
        b.lock_handler();
        self.call(s, |core, host| core.leave_multicast(host, b.core, &group));
        b.unlock_handler();
    }

    /// A MULTICAST_JOIN for `b`'s id (its handler lock held): delivered
    /// while the membership lasts, with its address handle; the handler's
    /// return.
    pub(super) fn deliver_group_event(
        &self,
        b: &RdmaIdBox,
        group: GroupId,
        event: &RdmaEvent,
    ) -> c_int {
        let Some(m) = self.read(|core| core.group(group).copied()) else {
            // Left before its event: not reported.
            return 0;
        };
        b.deliver_group_join(m.context as usize as *mut c_void, &m.addr, event.conn.qkey)
    }
}

impl IpMulticast for RdmaCmAbi {
    fn join_group(&self, id: RdmaId, addr: &SockAddr, send_only: bool) -> Result<(), i32> {
        let b = self.id_box(id).ok_or(EINVAL.to_errno())?;
        if let Some(change) = b.prepare_join(addr, send_only)? {
            let mut changes = self.igmp_changes.lock();
            changes
                .reserve(1, GFP_KERNEL)
                .map_err(|_| ENOMEM.to_errno())?;
            // Cannot fail: the room is reserved.
            let _ = changes.push(change, GFP_KERNEL);
        }
        Ok(())
    }

    fn leave_group(&self, id: RdmaId, addr: &SockAddr, send_only: bool) {
        let Some(b) = self.id_box(id) else {
            return;
        };
        let Some(change) = b.prepare_leave(addr, send_only) else {
            return;
        };
        let mut changes = self.igmp_changes.lock();
        if changes.reserve(1, GFP_KERNEL).is_ok() {
            // Cannot fail: the room is reserved.
            let _ = changes.push(change, GFP_KERNEL);
        } else {
            // Without memory to queue it, left at once (under the core's
            // lock) rather than never.
            drop(changes);
            change.apply();
        }
    }

    fn apply_group_changes(&self) {
        let _in_order = self.igmp_applying.lock();
        loop {
            let batch = core::mem::take(&mut *self.igmp_changes.lock());
            if batch.is_empty() {
                return;
            }
            for change in batch {
                change.apply();
            }
        }
    }
}

/// `rdma_join_multicast`.
///
/// # Safety
///
/// `id` from rcm; `addr` a valid socket address.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_join_multicast(
    id: *mut bindings::rdma_cm_id,
    addr: *mut bindings::sockaddr,
    join_state: u8,
    context: *mut c_void,
) -> c_int {
    // SAFETY: per this function's contract.
    let (b, group) = unsafe { (RdmaIdBox::from_id_or_null(id), read_sockaddr(addr)) };
    let group = match group {
        Ok(a) => a,
        Err(e) => return e,
    };
    let send_only = join_state == SEND_ONLY;
    on_id(b, |s, abi, b| {
        abi.join(s, b, group, send_only, context as usize as u64)
    })
}

/// `rdma_leave_multicast`.
///
/// # Safety
///
/// `id` from rcm; `addr` a valid socket address.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_leave_multicast(
    id: *mut bindings::rdma_cm_id,
    addr: *mut bindings::sockaddr,
) {
    // SAFETY: per this function's contract.
    let (b, group) = unsafe { (RdmaIdBox::from_id_or_null(id), read_sockaddr(addr)) };
    let Ok(group) = group else {
        return;
    };
    on_id(b, |s, abi, b| {
        abi.leave(s, b, group);
        0
    });
}
