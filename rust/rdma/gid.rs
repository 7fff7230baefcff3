// SPDX-License-Identifier: GPL-2.0

//! References on GID table entries (`struct ib_gid_attr`). The CM keeps one
//! per id for the GID its path uses, as 6.12's address vectors do, and
//! hands it to consumers in the events that carry one (`ppath_sgid_attr`,
//! SIDR `sgid_attr`).

use crate::bindings;
use crate::rdma::device::Device;
use crate::rdma::path::record_type;
use core::ptr::NonNull;
use kernel::error::from_err_ptr;

/// One counted reference on a GID table entry; put on drop.
///
/// INVARIANT: `attr` is a GID attribute on which `self` owns one reference.
pub(crate) struct GidAttr {
    attr: NonNull<bindings::ib_gid_attr>,
}

// SAFETY: GID attributes are reference counted by ib_core; holding and
// putting a reference is allowed from any thread.
unsafe impl Send for GidAttr {}
// SAFETY: `&GidAttr` only reads the pointer.
unsafe impl Sync for GidAttr {}

impl GidAttr {
    /// The entry at `index` of `port`'s GID table, if it is in use.
    pub(crate) fn get(device: &Device<'_>, port: u32, index: u8) -> Option<Self> {
        // SAFETY: the device is registered (type invariant of `Device`);
        // ib_core checks the port and index itself.
        let attr = unsafe { bindings::rdma_get_gid_attr(device.as_raw(), port, i32::from(index)) };
        let attr = from_err_ptr(attr.cast_mut()).ok()?;
        // INVARIANT: rdma_get_gid_attr returned a referenced entry.
        NonNull::new(attr).map(|attr| GidAttr { attr })
    }

    /// Takes over a reference the caller owns (NULL gives `None`).
    ///
    /// # Safety
    ///
    /// A non-NULL `attr` must be a GID attribute with a reference that
    /// the caller hands over.
    pub(crate) unsafe fn from_owned(attr: *const bindings::ib_gid_attr) -> Option<Self> {
        // INVARIANT: per this function's contract.
        NonNull::new(attr.cast_mut()).map(|attr| GidAttr { attr })
    }

    /// Hands the reference over to a C structure that puts it later.
    pub(crate) fn into_raw(self) -> *const bindings::ib_gid_attr {
        let attr = self.attr.as_ptr();
        core::mem::forget(self);
        attr
    }

    /// The type of a path record through this entry: RoCE v1 or v2 by
    /// its GID type on a RoCE port (`roce`), else IB.
    pub(crate) fn path_record_type(&self, roce: bool) -> bindings::sa_path_rec_type {
        // SAFETY: `self` holds a reference on the entry (type invariant).
        unsafe { record_type(roce, self.as_ptr()) }
    }

    /// The port of the entry's GID table.
    pub(crate) fn port(&self) -> u32 {
        self.as_attr().port_num
    }

    /// The entry itself, while `self` holds it.
    pub(crate) fn as_attr(&self) -> &bindings::ib_gid_attr {
        // SAFETY: `self` holds a reference on the entry (type invariant),
        // whose fields ib_core never changes once it is published.
        unsafe { self.attr.as_ref() }
    }

    /// The entry, for C structures that borrow it while `self` lives.
    pub(crate) fn as_ptr(&self) -> *const bindings::ib_gid_attr {
        self.attr.as_ptr()
    }
}

impl Clone for GidAttr {
    fn clone(&self) -> Self {
        // SAFETY: `self` holds a reference, so the entry is live.
        unsafe { bindings::rdma_hold_gid_attr(self.attr.as_ptr()) };
        // INVARIANT: one more reference taken just now.
        GidAttr { attr: self.attr }
    }
}

impl Drop for GidAttr {
    fn drop(&mut self) {
        // SAFETY: owned per the type invariant, put exactly once.
        unsafe { bindings::rdma_put_gid_attr(self.attr.as_ptr()) };
    }
}
