// SPDX-License-Identifier: GPL-2.0

//! What a CM event on a connection means for its rdma_cm id, as 6.12's
//! `cma_ib_handler` decides: which rdma_cm event the consumer gets, the
//! state change, and what rdma_cm does itself (the RTU after a REP when
//! it owns the QP, left to the host with the QP move it follows; the QP
//! to ERR on a REJ).

use super::endpoint::{RdmaCm, RdmaId, RdmaQpType};
use super::event::{ConnData, EventKind, EventStatus, RdmaEvent};
use super::host::{AfterReady, Host, ReadyMove};
use super::passive::{Arrival, MRA_SETTING};
use super::state::IdState;
use crate::cm::store::{Collections, OrderedMap};
use crate::cm::{CommId, Event, Transport};
use crate::wire::mra::Rej;
use crate::wire::rep::Rep;

/// What became of a CM event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmEventOutcome {
    /// It went to (or was ignored by) the rdma_cm id.
    Handled(Option<RdmaId>),
    /// A REQ for an rdma_cm listener that no id takes: the embedding
    /// destroys the new CM id, which rejects the REQ.
    Refused,
    /// The CM id is not rdma_cm's.
    NotOurs,
}

impl<C: Collections, A: Copy + Ord> RdmaCm<C, A> {
    /// Whether a CM id (a connection or a listener) is rdma_cm's, so its
    /// events come here.
    pub fn owns(&self, comm: CommId) -> bool {
        self.by_comm.get(&comm).is_some() || self.holds_listener(comm)
    }

    /// Whether `event` of `comm` is rdma_cm's to handle: a request (REQ or
    /// SIDR_REQ, on a new CM id) for one of its listeners, or news of one
    /// of its CM ids. What is not goes to the CM's other consumers.
    pub fn claims(&self, comm: CommId, event: &Event) -> bool {
        match event {
            Event::ReqReceived { listener, .. } | Event::SidrReqReceived { listener, .. } => {
                self.holds_listener(*listener)
            }
            _ => self.owns(comm),
        }
    }

    /// Handles one CM event for `comm`.
    pub fn cm_event<H: Host<A>>(
        &mut self,
        host: &mut H,
        at: Arrival,
        comm: CommId,
        event: &Event,
    ) -> CmEventOutcome {
        if let Event::ReqReceived {
            listener,
            req,
            attr_mod,
        } = event
        {
            if !self.holds_listener(*listener) {
                return CmEventOutcome::NotOurs;
            }
            return match self.req_received(host, at, comm, req, *attr_mod) {
                Ok(child) => CmEventOutcome::Handled(Some(child)),
                Err(_) => CmEventOutcome::Refused,
            };
        }
        if let Event::SidrReqReceived { listener, req } = event {
            if !self.holds_listener(*listener) {
                return CmEventOutcome::NotOurs;
            }
            return match self.sidr_req_received(host, at, comm, req) {
                Ok(child) => CmEventOutcome::Handled(Some(child)),
                Err(_) => CmEventOutcome::Refused,
            };
        }
        let Some(&id) = self.by_comm.get(&comm) else {
            return CmEventOutcome::NotOurs;
        };
        let Some(rec) = self.ids.get(&id) else {
            return CmEventOutcome::Handled(None);
        };
        let (state, qp_type) = (rec.state, rec.qp_type);
        if rec.gave_up {
            return CmEventOutcome::Handled(None);
        }
        let wanted = if matches!(event, Event::TimewaitExit) {
            IdState::Disconnect
        } else {
            IdState::Connect
        };
        if state != wanted {
            return CmEventOutcome::Handled(None);
        }
        if qp_type == RdmaQpType::Ud {
            return match self.sidr_outcome(id, event) {
                Some(ev) => {
                    host.event(id, ev);
                    CmEventOutcome::Handled(Some(id))
                }
                None => CmEventOutcome::Handled(None),
            };
        }
        let ev = match event {
            Event::ReqError(_) | Event::RepError(_) => {
                RdmaEvent::plain(EventKind::Unreachable, EventStatus::TimedOut)
            }
            Event::RepReceived { rep, attr_mod } => {
                if qp_type != RdmaQpType::Ud {
                    let _ = host.cm(|ep, _, out| ep.send_mra(comm, MRA_SETTING, &[], out));
                }
                let xrc = host.cm_read(|ep| ep.get(comm).map(|c| c.qp_params().transport))
                    == Some(Transport::Xrc);
                let conn = rep_data(rep, *attr_mod, xrc);
                match self.ids.get(&id) {
                    Some(r) if r.has_qp => {
                        let mv = ReadyMove {
                            id,
                            comm,
                            limits: None,
                            rq_psn: r.psn,
                            then: AfterReady::ReportRtu { conn },
                        };
                        // The event follows the move.
                        let _ = self.ready_then(host, mv);
                        return CmEventOutcome::Handled(Some(id));
                    }
                    _ => RdmaEvent {
                        kind: EventKind::ConnectResponse,
                        status: EventStatus::Ok,
                        listener: None,
                        group: None,
                        conn,
                    },
                }
            }
            Event::RtuReceived(_) | Event::UserEstablished => {
                RdmaEvent::plain(EventKind::Established, EventStatus::Ok)
            }
            Event::DreqError(_) | Event::DreqReceived(_) | Event::DrepReceived(_) => {
                if let Some(rec) = self.ids.get_mut(&id) {
                    rec.state = IdState::Disconnect;
                }
                let status = if matches!(event, Event::DreqError(_)) {
                    EventStatus::TimedOut
                } else {
                    EventStatus::Ok
                };
                RdmaEvent::plain(EventKind::Disconnected, status)
            }
            Event::TimewaitExit => RdmaEvent::plain(EventKind::TimewaitExit, EventStatus::Ok),
            Event::RejReceived { rej, .. } => {
                host.qp_error(id);
                rej_event(rej)
            }
            // MRA, LAP/APR and SIDR are not rdma_cm's business here.
            _ => return CmEventOutcome::Handled(None),
        };
        host.event(id, ev);
        CmEventOutcome::Handled(Some(id))
    }
}

/// A REP's parameters as the active side reports them (resources seen
/// from the receiver, 196 bytes of private data).
fn rep_data(rep: &Rep, attr_mod: u32, xrc: bool) -> ConnData {
    let mut c = ConnData::with_data(&rep.private_data, rep.private_data.len());
    c.responder_resources = rep.initiator_depth;
    c.initiator_depth = rep.responder_resources;
    c.flow_control = rep.end_to_end_flow_control;
    c.rnr_retry_count = rep.rnr_retry_count;
    c.srq = rep.srq;
    c.qp_num = rep.peer_qpn(xrc);
    c.ece_vendor_id = rep.vendor_id();
    c.ece_attr_mod = attr_mod;
    c
}

/// REJECTED: the reason as status, 148 bytes of private data.
fn rej_event(rej: &Rej) -> RdmaEvent {
    RdmaEvent {
        kind: EventKind::Rejected,
        status: EventStatus::Rejected(rej.reason),
        listener: None,
        group: None,
        conn: ConnData::with_data(&rej.private_data, rej.private_data.len()),
    }
}
