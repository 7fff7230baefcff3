// SPDX-License-Identifier: GPL-2.0

//! The ib_cm exports that tie a connection to the consumer's QP:
//! `ib_cm_init_qp_attr` (the INIT/RTR/RTS attributes the exchange settled,
//! computed as the 6.12 C CM does) and `ib_cm_notify` (the QP saw the
//! connection come up, or migrated).

use super::id::{sync_id, CmIdBox};
use super::types::kernel_qp_type;
use super::with_service;
use crate::bindings as b;
use crate::proto::cm::{CmError, CommId, LapState, QpParams, State};
use crate::rdma::device::Device;
use crate::shell::{KernelEndpoint, Outbox, Peer};
use kernel::ffi::c_int;
use kernel::prelude::*;

/// What `ib_cm_init_qp_attr` reads from a connection.
struct QpView {
    state: State,
    lap_state: LapState,
    qp: QpParams,
    peer: Option<Peer>,
    passive: bool,
}

impl QpView {
    /// The QP type the connection is for, as the C CM records it: the
    /// passive side of XRC is the target.
    fn qp_type(&self) -> b::ib_qp_type {
        kernel_qp_type(self.qp.transport.qp_type(self.passive))
    }
}

/// States in which the QP may go to RTR and RTS: a REQ is in hand, and
/// the connection is not yet being torn down.
fn connecting(state: State, include_req_sent: bool) -> bool {
    match state {
        State::ReqSent | State::MraReqRcvd => include_req_sent,
        State::ReqRcvd
        | State::MraReqSent
        | State::RepRcvd
        | State::MraRepSent
        | State::RepSent
        | State::MraRepRcvd
        | State::Established => true,
        _ => false,
    }
}

/// IB_QPS_INIT: access flags, P_Key index and port.
fn init_attr(v: &QpView, device: *mut b::ib_device, a: &mut b::ib_qp_attr) -> Option<u32> {
    if !connecting(v.state, true) {
        return None;
    }
    let mut access = b::ib_access_flags_IB_ACCESS_REMOTE_WRITE;
    if v.qp.responder_resources != 0 {
        // SAFETY: the id's device is registered while the id exists.
        let flush = unsafe { Device::from_raw(device) }.flush_access();
        access |= b::ib_access_flags_IB_ACCESS_REMOTE_READ
            | b::ib_access_flags_IB_ACCESS_REMOTE_ATOMIC
            | flush;
    }
    a.qp_access_flags = access as c_int;
    let path = v.peer.map(|p| p.path).unwrap_or_default();
    a.pkey_index = path.pkey_index;
    if v.peer.is_some() {
        a.port_num = path.port;
    }
    Some(
        b::ib_qp_attr_mask_IB_QP_STATE
            | b::ib_qp_attr_mask_IB_QP_ACCESS_FLAGS
            | b::ib_qp_attr_mask_IB_QP_PKEY_INDEX
            | b::ib_qp_attr_mask_IB_QP_PORT,
    )
}

/// IB_QPS_RTR: the address vector, MTU, remote QPN, receive PSN and, for
/// RC, the responder resources.
fn rtr_attr(v: &QpView, device: *mut b::ib_device, a: &mut b::ib_qp_attr) -> Option<u32> {
    if !connecting(v.state, false) {
        return None;
    }
    let path = v.peer?.path;
    // SAFETY: the device is registered; `a.ah_attr` is the consumer's.
    unsafe { path.fill_ah_attr(device, &mut a.ah_attr) };
    a.path_mtu = u32::from(v.qp.path_mtu);
    a.dest_qp_num = v.qp.remote_qpn;
    a.rq_psn = v.qp.rq_psn;
    let mut mask = b::ib_qp_attr_mask_IB_QP_STATE
        | b::ib_qp_attr_mask_IB_QP_AV
        | b::ib_qp_attr_mask_IB_QP_PATH_MTU
        | b::ib_qp_attr_mask_IB_QP_DEST_QPN
        | b::ib_qp_attr_mask_IB_QP_RQ_PSN;
    let t = v.qp_type();
    if t == b::ib_qp_type_IB_QPT_RC || t == b::ib_qp_type_IB_QPT_XRC_TGT {
        mask |=
            b::ib_qp_attr_mask_IB_QP_MAX_DEST_RD_ATOMIC | b::ib_qp_attr_mask_IB_QP_MIN_RNR_TIMER;
        a.max_dest_rd_atomic = v.qp.responder_resources;
        a.min_rnr_timer = 0;
    }
    Some(mask)
}

/// IB_QPS_RTS: send PSN and, for RC, retries, RDMA read depth and the ACK
/// timeout.
fn rts_attr(v: &QpView, a: &mut b::ib_qp_attr) -> Option<u32> {
    if !connecting(v.state, false) {
        return None;
    }
    if v.lap_state != LapState::Uninit {
        // Loading an alternate path needs its address vector, which rcm
        // does not keep yet (Documentation/abi-compat.rst).
        return None;
    }
    let mut mask = b::ib_qp_attr_mask_IB_QP_STATE | b::ib_qp_attr_mask_IB_QP_SQ_PSN;
    a.sq_psn = v.qp.sq_psn;
    let t = v.qp_type();
    if t == b::ib_qp_type_IB_QPT_RC || t == b::ib_qp_type_IB_QPT_XRC_INI {
        mask |= b::ib_qp_attr_mask_IB_QP_RETRY_CNT
            | b::ib_qp_attr_mask_IB_QP_RNR_RETRY
            | b::ib_qp_attr_mask_IB_QP_MAX_QP_RD_ATOMIC;
        a.retry_cnt = v.qp.retry_count;
        a.rnr_retry = v.qp.rnr_retry_count;
        a.max_rd_atomic = v.qp.initiator_depth;
    }
    if t != b::ib_qp_type_IB_QPT_UC {
        mask |= b::ib_qp_attr_mask_IB_QP_TIMEOUT;
        a.timeout = v.qp.ack_timeout.exponent();
    }
    Some(mask)
}

/// The QP attributes for the state in `qp_attr->qp_state`
/// (`ib_cm_init_qp_attr`): `-EINVAL` for another target state or an id
/// whose connection is not at a stage that has them.
///
/// # Safety
///
/// `cm_id` must come from rcm; `qp_attr` and `qp_attr_mask` valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn ib_cm_init_qp_attr(
    cm_id: *mut b::ib_cm_id,
    qp_attr: *mut b::ib_qp_attr,
    qp_attr_mask: *mut c_int,
) -> c_int {
    if cm_id.is_null() || qp_attr.is_null() || qp_attr_mask.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: per this function's contract.
    let id = unsafe { CmIdBox::from_id(cm_id) };
    let (comm, device) = (id.comm, id.device());
    let view = with_service(|s| {
        s.read(|ep| {
            ep.get(comm).map(|c| QpView {
                state: c.state(),
                lap_state: c.lap_state(),
                qp: *c.qp_params(),
                peer: c.peer().copied(),
                passive: c.listener().is_some(),
            })
        })
    });
    let Some(view) = view else {
        return ENODEV.to_errno();
    };
    let Some(view) = view else {
        return EINVAL.to_errno();
    };
    // SAFETY: valid per this function's contract.
    let a = unsafe { &mut *qp_attr };
    let mask = match a.qp_state {
        b::ib_qp_state_IB_QPS_INIT => init_attr(&view, device, a),
        b::ib_qp_state_IB_QPS_RTR => rtr_attr(&view, device, a),
        b::ib_qp_state_IB_QPS_RTS => rts_attr(&view, a),
        _ => None,
    };
    match mask {
        Some(mask) => {
            // SAFETY: valid per this function's contract.
            unsafe { *qp_attr_mask = mask as c_int };
            0
        }
        None => EINVAL.to_errno(),
    }
}

/// Tells the CM what the QP saw (`ib_cm_notify`): `IB_EVENT_COMM_EST`
/// (traffic before the RTU: established now) or `IB_EVENT_PATH_MIG`.
/// `-EINVAL` for other events or states, `-EISCONN` if already
/// established, `-ENOMEM`.
///
/// Consumers call this from QP event handlers, which may run in atomic
/// context. As in 6.12, the state is checked and changed at once from any
/// context (under the irq-safe endpoint lock, room for the event taken
/// with `GFP_ATOMIC`); only the `IB_CM_USER_ESTABLISHED` event comes later.
///
/// # Safety
///
/// `cm_id` must come from rcm.
#[no_mangle]
pub(crate) unsafe extern "C" fn ib_cm_notify(
    cm_id: *mut b::ib_cm_id,
    event: b::ib_event_type,
) -> c_int {
    if event != b::ib_event_type_IB_EVENT_COMM_EST && event != b::ib_event_type_IB_EVENT_PATH_MIG {
        return EINVAL.to_errno();
    }
    // SAFETY: per this function's contract.
    let id = unsafe { CmIdBox::from_id(cm_id) };
    let r = with_service(|s| {
        let r = s.call_any_context(|ep, out| apply_notify(ep, id.comm, event, out));
        sync_id(s, id);
        r
    });
    match r {
        Some(Ok(())) => 0,
        Some(Err(e)) => e.errno(),
        None => ENODEV.to_errno(),
    }
}

/// What an `ib_cm_notify` event does to the core (it sends nothing).
fn apply_notify(
    ep: &mut KernelEndpoint,
    comm: CommId,
    event: b::ib_event_type,
    out: &mut Outbox,
) -> Result<(), CmError> {
    match event {
        b::ib_event_type_IB_EVENT_COMM_EST => ep.notify_established(comm, out),
        b::ib_event_type_IB_EVENT_PATH_MIG => ep.notify_path_migrated(comm),
        _ => Err(CmError::InvalidArgument),
    }
}
