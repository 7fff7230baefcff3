// SPDX-License-Identifier: GPL-2.0

//! Runs the core's rdma_cm in the kernel: its ids under a mutex (every
//! caller is in process context: consumers' calls, the CM's delivery work,
//! ib_core's address resolution work), over the CM service's endpoint, with
//! the consumers' QPs moved through a [`QpControl`] and iWARP connections
//! run through an [`IwarpCm`], both provided by the rdma_cm surface. Events
//! queue here, in order, and go out from the CM service's delivery work
//! ([`crate::shell::EventConsumer::deliver_pending`]). The MADs a call
//! makes are posted after the mutex is released: posting runs the
//! driver's send inline, and other ids' calls wait for the mutex.
//!
//! Lock order: the rdma_cm mutex, then the endpoint lock (taken inside
//! [`Host::cm`]); the event queue's lock is taken last and held briefly.
//! IP multicast joins and leaves (rtnl) and QP moves to ERR run after the
//! mutex is released; moves to RTR and RTS (whose result the core needs
//! within the call) and the iw_cm calls still run under it.

use super::kernel_maps::{Accounted, KernelCollections};
use super::lock_meter::LockMeter;
use super::outbox::Outbox;
use super::peer::Peer;
use super::service::{CmService, KernelEndpoint};
use crate::proto::cm::{CommId, DeviceId, Millis};
use crate::proto::rdma_cm::{
    ConnParams, DeviceInfo, Host, IwOptions, PathKind, QpLimits, RdmaCm, RdmaEvent, RdmaId,
    SockAddr,
};
use crate::proto::timer::IbaTime;
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::sync::Mutex;

/// The core's rdma_cm as the kernel runs it.
pub(crate) type KernelRdmaCm = RdmaCm<KernelCollections<Accounted>, Peer>;

/// Queued events, oldest first.
pub(crate) type RdmaEvents = KVec<(RdmaId, RdmaEvent)>;

/// How the rdma_cm surface moves its consumers' QPs for the core.
pub(crate) trait QpControl {
    /// `id`'s QP to RTR (receiving from `rq_psn`) and RTS with the
    /// attributes the CM `cm` settled for `comm`; a negative errno on
    /// failure.
    fn qp_ready(
        &self,
        cm: &CmService,
        id: RdmaId,
        comm: CommId,
        limits: Option<QpLimits>,
        rq_psn: u32,
    ) -> Result<(), i32>;
    /// `id`'s QP, if any, to ERR.
    fn qp_error(&self, id: RdmaId);
}

/// How the rdma_cm surface runs its iWARP ids' connections through the
/// kernel's iw_cm for the core (see [`Host`]'s `iw_` calls).
pub(crate) trait IwarpCm {
    /// Listens for `id` on `device`'s iw_cm, or every iWARP device's.
    fn iw_listen(
        &self,
        id: RdmaId,
        device: Option<DeviceId>,
        backlog: u32,
        options: IwOptions,
    ) -> Result<(), i32>;
    /// Starts `id`'s connection.
    fn iw_connect(&self, id: RdmaId, p: &ConnParams<'_>, options: IwOptions) -> Result<(), i32>;
    /// Accepts the request `id` came from.
    fn iw_accept(&self, id: RdmaId, p: &ConnParams<'_>) -> Result<(), i32>;
    /// Refuses it.
    fn iw_reject(&self, id: RdmaId, private_data: &[u8]) -> Result<(), i32>;
    /// Closes `id`'s connection.
    fn iw_disconnect(&self, id: RdmaId) -> Result<(), i32>;
}

/// How the rdma_cm surface joins and leaves IP multicast groups for the
/// core's UD ids (see [`Host`]'s `join_group` and `leave_group`). Joining
/// and leaving take rtnl, so the core's calls only check and queue them;
/// [`RdmaService`] applies the queue once the core's lock is released.
pub(crate) trait IpMulticast {
    /// Checks that `id` may join `addr` and queues the join on its
    /// network device unless `send_only`.
    fn join_group(&self, id: RdmaId, addr: &SockAddr, send_only: bool) -> Result<(), i32>;
    /// Queues the leave of what `join_group` joined.
    fn leave_group(&self, id: RdmaId, addr: &SockAddr, send_only: bool);
    /// Applies the queued joins and leaves, in order (called with no
    /// rdma_cm lock held).
    fn apply_group_changes(&self);
}

/// rdma_cm's ids and their undelivered events.
#[pin_data]
pub(crate) struct RdmaService {
    #[pin]
    core: Mutex<KernelRdmaCm>,
    /// Events waiting for delivery, in order.
    #[pin]
    events: Mutex<RdmaEvents>,
    /// Events that found no memory (reported, never silently lost).
    lost: core::sync::atomic::AtomicU32,
    /// How long `core` is waited for and held.
    #[pin]
    meter: LockMeter,
}

/// The environment of one call into the core.
pub(crate) struct KernelHost<'a, Q: QpControl + IwarpCm + IpMulticast> {
    cm: &'a CmService,
    qp: &'a Q,
    events: &'a mut RdmaEvents,
    lost: u32,
    /// The id whose first event is handed back to the caller (see
    /// [`RdmaService::call_taking`]), and that event once produced.
    take_for: Option<RdmaId>,
    taken: Option<RdmaEvent>,
    /// The CM's output of the call, in order, sent once the core's lock
    /// is released (other ids' calls and address results need that lock
    /// meanwhile, and posting runs the driver's send inline). Most calls
    /// reach the CM once: that output is kept in place, the rare later
    /// ones in `unsent_more` (one Outbox on the stack: user calls run on
    /// a kernel stack).
    unsent: Option<Outbox>,
    unsent_more: KVec<Outbox>,
    /// Whether the call queued IP multicast changes, applied once the
    /// core's lock is released.
    group_changes: bool,
    /// The ids whose QP the call moved to ERR, in order: moved once the
    /// core's lock is released, before the call's MADs are sent and its
    /// events delivered (so still before the DREQ or the DISCONNECTED
    /// that follows), as a QP move takes the id's QP lock and the driver.
    qp_errors: KVec<RdmaId>,
}

impl<Q: QpControl + IwarpCm + IpMulticast> Host<Peer> for KernelHost<'_, Q> {
    type Maps = KernelCollections;
    type Out = Outbox;

    fn cm<R>(&mut self, f: impl FnOnce(&mut KernelEndpoint, Millis, &mut Outbox) -> R) -> R {
        let (r, outbox) = self.cm.run_unsent(f);
        if self.unsent.is_none() {
            self.unsent = Some(outbox);
        } else if self.unsent_more.reserve(1, GFP_KERNEL).is_ok() {
            // Reserved: the push cannot fail.
            let _ = self.unsent_more.push(outbox, GFP_KERNEL);
        } else {
            // No memory to keep it: the earlier output is sent now, in
            // order, under the lock.
            if let Some(first) = self.unsent.take() {
                self.cm.send(first);
            }
            for earlier in core::mem::replace(&mut self.unsent_more, KVec::new()) {
                self.cm.send(earlier);
            }
            self.unsent = Some(outbox);
        }
        r
    }

    fn cm_read<R>(&mut self, f: impl FnOnce(&KernelEndpoint) -> R) -> R {
        self.cm.read(f)
    }

    fn qp_ready(
        &mut self,
        id: RdmaId,
        comm: CommId,
        limits: Option<QpLimits>,
        rq_psn: u32,
    ) -> Result<(), i32> {
        self.qp.qp_ready(self.cm, id, comm, limits, rq_psn)
    }

    fn qp_error(&mut self, id: RdmaId) {
        // Without memory to keep it for later, the QP moves now.
        if self.qp_errors.push(id, GFP_KERNEL).is_err() {
            self.qp.qp_error(id);
        }
    }

    fn iw_listen(
        &mut self,
        id: RdmaId,
        device: Option<DeviceId>,
        backlog: u32,
        options: IwOptions,
    ) -> Result<(), i32> {
        self.qp.iw_listen(id, device, backlog, options)
    }

    fn iw_connect(
        &mut self,
        id: RdmaId,
        p: &ConnParams<'_>,
        options: IwOptions,
    ) -> Result<(), i32> {
        self.qp.iw_connect(id, p, options)
    }

    fn iw_accept(&mut self, id: RdmaId, p: &ConnParams<'_>) -> Result<(), i32> {
        self.qp.iw_accept(id, p)
    }

    fn iw_reject(&mut self, id: RdmaId, private_data: &[u8]) -> Result<(), i32> {
        self.qp.iw_reject(id, private_data)
    }

    fn iw_disconnect(&mut self, id: RdmaId) -> Result<(), i32> {
        self.qp.iw_disconnect(id)
    }

    fn join_group(&mut self, id: RdmaId, addr: &SockAddr, send_only: bool) -> Result<(), i32> {
        self.group_changes = true;
        self.qp.join_group(id, addr, send_only)
    }

    fn leave_group(&mut self, id: RdmaId, addr: &SockAddr, send_only: bool) {
        self.group_changes = true;
        self.qp.leave_group(id, addr, send_only);
    }

    fn device(&self, device: DeviceId) -> DeviceInfo {
        // A device that went away meanwhile: nothing to reach it by.
        self.cm.device_info(device).unwrap_or(DeviceInfo {
            guid: 0,
            ack_delay: IbaTime::new(0),
            path_kind: PathKind::Ib,
            iwarp: false,
        })
    }

    fn event(&mut self, id: RdmaId, event: RdmaEvent) {
        if self.take_for == Some(id) && self.taken.is_none() {
            self.taken = Some(event);
            return;
        }
        if self.events.push((id, event), GFP_KERNEL).is_err() {
            self.lost += 1;
        }
    }
}

impl RdmaService {
    /// No ids.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(RdmaService {
            core <- new_mutex!(RdmaCm::new(), "rcm::rdma_cm"),
            events <- new_mutex!(KVec::new(), "rcm::rdma_events"),
            lost: core::sync::atomic::AtomicU32::new(0),
            meter <- LockMeter::new(),
        })
    }

    /// Runs `f` on the core with the CM service `cm` and the QPs of `qp`;
    /// the events it produced are queued (under the core's lock, so in
    /// order) and the delivery work is kicked.
    pub(crate) fn call<Q: QpControl + IwarpCm + IpMulticast, R>(
        &self,
        cm: &CmService,
        qp: &Q,
        f: impl FnOnce(&mut KernelRdmaCm, &mut KernelHost<'_, Q>) -> R,
    ) -> R {
        self.run(cm, qp, None, f).0
    }

    /// As [`Self::call`], but the first event `f` produces for `id` is
    /// handed back, for the caller to deliver in its own task, instead of
    /// queued behind every other id's.
    pub(crate) fn call_taking<Q: QpControl + IwarpCm + IpMulticast, R>(
        &self,
        cm: &CmService,
        qp: &Q,
        id: RdmaId,
        f: impl FnOnce(&mut KernelRdmaCm, &mut KernelHost<'_, Q>) -> R,
    ) -> (R, Option<RdmaEvent>) {
        self.run(cm, qp, Some(id), f)
    }

    fn run<Q: QpControl + IwarpCm + IpMulticast, R>(
        &self,
        cm: &CmService,
        qp: &Q,
        take_for: Option<RdmaId>,
        f: impl FnOnce(&mut KernelRdmaCm, &mut KernelHost<'_, Q>) -> R,
    ) -> (R, Option<RdmaEvent>) {
        let by = core::any::type_name_of_val(&f);
        let mut core = self.meter.lock(by, || self.core.lock());
        let mut queue = self.events.lock();
        let before = queue.len();
        let mut host = KernelHost {
            cm,
            qp,
            events: &mut queue,
            lost: 0,
            take_for,
            taken: None,
            unsent: None,
            unsent_more: KVec::new(),
            group_changes: false,
            qp_errors: KVec::new(),
        };
        let r = f(&mut core, &mut host);
        let (lost, taken) = (host.lost, host.taken);
        let (unsent, unsent_more) = (host.unsent, host.unsent_more);
        let group_changes = host.group_changes;
        let qp_errors = host.qp_errors;
        let queued = queue.len() > before;
        drop(queue);
        drop(core);
        for id in qp_errors {
            qp.qp_error(id);
        }
        for outbox in Iterator::chain(unsent.into_iter(), unsent_more) {
            cm.send(outbox);
        }
        if group_changes {
            qp.apply_group_changes();
        }
        if lost > 0 {
            self.lost
                .fetch_add(lost, core::sync::atomic::Ordering::Relaxed);
            pr_warn!("out of memory: {} rdma_cm event(s) not delivered\n", lost);
        }
        if queued {
            cm.kick();
        }
        (r, taken)
    }

    /// Reads the core.
    pub(crate) fn read<R>(&self, f: impl FnOnce(&KernelRdmaCm) -> R) -> R {
        let by = core::any::type_name_of_val(&f);
        f(&self.meter.lock(by, || self.core.lock()))
    }

    /// The meter of the core's lock.
    pub(crate) fn lock_meter(&self) -> &LockMeter {
        &self.meter
    }

    /// Takes the queued events.
    pub(crate) fn take_events(&self) -> RdmaEvents {
        core::mem::take(&mut *self.events.lock())
    }
}
