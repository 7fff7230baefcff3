// SPDX-License-Identifier: GPL-2.0

//! Path records (`struct sa_path_rec`) as consumers hand them over, and
//! as the core sees them.

use crate::bindings;
use crate::proto::rdma_cm::route::FLOW_LABEL_MASK;
use crate::proto::rdma_cm::{PathKind, RoutePath};

/// The (source, destination) LIDs of a path record (0 on RoCE, where the
/// record has none; an OPA record's low 16 bits, as the C CM reads them).
pub(crate) fn lids(rec: &bindings::sa_path_rec) -> (u16, u16) {
    match rec.rec_type {
        // SAFETY: the record type says which member of the union is set;
        // every bit pattern of either is valid.
        bindings::sa_path_rec_type_SA_PATH_REC_TYPE_IB => unsafe {
            let ib = rec.__bindgen_anon_1.ib;
            (u16::from_be(ib.slid), u16::from_be(ib.dlid))
        },
        // SAFETY: as above.
        bindings::sa_path_rec_type_SA_PATH_REC_TYPE_OPA => unsafe {
            let opa = rec.__bindgen_anon_1.opa;
            (u32::from_be(opa.slid) as u16, u32::from_be(opa.dlid) as u16)
        },
        _ => (0, 0),
    }
}

/// The record type of a path on a RoCE port through `sgid_attr` (v1 or
/// v2 by its GID type), or IB.
///
/// # Safety
///
/// `sgid_attr` is NULL or a GID entry held for the call.
pub(crate) unsafe fn record_type(
    roce: bool,
    sgid_attr: *const bindings::ib_gid_attr,
) -> bindings::sa_path_rec_type {
    if !roce || sgid_attr.is_null() {
        return bindings::sa_path_rec_type_SA_PATH_REC_TYPE_IB;
    }
    // SAFETY: per this function's contract.
    match unsafe { (*sgid_attr).gid_type } {
        bindings::ib_gid_type_IB_GID_TYPE_ROCE => {
            bindings::sa_path_rec_type_SA_PATH_REC_TYPE_ROCE_V1
        }
        bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP => {
            bindings::sa_path_rec_type_SA_PATH_REC_TYPE_ROCE_V2
        }
        _ => bindings::sa_path_rec_type_SA_PATH_REC_TYPE_IB,
    }
}

/// A path record of type `rec_type` from a path's plain values: exact
/// selectors, reversible, network byte order where the record has it.
pub(crate) fn record_of(
    l: &bindings::rcm_h_lap_path,
    rec_type: bindings::sa_path_rec_type,
) -> bindings::sa_path_rec {
    let mut rec = bindings::sa_path_rec {
        service_id: l.service_id.to_be(),
        flow_label: l.flow_label.to_be(),
        hop_limit: l.hop_limit,
        traffic_class: l.traffic_class,
        reversible: 1,
        pkey: l.pkey.to_be(),
        sl: l.sl,
        mtu_selector: bindings::ib_sa_selector_IB_SA_EQ as u8,
        mtu: l.mtu,
        rate_selector: bindings::ib_sa_selector_IB_SA_EQ as u8,
        rate: l.rate,
        packet_life_time_selector: bindings::ib_sa_selector_IB_SA_EQ as u8,
        packet_life_time: l.packet_life_time,
        rec_type,
        ..Default::default()
    };
    rec.sgid.raw = l.sgid;
    rec.dgid.raw = l.dgid;
    // Only an IB record has 16-bit LIDs (sa_path_set_slid/dlid).
    if rec_type == bindings::sa_path_rec_type_SA_PATH_REC_TYPE_IB {
        rec.__bindgen_anon_1.ib = bindings::sa_path_rec_ib {
            slid: l.slid.to_be(),
            dlid: l.dlid.to_be(),
            raw_traffic: 0,
        };
    }
    rec
}

/// Sets a RoCE record's destination MAC (sa_path_set_dmac).
pub(crate) fn set_dmac(rec: &mut bindings::sa_path_rec, dmac: [u8; 6]) {
    if matches!(
        rec.rec_type,
        bindings::sa_path_rec_type_SA_PATH_REC_TYPE_ROCE_V1
            | bindings::sa_path_rec_type_SA_PATH_REC_TYPE_ROCE_V2
    ) {
        rec.__bindgen_anon_1.roce = bindings::sa_path_rec_roce {
            route_resolved: false,
            dmac,
        };
    }
}

/// The record type of a path of `kind`.
pub(crate) fn record_type_of(kind: PathKind) -> bindings::sa_path_rec_type {
    match kind {
        PathKind::Ib => bindings::sa_path_rec_type_SA_PATH_REC_TYPE_IB,
        PathKind::RoceV1 => bindings::sa_path_rec_type_SA_PATH_REC_TYPE_ROCE_V1,
        PathKind::RoceV2 => bindings::sa_path_rec_type_SA_PATH_REC_TYPE_ROCE_V2,
    }
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
    record_of(&plain_path(p), record_type_of(p.kind))
}
