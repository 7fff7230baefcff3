// SPDX-License-Identifier: GPL-2.0

//! Path records (`struct sa_path_rec`) as consumers hand them over, and
//! as the core sees them.

use crate::bindings;
use crate::proto::rdma_cm::route::FLOW_LABEL_MASK;
use crate::proto::rdma_cm::{PathKind, RoceLink, RoutePath};
use kernel::ffi::c_int;

/// The (source, destination) LIDs of a path record (0 on RoCE, where the
/// record has none).
pub(crate) fn lids(rec: &bindings::sa_path_rec) -> (u16, u16) {
    let (mut slid, mut dlid) = (0u16, 0u16);
    // SAFETY: `rec` is a valid record for the call; the outputs are ours.
    unsafe { bindings::rcm_h_path_lids(rec, &mut slid, &mut dlid) };
    (slid, dlid)
}

/// A path record as the core's route path (host order throughout).
pub(crate) fn route_path(rec: &bindings::sa_path_rec) -> RoutePath {
    let (slid, dlid) = lids(rec);
    // SAFETY: every bit pattern of the GID union is a valid byte array.
    let (sgid, dgid) = unsafe { (rec.sgid.raw, rec.dgid.raw) };
    RoutePath {
        kind: match rec.rec_type {
            bindings::sa_path_rec_type_SA_PATH_REC_TYPE_ROCE_V1 => PathKind::RoceV1,
            bindings::sa_path_rec_type_SA_PATH_REC_TYPE_ROCE_V2 => PathKind::RoceV2,
            _ => PathKind::Ib,
        },
        sgid,
        dgid,
        slid,
        dlid,
        flow_label: u32::from_be(rec.flow_label) & FLOW_LABEL_MASK,
        traffic_class: rec.traffic_class,
        hop_limit: rec.hop_limit,
        sl: rec.sl & 0xF,
        rate: rec.rate & 0x3F,
        mtu: rec.mtu & 0xF,
        pkey: u16::from_be(rec.pkey),
        packet_life_time: rec.packet_life_time,
    }
}

/// A route path as the C helper's plain values (no service id).
pub(crate) fn plain_path(p: &RoutePath) -> bindings::rcm_h_lap_path {
    bindings::rcm_h_lap_path {
        sgid: p.sgid,
        dgid: p.dgid,
        service_id: 0,
        flow_label: p.flow_label,
        slid: p.slid,
        dlid: p.dlid,
        pkey: p.pkey,
        sl: p.sl,
        rate: p.rate,
        hop_limit: p.hop_limit,
        traffic_class: p.traffic_class,
        packet_life_time: p.packet_life_time,
        mtu: p.mtu,
        roce: u8::from(p.kind != PathKind::Ib),
    }
}

/// A route path as a path record (the inverse of [`route_path`]).
pub(crate) fn path_record(p: &RoutePath) -> bindings::sa_path_rec {
    let rec_type = match p.kind {
        PathKind::Ib => bindings::sa_path_rec_type_SA_PATH_REC_TYPE_IB,
        PathKind::RoceV1 => bindings::sa_path_rec_type_SA_PATH_REC_TYPE_ROCE_V1,
        PathKind::RoceV2 => bindings::sa_path_rec_type_SA_PATH_REC_TYPE_ROCE_V2,
    };
    let mut rec = bindings::sa_path_rec::default();
    // SAFETY: both are valid for the call; the record is ours to fill.
    unsafe { bindings::rcm_h_fill_path_rec(&plain_path(p), rec_type, &mut rec) };
    rec
}

/// What a RoCE path takes from a resolved id's port and network device,
/// for type of service `tos`; a negative errno as `rcm_h_rdma_roce_link`
/// gives it.
///
/// # Safety
///
/// `id` is a live rdma_cm id whose device and address fields do not
/// change during the call.
pub(crate) unsafe fn roce_link(
    id: *mut bindings::rdma_id_private,
    tos: u8,
) -> Result<RoceLink, c_int> {
    let mut link = bindings::rcm_h_roce_link::default();
    // SAFETY: per this function's contract; `link` is ours.
    match unsafe { bindings::rcm_h_rdma_roce_link(id, tos, &mut link) } {
        0 => Ok(RoceLink {
            kind: if link.v2 != 0 {
                PathKind::RoceV2
            } else {
                PathKind::RoceV1
            },
            udp_encap: link.udp_encap != 0,
            hop_limit: link.hop_limit,
            sl: link.sl,
            mtu: link.mtu,
        }),
        e => Err(e),
    }
}
