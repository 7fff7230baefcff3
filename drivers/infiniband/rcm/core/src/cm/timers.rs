// SPDX-License-Identifier: GPL-2.0

//! Each id's single timer and the MADs it drives: our requests, sent
//! (through the peer's window, `pacing.rs`) and retransmitted until
//! answered; the responses kept for the peer's duplicates; the end of
//! TIMEWAIT.

use super::conn::{Connection, Response, Timer};
use super::endpoint::build;
use super::event::{Event, Failure};
use super::state::{LapState, State};
use super::store::{Collections, OrderedMap};
use super::{CommId, Endpoint, Millis, Sink, NEVER};
use crate::wire::field::Mad;
use crate::wire::rep::Rtu;
use crate::wire::CmMessage;

/// Moves `conn`'s entry in the deadline index to `at` (never allocates).
fn move_deadline_entry<A>(
    deadlines: &mut impl OrderedMap<(Millis, u32), ()>,
    conn: &mut Connection<A>,
    at: Millis,
) {
    let id = conn.id.0;
    let moved = deadlines.rekey(&(conn.deadline_key, id), (at, id));
    debug_assert!(moved, "deadline index out of step for {:?}", conn.id);
    conn.deadline_key = at;
}

impl<A: Copy + Ord, C: Collections> Endpoint<A, C> {
    /// Sends the id's outstanding request no more: its current timeout
    /// is its last (a departing device waits for one round of answers,
    /// not for every retry to a peer that is gone).
    pub fn last_try(&mut self, id: CommId) {
        let Some(conn) = self.conns.get_mut(id.0) else {
            return;
        };
        match conn.timer {
            Timer::Retransmit { interval_ms, .. } => {
                conn.timer = Timer::Retransmit {
                    retries_left: 0,
                    interval_ms,
                };
            }
            // Sent once now, past the window: a departing device does not
            // wait for the window to drain.
            Timer::Paced { interval_ms, .. } => {
                self.leave_window(id);
                let timer = Timer::Paced {
                    retries_left: 0,
                    interval_ms,
                };
                self.set_timer(id, 0, timer);
            }
            _ => {}
        }
    }

    /// Re-arms the id's single timer (never allocates). Only an earlier
    /// deadline than the id's index entry moves the entry.
    pub(crate) fn set_timer(&mut self, id: CommId, deadline: Millis, timer: Timer) {
        let Some(conn) = self.conns.get_mut(id.0) else {
            return;
        };
        conn.deadline = deadline;
        conn.timer = timer;
        if deadline < conn.deadline_key {
            move_deadline_entry(&mut self.deadlines, conn, deadline);
        }
    }

    pub(crate) fn cancel_timer(&mut self, id: CommId) {
        self.set_timer(id, NEVER, Timer::Idle);
        self.drop_request(id);
    }

    /// Sends `mad` as the id's request and retransmits it every
    /// `timeout_ms` of the id until answered, `max_cm_retries` more times;
    /// or, when the peer's window is full, keeps it until there is room.
    pub(crate) fn send_request<S: Sink<A>>(
        &mut self,
        now: Millis,
        id: CommId,
        mad: Mad,
        sink: &mut S,
    ) {
        self.leave_window(id);
        self.keep_request(id, &mad);
        let Some(conn) = self.conns.get(id.0) else {
            return;
        };
        let interval_ms = conn.timeout_ms.max(1);
        // A request the pool had no room for is sent once, unpaced: its
        // timer only ends the exchange.
        let kept = conn.request.is_some();
        let retries_left = if kept { conn.max_cm_retries } else { 0 };
        if kept && !self.enter_window(id) {
            let parked = Timer::Paced {
                retries_left,
                interval_ms,
            };
            self.set_timer(id, NEVER, parked);
            return;
        }
        self.send_once(id, mad, sink);
        self.arm_retransmit(now, id, retries_left, interval_ms);
    }

    /// Arms the id's timer to resend its request `interval_ms` from now,
    /// with `retries_left` sends still allowed after that.
    fn arm_retransmit(&mut self, now: Millis, id: CommId, retries_left: u8, interval_ms: u32) {
        self.set_timer(
            id,
            now.saturating_add(u64::from(interval_ms)),
            Timer::Retransmit {
                retries_left,
                interval_ms,
            },
        );
    }

    /// Sends a response of the id's and keeps it for duplicates.
    pub(crate) fn send_response<S: Sink<A>>(&mut self, id: CommId, mad: Mad, sink: &mut S) {
        self.keep_response(id, &mad);
        self.send_once(id, mad, sink);
    }

    /// Sends a message of the id's that is neither kept nor repeated.
    pub(crate) fn send_once<S: Sink<A>>(&mut self, id: CommId, mad: Mad, sink: &mut S) {
        if let Some(conn) = self.conns.get(id.0) {
            conn.send_to_peer(&mad, false, sink);
        }
    }

    /// Re-sends the id's outstanding request (a retransmission, or the
    /// answer to a duplicate when that request is the answer); one still
    /// waiting for its first send waits on.
    pub(crate) fn resend_request<S: Sink<A>>(&self, id: CommId, sink: &mut S) {
        let paced = self
            .conns
            .get(id.0)
            .is_some_and(|c| matches!(c.timer, Timer::Paced { .. }));
        if !paced {
            self.send_kept_request(id, true, sink);
        }
    }

    /// Sends the request the id keeps; false if it keeps none.
    fn send_kept_request<S: Sink<A>>(&self, id: CommId, retry: bool, sink: &mut S) -> bool {
        let Some(conn) = self.conns.get(id.0) else {
            return false;
        };
        let Some(mad) = conn.request.and_then(|slot| self.mads.get(slot)) else {
            return false;
        };
        conn.send_to_peer(mad, retry, sink);
        true
    }

    /// Re-sends the id's last response (answer to a duplicate).
    pub(crate) fn resend_response<S: Sink<A>>(&mut self, id: CommId, sink: &mut S) {
        let Some(conn) = self.conns.get(id.0) else {
            return;
        };
        let rebuilt;
        let mad = match conn.response {
            Response::None => None,
            Response::Kept(slot) => self.mads.get(slot),
            Response::BareRtu { tid } => {
                let rtu = Rtu {
                    local_comm_id: id.0,
                    remote_comm_id: conn.remote_id,
                    private_data: core::array::from_fn(|_| 0),
                };
                rebuilt = build(tid, 0, CmMessage::Rtu(rtu));
                Some(&rebuilt)
            }
        };
        if let Some(mad) = mad {
            conn.send_to_peer(mad, true, sink);
        }
    }

    /// Delivers an event unless the consumer destroyed the id.
    pub(crate) fn emit<S: Sink<A>>(&self, id: CommId, event: Event, sink: &mut S) {
        if let Some(conn) = self.conns.get(id.0) {
            if !conn.destroyed {
                sink.event(id, conn.owner, event);
            }
        }
    }

    /// When [`Endpoint::handle_timeout`] should next be called: at the
    /// earliest deadline or, when a timer was cancelled or postponed since,
    /// a little earlier (that call then only updates the index).
    pub fn poll_timeout(&self) -> Option<Millis> {
        match self.deadlines.first_key() {
            Some((deadline, _)) if deadline != NEVER => Some(deadline),
            _ => None,
        }
    }

    /// Runs every timer due at `now`: retransmissions, give-ups, the ends
    /// of TIMEWAIT.
    pub fn handle_timeout<S: Sink<A>>(&mut self, now: Millis, sink: &mut S) {
        while self.handle_timeouts(now, usize::MAX, sink) {}
    }

    /// Runs at most `max` of the timers due at `now`; true if more are due.
    /// Each produces at most [`super::MAX_EVENTS_PER_INPUT`] events and
    /// [`super::MAX_SENDS_PER_INPUT`] MADs, so an embedding can reserve room for
    /// the output of a bounded batch before it runs one.
    pub fn handle_timeouts<S: Sink<A>>(&mut self, now: Millis, max: usize, sink: &mut S) -> bool {
        // Each pass moves one id's index entry to its real deadline, past
        // `now`, or removes it, so the loop ends.
        let mut ran = 0;
        while let Some((key, raw)) = self.deadlines.first_key() {
            if key > now || key == NEVER {
                return false;
            }
            let id = CommId(raw);
            let Some(conn) = self.conns.get_mut(raw) else {
                // Not reachable: ids and deadlines are removed together.
                self.deadlines.remove(&(key, raw));
                continue;
            };
            if conn.deadline != key {
                // Cancelled or postponed since the entry was placed.
                let deadline = conn.deadline;
                move_deadline_entry(&mut self.deadlines, conn, deadline);
                continue;
            }
            if ran == max {
                return true;
            }
            ran += 1;
            match conn.timer {
                Timer::Retransmit {
                    retries_left,
                    interval_ms,
                } if retries_left > 0 => {
                    conn.retransmissions = conn.retransmissions.saturating_add(1);
                    // Unanswered for a whole timeout: the window no longer
                    // waits for it.
                    self.leave_window(id);
                    self.resend_request(id, sink);
                    self.arm_retransmit(now, id, retries_left - 1, interval_ms);
                }
                Timer::Retransmit { .. } => self.give_up(now, id, Failure::Timeout, sink),
                Timer::Paced {
                    retries_left,
                    interval_ms,
                } => {
                    // Its first send, now that the window has room.
                    if self.send_kept_request(id, false, sink) {
                        self.arm_retransmit(now, id, retries_left, interval_ms);
                    } else {
                        self.cancel_timer(id);
                    }
                }
                Timer::Timewait => self.timewait_over(id, sink),
                Timer::Idle => self.set_timer(id, NEVER, Timer::Idle),
            }
        }
        false
    }

    /// The transport could not send a message of attribute `attr_id` of
    /// the id; if it is the outstanding request, the exchange fails now.
    pub fn send_failed<S: Sink<A>>(&mut self, now: Millis, id: CommId, attr_id: u16, sink: &mut S) {
        if let Some(conn) = self.conns.get(id.0) {
            let current = conn
                .request
                .and_then(|slot| self.mads.get(slot))
                .map(crate::wire::mad::peek_attr_id);
            if matches!(conn.timer, Timer::Retransmit { .. }) && current == Some(attr_id) {
                self.give_up(now, id, Failure::SendFailed, sink);
            }
        }
    }

    /// Our request got no answer: the state it was sent from fails.
    fn give_up<S: Sink<A>>(&mut self, now: Millis, id: CommId, why: Failure, sink: &mut S) {
        let Some(conn) = self.conns.get(id.0) else {
            return;
        };
        let (state, lap) = (conn.state, conn.lap_state);
        match state {
            // Tell the peer we gave up (REJ "timeout", naming us by CA
            // GUID), so that it does not complete a connection we dropped.
            State::ReqSent | State::MraReqRcvd => {
                self.send_timeout_rej(id, sink);
                self.reset_to_idle(id, sink);
                self.emit(id, Event::ReqError(why), sink);
            }
            State::RepSent | State::MraRepRcvd => {
                self.send_timeout_rej(id, sink);
                self.reset_to_idle(id, sink);
                self.emit(id, Event::RepError(why), sink);
            }
            State::DreqSent => {
                self.enter_timewait(now, id, sink);
                self.emit(id, Event::DreqError(why), sink);
            }
            State::SidrReqSent => {
                self.reset_to_idle(id, sink);
                self.emit(id, Event::SidrReqError(why), sink);
            }
            State::Established if matches!(lap, LapState::Sent | LapState::MraRcvd) => {
                self.cancel_timer(id);
                if let Some(c) = self.conn_mut(id) {
                    c.lap_state = LapState::Idle;
                }
                self.emit(id, Event::LapError(why), sink);
            }
            _ => self.cancel_timer(id),
        }
        self.reap(id);
    }

    fn timewait_over<S: Sink<A>>(&mut self, id: CommId, sink: &mut S) {
        self.set_timer(id, NEVER, Timer::Idle);
        if let Some(conn) = self.conn_mut(id) {
            conn.move_to(State::Idle, sink);
        }
        self.drop_response(id);
        self.emit(id, Event::TimewaitExit, sink);
        self.reap(id);
    }
}
