// SPDX-License-Identifier: GPL-2.0

//! Rows of ib_core's resource tracking that rcm adds besides its ids'
//! own entries (`rcm_rdma_helpers.c`).

use crate::bindings;
use core::ptr::NonNull;

/// A wildcard listener's row on one device (`rdma res show cm_id` lists
/// 6.12's internal listening id per device; rcm keeps this row instead).
/// Freed when dropped; the free waits for dumps reading it, so it must not
/// be dropped under a lock a dump could wait for.
///
/// INVARIANT: `row` was made by `rcm_h_listen_row_add` and is owned by
/// this value alone.
pub(crate) struct ListenRow {
    row: NonNull<bindings::rdma_id_private>,
}

// SAFETY: a row is only read by ib_core's dumps (under their own
// reference) and freed from process context by its one owner.
unsafe impl Send for ListenRow {}

impl ListenRow {
    /// Adds a row for `listener` on `device`; `None` without memory or
    /// when the helper refuses.
    ///
    /// # Safety
    ///
    /// `device` is registered for the call; `listener` is a listening id
    /// whose source address is written and whose tracking entry stays live
    /// until the row is dropped.
    pub(crate) unsafe fn add(
        listener: *const bindings::rdma_id_private,
        device: *mut bindings::ib_device,
    ) -> Option<Self> {
        // SAFETY: per this function's contract.
        let row = unsafe { bindings::rcm_h_listen_row_add(listener, device) };
        if kernel::error::from_err_ptr(row).is_err() {
            return None;
        }
        // INVARIANT: made by the helper just now, shared with no one.
        NonNull::new(row).map(|row| ListenRow { row })
    }
}

impl Drop for ListenRow {
    fn drop(&mut self) {
        // SAFETY: made by `rcm_h_listen_row_add` and owned by this value
        // (invariant).
        unsafe { bindings::rcm_h_listen_row_del(self.row.as_ptr()) };
    }
}
