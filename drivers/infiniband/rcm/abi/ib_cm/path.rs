// SPDX-License-Identifier: GPL-2.0

//! Paths between the consumers' path records and the CM messages: a
//! consumer's `sa_path_rec` as a REQ/LAP path, and a REQ's or LAP's path as
//! the record an event reports (as 6.12 converts them).

use crate::bindings;
use crate::proto::rdma_cm::route::packet_life_time;
use crate::proto::timer::IbaTime;
use crate::proto::wire::req::ReqPath;
use crate::rdma::path::{lids, route_path};

/// One REQ path from a consumer's path record (and the inbound path's,
/// whose DLID is our LID as the peer sees it).
pub(super) fn req_path(
    rec: &bindings::sa_path_rec,
    inbound: Option<&bindings::sa_path_rec>,
    ack_delay: IbaTime,
) -> ReqPath {
    route_path(rec).req_path(inbound.map(|rec| lids(rec).1), ack_delay)
}

/// A path a REQ or LAP names (a REQ's primary or alternate path, a
/// LAP's), seen from this side, for the `sa_path_rec` of an event
/// (`service_id` 0 for a LAP's, whose record 6.12 gives none).
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
