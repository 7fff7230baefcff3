// SPDX-License-Identifier: GPL-2.0

//! LAP and APR sending (`include/rdma/rcm_cm_lap.h`): the alternate path
//! exchange of the IBA CM, which 6.12's ib_cm receives but cannot send.
//! Exported under rcm's own names so they never collide with ib_cm.

use super::ffi::{bytes, id_call, peer_of};
use super::id::CmIdBox;
use super::path::req_path;
use crate::bindings;
use crate::proto::cm::fill;
use crate::proto::reason::AprStatus;
use crate::proto::timer::IbaTime;
use crate::proto::wire::lap::Lap;
use crate::rdma::timer::now_ms;
use kernel::ffi::{c_int, c_void};
use kernel::prelude::*;

/// Proposes an alternate path (`rcm_send_cm_lap`).
///
/// # Safety
///
/// `cm_id` must come from rcm; `alternate_path` NULL or valid;
/// `private_data` valid for its length.
#[no_mangle]
pub(crate) unsafe extern "C" fn rcm_send_cm_lap(
    cm_id: *mut bindings::ib_cm_id,
    alternate_path: *const bindings::sa_path_rec,
    private_data: *const c_void,
    private_data_len: u8,
) -> c_int {
    // SAFETY: per this function's contract.
    let (b, path, pd) = unsafe {
        (
            CmIdBox::from_id(cm_id),
            alternate_path.as_ref(),
            bytes(private_data, private_data_len),
        )
    };
    path.map_or(EINVAL.to_errno(), |path| send_lap(b, path, pd))
}

fn send_lap(b: &CmIdBox, path: &bindings::sa_path_rec, pd: &[u8]) -> c_int {
    let Some(private_data) = fill(pd) else {
        return EINVAL.to_errno();
    };
    // The path must lead somewhere from this device.
    let alternate = match peer_of(b, path, None) {
        Ok((peer, _)) => peer,
        Err(e) => return e,
    };
    let p = req_path(path, None, b.ack_delay());
    let mut lap = Lap::zeroed();
    // The C CM's LAP asked for the longest response time.
    lap.remote_cm_response_timeout = IbaTime::MAX;
    lap.set_alternate_path(&p);
    lap.private_data = private_data;
    id_call(b, |ep, comm, out| {
        ep.send_lap(now_ms(), comm, &lap, out)?;
        ep.set_alternate(comm, Some(alternate), None)
    })
}

/// Answers a LAP (`rcm_send_cm_apr`).
///
/// # Safety
///
/// `cm_id` must come from rcm; `info` and `private_data` valid for their
/// lengths.
#[no_mangle]
pub(crate) unsafe extern "C" fn rcm_send_cm_apr(
    cm_id: *mut bindings::ib_cm_id,
    status: bindings::ib_cm_apr_status,
    info: *const c_void,
    info_length: u8,
    private_data: *const c_void,
    private_data_len: u8,
) -> c_int {
    // SAFETY: per this function's contract; the core rejects more than
    // the APR holds.
    let (b, info, pd) = unsafe {
        (
            CmIdBox::from_id(cm_id),
            bytes(info, info_length),
            bytes(private_data, private_data_len),
        )
    };
    let Ok(status) = u8::try_from(status) else {
        return EINVAL.to_errno();
    };
    let status = AprStatus::from_wire(status);
    id_call(b, |ep, comm, out| ep.send_apr(comm, status, info, pd, out))
}
