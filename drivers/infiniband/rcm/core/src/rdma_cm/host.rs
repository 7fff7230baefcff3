// SPDX-License-Identifier: GPL-2.0

//! What rdma_cm needs from whoever runs it: the CM endpoint its
//! connections go through, the consumer's QP (moved as the connection
//! progresses), facts about devices, and a place for events. The kernel
//! shell implements it over its CM service and ib_core; the host
//! simulation over a simulated fabric.

use super::addr::SockAddr;
use super::connect::ConnParams;
use super::endpoint::{RdmaCmError, RdmaId};
use super::event::{ConnData, RdmaEvent};
use super::private_data::PrivateData;
use super::route::PathKind;
use crate::cm::store::Collections;
use crate::cm::{CommId, DeviceId, Endpoint, Millis, Sink};
use crate::timer::IbaTime;
use crate::wire::rep::Rep;

/// What rdma_cm needs to know of a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Node GUID (the CM's CA GUID).
    pub guid: u64,
    /// The CA's local ACK delay.
    pub ack_delay: IbaTime,
    /// The kind of path its ports make (RoCE v1/v2 or IB).
    pub path_kind: PathKind,
    /// Its connections go through its own iWARP CM, not CM MADs.
    pub iwarp: bool,
}

/// The id's options an iWARP CM id takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IwOptions {
    /// The type of service (`rdma_set_service_type`), if set.
    pub tos: Option<u8>,
    /// IPv6 only (`rdma_set_afonly`).
    pub afonly: bool,
}

/// The QP limits a consumer gives on accept, which override what the REQ
/// asked for (`rdma_conn_param`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpLimits {
    /// Incoming RDMA reads and atomics (`max_dest_rd_atomic`).
    pub responder_resources: u8,
    /// Outgoing RDMA reads and atomics (`max_rd_atomic`).
    pub initiator_depth: u8,
}

/// What rdma_cm does once a [`ReadyMove`] is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterReady {
    /// `rdma_accept` answering a REQ: sends this REP, with the ECE
    /// attribute modifier `attr_mod`.
    SendRep {
        /// The REP, complete.
        rep: Rep,
        /// Its ECE attribute modifier.
        attr_mod: u32,
    },
    /// `rdma_accept` completing a connection whose REP the consumer took
    /// (CONNECT_RESPONSE): sends the RTU.
    SendRtu,
    /// A REP arrived: sends the RTU and reports ESTABLISHED with the REP's
    /// parameters `conn` (CONNECT_ERROR on failure).
    ReportRtu {
        /// What the event reports.
        conn: ConnData,
    },
}

/// A move of `id`'s QP to RTR (receiving from `rq_psn`: on the passive
/// side the QP moves before the REP that carries it) and then RTS, with
/// the attributes the CM settled for `comm` and `limits` overriding the
/// REQ's; rdma_cm goes on with `then` once it is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadyMove {
    /// The id whose QP moves.
    pub id: RdmaId,
    /// Its connection's CM id.
    pub comm: CommId,
    /// The consumer's limits on accept.
    pub limits: Option<QpLimits>,
    /// The first PSN the QP receives.
    pub rq_psn: u32,
    /// What follows.
    pub then: AfterReady,
}

/// What an iWARP connect or accept hands the iWARP CM
/// (`iw_cm_conn_param`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IwParams {
    /// For the peer (MPA).
    pub private_data: PrivateData,
    /// Incoming RDMA reads: the consumer's responder resources.
    pub ird: u8,
    /// Outgoing RDMA reads: its initiator depth.
    pub ord: u8,
    /// The QP number (ids without a QP of rdma_cm's).
    pub qp_num: u32,
}

impl IwParams {
    /// The consumer's parameters; `None` if its private data is longer
    /// than a caller can pass.
    pub fn new(p: &ConnParams<'_>) -> Option<Self> {
        Some(IwParams {
            private_data: PrivateData::new(p.private_data)?,
            ird: p.responder_resources,
            ord: p.initiator_depth,
            qp_num: p.qp_num,
        })
    }
}

/// A call of an id's iWARP CM that rdma_cm leaves to its host (see
/// [`Host::iw_call`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IwCall {
    /// Listen for `id` through the iWARP CM of `device`, or of every
    /// iWARP device (`None`; no iWARP device is success), with the id's
    /// `options`. The host keeps the listeners until the id is destroyed.
    Listen {
        /// The listening id.
        id: RdmaId,
        /// Its device, if it is bound to one.
        device: Option<DeviceId>,
        /// Its backlog.
        backlog: u32,
        /// Its options.
        options: IwOptions,
    },
    /// Start `id`'s connection with `params` and the id's `options`,
    /// rdma_cm's QP (if any) moved to RTR first; a failure leaves nothing
    /// of it.
    Connect {
        /// The connecting id.
        id: RdmaId,
        /// The consumer's parameters.
        params: IwParams,
        /// The id's options.
        options: IwOptions,
    },
    /// Accept the request `id` came from with `params`, rdma_cm's QP (if
    /// any) moved to RTR first.
    Accept {
        /// The id of the request.
        id: RdmaId,
        /// The consumer's parameters.
        params: IwParams,
    },
    /// Refuse the request `id` came from, with `private_data`.
    Reject {
        /// The id of the request.
        id: RdmaId,
        /// For the peer.
        private_data: PrivateData,
    },
    /// Close `id`'s connection (orderly).
    Disconnect {
        /// The connected id.
        id: RdmaId,
    },
}

impl IwCall {
    /// The id the call is for.
    pub fn id(&self) -> RdmaId {
        match *self {
            IwCall::Listen { id, .. }
            | IwCall::Connect { id, .. }
            | IwCall::Accept { id, .. }
            | IwCall::Reject { id, .. }
            | IwCall::Disconnect { id } => id,
        }
    }
}

/// The environment rdma_cm runs in.
pub trait Host<A: Copy + Ord> {
    /// The CM endpoint's tables.
    type Maps: Collections;
    /// Where the CM endpoint's output goes.
    type Out: Sink<A>;

    /// Runs `f` on the CM endpoint, with the time and its output sink.
    fn cm<R>(
        &mut self,
        f: impl FnOnce(&mut Endpoint<A, Self::Maps>, Millis, &mut Self::Out) -> R,
    ) -> R;

    /// Reads the CM endpoint (no output).
    fn cm_read<R>(&mut self, f: impl FnOnce(&Endpoint<A, Self::Maps>) -> R) -> R;

    /// Takes `mv`, a move of an id's QP to RTR and then RTS, to make once
    /// the call into rdma_cm is over, with no lock of rdma_cm held (a move
    /// takes the QP's own lock and runs the driver), and to hand its
    /// result to [`RdmaCm::qp_ready_done`](super::RdmaCm::qp_ready_done)
    /// before the caller returns. `NoMemory` if it cannot keep the move:
    /// rdma_cm fails it at once.
    fn qp_ready(&mut self, mv: &ReadyMove) -> Result<(), RdmaCmError>;

    /// Moves `id`'s QP, if it has one, to ERR, which flushes posted work.
    fn qp_error(&mut self, id: RdmaId);

    /// Takes `call` of an iWARP CM to make once the call into rdma_cm is
    /// over, with no lock of rdma_cm held (iw_cm sleeps: it sends on TCP
    /// and waits for its work), after the call's QP moves, and to hand a
    /// failure to [`RdmaCm::iw_call_done`](super::RdmaCm::iw_call_done)
    /// before the caller returns (success needs nothing more).
    /// `NoMemory` if it cannot keep the call: rdma_cm fails it at once.
    /// Only consumers' calls leave one, never what the iWARP CM reports
    /// ([`RdmaCm::iw_event`](super::RdmaCm::iw_event),
    /// [`RdmaCm::iw_request`](super::RdmaCm::iw_request)): a call made
    /// from the iWARP CM's own work could wait for that work.
    fn iw_call(&mut self, call: &IwCall) -> Result<(), RdmaCmError>;

    /// Joins the IP multicast group `addr` on `id`'s network device
    /// (IGMP), unless `send_only`. A negative errno.
    fn join_group(&mut self, id: RdmaId, addr: &SockAddr, send_only: bool) -> Result<(), i32>;

    /// Leaves it again (nothing for a send-only membership).
    fn leave_group(&mut self, id: RdmaId, addr: &SockAddr, send_only: bool);

    /// A device's facts.
    fn device(&self, device: DeviceId) -> DeviceInfo;

    /// Queues an event for the consumer of `id`, in order.
    fn event(&mut self, id: RdmaId, event: RdmaEvent);
}
