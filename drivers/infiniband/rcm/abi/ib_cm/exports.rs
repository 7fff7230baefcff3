// SPDX-License-Identifier: GPL-2.0

//! The ib_cm C API (`include/rdma/ib_cm.h`, Linux 6.12) as far as rcm
//! provides it so far: ids, listening, rejecting, reject messages. Each
//! function validates its arguments and returns the errno the C CM returns
//! for the same misuse. `rcm_exports.c` exports the symbols.

use super::delivery::sync_id;
use super::ffi::{bytes, err_ptr, id_call};
use super::id::CmIdBox;
use super::types::errno;
use super::IbCm;
use crate::abi::service::{with_part, with_service};
use crate::bindings;
use crate::proto::cm::{fill, CmError, CommId, ListenSpec};
use crate::proto::reason::{RejectReason, SidrStatus};
use crate::proto::wire::sidr::SidrRep;
use crate::rdma::device::Device;
use crate::rdma::timer::now_ms;
use kernel::ffi::{c_char, c_int, c_void};
use kernel::prelude::*;
use kernel::sync::Arc;

/// A new id on `device` with the consumer's handler and context.
fn create_id(
    device: &Device<'_>,
    handler: bindings::ib_cm_handler,
    context: *mut c_void,
) -> Result<Arc<CmIdBox>> {
    with_service(|s| {
        let dev = s.device_id(device.identity()).ok_or(ENODEV)?;
        let comm = s
            .call(|ep, _| ep.create_id(dev, device.node_guid()))
            .map_err(|e| Error::from_errno(errno(e)))?;
        let registered = CmIdBox::new(comm, device.as_raw(), handler, context).and_then(|b| {
            let ib = s.part::<IbCm>().ok_or(ENODEV)?;
            ib.register_id(b.clone())?;
            Ok(b)
        });
        if registered.is_err() {
            let _ = s.destroy(comm, false);
        }
        registered
    })
    .unwrap_or(Err(ENODEV))
}

/// Creates an id on `device` (`ib_create_cm_id`).
///
/// # Safety
///
/// `device` must be a registered device for as long as the id exists.
#[no_mangle]
pub(crate) unsafe extern "C" fn ib_create_cm_id(
    device: *mut bindings::ib_device,
    cm_handler: bindings::ib_cm_handler,
    context: *mut c_void,
) -> *mut bindings::ib_cm_id {
    // SAFETY: per this function's contract.
    let device = unsafe { Device::from_raw(device) };
    match create_id(&device, cm_handler, context) {
        Ok(b) => b.as_raw(),
        Err(e) => err_ptr(e.to_errno()),
    }
}

/// Destroys the id `comm`, ending its connection as the protocol
/// requires; waits for a running callback of the id.
fn destroy_id(comm: CommId) {
    with_part(|s, ib: &IbCm| ib.destroy_id(s, comm));
}

/// Destroys an id (`ib_destroy_cm_id`).
///
/// # Safety
///
/// `cm_id` must come from rcm and not be used afterwards.
#[no_mangle]
pub(crate) unsafe extern "C" fn ib_destroy_cm_id(cm_id: *mut bindings::ib_cm_id) {
    // SAFETY: per this function's contract.
    if let Some(b) = unsafe { CmIdBox::from_id_or_null(cm_id) } {
        destroy_id(b.comm);
    }
}

/// The tag a handler shares listeners under.
fn share_tag(handler: bindings::ib_cm_handler) -> Option<u64> {
    handler.map(|f| f as usize as u64)
}

/// Listens with `b` (`join` false: `ib_cm_listen`) or joins a listener
/// with the same handler and no context (`join`: `ib_cm_insert_listen`);
/// the id that listens (`None` without a service).
fn listen_on(
    b: &CmIdBox,
    service_id: u64,
    join: bool,
) -> Option<core::result::Result<Arc<CmIdBox>, CmError>> {
    with_service(|s| {
        let device = s
            .device_id(b.dev().identity())
            .ok_or(CmError::InvalidArgument)?;
        let spec = ListenSpec {
            device: Some(device),
            service_id,
            service_mask: 0,
            share_tag: share_tag(b.handler_and_context().0),
            join,
        };
        let holder = s.call(|ep, out| ep.listen(b.comm, spec, out))?;
        let holder_box = s
            .part::<IbCm>()
            .and_then(|ib| ib.id_box(holder))
            .ok_or(CmError::NoSuchId)?;
        if holder != b.comm && !holder_box.handler_and_context().1.is_null() {
            // 6.12 shares only a listener without a context: give the
            // share back.
            let _ = s.destroy(holder, true);
            return Err(CmError::Busy);
        }
        sync_id(&s, &holder_box);
        Ok(holder_box)
    })
}

/// Listens on a service id (`ib_cm_listen`): 0, `-EINVAL` (not idle, bad
/// id range), `-EBUSY` (taken).
///
/// # Safety
///
/// `cm_id` must come from rcm.
#[no_mangle]
pub(crate) unsafe extern "C" fn ib_cm_listen(
    cm_id: *mut bindings::ib_cm_id,
    service_id: u64,
) -> c_int {
    // SAFETY: per this function's contract.
    let b = unsafe { CmIdBox::from_id(cm_id) };
    match listen_on(b, u64::from_be(service_id), false) {
        Some(Ok(_)) => 0,
        Some(Err(e)) => errno(e),
        None => ENODEV.to_errno(),
    }
}

/// A listening id for `service_id` on `device`, shared with other callers
/// passing the same handler (`ib_cm_insert_listen`).
///
/// # Safety
///
/// `device` must be registered.
#[no_mangle]
pub(crate) unsafe extern "C" fn ib_cm_insert_listen(
    device: *mut bindings::ib_device,
    cm_handler: bindings::ib_cm_handler,
    service_id: u64,
) -> *mut bindings::ib_cm_id {
    // SAFETY: per this function's contract.
    let device = unsafe { Device::from_raw(device) };
    let b = match create_id(&device, cm_handler, core::ptr::null_mut()) {
        Ok(b) => b,
        Err(e) => return err_ptr(e.to_errno()),
    };
    let r = listen_on(&b, u64::from_be(service_id), true);
    if !matches!(&r, Some(Ok(holder)) if holder.comm == b.comm) {
        // Shared with an existing listener of the same handler, or
        // failed: the new id goes.
        destroy_id(b.comm);
    }
    match r {
        Some(Ok(holder)) => holder.as_raw(),
        Some(Err(CmError::Busy)) => err_ptr(EINVAL.to_errno()),
        Some(Err(e)) => err_ptr(errno(e)),
        None => err_ptr(ENODEV.to_errno()),
    }
}

/// Rejects a connection (`ib_send_cm_rej`).
///
/// # Safety
///
/// `cm_id` must come from rcm; `ari` and `private_data` must be valid for
/// their lengths (or NULL).
#[no_mangle]
pub(crate) unsafe extern "C" fn ib_send_cm_rej(
    cm_id: *mut bindings::ib_cm_id,
    reason: bindings::ib_cm_rej_reason,
    ari: *mut c_void,
    ari_length: u8,
    private_data: *const c_void,
    private_data_len: u8,
) -> c_int {
    // SAFETY: per this function's contract.
    let (b, ari, pd) = unsafe {
        (
            CmIdBox::from_id(cm_id),
            bytes(ari, ari_length),
            bytes(private_data, private_data_len),
        )
    };
    let reason = RejectReason::from_wire(reason as u16);
    id_call(b, |ep, comm, out| {
        ep.send_rej(now_ms(), comm, reason, ari, pd, out)
    })
}

/// The text of a reject reason (`ibcm_reject_msg`).
#[no_mangle]
pub(crate) extern "C" fn ibcm_reject_msg(reason: c_int) -> *const c_char {
    let text = u16::try_from(reason)
        .map(RejectReason::from_wire)
        .unwrap_or(RejectReason::Unknown(0))
        .message_nul();
    text.as_ptr().cast()
}

/// Acknowledges a REQ, REP or LAP that will take long to answer
/// (`ib_send_cm_mra`); `service_timeout` may carry
/// `IB_CM_MRA_FLAG_DELAY` (send only if the peer repeats its message).
///
/// # Safety
///
/// `cm_id` must come from rcm; `private_data` must be valid for its
/// length (or NULL).
#[no_mangle]
pub(crate) unsafe extern "C" fn ib_send_cm_mra(
    cm_id: *mut bindings::ib_cm_id,
    service_timeout: u8,
    private_data: *const c_void,
    private_data_len: u8,
) -> c_int {
    // SAFETY: per this function's contract.
    let (b, pd) = unsafe {
        (
            CmIdBox::from_id(cm_id),
            bytes(private_data, private_data_len),
        )
    };
    id_call(b, |ep, comm, out| {
        ep.send_mra(comm, service_timeout, pd, out)
    })
}

/// Answers a SIDR_REQ (`ib_send_cm_sidr_rep`): `-EINVAL` if the id has no
/// SIDR_REQ to answer or the info / private data are too long.
///
/// # Safety
///
/// `cm_id` must come from rcm; `param` must be valid, with its `info` and
/// `private_data` valid for their lengths (or NULL).
#[no_mangle]
pub(crate) unsafe extern "C" fn ib_send_cm_sidr_rep(
    cm_id: *mut bindings::ib_cm_id,
    param: *mut bindings::ib_cm_sidr_rep_param,
) -> c_int {
    // SAFETY: per this function's contract.
    let (b, args) = unsafe {
        let args = param.as_ref().map(|p| {
            (
                p,
                bytes(p.info, p.info_length),
                bytes(p.private_data, p.private_data_len),
            )
        });
        (CmIdBox::from_id(cm_id), args)
    };
    let Some((p, info, pd)) = args else {
        return EINVAL.to_errno();
    };
    let (Some(info), Some(private_data)) = (fill(info), fill(pd)) else {
        return EINVAL.to_errno();
    };
    let mut rep = SidrRep::zeroed();
    rep.additional_info = info;
    rep.additional_info_length = p.info_length;
    rep.private_data = private_data;
    rep.status = SidrStatus::from_wire(p.status as u8);
    rep.qpn = p.qp_num & 0x00FF_FFFF;
    rep.qkey = p.qkey;
    id_call(b, |ep, comm, out| ep.send_sidr_rep(comm, &rep, out))
}
