// SPDX-License-Identifier: GPL-2.0

//! Service id resolution for UD QPs: SIDR_REQ and SIDR_REP. A SIDR
//! exchange has no connection and no TIMEWAIT; the requester retries on
//! its own timeout.

use super::conn::Timer;
use super::endpoint::{build, Dropped, Handled, Received};
use super::error::CmError;
use super::event::Event;
use super::state::State;
use super::store::{Collections, OrderedMap};
use super::{CommId, Endpoint, Millis, Sink};
use crate::reason::SidrStatus;
use crate::wire::mad::attr;
use crate::wire::sidr::{SidrRep, SidrReq};
use crate::wire::CmMessage;

impl<A: Copy + Ord, C: Collections> Endpoint<A, C> {
    /// Asks `to` which UD QP serves `req.service_id`
    /// (`ib_send_cm_sidr_req`), retried every `timeout_ms`, `max_retries`
    /// times.
    #[allow(clippy::too_many_arguments)]
    pub fn send_sidr_req<S: Sink<A>>(
        &mut self,
        now: Millis,
        id: CommId,
        req: &SidrReq,
        to: A,
        timeout_ms: u32,
        max_retries: u8,
        sink: &mut S,
    ) -> Result<(), CmError> {
        self.reserve_mads()?;
        let tid = self.form_tid(id);
        let conn = self.live_mut(id)?;
        if conn.state != State::Idle || conn.listening.is_some() {
            return Err(CmError::InvalidState);
        }
        let mut req = *req;
        req.request_id = id.0;
        conn.service_id = req.service_id;
        conn.peer = Some(to);
        conn.tid = tid;
        conn.remote_id = 0;
        conn.timeout_ms = timeout_ms;
        conn.max_cm_retries = max_retries;
        conn.move_to(State::SidrReqSent, sink);
        let mad = build(tid, 0, CmMessage::SidrReq(req));
        self.send_request(now, id, mad, sink);
        Ok(())
    }

    pub(crate) fn recv_sidr_req<S: Sink<A>>(
        &mut self,
        rx: &Received<A>,
        tid: u64,
        req: &SidrReq,
        sink: &mut S,
    ) -> Handled {
        let Some(from) = rx.from else {
            return Handled::Dropped(Dropped::NoSender);
        };
        let key = (req.request_id, from);
        if self.sidr.get(&key).is_some() {
            sink.duplicate(attr::SIDR_REQ);
            return Handled::Duplicate;
        }
        let Some(listener) = self.find_listener(rx.device, req.service_id) else {
            let rep = SidrRep {
                request_id: req.request_id,
                status: SidrStatus::Unsupported,
                service_id: req.service_id,
                ..SidrRep::zeroed()
            };
            Self::answer(rx, tid, CmMessage::SidrRep(rep), sink);
            return Handled::Answered;
        };
        let Ok(id) = self.alloc_for_request(rx, listener) else {
            return Handled::Dropped(Dropped::NoMemory);
        };
        if self.sidr.try_insert(key, id).is_err() {
            self.discard(id, sink);
            return Handled::Dropped(Dropped::NoMemory);
        }
        let Some(conn) = self.conn_mut(id) else {
            return Handled::Dropped(Dropped::UnknownId);
        };
        conn.in_sidr_table = true;
        conn.move_to(State::SidrReqRcvd, sink);
        conn.listener = Some(listener);
        conn.peer = Some(from);
        conn.remote_id = req.request_id;
        conn.service_id = req.service_id;
        conn.tid = tid;
        conn.qp.pkey = req.partition_key;
        self.emit(
            id,
            Event::SidrReqReceived {
                listener,
                req: *req,
            },
            sink,
        );
        Handled::Delivered(id)
    }

    /// Answers a SIDR_REQ (`ib_send_cm_sidr_rep`); `rep` holds the status,
    /// QPN, Q_Key and data; the request and service ids are filled in.
    pub fn send_sidr_rep<S: Sink<A>>(
        &mut self,
        id: CommId,
        rep: &SidrRep,
        sink: &mut S,
    ) -> Result<(), CmError> {
        self.reserve_mads()?;
        if self.live(id)?.state != State::SidrReqRcvd {
            return Err(CmError::InvalidState);
        }
        let rep = SidrRep {
            status: rep.status,
            additional_info_length: rep.additional_info_length,
            vendor_id_high: rep.vendor_id_high,
            qpn: rep.qpn,
            vendor_id_low: rep.vendor_id_low,
            qkey: rep.qkey,
            additional_info: rep.additional_info,
            private_data: rep.private_data,
            ..self.sidr_rep_template(id)
        };
        if usize::from(rep.additional_info_length) > rep.additional_info.len() {
            return Err(CmError::InvalidArgument);
        }
        self.emit_sidr_rep(id, &rep, sink);
        self.remove_sidr(id);
        if let Some(conn) = self.conn_mut(id) {
            conn.move_to(State::Idle, sink);
        }
        Ok(())
    }

    /// A SIDR_REP answering the id's SIDR_REQ, status Success, no QP.
    pub(crate) fn sidr_rep_template(&self, id: CommId) -> SidrRep {
        let (request_id, service_id) = self.get(id).map_or((0, 0), |c| (c.remote_id, c.service_id));
        SidrRep {
            request_id,
            service_id,
            ..SidrRep::zeroed()
        }
    }

    pub(crate) fn emit_sidr_rep<S: Sink<A>>(&mut self, id: CommId, rep: &SidrRep, sink: &mut S) {
        let tid = self.get(id).map_or(0, |c| c.tid);
        let mad = build(tid, 0, CmMessage::SidrRep(*rep));
        self.send_once(id, mad, sink);
    }

    pub(crate) fn recv_sidr_rep<S: Sink<A>>(&mut self, rep: &SidrRep, sink: &mut S) -> Handled {
        let Some(id) = self.acquire(rep.request_id, 0) else {
            return Handled::Dropped(Dropped::UnknownId);
        };
        if self.get(id).map(|c| c.state) != Some(State::SidrReqSent) {
            return Handled::Dropped(Dropped::WrongState);
        }
        self.set_timer(id, super::NEVER, Timer::Idle);
        if let Some(conn) = self.conn_mut(id) {
            conn.move_to(State::Idle, sink);
        }
        self.drop_request(id);
        self.emit(id, Event::SidrRepReceived(*rep), sink);
        self.reap(id);
        Handled::Delivered(id)
    }
}
