// SPDX-License-Identifier: GPL-2.0

//! iWARP ids: on an iWARP device a connection is not CM MADs but the
//! device's own connection setup (TCP/MPA, which the kernel's `iw_cm`
//! drives). rdma_cm keeps the id's state and events, and leaves it to the
//! host to start, accept, refuse and close the connection once rdma_cm's
//! call is over ([`IwCall`]); what the iWARP CM reports
//! comes back as [`IwEvent`]s and connection requests as [`IwRequest`]s,
//! with 6.12's meaning (`cma_connect_iw`, `cma_accept_iw`,
//! `cma_iw_handler`, `iw_conn_req_handler`).

use super::addr::SockAddr;
use super::connect::ConnParams;
use super::endpoint::{Id, RdmaCm, RdmaCmError, RdmaId, RdmaQpType};
use super::event::{ConnData, EventKind, EventStatus, RdmaEvent};
use super::host::{Host, IwCall, IwParams};
use super::port_space::PortSpace;
use super::private_data::PrivateData;
use super::resolve::ENOMEM;
use super::state::IdState;
use crate::cm::store::Collections;
use crate::cm::DeviceId;

/// `-ECONNRESET`: the peer reset the connection attempt.
pub const ECONNRESET: i32 = -104;
/// `-ETIMEDOUT`: the peer did not answer.
pub const ETIMEDOUT: i32 = -110;
/// `-ECONNREFUSED`: the peer's consumer refused (`iw_cm_reject`).
pub const ECONNREFUSED: i32 = -111;

/// The meaning of an iWARP reject reason (a negative errno), NUL-ended
/// (`iwcm_reject_msg`).
pub fn iw_reject_message_nul(reason: i32) -> &'static str {
    match reason {
        ECONNRESET => "reset by remote host\0",
        ECONNREFUSED => "refused by remote application\0",
        ETIMEDOUT => "setup timeout\0",
        _ => "unrecognized reason\0",
    }
}

/// What an iWARP CM reports about a connection (`enum iw_cm_event_type`
/// after the request).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IwEventKind {
    /// The answer to our connect; its status says which.
    ConnectReply,
    /// A connection we accepted is up.
    Established,
    /// The peer started an orderly close.
    Disconnect,
    /// The connection is closed.
    Close,
}

/// One report of the iWARP CM about an id's connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IwEvent<'a> {
    /// What happened.
    pub kind: IwEventKind,
    /// 0, or a negative errno.
    pub status: i32,
    /// The peer's private data (MPA), as long as it was sent.
    pub private_data: &'a [u8],
    /// The peer's inbound RDMA read limit.
    pub ird: u8,
    /// The peer's outbound RDMA read limit.
    pub ord: u8,
    /// The connection's addresses as the connection made them (a reply
    /// carries them; the id takes them).
    pub addrs: Option<(SockAddr, SockAddr)>,
}

/// A connection request an iWARP listener of an id received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IwRequest<'a> {
    /// The device it arrived on.
    pub device: DeviceId,
    /// Our address (with the listening port).
    pub local: SockAddr,
    /// The peer's.
    pub remote: SockAddr,
    /// The peer's private data.
    pub private_data: &'a [u8],
    /// The peer's inbound RDMA read limit.
    pub ird: u8,
    /// The peer's outbound RDMA read limit.
    pub ord: u8,
}

impl<C: Collections, A: Copy + Ord> RdmaCm<C, A> {
    /// Whether an id's connection goes through its device's iWARP CM.
    pub(crate) fn on_iwarp<H: Host<A>>(&self, host: &H, id: RdmaId) -> bool {
        self.ids
            .get(&id)
            .and_then(|r| r.device)
            .is_some_and(|d| host.device(d).iwarp)
    }

    /// `rdma_connect` on an iWARP id (ROUTE_RESOLVED, checked by the
    /// caller): CONNECT, and the host starts the connection; on failure
    /// the id is ROUTE_RESOLVED again.
    pub(crate) fn connect_iw<H: Host<A>>(
        &mut self,
        host: &mut H,
        id: RdmaId,
        p: &ConnParams<'_>,
    ) -> Result<(), RdmaCmError> {
        let rec = self.ids.get_mut(&id).ok_or(RdmaCmError::NoSuchId)?;
        if rec.qp_type != RdmaQpType::Rc {
            return Err(RdmaCmError::Invalid);
        }
        let params = IwParams::new(p).ok_or(RdmaCmError::Invalid)?;
        rec.state = IdState::Connect;
        rec.iw = true;
        let options = rec.iw_options();
        self.iw_then(
            host,
            IwCall::Connect {
                id,
                params,
                options,
            },
        )
    }

    /// A connection the host could not start: CONNECT -> ROUTE_RESOLVED
    /// again, as if `connect` had failed (no event).
    fn iw_connect_failed(&mut self, id: RdmaId) {
        if let Some(rec) = self.ids.get_mut(&id) {
            if rec.state == IdState::Connect && rec.iw {
                rec.state = IdState::RouteResolved;
                rec.iw = false;
            }
        }
    }

    /// `rdma_accept` on an iWARP id: parameters are required. On failure
    /// the QP goes to ERR and the request is refused, as in 6.12.
    pub(crate) fn accept_iw<H: Host<A>>(
        &mut self,
        host: &mut H,
        id: RdmaId,
        p: Option<&ConnParams<'_>>,
    ) -> Result<(), RdmaCmError> {
        match p.and_then(IwParams::new) {
            Some(params) => self.iw_then(host, IwCall::Accept { id, params }),
            None => {
                self.refuse_iw(host, id);
                Err(RdmaCmError::Invalid)
            }
        }
    }

    /// A request that cannot be accepted: the QP to ERR, the request
    /// refused.
    fn refuse_iw<H: Host<A>>(&mut self, host: &mut H, id: RdmaId) {
        host.qp_error(id);
        let private_data = PrivateData::default();
        // Nothing more can be done for a refusal the host cannot keep.
        let _ = host.iw_call(&IwCall::Reject { id, private_data });
    }

    /// Leaves `call` to the host; one it cannot keep fails at once.
    pub(crate) fn iw_then<H: Host<A>>(
        &mut self,
        host: &mut H,
        call: IwCall,
    ) -> Result<(), RdmaCmError> {
        match host.iw_call(&call) {
            Ok(()) => Ok(()),
            Err(_) => self.iw_call_done(host, call, Err(ENOMEM)),
        }
    }

    /// The host made `call` (or failed to: `result` holds its errno).
    /// A failure undoes what the call began, as 6.12 does when its iw_cm
    /// call fails: a listen leaves the id ADDR_BOUND, a connect
    /// ROUTE_RESOLVED; a failed accept moves the QP to ERR and refuses
    /// the request. The result is the rdma_cm call's that left `call`.
    pub fn iw_call_done<H: Host<A>>(
        &mut self,
        host: &mut H,
        call: IwCall,
        result: Result<(), i32>,
    ) -> Result<(), RdmaCmError> {
        let Err(e) = result else {
            return Ok(());
        };
        match call {
            IwCall::Listen { id, .. } => self.not_listening(host, id),
            IwCall::Connect { id, .. } => self.iw_connect_failed(id),
            IwCall::Accept { id, .. } => self.refuse_iw(host, id),
            IwCall::Reject { .. } | IwCall::Disconnect { .. } => {}
        }
        Err(RdmaCmError::Qp(e))
    }

    /// What the iWARP CM reported about `id`'s connection, as an event:
    /// only while the id is CONNECT (6.12 drops the rest, as it drops an
    /// orderly-close notice). False if nothing was reported.
    pub fn iw_event<H: Host<A>>(&mut self, host: &mut H, id: RdmaId, ev: &IwEvent<'_>) -> bool {
        let Some(rec) = self.ids.get_mut(&id) else {
            return false;
        };
        if rec.state != IdState::Connect || !rec.iw {
            return false;
        }
        let kind = match (ev.kind, ev.status) {
            (IwEventKind::Close, _) => EventKind::Disconnected,
            (IwEventKind::ConnectReply, 0) | (IwEventKind::Established, _) => {
                EventKind::Established
            }
            (IwEventKind::ConnectReply, ECONNRESET | ECONNREFUSED) => EventKind::Rejected,
            (IwEventKind::ConnectReply, ETIMEDOUT) => EventKind::Unreachable,
            (IwEventKind::ConnectReply, _) => EventKind::ConnectError,
            (IwEventKind::Disconnect, _) => return false,
        };
        if let (IwEventKind::ConnectReply, Some((local, remote))) = (ev.kind, ev.addrs) {
            rec.src = Some(local);
            rec.dst = Some(remote);
        }
        let mut conn = ConnData::with_data(ev.private_data, ev.private_data.len());
        if kind == EventKind::Established {
            conn.initiator_depth = ev.ird;
            conn.responder_resources = ev.ord;
        }
        let status = match ev.status {
            0 => EventStatus::Ok,
            e => EventStatus::Errno(e),
        };
        host.event(
            id,
            RdmaEvent {
                kind,
                status,
                listener: None,
                group: None,
                conn,
            },
        );
        true
    }

    /// A connection request on an iWARP listener of `listener`: a new
    /// CONNECT id (TCP port space, RC) with the request's addresses and
    /// CONNECT_REQUEST for the listener's consumer. `Err` if the listener
    /// no longer listens (the host refuses the request).
    pub fn iw_request<H: Host<A>>(
        &mut self,
        host: &mut H,
        listener: RdmaId,
        req: &IwRequest<'_>,
        psn: u32,
    ) -> Result<RdmaId, RdmaCmError> {
        let l = *self.ids.get(&listener).ok_or(RdmaCmError::NoSuchId)?;
        if l.state != IdState::Listen {
            return Err(RdmaCmError::Invalid);
        }
        let mut child = Id::new(l.net, PortSpace::Tcp, RdmaQpType::Rc, psn);
        child.state = IdState::Connect;
        child.src = Some(req.local);
        child.dst = Some(req.remote);
        child.device = Some(req.device);
        child.listener = Some(listener);
        child.iw = true;
        let child = self.insert_id(child)?;
        let mut conn = ConnData::with_data(req.private_data, req.private_data.len());
        conn.initiator_depth = req.ird;
        conn.responder_resources = req.ord;
        host.event(child, RdmaEvent::connect_request(listener, conn));
        Ok(child)
    }
}
