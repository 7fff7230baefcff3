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
use crate::proto::cm::{fill, State, Transport};
use crate::proto::timer::IbaTime;
use crate::proto::wire::rep::Rep;
use crate::proto::wire::req::Req;
use crate::proto::wire::sidr::SidrReq;
use crate::rdma::timer::now_ms;
use kernel::ffi::{c_int, c_void};
use kernel::prelude::*;

/// An `ib_cm_req_param` with its pointers as references.
struct ReqArgs<'a> {
    p: &'a bindings::ib_cm_req_param,
    primary: Option<&'a bindings::sa_path_rec>,
    inbound: Option<&'a bindings::sa_path_rec>,
    alternate: Option<&'a bindings::sa_path_rec>,
    sgid_attr: Option<&'a bindings::ib_gid_attr>,
    private_data: &'a [u8],
}

/// Sends a REQ (`ib_send_cm_req`): `-EINVAL` for a missing path, a QP type
/// other than RC/UC/XRC_INI, too much private data, an alternate path
/// with another P_Key or MTU, a path not on the id's device, or an id
/// that is not IDLE.
///
/// # Safety
///
/// `cm_id` must come from rcm; `param` NULL or valid, with its paths, GID
/// entry and private data NULL or valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn ib_send_cm_req(
    cm_id: *mut bindings::ib_cm_id,
    param: *mut bindings::ib_cm_req_param,
) -> c_int {
    // SAFETY: per this function's contract.
    let (b, args) = unsafe {
        let args = param.as_ref().map(|p| ReqArgs {
            p,
            primary: p.primary_path.as_ref(),
            inbound: p.primary_path_inbound.as_ref(),
            alternate: p.alternate_path.as_ref(),
            sgid_attr: p.ppath_sgid_attr.as_ref(),
            private_data: bytes(p.private_data, p.private_data_len),
        });
        (CmIdBox::from_id(cm_id), args)
    };
    args.map_or(EINVAL.to_errno(), |args| send_req(b, &args))
}

fn send_req(b: &CmIdBox, args: &ReqArgs<'_>) -> c_int {
    let p = args.p;
    let Some(pri) = args.primary else {
        return EINVAL.to_errno();
    };
    let Some(transport) = qp_type_of(p.qp_type).and_then(Transport::of_requester) else {
        return EINVAL.to_errno();
    };
    let (transport_type, extended) = transport.req_fields();
    let Some(private_data) = fill(args.private_data) else {
        return EINVAL.to_errno();
    };
    let alt = args.alternate;
    if alt.is_some_and(|a| a.pkey != pri.pkey || a.mtu != pri.mtu) {
        return EINVAL.to_errno();
    }
    // 6.12 checks the id's state before it resolves the path.
    let comm = b.comm;
    let state = with_service(|s| s.read(|ep| ep.get(comm).map(|c| c.state()))).flatten();
    if state != Some(State::Idle) {
        return EINVAL.to_errno();
    }
    let (peer, gid) = match peer_of(b, pri, args.sgid_attr) {
        Ok(found) => found,
        Err(e) => return e,
    };
    // The alternate path must lead somewhere from this device too.
    let alternate = match alt {
        Some(a) => match peer_of(b, a, None) {
            Ok((peer, _)) => Some((peer, IbaTime::new(a.packet_life_time))),
            Err(e) => return e,
        },
        None => None,
    };
    let ack_delay = b.ack_delay();
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
    req.primary_path = req_path(pri, args.inbound, ack_delay);
    if let Some(a) = alt {
        req.alternate_path = req_path(a, None, ack_delay);
    }
    req.private_data = private_data;
    let plt = IbaTime::new(pri.packet_life_time);
    let attr_mod = p.ece.attr_mod;
    send_holding(b, gid, |ep, comm, out| {
        ep.send_req(now_ms(), comm, &req, attr_mod, peer, plt, out)?;
        ep.set_alternate(comm, alternate.map(|a| a.0), alternate.map(|a| a.1))
    })
}

/// Accepts a REQ (`ib_send_cm_rep`): `-EINVAL` for too much private data
/// or an id with no REQ to answer.
///
/// # Safety
///
/// `cm_id` must come from rcm; `param` NULL or valid, with valid private
/// data.
#[no_mangle]
pub(crate) unsafe extern "C" fn ib_send_cm_rep(
    cm_id: *mut bindings::ib_cm_id,
    param: *mut bindings::ib_cm_rep_param,
) -> c_int {
    // SAFETY: per this function's contract.
    let (b, args) = unsafe {
        let args = param
            .as_ref()
            .map(|p| (p, bytes(p.private_data, p.private_data_len)));
        (CmIdBox::from_id(cm_id), args)
    };
    args.map_or(EINVAL.to_errno(), |(p, pd)| send_rep(b, p, pd))
}

fn send_rep(b: &CmIdBox, p: &bindings::ib_cm_rep_param, pd: &[u8]) -> c_int {
    let Some(private_data) = fill(pd) else {
        return EINVAL.to_errno();
    };
    let mut rep = Rep::zeroed();
    rep.starting_psn = p.starting_psn & 0x00FF_FFFF;
    rep.responder_resources = p.responder_resources;
    rep.target_ack_delay = b.ack_delay();
    rep.failover_accepted = p.failover_accepted & 0x3;
    rep.rnr_retry_count = p.rnr_retry_count & 0x7;
    rep.set_vendor_id(p.ece.vendor_id);
    rep.private_data = private_data;
    let attr_mod = p.ece.attr_mod;
    let qp_num = p.qp_num & 0x00FF_FFFF;
    let (initiator_depth, flow_control, srq) = (p.initiator_depth, p.flow_control != 0, p.srq != 0);
    id_call(b, |ep, comm, out| {
        let xrc_target = ep
            .get(comm)
            .is_some_and(|c| c.qp_params().transport == Transport::Xrc);
        if xrc_target {
            // An XRC target has no QP of its own to name: the REP carries
            // the number as its EE context, with SRQ set.
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
            let (b, $pd) = unsafe { (CmIdBox::from_id(cm_id), bytes(private_data, private_data_len)) };
            id_call(b, |$ep, $comm, $out| $call)
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
/// `cm_id` must come from rcm; `param` NULL or valid, with its path, GID
/// entry and private data NULL or valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn ib_send_cm_sidr_req(
    cm_id: *mut bindings::ib_cm_id,
    param: *mut bindings::ib_cm_sidr_req_param,
) -> c_int {
    // SAFETY: per this function's contract.
    let (b, args) = unsafe {
        let args = param.as_ref().map(|p| {
            (
                p,
                p.path.as_ref(),
                p.sgid_attr.as_ref(),
                bytes(p.private_data, p.private_data_len),
            )
        });
        (CmIdBox::from_id(cm_id), args)
    };
    match args {
        Some((p, Some(path), sgid_attr, pd)) => send_sidr_req(b, p, path, sgid_attr, pd),
        _ => EINVAL.to_errno(),
    }
}

fn send_sidr_req(
    b: &CmIdBox,
    p: &bindings::ib_cm_sidr_req_param,
    path: &bindings::sa_path_rec,
    sgid_attr: Option<&bindings::ib_gid_attr>,
    pd: &[u8],
) -> c_int {
    let Some(private_data) = fill(pd) else {
        return EINVAL.to_errno();
    };
    let (peer, gid) = match peer_of(b, path, sgid_attr) {
        Ok(found) => found,
        Err(e) => return e,
    };
    let mut req = SidrReq::zeroed();
    req.partition_key = u16::from_be(path.pkey);
    req.service_id = u64::from_be(p.service_id);
    req.private_data = private_data;
    let timeout_ms = u32::try_from(p.timeout_ms).unwrap_or(u32::MAX);
    let retries = p.max_cm_retries;
    send_holding(b, gid, |ep, comm, out| {
        ep.send_sidr_req(now_ms(), comm, &req, peer, timeout_ms, retries, out)
    })
}
