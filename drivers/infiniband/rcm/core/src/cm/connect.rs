// SPDX-License-Identifier: GPL-2.0

//! Connection establishment: REQ, MRA, REP, RTU and REJ, both directions,
//! and the consumer's "established" notification.

use super::conn::{Response, Timer};
use super::endpoint::{build, fill, Dropped, Handled, Received};
use super::error::CmError;
use super::event::Event;
use super::remote_index::{Remote, RemoteKeys};
use super::state::{LapState, State};
use super::store::Collections;
use super::transport::Transport;
use super::{CommId, Endpoint, Millis, Sink, MRA_FLAG_DELAY};
use crate::reason::RejectReason;
use crate::timer::{self, IbaTime};
use crate::wire::mad::attr;
use crate::wire::mra::{message_ref, Mra, Rej};
use crate::wire::rep::{Rep, Rtu};
use crate::wire::req::{Req, ReqPath};
use crate::wire::CmMessage;

/// The transport a REQ asks for, if one the CM sets up.
fn transport_of(req: &Req) -> Option<Transport> {
    Transport::from_req(req.transport_service_type, req.extended_transport_type)
}

/// The local ACK timeout an address vector gets from a path whose packet
/// lifetime the peer encoded in a REQ (the C CM's path conversion).
fn av_timeout_from_req(path: &ReqPath) -> IbaTime {
    let lat = path.local_ack_timeout.exponent();
    IbaTime::new(lat - u8::from(lat > 0) + 1)
}

impl<A: Copy + Ord, C: Collections> Endpoint<A, C> {
    /// Sends a REQ from an IDLE id (`ib_send_cm_req`).
    ///
    /// `req` carries everything the consumer chose; the comm id and CA GUID
    /// are filled in. The REQ is retried `req.max_cm_retries` times, every
    /// two packet lifetimes plus the peer's CM response time.
    #[allow(clippy::too_many_arguments)]
    pub fn send_req<S: Sink<A>>(
        &mut self,
        now: Millis,
        id: CommId,
        req: &Req,
        attr_mod: u32,
        to: A,
        packet_life_time: IbaTime,
        sink: &mut S,
    ) -> Result<(), CmError> {
        self.reserve_mads()?;
        let Some(transport) = transport_of(req) else {
            return Err(CmError::InvalidArgument);
        };
        let tid = self.form_tid(id);
        let conn = self.live_mut(id)?;
        if conn.state != State::Idle || conn.listening.is_some() {
            return Err(CmError::InvalidState);
        }
        let mut req = *req;
        req.local_comm_id = id.0;
        req.local_ca_guid = conn.local_ca_guid;
        conn.service_id = req.service_id;
        conn.peer = Some(to);
        conn.tid = tid;
        conn.remote_id = 0;
        conn.timeout_ms =
            timer::req_response_timeout_ms(packet_life_time, req.remote_cm_response_timeout);
        conn.max_cm_retries = req.max_cm_retries;
        conn.lap_state = LapState::Uninit;
        let qp = &mut conn.qp;
        qp.transport = transport;
        qp.local_qpn = req.local_qpn;
        qp.rq_psn = req.starting_psn;
        qp.initiator_depth = req.initiator_depth;
        qp.responder_resources = req.responder_resources;
        qp.retry_count = req.retry_count;
        qp.path_mtu = req.path_mtu;
        qp.pkey = req.partition_key;
        qp.qkey = req.local_qkey;
        qp.flow_control = req.end_to_end_flow_control;
        qp.srq = req.srq;
        qp.ack_timeout = IbaTime::new(packet_life_time.exponent().saturating_add(1));
        qp.alt_ack_timeout = qp.ack_timeout;
        conn.move_to(State::ReqSent, sink);
        // An XRC initiator keeps what it asked for (its QP attributes use
        // it) but the REQ does not carry it, as in 6.12.
        if transport == Transport::Xrc {
            req.responder_resources = 0;
            req.retry_count = 0;
            req.rnr_retry_count = 0;
            req.srq = false;
        }
        let mad = build(tid, attr_mod, CmMessage::Req(req));
        self.drop_response(id);
        self.send_request(now, id, mad, sink);
        Ok(())
    }

    pub(crate) fn recv_req<S: Sink<A>>(
        &mut self,
        now: Millis,
        rx: &Received<A>,
        tid: u64,
        attr_mod: u32,
        req: &Req,
        sink: &mut S,
    ) -> Handled {
        // A REQ we already hold is a retransmission: repeat our answer.
        if let Some(dup) = self
            .remote_ids
            .get(&self.conns, (req.local_comm_id, req.local_ca_guid))
        {
            if self.get(dup).map(|c| c.qp.remote_qpn) != Some(req.local_qpn) {
                // Not a retransmission: the peer reuses a comm id that is
                // still connected here.
                let rej = Rej::plain(
                    0,
                    req.local_comm_id,
                    message_ref::REQ,
                    RejectReason::DuplicateLocalCommId,
                );
                Self::answer(rx, tid, CmMessage::Rej(rej), sink);
                return Handled::Answered;
            }
            sink.duplicate(attr::REQ);
            let state = self.get(dup).map(|c| c.state);
            if matches!(
                state,
                Some(State::MraReqSent | State::RepSent | State::MraRepRcvd)
            ) {
                self.resend_current(dup, sink);
            }
            return Handled::Duplicate;
        }
        // A REQ from a QP we are still connected to: the peer lost that
        // connection. Refuse the new one and end the old one.
        if let Some(stale) = self
            .remote_qpns
            .get(&self.conns, (req.local_qpn, req.local_ca_guid))
        {
            let rej = Rej::plain(
                0,
                req.local_comm_id,
                message_ref::REQ,
                RejectReason::StaleConn,
            );
            Self::answer(rx, tid, CmMessage::Rej(rej), sink);
            self.disconnect_stale(now, stale, sink);
            return Handled::Answered;
        }
        let Some(listener) = self.find_listener(rx.device, req.service_id) else {
            let rej = Rej::plain(
                0,
                req.local_comm_id,
                message_ref::REQ,
                RejectReason::InvalidServiceId,
            );
            Self::answer(rx, tid, CmMessage::Rej(rej), sink);
            return Handled::Answered;
        };
        let Some(from) = rx.from else {
            return Handled::Dropped(Dropped::NoSender);
        };
        let Ok(id) = self.alloc_for_request(rx, listener) else {
            return Handled::Dropped(Dropped::NoMemory);
        };
        if let Err(e) = self.insert_remote(
            id,
            RemoteKeys {
                comm_id: req.local_comm_id,
                qpn: req.local_qpn,
                ca_guid: req.local_ca_guid,
            },
        ) {
            self.discard(id, sink);
            return Handled::Dropped(e);
        }
        let Some(conn) = self.conn_mut(id) else {
            return Handled::Dropped(Dropped::NoMemory);
        };
        conn.move_to(State::ReqRcvd, sink);
        conn.listener = Some(listener);
        conn.peer = Some(from);
        conn.service_id = req.service_id;
        conn.tid = tid;
        conn.timeout_ms = timer::passive_response_timeout_ms(req.local_cm_response_timeout);
        conn.max_cm_retries = req.max_cm_retries;
        let qp = &mut conn.qp;
        // An unknown transport is passed on as RC, as before: the C CM
        // hands its consumer QP type 0 and lets it refuse.
        qp.transport = transport_of(req).unwrap_or_default();
        qp.initiator_depth = req.responder_resources;
        qp.responder_resources = req.initiator_depth;
        qp.path_mtu = req.path_mtu;
        qp.pkey = req.partition_key;
        qp.sq_psn = req.starting_psn;
        qp.retry_count = req.retry_count;
        qp.rnr_retry_count = req.rnr_retry_count;
        qp.flow_control = req.end_to_end_flow_control;
        qp.srq = req.srq;
        qp.qkey = req.local_qkey;
        qp.ack_timeout = av_timeout_from_req(&req.primary_path);
        qp.alt_ack_timeout = if req.has_alternate_path() {
            av_timeout_from_req(&req.alternate_path)
        } else {
            qp.ack_timeout
        };
        self.emit(
            id,
            Event::ReqReceived {
                listener,
                req: *req,
                attr_mod,
            },
            sink,
        );
        Handled::Delivered(id)
    }

    /// Frees an id that was never visible to anyone.
    pub(crate) fn discard<S: Sink<A>>(&mut self, id: CommId, sink: &mut S) {
        if let Some(conn) = self.conn_mut(id) {
            conn.destroyed = true;
            conn.move_to(State::Idle, sink);
        }
        self.reap(id);
    }

    /// Answers a duplicate with what we sent last: our pending request
    /// (REP) if that is the answer, else the stored response (MRA, RTU).
    fn resend_current<S: Sink<A>>(&mut self, id: CommId, sink: &mut S) {
        let Some(conn) = self.get(id) else {
            return;
        };
        if matches!(conn.state, State::RepSent | State::MraRepRcvd) {
            self.resend_request(id, sink);
        } else {
            self.resend_response(id, sink);
        }
    }

    /// Accepts a REQ (`ib_send_cm_rep`). Retried until the RTU arrives.
    pub fn send_rep<S: Sink<A>>(
        &mut self,
        now: Millis,
        id: CommId,
        rep: &Rep,
        attr_mod: u32,
        sink: &mut S,
    ) -> Result<(), CmError> {
        self.reserve_mads()?;
        let conn = self.live_mut(id)?;
        if !matches!(conn.state, State::ReqRcvd | State::MraReqSent) {
            return Err(CmError::InvalidState);
        }
        let mut rep = *rep;
        rep.local_comm_id = id.0;
        rep.remote_comm_id = conn.remote_id;
        rep.local_ca_guid = conn.local_ca_guid;
        rep.local_qpn &= 0x00FF_FFFF;
        conn.move_to(State::RepSent, sink);
        conn.qp.initiator_depth = rep.initiator_depth;
        conn.qp.responder_resources = rep.responder_resources;
        conn.qp.rq_psn = rep.starting_psn;
        // An XRC target names its number as the EE context; the peer's
        // DREQ and LAP carry it back.
        conn.qp.local_qpn = if conn.qp.transport == Transport::Xrc {
            rep.local_eecn
        } else {
            rep.local_qpn
        };
        conn.qp.srq = rep.srq;
        let mad = build(conn.tid, attr_mod, CmMessage::Rep(rep));
        // A kept (delayed) MRA answered repeated REQs until now; from here
        // they get the REP, so it would only hold a pool slot while
        // connected.
        self.drop_response(id);
        self.send_request(now, id, mad, sink);
        Ok(())
    }

    pub(crate) fn recv_rep<S: Sink<A>>(
        &mut self,
        now: Millis,
        rx: &Received<A>,
        attr_mod: u32,
        rep: &Rep,
        sink: &mut S,
    ) -> Handled {
        let Some(id) = self.acquire(rep.remote_comm_id, 0) else {
            // A REP for a connection past REP_RCVD: our RTU or MRA got lost.
            let Some(id) = self.acquire(rep.remote_comm_id, rep.local_comm_id) else {
                // The REP echoes our REQ's transaction id; we no longer
                // know it.
                let (ours, theirs) = (rep.remote_comm_id, rep.local_comm_id);
                return self.reject_unknown(rx, 0, ours, theirs, message_ref::REP, sink);
            };
            sink.duplicate(attr::REP);
            if matches!(
                self.get(id).map(|c| c.state),
                Some(State::Established | State::MraRepSent)
            ) {
                self.resend_response(id, sink);
            }
            return Handled::Duplicate;
        };
        if !matches!(
            self.get(id).map(|c| c.state),
            Some(State::ReqSent | State::MraReqRcvd)
        ) {
            return Handled::Dropped(Dropped::WrongState);
        }
        let xrc = self
            .get(id)
            .is_some_and(|c| c.qp.transport == Transport::Xrc);
        let peer_qpn = rep.peer_qpn(xrc);
        let keys = RemoteKeys {
            comm_id: rep.local_comm_id,
            qpn: peer_qpn,
            ca_guid: rep.local_ca_guid,
        };
        if self
            .remote_ids
            .get(&self.conns, keys.key(Remote::Id))
            .is_some()
        {
            return Handled::Dropped(Dropped::WrongState);
        }
        if let Some(stale) = self.remote_qpns.get(&self.conns, keys.key(Remote::Qpn)) {
            // The peer's QP still belongs to a connection of ours: refuse
            // this one, end that one. Our REQ stays pending, as in the C CM.
            let rej = Rej::plain(
                rep.remote_comm_id,
                rep.local_comm_id,
                message_ref::REP,
                RejectReason::StaleConn,
            );
            let tid = self.get(id).map_or(0, |c| c.tid);
            Self::answer(rx, tid, CmMessage::Rej(rej), sink);
            self.disconnect_stale(now, stale, sink);
            return Handled::Answered;
        }
        if let Err(e) = self.insert_remote(id, keys) {
            return Handled::Dropped(e);
        }
        self.cancel_timer(id);
        let Some(conn) = self.conn_mut(id) else {
            return Handled::Dropped(Dropped::UnknownId);
        };
        conn.move_to(State::RepRcvd, sink);
        let qp = &mut conn.qp;
        qp.initiator_depth = rep.responder_resources;
        qp.responder_resources = rep.initiator_depth;
        qp.sq_psn = rep.starting_psn;
        qp.rnr_retry_count = rep.rnr_retry_count;
        qp.srq = rep.srq;
        let plt = IbaTime::new(qp.ack_timeout.exponent().saturating_sub(1));
        qp.ack_timeout = timer::ack_timeout(rep.target_ack_delay, plt);
        let alt_plt = IbaTime::new(qp.alt_ack_timeout.exponent().saturating_sub(1));
        qp.alt_ack_timeout = timer::ack_timeout(rep.target_ack_delay, alt_plt);
        self.emit(
            id,
            Event::RepReceived {
                rep: *rep,
                attr_mod,
            },
            sink,
        );
        Handled::Delivered(id)
    }

    /// A REP or RTU naming no id of ours (destroyed, or never ours) gets
    /// REJ 6; one naming an id of ours in another connection REJ 7. The
    /// peer stops retrying, or drops a connection we do not have, instead
    /// of waiting for a timeout. `ours`/`theirs` are the comm ids as the
    /// message names them.
    #[allow(clippy::too_many_arguments)]
    fn reject_unknown<S: Sink<A>>(
        &mut self,
        rx: &Received<A>,
        tid: u64,
        ours: u32,
        theirs: u32,
        message_rejected: u8,
        sink: &mut S,
    ) -> Handled {
        let reason = if self.get(CommId(ours)).is_some() {
            RejectReason::InvalidCommInstance
        } else {
            RejectReason::InvalidCommId
        };
        let rej = Rej::plain(ours, theirs, message_rejected, reason);
        Self::answer(rx, tid, CmMessage::Rej(rej), sink);
        Handled::Answered
    }

    /// Confirms a REP (`ib_send_cm_rtu`): the connection is established.
    pub fn send_rtu<S: Sink<A>>(
        &mut self,
        id: CommId,
        private_data: &[u8],
        sink: &mut S,
    ) -> Result<(), CmError> {
        self.reserve_mads()?;
        let bare = private_data.is_empty();
        let private_data = fill(private_data).ok_or(CmError::InvalidArgument)?;
        let conn = self.live_mut(id)?;
        if !matches!(conn.state, State::RepRcvd | State::MraRepSent) {
            return Err(CmError::InvalidState);
        }
        conn.move_to(State::Established, sink);
        let tid = conn.tid;
        let rtu = Rtu {
            local_comm_id: id.0,
            remote_comm_id: conn.remote_id,
            private_data,
        };
        let mad = build(tid, 0, CmMessage::Rtu(rtu));
        if bare {
            self.drop_response(id);
            if let Some(conn) = self.conn_mut(id) {
                conn.response = Response::BareRtu { tid };
            }
            self.send_once(id, mad, sink);
        } else {
            self.send_response(id, mad, sink);
        }
        Ok(())
    }

    pub(crate) fn recv_rtu<S: Sink<A>>(
        &mut self,
        rx: &Received<A>,
        tid: u64,
        rtu: &Rtu,
        sink: &mut S,
    ) -> Handled {
        let found = self
            .acquire(rtu.remote_comm_id, rtu.local_comm_id)
            .filter(|&id| self.get(id).map(|c| c.state) != Some(State::Idle));
        let Some(id) = found else {
            // The peer thinks it is connected to an id we no longer have or
            // that went back to IDLE (our REJ got lost): tell it.
            let (ours, theirs) = (rtu.remote_comm_id, rtu.local_comm_id);
            return self.reject_unknown(rx, tid, ours, theirs, message_ref::OTHER, sink);
        };
        match self.get(id).map(|c| c.state) {
            Some(State::RepSent | State::MraRepRcvd) => {}
            Some(State::Timewait) => {
                // We rejected; the peer missed it and went ahead.
                sink.duplicate(attr::RTU);
                self.resend_response(id, sink);
                return Handled::Duplicate;
            }
            _ => {
                sink.duplicate(attr::RTU);
                return Handled::Duplicate;
            }
        }
        self.cancel_timer(id);
        if let Some(conn) = self.conn_mut(id) {
            conn.move_to(State::Established, sink);
        }
        self.emit(id, Event::RtuReceived(*rtu), sink);
        Handled::Delivered(id)
    }

    /// The consumer's QP saw the first packet before the RTU
    /// (`ib_cm_notify(IB_EVENT_COMM_EST)`): established now.
    pub fn notify_established<S: Sink<A>>(
        &mut self,
        id: CommId,
        sink: &mut S,
    ) -> Result<(), CmError> {
        let conn = self.live_mut(id)?;
        match conn.state {
            State::RepSent | State::MraRepRcvd => {}
            State::Established => return Err(CmError::AlreadyConnected),
            _ => return Err(CmError::InvalidState),
        }
        conn.move_to(State::Established, sink);
        self.cancel_timer(id);
        self.emit(id, Event::UserEstablished, sink);
        Ok(())
    }

    /// Records the connection's alternate path as the embedding resolved
    /// it (from the consumer's REQ or LAP, or from the peer's), for the QP
    /// attributes and for path migration; `None` forgets it. The sender of
    /// a REQ gives the path's packet lifetime, whose ACK timeout the REP
    /// then settles, as for the primary path; a received REQ or LAP and a
    /// LAP sent carry theirs.
    pub fn set_alternate(
        &mut self,
        id: CommId,
        path: Option<A>,
        packet_life_time: Option<IbaTime>,
    ) -> Result<(), CmError> {
        let conn = self.live_mut(id)?;
        conn.alternate = path;
        if let Some(plt) = packet_life_time {
            conn.qp.alt_ack_timeout = IbaTime::new(plt.exponent().saturating_add(1));
        }
        Ok(())
    }

    /// The QP migrated to the alternate path
    /// (`ib_cm_notify(IB_EVENT_PATH_MIG)`).
    pub fn notify_path_migrated(&mut self, id: CommId) -> Result<(), CmError> {
        let conn = self.live_mut(id)?;
        if conn.state != State::Established
            || !matches!(conn.lap_state, LapState::Uninit | LapState::Idle)
        {
            return Err(CmError::InvalidState);
        }
        conn.lap_state = LapState::Idle;
        conn.qp.ack_timeout = conn.qp.alt_ack_timeout;
        // The QP now runs on the alternate path, and so do our MADs (a
        // request counts in the window of the peer it went to).
        self.leave_window(id);
        let Some(conn) = self.conn_mut(id) else {
            return Err(CmError::NoSuchId);
        };
        if let Some(alternate) = conn.alternate {
            conn.peer = Some(alternate);
        }
        Ok(())
    }

    /// Asks the peer for more time (`ib_send_cm_mra`) for its REQ, REP or
    /// LAP. With [`MRA_FLAG_DELAY`] in `service_timeout` the MRA is only
    /// sent if the peer repeats its message.
    pub fn send_mra<S: Sink<A>>(
        &mut self,
        id: CommId,
        service_timeout: u8,
        private_data: &[u8],
        sink: &mut S,
    ) -> Result<(), CmError> {
        self.reserve_mads()?;
        let private_data = fill(private_data).ok_or(CmError::InvalidArgument)?;
        let conn = self.live_mut(id)?;
        let message_mraed = match (conn.state, conn.lap_state) {
            (State::ReqRcvd, _) => {
                conn.move_to(State::MraReqSent, sink);
                message_ref::REQ
            }
            (State::RepRcvd, _) => {
                conn.move_to(State::MraRepSent, sink);
                message_ref::REP
            }
            (State::Established, LapState::Rcvd) => {
                conn.lap_state = LapState::MraSent;
                message_ref::OTHER
            }
            _ => return Err(CmError::InvalidState),
        };
        conn.service_timeout = IbaTime::new(service_timeout);
        let mra = Mra {
            local_comm_id: id.0,
            remote_comm_id: conn.remote_id,
            message_mraed,
            service_timeout: IbaTime::new(service_timeout),
            private_data,
        };
        let mad = build(conn.tid, 0, CmMessage::Mra(mra));
        if service_timeout & MRA_FLAG_DELAY != 0 {
            self.keep_response(id, &mad);
        } else {
            self.send_response(id, mad, sink);
        }
        Ok(())
    }

    pub(crate) fn recv_mra<S: Sink<A>>(&mut self, now: Millis, mra: &Mra, sink: &mut S) -> Handled {
        let found = match mra.message_mraed {
            message_ref::REQ => self.acquire(mra.remote_comm_id, 0),
            message_ref::REP | message_ref::OTHER => {
                self.acquire(mra.remote_comm_id, mra.local_comm_id)
            }
            _ => None,
        };
        let Some(id) = found else {
            return Handled::Dropped(Dropped::UnknownId);
        };
        let Some(conn) = self.conn_mut(id) else {
            return Handled::Dropped(Dropped::UnknownId);
        };
        match (conn.state, conn.lap_state, mra.message_mraed) {
            (State::ReqSent, _, message_ref::REQ) => conn.move_to(State::MraReqRcvd, sink),
            (State::RepSent, _, message_ref::REP) => conn.move_to(State::MraRepRcvd, sink),
            (State::Established, LapState::Sent, message_ref::OTHER) => {
                conn.lap_state = LapState::MraRcvd
            }
            (State::MraReqRcvd | State::MraRepRcvd, _, _)
            | (State::Established, LapState::MraRcvd, _) => {
                sink.duplicate(attr::MRA);
                return Handled::Duplicate;
            }
            _ => return Handled::Dropped(Dropped::WrongState),
        }
        // The peer will answer within its service time: wait that long
        // (plus one ACK timeout) before each further retry.
        let wait = timer::mra_timeout_ms(mra.service_timeout, conn.qp.ack_timeout).max(1);
        if let Timer::Retransmit { retries_left, .. } = conn.timer {
            self.set_timer(
                id,
                now.saturating_add(u64::from(wait)),
                Timer::Retransmit {
                    retries_left,
                    interval_ms: wait,
                },
            );
        }
        self.emit(id, Event::MraReceived(*mra), sink);
        Handled::Delivered(id)
    }

    /// Rejects a connection (`ib_send_cm_rej`) in any state before it is
    /// established; the REJ names the message refused.
    pub fn send_rej<S: Sink<A>>(
        &mut self,
        now: Millis,
        id: CommId,
        reason: RejectReason,
        ari: &[u8],
        private_data: &[u8],
        sink: &mut S,
    ) -> Result<(), CmError> {
        self.reserve_mads()?;
        self.live(id)?;
        self.reject(now, id, reason, ari, private_data, sink)
    }

    /// `send_rej` for live and destroyed ids alike.
    pub(crate) fn reject<S: Sink<A>>(
        &mut self,
        now: Millis,
        id: CommId,
        reason: RejectReason,
        ari: &[u8],
        private_data: &[u8],
        sink: &mut S,
    ) -> Result<(), CmError> {
        let ari_len = u8::try_from(ari.len()).map_err(|_| CmError::InvalidArgument)?;
        let ari_bytes = fill(ari).ok_or(CmError::InvalidArgument)?;
        let private_data = fill(private_data).ok_or(CmError::InvalidArgument)?;
        let conn = self.conn_mut(id).ok_or(CmError::NoSuchId)?;
        let state = conn.state;
        let (local_comm_id, message_rejected) = match state {
            // The C CM leaves our id out while the REQ is unanswered.
            State::ReqRcvd => (0, message_ref::REQ),
            State::MraReqSent => (id.0, message_ref::REQ),
            State::RepRcvd | State::MraRepSent => (id.0, message_ref::REP),
            State::ReqSent | State::MraReqRcvd | State::RepSent | State::MraRepRcvd => {
                (id.0, message_ref::OTHER)
            }
            _ => return Err(CmError::InvalidState),
        };
        let rej = Rej {
            local_comm_id,
            remote_comm_id: conn.remote_id,
            message_rejected,
            rejected_info_length: ari_len,
            reason,
            ari: ari_bytes,
            private_data,
        };
        let mad = build(conn.tid, 0, CmMessage::Rej(rej));
        if matches!(state, State::RepSent | State::MraRepRcvd) {
            // The peer may already use the connection: wait out TIMEWAIT,
            // repeating this REJ if its RTU shows it missed it.
            self.enter_timewait(now, id, sink);
            self.send_response(id, mad, sink);
        } else {
            self.send_once(id, mad, sink);
            self.reset_to_idle(id, sink);
        }
        Ok(())
    }

    /// The REJ that tells the peer we gave up waiting for it.
    pub(crate) fn send_timeout_rej<S: Sink<A>>(&mut self, id: CommId, sink: &mut S) {
        let Some(conn) = self.get(id) else {
            return;
        };
        let guid = conn.local_ca_guid.to_be_bytes();
        let mut ari = [0u8; 72];
        for (a, g) in ari.iter_mut().zip(guid.iter()) {
            *a = *g;
        }
        let rej = Rej {
            local_comm_id: id.0,
            remote_comm_id: conn.remote_id,
            message_rejected: message_ref::OTHER,
            rejected_info_length: guid.len() as u8,
            reason: RejectReason::Timeout,
            ari,
            private_data: [0; 148],
        };
        let mad = build(conn.tid, 0, CmMessage::Rej(rej));
        self.send_once(id, mad, sink);
    }

    pub(crate) fn recv_rej<S: Sink<A>>(
        &mut self,
        now: Millis,
        attr_mod: u32,
        rej: &Rej,
        sink: &mut S,
    ) -> Handled {
        let found = if rej.reason == RejectReason::Timeout {
            // The peer gave up on its REQ and names itself by CA GUID.
            let mut guid = [0u8; 8];
            for (g, a) in guid.iter_mut().zip(rej.ari.iter()) {
                *g = *a;
            }
            self.remote_ids
                .get(&self.conns, (rej.local_comm_id, u64::from_be_bytes(guid)))
        } else if rej.message_rejected == message_ref::REQ {
            self.acquire(rej.remote_comm_id, 0)
        } else {
            // While we wait for the REP we do not know the peer's id yet;
            // a REJ that overtook the REP still ends our REQ.
            self.acquire(rej.remote_comm_id, rej.local_comm_id)
                .or_else(|| {
                    self.acquire(rej.remote_comm_id, 0).filter(|&id| {
                        matches!(
                            self.get(id).map(|c| c.state),
                            Some(State::ReqSent | State::MraReqRcvd)
                        )
                    })
                })
        };
        let Some(id) = found else {
            return Handled::Dropped(Dropped::UnknownId);
        };
        let Some(conn) = self.get(id) else {
            return Handled::Dropped(Dropped::UnknownId);
        };
        match (conn.state, conn.lap_state) {
            (
                State::ReqSent
                | State::MraReqRcvd
                | State::RepSent
                | State::MraRepRcvd
                | State::ReqRcvd
                | State::MraReqSent,
                _,
            ) => {
                self.cancel_timer(id);
                if rej.reason == RejectReason::StaleConn {
                    self.enter_timewait(now, id, sink);
                } else {
                    self.reset_to_idle(id, sink);
                }
            }
            // In ESTABLISHED the C CM takes a REJ only before any LAP
            // exchange or during ours; a REJ naming both our ids means the
            // peer dropped the connection whatever the LAP state, so rcm
            // always takes it (and abandons a LAP of ours).
            (State::DreqSent | State::RepRcvd | State::MraRepSent | State::Established, _) => {
                self.cancel_timer(id);
                if let Some(c) = self.conn_mut(id) {
                    if c.state == State::Established {
                        c.lap_state = LapState::Idle;
                    }
                }
                self.enter_timewait(now, id, sink);
            }
            _ => return Handled::Dropped(Dropped::WrongState),
        }
        self.emit(
            id,
            Event::RejReceived {
                rej: *rej,
                attr_mod,
            },
            sink,
        );
        self.reap(id);
        Handled::Delivered(id)
    }
}
