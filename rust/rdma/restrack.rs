// SPDX-License-Identifier: GPL-2.0

//! Rows of ib_core's resource tracking that rcm adds besides its ids'
//! own entries.

use crate::bindings;
use crate::proto::rdma_cm::Family;
use crate::rdma::cm_id::CmIdPrivate;
use crate::rdma::device::Device;
use crate::rdma::sockaddr::write_sockaddr;
use core::ptr::{addr_of, addr_of_mut};
use kernel::prelude::*;
use kernel::types::Opaque;

/// A wildcard listener's row on one device (`rdma res show cm_id` lists
/// 6.12's internal listening id per device; rcm has none, so it adds a
/// record only ib_core's netlink dump reads): state LISTEN, the
/// listener's port space, address and owner. Freed when dropped; the free
/// waits for dumps reading it, so it must not be dropped under a lock a
/// dump could wait for.
///
/// INVARIANT: `row` is in ib_core's resource tracking, its entry's
/// parent the listener's entry, and owned by this value alone.
pub(crate) struct ListenRow {
    row: Pin<KBox<Opaque<bindings::rdma_id_private>>>,
}

// SAFETY: a row is only read by ib_core's dumps (under their own
// reference) and freed from process context by its one owner.
unsafe impl Send for ListenRow {}

impl ListenRow {
    /// Adds a row for `listener` on `device`; `None` without memory, or
    /// where 6.12 has no such id (AF_IB on a device without the IB CM, a
    /// device the listener's namespace may not use).
    ///
    /// # Safety
    ///
    /// `listener` listens (its source address is written), and its
    /// tracking entry stays live until the row is dropped.
    pub(crate) unsafe fn add(listener: &CmIdPrivate, device: &Device<'_>) -> Option<Self> {
        let src = listener.addrs().0;
        if src.is_some_and(|a| a.family() == Family::Ib) && !device.has_ib_cm(1) {
            return None;
        }
        if !listener.may_use(device) {
            return None;
        }
        let row = KBox::pin_init(
            Opaque::ffi_init(|p: *mut bindings::rdma_id_private| {
                // SAFETY: `p` is this row's memory, zeroed before use.
                unsafe { core::ptr::write_bytes(p, 0, 1) }
            }),
            GFP_KERNEL,
        )
        .ok()?;
        let (p, l) = (row.get(), listener.private());
        // SAFETY: the row is ours and not yet tracked; the listener's
        // fields read are fixed while it listens; its tracking entry is
        // live (this function's contract).
        unsafe {
            (*p).id.device = device.as_raw();
            (*p).id.ps = addr_of!((*l).id.ps).read();
            (*p).id.qp_type = addr_of!((*l).id.qp_type).read();
            (*p).state = bindings::rdma_cm_state_RDMA_CM_LISTEN;
            if let Some(src) = src {
                write_sockaddr(addr_of_mut!((*p).id.route.addr.src_addr), &src);
            }
            let res = addr_of_mut!((*p).res);
            bindings::rdma_restrack_new(res, bindings::rdma_restrack_type_RDMA_RESTRACK_CM_ID);
            bindings::rdma_restrack_parent_name(res, addr_of!((*l).res));
            bindings::rdma_restrack_add(res);
        }
        // INVARIANT: tracked just now, shared with no one.
        Some(ListenRow { row })
    }
}

impl Drop for ListenRow {
    fn drop(&mut self) {
        // SAFETY: the row is tracked (invariant); the removal waits for
        // dumps reading it, after which the memory is ours to free.
        unsafe { bindings::rdma_restrack_del(addr_of_mut!((*self.row.get()).res)) };
    }
}
