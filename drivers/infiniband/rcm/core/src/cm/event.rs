// SPDX-License-Identifier: GPL-2.0

//! Events the CM delivers to the consumer of a communication id (the
//! `enum ib_cm_event_type` of the kernel's ib_cm, plus the message that
//! caused each). Events of one id are emitted in the order they happen;
//! an id the consumer destroyed gets none.

use crate::wire::disconnect::{Drep, Dreq};
use crate::wire::lap::{Apr, Lap};
use crate::wire::mra::{Mra, Rej};
use crate::wire::rep::{Rep, Rtu};
use crate::wire::req::Req;
use crate::wire::sidr::{SidrRep, SidrReq};

use super::CommId;

/// Why an exchange we started failed without an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Every retransmission timed out.
    Timeout,
    /// The transport reported that the request could not be sent.
    SendFailed,
}

/// A CM event for one communication id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A REQ for a listener created this id (`IB_CM_REQ_RECEIVED`).
    ReqReceived {
        /// The listener the REQ matched.
        listener: CommId,
        /// The REQ.
        req: Req,
        /// The MAD header's attribute modifier (ECE options).
        attr_mod: u32,
    },
    /// Our REQ got no answer (`IB_CM_REQ_ERROR`).
    ReqError(Failure),
    /// The peer accepted our REQ (`IB_CM_REP_RECEIVED`).
    RepReceived {
        /// The REP.
        rep: Rep,
        /// The MAD header's attribute modifier (ECE options).
        attr_mod: u32,
    },
    /// Our REP got no RTU (`IB_CM_REP_ERROR`).
    RepError(Failure),
    /// The active side confirmed the connection (`IB_CM_RTU_RECEIVED`).
    RtuReceived(Rtu),
    /// The QP saw traffic before the RTU (`IB_CM_USER_ESTABLISHED`).
    UserEstablished,
    /// The peer disconnects (`IB_CM_DREQ_RECEIVED`).
    DreqReceived(Dreq),
    /// Our DREQ got no DREP (`IB_CM_DREQ_ERROR`); the id is in TIMEWAIT.
    DreqError(Failure),
    /// The peer confirmed our disconnect (`IB_CM_DREP_RECEIVED`).
    DrepReceived(Drep),
    /// TIMEWAIT is over; the id is IDLE (`IB_CM_TIMEWAIT_EXIT`).
    TimewaitExit,
    /// The peer needs more time (`IB_CM_MRA_RECEIVED`).
    MraReceived(Mra),
    /// The peer rejected the connection (`IB_CM_REJ_RECEIVED`).
    RejReceived {
        /// The REJ.
        rej: Rej,
        /// The MAD header's attribute modifier (ECE options).
        attr_mod: u32,
    },
    /// The peer proposes an alternate path (`IB_CM_LAP_RECEIVED`).
    LapReceived(Lap),
    /// Our LAP got no APR (`IB_CM_LAP_ERROR`).
    LapError(Failure),
    /// The peer answered our LAP (`IB_CM_APR_RECEIVED`).
    AprReceived(Apr),
    /// A SIDR_REQ for a listener created this id
    /// (`IB_CM_SIDR_REQ_RECEIVED`).
    SidrReqReceived {
        /// The listener the SIDR_REQ matched.
        listener: CommId,
        /// The SIDR_REQ.
        req: SidrReq,
    },
    /// Our SIDR_REQ got no answer (`IB_CM_SIDR_REQ_ERROR`).
    SidrReqError(Failure),
    /// The answer to our SIDR_REQ (`IB_CM_SIDR_REP_RECEIVED`).
    SidrRepReceived(SidrRep),
}

impl Event {
    /// The kernel's `enum ib_cm_event_type` value.
    pub const fn kernel_type(&self) -> u32 {
        match self {
            Event::ReqError(_) => 0,
            Event::ReqReceived { .. } => 1,
            Event::RepError(_) => 2,
            Event::RepReceived { .. } => 3,
            Event::RtuReceived(_) => 4,
            Event::UserEstablished => 5,
            Event::DreqError(_) => 6,
            Event::DreqReceived(_) => 7,
            Event::DrepReceived(_) => 8,
            Event::TimewaitExit => 9,
            Event::MraReceived(_) => 10,
            Event::RejReceived { .. } => 11,
            Event::LapError(_) => 12,
            Event::LapReceived(_) => 13,
            Event::AprReceived(_) => 14,
            Event::SidrReqError(_) => 15,
            Event::SidrReqReceived { .. } => 16,
            Event::SidrRepReceived(_) => 17,
        }
    }

    /// The kernel's name for the event.
    pub const fn name(&self) -> &'static str {
        match self {
            Event::ReqError(_) => "REQ_ERROR",
            Event::ReqReceived { .. } => "REQ_RECEIVED",
            Event::RepError(_) => "REP_ERROR",
            Event::RepReceived { .. } => "REP_RECEIVED",
            Event::RtuReceived(_) => "RTU_RECEIVED",
            Event::UserEstablished => "USER_ESTABLISHED",
            Event::DreqError(_) => "DREQ_ERROR",
            Event::DreqReceived(_) => "DREQ_RECEIVED",
            Event::DrepReceived(_) => "DREP_RECEIVED",
            Event::TimewaitExit => "TIMEWAIT_EXIT",
            Event::MraReceived(_) => "MRA_RECEIVED",
            Event::RejReceived { .. } => "REJ_RECEIVED",
            Event::LapError(_) => "LAP_ERROR",
            Event::LapReceived(_) => "LAP_RECEIVED",
            Event::AprReceived(_) => "APR_RECEIVED",
            Event::SidrReqError(_) => "SIDR_REQ_ERROR",
            Event::SidrReqReceived { .. } => "SIDR_REQ_RECEIVED",
            Event::SidrRepReceived(_) => "SIDR_REP_RECEIVED",
        }
    }
}
