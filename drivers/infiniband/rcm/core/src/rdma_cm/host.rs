// SPDX-License-Identifier: GPL-2.0

//! What rdma_cm needs from whoever runs it: the CM endpoint its
//! connections go through, the consumer's QP (moved as the connection
//! progresses), facts about devices, and a place for events. The kernel
//! shell implements it over its CM service and ib_core; the host
//! simulation over a simulated fabric.

use super::endpoint::RdmaId;
use super::event::RdmaEvent;
use super::route::PathKind;
use crate::cm::store::Collections;
use crate::cm::{CommId, DeviceId, Endpoint, Millis, Sink};
use crate::timer::IbaTime;

/// What rdma_cm needs to know of a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Node GUID (the CM's CA GUID).
    pub guid: u64,
    /// The CA's local ACK delay.
    pub ack_delay: IbaTime,
    /// The kind of path its ports make (RoCE v1/v2 or IB).
    pub path_kind: PathKind,
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

    /// Moves `id`'s QP to RTR and then RTS with the attributes the CM
    /// settled for `comm` (`limits` overriding the REQ's), receiving from
    /// `rq_psn` (the id's own starting PSN: on the passive side the QP
    /// moves before the REP that carries it). A negative errno on failure.
    fn qp_ready(
        &mut self,
        id: RdmaId,
        comm: CommId,
        limits: Option<QpLimits>,
        rq_psn: u32,
    ) -> Result<(), i32>;

    /// Moves `id`'s QP, if it has one, to ERR, which flushes posted work.
    fn qp_error(&mut self, id: RdmaId);

    /// A device's facts.
    fn device(&self, device: DeviceId) -> DeviceInfo;

    /// Queues an event for the consumer of `id`, in order.
    fn event(&mut self, id: RdmaId, event: RdmaEvent);
}
