// SPDX-License-Identifier: GPL-2.0

//! The resolutions rdma_cm starts through ib_core for an id: address
//! resolution (ARP/ND, `rdma_resolve_ip`) and an IB id's SA path query.
//! Their callbacks run on ib_core's work queues and are decoded here for
//! a [`ResolutionHandler`]; their context is the id's number, never a
//! pointer, so a callback that outlives its id finds nothing.

use crate::bindings;
use crate::proto::rdma_cm::SockAddr;
use crate::rdma::cm_id::{context_id, id_context, CmIdPrivate};
use crate::rdma::sockaddr::read_sockaddr;
use core::ptr::{addr_of, addr_of_mut};
use kernel::ffi::{c_int, c_uint, c_ulong, c_void};
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

/// A path record component of an SA query (`IB_SA_COMP_MASK(n)`: bit `n`
/// of a big-endian mask).
const fn component(n: u32) -> bindings::ib_sa_comp_mask {
    (1u64 << n).to_be()
}

/// The components an IB id's route query sets (`IB_SA_PATH_REC_*`).
const PATH_SERVICE_ID: bindings::ib_sa_comp_mask = component(0) | component(1);
const PATH_DGID: bindings::ib_sa_comp_mask = component(2);
const PATH_SGID: bindings::ib_sa_comp_mask = component(3);
const PATH_TRAFFIC_CLASS: bindings::ib_sa_comp_mask = component(10);
const PATH_REVERSIBLE: bindings::ib_sa_comp_mask = component(11);
const PATH_NUMB_PATH: bindings::ib_sa_comp_mask = component(12);
const PATH_PKEY: bindings::ib_sa_comp_mask = component(13);
const PATH_QOS_CLASS: bindings::ib_sa_comp_mask = component(14);

impl CmIdPrivate {
    /// Starts resolving the id's destination from its source (ARP/ND):
    /// `H` hears the outcome, under `token`, from ib_core's work queue.
    /// 0 or the negative errno of the start.
    pub(crate) fn start_resolve_ip<H: ResolutionHandler>(
        &self,
        timeout_ms: u32,
        token: u64,
    ) -> c_int {
        let p = self.private();
        // SAFETY: the id's addresses were written in its own call; its
        // device address lives with it until the resolution is over
        // (`cancel_resolve_ip` before it goes). ib_core only reads the
        // destination.
        unsafe {
            let a = addr_of_mut!((*p).id.route.addr);
            bindings::rdma_resolve_ip(
                addr_of_mut!((*a).src_addr).cast(),
                addr_of!((*a).dst_addr).cast(),
                addr_of_mut!((*a).dev_addr),
                timeout_ms as c_ulong,
                Some(address_done::<H>),
                false,
                id_context(token),
            )
        }
    }

    /// Cancels a pending resolution; its callback has returned after.
    pub(crate) fn cancel_resolve_ip(&self) {
        // SAFETY: the id's device address lives with `self`.
        unsafe {
            bindings::rdma_addr_cancel(addr_of_mut!((*self.private()).id.route.addr.dev_addr))
        };
    }

    /// Starts the SA path query of an IB id: its resolved GIDs and P_Key,
    /// the service id of its destination, and its type of service if set
    /// (as 6.12: the QoS class for IPv4, the traffic class otherwise).
    /// `H` hears the outcome under `token`. 0 or the negative errno of the
    /// start.
    pub(crate) fn start_path_query<H: ResolutionHandler>(
        &self,
        timeout_ms: u32,
        token: u64,
        service_id: u64,
        tos: Option<u8>,
    ) -> c_int {
        let Some((device, port)) = self.device() else {
            return EINVAL.to_errno();
        };
        let (sgid, dgid) = self.gids();
        let mut rec = bindings::sa_path_rec {
            rec_type: bindings::sa_path_rec_type_SA_PATH_REC_TYPE_IB,
            pkey: self.resolved_pkey().to_be(),
            numb_path: 1,
            reversible: 1,
            service_id: service_id.to_be(),
            ..Default::default()
        };
        rec.sgid.raw = sgid.unwrap_or_default();
        rec.dgid.raw = dgid.unwrap_or_default();
        let mut mask =
            PATH_DGID | PATH_SGID | PATH_PKEY | PATH_NUMB_PATH | PATH_REVERSIBLE | PATH_SERVICE_ID;
        if let Some(tos) = tos {
            if matches!(self.addrs().0, Some(SockAddr::V4 { .. })) {
                rec.qos_class = u16::from(tos).to_be();
                mask |= PATH_QOS_CLASS;
            } else {
                rec.traffic_class = tos;
                mask |= PATH_TRAFFIC_CLASS;
            }
        }
        let p = self.private();
        // SAFETY: the device is registered while the id is on it; the
        // record is packed into the query during the call; the client is
        // registered for the module's life; the id's query fields are
        // ours during its own call, and a pending query is cancelled
        // before the id goes.
        unsafe {
            let id = bindings::ib_sa_path_rec_get(
                bindings::rcm_h_sa_client(),
                device.as_raw(),
                port,
                &mut rec,
                mask,
                timeout_ms as c_ulong,
                kernel::bindings::GFP_KERNEL,
                Some(path_done::<H>),
                id_context(token),
                addr_of_mut!((*p).query),
            );
            if id < 0 {
                return id;
            }
            addr_of_mut!((*p).query_id).write(id);
        }
        0
    }

    /// Cancels a pending path query (its callback may still run, and then
    /// finds no query).
    pub(crate) fn cancel_path_query(&self) {
        let p = self.private();
        // SAFETY: the id's query fields live with `self`; ib_sa cancels
        // only a query still registered under that number and pointer.
        unsafe {
            let query = addr_of!((*p).query).read();
            if !query.is_null() {
                bindings::ib_sa_cancel_query(addr_of!((*p).query_id).read(), query);
            }
        }
    }
}

/// ib_core's address resolution callback.
///
/// # Safety
///
/// Called by ib_core with a valid `src` when `status` is 0.
unsafe extern "C" fn address_done<H: ResolutionHandler>(
    status: c_int,
    src: *mut bindings::sockaddr,
    _addr: *mut bindings::rdma_dev_addr,
    context: *mut c_void,
) {
    let outcome = match status {
        // SAFETY: per this function's contract.
        0 => unsafe { read_sockaddr(src) },
        e => Err(e),
    };
    H::address_resolved(context_id(context), outcome);
}

/// ib_sa's path query callback.
///
/// # Safety
///
/// Called by ib_sa with a valid `rec` for the call when `status` is 0.
unsafe extern "C" fn path_done<H: ResolutionHandler>(
    status: c_int,
    rec: *mut bindings::sa_path_rec,
    _count: c_uint,
    context: *mut c_void,
) {
    // SAFETY: per this function's contract.
    let outcome = match (status, unsafe { rec.as_ref() }) {
        (0, Some(rec)) => Ok(rec),
        (0, None) => Err(EINVAL.to_errno()),
        (e, _) => Err(e),
    };
    H::route_resolved(context_id(context), outcome);
}
