// SPDX-License-Identifier: GPL-2.0

//! The shell's trace events (`rust/rdma/trace.rs`): CM messages sent
//! (ib_cma's events, as 6.12 names them) and received, retransmissions,
//! timer-ended exchanges and ids' state changes (rcm's own), each fired
//! after the endpoint's lock is released, from what the input left in its
//! outbox.

use super::outbox::{Outbox, Outgoing};
use crate::proto::cm::{Dropped, Event, Handled, State};
use crate::proto::wire::mad::attr;
use crate::proto::wire::MadSummary;
use crate::rdma::mad::MAD_SIZE;
use crate::rdma::trace::{self, IdTrace, SentMessage};

fn id_trace(s: &MadSummary, state: u8, lap_state: u8) -> IdTrace {
    IdTrace {
        local_id: s.local_comm_id,
        remote_id: s.remote_comm_id,
        state,
        lap_state,
    }
}

/// A MAD posted: its ib_cma send event, or `rcm:icm_resend` for a
/// retransmission (ib_mad resends for the C CM, which traces none).
pub(crate) fn sent(out: &Outgoing) {
    let s = MadSummary::of(&out.mad);
    let id = id_trace(&s, out.state as u8, out.lap_state as u8);
    if out.retry {
        trace::icm_resend(s.name(), id, out.state.name());
        return;
    }
    let msg = match s.attr_id {
        attr::REQ => SentMessage::Req,
        attr::REP => SentMessage::Rep,
        attr::RTU => SentMessage::Rtu,
        attr::MRA => SentMessage::Mra,
        attr::SIDR_REQ => SentMessage::SidrReq,
        attr::SIDR_REP => SentMessage::SidrRep,
        attr::DREQ => SentMessage::Dreq,
        attr::DREP => SentMessage::Drep,
        attr::REJ => return trace::icm_send_rej(id, s.rej_reason),
        // LAP and APR: 6.12 has no event for them.
        _ => return,
    };
    trace::icm_send(msg, id);
}

/// What came of a received MAD, as `rcm:icm_recv` says it.
fn outcome(handled: &Handled) -> &'static str {
    match handled {
        Handled::Delivered(_) => "handled",
        Handled::Duplicate => "duplicate",
        Handled::Answered => "answered (no id)",
        Handled::Dropped(Dropped::Malformed(_)) => "dropped: malformed",
        Handled::Dropped(Dropped::UnknownId) => "dropped: no such id",
        Handled::Dropped(Dropped::WrongState) => "dropped: wrong state",
        Handled::Dropped(Dropped::NoMemory) => "dropped: out of memory",
        Handled::Dropped(Dropped::Ignored) => "ignored",
        Handled::Dropped(Dropped::NoSender) => "dropped: no sender",
    }
}

/// Whether received MADs are traced (`rcm:icm_recv` is on).
pub(crate) fn received_enabled() -> bool {
    trace::icm_recv_enabled()
}

/// A received MAD, what came of it and the state its id was left in, from
/// the receiving id's side: `local_id` is its own comm id (the MAD's
/// receiver, or the id the MAD created or found), `remote_id` the sender's.
pub(crate) fn received(mad: &[u8; MAD_SIZE], handled: &Handled, state: Option<State>) {
    let s = MadSummary::of(mad);
    let local_id = match handled {
        Handled::Delivered(id) => id.0,
        _ => s.remote_comm_id,
    };
    let id = IdTrace {
        local_id,
        remote_id: s.local_comm_id,
        state: state.map_or(0, |st| st as u8),
        lap_state: 0,
    };
    let state = state.map_or("-", State::name);
    trace::icm_recv(s.name(), id, state, s.rej_reason, outcome(handled));
}

/// The events of expired timers: exchanges given up (`REQ_ERROR` ...) and
/// TIMEWAITs ended.
pub(crate) fn timer_events(outbox: &Outbox) {
    for (id, _, event) in outbox.events() {
        trace::icm_timeout(id.0, Event::name(event));
    }
}

/// The ids' state changes an input made, in order.
pub(crate) fn state_changes(outbox: &Outbox) {
    for change in outbox.states.as_slice() {
        trace::icm_state(change.id.0, change.from.name(), change.to.name());
    }
}
