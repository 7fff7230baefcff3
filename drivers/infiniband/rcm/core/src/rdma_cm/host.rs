// SPDX-License-Identifier: GPL-2.0

//! What rdma_cm needs from whoever runs it: the CM endpoint its
//! connections go through, the consumer's QP (moved as the connection
//! progresses), facts about devices, and a place for events. The kernel
//! shell implements it over its CM service and ib_core; the host
//! simulation over a simulated fabric.

use super::addr::SockAddr;
use super::connect::ConnParams;
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

    /// iWARP: listens for `id` (LISTEN once this succeeds) through the
    /// iWARP CM of `device`, or of every iWARP device for a wildcard
    /// (`None`; no iWARP device is success), with the id's `options`.
    /// The host keeps the listeners until the id is destroyed. A negative
    /// errno.
    fn iw_listen(
        &mut self,
        id: RdmaId,
        device: Option<DeviceId>,
        backlog: u32,
        options: IwOptions,
    ) -> Result<(), i32>;

    /// iWARP: starts `id`'s connection through its device's iWARP CM
    /// with `p` and the id's `options`, rdma_cm's QP (if any) moved to
    /// RTR first; on failure nothing of it is left. A negative errno.
    /// A host may instead start it once the call into rdma_cm is over
    /// (an iWARP connect can block), and report a failure through
    /// [`RdmaCm::iw_connect_failed`](super::RdmaCm::iw_connect_failed).
    fn iw_connect(&mut self, id: RdmaId, p: &ConnParams<'_>, options: IwOptions)
        -> Result<(), i32>;

    /// iWARP: accepts the request `id` came from with `p`, rdma_cm's QP
    /// (if any) moved to RTR first. A negative errno.
    fn iw_accept(&mut self, id: RdmaId, p: &ConnParams<'_>) -> Result<(), i32>;

    /// iWARP: refuses the request `id` came from, with `private_data`.
    fn iw_reject(&mut self, id: RdmaId, private_data: &[u8]) -> Result<(), i32>;

    /// iWARP: closes `id`'s connection (orderly).
    fn iw_disconnect(&mut self, id: RdmaId) -> Result<(), i32>;

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
