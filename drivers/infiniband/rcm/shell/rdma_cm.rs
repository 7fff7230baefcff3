// SPDX-License-Identifier: GPL-2.0

//! Runs the core's rdma_cm in the kernel: its ids under a mutex (every
//! caller is in process context: consumers' calls, the CM's delivery work,
//! ib_core's address resolution work), over the CM service's endpoint, with
//! the consumers' QPs moved through a [`QpControl`] and iWARP connections
//! run through an [`IwarpCm`], both provided by the rdma_cm surface. Events
//! queue here, in order, and go out from the CM service's delivery work
//! ([`crate::shell::EventConsumer::deliver_pending`]). The MADs a call
//! makes are posted after the mutex is released: posting runs the
//! driver's send inline, and other ids' calls wait for the mutex (only a
//! call that finds no memory to keep a later output sends the earlier
//! under it, [`KernelHost`]'s `cm`).
//!
//! Lock order: the rdma_cm mutex, then the endpoint lock (taken inside
//! [`Host::cm`]) or the surface's own (its [`IdMirror`]); the event
//! queue's lock is taken last and held briefly.
//! IP multicast joins and leaves (rtnl) and QP moves run after the mutex
//! is released, and so do the iw_cm calls: a move to RTR and RTS is left
//! by the core with what follows it (a REP or RTU), its result handed
//! back under the mutex again before the call returns; an iw_cm call's
//! failure is handed back the same way.

use super::kernel_maps::{Accounted, KernelCollections};
use super::lazy_vec::LazyVec;
use super::lock_meter::LockMeter;
use super::outbox::Outbox;
use super::peer::Peer;
use super::service::{CmService, KernelEndpoint};
use crate::proto::cm::{CommId, DeviceId, Millis};
use crate::proto::rdma_cm::{
    DeviceInfo, Host, IwCall, PathKind, QpLimits, RdmaCm, RdmaCmError, RdmaEvent, RdmaId,
    ReadyMove, SockAddr,
};
use crate::proto::timer::IbaTime;
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::sync::Mutex;

/// The core's rdma_cm as the kernel runs it.
pub(crate) type KernelRdmaCm = RdmaCm<KernelCollections<Accounted>, Peer>;

/// Queued events, oldest first.
pub(crate) type RdmaEvents = LazyVec<(RdmaId, RdmaEvent)>;

/// How the rdma_cm surface moves its consumers' QPs for the core.
pub(crate) trait QpControl {
    /// `id`'s QP to RTR (receiving from `rq_psn`) and RTS with the
    /// attributes the CM `cm` settled for `comm`; a negative errno on
    /// failure. Called with no rdma_cm lock held.
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
/// kernel's iw_cm for the core (see [`Host::iw_call`]).
pub(crate) trait IwarpCm {
    /// Makes `call` (with no rdma_cm lock held); a negative errno.
    fn iw_call(&self, call: &IwCall) -> Result<(), i32>;
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

/// How the rdma_cm surface keeps what its consumers read of an id (its
/// state and addresses, in the C structure) in step with the core.
pub(crate) trait IdMirror {
    /// Writes `id`'s record in `core` where its consumer reads it; called
    /// under the core's lock, so mirrors land in the order of its changes.
    fn mirror(&self, core: &KernelRdmaCm, id: RdmaId);
}

/// Everything the rdma_cm surface does for the core.
pub(crate) trait RdmaSurface: QpControl + IwarpCm + IpMulticast + IdMirror {}

impl<T: QpControl + IwarpCm + IpMulticast + IdMirror> RdmaSurface for T {}

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
pub(crate) struct KernelHost<'a, Q: RdmaSurface> {
    cm: &'a CmService,
    qp: &'a Q,
    events: &'a mut RdmaEvents,
    /// The id whose first event is handed back to the caller (see
    /// [`RdmaService::call_taking`]), and the caller's place for that event
    /// once produced.
    take_for: Option<RdmaId>,
    taken: Option<&'a mut Option<RdmaEvent>>,
    /// The id the caller mirrored itself as the call leaves it (see
    /// [`KernelHost::mirrored`]).
    mirrored: Option<RdmaId>,
    /// What the call leaves for once the core's lock is released: in the
    /// caller's frame, written in place rather than moved (with its outbox
    /// it is a few hundred bytes, a copy each time it moves).
    left: &'a mut Leftovers,
}

/// When [`RdmaService::call_taking`] hands the event back rather than
/// queuing it.
#[derive(Clone, Copy)]
pub(crate) enum HandBack {
    /// Whatever else waits for delivery.
    Always,
    /// Only if no event waits for delivery or is being delivered, so
    /// that it cannot pass an earlier one of its id.
    IfQuiet,
}

/// What a call into the core left to do once its lock is released.
struct Leftovers {
    /// The CM's output of the call, in order, sent once the core's lock
    /// is released (other ids' calls and address results need that lock
    /// meanwhile, and posting runs the driver's send inline). Most calls
    /// reach the CM once: that output is kept in place, the rare later
    /// ones in `unsent_more` (one Outbox on the stack: user calls run on
    /// a kernel stack).
    unsent: Option<Outbox>,
    unsent_more: LazyVec<Outbox>,
    /// Whether the call queued IP multicast changes, applied once the
    /// core's lock is released.
    group_changes: bool,
    /// The ids whose QP the call moved to ERR, in order: moved once the
    /// core's lock is released, before the call's MADs are sent and its
    /// events delivered (so still before the DREQ or the DISCONNECTED
    /// that follows), as a QP move takes the id's QP lock and the driver.
    qp_errors: LazyVec<RdmaId>,
    /// The moves to RTR and RTS the call left, in order: made once the
    /// core's lock is released, after the QP moves to ERR and the MADs,
    /// each result handed back to the core at once.
    readies: LazyVec<ReadyMove>,
    /// The iw_cm calls the call left, in order: made after the moves (an
    /// iw_cm call sleeps), a failure handed back to the core at once.
    iw_calls: LazyVec<IwCall>,
    /// Events that found no memory.
    lost: u32,
    /// Whether the call queued events (the delivery work is kicked).
    queued: bool,
}

impl Leftovers {
    /// Nothing left yet.
    fn new() -> Self {
        Leftovers {
            unsent: None,
            unsent_more: LazyVec::new(),
            group_changes: false,
            qp_errors: LazyVec::new(),
            readies: LazyVec::new(),
            iw_calls: LazyVec::new(),
            lost: 0,
            queued: false,
        }
    }
}

impl<Q: RdmaSurface> KernelHost<'_, Q> {
    /// The caller mirrors `id` at the end of the call, under the same
    /// hold of the core's lock: the call's mirror of the ids it gave
    /// events passes over it.
    pub(crate) fn mirrored(&mut self, id: RdmaId) {
        self.mirrored = Some(id);
    }

    /// Whether what the call left so far changes no id once the core's
    /// lock is released (no move to RTR or RTS, no iw_cm call, whose
    /// results go back to the core): an id mirrored now stays as the
    /// core has it.
    pub(crate) fn leaves_ids_settled(&self) -> bool {
        self.left.readies.is_empty() && self.left.iw_calls.is_empty()
    }
}

impl<Q: RdmaSurface> Host<Peer> for KernelHost<'_, Q> {
    type Maps = KernelCollections;
    type Out = Outbox;

    fn cm<R>(&mut self, f: impl FnOnce(&mut KernelEndpoint, Millis, &mut Outbox) -> R) -> R {
        if self.left.unsent.is_none() {
            // The first output is made where it is kept.
            let outbox = self.left.unsent.insert(self.cm.outbox_for_call());
            return self.cm.run_into(outbox, f);
        }
        let (r, outbox) = self.cm.run_unsent(f);
        if self.left.unsent_more.reserve(1, GFP_KERNEL).is_ok() {
            // Reserved: the push cannot fail.
            let _ = self.left.unsent_more.push(outbox, GFP_KERNEL);
        } else {
            // No memory to keep it: the earlier output is sent now, in
            // order, under the lock.
            if let Some(first) = self.left.unsent.take() {
                self.cm.send(first);
            }
            for earlier in self.left.unsent_more.take() {
                self.cm.send(earlier);
            }
            self.left.unsent = Some(outbox);
        }
        r
    }

    fn cm_read<R>(&mut self, f: impl FnOnce(&KernelEndpoint) -> R) -> R {
        self.cm.read(f)
    }

    fn qp_ready(&mut self, mv: &ReadyMove) -> Result<(), RdmaCmError> {
        self.left
            .readies
            .push(*mv, GFP_KERNEL)
            .map_err(|_| RdmaCmError::NoMemory)
    }

    fn qp_error(&mut self, id: RdmaId) {
        // Without memory to keep it for later, the QP moves now.
        if self.left.qp_errors.push(id, GFP_KERNEL).is_err() {
            self.qp.qp_error(id);
        }
    }

    fn iw_call(&mut self, call: &IwCall) -> Result<(), RdmaCmError> {
        self.left
            .iw_calls
            .push(*call, GFP_KERNEL)
            .map_err(|_| RdmaCmError::NoMemory)
    }

    fn join_group(&mut self, id: RdmaId, addr: &SockAddr, send_only: bool) -> Result<(), i32> {
        self.left.group_changes = true;
        self.qp.join_group(id, addr, send_only)
    }

    fn leave_group(&mut self, id: RdmaId, addr: &SockAddr, send_only: bool) {
        self.left.group_changes = true;
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
        if self.take_for == Some(id) {
            if let Some(slot) = self.taken.as_mut().filter(|slot| slot.is_none()) {
                **slot = Some(event);
                return;
            }
        }
        if self.events.push((id, event), GFP_KERNEL).is_err() {
            self.left.lost += 1;
        }
    }
}

impl RdmaService {
    /// No ids.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(RdmaService {
            core <- new_mutex!(RdmaCm::new(), "rcm::rdma_cm"),
            events <- new_mutex!(LazyVec::new(), "rcm::rdma_events"),
            lost: core::sync::atomic::AtomicU32::new(0),
            meter <- LockMeter::new(),
        })
    }

    /// Runs `f` on the core with the CM service `cm` and the QPs of `qp`;
    /// the events it produced are queued (under the core's lock, so in
    /// order) and the delivery work is kicked.
    pub(crate) fn call<Q: RdmaSurface, R>(
        &self,
        cm: &CmService,
        qp: &Q,
        f: impl FnOnce(&mut KernelRdmaCm, &mut KernelHost<'_, Q>) -> R,
    ) -> R {
        self.run(cm, qp, None, f)
    }

    /// As [`Self::call`], but the first event `f` produces for `id` is
    /// handed back in `taken` (as `when` allows; `taken` is `None` on
    /// entry), for the caller to deliver in its own task, instead of
    /// queued behind every other id's.
    pub(crate) fn call_taking<Q: RdmaSurface, R>(
        &self,
        cm: &CmService,
        qp: &Q,
        (id, when): (RdmaId, HandBack),
        taken: &mut Option<RdmaEvent>,
        f: impl FnOnce(&mut KernelRdmaCm, &mut KernelHost<'_, Q>) -> R,
    ) -> R {
        self.run(cm, qp, Some((id, when, taken)), f)
    }

    /// As [`Self::call`], for a call whose result a QP move or iw_cm call
    /// it left decides (`rdma_accept`; `rdma_connect`, `rdma_listen`,
    /// `rdma_reject` and `rdma_disconnect` on iWARP): the call's failure,
    /// else theirs.
    pub(crate) fn call_settled<Q: RdmaSurface>(
        &self,
        cm: &CmService,
        qp: &Q,
        f: impl FnOnce(&mut KernelRdmaCm, &mut KernelHost<'_, Q>) -> Result<(), RdmaCmError>,
    ) -> Result<(), RdmaCmError> {
        let (r, settled) = self.run_settled(cm, qp, None, f);
        r.and(settled)
    }

    fn run<Q: RdmaSurface, R>(
        &self,
        cm: &CmService,
        qp: &Q,
        take: Option<(RdmaId, HandBack, &mut Option<RdmaEvent>)>,
        f: impl FnOnce(&mut KernelRdmaCm, &mut KernelHost<'_, Q>) -> R,
    ) -> R {
        self.run_settled(cm, qp, take, f).0
    }

    /// Runs `f` ([`Self::enter`]), then does what it left
    /// ([`Self::finish`]): `f`'s result and how what it left went. Out of
    /// line: the leftovers stay in this frame, not in those of the many
    /// calls (a device's addition among them) that reach the core.
    #[inline(never)]
    fn run_settled<Q: RdmaSurface, R>(
        &self,
        cm: &CmService,
        qp: &Q,
        take: Option<(RdmaId, HandBack, &mut Option<RdmaEvent>)>,
        f: impl FnOnce(&mut KernelRdmaCm, &mut KernelHost<'_, Q>) -> R,
    ) -> (R, Result<(), RdmaCmError>) {
        let mut left = Leftovers::new();
        let r = self.enter(cm, qp, take, &mut left, f);
        let settled = self.finish(cm, qp, &mut left);
        (r, settled)
    }

    /// Runs `f` under the core's lock, the event handed back for `take`
    /// put in its place; what it left, put in `left`, is done by
    /// [`Self::finish`].
    fn enter<Q: RdmaSurface, R>(
        &self,
        cm: &CmService,
        qp: &Q,
        take: Option<(RdmaId, HandBack, &mut Option<RdmaEvent>)>,
        left: &mut Leftovers,
        f: impl FnOnce(&mut KernelRdmaCm, &mut KernelHost<'_, Q>) -> R,
    ) -> R {
        let by = core::any::type_name_of_val(&f);
        let mut core = self.meter.lock(by, || self.core.lock());
        let (take_for, taken) = match take {
            None => (None, None),
            Some((id, HandBack::Always, taken)) => (Some(id), Some(taken)),
            Some((id, HandBack::IfQuiet, taken)) => {
                // Events are queued only under the core's lock. The queue is
                // read first and the delivering flag under its lock: a task
                // raises the flag before it takes events, and keeps it up
                // until it has delivered them, so an empty queue with the
                // flag down leaves no earlier event undelivered.
                let queue = self.events.lock();
                let quiet = queue.is_empty() && !cm.delivering();
                (quiet.then_some(id), Some(taken))
            }
        };
        let mut made = RdmaEvents::new();
        let mut host = KernelHost {
            cm,
            qp,
            events: &mut made,
            take_for,
            taken,
            mirrored: None,
            left: &mut *left,
        };
        let r = f(&mut core, &mut host);
        let by_caller = host.mirrored;
        // Each id given an event is mirrored as the call leaves it, so
        // its delivery needs no lock of the core: once per run of its
        // events, and not the one the caller mirrored.
        let mut last = None;
        for (id, _) in made.iter() {
            if by_caller != Some(*id) && last != Some(*id) {
                qp.mirror(&core, *id);
            }
            last = Some(*id);
        }
        if !made.is_empty() {
            // Queued while the core's lock is still held, so in the core's
            // order; the queue's lock only for the move, not for the whole
            // call, so that the delivery takes events meanwhile.
            left.queued = true;
            let mut queue = self.events.lock();
            if queue.is_empty() {
                core::mem::swap(&mut *queue, &mut made);
            } else {
                for event in made {
                    if queue.push(event, GFP_KERNEL).is_err() {
                        left.lost += 1;
                    }
                }
            }
        }
        r
    }

    /// Does, with no lock of the core held, what a call left, in the
    /// order the core decided: QP moves to ERR, the MADs, the moves to
    /// RTR and RTS (each result handed back to the core, which goes on
    /// under its lock again), the iw_cm calls (a failure handed back),
    /// IP multicast changes; then kicks the delivery of the events. The
    /// first failure the moves and calls led to. Once per `left`: it
    /// empties the outboxes and QP moves to ERR, and reads the rest.
    fn finish<Q: RdmaSurface>(
        &self,
        cm: &CmService,
        qp: &Q,
        left: &mut Leftovers,
    ) -> Result<(), RdmaCmError> {
        for id in left.qp_errors.take() {
            qp.qp_error(id);
        }
        if let Some(outbox) = left.unsent.take() {
            cm.send(outbox);
        }
        for outbox in left.unsent_more.take() {
            cm.send(outbox);
        }
        let mut settled = Ok(());
        for mv in left.readies.iter() {
            settled = settled.and(self.ready_move(cm, qp, mv));
        }
        for call in left.iw_calls.iter() {
            if let Err(e) = qp.iw_call(call) {
                settled = settled.and(self.iw_call_failed(cm, qp, call, e));
            }
        }
        if left.group_changes {
            qp.apply_group_changes();
        }
        if left.lost > 0 {
            self.lost
                .fetch_add(left.lost, core::sync::atomic::Ordering::Relaxed);
            pr_warn!(
                "out of memory: {} rdma_cm event(s) not delivered\n",
                left.lost
            );
        }
        if left.queued {
            cm.wake_delivery();
        }
        settled
    }

    /// Makes `mv` and hands the result to the core, which goes on under
    /// its lock; then does what that left. Out of line: [`Self::finish`]
    /// calls it and it calls `finish`, a bounded number of times (the
    /// core leaves no move after one is done, and at most a refusal after
    /// a failed iWARP accept), so neither frame holds the other's.
    #[inline(never)]
    fn ready_move<Q: RdmaSurface>(
        &self,
        cm: &CmService,
        qp: &Q,
        mv: &ReadyMove,
    ) -> Result<(), RdmaCmError> {
        let moved = qp.qp_ready(cm, mv.id, mv.comm, mv.limits, mv.rq_psn);
        let (r, settled) = self.run_settled(cm, qp, None, |core, host| {
            core.qp_ready_done(host, *mv, moved)
        });
        r.and(settled)
    }

    /// Hands the failure `e` of `call` to the core; then does what that
    /// left. Out of line, as [`Self::ready_move`].
    #[inline(never)]
    fn iw_call_failed<Q: RdmaSurface>(
        &self,
        cm: &CmService,
        qp: &Q,
        call: &IwCall,
        e: i32,
    ) -> Result<(), RdmaCmError> {
        let (r, settled) = self.run_settled(cm, qp, None, |core, host| {
            core.iw_call_done(host, *call, Err(e))
        });
        r.and(settled)
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
