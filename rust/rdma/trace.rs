// SPDX-License-Identifier: GPL-2.0

//! rcm's trace events, through their C callers
//! (`drivers/infiniband/rcm/rcm_trace_*.c`; a tracepoint is a macro and a
//! static key): the ib_cma and rdma_cma events 6.12's CM has, shaped as
//! there, and rcm's own (system `rcm`). Each call costs a function call and
//! a static branch while its event is off.
//!
//! The rdma_cma events are fired where an rdma_cm event reaches its
//! consumer (`cm_id.rs`); the rest by the shell, after the endpoint's lock
//! is released.

use crate::bindings;

/// The CM messages ib_cma has a send event for (REJ has its own, with a
/// reason: [`icm_send_rej`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SentMessage {
    Req,
    Rep,
    Rtu,
    Mra,
    SidrReq,
    SidrRep,
    Dreq,
    Drep,
}

/// One id's side of a traced message: its comm ids and states, as
/// ib_cma's events carry them (the states as `enum ib_cm_state` and
/// `enum ib_cm_lap_state` number them).
#[derive(Clone, Copy, Debug)]
pub(crate) struct IdTrace {
    pub(crate) local_id: u32,
    pub(crate) remote_id: u32,
    pub(crate) state: u8,
    pub(crate) lap_state: u8,
}

/// `ib_cma:icm_send_<msg>`: a message sent. (`icm_send_dup_req` and
/// `icm_send_dup_rep` exist, as in 6.12, but rcm does not tell a reply
/// repeated to a duplicate from the first: both fire the plain event.)
pub(crate) fn icm_send(msg: SentMessage, id: IdTrace) {
    let fire = match msg {
        SentMessage::Req => bindings::rcm_h_trace_icm_send_req,
        SentMessage::Rep => bindings::rcm_h_trace_icm_send_rep,
        SentMessage::Rtu => bindings::rcm_h_trace_icm_send_rtu,
        SentMessage::Mra => bindings::rcm_h_trace_icm_send_mra,
        SentMessage::SidrReq => bindings::rcm_h_trace_icm_send_sidr_req,
        SentMessage::SidrRep => bindings::rcm_h_trace_icm_send_sidr_rep,
        SentMessage::Dreq => bindings::rcm_h_trace_icm_send_dreq,
        SentMessage::Drep => bindings::rcm_h_trace_icm_send_drep,
    };
    // SAFETY: the callers take scalars only.
    unsafe { fire(id.local_id, id.remote_id, id.state, id.lap_state) };
}

/// `ib_cma:icm_send_rej`: a REJ sent, with its reason code.
pub(crate) fn icm_send_rej(id: IdTrace, reason: u16) {
    // SAFETY: scalars only.
    unsafe { bindings::rcm_h_trace_icm_send_rej(id.local_id, id.remote_id, id.state, reason) };
}

/// A string for a caller that takes a pointer and a length.
fn text(s: &str) -> (*const kernel::ffi::c_char, u32) {
    (s.as_ptr().cast(), s.len() as u32)
}

/// `rcm:icm_recv`: a CM message received, the state its id is in after
/// it (its name) and what came of it.
pub(crate) fn icm_recv(msg: &str, id: IdTrace, state: &str, rej_reason: u16, outcome: &str) {
    let (m, ml) = text(msg);
    let (s, sl) = text(state);
    let (o, ol) = text(outcome);
    // SAFETY: each string is valid for its length during the call, which
    // copies what it keeps.
    unsafe {
        bindings::rcm_h_trace_icm_recv(m, ml, id.local_id, id.remote_id, s, sl, rej_reason, o, ol)
    };
}

/// Whether `rcm:icm_recv` is on: what it reports is worked out (partly
/// under the endpoint's lock) only then.
pub(crate) fn icm_recv_enabled() -> bool {
    // SAFETY: no arguments; reads the event's static key.
    unsafe { bindings::rcm_h_trace_icm_recv_enabled() }
}

/// `rcm:icm_resend`: a request sent again after its response timeout.
pub(crate) fn icm_resend(msg: &str, id: IdTrace, state: &str) {
    let (m, ml) = text(msg);
    let (s, sl) = text(state);
    // SAFETY: as in `icm_recv`.
    unsafe { bindings::rcm_h_trace_icm_resend(m, ml, id.local_id, id.remote_id, s, sl) };
}

/// `rcm:icm_timeout`: an exchange of the id ended by its timeout, with
/// the event its consumer gets (`REQ_ERROR` ...).
pub(crate) fn icm_timeout(local_id: u32, event: &str) {
    let (e, el) = text(event);
    // SAFETY: as in `icm_recv`.
    unsafe { bindings::rcm_h_trace_icm_timeout(local_id, e, el) };
}

/// `rcm:icm_state`: an id moved from state `from` to `to`.
pub(crate) fn icm_state(local_id: u32, from: &str, to: &str) {
    let (f, fl) = text(from);
    let (t, tl) = text(to);
    // SAFETY: as in `icm_recv`.
    unsafe { bindings::rcm_h_trace_icm_state(local_id, f, fl, t, tl) };
}

/// Whether `rcm:icm_state` is on: the changes are collected only then.
pub(crate) fn icm_state_enabled() -> bool {
    // SAFETY: no arguments; reads the event's static key.
    unsafe { bindings::rcm_h_trace_icm_state_enabled() }
}
