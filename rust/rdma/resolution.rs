// SPDX-License-Identifier: GPL-2.0

//! The callbacks of the resolutions rdma_cm starts through ib_core
//! (`rcm_rdma_helpers.c`): address resolution (ARP/ND, `rdma_resolve_ip`)
//! and an IB id's SA path query, decoded and handed to a
//! [`ResolutionHandler`]. Both run on ib_core's work queues; their context
//! is the id's number, never a pointer.

use crate::bindings;
use crate::proto::rdma_cm::SockAddr;
use crate::rdma::sockaddr::read_sockaddr;
use core::marker::PhantomData;
use kernel::ffi::c_int;
use kernel::prelude::*;

/// What rdma_cm does when a resolution it started ends.
pub(crate) trait ResolutionHandler {
    /// The address resolution of the id reported as `token` ended: its
    /// source address, or the negative errno it failed with.
    fn address_resolved(token: u64, outcome: Result<SockAddr, c_int>);
    /// The SA path query of the id reported as `token` ended: the path
    /// record, or the negative errno it failed with.
    fn route_resolved(token: u64, outcome: Result<&bindings::sa_path_rec, c_int>);
}

/// Has the resolutions' callbacks go to `H` from now on, for the module's
/// life.
pub(crate) fn set_handler<H: ResolutionHandler>() {
    // SAFETY: the table is a constant of the module, so it outlives every
    // resolution; the helper only reads it.
    unsafe { bindings::rcm_h_rdma_set_callbacks(&Callbacks::<H>::TABLE) };
}

struct Callbacks<H>(PhantomData<H>);

impl<H: ResolutionHandler> Callbacks<H> {
    const TABLE: bindings::rcm_rdma_callbacks = bindings::rcm_rdma_callbacks {
        addr_done: Some(addr_done::<H>),
        route_done: Some(route_done::<H>),
    };
}

/// # Safety
///
/// Called by the helper with ib_core's arguments: a valid `src` when
/// `status` is 0.
unsafe extern "C" fn addr_done<H: ResolutionHandler>(
    token: u64,
    status: c_int,
    src: *const bindings::sockaddr,
) {
    let outcome = match status {
        // SAFETY: per this function's contract.
        0 => unsafe { read_sockaddr(src) },
        e => Err(e),
    };
    H::address_resolved(token, outcome);
}

/// # Safety
///
/// Called by the helper with ib_core's arguments: a valid `rec` for the
/// call when `status` is 0.
unsafe extern "C" fn route_done<H: ResolutionHandler>(
    token: u64,
    status: c_int,
    rec: *mut bindings::sa_path_rec,
) {
    // SAFETY: per this function's contract.
    let outcome = match (status, unsafe { rec.as_ref() }) {
        (0, Some(rec)) => Ok(rec),
        (0, None) => Err(EINVAL.to_errno()),
        (e, _) => Err(e),
    };
    H::route_resolved(token, outcome);
}
