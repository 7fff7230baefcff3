// SPDX-License-Identifier: GPL-2.0

//! Where MADs go and come from: a send's path (what its address handle is
//! made from) and a received MAD's origin (what its reply path is worked
//! out from).

use crate::bindings;
use crate::proto::wire::grh::{same_route_back, GRH_SIZE};
use crate::rdma::device::{Device, DeviceRef};
use crate::rdma::gid::GidAttr;
use crate::rdma::path::record_of;
use core::ptr::null_mut;
use kernel::error::{from_err_ptr, to_result};
use kernel::ffi::c_int;
use kernel::prelude::*;

/// Where a MAD goes or came from: the values an address handle is built
/// from (port, LID, SL, P_Key index and, for RoCE, the GRH).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct MadPath {
    /// Port number on the device.
    pub(crate) port: u32,
    /// Destination LID (IB) or 0.
    pub(crate) dlid: u16,
    /// Service level.
    pub(crate) sl: u8,
    /// P_Key table index to send with.
    pub(crate) pkey_index: u16,
    /// Whether a GRH is needed (always on RoCE).
    pub(crate) has_grh: bool,
    /// Destination GID.
    pub(crate) dgid: [u8; 16],
    /// Source GID table index.
    pub(crate) sgid_index: u8,
    /// GRH flow label.
    pub(crate) flow_label: u32,
    /// GRH hop limit.
    pub(crate) hop_limit: u8,
    /// GRH traffic class.
    pub(crate) traffic_class: u8,
    /// Static rate (`enum ib_rate`).
    pub(crate) static_rate: u8,
    /// Source path bits (IB).
    pub(crate) src_path_bits: u8,
    /// Destination MAC (RoCE).
    pub(crate) dmac: [u8; 6],
}

impl MadPath {
    /// The path address handle attributes describe (their port, LID, SL,
    /// rate, path bits, GRH and RoCE MAC; no P_Key index).
    fn from_ah_attr(a: &bindings::rdma_ah_attr) -> Self {
        let (dlid, src_path_bits) = match a.type_ {
            // SAFETY: the attributes' type says which member is set.
            bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_IB => unsafe {
                let ib = a.__bindgen_anon_1.ib;
                (ib.dlid, ib.src_path_bits)
            },
            // SAFETY: as above (an OPA LID's low 16 bits, as the C CM).
            bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_OPA => unsafe {
                let opa = a.__bindgen_anon_1.opa;
                (opa.dlid as u16, opa.src_path_bits)
            },
            _ => (0, 0),
        };
        let mut path = MadPath {
            port: a.port_num,
            dlid,
            sl: a.sl,
            static_rate: a.static_rate,
            src_path_bits,
            ..MadPath::default()
        };
        if u32::from(a.ah_flags) & bindings::ib_ah_flags_IB_AH_GRH != 0 {
            let g = &a.grh;
            path.has_grh = true;
            // SAFETY: every bit pattern of the GID union is a byte array.
            path.dgid = unsafe { g.dgid.raw };
            path.flow_label = g.flow_label;
            path.sgid_index = if g.sgid_attr.is_null() {
                g.sgid_index
            } else {
                // SAFETY: the attributes hold a reference on their GID
                // entry.
                unsafe { (*g.sgid_attr).index as u8 }
            };
            path.hop_limit = g.hop_limit;
            path.traffic_class = g.traffic_class;
        }
        if a.type_ == bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE {
            // SAFETY: a RoCE address's member is `roce`.
            path.dmac = unsafe { a.__bindgen_anon_1.roce.dmac };
        }
        path
    }

    /// The path a consumer's path record describes on `device`: the port
    /// owning its source GID (or `sgid_attr`'s), the P_Key index of its
    /// P_Key and the address fields; and a reference on the source GID's
    /// entry, as the C CM's address vector keeps one for the id's life.
    /// `EINVAL` when the device has no such GID or P_Key. `sgid_attr` is
    /// an entry the caller holds a reference on.
    pub(crate) fn from_path_record(
        device: &Device<'_>,
        rec: &bindings::sa_path_rec,
        sgid_attr: Option<&bindings::ib_gid_attr>,
    ) -> Result<(Self, GidAttr)> {
        let device = device.as_raw();
        // ib_init_ah_attr_from_path may complete the record it is given.
        let mut copy = *rec;
        let gid = match sgid_attr {
            None => {
                // SAFETY: the device is registered (type invariant of
                // `Device`); the GID is the record's.
                let found = unsafe {
                    bindings::rdma_find_gid(
                        device,
                        &copy.sgid,
                        gid_type_of(copy.rec_type),
                        null_mut(),
                    )
                };
                let found = from_err_ptr(found.cast_mut()).map_err(|_| EINVAL)?;
                // SAFETY: rdma_find_gid returned a referenced entry.
                unsafe { GidAttr::from_owned(found) }.ok_or(EINVAL)?
            }
            Some(attr) if attr.device != device => return Err(EINVAL),
            Some(attr) => {
                // SAFETY: the caller holds a reference, so the entry is
                // live; the new reference goes to the result.
                unsafe { bindings::rdma_hold_gid_attr(attr) };
                // SAFETY: the reference just taken.
                unsafe { GidAttr::from_owned(attr) }.ok_or(EINVAL)?
            }
        };
        let port = gid.port();
        let mut pkey_index = 0u16;
        // SAFETY: the device is registered; `pkey_index` is ours.
        to_result(unsafe {
            bindings::ib_find_cached_pkey(device, port, u16::from_be(copy.pkey), &mut pkey_index)
        })?;
        let mut attr = bindings::rdma_ah_attr::default();
        let sgid_attr = sgid_attr.map_or(core::ptr::null(), |a| a);
        // SAFETY: the device is registered, the record and attributes
        // ours, `sgid_attr` NULL or held by the caller.
        to_result(unsafe {
            bindings::ib_init_ah_attr_from_path(device, port, &mut copy, &mut attr, sgid_attr)
        })?;
        let path = MadPath {
            pkey_index,
            ..MadPath::from_ah_attr(&attr)
        };
        // SAFETY: the attributes were built above and are released once.
        unsafe { bindings::rdma_destroy_ah_attr(&mut attr) };
        Ok((path, gid))
    }

    /// The path a peer proposed (a REQ's alternate path, a LAP's), seen
    /// from this side, on `device`. `sgid_attr` is the GID the peer's
    /// message arrived on: its type gives the record type on RoCE, and
    /// with `route_from_gid` the RoCE route is resolved through it (6.12
    /// resolves a REQ's alternate path without it, which fails on RoCE).
    pub(crate) fn from_proposed(
        device: &Device<'_>,
        proposed: &bindings::rcm_h_lap_path,
        sgid_attr: Option<&GidAttr>,
        route_from_gid: bool,
    ) -> Result<Self> {
        let rec_type = sgid_attr.map_or(bindings::sa_path_rec_type_SA_PATH_REC_TYPE_IB, |g| {
            g.path_record_type(proposed.roce != 0)
        });
        let rec = record_of(proposed, rec_type);
        let through = sgid_attr.filter(|_| route_from_gid).map(GidAttr::as_attr);
        Ok(Self::from_path_record(device, &rec, through)?.0)
    }

    /// Writes the address vector of this path on `device` into `attr`,
    /// without a GID entry reference (ib_modify_qp and rdma_create_ah
    /// look it up from the index).
    pub(crate) fn fill_ah_attr(&self, device: &Device<'_>, attr: &mut bindings::rdma_ah_attr) {
        *attr = bindings::rdma_ah_attr {
            // SAFETY: the device is registered (type invariant of `Device`).
            type_: unsafe { bindings::rcm_h_ah_find_type(device.as_raw(), self.port) },
            port_num: self.port,
            sl: self.sl,
            static_rate: self.static_rate,
            ..Default::default()
        };
        match attr.type_ {
            bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_IB => {
                attr.__bindgen_anon_1.ib = bindings::ib_ah_attr {
                    dlid: self.dlid,
                    src_path_bits: self.src_path_bits,
                };
            }
            bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_OPA => {
                attr.__bindgen_anon_1.opa = bindings::opa_ah_attr {
                    dlid: self.dlid.into(),
                    src_path_bits: self.src_path_bits,
                    make_grd: false,
                };
            }
            bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE => {
                attr.__bindgen_anon_1.roce = bindings::roce_ah_attr { dmac: self.dmac };
            }
            _ => {}
        }
        if self.has_grh {
            attr.ah_flags = bindings::ib_ah_flags_IB_AH_GRH as u8;
            attr.grh = bindings::ib_global_route {
                sgid_attr: core::ptr::null(),
                dgid: bindings::ib_gid { raw: self.dgid },
                flow_label: self.flow_label,
                sgid_index: self.sgid_index,
                hop_limit: self.hop_limit,
                traffic_class: self.traffic_class,
            };
        }
    }
}

/// The GID type a path record of `rec_type` uses (6.12's
/// `sa_conv_pathrec_to_gid_type`).
fn gid_type_of(rec_type: bindings::sa_path_rec_type) -> bindings::ib_gid_type {
    match rec_type {
        bindings::sa_path_rec_type_SA_PATH_REC_TYPE_ROCE_V1 => {
            bindings::ib_gid_type_IB_GID_TYPE_ROCE
        }
        bindings::sa_path_rec_type_SA_PATH_REC_TYPE_ROCE_V2 => {
            bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP
        }
        _ => bindings::ib_gid_type_IB_GID_TYPE_IB,
    }
}

const _: () = assert!(core::mem::size_of::<bindings::ib_grh>() == 40);

/// The fields of a receive completion a reply path is worked out from
/// (those ib_init_ah_attr_from_wc reads), and the 40 bytes where a GRH (or
/// a RoCE v2 IPv4 header) goes: copied in the receive handler, which must
/// not wait (on RoCE the path itself takes an address resolution).
#[derive(Clone, Copy)]
struct OriginFields {
    /// As aligned as `struct ib_grh`, and as large.
    grh: [u32; 10],
    port: u32,
    wc_flags: c_int,
    slid: u16,
    pkey_index: u16,
    vlan_id: u16,
    sl: u8,
    dlid_path_bits: u8,
    network_hdr_type: u8,
}

/// Where a received MAD came from, as ib_mad reported it: what its reply
/// path is worked out from, later and only where it is needed (see
/// [`MadOrigin::reply_path`]).
#[derive(Clone, Copy)]
pub(crate) struct MadOrigin(OriginFields);

impl MadOrigin {
    /// No origin (port 0 is no IB/RoCE port).
    pub(crate) const EMPTY: MadOrigin = MadOrigin(OriginFields {
        grh: [0; 10],
        port: 0,
        wc_flags: 0,
        slid: 0,
        pkey_index: 0,
        vlan_id: 0,
        sl: 0,
        dlid_path_bits: 0,
        network_hdr_type: 0,
    });

    /// The port the MAD arrived on.
    pub(crate) fn port(&self) -> u32 {
        self.0.port
    }

    /// Whether `other` came from the same sender, so that its reply path
    /// is this one's: the same work completion values and, with a network
    /// header, the same way back (`wire::grh::same_route_back`).
    pub(crate) fn same_sender(&self, other: &MadOrigin) -> bool {
        let (a, b) = (&self.0, &other.0);
        let same_completion = a.port == b.port
            && a.wc_flags == b.wc_flags
            && a.slid == b.slid
            && a.pkey_index == b.pkey_index
            && a.vlan_id == b.vlan_id
            && a.sl == b.sl
            && a.dlid_path_bits == b.dlid_path_bits
            && a.network_hdr_type == b.network_hdr_type;
        if !same_completion || a.wc_flags & bindings::ib_wc_flags_IB_WC_GRH as c_int == 0 {
            return same_completion;
        }
        same_route_back(&self.grh(), &other.grh())
    }

    /// The network header bytes as they arrived.
    fn grh(&self) -> [u8; GRH_SIZE] {
        let mut bytes = [0; GRH_SIZE];
        for (out, word) in bytes.chunks_exact_mut(4).zip(self.0.grh) {
            out.copy_from_slice(&word.to_ne_bytes());
        }
        bytes
    }

    /// The path to answer the MAD on, through `device`, the device it
    /// arrived on. May sleep: on RoCE it waits for ib_core's address
    /// resolution of the sender's MAC (on ib_core's address work queue,
    /// so the caller must hold nothing that queue's callbacks take).
    pub(crate) fn reply_path(&self, device: &DeviceRef) -> Result<MadPath> {
        let o = &self.0;
        let wc = bindings::ib_wc {
            wc_flags: o.wc_flags,
            slid: o.slid.into(),
            pkey_index: o.pkey_index,
            vlan_id: o.vlan_id,
            sl: o.sl,
            dlid_path_bits: o.dlid_path_bits,
            network_hdr_type: o.network_hdr_type,
            port_num: o.port,
            ..Default::default()
        };
        let mut attr = bindings::rdma_ah_attr::default();
        // SAFETY: the reference keeps the device alive (type invariant of
        // `DeviceRef`); the completion, the header bytes (as large and as
        // aligned as `struct ib_grh`) and the attributes are ours.
        to_result(unsafe {
            bindings::ib_init_ah_attr_from_wc(
                device.as_raw(),
                o.port,
                &wc,
                o.grh.as_ptr().cast(),
                &mut attr,
            )
        })?;
        let path = MadPath {
            port: o.port,
            pkey_index: o.pkey_index,
            ..MadPath::from_ah_attr(&attr)
        };
        // SAFETY: the attributes were built above and are released once.
        unsafe { bindings::rdma_destroy_ah_attr(&mut attr) };
        Ok(path)
    }

    /// The origin of a MAD received on `port`.
    ///
    /// # Safety
    ///
    /// `recv` is a receive completion of ib_mad, valid for the call.
    pub(crate) unsafe fn of_received(port: u32, recv: &bindings::ib_mad_recv_wc) -> Self {
        // SAFETY: ib_mad sets the completion of a received MAD.
        let wc = unsafe { &*recv.wc };
        let mut grh = [0u32; 10];
        if !recv.recv_buf.grh.is_null() {
            // SAFETY: the header is a `struct ib_grh`, as large as `grh`.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    recv.recv_buf.grh.cast::<u8>(),
                    grh.as_mut_ptr().cast::<u8>(),
                    core::mem::size_of_val(&grh),
                )
            };
        }
        MadOrigin(OriginFields {
            grh,
            port,
            wc_flags: wc.wc_flags,
            slid: wc.slid as u16,
            pkey_index: wc.pkey_index,
            vlan_id: wc.vlan_id,
            sl: wc.sl,
            dlid_path_bits: wc.dlid_path_bits,
            network_hdr_type: wc.network_hdr_type,
        })
    }
}

/// How long (ms) a sender's reply path may serve its later MADs: the
/// module parameter `reply_path_ms` (0: not beyond the batch it was
/// worked out for).
pub(crate) fn reply_path_reuse_ms() -> u64 {
    // SAFETY: reads a module parameter; any context.
    u64::from(unsafe { bindings::rcm_h_reply_path_ms() })
}
