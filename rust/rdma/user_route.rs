// SPDX-License-Identifier: GPL-2.0

//! An rdma_cm id's device and route in the layouts of the rdma_ucm uAPI
//! (QUERY_ROUTE, QUERY with PATH, SET_OPTION with IB_PATH), filled as
//! 6.12's rdma_ucm fills them.

use crate::bindings;
use crate::proto::rdma_cm::sockaddr::{family, AF_INET, SOCKADDR_IN6_SIZE, SOCKADDR_IN_SIZE};
use crate::proto::ucma::option::PACKED_PATH_REC_SIZE;
use crate::proto::ucma::query::BoundDevice;
use crate::rdma::cm_id::CmIdPrivate;
use core::ptr::addr_of;
use kernel::ffi::c_void;

/// The path record a packed SA attribute describes (an IB record).
pub(crate) fn unpack_path(packed: &[u8; PACKED_PATH_REC_SIZE]) -> bindings::sa_path_rec {
    let mut rec = bindings::sa_path_rec {
        rec_type: bindings::sa_path_rec_type_SA_PATH_REC_TYPE_IB,
        ..Default::default()
    };
    // SAFETY: `packed` is a whole attribute, only read; `rec` is ours.
    unsafe { bindings::ib_sa_unpack_path(packed.as_ptr().cast_mut().cast::<c_void>(), &mut rec) };
    rec
}

/// Copies an address of the id into a `sockaddr_in6` slot of the uAPI:
/// the bytes of its family's size, as much as the slot holds.
fn copy_addr(to: &mut bindings::sockaddr_in6, from: &bindings::__kernel_sockaddr_storage) {
    // SAFETY: the storage is plain bytes of its full size.
    let bytes = unsafe {
        core::slice::from_raw_parts(
            (from as *const bindings::__kernel_sockaddr_storage).cast::<u8>(),
            core::mem::size_of_val(from),
        )
    };
    let len = if family(bytes) == AF_INET {
        SOCKADDR_IN_SIZE
    } else {
        SOCKADDR_IN6_SIZE
    };
    // SAFETY: `to` is plain bytes of its own size; `len` is at most that.
    let slot = unsafe {
        core::slice::from_raw_parts_mut(
            (to as *mut bindings::sockaddr_in6).cast::<u8>(),
            core::mem::size_of_val(to),
        )
    };
    slot[..len].copy_from_slice(&bytes[..len]);
}

impl CmIdPrivate {
    /// The id's device, port and P_Key, if it has a device.
    pub(crate) fn bound_device(&self) -> Option<BoundDevice> {
        let (device, port) = self.device()?;
        Some(BoundDevice {
            node_guid: device.node_guid(),
            ibdev_index: device.index(),
            port_num: port as u8,
            pkey: self.resolved_pkey(),
        })
    }

    /// The number of path records of the id's route (primary, alternate).
    fn path_count(&self) -> u32 {
        // SAFETY: the id's route lives with it and changes only in its
        // own calls, one of which this is.
        let count = unsafe { addr_of!((*self.private()).id.route.num_pri_alt_paths).read() };
        u32::try_from(count).unwrap_or(0)
    }

    /// The id's path record `i`, below [`Self::path_count`].
    fn path_record(&self, i: usize) -> *mut bindings::sa_path_rec {
        // SAFETY: as in `path_count`; the records are an array of
        // `num_pri_alt_paths` entries, and `i` is below it.
        unsafe { addr_of!((*self.private()).id.route.path_rec).read().add(i) }
    }

    /// QUERY_ROUTE's answer: the id's addresses, then its device and
    /// either its path records or, before it has a route, the GIDs its
    /// addresses name (with the P_Key where the port has one).
    pub(crate) fn user_route(&self) -> bindings::rdma_ucm_query_route_resp {
        let mut resp = bindings::rdma_ucm_query_route_resp::default();
        // SAFETY: the id's addresses live with it and change only in its
        // own calls, one of which this is.
        let (src, dst) = unsafe {
            let a = addr_of!((*self.private()).id.route.addr);
            (&*addr_of!((*a).src_addr), &*addr_of!((*a).dst_addr))
        };
        copy_addr(&mut resp.src_addr, src);
        copy_addr(&mut resp.dst_addr, dst);
        let Some((device, port)) = self.device() else {
            return resp;
        };
        // As the C structure holds it: network order.
        resp.node_guid = device.node_guid().to_be();
        resp.ibdev_index = device.index();
        resp.port_num = port as u8;
        let paths = self.path_count();
        let (sgid, dgid) = self.gids();
        let set_gids = |first: &mut bindings::ib_user_path_rec| {
            first.sgid = sgid.unwrap_or_default();
            first.dgid = dgid.unwrap_or_default();
        };
        if device.is_iwarp(port) {
            set_gids(&mut resp.ib_route[0]);
        } else if paths > 0 {
            resp.num_paths = paths;
            for (i, slot) in resp.ib_route.iter_mut().enumerate().take(paths as usize) {
                // SAFETY: `i` is below the id's path count; the record is
                // only read.
                unsafe { bindings::ib_copy_path_rec_to_user(slot, self.path_record(i)) };
            }
        } else if device.is_roce(port) {
            set_gids(&mut resp.ib_route[0]);
            resp.ib_route[0].pkey = 0xffffu16.to_be();
        } else if device.has_ib_sa(port) {
            set_gids(&mut resp.ib_route[0]);
            resp.ib_route[0].pkey = self.resolved_pkey().to_be();
        }
        resp
    }

    /// QUERY(PATH)'s records, packed, into `out`: how many were written,
    /// and how many the id has.
    pub(crate) fn user_paths(&self, out: &mut [bindings::ib_path_rec_data]) -> (usize, u32) {
        let total = self.path_count();
        let mut written = 0;
        for (i, slot) in out.iter_mut().enumerate().take(total as usize) {
            // rxe and siw have no OPA paths: IB and RoCE records pack alike.
            slot.flags =
                bindings::IB_PATH_GMP | bindings::IB_PATH_PRIMARY | bindings::IB_PATH_BIDIRECTIONAL;
            // SAFETY: `i` is below the id's path count; the record is only
            // read; the slot has room for a packed record.
            unsafe {
                bindings::ib_sa_pack_path(self.path_record(i), slot.path_rec.as_mut_ptr().cast())
            };
            written += 1;
        }
        (written, total)
    }
}
