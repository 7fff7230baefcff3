// SPDX-License-Identifier: GPL-2.0

//! Path records (`struct sa_path_rec`) as consumers hand them over, and
//! as the core sees them.

use crate::bindings;
use crate::proto::rdma_cm::{PathKind, RoutePath};

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
        flow_label: u32::from_be(rec.flow_label) & 0x000F_FFFF,
        traffic_class: rec.traffic_class,
        hop_limit: rec.hop_limit,
        sl: rec.sl & 0xF,
        rate: rec.rate & 0x3F,
        mtu: rec.mtu & 0xF,
        pkey: u16::from_be(rec.pkey),
        packet_life_time: rec.packet_life_time,
    }
}
