// SPDX-License-Identifier: GPL-2.0

//! Routes: the path an id's connection takes (`struct sa_path_rec` as far
//! as the CM uses it), how one is resolved (`rdma_resolve_route`: work out,
//! outcome in, as for addresses), set directly (`rdma_set_ib_path`), and
//! how a path turns into a REQ's path and back.

use super::endpoint::{RdmaCm, RdmaCmError, RdmaId};
use super::event::{EventKind, EventStatus, RdmaEvent};
use super::host::Host;
use super::resolve::ENOMEM;
use super::state::IdState;
use crate::cm::store::{Collections, InsertError, OrderedMap};
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
            flow_label: self.flow_label & 0x000F_FFFF,
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
            (Ok(route), Some(key)) => match self.watchers.try_insert((key, id), ()) {
                Ok(()) | Err(InsertError::Occupied(())) => Ok(route),
                Err(InsertError::NoMemory(())) => Err(ENOMEM),
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
}
