// SPDX-License-Identifier: GPL-2.0

//! Where MADs go and come from: a send's path (what its address handle is
//! made from) and a received MAD's origin (what its reply path is worked
//! out from).

use crate::bindings;
use crate::proto::wire::grh::{same_route_back, GRH_SIZE};
use crate::rdma::device::{Device, DeviceRef};
use crate::rdma::gid::GidAttr;
use crate::rdma::path::record_of;
use kernel::error::to_result;
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
    fn from_raw(p: &bindings::rcm_h_path) -> Self {
        MadPath {
            port: p.port,
            dlid: p.dlid,
            sl: p.sl,
            pkey_index: p.pkey_index,
            has_grh: p.has_grh != 0,
            dgid: p.dgid,
            sgid_index: p.sgid_index,
            flow_label: p.flow_label,
            hop_limit: p.hop_limit,
            traffic_class: p.traffic_class,
            static_rate: p.static_rate,
            src_path_bits: p.src_path_bits,
            dmac: p.dmac,
        }
    }

    fn to_raw(self) -> bindings::rcm_h_path {
        bindings::rcm_h_path {
            port: self.port,
            flow_label: self.flow_label,
            dlid: self.dlid,
            pkey_index: self.pkey_index,
            sl: self.sl,
            has_grh: u8::from(self.has_grh),
            sgid_index: self.sgid_index,
            hop_limit: self.hop_limit,
            traffic_class: self.traffic_class,
            static_rate: self.static_rate,
            src_path_bits: self.src_path_bits,
            dgid: self.dgid,
            dmac: self.dmac,
        }
    }

    /// The path a consumer's path record describes on `device` (see
    /// `rcm_h_path_from_sa`), and the GID entry its source GID is.
    ///
    /// # Safety
    ///
    /// `device` must be registered, `rec` valid, and `sgid_attr` NULL or a
    /// GID attribute the caller holds a reference on.
    pub(crate) unsafe fn from_path_record(
        device: *mut bindings::ib_device,
        rec: *const bindings::sa_path_rec,
        sgid_attr: *const bindings::ib_gid_attr,
    ) -> Result<(Self, GidAttr)> {
        let mut raw = bindings::rcm_h_path::default();
        let mut held = core::ptr::null();
        // SAFETY: per this function's contract; `raw` and `held` are ours.
        to_result(unsafe {
            bindings::rcm_h_path_from_sa(device, rec, sgid_attr, &mut raw, &mut held)
        })?;
        // SAFETY: on success the helper hands over one reference in `held`.
        let gid = unsafe { GidAttr::from_owned(held) }.ok_or(EINVAL)?;
        Ok((MadPath::from_raw(&raw), gid))
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
        let through = match sgid_attr {
            Some(g) if route_from_gid => g.as_ptr(),
            _ => core::ptr::null(),
        };
        // SAFETY: the device is registered (type invariant of `Device`),
        // `through` NULL or held by the caller, the record ours.
        let (path, _gid) = unsafe { Self::from_path_record(device.as_raw(), &rec, through) }?;
        Ok(path)
    }

    /// Writes the address vector of this path on `device` into `attr`.
    pub(crate) fn fill_ah_attr(&self, device: &Device<'_>, attr: &mut bindings::rdma_ah_attr) {
        let raw = self.to_raw();
        // SAFETY: the device is registered (type invariant of `Device`);
        // `raw` and `attr` are valid for the call.
        unsafe { bindings::rcm_h_fill_ah_attr(device.as_raw(), &raw, attr) };
    }
}

/// Where a received MAD came from, as ib_mad reported it: what its reply
/// path is worked out from, later and only where it is needed (see
/// [`MadOrigin::reply_path`]).
#[derive(Clone, Copy)]
pub(crate) struct MadOrigin(pub(super) bindings::rcm_h_mad_origin);

impl MadOrigin {
    /// No origin (port 0 is no IB/RoCE port).
    pub(crate) const EMPTY: MadOrigin = MadOrigin(bindings::rcm_h_mad_origin {
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
        let mut raw = bindings::rcm_h_path::default();
        // SAFETY: the reference keeps the device alive (type invariant of
        // `DeviceRef`); the origin and `raw` are ours.
        to_result(unsafe { bindings::rcm_h_reply_path(device.as_raw(), &self.0, &mut raw) })?;
        Ok(MadPath::from_raw(&raw))
    }
}

/// How long (ms) a sender's reply path may serve its later MADs: the
/// module parameter `reply_path_ms` (0: not beyond the batch it was
/// worked out for).
pub(crate) fn reply_path_reuse_ms() -> u64 {
    // SAFETY: reads a module parameter; any context.
    u64::from(unsafe { bindings::rcm_h_reply_path_ms() })
}
