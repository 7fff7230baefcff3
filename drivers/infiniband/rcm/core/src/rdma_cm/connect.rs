// SPDX-License-Identifier: GPL-2.0

//! Connecting ids over the CM: `rdma_connect` (a REQ with the cma header
//! in its private data), `rdma_accept`, `rdma_reject`, `rdma_disconnect`
//! and `rdma_notify`, as 6.12 makes them, plus what the consumer tells
//! rdma_cm about its QP and options.

use super::addr::SockAddr;
use super::endpoint::{Id, RdmaCm, RdmaCmError, RdmaId, RdmaQpType};
use super::event::{EventKind, EventStatus, RdmaEvent};
use super::host::{AfterReady, Host, IwCall, QpLimits, ReadyMove};
use super::private_data::PrivateData;
use super::resolve::ENOMEM;
use super::state::IdState;
use crate::cm::store::{Collections, OrderedMap};
use crate::cm::{fill, CmError, CommId, DeviceId, Endpoint, Millis, Owner, Transport};
use crate::reason::RejectReason;
use crate::timer::IbaTime;
use crate::wire::cma_hdr::{CmaHdr, IpAddr, CMA_HDR_LEN};
use crate::wire::rep::Rep;
use crate::wire::req::Req;

/// The most transport and RNR retries a connection asks for.
const MAX_RETRIES: u8 = 7;

/// What the consumer asks of a connection (`struct rdma_conn_param`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnParams<'a> {
    /// Private data for the peer.
    pub private_data: &'a [u8],
    /// Incoming RDMA reads and atomics.
    pub responder_resources: u8,
    /// Outgoing RDMA reads and atomics.
    pub initiator_depth: u8,
    /// End-to-end flow control.
    pub flow_control: bool,
    /// Transport retries (at most 7 are asked for).
    pub retry_count: u8,
    /// RNR retries (at most 7).
    pub rnr_retry_count: u8,
    /// The QP uses an SRQ (ids without a QP of rdma_cm's).
    pub srq: bool,
    /// The QP number (ids without a QP of rdma_cm's).
    pub qp_num: u32,
    /// A UD id's Q_Key on accept (0: the port space's default).
    pub qkey: u32,
}

impl<C: Collections, A: Copy + Ord> RdmaCm<C, A> {
    /// The consumer created `id`'s QP through rdma_cm (`rdma_create_qp`):
    /// rdma_cm moves it from now on.
    pub fn set_qp(&mut self, id: RdmaId, qp_num: u32, srq: bool) -> Result<(), RdmaCmError> {
        let rec = self.ids.get_mut(&id).ok_or(RdmaCmError::NoSuchId)?;
        rec.has_qp = true;
        rec.qp_num = qp_num & 0x00FF_FFFF;
        rec.srq = srq;
        Ok(())
    }

    /// The QP is gone (`rdma_destroy_qp`).
    pub fn clear_qp(&mut self, id: RdmaId) {
        if let Some(rec) = self.ids.get_mut(&id) {
            rec.has_qp = false;
        }
    }

    /// `rdma_set_service_type`.
    pub fn set_tos(&mut self, id: RdmaId, tos: u8) -> Result<(), RdmaCmError> {
        let rec = self.ids.get_mut(&id).ok_or(RdmaCmError::NoSuchId)?;
        rec.tos = Some(tos);
        Ok(())
    }

    /// ECE to offer in the REQ or REP (`rdma_connect_ece`,
    /// `rdma_accept_ece`).
    pub fn set_ece(
        &mut self,
        id: RdmaId,
        vendor_id: u32,
        attr_mod: u32,
    ) -> Result<(), RdmaCmError> {
        let rec = self.ids.get_mut(&id).ok_or(RdmaCmError::NoSuchId)?;
        rec.ece = (vendor_id & 0x00FF_FFFF, attr_mod);
        Ok(())
    }

    /// `rdma_connect`: ROUTE_RESOLVED -> CONNECT, sending a REQ whose
    /// private data starts with the cma header (none for AF_IB). On
    /// failure the id is ROUTE_RESOLVED again and has no CM id.
    pub fn connect<H: Host<A>>(
        &mut self,
        host: &mut H,
        id: RdmaId,
        p: &ConnParams<'_>,
    ) -> Result<(), RdmaCmError> {
        let rec = self.ids.get_mut(&id).ok_or(RdmaCmError::NoSuchId)?;
        if rec.state != IdState::RouteResolved {
            return Err(RdmaCmError::Invalid);
        }
        if !rec.has_qp {
            rec.qp_num = p.qp_num & 0x00FF_FFFF;
            rec.srq = p.srq;
        }
        let r = *rec;
        if self.on_iwarp(host, id) {
            return self.connect_iw(host, id, p);
        }
        let (Some(route), Some(device), Some(src), Some(dst)) = (r.route, r.device, r.src, r.dst)
        else {
            return Err(RdmaCmError::Invalid);
        };
        let Some(peer) = route.peer else {
            return Err(RdmaCmError::Invalid);
        };
        let transport = match r.qp_type {
            RdmaQpType::Rc => Transport::Rc,
            RdmaQpType::Uc => Transport::Uc,
            RdmaQpType::Ud => return self.connect_ud(host, id, p),
        };
        let private_data = request_data(&src, &dst, p.private_data)?;
        let (service_type, extended) = transport.req_fields();
        let path = route.path;
        let mut req = Req::zeroed();
        req.vendor_id = r.ece.0;
        req.service_id = service_id_of(r.ps, &dst);
        req.local_qpn = r.qp_num;
        req.responder_resources = p.responder_resources;
        req.initiator_depth = p.initiator_depth;
        req.remote_cm_response_timeout = r.cm_response.timeout();
        req.transport_service_type = service_type;
        req.extended_transport_type = extended;
        req.end_to_end_flow_control = p.flow_control;
        req.starting_psn = r.psn;
        req.local_cm_response_timeout = r.cm_response.timeout();
        req.retry_count = p.retry_count.min(MAX_RETRIES);
        req.partition_key = path.pkey;
        req.path_mtu = path.mtu & 0xF;
        req.rnr_retry_count = p.rnr_retry_count.min(MAX_RETRIES);
        req.max_cm_retries = r.cm_response.retries();
        req.srq = r.srq;
        req.primary_path = path.req_path(None, route.ack_delay);
        req.private_data = private_data;
        let plt = IbaTime::new(path.packet_life_time);
        let attr_mod = r.ece.1;
        self.start_exchange(host, id, device, |ep, now, comm, out| {
            ep.send_req(now, comm, &req, attr_mod, peer, plt, out)
        })
    }

    /// Starts an active id's exchange on a new CM id of `device` with
    /// `send` (a REQ or a SIDR_REQ): the id is CONNECT with that CM id, or,
    /// on failure, unchanged with no CM id.
    pub(crate) fn start_exchange<H: Host<A>>(
        &mut self,
        host: &mut H,
        id: RdmaId,
        device: DeviceId,
        send: impl FnOnce(&mut Endpoint<A, H::Maps>, Millis, CommId, &mut H::Out) -> Result<(), CmError>,
    ) -> Result<(), RdmaCmError> {
        let guid = host.device(device).guid;
        let comm = host.cm(|ep, now, out| {
            let comm = ep.create_owned_id(device, guid, Owner::RdmaCm)?;
            match send(ep, now, comm, out) {
                Ok(()) => Ok(comm),
                Err(e) => {
                    let _ = ep.destroy(now, comm, false, out);
                    Err(e)
                }
            }
        })?;
        if self.by_comm.try_insert(comm, id).is_err() {
            let _ = host.cm(|ep, now, out| ep.destroy(now, comm, true, out));
            return Err(RdmaCmError::NoMemory);
        }
        if let Some(rec) = self.ids.get_mut(&id) {
            rec.cm = Some(comm);
            rec.state = IdState::Connect;
        }
        Ok(())
    }

    /// `rdma_accept` on a CONNECT id: with parameters, answers a REQ with
    /// a REP (rdma_cm's QP moved to RTS first); without, completes a
    /// connection whose REP the consumer took itself (CONNECT_RESPONSE:
    /// QP to RTS, then the RTU). On failure the QP goes to ERR and the
    /// peer gets a REJ, as in 6.12. A QP move is left to the host: the
    /// accept's result is then [`Self::qp_ready_done`]'s.
    pub fn accept<H: Host<A>>(
        &mut self,
        host: &mut H,
        id: RdmaId,
        p: Option<&ConnParams<'_>>,
    ) -> Result<(), RdmaCmError> {
        let rec = self.ids.get_mut(&id).ok_or(RdmaCmError::NoSuchId)?;
        if rec.state != IdState::Connect {
            return Err(RdmaCmError::Invalid);
        }
        if let (false, Some(p)) = (rec.has_qp, p) {
            rec.qp_num = p.qp_num & 0x00FF_FFFF;
            rec.srq = p.srq;
        }
        let r = *rec;
        if r.iw {
            return self.accept_iw(host, id, p);
        }
        let comm = r.cm.ok_or(RdmaCmError::Invalid)?;
        let (limits, then) = match (r.qp_type, p) {
            (RdmaQpType::Ud, p) => return self.accept_ud(host, id, comm, p),
            (_, Some(p)) => {
                let Some(rep) = rep_for(&r, p) else {
                    self.refuse(host, id, comm);
                    return Err(RdmaCmError::Invalid);
                };
                let limits = QpLimits {
                    responder_resources: p.responder_resources,
                    initiator_depth: p.initiator_depth,
                };
                let then = AfterReady::SendRep {
                    rep,
                    attr_mod: r.ece.1,
                };
                (Some(limits), then)
            }
            (_, None) => (None, AfterReady::SendRtu),
        };
        let mv = ReadyMove {
            id,
            comm,
            limits,
            rq_psn: r.psn,
            then,
        };
        if r.has_qp {
            self.ready_then(host, mv)
        } else {
            self.qp_ready_done(host, mv, Ok(()))
        }
    }

    /// Leaves `mv` to the host; one it cannot keep fails at once.
    pub(crate) fn ready_then<H: Host<A>>(
        &mut self,
        host: &mut H,
        mv: ReadyMove,
    ) -> Result<(), RdmaCmError> {
        match host.qp_ready(&mv) {
            Ok(()) => Ok(()),
            Err(_) => self.qp_ready_done(host, mv, Err(ENOMEM)),
        }
    }

    /// The host made `mv` (or failed to: `moved` holds its errno): rdma_cm
    /// sends the REP or RTU that waited for it and, for a REP received,
    /// reports the connection. A failure moves the QP to ERR and rejects
    /// the connection, as in 6.12. An id destroyed meanwhile gets nothing;
    /// one that left its connection otherwise (given up) gets nothing sent
    /// and its QP goes to ERR. The result is the accept's that left the
    /// move.
    pub fn qp_ready_done<H: Host<A>>(
        &mut self,
        host: &mut H,
        mv: ReadyMove,
        moved: Result<(), i32>,
    ) -> Result<(), RdmaCmError> {
        let current = self
            .ids
            .get(&mv.id)
            .map(|r| r.cm == Some(mv.comm) && r.state == IdState::Connect && !r.gave_up);
        match current {
            None => return Err(RdmaCmError::NoSuchId),
            Some(false) => {
                host.qp_error(mv.id);
                return Err(RdmaCmError::Invalid);
            }
            Some(true) => {}
        }
        let comm = mv.comm;
        let sent = moved.map_err(RdmaCmError::Qp).and_then(|()| {
            let sent = match mv.then {
                AfterReady::SendRep { rep, attr_mod } => {
                    host.cm(|ep, now, out| ep.send_rep(now, comm, &rep, attr_mod, out))
                }
                AfterReady::SendRtu | AfterReady::ReportRtu { .. } => {
                    host.cm(|ep, _, out| ep.send_rtu(comm, &[], out))
                }
            };
            sent.map_err(RdmaCmError::from)
        });
        if let AfterReady::ReportRtu { conn } = mv.then {
            let (kind, status) = match sent {
                Ok(()) => (EventKind::Established, EventStatus::Ok),
                Err(e) => {
                    if let Some(rec) = self.ids.get_mut(&mv.id) {
                        rec.gave_up = true;
                    }
                    self.refuse(host, mv.id, comm);
                    (EventKind::ConnectError, EventStatus::Failed(e))
                }
            };
            let event = RdmaEvent {
                kind,
                status,
                listener: None,
                group: None,
                conn,
            };
            host.event(mv.id, event);
        } else if sent.is_err() {
            self.refuse(host, mv.id, comm);
        }
        sent
    }

    /// A connection that cannot go on: the QP to ERR, a REJ to the peer.
    fn refuse<H: Host<A>>(&mut self, host: &mut H, id: RdmaId, comm: CommId) {
        host.qp_error(id);
        let _ = host.cm(|ep, now, out| {
            ep.send_rej(now, comm, RejectReason::ConsumerDefined, &[], &[], out)
        });
    }

    /// `rdma_reject`: a REJ with `reason` and private data for the peer
    /// of an id with a CM id.
    pub fn reject<H: Host<A>>(
        &mut self,
        host: &mut H,
        id: RdmaId,
        private_data: &[u8],
        reason: RejectReason,
    ) -> Result<(), RdmaCmError> {
        let r = self.ids.get(&id).ok_or(RdmaCmError::NoSuchId)?;
        if r.iw {
            let private_data = PrivateData::new(private_data).ok_or(RdmaCmError::Invalid)?;
            return self.iw_then(host, IwCall::Reject { id, private_data });
        }
        let comm = r.cm.ok_or(RdmaCmError::Invalid)?;
        if r.qp_type == RdmaQpType::Ud {
            return self.reject_ud(host, comm, private_data);
        }
        host.cm(|ep, now, out| ep.send_rej(now, comm, reason, &[], private_data, out))?;
        Ok(())
    }

    /// `rdma_disconnect`: the QP to ERR, then a DREQ, or the DREP if the
    /// peer disconnected first (an iWARP connection closes through its
    /// CM, which moves the QP). Only an id without a connection is
    /// refused.
    pub fn disconnect<H: Host<A>>(&mut self, host: &mut H, id: RdmaId) -> Result<(), RdmaCmError> {
        let r = self.ids.get(&id).ok_or(RdmaCmError::NoSuchId)?;
        if r.iw {
            return self.iw_then(host, IwCall::Disconnect { id });
        }
        let comm = r.cm.ok_or(RdmaCmError::Invalid)?;
        host.qp_error(id);
        host.cm(|ep, now, out| {
            if ep.send_dreq(now, comm, &[], out).is_err() {
                let _ = ep.send_drep(now, comm, &[], out);
            }
        });
        Ok(())
    }

    /// `rdma_notify` with `IB_EVENT_COMM_EST`: the QP saw traffic before
    /// the RTU.
    pub fn notify_established<H: Host<A>>(
        &mut self,
        host: &mut H,
        id: RdmaId,
    ) -> Result<(), RdmaCmError> {
        let r = self.ids.get(&id).ok_or(RdmaCmError::NoSuchId)?;
        let comm = r.cm.ok_or(RdmaCmError::Invalid)?;
        host.cm(|ep, _, out| ep.notify_established(comm, out))
            .map_err(RdmaCmError::from)
    }
}

/// The service id a destination names (`rdma_get_service_id`): an AF_IB
/// address's own, else the port space's with the port.
pub fn service_id_of(ps: super::port_space::PortSpace, dst: &SockAddr) -> u64 {
    match *dst {
        SockAddr::Ib { sid, .. } => sid,
        _ => ps.service_id(dst.port()),
    }
}

/// A REQ's private data: the cma header (IP ids) and the consumer's data
/// after it. `Invalid` if it does not fit.
pub(crate) fn request_data<const N: usize>(
    src: &SockAddr,
    dst: &SockAddr,
    data: &[u8],
) -> Result<[u8; N], RdmaCmError> {
    let mut out = [0u8; N];
    let ip = |a: &SockAddr| match *a {
        SockAddr::V4 { addr, .. } => Some(IpAddr::V4(addr)),
        SockAddr::V6 { addr, .. } => Some(IpAddr::V6(addr)),
        SockAddr::Ib { .. } => None,
    };
    let offset = match (ip(src), ip(dst)) {
        (Some(s), Some(d)) => {
            let hdr = CmaHdr {
                src_port: src.port(),
                src: s,
                dst: d,
            };
            hdr.emit(&mut out).map_err(|_| RdmaCmError::Invalid)?;
            CMA_HDR_LEN
        }
        (None, None) => 0,
        _ => return Err(RdmaCmError::Invalid),
    };
    let end = offset
        .checked_add(data.len())
        .filter(|&e| e <= out.len())
        .ok_or(RdmaCmError::Invalid)?;
    out[offset..end].copy_from_slice(data);
    Ok(out)
}

/// The REP that accepts the REQ of id `r` with `p`; `None` if the private
/// data does not fit.
fn rep_for<A>(r: &Id<A>, p: &ConnParams<'_>) -> Option<Rep> {
    let mut rep = Rep::zeroed();
    rep.local_qpn = r.qp_num;
    rep.starting_psn = r.psn;
    rep.responder_resources = p.responder_resources;
    rep.initiator_depth = p.initiator_depth;
    rep.target_ack_delay = r.route.as_ref().map_or(IbaTime::new(0), |rt| rt.ack_delay);
    rep.end_to_end_flow_control = p.flow_control;
    rep.rnr_retry_count = p.rnr_retry_count.min(MAX_RETRIES);
    rep.srq = r.srq;
    rep.set_vendor_id(r.ece.0);
    rep.private_data = fill(p.private_data)?;
    Some(rep)
}
