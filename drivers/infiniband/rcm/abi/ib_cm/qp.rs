// SPDX-License-Identifier: GPL-2.0

//! The ib_cm exports that tie a connection to the consumer's QP:
//! `ib_cm_init_qp_attr` (the INIT/RTR/RTS attributes the exchange settled,
//! computed as the 6.12 C CM does) and `ib_cm_notify` (the QP saw the
//! connection come up, or migrated).

use super::delivery::mirror_from;
use super::id::CmIdBox;
use super::types::errno;
use crate::abi::service::with_service;
use crate::bindings as b;
use crate::proto::cm::{CommId, QpAttrs, QpTarget};
use crate::rdma::device::Device;
use crate::shell::{CmService, QpReport};
use crate::shell::{KernelEndpoint, Peer};
use kernel::ffi::c_int;
use kernel::prelude::*;

/// Writes what the core chose into the consumer's `ib_qp_attr`; returns
/// the attribute mask (each attribute with its bit, once).
fn write_attrs(attrs: &QpAttrs<Peer>, device: &Device<'_>, a: &mut b::ib_qp_attr) -> u32 {
    let mut mask = 0;
    // The attributes copied as they are: the core's field, the C field,
    // the mask bit.
    macro_rules! copy {
        ($($from:ident => $to:ident: $bit:ident),* $(,)?) => {$(
            if let Some(value) = attrs.$from {
                a.$to = value.into();
                mask |= b::$bit;
            }
        )*};
    }
    copy!(
        path_mtu => path_mtu: ib_qp_attr_mask_IB_QP_PATH_MTU,
        dest_qpn => dest_qp_num: ib_qp_attr_mask_IB_QP_DEST_QPN,
        rq_psn => rq_psn: ib_qp_attr_mask_IB_QP_RQ_PSN,
        max_dest_rd_atomic => max_dest_rd_atomic: ib_qp_attr_mask_IB_QP_MAX_DEST_RD_ATOMIC,
        min_rnr_timer => min_rnr_timer: ib_qp_attr_mask_IB_QP_MIN_RNR_TIMER,
        sq_psn => sq_psn: ib_qp_attr_mask_IB_QP_SQ_PSN,
        retry_cnt => retry_cnt: ib_qp_attr_mask_IB_QP_RETRY_CNT,
        rnr_retry => rnr_retry: ib_qp_attr_mask_IB_QP_RNR_RETRY,
        max_rd_atomic => max_rd_atomic: ib_qp_attr_mask_IB_QP_MAX_QP_RD_ATOMIC,
    );
    if attrs.state {
        mask |= b::ib_qp_attr_mask_IB_QP_STATE;
    }
    if let Some(read) = attrs.remote_read {
        let mut access = b::ib_access_flags_IB_ACCESS_REMOTE_WRITE;
        if read {
            access |= b::ib_access_flags_IB_ACCESS_REMOTE_READ
                | b::ib_access_flags_IB_ACCESS_REMOTE_ATOMIC
                | device.flush_access();
        }
        a.qp_access_flags = access as c_int;
        mask |= b::ib_qp_attr_mask_IB_QP_ACCESS_FLAGS;
    }
    if let Some(primary) = attrs.port {
        a.pkey_index = primary.map_or(0, |p| p.path.pkey_index);
        if let Some(p) = primary {
            a.port_num = p.path.port;
        }
        mask |= b::ib_qp_attr_mask_IB_QP_PKEY_INDEX | b::ib_qp_attr_mask_IB_QP_PORT;
    }
    if let Some(p) = attrs.av {
        p.path.fill_ah_attr(device, &mut a.ah_attr);
        mask |= b::ib_qp_attr_mask_IB_QP_AV;
    }
    if let Some(alt) = attrs.alt_path {
        let path = alt.path.map(|p| p.path).unwrap_or_default();
        if alt.path.is_some() {
            a.alt_port_num = path.port;
            path.fill_ah_attr(device, &mut a.alt_ah_attr);
        } else {
            a.alt_ah_attr = Default::default();
        }
        a.alt_pkey_index = path.pkey_index;
        a.alt_timeout = alt.ack_timeout.exponent();
        mask |= b::ib_qp_attr_mask_IB_QP_ALT_PATH;
    }
    if let Some(t) = attrs.timeout {
        a.timeout = t.exponent();
        mask |= b::ib_qp_attr_mask_IB_QP_TIMEOUT;
    }
    if attrs.path_mig_rearm {
        a.path_mig_state = b::ib_mig_state_IB_MIG_REARM;
        mask |= b::ib_qp_attr_mask_IB_QP_PATH_MIG_STATE;
    }
    mask
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
    // SAFETY: valid per this function's contract.
    let a = unsafe { &mut *qp_attr };
    let Some(target) = qp_target(a.qp_state) else {
        return EINVAL.to_errno();
    };
    // SAFETY: per this function's contract.
    let id = unsafe { CmIdBox::from_id(cm_id) };
    // SAFETY: the id's device is registered while the id exists.
    let device = unsafe { Device::from_raw(id.device()) };
    let mask = with_service(|s| connection_qp_attrs(&s, id.comm, target, &device, a));
    match mask {
        None => ENODEV.to_errno(),
        Some(Err(e)) => e,
        Some(Ok(mask)) => {
            // SAFETY: valid per this function's contract.
            unsafe { *qp_attr_mask = mask as c_int };
            0
        }
    }
}

/// The transition a consumer asks attributes for, if the CM has them.
pub(crate) fn qp_target(state: b::ib_qp_state) -> Option<QpTarget> {
    match state {
        b::ib_qp_state_IB_QPS_INIT => Some(QpTarget::Init),
        b::ib_qp_state_IB_QPS_RTR => Some(QpTarget::Rtr),
        b::ib_qp_state_IB_QPS_RTS => Some(QpTarget::Rts),
        _ => None,
    }
}

/// The attributes of `comm`'s connection for `target`, written into `a`;
/// the mask, or the errno of `ib_cm_init_qp_attr` (rdma_cm uses it for
/// its connections too).
pub(crate) fn connection_qp_attrs(
    s: &CmService,
    comm: CommId,
    target: QpTarget,
    device: &Device<'_>,
    a: &mut b::ib_qp_attr,
) -> Result<u32, c_int> {
    let attrs = s.read(|ep| {
        ep.get(comm)
            .map(|c| c.qp_attrs(target, |p: &Peer| p.path.dlid != 0))
    });
    match attrs {
        None => Err(EINVAL.to_errno()),
        Some(Err(e)) => Err(errno(e)),
        Some(Ok(attrs)) => Ok(write_attrs(&attrs, device, a)),
    }
}

/// Tells the CM what the QP saw (`ib_cm_notify`): `IB_EVENT_COMM_EST`
/// (traffic before the RTU: established now) or `IB_EVENT_PATH_MIG`.
/// `-EINVAL` for other events or states, `-EISCONN` if already
/// established, `-ENOMEM`.
///
/// Consumers call this from QP event handlers, which may run in atomic
/// context. As in 6.12, a task (interrupts off or not) has the state
/// checked and changed at once, `GFP_ATOMIC` room taken for the event;
/// only the `IB_CM_USER_ESTABLISHED` event comes later. Interrupt context
/// gets the same unless the CM is busy right then (see
/// `CmService::qp_reported`).
///
/// # Safety
///
/// `cm_id` must come from rcm.
#[no_mangle]
pub(crate) unsafe extern "C" fn ib_cm_notify(
    cm_id: *mut b::ib_cm_id,
    event: b::ib_event_type,
) -> c_int {
    // SAFETY: per this function's contract.
    let id = unsafe { CmIdBox::from_id(cm_id) };
    with_service(|s| notify_connection(&s, id.comm, event, |ep| mirror_from(ep, id)))
        .unwrap_or(ENODEV.to_errno())
}

/// What the QP saw, for `comm`'s connection, from any context (rdma_cm's
/// `rdma_notify` too), `mirror` run on the endpoint after it: 0 or the
/// errno of `ib_cm_notify`.
pub(crate) fn notify_connection(
    s: &CmService,
    comm: CommId,
    event: b::ib_event_type,
    mirror: impl FnOnce(&KernelEndpoint),
) -> c_int {
    let report = match event {
        b::ib_event_type_IB_EVENT_COMM_EST => QpReport::Established,
        b::ib_event_type_IB_EVENT_PATH_MIG => QpReport::PathMigrated,
        _ => return EINVAL.to_errno(),
    };
    match s.qp_reported(comm, report, mirror) {
        Ok(()) => 0,
        Err(e) => errno(e),
    }
}
