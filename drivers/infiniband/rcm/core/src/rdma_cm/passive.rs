// SPDX-License-Identifier: GPL-2.0

//! The passive side: `rdma_listen` (the port, then a CM listener on the
//! port's service id, shared by every rdma_cm id listening on it) and a
//! REQ for it, which picks the listening id by the cma header's
//! destination, creates the new id and hands it to the listener's
//! consumer (6.12's `cma_ib_req_handler`).

use super::addr::{Family, SockAddr};
use super::bind::{NetId, PortKey};
use super::endpoint::{BindContext, Id, RdmaCm, RdmaCmError, RdmaId, RdmaQpType};
use super::event::{ConnData, RdmaEvent};
use super::host::{Host, IwCall, IwOptions};
use super::port_space::PortSpace;
use super::route::{Route, RoutePath};
use super::state::IdState;
use crate::cm::store::{Collections, OrderedMap};
use crate::cm::{CommId, DeviceId, ListenSpec, Owner, QpType, MRA_FLAG_DELAY};
use crate::wire::cma_hdr::{CmaHdr, IpAddr, CMA_HDR_LEN};
use crate::wire::req::Req;

/// What rdma_cm's CM listeners are shared under (the C API shares by
/// handler address, which is never 1).
pub const SHARE_TAG: u64 = 1;

/// The delayed MRA a new connection stores: sent only if the peer repeats
/// its REQ before the consumer answers (6.12's `CMA_CM_MRA_SETTING`).
pub const MRA_SETTING: u8 = MRA_FLAG_DELAY | 24;

/// A listener's device for a wildcard listen (the CM listener takes REQs
/// on every device).
pub const ANY_DEVICE: DeviceId = DeviceId(u32::MAX);

/// Where a REQ arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// The namespace of the device's network interface.
    pub net: NetId,
    /// The device.
    pub device: DeviceId,
    /// A random starting PSN for the new id.
    pub psn: u32,
}

impl<C: Collections, A: Copy + Ord> RdmaCm<C, A> {
    /// `rdma_listen`: ADDR_BOUND (or IDLE, which binds the IPv4 wildcard
    /// first) -> LISTEN, holding the port alone (a REUSEADDR id drops the
    /// option if it may), with a CM listener on the port's service id on
    /// the id's device, or on every device for a wildcard address. On
    /// failure the id stays ADDR_BOUND, as in 6.12.
    pub fn listen<H: Host<A>>(
        &mut self,
        host: &mut H,
        id: RdmaId,
        backlog: u32,
        cx: &BindContext,
    ) -> Result<(), RdmaCmError> {
        let r = *self.ids.get(&id).ok_or(RdmaCmError::NoSuchId)?;
        if r.state == IdState::Idle {
            let any = SockAddr::V4 {
                addr: [0; 4],
                port: 0,
            };
            self.bind_addr(id, any, cx)?;
        } else if r.state != IdState::AddrBound {
            return Err(RdmaCmError::Invalid);
        }
        if r.reuseaddr {
            self.ports.check_listen(id.0)?;
        }
        let rec = *self.ids.get(&id).ok_or(RdmaCmError::NoSuchId)?;
        let src = rec.src.ok_or(RdmaCmError::Invalid)?;
        let service_id = match src {
            SockAddr::Ib { sid, .. } => sid,
            _ => rec.ps.service_id(src.port()),
        };
        let device = rec.device;
        let options = rec.iw_options();
        if device.is_some_and(|d| host.device(d).iwarp) {
            // No CM listener: only the device's iWARP CM hears requests.
            self.listening(id, backlog, None);
            let call = IwCall::Listen {
                id,
                device,
                backlog,
                options,
            };
            return self.iw_then(host, call);
        }
        let guid = device.map_or(0, |d| host.device(d).guid);
        let spec = ListenSpec {
            device,
            service_id,
            service_mask: 0,
            share_tag: Some(SHARE_TAG),
            join: true,
        };
        let holder = host.cm(|ep, now, out| {
            let comm = ep.create_owned_id(device.unwrap_or(ANY_DEVICE), guid, Owner::RdmaCm)?;
            match ep.listen(comm, spec, out) {
                Ok(holder) => {
                    if holder != comm {
                        // Joined an existing listener: this id is spare.
                        let _ = ep.destroy(now, comm, false, out);
                    }
                    Ok(holder)
                }
                Err(e) => {
                    let _ = ep.destroy(now, comm, false, out);
                    Err(e)
                }
            }
        })?;
        let shares = self.cm_listeners.get(&holder).copied().unwrap_or(0);
        if self.cm_listeners.try_insert(holder, shares + 1).is_err() {
            if let Some(n) = self.cm_listeners.get_mut(&holder) {
                *n = shares + 1;
            } else {
                let _ = host.cm(|ep, now, out| ep.destroy(now, holder, false, out));
                return Err(RdmaCmError::NoMemory);
            }
        }
        self.listening(id, backlog, Some(holder));
        if device.is_some() {
            return Ok(());
        }
        // A wildcard listener hears iWARP devices' requests too.
        let call = IwCall::Listen {
            id,
            device: None,
            backlog,
            options,
        };
        self.iw_then(host, call)
    }

    /// A listen whose iWARP CM could not listen: LISTEN -> ADDR_BOUND,
    /// without its share of a CM listener.
    pub(crate) fn not_listening<H: Host<A>>(&mut self, host: &mut H, id: RdmaId) {
        let Some(rec) = self.ids.get_mut(&id) else {
            return;
        };
        if rec.state != IdState::Listen {
            return;
        }
        rec.state = IdState::AddrBound;
        rec.backlog = 0;
        if let Some(holder) = rec.cm_listener.take() {
            self.drop_cm_listener(host, holder);
        }
    }

    /// `id` is LISTEN, sharing CM listener `holder` if it has one.
    fn listening(&mut self, id: RdmaId, backlog: u32, holder: Option<CommId>) {
        if let Some(rec) = self.ids.get_mut(&id) {
            rec.reuseaddr = false;
            rec.backlog = backlog;
            rec.state = IdState::Listen;
            rec.cm_listener = holder;
        }
    }

    /// The listening ids bound to no device, with their backlog and
    /// iWARP options: an iWARP device that comes later listens for them.
    pub fn wildcard_listeners(&self) -> impl Iterator<Item = (RdmaId, u32, IwOptions)> + '_ {
        self.ids
            .keys()
            .filter_map(move |id| self.wildcard_listener(id).map(|(b, o)| (id, b, o)))
    }

    /// `id`'s backlog and iWARP options if it listens on a wildcard
    /// address (on every device).
    pub fn wildcard_listener(&self, id: RdmaId) -> Option<(u32, IwOptions)> {
        let r = self.ids.get(&id)?;
        (r.state == IdState::Listen && r.device.is_none()).then(|| (r.backlog, r.iw_options()))
    }

    /// Gives up one share of a CM listener.
    pub(crate) fn drop_cm_listener<H: Host<A>>(&mut self, host: &mut H, holder: CommId) {
        match self.cm_listeners.get_mut(&holder) {
            Some(n) if *n > 1 => *n -= 1,
            _ => {
                self.cm_listeners.remove(&holder);
            }
        }
        let _ = host.cm(|ep, now, out| ep.destroy(now, holder, false, out));
    }

    /// Whether `comm` is one of rdma_cm's CM listeners.
    pub fn holds_listener(&self, comm: CommId) -> bool {
        self.cm_listeners.get(&comm).is_some()
    }

    /// A REQ for one of rdma_cm's CM listeners created `comm`: hands a new
    /// CONNECT id to the listening id the REQ is for, or rejects it
    /// (`Err`: the embedding destroys `comm`, which sends a REJ, as 6.12's
    /// ib_cm does when its handler fails).
    pub fn req_received<H: Host<A>>(
        &mut self,
        host: &mut H,
        at: Arrival,
        comm: CommId,
        req: &Req,
        attr_mod: u32,
    ) -> Result<RdmaId, RdmaCmError> {
        let (qp_type, peer) = host.cm_read(|ep| {
            ep.get(comm)
                .map(|c| (c.qp_type(), c.peer().copied()))
                .unwrap_or((QpType::XrcTgt, None))
        });
        let qp_type = match qp_type {
            QpType::Rc => RdmaQpType::Rc,
            QpType::Uc => RdmaQpType::Uc,
            _ => return Err(RdmaCmError::Invalid),
        };
        let info = host.device(at.device);
        let route = Route {
            path: RoutePath::from_received(
                &req.primary_path,
                req.partition_key,
                req.path_mtu,
                info.path_kind,
            ),
            peer,
            ack_delay: info.ack_delay,
        };
        let p = &req.primary_path;
        let incoming = Incoming {
            service_id: req.service_id,
            pkey: req.partition_key,
            private_data: &req.private_data,
            gids: Some((p.remote_port_gid, p.local_port_gid)),
            qp_type,
        };
        let (child, listener, data) = self.new_passive_id(at, comm, &incoming, Some(route))?;
        let _ = host.cm(|ep, _, out| ep.send_mra(comm, MRA_SETTING, &[], out));
        let mut conn = ConnData::with_data(data, data.len());
        // The REQ's resources seen from the receiver: what it may issue is
        // what the sender accepts, and the reverse (as 6.12 reports them).
        conn.responder_resources = req.initiator_depth;
        conn.initiator_depth = req.responder_resources;
        conn.flow_control = req.end_to_end_flow_control;
        conn.retry_count = req.retry_count;
        conn.rnr_retry_count = req.rnr_retry_count;
        conn.srq = req.srq;
        conn.qp_num = req.local_qpn;
        conn.ece_vendor_id = req.vendor_id;
        conn.ece_attr_mod = attr_mod;
        host.event(child, RdmaEvent::connect_request(listener, conn));
        Ok(child)
    }

    /// A new passive id for a request that `comm` holds: the listening id
    /// it is for (by port space and port from its service id, then by the
    /// cma header's destination), its addresses from the header (AF_IB:
    /// the GIDs), CONNECT. Returns the id, its listener and the consumer's
    /// part of the private data.
    pub(crate) fn new_passive_id<'d>(
        &mut self,
        at: Arrival,
        comm: CommId,
        incoming: &Incoming<'d>,
        route: Option<Route<A>>,
    ) -> Result<(RdmaId, RdmaId, &'d [u8]), RdmaCmError> {
        let (ps, port) =
            PortSpace::of_service_id(incoming.service_id).ok_or(RdmaCmError::Invalid)?;
        let hdr = CmaHdr::parse(incoming.private_data).ok();
        let key = PortKey {
            net: at.net,
            ps,
            port,
        };
        let listener = self
            .ports
            .holders_of(key)
            .map(RdmaId)
            .find(|l| {
                self.ids
                    .get(l)
                    .is_some_and(|rec| takes_request(rec, at.device, hdr.as_ref()))
            })
            .ok_or(RdmaCmError::Invalid)?;
        let lrec = *self.ids.get(&listener).ok_or(RdmaCmError::NoSuchId)?;
        if lrec.qp_type != incoming.qp_type {
            return Err(RdmaCmError::Invalid);
        }
        let ib = lrec.src.map(|s| s.family()) == Some(Family::Ib);
        let (src, dst) = match (ib, incoming.gids, hdr) {
            (true, Some((ours, theirs)), _) => (
                ib_addr(ours, incoming.service_id, incoming.pkey),
                ib_addr(theirs, incoming.service_id, incoming.pkey),
            ),
            (false, _, Some(h)) => (ip_addr(h.dst, port), ip_addr(h.src, h.src_port)),
            _ => return Err(RdmaCmError::Invalid),
        };
        let mut rec = Id::new(lrec.net, lrec.ps, incoming.qp_type, at.psn);
        rec.state = IdState::Connect;
        rec.src = Some(src);
        rec.dst = Some(dst);
        rec.device = Some(at.device);
        rec.cm = Some(comm);
        rec.route = route;
        rec.listener = Some(listener);
        let child = self.insert_id(rec)?;
        if self.by_comm.try_insert(comm, child).is_err() {
            self.remove_id(child);
            return Err(RdmaCmError::NoMemory);
        }
        let offset = if ib { 0 } else { CMA_HDR_LEN };
        let data = incoming.private_data.get(offset..).unwrap_or(&[]);
        Ok((child, listener, data))
    }
}

/// What a request (REQ or SIDR_REQ) says that picks its listener and
/// names the new id.
pub(crate) struct Incoming<'a> {
    pub(crate) service_id: u64,
    pub(crate) pkey: u16,
    pub(crate) private_data: &'a [u8],
    /// (ours, theirs) for AF_IB listeners (a REQ's path GIDs).
    pub(crate) gids: Option<([u8; 16], [u8; 16])>,
    pub(crate) qp_type: RdmaQpType,
}

/// Whether a listening id takes a REQ that arrived on `device` with
/// header `hdr` (6.12's `cma_match_private_data` and device check).
fn takes_request<A>(rec: &Id<A>, device: DeviceId, hdr: Option<&CmaHdr>) -> bool {
    if rec.state != IdState::Listen || rec.device.is_some_and(|d| d != device) {
        return false;
    }
    let Some(src) = rec.src else {
        return false;
    };
    if src.is_any() && !rec.afonly {
        return true;
    }
    match (src, hdr.map(|h| h.dst)) {
        (SockAddr::V4 { addr, .. }, Some(IpAddr::V4(dst))) => src.is_any() || addr == dst,
        (SockAddr::V6 { addr, .. }, Some(IpAddr::V6(dst))) => src.is_any() || addr == dst,
        (SockAddr::Ib { .. }, _) => true,
        _ => false,
    }
}

/// An IP header address as a socket address with `port`.
fn ip_addr(ip: IpAddr, port: u16) -> SockAddr {
    match ip {
        IpAddr::V4(addr) => SockAddr::V4 { addr, port },
        IpAddr::V6(addr) => SockAddr::V6 {
            addr,
            port,
            flowinfo: 0,
            scope_id: 0,
        },
    }
}

/// An AF_IB address for a GID and service id.
fn ib_addr(gid: [u8; 16], sid: u64, pkey: u16) -> SockAddr {
    SockAddr::Ib {
        gid,
        sid,
        sid_mask: u64::MAX,
        pkey,
        flowinfo: 0,
        scope_id: 0,
    }
}
