// SPDX-License-Identifier: GPL-2.0

//! The ib_cm exports that set up and tear down a connection (REQ, REP,
//! RTU, DREQ, DREP) and resolve a UD service (SIDR_REQ), with the 6.12
//! argument checks and errnos.

use super::ffi::{bytes, id_call, peer_of, send_holding};
use super::id::CmIdBox;
use super::path::req_path;
use super::types::qp_type_of;
use crate::abi::service::with_service;
use crate::bindings;
use crate::proto::cm::{fill, CmError, CommId, State, Transport};
use crate::proto::timer::IbaTime;
use crate::proto::wire::rep::Rep;
use crate::proto::wire::req::Req;
use crate::proto::wire::sidr::SidrReq;
use crate::rdma::timer::now_ms;
use crate::shell::{KernelEndpoint, Outbox};
use kernel::ffi::{c_int, c_void};
use kernel::prelude::*;

/// Runs `op` with the consumer's private data (the core rejects more than
/// its message holds with `-EINVAL`): the shape of the exports that send
/// one message with nothing but private data.
///
/// # Safety
///
/// `cm_id` must come from rcm; `private_data` valid for its length.
unsafe fn with_private_data(
    cm_id: *mut bindings::ib_cm_id,
    private_data: *const c_void,
    private_data_len: u8,
    op: impl FnOnce(&mut KernelEndpoint, CommId, &[u8], &mut Outbox) -> Result<(), CmError>,
) -> c_int {
    // SAFETY: per this function's contract.
    let pd = unsafe { bytes(private_data, private_data_len) };
    // SAFETY: per this function's contract.
    unsafe { id_call(cm_id, |ep, comm, out| op(ep, comm, pd, out)) }
}

/// Sends a REQ (`ib_send_cm_req`): `-EINVAL` for a missing path, a QP type
/// other than RC/UC/XRC_INI, too much private data, an alternate path
/// with another P_Key or MTU, a path not on the id's device, or an id
/// that is not IDLE.
///
/// # Safety
///
/// `cm_id` must come from rcm; `param` must be valid with valid paths and
/// private data.
#[no_mangle]
pub(crate) unsafe extern "C" fn ib_send_cm_req(
    cm_id: *mut bindings::ib_cm_id,
    param: *mut bindings::ib_cm_req_param,
) -> c_int {
    if param.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: per this function's contract.
    let p = unsafe { &*param };
    if p.primary_path.is_null() {
        return EINVAL.to_errno();
    }
    let Some(transport) = qp_type_of(p.qp_type).and_then(Transport::of_requester) else {
        return EINVAL.to_errno();
    };
    let (transport_type, extended) = transport.req_fields();
    // SAFETY: per this function's contract.
    let Some(private_data) = fill(unsafe { bytes(p.private_data, p.private_data_len) }) else {
        return EINVAL.to_errno();
    };
    // SAFETY: the paths are valid per this function's contract.
    let (pri, alt) = unsafe { (&*p.primary_path, p.alternate_path.as_ref()) };
    if alt.is_some_and(|a| a.pkey != pri.pkey || a.mtu != pri.mtu) {
        return EINVAL.to_errno();
    }
    // 6.12 checks the id's state before it resolves the path.
    // SAFETY: per this function's contract.
    let comm = unsafe { CmIdBox::from_id(cm_id) }.comm;
    let state = with_service(|s| s.read(|ep| ep.get(comm).map(|c| c.state()))).flatten();
    if state != Some(State::Idle) {
        return EINVAL.to_errno();
    }
    // SAFETY: per this function's contract.
    let (peer, gid) = match unsafe { peer_of(cm_id, p.primary_path, p.ppath_sgid_attr) } {
        Ok(found) => found,
        Err(e) => return e,
    };
    // The alternate path must lead somewhere from this device too.
    let alternate = match alt {
        // SAFETY: per this function's contract.
        Some(a) => match unsafe { peer_of(cm_id, a, core::ptr::null()) } {
            Ok((peer, _)) => Some((peer, IbaTime::new(a.packet_life_time))),
            Err(e) => return e,
        },
        None => None,
    };
    // SAFETY: per this function's contract.
    let ack_delay = unsafe { CmIdBox::from_id(cm_id) }.ack_delay();
    let mut req = Req::zeroed();
    req.vendor_id = p.ece.vendor_id & 0x00FF_FFFF;
    req.service_id = u64::from_be(p.service_id);
    req.local_qpn = p.qp_num & 0x00FF_FFFF;
    req.initiator_depth = p.initiator_depth;
    req.remote_cm_response_timeout = IbaTime::new(p.remote_cm_response_timeout);
    req.transport_service_type = transport_type;
    req.extended_transport_type = extended;
    req.end_to_end_flow_control = p.flow_control != 0;
    req.starting_psn = p.starting_psn & 0x00FF_FFFF;
    req.local_cm_response_timeout = IbaTime::new(p.local_cm_response_timeout);
    req.partition_key = u16::from_be(pri.pkey);
    req.path_mtu = pri.mtu & 0xF;
    req.max_cm_retries = p.max_cm_retries & 0xF;
    // The core leaves these off an XRC REQ.
    req.responder_resources = p.responder_resources;
    req.retry_count = p.retry_count & 0x7;
    req.rnr_retry_count = p.rnr_retry_count & 0x7;
    req.srq = p.srq != 0;
    // SAFETY: the paths are valid per this function's contract.
    unsafe {
        req.primary_path = req_path(p.primary_path, p.primary_path_inbound, ack_delay);
        if !p.alternate_path.is_null() {
            req.alternate_path = req_path(p.alternate_path, core::ptr::null(), ack_delay);
        }
    }
    req.private_data = private_data;
    let plt = IbaTime::new(pri.packet_life_time);
    let attr_mod = p.ece.attr_mod;
    // SAFETY: per this function's contract.
    unsafe {
        send_holding(cm_id, gid, |ep, comm, out| {
            ep.send_req(now_ms(), comm, &req, attr_mod, peer, plt, out)?;
            ep.set_alternate(comm, alternate.map(|a| a.0), alternate.map(|a| a.1))
        })
    }
}

/// Accepts a REQ (`ib_send_cm_rep`): `-EINVAL` for too much private data
/// or an id with no REQ to answer.
///
/// # Safety
///
/// `cm_id` must come from rcm; `param` must be valid with valid private
/// data.
#[no_mangle]
pub(crate) unsafe extern "C" fn ib_send_cm_rep(
    cm_id: *mut bindings::ib_cm_id,
    param: *mut bindings::ib_cm_rep_param,
) -> c_int {
    if param.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: per this function's contract.
    let p = unsafe { &*param };
    // SAFETY: per this function's contract.
    let Some(private_data) = fill(unsafe { bytes(p.private_data, p.private_data_len) }) else {
        return EINVAL.to_errno();
    };
    let mut rep = Rep::zeroed();
    rep.starting_psn = p.starting_psn & 0x00FF_FFFF;
    rep.responder_resources = p.responder_resources;
    // SAFETY: per this function's contract.
    rep.target_ack_delay = unsafe { CmIdBox::from_id(cm_id) }.ack_delay();
    rep.failover_accepted = p.failover_accepted & 0x3;
    rep.rnr_retry_count = p.rnr_retry_count & 0x7;
    rep.set_vendor_id(p.ece.vendor_id);
    rep.private_data = private_data;
    let attr_mod = p.ece.attr_mod;
    let qp_num = p.qp_num & 0x00FF_FFFF;
    let (initiator_depth, flow_control, srq) = (p.initiator_depth, p.flow_control != 0, p.srq != 0);
    // SAFETY: per this function's contract.
    unsafe {
        id_call(cm_id, |ep, comm, out| {
            let xrc_target = ep
                .get(comm)
                .is_some_and(|c| c.qp_params().transport == Transport::Xrc);
            if xrc_target {
                // An XRC target has no QP of its own to name: the REP
                // carries the number as its EE context, with SRQ set.
                rep.local_eecn = qp_num;
                rep.srq = true;
            } else {
                rep.local_qpn = qp_num;
                rep.initiator_depth = initiator_depth;
                rep.end_to_end_flow_control = flow_control;
                rep.srq = srq;
            }
            ep.send_rep(now_ms(), comm, &rep, attr_mod, out)
        })
    }
}

/// Defines an export that sends one message carrying only private data
/// of at most `$max` bytes (`-EINVAL` if longer).
macro_rules! private_data_export {
    ($(#[$doc:meta])* $name:ident, |$ep:ident, $comm:ident, $pd:ident, $out:ident| $call:expr) => {
        $(#[$doc])*
        ///
        /// # Safety
        ///
        /// `cm_id` must come from rcm; `private_data` valid for its length.
        #[no_mangle]
        pub(crate) unsafe extern "C" fn $name(
            cm_id: *mut bindings::ib_cm_id,
            private_data: *const c_void,
            private_data_len: u8,
        ) -> c_int {
            // SAFETY: per this function's contract.
            unsafe {
                with_private_data(cm_id, private_data, private_data_len, |$ep, $comm, $pd, $out| {
                    $call
                })
            }
        }
    };
}

private_data_export!(
    /// Confirms a REP (`ib_send_cm_rtu`): `-EINVAL` without a REP.
    ib_send_cm_rtu, |ep, comm, pd, out| ep.send_rtu(comm, pd, out)
);
private_data_export!(
    /// Starts a disconnect (`ib_send_cm_dreq`): `-EINVAL` unless established.
    ib_send_cm_dreq, |ep, comm, pd, out| ep.send_dreq(now_ms(), comm, pd, out)
);
private_data_export!(
    /// Answers a DREQ (`ib_send_cm_drep`): `-EINVAL` without a DREQ.
    ib_send_cm_drep, |ep, comm, pd, out| ep.send_drep(now_ms(), comm, pd, out)
);

/// Asks which UD QP serves a service id (`ib_send_cm_sidr_req`):
/// `-EINVAL` for a missing path, too much private data, a path not on the
/// id's device, or an id that is not IDLE.
///
/// # Safety
///
/// `cm_id` must come from rcm; `param` valid with a valid path and
/// private data.
#[no_mangle]
pub(crate) unsafe extern "C" fn ib_send_cm_sidr_req(
    cm_id: *mut bindings::ib_cm_id,
    param: *mut bindings::ib_cm_sidr_req_param,
) -> c_int {
    if param.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: per this function's contract.
    let p = unsafe { &*param };
    if p.path.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: per this function's contract.
    let Some(private_data) = fill(unsafe { bytes(p.private_data, p.private_data_len) }) else {
        return EINVAL.to_errno();
    };
    // SAFETY: per this function's contract.
    let (peer, gid) = match unsafe { peer_of(cm_id, p.path, p.sgid_attr) } {
        Ok(found) => found,
        Err(e) => return e,
    };
    let mut req = SidrReq::zeroed();
    // SAFETY: valid per this function's contract.
    req.partition_key = u16::from_be(unsafe { (*p.path).pkey });
    req.service_id = u64::from_be(p.service_id);
    req.private_data = private_data;
    let timeout_ms = u32::try_from(p.timeout_ms).unwrap_or(u32::MAX);
    let retries = p.max_cm_retries;
    // SAFETY: per this function's contract.
    unsafe {
        send_holding(cm_id, gid, |ep, comm, out| {
            ep.send_sidr_req(now_ms(), comm, &req, peer, timeout_ms, retries, out)
        })
    }
}
