// SPDX-License-Identifier: GPL-2.0

//! An rdma_cm id's route: on RoCE, what its link gives a path (record
//! type, flow labels, hop limit, service level, MTU) and the path record
//! it keeps, with the resolved destination MAC, as 6.12's
//! `cma_resolve_iboe_route` fills them (the path itself is the core's,
//! `rdma_cm::roce_path`); and the route a passive id takes from the
//! request that created it.

use crate::bindings;
use crate::proto::rdma_cm::route::{roce_mtu, roce_record_kind};
use crate::proto::rdma_cm::{PathKind, RoceLink};
use crate::rdma::cm_id::{gid_offset, CmIdPrivate};
use crate::rdma::device::Device;
use crate::rdma::gid::GidAttr;
use crate::rdma::path;
use core::ptr::{addr_of, addr_of_mut};
use kernel::ffi::c_int;
use kernel::prelude::*;

impl CmIdPrivate {
    /// The record type of the id's RoCE paths: its GID's, raised by the
    /// network its address resolved over.
    fn roce_record_kind(&self) -> PathKind {
        let p = self.private();
        // SAFETY: the GID type and network are written with the id's GID
        // and resolution, in its own calls.
        let (gid_type, network) = unsafe {
            (
                addr_of!((*p).gid_type).read(),
                addr_of!((*p).id.route.addr.dev_addr.network).read(),
            )
        };
        roce_record_kind(
            gid_type == bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP,
            network == bindings::rdma_network_type_RDMA_NETWORK_IPV4
                || network == bindings::rdma_network_type_RDMA_NETWORK_IPV6,
        )
    }

    /// What the id's RoCE link gives a path for type of service `tos`:
    /// -ENODEV without a device or network device, -EINVAL if the network
    /// device's MTU leaves no IB MTU.
    pub(crate) fn roce_link(&self, tos: u8) -> Result<RoceLink, c_int> {
        let (device, port) = self.device().ok_or(ENODEV.to_errno())?;
        let ndev = self.net_device().ok_or(ENODEV.to_errno())?;
        // SAFETY: the hop limit is written by the id's resolution.
        let hop_limit =
            unsafe { addr_of!((*self.private()).id.route.addr.dev_addr.hoplimit).read() };
        // SAFETY: the network device is held.
        let sl = unsafe { bindings::rcm_h_tos_to_sl(ndev.as_raw(), tos) };
        let mtu = roce_mtu(ndev.mtu());
        if mtu == 0 {
            return Err(EINVAL.to_errno());
        }
        Ok(RoceLink {
            kind: self.roce_record_kind(),
            udp_encap: device.carries_roce_v2(port),
            hop_limit: u8::try_from(hop_limit).unwrap_or(u8::MAX),
            sl,
            mtu,
        })
    }

    /// Stores a copy of `rec` as the id's route, with the resolved L2
    /// part on RoCE (record type, destination MAC): 0, -ENOMEM, or
    /// -ENODEV if the id lost its network device. In the id's own call
    /// (or its resolution's callback).
    pub(crate) fn set_route(&self, rec: &bindings::sa_path_rec) -> c_int {
        let mut copy = *rec;
        if self.device().is_some_and(|(d, port)| d.is_roce(port)) {
            if self.net_device().is_none() {
                return ENODEV.to_errno();
            }
            copy.rec_type = path::record_type_of(self.roce_record_kind());
            // SAFETY: the destination address is written by the id's
            // resolution.
            let dst =
                unsafe { addr_of!((*self.private()).id.route.addr.dev_addr.dst_dev_addr).read() };
            let mut dmac = [0; 6];
            dmac.copy_from_slice(&dst[..6]);
            path::set_dmac(&mut copy, dmac);
            // The record is RoCE (set above): `roce` is its member.
            copy.__bindgen_anon_1.roce.route_resolved = true;
        }
        let Ok(record) = KBox::new(copy, GFP_KERNEL) else {
            return ENOMEM.to_errno();
        };
        // SAFETY: the id's route is its own, written only in its own
        // calls.
        unsafe { self.replace_record(Some(record)) };
        0
    }

    /// Replaces the id's path record with `record` (kmalloc'd, or none).
    ///
    /// # Safety
    ///
    /// The id's route is not read or written concurrently (its own call,
    /// or its creation).
    unsafe fn replace_record(&self, record: Option<KBox<bindings::sa_path_rec>>) {
        let p = self.private();
        // SAFETY: per this function's contract; the id's record is
        // kmalloc'd (freed with kfree, as the id's release does), and the
        // new one too.
        unsafe {
            let slot = addr_of_mut!((*p).id.route.path_rec);
            kernel::bindings::kfree(slot.read().cast());
            addr_of_mut!((*p).id.route.num_pri_alt_paths).write(c_int::from(record.is_some()));
            slot.write(record.map_or(core::ptr::null_mut(), KBox::into_raw));
        }
    }

    /// A passive id takes the route of the request that created it: the
    /// GID entry it arrived on (its device and port), the link-layer
    /// addresses of that entry's network device as its source, and with
    /// `rec` (a REQ's; a SIDR_REQ has none) a copy of the path record seen
    /// from here, whose destination GID it takes (6.12's
    /// `cma_ib_new_conn_id`). In the id's creation, before anyone sees it.
    pub(crate) fn take_passive_route(
        &self,
        gid: GidAttr,
        device: &Device<'_>,
        port: u32,
        rec: Option<&bindings::sa_path_rec>,
    ) -> Result {
        let record = match rec {
            Some(r) => Some(KBox::new(*r, GFP_KERNEL)?),
            None => None,
        };
        // SAFETY: the new id's fields are ours during its creation.
        let da = unsafe { addr_of_mut!((*self.private()).id.route.addr.dev_addr) };
        if let Some(ndev) = gid.net_device() {
            // SAFETY: as above.
            unsafe { ndev.copy_source_l2(da) };
        }
        if let Some(r) = rec {
            // SAFETY: as above; a GID is plain bytes whichever way read.
            unsafe {
                let offset = gid_offset(addr_of!((*da).dev_type).read());
                let dst = addr_of_mut!((*da).dst_dev_addr).cast::<u8>().add(offset);
                dst.cast::<[u8; 16]>().write_unaligned(r.dgid.raw);
            }
        }
        // SAFETY: as above.
        unsafe { self.replace_record(record) };
        self.take_gid(gid, device, port);
        Ok(())
    }
}
