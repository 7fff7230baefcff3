// SPDX-License-Identifier: GPL-2.0

//! QPs rdma_cm moves for its consumers.

use crate::bindings;
use kernel::ffi::c_int;

/// Moves a new UD QP through INIT (with `attr` and `mask`), RTR and RTS,
/// as 6.12's rdma_cm does when it creates one: a UD QP needs nothing of
/// the peer to send. 0 or the first move's negative errno.
///
/// # Safety
///
/// `qp` must be a live QP no other thread modifies meanwhile.
pub(crate) unsafe fn ud_ready(
    qp: *mut bindings::ib_qp,
    attr: &mut bindings::ib_qp_attr,
    mask: c_int,
) -> c_int {
    // SAFETY: per this function's contract; `attr` is ours.
    let ret = unsafe { bindings::ib_modify_qp(qp, attr, mask) };
    if ret != 0 {
        return ret;
    }
    attr.qp_state = bindings::ib_qp_state_IB_QPS_RTR;
    // SAFETY: as above.
    let ret =
        unsafe { bindings::ib_modify_qp(qp, attr, bindings::ib_qp_attr_mask_IB_QP_STATE as c_int) };
    if ret != 0 {
        return ret;
    }
    attr.qp_state = bindings::ib_qp_state_IB_QPS_RTS;
    attr.sq_psn = 0;
    let mask = bindings::ib_qp_attr_mask_IB_QP_STATE | bindings::ib_qp_attr_mask_IB_QP_SQ_PSN;
    // SAFETY: as above.
    unsafe { bindings::ib_modify_qp(qp, attr, mask as c_int) }
}
