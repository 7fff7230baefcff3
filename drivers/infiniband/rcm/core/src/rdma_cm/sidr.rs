// SPDX-License-Identifier: GPL-2.0

//! UD ids, which "connect" by service id resolution (SIDR): the active
//! side's SIDR_REQ carries the cma header, the passive side's consumer
//! accepts with its QP number and Q_Key (or rejects), and the answer
//! becomes ESTABLISHED or UNREACHABLE, as 6.12's `cma_resolve_ib_udp`,
//! `cma_send_sidr_rep` and `cma_sidr_rep_handler` do.

use super::connect::{request_data, service_id_of, ConnParams};
use super::endpoint::{RdmaCm, RdmaCmError, RdmaId, RdmaQpType};
use super::event::{ConnData, EventKind, EventStatus, RdmaEvent};
use super::host::Host;
use super::passive::{Arrival, Incoming};
use super::port_space::PortSpace;
use super::route::{Route, RoutePath};
use crate::cm::store::Collections;
use crate::cm::{fill, CommId, Event};
use crate::reason::SidrStatus;
use crate::wire::sidr::{SidrRep, SidrReq};

/// The Q_Key of UD ids in the UDP and IB port spaces (`RDMA_UDP_QKEY`).
pub const UDP_QKEY: u32 = 0x0123_4567;

/// The Q_Key a UD id of port space `ps` uses unless told otherwise
/// (IPoIB's comes from its broadcast group, which rcm does not join).
pub const fn default_qkey(ps: PortSpace) -> Option<u32> {
    match ps {
        PortSpace::Udp | PortSpace::Ib => Some(UDP_QKEY),
        _ => None,
    }
}

impl<C: Collections, A: Copy + Ord> RdmaCm<C, A> {
    /// `rdma_connect` for a UD id (ROUTE_RESOLVED, checked by the caller):
    /// CONNECT, a SIDR_REQ with the cma header in its private data.
    pub(crate) fn connect_ud<H: Host<A>>(
        &mut self,
        host: &mut H,
        id: RdmaId,
        p: &ConnParams<'_>,
    ) -> Result<(), RdmaCmError> {
        let r = *self.ids.get(&id).ok_or(RdmaCmError::NoSuchId)?;
        let (Some(route), Some(device), Some(src), Some(dst)) = (r.route, r.device, r.src, r.dst)
        else {
            return Err(RdmaCmError::Invalid);
        };
        let peer = route.peer.ok_or(RdmaCmError::Invalid)?;
        let mut req = SidrReq::zeroed();
        req.partition_key = route.path.pkey;
        req.service_id = service_id_of(r.ps, &dst);
        req.private_data = request_data(&src, &dst, p.private_data)?;
        let (timeout_ms, retries) = (r.cm_response.sidr_timeout_ms(), r.cm_response.retries());
        self.start_exchange(host, id, device, |ep, now, comm, out| {
            ep.send_sidr_req(now, comm, &req, peer, timeout_ms, retries, out)
        })
    }

    /// Takes `qkey` for a UD id: a Q_Key must be set, and once set it
    /// stays (6.12's `cma_set_qkey`).
    fn take_qkey(&mut self, id: RdmaId, qkey: u32) -> Result<(), RdmaCmError> {
        let rec = self.ids.get_mut(&id).ok_or(RdmaCmError::NoSuchId)?;
        if qkey == 0 || (rec.qkey != 0 && rec.qkey != qkey) {
            return Err(RdmaCmError::Invalid);
        }
        rec.qkey = qkey;
        Ok(())
    }

    /// A UD id's Q_Key, its port space's default if it has none yet (for
    /// its QP's INIT attributes, 6.12's `cma_set_default_qkey`).
    pub fn ensure_qkey(&mut self, id: RdmaId) -> Result<u32, RdmaCmError> {
        let rec = self.ids.get_mut(&id).ok_or(RdmaCmError::NoSuchId)?;
        if rec.qkey == 0 {
            rec.qkey = default_qkey(rec.ps).ok_or(RdmaCmError::Invalid)?;
        }
        Ok(rec.qkey)
    }

    /// `rdma_accept` for a UD id: a SIDR_REP "service resolved" with the
    /// id's QP number and Q_Key (the consumer's, else the port space's).
    pub(crate) fn accept_ud<H: Host<A>>(
        &mut self,
        host: &mut H,
        id: RdmaId,
        comm: CommId,
        p: Option<&ConnParams<'_>>,
    ) -> Result<(), RdmaCmError> {
        let r = *self.ids.get(&id).ok_or(RdmaCmError::NoSuchId)?;
        let qkey = match p.map_or(0, |p| p.qkey) {
            0 => default_qkey(r.ps).ok_or(RdmaCmError::Invalid)?,
            q => q,
        };
        self.take_qkey(id, qkey)?;
        let data = p.map_or(&[][..], |p| p.private_data);
        let mut rep = SidrRep::zeroed();
        rep.status = SidrStatus::Success;
        rep.qpn = r.qp_num;
        rep.qkey = qkey;
        rep.set_vendor_id(r.ece.0);
        rep.private_data = fill(data).ok_or(RdmaCmError::Invalid)?;
        host.cm(|ep, _, out| ep.send_sidr_rep(comm, &rep, out))?;
        Ok(())
    }

    /// `rdma_reject` for a UD id: a SIDR_REP "rejected" with the data.
    pub(crate) fn reject_ud<H: Host<A>>(
        &mut self,
        host: &mut H,
        comm: CommId,
        private_data: &[u8],
    ) -> Result<(), RdmaCmError> {
        let mut rep = SidrRep::zeroed();
        rep.status = SidrStatus::Reject;
        rep.private_data = fill(private_data).ok_or(RdmaCmError::Invalid)?;
        host.cm(|ep, _, out| ep.send_sidr_rep(comm, &rep, out))?;
        Ok(())
    }

    /// A SIDR_REQ for one of rdma_cm's CM listeners created `comm`: a new
    /// UD id for the listening UD id it names, with CONNECT_REQUEST; or
    /// `Err` (the embedding destroys `comm`, which answers "rejected").
    pub fn sidr_req_received<H: Host<A>>(
        &mut self,
        host: &mut H,
        at: Arrival,
        comm: CommId,
        req: &SidrReq,
    ) -> Result<RdmaId, RdmaCmError> {
        let incoming = Incoming {
            service_id: req.service_id,
            pkey: req.partition_key,
            private_data: &req.private_data,
            gids: None,
            qp_type: RdmaQpType::Ud,
        };
        // No path: where the SIDR_REQ came from, for the device and port.
        let peer = host.cm_read(|ep| ep.get(comm).and_then(|c| c.peer().copied()));
        let route = Route {
            path: RoutePath {
                pkey: req.partition_key,
                ..RoutePath::default()
            },
            peer,
            ack_delay: host.device(at.device).ack_delay,
        };
        let (child, listener, data) = self.new_passive_id(at, comm, &incoming, Some(route))?;
        host.event(
            child,
            RdmaEvent::connect_request(listener, ConnData::with_data(data, data.len())),
        );
        Ok(child)
    }

    /// What the answer to a UD id's SIDR_REQ means for it: ESTABLISHED
    /// with the peer's QP number and Q_Key, UNREACHABLE (no answer, or a
    /// status other than "service resolved"), or ADDR_ERROR for a Q_Key
    /// other than the id's. `None` for events SIDR does not have.
    pub(crate) fn sidr_outcome(&mut self, id: RdmaId, event: &Event) -> Option<RdmaEvent> {
        match event {
            Event::SidrReqError(_) => Some(RdmaEvent::plain(
                EventKind::Unreachable,
                EventStatus::TimedOut,
            )),
            Event::SidrRepReceived(rep) if rep.status != SidrStatus::Success => Some(
                RdmaEvent::plain(EventKind::Unreachable, EventStatus::Sidr(rep.status)),
            ),
            Event::SidrRepReceived(rep) => Some(match self.take_qkey(id, rep.qkey) {
                Err(e) => RdmaEvent::plain(EventKind::AddrError, EventStatus::Failed(e)),
                Ok(()) => {
                    let mut conn = ConnData::with_data(&rep.private_data, rep.private_data.len());
                    conn.qp_num = rep.qpn;
                    conn.qkey = rep.qkey;
                    RdmaEvent {
                        kind: EventKind::Established,
                        status: EventStatus::Ok,
                        listener: None,
                        group: None,
                        conn,
                    }
                }
            }),
            _ => None,
        }
    }
}
