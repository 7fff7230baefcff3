// SPDX-License-Identifier: GPL-2.0

//! Disconnection: DREQ and DREP, both directions, simultaneous DREQs, and
//! the DREQ that ends a connection found stale.

use super::endpoint::{build, fill, Dropped, Handled, Received};
use super::error::CmError;
use super::event::Event;
use super::state::{LapState, State};
use super::store::Collections;
use super::{CommId, Endpoint, Millis, Sink};
use crate::wire::disconnect::{Drep, Dreq};
use crate::wire::mad::attr;
use crate::wire::CmMessage;

impl<A: Copy + Ord, C: Collections> Endpoint<A, C> {
    /// Starts a disconnect (`ib_send_cm_dreq`); retried until the DREP.
    pub fn send_dreq<S: Sink<A>>(
        &mut self,
        now: Millis,
        id: CommId,
        private_data: &[u8],
        sink: &mut S,
    ) -> Result<(), CmError> {
        self.reserve_mads()?;
        self.live(id)?;
        self.disconnect(now, id, private_data, sink)
    }

    /// `send_dreq` for live and destroyed ids alike.
    pub(crate) fn disconnect<S: Sink<A>>(
        &mut self,
        now: Millis,
        id: CommId,
        private_data: &[u8],
        sink: &mut S,
    ) -> Result<(), CmError> {
        let private_data = fill(private_data).ok_or(CmError::InvalidArgument)?;
        let tid = self.form_tid(id);
        let conn = self.conn_mut(id).ok_or(CmError::NoSuchId)?;
        if conn.state != State::Established {
            return Err(CmError::InvalidState);
        }
        // A LAP exchange in progress is abandoned: its timer becomes ours.
        if matches!(conn.lap_state, LapState::Sent | LapState::MraRcvd) {
            conn.lap_state = LapState::Idle;
        }
        let dreq = Dreq {
            local_comm_id: id.0,
            remote_comm_id: conn.remote_id,
            remote_qpn_eecn: conn.qp.remote_qpn,
            private_data,
        };
        conn.tid = tid;
        conn.move_to(State::DreqSent, sink);
        let mad = build(tid, 0, CmMessage::Dreq(dreq));
        self.send_request(now, id, mad, sink);
        Ok(())
    }

    /// Ends a connection the peer no longer has (a new REQ or REP came from
    /// its QP): if it is established, disconnect it.
    pub(crate) fn disconnect_stale<S: Sink<A>>(
        &mut self,
        now: Millis,
        stale: CommId,
        sink: &mut S,
    ) {
        if self.get(stale).map(|c| c.state) == Some(State::Established) {
            let _ = self.disconnect(now, stale, &[], sink);
        }
    }

    /// Answers a DREQ (`ib_send_cm_drep`); the id enters TIMEWAIT.
    pub fn send_drep<S: Sink<A>>(
        &mut self,
        now: Millis,
        id: CommId,
        private_data: &[u8],
        sink: &mut S,
    ) -> Result<(), CmError> {
        self.reserve_mads()?;
        self.live(id)?;
        self.disconnect_reply(now, id, private_data, sink)
    }

    /// `send_drep` for live and destroyed ids alike.
    pub(crate) fn disconnect_reply<S: Sink<A>>(
        &mut self,
        now: Millis,
        id: CommId,
        private_data: &[u8],
        sink: &mut S,
    ) -> Result<(), CmError> {
        let private_data = fill(private_data).ok_or(CmError::InvalidArgument)?;
        let conn = self.conn_mut(id).ok_or(CmError::NoSuchId)?;
        if conn.state != State::DreqRcvd {
            return Err(CmError::InvalidState);
        }
        let drep = Drep {
            local_comm_id: id.0,
            remote_comm_id: conn.remote_id,
            private_data,
        };
        let mad = build(conn.tid, 0, CmMessage::Drep(drep));
        self.enter_timewait(now, id, sink);
        self.send_response(id, mad, sink);
        Ok(())
    }

    pub(crate) fn recv_dreq<S: Sink<A>>(
        &mut self,
        now: Millis,
        rx: &Received<A>,
        tid: u64,
        dreq: &Dreq,
        sink: &mut S,
    ) -> Handled {
        let Some(id) = self.acquire(dreq.remote_comm_id, dreq.local_comm_id) else {
            // Already forgotten: the peer missed our DREP. Answer for it.
            sink.duplicate(attr::DREQ);
            let drep = Drep {
                local_comm_id: dreq.remote_comm_id,
                remote_comm_id: dreq.local_comm_id,
                private_data: [0; 224],
            };
            Self::answer(rx, tid, CmMessage::Drep(drep), sink);
            return Handled::Answered;
        };
        let Some(conn) = self.get(id) else {
            return Handled::Dropped(Dropped::UnknownId);
        };
        if conn.qp.local_qpn != dreq.remote_qpn_eecn {
            return Handled::Dropped(Dropped::WrongState);
        }
        match conn.state {
            State::RepSent | State::DreqSent | State::MraRepRcvd => self.cancel_timer(id),
            State::Established => {
                if matches!(conn.lap_state, LapState::Sent | LapState::MraRcvd) {
                    self.cancel_timer(id);
                }
            }
            State::Timewait => {
                sink.duplicate(attr::DREQ);
                self.resend_response(id, sink);
                return Handled::Duplicate;
            }
            State::DreqRcvd => {
                sink.duplicate(attr::DREQ);
                return Handled::Duplicate;
            }
            _ => return Handled::Dropped(Dropped::WrongState),
        }
        let destroyed = match self.conn_mut(id) {
            Some(conn) => {
                conn.move_to(State::DreqRcvd, sink);
                conn.tid = tid;
                conn.destroyed
            }
            None => return Handled::Dropped(Dropped::UnknownId),
        };
        if destroyed {
            // Our consumer is gone (its own DREQ crossed this one): answer
            // in its place.
            let _ = self.disconnect_reply(now, id, &[], sink);
        } else {
            self.emit(id, Event::DreqReceived(*dreq), sink);
        }
        Handled::Delivered(id)
    }

    pub(crate) fn recv_drep<S: Sink<A>>(
        &mut self,
        now: Millis,
        drep: &Drep,
        sink: &mut S,
    ) -> Handled {
        let Some(id) = self.acquire(drep.remote_comm_id, drep.local_comm_id) else {
            return Handled::Dropped(Dropped::UnknownId);
        };
        if !matches!(
            self.get(id).map(|c| c.state),
            Some(State::DreqSent | State::DreqRcvd)
        ) {
            return Handled::Dropped(Dropped::WrongState);
        }
        self.cancel_timer(id);
        self.enter_timewait(now, id, sink);
        self.emit(id, Event::DrepReceived(*drep), sink);
        Handled::Delivered(id)
    }
}
