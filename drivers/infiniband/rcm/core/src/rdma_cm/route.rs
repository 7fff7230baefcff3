// SPDX-License-Identifier: GPL-2.0

//! Routes: the path an id's connection takes (`struct sa_path_rec` as far
//! as the CM uses it), how one is resolved (`rdma_resolve_route`: work out,
//! outcome in, as for addresses), set directly (`rdma_set_ib_path`), and
//! how a path turns into a REQ's path and back.

use super::addr::SockAddr;
use super::endpoint::{RdmaCm, RdmaCmError, RdmaId};
use super::event::{EventKind, EventStatus, RdmaEvent};
use super::host::Host;
use super::resolve::ENOMEM;
use super::state::IdState;
use crate::cm::store::Collections;
use crate::cm::DeviceId;
use crate::timer::{ack_timeout, IbaTime};
use crate::wire::req::ReqPath;

/// LID of a path that leaves the subnet (and of every RoCE path).
pub const PERMISSIVE_LID: u16 = 0xFFFF;

/// A RoCE path's packet lifetime without an ACK timeout set (6.12's
/// `CMA_IBOE_PACKET_LIFETIME`).
pub const ROCE_PACKET_LIFETIME: u8 = 16;

/// The packet lifetime of a RoCE path: half the consumer's ACK timeout
/// (one exponent less) if it set one (`rdma_set_ack_timeout`), as 6.12
/// derives it from `local ACK timeout = 2 * lifetime + ACK delay`.
pub const fn roce_packet_life_time(ack_timeout: Option<u8>) -> u8 {
    match ack_timeout {
        Some(t) if t > 0 => t - 1,
        _ => ROCE_PACKET_LIFETIME,
    }
}

/// A flow label's 20 bits (`IB_GRH_FLOWLABEL_MASK`).
pub const FLOW_LABEL_MASK: u32 = 0x000F_FFFF;

/// The headers a RoCE packet may carry inside its Ethernet payload: GRH,
/// UDP, BTH, XRC and atomic extended headers, ICRC (as 6.12's
/// `iboe_get_mtu` counts them).
const ROCE_HEADER_BYTES: u32 = 40 + 8 + 12 + 4 + 28 + 4;

/// The IB MTU (its encoding, 1 for 256 to 5 for 4096) of a RoCE port on
/// a network device of MTU `netdev_mtu`: the largest IB MTU its payload
/// holds after the headers, or 0 if none fits.
pub const fn roce_mtu(netdev_mtu: u32) -> u8 {
    let payload = netdev_mtu.saturating_sub(ROCE_HEADER_BYTES);
    let mut encoding = 5;
    while encoding > 0 {
        if payload >= 128 << encoding {
            return encoding;
        }
        encoding -= 1;
    }
    0
}

/// What a RoCE path takes from the id's port and network device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoceLink {
    /// The record type of the id's GID (raised by the route's network).
    pub kind: PathKind,
    /// Whether the port carries RoCE v2 (UDP): the path gets a flow label.
    pub udp_encap: bool,
    /// The hop limit address resolution found.
    pub hop_limit: u8,
    /// The service level the type of service maps to on the device.
    pub sl: u8,
    /// The device's MTU (IB encoding).
    pub mtu: u8,
}

/// The record type of a RoCE id's paths: v2 if its GID is a v2 entry or
/// its route resolved over IP (6.12 raises the GID's type to the
/// network's), else v1.
pub const fn roce_record_kind(gid_v2: bool, ip_network: bool) -> PathKind {
    if gid_v2 || ip_network {
        PathKind::RoceV2
    } else {
        PathKind::RoceV1
    }
}

/// A resolved RoCE id's path (6.12's `cma_resolve_iboe_route`): GIDs of
/// its addresses, traffic class `tos`, lifetime `packet_life_time`, the
/// rest from its link. RoCE has no LIDs and takes any P_Key.
pub fn roce_path(
    src: &SockAddr,
    dst: &SockAddr,
    tos: u8,
    packet_life_time: u8,
    link: &RoceLink,
) -> RoutePath {
    RoutePath {
        kind: link.kind,
        sgid: src.gid(),
        dgid: dst.gid(),
        slid: 0,
        dlid: 0,
        flow_label: if link.udp_encap {
            roce_udp_flow_label(src, dst)
        } else {
            0
        },
        traffic_class: tos,
        hop_limit: if matches!(dst, SockAddr::Ib { .. }) {
            1
        } else {
            link.hop_limit
        },
        sl: link.sl,
        rate: IB_RATE_PORT_CURRENT,
        mtu: link.mtu,
        pkey: 0xFFFF,
        packet_life_time,
    }
}

/// `IB_RATE_PORT_CURRENT`: the port's own rate.
pub const IB_RATE_PORT_CURRENT: u8 = 0;

/// RoCE v2's flow label: an IPv6 source's flow info if it set one, else a
/// hash of the ports, so that connections spread over ECMP paths.
fn roce_udp_flow_label(src: &SockAddr, dst: &SockAddr) -> u32 {
    if let SockAddr::V6 { flowinfo, .. } = *src {
        if flowinfo & FLOW_LABEL_MASK != 0 {
            return flowinfo & FLOW_LABEL_MASK;
        }
    }
    (u32::from(src.port()) * 31 + u32::from(dst.port())) & FLOW_LABEL_MASK
}

/// How a path record was made (`enum sa_path_rec_type`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PathKind {
    /// InfiniBand (an SA path record).
    #[default]
    Ib,
    /// RoCE v1: GRH over Ethernet.
    RoceV1,
    /// RoCE v2: UDP/IP.
    RoceV2,
}

/// One path, as seen from this host (source = here).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoutePath {
    /// Record type.
    pub kind: PathKind,
    /// This side's GID.
    pub sgid: [u8; 16],
    /// The peer's GID.
    pub dgid: [u8; 16],
    /// This side's LID (host order; [`PERMISSIVE_LID`] off-subnet).
    pub slid: u16,
    /// The peer's LID.
    pub dlid: u16,
    /// Flow label (20 bits).
    pub flow_label: u32,
    /// Traffic class.
    pub traffic_class: u8,
    /// Hop limit (at most 1 inside the subnet).
    pub hop_limit: u8,
    /// Service level.
    pub sl: u8,
    /// Static rate (IB encoding).
    pub rate: u8,
    /// MTU (IB encoding).
    pub mtu: u8,
    /// Partition key.
    pub pkey: u16,
    /// Packet lifetime (IBA time exponent).
    pub packet_life_time: u8,
}

impl RoutePath {
    /// Whether the path stays inside the local subnet.
    pub const fn subnet_local(&self) -> bool {
        self.hop_limit <= 1
    }

    /// The path as a REQ names it from this side, with `ack_delay` the
    /// local CA's ACK delay. Off-subnet the LIDs are not ours to know:
    /// the local one is the peer's inbound DLID if a record gave one.
    pub fn req_path(&self, inbound_dlid: Option<u16>, ack_delay: IbaTime) -> ReqPath {
        let (local, remote) = if self.subnet_local() {
            (self.slid, self.dlid)
        } else {
            (inbound_dlid.unwrap_or(PERMISSIVE_LID), PERMISSIVE_LID)
        };
        ReqPath {
            local_port_lid: local,
            remote_port_lid: remote,
            local_port_gid: self.sgid,
            remote_port_gid: self.dgid,
            flow_label: self.flow_label & FLOW_LABEL_MASK,
            packet_rate: self.rate & 0x3F,
            traffic_class: self.traffic_class,
            hop_limit: self.hop_limit,
            sl: self.sl & 0xF,
            subnet_local: self.subnet_local(),
            local_ack_timeout: ack_timeout(ack_delay, IbaTime::new(self.packet_life_time)),
        }
    }

    /// A REQ's path as the receiver sees it (source = the receiver), with
    /// the REQ's P_Key and MTU: 6.12's conversion of a received path.
    pub fn from_received(p: &ReqPath, pkey: u16, mtu: u8, kind: PathKind) -> Self {
        RoutePath {
            kind,
            sgid: p.remote_port_gid,
            dgid: p.local_port_gid,
            slid: p.remote_port_lid,
            dlid: p.local_port_lid,
            flow_label: p.flow_label,
            traffic_class: p.traffic_class,
            hop_limit: p.hop_limit,
            sl: p.sl,
            rate: p.packet_rate,
            mtu,
            pkey,
            packet_life_time: packet_life_time(p.local_ack_timeout),
        }
    }
}

/// The packet lifetime of a path whose local ACK timeout a REQ or LAP
/// carries (the C CM's conversion: one exponent less, floored at 0).
pub const fn packet_life_time(local_ack_timeout: IbaTime) -> u8 {
    local_ack_timeout.exponent().saturating_sub(1)
}

/// A resolved route: the path, where the CM sends to reach the peer, and
/// the local CA's ACK delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route<A> {
    /// The primary path.
    pub path: RoutePath,
    /// The CM's address of the peer (on a passive id, where the REQ came
    /// from).
    pub peer: Option<A>,
    /// The local CA's ACK delay.
    pub ack_delay: IbaTime,
}

/// What resolving a route takes: a path query (IB) or a path made from
/// the resolved addresses (RoCE), on the id's device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteWork {
    /// The device the address resolution chose.
    pub device: DeviceId,
    /// How long the embedding may take.
    pub timeout_ms: u32,
    /// The type of service asked for (`rdma_set_service_type`), if set.
    pub tos: Option<u8>,
}

impl<C: Collections, A: Copy + Ord> RdmaCm<C, A> {
    /// `rdma_resolve_route`: ADDR_RESOLVED -> ROUTE_QUERY (`Invalid` in
    /// any other state).
    pub fn resolve_route(&mut self, id: RdmaId, timeout_ms: u32) -> Result<RouteWork, RdmaCmError> {
        let rec = self.ids.get_mut(&id).ok_or(RdmaCmError::NoSuchId)?;
        if rec.state != IdState::AddrResolved {
            return Err(RdmaCmError::Invalid);
        }
        let device = rec.device.ok_or(RdmaCmError::Invalid)?;
        rec.state = IdState::RouteQuery;
        Ok(RouteWork {
            device,
            timeout_ms,
            tos: rec.tos,
        })
    }

    /// The route query could not even start: ROUTE_QUERY back to
    /// ADDR_RESOLVED, with no event.
    pub fn route_query_failed(&mut self, id: RdmaId) {
        if let Some(rec) = self.ids.get_mut(&id) {
            if rec.state == IdState::RouteQuery {
                rec.state = IdState::AddrResolved;
            }
        }
    }

    /// The outcome of an id's route resolution: ROUTE_QUERY to
    /// ROUTE_RESOLVED, or back to ADDR_RESOLVED, with the ROUTE_RESOLVED or
    /// ROUTE_ERROR event (the status an errno from the embedding). False,
    /// and no event, if the id is gone or no longer resolving.
    pub fn route_resolved<H: Host<A>>(
        &mut self,
        host: &mut H,
        id: RdmaId,
        outcome: Result<Route<A>, i32>,
    ) -> bool {
        let Some(rec) = self.ids.get(&id) else {
            return false;
        };
        if rec.state != IdState::RouteQuery {
            return false;
        }
        // A RoCE route watches its destination's neighbour entry, found by
        // its address when the entry changes (no room to record that: the
        // route is not resolved).
        let watch = match (&outcome, rec.dst.and_then(|d| d.ip_key())) {
            (Ok(route), Some(key)) if route.path.kind != PathKind::Ib => Some(key),
            _ => None,
        };
        let outcome = match (outcome, watch) {
            (Ok(route), Some(_)) if rec.watches_neighbour => Ok(route),
            (Ok(route), Some(key)) => match self.watch(key, id) {
                Ok(()) => Ok(route),
                Err(_) => Err(ENOMEM),
            },
            (other, _) => other,
        };
        let Some(rec) = self.ids.get_mut(&id) else {
            return false;
        };
        let event = match outcome {
            Ok(route) => {
                rec.watches_neighbour = watch.is_some();
                rec.route = Some(route);
                rec.state = IdState::RouteResolved;
                RdmaEvent::plain(EventKind::RouteResolved, EventStatus::Ok)
            }
            Err(errno) => {
                rec.state = IdState::AddrResolved;
                RdmaEvent::plain(EventKind::RouteError, EventStatus::Errno(errno))
            }
        };
        host.event(id, event);
        true
    }

    /// Gives a ROUTE_RESOLVED id's route the CM's address of its peer on
    /// the id's device (`peer_on`), if it has none yet: an embedding may
    /// resolve a route without one and work it out when the id connects
    /// (6.12 makes the address handle only in `ib_send_cm_req`). Called
    /// under the same hold as the `connect` that needs it.
    pub fn supply_peer(&mut self, id: RdmaId, peer_on: impl FnOnce(DeviceId) -> A) {
        let Some(rec) = self.ids.get_mut(&id) else {
            return;
        };
        if rec.state != IdState::RouteResolved {
            return;
        }
        if let (Some(route), Some(device)) = (rec.route.as_mut(), rec.device) {
            if route.peer.is_none() {
                route.peer = Some(peer_on(device));
            }
        }
    }

    /// `rdma_set_ib_path`: a route the consumer found itself, on an
    /// ADDR_RESOLVED id, which becomes ROUTE_RESOLVED at once.
    pub fn set_route(&mut self, id: RdmaId, route: Route<A>) -> Result<(), RdmaCmError> {
        let rec = self.ids.get_mut(&id).ok_or(RdmaCmError::NoSuchId)?;
        if rec.state != IdState::AddrResolved {
            return Err(RdmaCmError::Invalid);
        }
        rec.route = Some(route);
        rec.state = IdState::RouteResolved;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roce_path() -> RoutePath {
        RoutePath {
            kind: PathKind::RoceV2,
            sgid: [1; 16],
            dgid: [2; 16],
            slid: 0,
            dlid: 0,
            flow_label: 0x12345,
            traffic_class: 32,
            hop_limit: 64,
            sl: 3,
            rate: 3,
            mtu: 3,
            pkey: 0xFFFF,
            packet_life_time: 18,
        }
    }

    #[test]
    fn a_path_survives_the_round_trip_through_a_req() {
        let p = roce_path();
        let wire = p.req_path(None, IbaTime::new(15));
        assert_eq!(
            (wire.local_port_lid, wire.remote_port_lid),
            (0xFFFF, 0xFFFF)
        );
        assert!(!wire.subnet_local);
        // the peer sees it the other way round
        let seen = RoutePath::from_received(&wire, p.pkey, p.mtu, p.kind);
        assert_eq!((seen.sgid, seen.dgid), (p.dgid, p.sgid));
        assert_eq!(seen.packet_life_time, p.packet_life_time);
        assert_eq!(
            (seen.flow_label, seen.traffic_class, seen.hop_limit, seen.sl),
            (p.flow_label, p.traffic_class, p.hop_limit, p.sl)
        );
    }

    #[test]
    fn a_subnet_local_path_names_its_lids() {
        let mut p = roce_path();
        p.hop_limit = 0;
        p.slid = 5;
        p.dlid = 9;
        let wire = p.req_path(None, IbaTime::new(0));
        assert_eq!((wire.local_port_lid, wire.remote_port_lid), (5, 9));
        assert!(wire.subnet_local);
    }

    const LINK: RoceLink = RoceLink {
        kind: PathKind::RoceV2,
        udp_encap: true,
        hop_limit: 64,
        sl: 5,
        mtu: 3,
    };

    #[test]
    fn a_roce_v4_path_maps_its_addresses_and_hashes_its_ports() {
        let src = SockAddr::V4 {
            addr: [10, 0, 0, 1],
            port: 40000,
        };
        let dst = SockAddr::V4 {
            addr: [10, 0, 0, 2],
            port: 4420,
        };
        let p = super::roce_path(&src, &dst, 96, 18, &LINK);
        assert_eq!(p.sgid[10..], [0xff, 0xff, 10, 0, 0, 1]);
        assert_eq!(p.dgid[..10], [0; 10]);
        assert_eq!(p.dgid[12..], [10, 0, 0, 2]);
        assert_eq!(p.flow_label, (40000 * 31 + 4420) & FLOW_LABEL_MASK);
        assert_eq!((p.traffic_class, p.hop_limit, p.sl), (96, 64, 5));
        assert_eq!((p.mtu, p.pkey, p.packet_life_time), (3, 0xFFFF, 18));
        assert_eq!(
            (p.slid, p.dlid, p.rate, p.kind),
            (0, 0, 0, PathKind::RoceV2)
        );
        // RoCE v1 carries no flow label.
        let v1 = RoceLink {
            kind: PathKind::RoceV1,
            udp_encap: false,
            ..LINK
        };
        assert_eq!(super::roce_path(&src, &dst, 0, 18, &v1).flow_label, 0);
    }

    #[test]
    fn an_ipv6_flow_label_wins_over_the_hash_and_af_ib_stays_in_the_subnet() {
        let v6 = |flowinfo| SockAddr::V6 {
            addr: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7],
            port: 1,
            flowinfo,
            scope_id: 2,
        };
        let dst = v6(0);
        let p = super::roce_path(&v6(0xABCDE), &dst, 0, 18, &LINK);
        assert_eq!((p.flow_label, p.sgid), (0xABCDE, dst.gid()));
        assert_eq!(
            super::roce_path(&v6(0), &dst, 0, 18, &LINK).flow_label,
            31 + 1
        );
        let ib = SockAddr::Ib {
            gid: [9; 16],
            sid: 0x0106_0000_0000_1234,
            sid_mask: !0,
            pkey: 0xFFFF,
            flowinfo: 0,
            scope_id: 0,
        };
        let p = super::roce_path(&ib, &ib, 0, 18, &LINK);
        assert_eq!((p.hop_limit, p.dgid), (1, [9; 16]));
        assert_eq!(p.flow_label, (0x1234 * 31 + 0x1234) & FLOW_LABEL_MASK);
    }

    #[test]
    fn roce_records_raised_by_an_ip_network() {
        assert_eq!(super::roce_record_kind(false, false), PathKind::RoceV1);
        assert_eq!(super::roce_record_kind(false, true), PathKind::RoceV2);
        assert_eq!(super::roce_record_kind(true, false), PathKind::RoceV2);
    }

    /// 6.12's `iboe_get_mtu`: the largest IB MTU left after 96 bytes of
    /// headers, 0 below 256.
    #[test]
    fn roce_mtu_leaves_room_for_the_headers() {
        assert_eq!(super::roce_mtu(1500), 3);
        assert_eq!(super::roce_mtu(9000), 5);
        assert_eq!(super::roce_mtu(4096 + 96), 5);
        assert_eq!(super::roce_mtu(4096 + 95), 4);
        assert_eq!(super::roce_mtu(256 + 96), 1);
        assert_eq!(super::roce_mtu(255 + 96), 0);
        assert_eq!(super::roce_mtu(0), 0);
    }
}
