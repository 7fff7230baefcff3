// SPDX-License-Identifier: GPL-2.0

//! The QP attributes a connection settled (`ib_cm_init_qp_attr`) for the
//! consumer's INIT, RTR and RTS transitions, chosen as 6.12's C CM chooses
//! them. Each field that is `Some` (or `true`) is set and named in the
//! attribute mask; the embedding maps fields to the kernel's bits.

use super::conn::Connection;
use super::error::CmError;
use super::state::{LapState, State};
use super::transport::QpType;
use crate::timer::IbaTime;

/// The QP state a consumer asks attributes for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpTarget {
    /// `IB_QPS_INIT`.
    Init,
    /// `IB_QPS_RTR`.
    Rtr,
    /// `IB_QPS_RTS`.
    Rts,
}

/// An alternate path as the QP loads it (`IB_QP_ALT_PATH`: its address
/// vector, port and P_Key index, and its ACK timeout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AltPath<A> {
    /// The path; `None` if the connection has none (the fields are zero).
    pub path: Option<A>,
    /// The local ACK timeout on it.
    pub ack_timeout: IbaTime,
}

/// The attributes of one transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpAttrs<A> {
    /// `IB_QP_STATE`.
    pub state: bool,
    /// `IB_QP_ACCESS_FLAGS`: remote write, and with `true` remote read and
    /// atomic too (and flush where the device has it).
    pub remote_read: Option<bool>,
    /// `IB_QP_PKEY_INDEX | IB_QP_PORT` from the primary path (P_Key index
    /// 0 and the port left alone without one).
    pub port: Option<Option<A>>,
    /// `IB_QP_AV`: the primary path.
    pub av: Option<A>,
    /// `IB_QP_PATH_MTU` (IB encoding).
    pub path_mtu: Option<u8>,
    /// `IB_QP_DEST_QPN`.
    pub dest_qpn: Option<u32>,
    /// `IB_QP_RQ_PSN`.
    pub rq_psn: Option<u32>,
    /// `IB_QP_MAX_DEST_RD_ATOMIC`.
    pub max_dest_rd_atomic: Option<u8>,
    /// `IB_QP_MIN_RNR_TIMER`.
    pub min_rnr_timer: Option<u8>,
    /// `IB_QP_ALT_PATH`.
    pub alt_path: Option<AltPath<A>>,
    /// `IB_QP_SQ_PSN`.
    pub sq_psn: Option<u32>,
    /// `IB_QP_RETRY_CNT`.
    pub retry_cnt: Option<u8>,
    /// `IB_QP_RNR_RETRY`.
    pub rnr_retry: Option<u8>,
    /// `IB_QP_MAX_QP_RD_ATOMIC`.
    pub max_rd_atomic: Option<u8>,
    /// `IB_QP_TIMEOUT`.
    pub timeout: Option<IbaTime>,
    /// `IB_QP_PATH_MIG_STATE` set to `IB_MIG_REARM`.
    pub path_mig_rearm: bool,
}

impl<A> Default for QpAttrs<A> {
    fn default() -> Self {
        QpAttrs {
            state: false,
            remote_read: None,
            port: None,
            av: None,
            path_mtu: None,
            dest_qpn: None,
            rq_psn: None,
            max_dest_rd_atomic: None,
            min_rnr_timer: None,
            alt_path: None,
            sq_psn: None,
            retry_cnt: None,
            rnr_retry: None,
            max_rd_atomic: None,
            timeout: None,
            path_mig_rearm: false,
        }
    }
}

/// States from which the QP may go to INIT: a REQ was sent or received,
/// and the connection is not being torn down.
fn may_init(state: State) -> bool {
    matches!(state, State::ReqSent | State::MraReqRcvd) || may_rtr(state)
}

/// States from which the QP may go to RTR and RTS: the peer's QP is known
/// (a REQ in hand on the passive side, a REP on the active side; RTS
/// before sending the REP is allowed).
fn may_rtr(state: State) -> bool {
    matches!(
        state,
        State::ReqRcvd
            | State::MraReqSent
            | State::RepRcvd
            | State::MraRepSent
            | State::RepSent
            | State::MraRepRcvd
            | State::Established
    )
}

impl<A: Copy> Connection<A> {
    /// The attributes for moving the consumer's QP to `target`;
    /// `InvalidArgument` in a state without them, as 6.12 answers.
    /// `lid_routed` tells whether a path has a destination LID (IB; never
    /// on RoCE): only then does the alternate path go into RTR and the
    /// migration state into RTS, before any LAP.
    pub fn qp_attrs(
        &self,
        target: QpTarget,
        lid_routed: impl Fn(&A) -> bool,
    ) -> Result<QpAttrs<A>, CmError> {
        let allowed = match target {
            QpTarget::Init => may_init(self.state),
            QpTarget::Rtr | QpTarget::Rts => may_rtr(self.state),
        };
        if !allowed {
            return Err(CmError::InvalidArgument);
        }
        let qp = &self.qp;
        let qp_type = self.qp_type();
        let alternate = self.alternate.filter(|a| lid_routed(a));
        let alt_path = |path: Option<A>| AltPath {
            path,
            ack_timeout: qp.alt_ack_timeout,
        };
        let mut a = QpAttrs::default();
        match target {
            QpTarget::Init => {
                a.state = true;
                a.remote_read = Some(qp.responder_resources != 0);
                a.port = Some(self.peer);
            }
            QpTarget::Rtr => {
                a.state = true;
                a.av = self.peer;
                a.path_mtu = Some(qp.path_mtu);
                a.dest_qpn = Some(qp.remote_qpn);
                a.rq_psn = Some(qp.rq_psn);
                if matches!(qp_type, QpType::Rc | QpType::XrcTgt) {
                    a.max_dest_rd_atomic = Some(qp.responder_resources);
                    a.min_rnr_timer = Some(0);
                }
                a.alt_path = alternate.map(|p| alt_path(Some(p)));
            }
            QpTarget::Rts if self.lap_state == LapState::Uninit => {
                a.state = true;
                a.sq_psn = Some(qp.sq_psn);
                if matches!(qp_type, QpType::Rc | QpType::XrcIni) {
                    a.retry_cnt = Some(qp.retry_count);
                    a.rnr_retry = Some(qp.rnr_retry_count);
                    a.max_rd_atomic = Some(qp.initiator_depth);
                }
                if qp_type != QpType::Uc {
                    a.timeout = Some(qp.ack_timeout);
                }
                a.path_mig_rearm = alternate.is_some();
            }
            // After a LAP the QP only loads the new alternate path.
            QpTarget::Rts => {
                a.alt_path = Some(alt_path(self.alternate));
                a.path_mig_rearm = true;
            }
        }
        Ok(a)
    }

    /// The kernel QP type of this side: the passive side of XRC is the
    /// target.
    pub fn qp_type(&self) -> QpType {
        self.qp.transport.qp_type(self.listener.is_some())
    }
}
