// SPDX-License-Identifier: GPL-2.0

//! What every ib_cm export does at the C boundary: C buffers as slices,
//! `ERR_PTR`, a call on the id's connection, the peer a consumer's path
//! record leads to.

use super::delivery::sync_id;
use super::id::CmIdBox;
use super::types::errno;
use crate::abi::service::with_service;
use crate::bindings;
use crate::proto::cm::{CmError, CommId};
use crate::rdma::gid::GidAttr;
use crate::rdma::mad_path::MadPath;
use crate::shell::{KernelEndpoint, Outbox, Peer};
use kernel::ffi::{c_int, c_void};
use kernel::prelude::*;

/// `ERR_PTR(-errno)` for pointer-returning exports.
pub(super) fn err_ptr<T>(errno: i32) -> *mut T {
    errno as isize as *mut T
}

/// A slice from a C pointer and length; an empty slice for NULL.
///
/// # Safety
///
/// A non-NULL `ptr` must be valid for `len` bytes.
pub(super) unsafe fn bytes<'a>(ptr: *const c_void, len: u8) -> &'a [u8] {
    if ptr.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: per the function's contract.
        unsafe { core::slice::from_raw_parts(ptr.cast::<u8>(), usize::from(len)) }
    }
}

/// Runs `op` on the core for the id `b`, sends what it produced,
/// refreshes the fields the consumer reads, and returns 0 or the C CM's
/// errno.
pub(super) fn id_call(
    b: &CmIdBox,
    op: impl FnOnce(&mut KernelEndpoint, CommId, &mut Outbox) -> Result<(), CmError>,
) -> c_int {
    let r = with_service(|s| {
        let r = s.call(|ep, out| op(ep, b.comm, out));
        sync_id(&s, b);
        r
    });
    match r {
        Some(Ok(())) => 0,
        Some(Err(e)) => errno(e),
        None => ENODEV.to_errno(),
    }
}

/// The peer a path record leads to, on the id's device, and the GID entry
/// of its source (`sgid_attr`: one the consumer holds, or none).
pub(super) fn peer_of(
    b: &CmIdBox,
    rec: &bindings::sa_path_rec,
    sgid_attr: Option<&bindings::ib_gid_attr>,
) -> core::result::Result<(Peer, GidAttr), c_int> {
    let device = b.dev();
    let (path, gid) =
        MadPath::from_path_record(&device, rec, sgid_attr).map_err(|e| e.to_errno())?;
    let dev = with_service(|s| s.device_id(device.identity()))
        .flatten()
        .ok_or(ENODEV.to_errno())?;
    Ok((Peer { device: dev, path }, gid))
}

/// Sends a request with `op` and, if the id took it, keeps `gid` as the
/// GID entry of the id's path.
pub(super) fn send_holding(
    b: &CmIdBox,
    gid: GidAttr,
    op: impl FnOnce(&mut KernelEndpoint, CommId, &mut Outbox) -> Result<(), CmError>,
) -> c_int {
    let ret = id_call(b, op);
    if ret == 0 {
        b.hold_gid(Some(gid));
    }
    ret
}
