// SPDX-License-Identifier: GPL-2.0

//! The `struct rdma_cm_id` rcm hands to rdma_cm consumers: its C
//! structure (`rdma::cm_id`), in an `Arc` with the core's id.

use super::types::kernel_state;
use crate::abi::id_registry::RegisteredId;
use crate::bindings;
use crate::proto::cm::CommId;
use crate::proto::rdma_cm::{IdState, RdmaId};
use crate::rdma::cm_id::CmIdPrivate;
pub(crate) use crate::rdma::cm_id::NewId;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

/// A consumer's id. `private` comes first, and its C structure's first
/// field is the `struct rdma_cm_id`: consumers hold that pointer and the
/// API gets the box back by casting.
#[pin_data]
#[repr(C)]
pub(crate) struct RdmaIdBox {
    #[pin]
    private: CmIdPrivate,
    /// The core's id.
    pub(crate) core: RdmaId,
    /// The CM id of the connection ([`NO_COMM`]: none), for calls from
    /// any context (`rdma_notify` from a QP event handler).
    comm: AtomicU64,
    /// Set once `rdma_destroy_id` (or a handler's non-zero return) began;
    /// never cleared. The C state says DESTROYING too, but a mirror of
    /// the core's state (a result still applied under the core's lock)
    /// writes that field, so deliveries read this flag.
    destroying: AtomicBool,
    /// Set before the id's first wildcard listener row may be added
    /// (`add_listen_rows`), never cleared: a destroy of an id that never
    /// listened has no rows to look for.
    listen_rows: AtomicBool,
}

/// No CM id.
const NO_COMM: u64 = u64::MAX;

impl RegisteredId for RdmaIdBox {
    fn key(&self) -> u64 {
        self.core.0
    }

    fn slot_of(key: u64) -> Option<usize> {
        Some(RdmaId(key).slot())
    }
}

impl RdmaIdBox {
    /// A new IDLE id for the core's `core`.
    pub(crate) fn new(core: RdmaId, n: &NewId) -> Result<Arc<Self>> {
        Arc::pin_init(
            try_pin_init!(RdmaIdBox {
                private <- CmIdPrivate::new(n),
                core,
                comm: AtomicU64::new(NO_COMM),
                destroying: AtomicBool::new(false),
                listen_rows: AtomicBool::new(false),
            }? Error),
            // A user's ids count against its memory cgroup.
            GFP_KERNEL_ACCOUNT,
        )
    }

    /// The box of a consumer's id pointer.
    ///
    /// # Safety
    ///
    /// `id` must be a pointer rcm handed out (from a create call or an
    /// event) whose id is not destroyed.
    pub(crate) unsafe fn from_id<'a>(id: *mut bindings::rdma_cm_id) -> &'a RdmaIdBox {
        // SAFETY: `id` is the first field of the C structure, the first
        // field of `private`, the first field of a live `RdmaIdBox` (all
        // repr(C)), per the function's contract.
        unsafe { &*id.cast::<RdmaIdBox>() }
    }

    /// As [`Self::from_id`], `None` for NULL.
    ///
    /// # Safety
    ///
    /// A non-NULL `id` must be as [`Self::from_id`] requires.
    pub(crate) unsafe fn from_id_or_null<'a>(
        id: *mut bindings::rdma_cm_id,
    ) -> Option<&'a RdmaIdBox> {
        // SAFETY: as in `from_id`, per this function's contract.
        unsafe { id.cast::<RdmaIdBox>().as_ref() }
    }

    /// Mirrors the core's state for ib_core's resource tracking.
    pub(crate) fn set_state(&self, state: IdState) {
        self.private.set_kernel_state(kernel_state(state));
        // A destroy that began meanwhile keeps its mark: whichever store
        // comes last, the field ends DESTROYING (each side stores, then
        // the other reads the flag).
        if self.destroying.load(Ordering::SeqCst) {
            self.private.set_destroying();
        }
    }

    /// Marks the id as being destroyed: no delivery calls its handler
    /// from here on (the mark outlives later mirrors of the core's state).
    pub(crate) fn set_destroying(&self) {
        self.destroying.store(true, Ordering::SeqCst);
        self.private.set_destroying();
    }

    /// Notes that listener rows may be added for the id from here on. Set
    /// before the adder checks that the core has the id listening, under
    /// the core's lock, which the destroy takes to remove the id before
    /// it reads the mark: a row added after that check is seen.
    pub(crate) fn note_listen_rows(&self) {
        self.listen_rows.store(true, Ordering::SeqCst);
    }

    /// Whether listener rows were ever added for the id (or may be).
    pub(crate) fn may_have_listen_rows(&self) -> bool {
        self.listen_rows.load(Ordering::SeqCst)
    }

    /// Whether the id is being destroyed.
    pub(crate) fn destroying(&self) -> bool {
        self.destroying.load(Ordering::SeqCst)
    }

    /// Whether the state mirrored last (see `RdmaCmAbi::sync`) is `state`.
    pub(crate) fn mirrored_state_is(&self, state: IdState) -> bool {
        self.private.kernel_state() == kernel_state(state)
    }

    /// Records the connection's CM id.
    pub(crate) fn set_comm(&self, comm: Option<CommId>) {
        self.comm
            .store(comm.map_or(NO_COMM, |c| u64::from(c.0)), Ordering::Release);
    }

    /// The connection's CM id, if any.
    pub(crate) fn comm(&self) -> Option<CommId> {
        let c = self.comm.load(Ordering::Acquire);
        (c != NO_COMM).then_some(CommId(c as u32))
    }
}

impl core::ops::Deref for RdmaIdBox {
    type Target = CmIdPrivate;

    fn deref(&self) -> &CmIdPrivate {
        &self.private
    }
}
