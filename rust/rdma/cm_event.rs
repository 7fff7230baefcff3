// SPDX-License-Identifier: GPL-2.0

//! The `struct ib_cm_event` an ib_cm consumer's handler receives, built
//! from the plain values the ib_cm surface supplies (`rcm_h_req_event`,
//! `rcm_h_sidr_req_event`, `rcm_h_event`: host byte order, already seen
//! from this side), and the call of the handler.

use super::path::{record_of, record_type, set_dmac};
use crate::bindings;
use core::ptr::null_mut;
use kernel::ffi::c_int;

/// Calls `id`'s handler with `ev`; its result (0 without a handler, which
/// ib_cm's API does not allow).
///
/// # Safety
///
/// `id` is a live ib_cm id; every pointer in `ev` is valid for the call.
unsafe fn call_handler(id: *mut bindings::ib_cm_id, ev: &mut bindings::ib_cm_event) -> c_int {
    // SAFETY: per this function's contract.
    match unsafe { (*id).cm_handler } {
        // SAFETY: the consumer's handler, called as ib_cm's contract says:
        // process context, no rcm lock held.
        Some(handler) => unsafe { handler(id, ev) },
        None => 0,
    }
}

/// The P_Key of the BTH a MAD arrived with, from its P_Key index (0 if
/// the index is no longer in the table).
///
/// # Safety
///
/// `id` is a live ib_cm id.
unsafe fn bth_pkey(id: *mut bindings::ib_cm_id, port: u32, pkey_index: u16) -> u16 {
    let mut pkey = 0u16;
    // SAFETY: per this function's contract, the id's device is
    // registered; `pkey` is ours.
    let ret =
        unsafe { bindings::ib_get_cached_pkey((*id).device, port, pkey_index.into(), &mut pkey) };
    if ret == 0 {
        pkey
    } else {
        0
    }
}

/// Calls `id`'s handler with `IB_CM_REQ_RECEIVED` for `e`; its result.
///
/// # Safety
///
/// `id` and `e.listen_id` are live ib_cm ids; `e.sgid_attr` is NULL or
/// held for the call; `e.private_data` points to a REQ's private data.
pub(crate) unsafe fn deliver_req(
    id: *mut bindings::ib_cm_id,
    e: &bindings::rcm_h_req_event,
) -> c_int {
    // SAFETY: per this function's contract.
    let rec_type = unsafe { record_type(e.primary.roce != 0, e.sgid_attr) };
    let mut primary = record_of(&e.primary, rec_type);
    if e.primary.roce != 0 {
        set_dmac(&mut primary, e.dmac);
    }
    // The alternate path has the primary's record type, as in 6.12.
    let mut alternate = (e.has_alt != 0).then(|| record_of(&e.alt, rec_type));
    let mut p = bindings::ib_cm_req_event_param {
        listen_id: e.listen_id,
        // SAFETY: per this function's contract.
        bth_pkey: unsafe { bth_pkey(id, e.port, e.pkey_index) },
        port: e.port as u8,
        primary_path: &mut primary,
        alternate_path: alternate.as_mut().map_or(null_mut(), |a| a),
        ppath_sgid_attr: e.sgid_attr,
        remote_ca_guid: e.remote_ca_guid.to_be(),
        remote_qkey: e.remote_qkey,
        remote_qpn: e.remote_qpn,
        qp_type: e.qp_type,
        starting_psn: e.starting_psn,
        responder_resources: e.responder_resources,
        initiator_depth: e.initiator_depth,
        ece: bindings::rdma_ucm_ece {
            vendor_id: e.vendor_id,
            attr_mod: e.attr_mod,
        },
        ..Default::default()
    };
    p.set_local_cm_response_timeout(e.local_cm_response_timeout.into());
    p.set_flow_control(e.flow_control.into());
    p.set_remote_cm_response_timeout(e.remote_cm_response_timeout.into());
    p.set_retry_count(e.retry_count.into());
    p.set_rnr_retry_count(e.rnr_retry_count.into());
    p.set_srq(e.srq.into());
    let mut ev = bindings::ib_cm_event {
        event: bindings::ib_cm_event_type_IB_CM_REQ_RECEIVED,
        private_data: e.private_data.cast_mut(),
        ..Default::default()
    };
    ev.param.req_rcvd = p;
    // SAFETY: per this function's contract; the path records live until
    // the call returns.
    unsafe { call_handler(id, &mut ev) }
}

/// Calls `id`'s handler with `IB_CM_SIDR_REQ_RECEIVED` for `e`; its
/// result.
///
/// # Safety
///
/// As [`deliver_req`], with a SIDR_REQ's private data.
pub(crate) unsafe fn deliver_sidr_req(
    id: *mut bindings::ib_cm_id,
    e: &bindings::rcm_h_sidr_req_event,
) -> c_int {
    let mut ev = bindings::ib_cm_event {
        event: bindings::ib_cm_event_type_IB_CM_SIDR_REQ_RECEIVED,
        private_data: e.private_data.cast_mut(),
        ..Default::default()
    };
    ev.param.sidr_req_rcvd = bindings::ib_cm_sidr_req_event_param {
        listen_id: e.listen_id,
        service_id: e.service_id.to_be(),
        sgid_attr: e.sgid_attr,
        // SAFETY: per this function's contract.
        bth_pkey: unsafe { bth_pkey(id, e.port, e.pkey_index) },
        port: e.port as u8,
        pkey: e.pkey,
    };
    // SAFETY: per this function's contract.
    unsafe { call_handler(id, &mut ev) }
}

/// Calls `id`'s handler with any other event, `e`, filling the
/// parameters its type has; the handler's result.
///
/// # Safety
///
/// `id` is a live ib_cm id; `e`'s pointers (private data, info, GID
/// entry) are NULL or valid for the call.
pub(crate) unsafe fn deliver_event(
    id: *mut bindings::ib_cm_id,
    e: &bindings::rcm_h_event,
) -> c_int {
    let mut ev = bindings::ib_cm_event {
        event: e.event,
        private_data: e.private_data.cast_mut(),
        ..Default::default()
    };
    let mut lap_path;
    match e.event {
        bindings::ib_cm_event_type_IB_CM_REP_RECEIVED => {
            let mut p = bindings::ib_cm_rep_event_param {
                remote_ca_guid: e.remote_ca_guid.to_be(),
                remote_qkey: e.qkey,
                remote_qpn: e.qpn,
                starting_psn: e.starting_psn,
                responder_resources: e.responder_resources,
                initiator_depth: e.initiator_depth,
                ece: bindings::rdma_ucm_ece {
                    vendor_id: e.vendor_id,
                    attr_mod: e.attr_mod,
                },
                ..Default::default()
            };
            p.set_target_ack_delay(e.target_ack_delay.into());
            p.set_failover_accepted(e.failover_accepted.into());
            p.set_flow_control(e.flow_control.into());
            p.set_rnr_retry_count(e.rnr_retry_count.into());
            p.set_srq(e.srq.into());
            ev.param.rep_rcvd = p;
        }
        bindings::ib_cm_event_type_IB_CM_REJ_RECEIVED => {
            ev.param.rej_rcvd = bindings::ib_cm_rej_event_param {
                reason: e.status,
                ari: e.info.cast_mut(),
                ari_length: e.info_len,
            };
        }
        bindings::ib_cm_event_type_IB_CM_MRA_RECEIVED => {
            ev.param.mra_rcvd = bindings::ib_cm_mra_event_param {
                service_timeout: e.service_timeout,
            };
        }
        bindings::ib_cm_event_type_IB_CM_LAP_RECEIVED => {
            // SAFETY: per this function's contract.
            let rec_type = unsafe { record_type(e.lap.roce != 0, e.sgid_attr) };
            lap_path = record_of(&e.lap, rec_type);
            ev.param.lap_rcvd = bindings::ib_cm_lap_event_param {
                alternate_path: &mut lap_path,
            };
        }
        bindings::ib_cm_event_type_IB_CM_APR_RECEIVED => {
            ev.param.apr_rcvd = bindings::ib_cm_apr_event_param {
                ap_status: e.status,
                apr_info: e.info.cast_mut(),
                info_len: e.info_len,
            };
        }
        bindings::ib_cm_event_type_IB_CM_SIDR_REP_RECEIVED => {
            ev.param.sidr_rep_rcvd = bindings::ib_cm_sidr_rep_event_param {
                status: e.status,
                qkey: e.qkey,
                qpn: e.qpn,
                info: e.info.cast_mut(),
                sgid_attr: e.sgid_attr,
                info_len: e.info_len,
            };
        }
        bindings::ib_cm_event_type_IB_CM_REQ_ERROR
        | bindings::ib_cm_event_type_IB_CM_REP_ERROR
        | bindings::ib_cm_event_type_IB_CM_DREQ_ERROR
        | bindings::ib_cm_event_type_IB_CM_LAP_ERROR
        | bindings::ib_cm_event_type_IB_CM_SIDR_REQ_ERROR => ev.param.send_status = e.status,
        // RTU, DREQ, DREP, TIMEWAIT_EXIT, USER_ESTABLISHED: no parameters.
        _ => {}
    }
    // SAFETY: per this function's contract; the LAP's path record lives
    // until the call returns.
    unsafe { call_handler(id, &mut ev) }
}
