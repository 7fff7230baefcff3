// SPDX-License-Identifier: GPL-2.0

//! QPs rdma_cm makes and moves for its consumers: a QP `rdma_create_qp`
//! made, until an id takes it, and the moves of an id's QP under the id's
//! QP lock (`cm_id::QpLock`).

use crate::bindings;
use core::ptr::NonNull;
use kernel::ffi::c_int;
use kernel::prelude::*;

/// A QP rcm created that no id holds yet; destroyed if dropped.
///
/// INVARIANT: `qp` is a live QP that only `self` refers to.
pub(crate) struct NewQp {
    qp: NonNull<bindings::ib_qp>,
}

impl NewQp {
    /// `ib_create_qp` on `pd` with `init`.
    ///
    /// # Safety
    ///
    /// `pd` must be a live PD and `init` valid attributes for it.
    pub(crate) unsafe fn create(
        pd: *mut bindings::ib_pd,
        init: &mut bindings::ib_qp_init_attr,
    ) -> Result<Self, c_int> {
        // SAFETY: per this function's contract.
        let qp = unsafe { bindings::rcm_h_create_qp(pd, init) };
        let qp = kernel::error::from_err_ptr(qp).map_err(|e| e.to_errno())?;
        // INVARIANT: just created, referred to by nobody else.
        NonNull::new(qp)
            .map(|qp| NewQp { qp })
            .ok_or(ENOMEM.to_errno())
    }

    /// Moves the QP with `attr` and `mask`: 0 or a negative errno.
    pub(crate) fn modify(&mut self, attr: &mut bindings::ib_qp_attr, mask: u32) -> c_int {
        // SAFETY: the QP is live and only ours (type invariant).
        unsafe { modify(self.qp.as_ptr(), attr, mask) }
    }

    /// Moves a new UD QP through INIT (with `attr` and `mask`), RTR and
    /// RTS, as 6.12's rdma_cm does when it creates one: a UD QP needs
    /// nothing of the peer to send. 0 or the first failing move's errno.
    pub(crate) fn make_ud_ready(&mut self, attr: &mut bindings::ib_qp_attr, mask: u32) -> c_int {
        let ret = self.modify(attr, mask);
        if ret != 0 {
            return ret;
        }
        attr.qp_state = bindings::ib_qp_state_IB_QPS_RTR;
        let ret = self.modify(attr, bindings::ib_qp_attr_mask_IB_QP_STATE);
        if ret != 0 {
            return ret;
        }
        attr.qp_state = bindings::ib_qp_state_IB_QPS_RTS;
        attr.sq_psn = 0;
        self.modify(
            attr,
            bindings::ib_qp_attr_mask_IB_QP_STATE | bindings::ib_qp_attr_mask_IB_QP_SQ_PSN,
        )
    }

    /// The QP's number, and whether it receives through an SRQ.
    pub(crate) fn number_and_srq(&self) -> (u32, bool) {
        let qp = self.qp.as_ptr();
        // SAFETY: the QP is live (type invariant); both fields are fixed
        // at creation.
        unsafe { ((*qp).qp_num, !(*qp).srq.is_null()) }
    }

    /// Hands the QP over to an id (which destroys it later).
    pub(crate) fn into_raw(self) -> *mut bindings::ib_qp {
        let qp = self.qp.as_ptr();
        core::mem::forget(self);
        qp
    }
}

impl Drop for NewQp {
    fn drop(&mut self) {
        // SAFETY: the QP is live and only ours (type invariant).
        unsafe { destroy(self.qp.as_ptr()) };
    }
}

/// `ib_modify_qp`: 0 or a negative errno.
///
/// # Safety
///
/// `qp` must be a live QP that is not destroyed meanwhile.
pub(crate) unsafe fn modify(
    qp: *mut bindings::ib_qp,
    attr: &mut bindings::ib_qp_attr,
    mask: u32,
) -> c_int {
    // SAFETY: per this function's contract; `attr` is ours. The mask's
    // bits go over as they are.
    unsafe { bindings::ib_modify_qp(qp, attr, mask as c_int) }
}

/// `ib_destroy_qp`.
///
/// # Safety
///
/// `qp` must be a live QP that nothing uses after.
pub(crate) unsafe fn destroy(qp: *mut bindings::ib_qp) {
    // SAFETY: per this function's contract.
    unsafe { bindings::rcm_h_destroy_qp(qp) };
}
