// SPDX-License-Identifier: GPL-2.0

//! Paths between the consumers' path records and the CM messages: a
//! consumer's `sa_path_rec` as a REQ/LAP path, and a REQ's or LAP's path as
//! the record an event reports (as 6.12 converts them).

use crate::bindings;
use crate::proto::timer::{ack_timeout, IbaTime};
use crate::proto::wire::req::ReqPath;
use crate::rdma::path::lids;

/// One REQ path from a consumer's path record.
///
/// # Safety
///
/// `rec` must be valid; `inbound` NULL or valid.
pub(super) unsafe fn req_path(
    rec: *const bindings::sa_path_rec,
    inbound: *const bindings::sa_path_rec,
    ack_delay: IbaTime,
) -> ReqPath {
    // SAFETY: valid per the contract.
    let r = unsafe { &*rec };
    let (slid, dlid) = lids(r);
    let subnet_local = r.hop_limit <= 1;
    let (local_lid, remote_lid) = if subnet_local {
        (slid, dlid)
    } else {
        // Routed (and RoCE): the LIDs are not ours to know. The inbound
        // path's DLID is our LID as the peer sees it.
        // SAFETY: NULL or valid per the contract.
        let local = unsafe { inbound.as_ref() }.map_or(0xFFFF, |rec| lids(rec).1);
        (local, 0xFFFF)
    };
    // SAFETY: every bit pattern of the GID union is a valid byte array.
    let (sgid, dgid) = unsafe { (r.sgid.raw, r.dgid.raw) };
    ReqPath {
        local_port_lid: local_lid,
        remote_port_lid: remote_lid,
        local_port_gid: sgid,
        remote_port_gid: dgid,
        flow_label: u32::from_be(r.flow_label) & 0x000F_FFFF,
        packet_rate: r.rate & 0x3F,
        traffic_class: r.traffic_class,
        hop_limit: r.hop_limit,
        sl: r.sl & 0xF,
        subnet_local,
        local_ack_timeout: ack_timeout(ack_delay, IbaTime::new(r.packet_life_time)),
    }
}

/// The packet lifetime of a path whose local ACK timeout a REQ or LAP
/// carries (the C CM's conversion: one exponent less, floored at 0).
pub(super) fn packet_life_time(local_ack_timeout: IbaTime) -> u8 {
    local_ack_timeout.exponent().saturating_sub(1)
}

/// A path a peer proposed (a REQ's alternate path, a LAP's), seen from
/// this side, for the `sa_path_rec` of an event (`service_id` 0 for a LAP's,
/// whose record 6.12 gives none).
pub(super) fn event_path(
    p: &ReqPath,
    pkey: u16,
    mtu: u8,
    service_id: u64,
    roce: bool,
) -> bindings::rcm_h_lap_path {
    bindings::rcm_h_lap_path {
        sgid: p.remote_port_gid,
        dgid: p.local_port_gid,
        service_id,
        flow_label: p.flow_label,
        slid: p.remote_port_lid,
        dlid: p.local_port_lid,
        pkey,
        sl: p.sl,
        rate: p.packet_rate,
        hop_limit: p.hop_limit,
        traffic_class: p.traffic_class,
        packet_life_time: packet_life_time(p.local_ack_timeout),
        mtu,
        roce: u8::from(roce),
    }
}
