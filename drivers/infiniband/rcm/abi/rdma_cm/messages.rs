// SPDX-License-Identifier: GPL-2.0

//! rdma_cm's words for consumers' logs and its reading of a REJ:
//! `rdma_event_msg`, `rdma_reject_msg`, `rdma_consumer_reject_data`.

use super::id::RdmaIdBox;
use super::types::ECONNREFUSED;
use crate::bindings;
use crate::proto::rdma_cm::event::UNRECOGNIZED_EVENT_NUL;
use crate::proto::rdma_cm::iwarp::iw_reject_message_nul;
use crate::proto::rdma_cm::EventKind;
use crate::proto::reason::RejectReason;
use kernel::ffi::{c_char, c_int, c_void};

/// The name of an event (`rdma_event_msg`).
#[no_mangle]
pub(crate) extern "C" fn rdma_event_msg(event: bindings::rdma_cm_event_type) -> *const c_char {
    let msg = EventKind::from_raw(event).map_or(UNRECOGNIZED_EVENT_NUL, EventKind::message_nul);
    msg.as_ptr().cast()
}

/// Whether `id` is on an iWARP port (a REJECTED status is then an errno,
/// not a REJ reason).
fn iwarp(id: Option<&RdmaIdBox>) -> bool {
    id.is_some_and(|b| b.on_iwarp())
}

/// The meaning of a reject reason (`rdma_reject_msg`): the CM's REJ
/// reasons on IB and RoCE, iw_cm's errnos on iWARP.
///
/// # Safety
///
/// `id` must come from rcm.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_reject_msg(
    id: *mut bindings::rdma_cm_id,
    reason: c_int,
) -> *const c_char {
    // SAFETY: per this function's contract.
    let msg = if iwarp(unsafe { RdmaIdBox::from_id_or_null(id) }) {
        iw_reject_message_nul(reason)
    } else {
        u16::try_from(reason)
            .map(|r| RejectReason::from_wire(r).message_nul())
            .unwrap_or("unrecognized reason\0")
    };
    msg.as_ptr().cast()
}

/// Whether a REJECTED event's status is the peer consumer's refusal
/// (`IB_CM_REJ_CONSUMER_DEFINED`; `-ECONNREFUSED` on iWARP), so that its
/// private data is the peer consumer's.
fn consumer_reject(iwarp: bool, status: c_int) -> bool {
    if iwarp {
        return status == ECONNREFUSED;
    }
    u16::try_from(status).is_ok_and(|r| RejectReason::from_wire(r) == RejectReason::ConsumerDefined)
}

/// The private data of a consumer's REJ (`rdma_consumer_reject_data`):
/// NULL and 0 for any other rejection.
///
/// # Safety
///
/// `id` must come from rcm; `ev` must be a valid event; `data_len` valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_consumer_reject_data(
    id: *mut bindings::rdma_cm_id,
    ev: *mut bindings::rdma_cm_event,
    data_len: *mut u8,
) -> *const c_void {
    // SAFETY: valid per this function's contract.
    let (b, ev, data_len) = unsafe { (RdmaIdBox::from_id_or_null(id), &*ev, data_len.as_mut()) };
    let (data, len) = if consumer_reject(iwarp(b), ev.status) {
        // SAFETY: a REJECTED event carries connection parameters.
        let conn = unsafe { &ev.param.conn };
        (conn.private_data, conn.private_data_len)
    } else {
        (core::ptr::null(), 0)
    };
    if let Some(out) = data_len {
        *out = len;
    }
    data
}

/// The GIDs of an id's addresses (`rdma_read_gids`).
///
/// # Safety
///
/// `id` must come from rcm; `sgid` and `dgid` NULL or valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn rdma_read_gids(
    id: *mut bindings::rdma_cm_id,
    sgid: *mut bindings::ib_gid,
    dgid: *mut bindings::ib_gid,
) {
    // SAFETY: per this function's contract.
    let (b, sgid, dgid) = unsafe { (RdmaIdBox::from_id(id), sgid.as_mut(), dgid.as_mut()) };
    let (src, dst) = b.gids();
    for (gid, out) in [(src, sgid), (dst, dgid)] {
        if let (Some(gid), Some(out)) = (gid, out) {
            *out = bindings::ib_gid { raw: gid };
        }
    }
}
