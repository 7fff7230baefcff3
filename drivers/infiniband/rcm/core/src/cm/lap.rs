// SPDX-License-Identifier: GPL-2.0

//! Alternate paths: LAP and APR, both directions. The 2004 ib_cm API had
//! `ib_send_cm_lap` / `ib_send_cm_apr`; Linux dropped sending them, rcm
//! keeps them (exported under rcm-prefixed names by the module).

use super::endpoint::{build, fill, Dropped, Handled};
use super::error::CmError;
use super::event::Event;
use super::state::{LapState, State};
use super::store::Collections;
use super::{CommId, Endpoint, Millis, Sink};
use crate::reason::AprStatus;
use crate::wire::lap::{Apr, Lap};
use crate::wire::mad::attr;
use crate::wire::CmMessage;

impl<A: Copy + Ord, C: Collections> Endpoint<A, C> {
    /// Proposes an alternate path for an established connection; retried
    /// until the APR. `lap` holds the path and private data; the ids and
    /// QPN are filled in.
    pub fn send_lap<S: Sink<A>>(
        &mut self,
        now: Millis,
        id: CommId,
        lap: &Lap,
        sink: &mut S,
    ) -> Result<(), CmError> {
        self.reserve_mads()?;
        let tid = self.form_tid(id);
        let conn = self.live_mut(id)?;
        if conn.state != State::Established
            || !matches!(conn.lap_state, LapState::Uninit | LapState::Idle)
        {
            return Err(CmError::InvalidState);
        }
        let mut lap = *lap;
        lap.local_comm_id = id.0;
        lap.remote_comm_id = conn.remote_id;
        lap.remote_qpn_eecn = conn.qp.remote_qpn;
        conn.lap_state = LapState::Sent;
        conn.tid = tid;
        conn.qp.alt_ack_timeout = lap.alternate_local_ack_timeout;
        let mad = build(tid, 0, CmMessage::Lap(lap));
        self.send_request(now, id, mad, sink);
        Ok(())
    }

    pub(crate) fn recv_lap<S: Sink<A>>(&mut self, tid: u64, lap: &Lap, sink: &mut S) -> Handled {
        let Some(id) = self.acquire(lap.remote_comm_id, lap.local_comm_id) else {
            return Handled::Dropped(Dropped::UnknownId);
        };
        let Some(conn) = self.conn_mut(id) else {
            return Handled::Dropped(Dropped::UnknownId);
        };
        if conn.state != State::Established {
            return Handled::Dropped(Dropped::WrongState);
        }
        match conn.lap_state {
            LapState::Uninit | LapState::Idle => {}
            LapState::MraSent => {
                sink.duplicate(attr::LAP);
                self.resend_response(id, sink);
                return Handled::Duplicate;
            }
            LapState::Rcvd => {
                sink.duplicate(attr::LAP);
                return Handled::Duplicate;
            }
            LapState::Sent | LapState::MraRcvd => return Handled::Dropped(Dropped::WrongState),
        }
        conn.lap_state = LapState::Rcvd;
        conn.tid = tid;
        conn.qp.alt_ack_timeout = lap.alternate_local_ack_timeout;
        self.emit(id, Event::LapReceived(*lap), sink);
        Handled::Delivered(id)
    }

    /// Answers a LAP.
    pub fn send_apr<S: Sink<A>>(
        &mut self,
        id: CommId,
        status: AprStatus,
        info: &[u8],
        private_data: &[u8],
        sink: &mut S,
    ) -> Result<(), CmError> {
        self.reserve_mads()?;
        let info_len = u8::try_from(info.len()).map_err(|_| CmError::InvalidArgument)?;
        let additional_info = fill(info).ok_or(CmError::InvalidArgument)?;
        let private_data = fill(private_data).ok_or(CmError::InvalidArgument)?;
        let conn = self.live_mut(id)?;
        if conn.state != State::Established
            || !matches!(conn.lap_state, LapState::Rcvd | LapState::MraSent)
        {
            return Err(CmError::InvalidState);
        }
        conn.lap_state = LapState::Idle;
        let apr = Apr {
            local_comm_id: id.0,
            remote_comm_id: conn.remote_id,
            additional_info_length: info_len,
            ap_status: status,
            additional_info,
            private_data,
        };
        let mad = build(conn.tid, 0, CmMessage::Apr(apr));
        self.send_response(id, mad, sink);
        Ok(())
    }

    pub(crate) fn recv_apr<S: Sink<A>>(&mut self, apr: &Apr, sink: &mut S) -> Handled {
        let Some(id) = self.acquire(apr.remote_comm_id, apr.local_comm_id) else {
            return Handled::Dropped(Dropped::UnknownId);
        };
        let Some(conn) = self.conn_mut(id) else {
            return Handled::Dropped(Dropped::UnknownId);
        };
        if conn.state != State::Established
            || !matches!(conn.lap_state, LapState::Sent | LapState::MraRcvd)
        {
            return Handled::Dropped(Dropped::WrongState);
        }
        conn.lap_state = LapState::Idle;
        self.cancel_timer(id);
        self.emit(id, Event::AprReceived(*apr), sink);
        Handled::Delivered(id)
    }
}
