// SPDX-License-Identifier: GPL-2.0

//! The CM service: the protocol core's endpoint, fed by a CM MAD agent on
//! every IB/RoCE port and by a timer, its MADs posted through the agents.
//!
//! Locking: the endpoint sits behind a spinlock that keeps interrupts on
//! ([`TaskSpinLock`]: every input runs the core under it, tens of
//! microseconds one at a time, which an irq-safe lock kept the CPU deaf
//! to interrupts for). A QP's report (`ib_cm_notify`) from a task reads
//! and changes an id's state at once, interrupts off or not, as the C CM
//! does under its per-id lock; from interrupt context it tries the lock
//! and, if it is busy, leaves the change to a work item
//! ([`CmService::qp_reported`]). Nothing under it sleeps: an [`Outbox`]
//! reserves room for the output before the lock is taken, and the core's
//! tables allocate with `GFP_ATOMIC`. The device list has a mutex
//! (process context only) and is never held with the endpoint lock. MADs
//! the endpoint produces are collected while it is locked and posted
//! after, in process context.
//!
//! Three work items run the service: the protocol timer (retransmissions,
//! timeouts, TIMEWAIT; system workqueue), the MAD intake (received MADs
//! in batches, see `intake`; it delivers the events they cause itself, as
//! the C CM's MAD work calls its consumers, saving a work hop per event)
//! and event delivery (a workqueue of its own, for the events of timers
//! and API calls). One task delivers at a time, in order (`deliver_all`),
//! and never the timer's, so a consumer that blocks in its handler holds
//! up no retransmission or timeout. Events go to the service's
//! [`EventConsumer`], the ABI surface whose consumers own the ids.

use super::intake::{IntakeBuffer, RecentPaths, Senders, INTAKE_BATCH};
use super::kernel_maps::KernelCollections;
use super::lazy_vec::LazyVec;
use super::lock_meter::{LockMeter, MeteredTaskGuard};
use super::outbox::{cookie_request, EventBatch, EventQueue, Outbox, Recipient, SpareOutboxes};
use super::peer::Peer;
use super::trace;
use crate::proto::cm::{
    keeps_sender, CmError, CommId, Config, DeviceId, Endpoint, Handled, Millis, Received, State,
};
use crate::proto::rdma_cm::DeviceInfo;
use crate::proto::wire::mad::peek_attr_id;
use crate::rdma::counters::{Counter, PortCounters};
use crate::rdma::mad::{peer_window, MadAgent, MadHandler, ReceivedMad};
use crate::rdma::sync::{wake_waiters, yield_between_batches, IrqSpinLock, TaskSpinLock};
use crate::rdma::timer::{
    in_work_item, now_ms, random_u32, Timer, TimerHandler, Work, WorkCpu, WorkHandler,
};
use crate::{new_irq_spinlock, new_task_spinlock};
use core::any::{type_name_of_val, Any, TypeId};
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex, SpinLock};
use kernel::{c_str, new_mutex, new_spinlock};

mod devices;
mod qp_reports;

/// Expired timers handled per endpoint lock hold (the outbox has room for
/// their output).
const TIMER_BATCH: usize = 8;

/// When memory for a timer batch is short, try again this much later.
const TIMER_RETRY_MS: u64 = 10;

/// The endpoint as the kernel runs it.
pub(crate) type KernelEndpoint = Endpoint<Peer, KernelCollections>;

/// Where the service's events go: the ABI surface whose consumers own the
/// ids (the upcall from the shell, as `MadHandler` is from `rust/rdma`).
pub(crate) trait EventConsumer: Send + Sync + 'static {
    /// Delivers a batch of events, in order. Called from the delivery
    /// work or the MAD intake work: process context, never concurrently
    /// with itself, no lock held but the intake work's own buffer (which
    /// no API call takes).
    fn deliver(&self, service: &CmService, batch: EventBatch);

    /// Runs after the queued batches are delivered (same context), for
    /// events the consumer queued itself (see [`CmService::wake_delivery`]).
    fn deliver_pending(&self, _service: &CmService) {}

    /// The part of the consumer of type `which` (an ABI surface's state),
    /// for entry points from C, which carry no context pointer: the
    /// surfaces find their own state through the service without naming
    /// the type that composes them.
    fn part(&self, which: TypeId) -> Option<&dyn Any>;
}

/// A device served by the CM, with its ports' MAD agents.
struct DeviceEntry {
    identity: usize,
    id: DeviceId,
    info: DeviceInfo,
    /// Dropped after the agents (field order), so no callback counts
    /// into freed counters.
    agents: KVec<MadAgent<CmService>>,
    counters: KBox<PortCounters>,
    /// Its removal has begun: new ids no longer find it.
    going: bool,
}

/// The CM of this host, handing its events to its [`EventConsumer`].
#[pin_data]
pub(crate) struct CmService {
    #[pin]
    endpoint: TaskSpinLock<KernelEndpoint>,
    /// QP reports from interrupt context that found the endpoint busy,
    /// for the call delivery work to apply.
    #[pin]
    deferred_reports: IrqSpinLock<LazyVec<(CommId, QpReport)>>,
    /// Device slots; a removed device leaves `None`, reused by the next
    /// (6.12's `KVec` cannot remove elements).
    #[pin]
    devices: Mutex<KVec<Option<DeviceEntry>>>,
    /// Set between `start` and `stop`; armed from any context.
    #[pin]
    timer: IrqSpinLock<Option<Timer<CmService>>>,
    /// Delivers queued events to consumers (set between `start` and
    /// `stop`); queued from any context.
    #[pin]
    delivery: IrqSpinLock<Option<DeliveryWork>>,
    /// Received MADs waiting for the intake work (filled by the agents'
    /// receive handlers, process context).
    #[pin]
    intake: SpinLock<IntakeBuffer>,
    /// The intake work's side: swapped with `intake`, then handled.
    #[pin]
    draining: Mutex<IntakeBuffer>,
    /// The reply paths of recent senders (the intake work's).
    #[pin]
    recent_paths: Mutex<RecentPaths>,
    /// Hands `intake` to the endpoint (set between `start` and `stop`).
    #[pin]
    intake_work: IrqSpinLock<Option<Work<CmService, MadIntake>>>,
    next_device: AtomicU32,
    /// Set while a task delivers events (see `deliver_all`).
    delivering: AtomicBool,
    /// Set by each request for delivery, taken by the task delivering.
    delivery_wanted: AtomicBool,
    /// Device removals waiting for DREPs (see `await_dreps`).
    departing: AtomicU32,
    /// Events waiting for delivery, in order.
    #[pin]
    events: IrqSpinLock<EventQueue>,
    /// Outboxes for one input each, kept between inputs (process context).
    #[pin]
    spare_outboxes: SpinLock<SpareOutboxes>,
    consumer: Arc<dyn EventConsumer>,
    /// How long `endpoint` is waited for and held.
    #[pin]
    meter: LockMeter,
}

impl CmService {
    /// A service with no devices, delivering to `consumer`.
    pub(crate) fn new(consumer: Arc<dyn EventConsumer>) -> impl PinInit<Self, Error> {
        let config = Config {
            id_operand: random_u32(),
            tid_high: random_u32(),
            hash_seed: u64::from(random_u32()) << 32 | u64::from(random_u32()),
            peer_window: peer_window(),
        };
        try_pin_init!(CmService {
            endpoint <- new_task_spinlock!(
                {
                    let mut ep = Endpoint::new(config);
                    ep.set_window_key(Peer::node);
                    ep
                },
                "rcm::endpoint"
            ),
            deferred_reports <- new_irq_spinlock!(LazyVec::new(), "rcm::deferred_reports"),
            devices <- new_mutex!(KVec::new(), "rcm::devices"),
            timer <- new_irq_spinlock!(None, "rcm::timer"),
            delivery <- new_irq_spinlock!(None, "rcm::delivery"),
            intake <- new_spinlock!(IntakeBuffer::new()?, "rcm::intake"),
            draining <- new_mutex!(IntakeBuffer::new()?, "rcm::draining"),
            recent_paths <- new_mutex!(RecentPaths::new(), "rcm::recent_paths"),
            intake_work <- new_irq_spinlock!(None, "rcm::intake_work"),
            next_device: AtomicU32::new(0),
            delivering: AtomicBool::new(false),
            delivery_wanted: AtomicBool::new(false),
            departing: AtomicU32::new(0),
            events <- new_irq_spinlock!(EventQueue::new(), "rcm::events"),
            spare_outboxes <- new_spinlock!(SpareOutboxes::new(), "rcm::spare_outboxes"),
            consumer,
            meter <- LockMeter::new(),
        })
    }

    /// The consumer's part of type `T` (see [`EventConsumer::part`]).
    pub(crate) fn part<T: Any>(&self) -> Option<&T> {
        self.consumer.part(TypeId::of::<T>())?.downcast_ref()
    }

    /// Runs an API call `op` on the endpoint with room for its output
    /// reserved first, then sends and delivers what it produced (process
    /// context). `NoMemory` when there is no room; nothing ran then.
    pub(crate) fn call<R>(
        &self,
        op: impl FnOnce(&mut KernelEndpoint, &mut Outbox) -> Result<R, CmError>,
    ) -> Result<R, CmError> {
        let mut outbox = self.outbox_for(1).map_err(|_| CmError::NoMemory)?;
        let by = type_name_of_val(&op);
        let r = op(&mut self.endpoint_for_calls(by), &mut outbox);
        self.flush(outbox);
        r
    }

    /// Runs `op` on the endpoint as [`CmService::call`] does, for callers
    /// that must go ahead whatever the memory (rdma_cm: without room its
    /// MADs and events are best effort), and hands the output back unsent,
    /// for the caller to pass to [`CmService::send`] once it has released
    /// its own locks (posting a MAD runs the driver's send inline).
    pub(crate) fn run_unsent<R>(
        &self,
        op: impl FnOnce(&mut KernelEndpoint, Millis, &mut Outbox) -> R,
    ) -> (R, Outbox) {
        let mut outbox = self.outbox_for_call();
        let r = self.run_into(&mut outbox, op);
        (r, outbox)
    }

    /// Room for one call's output; without memory an outbox with none
    /// reserved, whose output is best effort (see [`CmService::run_unsent`]).
    pub(crate) fn outbox_for_call(&self) -> Outbox {
        self.outbox_for(1).unwrap_or_else(|_| Outbox::unreserved())
    }

    /// As [`CmService::run_unsent`], into the caller's `outbox` (from
    /// [`CmService::outbox_for_call`]), which keeps it where it is.
    pub(crate) fn run_into<R>(
        &self,
        outbox: &mut Outbox,
        op: impl FnOnce(&mut KernelEndpoint, Millis, &mut Outbox) -> R,
    ) -> R {
        let by = type_name_of_val(&op);
        let mut ep = self.endpoint_for_calls(by);
        let r = op(&mut ep, now_ms(), outbox);
        outbox.next_deadline = Some(ep.poll_timeout());
        r
    }

    /// Sends the output of [`CmService::run_unsent`] or
    /// [`CmService::run_into`] and has its events delivered (process
    /// context).
    pub(crate) fn send(&self, outbox: Outbox) {
        self.flush(outbox);
    }

    /// The endpoint, locked, for a consumer's call `by`: the calls make
    /// the requests, so they bring in a changed `rcm.peer_window`.
    fn endpoint_for_calls(&self, by: &'static str) -> MeteredTaskGuard<'_, KernelEndpoint> {
        let mut ep = self.endpoint_locked(by);
        ep.set_peer_window(peer_window());
        ep
    }

    /// The endpoint, locked for the code `by` (see [`LockMeter`]).
    fn endpoint_locked(&self, by: &'static str) -> MeteredTaskGuard<'_, KernelEndpoint> {
        self.meter.lock(by, || self.endpoint.lock())
    }

    /// The meter of the endpoint's lock.
    pub(crate) fn lock_meter(&self) -> &LockMeter {
        &self.meter
    }

    /// Reads the endpoint under its lock (task context). Writes to what
    /// the consumers see of an id happen in here, so they are serialised.
    pub(crate) fn read<R>(&self, f: impl FnOnce(&KernelEndpoint) -> R) -> R {
        let by = type_name_of_val(&f);
        f(&self.endpoint_locked(by))
    }

    /// Destroys the core's id (see `Endpoint::destroy`) and sends what
    /// that takes; goes ahead without memory (its MADs are then best
    /// effort: a DREQ is retransmitted, a lost REJ times out the peer).
    pub(crate) fn destroy(&self, comm: CommId, reject: bool) -> Result<bool, CmError> {
        let mut outbox = self.outbox_for(1).unwrap_or_else(|_| Outbox::unreserved());
        let r = self
            .endpoint
            .lock()
            .destroy(now_ms(), comm, reject, &mut outbox);
        self.flush(outbox);
        r
    }

    /// Starts the timer, the MAD intake and the delivery work. They hold
    /// references on the service until [`CmService::stop`].
    pub(crate) fn start(this: &Arc<Self>) -> Result {
        let timer = Timer::new(this.clone())?;
        *this.timer.lock() = Some(timer);
        let intake = Work::new(c_str!("rcm_cm_mads"), this.clone(), WorkCpu::Queuing)?;
        *this.intake_work.lock() = Some(intake);
        let delivery = DeliveryWork {
            after_work: Work::new(c_str!("rcm_cm_events"), this.clone(), WorkCpu::Queuing)?,
            for_calls: Work::new(c_str!("rcm_cm_call_events"), this.clone(), WorkCpu::Any)?,
        };
        *this.delivery.lock() = Some(delivery);
        Ok(())
    }

    /// Stops the timer, the MAD intake and the delivery work, waiting for
    /// running callbacks (outside the locks: dropping them sleeps).
    pub(crate) fn stop(&self) {
        let timer = self.timer.lock().take();
        drop(timer);
        let intake = self.intake_work.lock().take();
        drop(intake);
        let delivery = self.delivery.lock().take();
        drop(delivery);
    }

    /// Runs received MADs (at most [`INTAKE_BATCH`]) through the endpoint
    /// under one lock hold, counting them, then sends and delivers what
    /// they produced.
    ///
    /// A reply path is worked out only for the MADs whose sender the
    /// endpoint keeps (REQ, SIDR_REQ) and for the answers it gives, as the
    /// C CM does, once per sender for a while (`RecentPaths`), and with no
    /// lock held but the intake work's own: on RoCE it waits for an address
    /// resolution on ib_core's work queue, whose callbacks (rdma_cm's
    /// address results) take the device list and the endpoint.
    fn handle_mads(&self, batch: &[ReceivedMad]) {
        let mut recent = self.recent_paths.lock();
        let mut senders = {
            let devices = self.devices.lock();
            Senders::new(batch, &mut recent, now_ms(), |mad| {
                let d = devices
                    .iter()
                    .flatten()
                    .find(|d| d.identity == mad.device)?;
                let port = mad.origin.port();
                d.counters
                    .count(port, Counter::Received, peek_attr_id(&mad.mad));
                let agent = d.agents.iter().find(|a| a.port() == port);
                Some((d.id, d.info.guid, agent.and_then(|a| a.device_ref())))
            })
        };
        // The senders the endpoint keeps, worked out before it is locked.
        let kept: [Option<Peer>; INTAKE_BATCH] = core::array::from_fn(|index| {
            let mad = batch.get(index)?;
            keeps_sender(peek_attr_id(&mad.mad))
                .then(|| senders.peer(index))
                .flatten()
        });
        // Without room for their output the MADs are dropped before the
        // core sees them; their senders retransmit.
        let Ok(mut outbox) = self.outbox_for(batch.len()) else {
            return;
        };
        // Where each MAD's duplicate reports end in `outbox.duplicates`.
        let mut duplicates_end = [0usize; INTAKE_BATCH];
        // What came of each MAD and the state its id was left in, for the
        // trace events fired once the endpoint is unlocked (only looked up
        // while the event is on).
        let tracing = trace::received_enabled();
        let mut handled: [Option<(Handled, Option<State>)>; INTAKE_BATCH] = [None; INTAKE_BATCH];
        {
            let mut ep = self.endpoint_locked("the MAD intake");
            let now = now_ms();
            let each = batch
                .iter()
                .zip(kept)
                .zip(duplicates_end.iter_mut().zip(handled.iter_mut()));
            for (index, ((mad, from), (end, result))) in each.enumerate() {
                if let Some((device, guid)) = senders.device(index) {
                    let rx = Received {
                        from,
                        device,
                        local_ca_guid: guid,
                    };
                    outbox.handling = Some(index);
                    let h = ep.handle_mad(now, &rx, &mad.mad, &mut outbox);
                    if tracing {
                        let state = match h {
                            Handled::Delivered(id) => ep.get(id).map(|c| c.state()),
                            _ => None,
                        };
                        *result = Some((h, state));
                    }
                }
                *end = outbox.duplicates.len();
            }
            outbox.handling = None;
            outbox.next_deadline = Some(ep.poll_timeout());
        }
        // Answers to senders that were not kept, addressed now, unlocked.
        for out in outbox.sends.as_mut_slice() {
            if let Recipient::SenderOf(index) = out.to {
                if let Some(peer) = senders.peer(index) {
                    out.to = Recipient::Peer(peer);
                }
            }
        }
        senders.release();
        for (mad, result) in batch.iter().zip(handled.iter()) {
            if let Some((h, state)) = result {
                trace::received(&mad.mad, h, *state);
            }
        }
        if !outbox.duplicates.is_empty() {
            let devices = self.devices.lock();
            let mut start = 0;
            for (index, (mad, end)) in batch.iter().zip(duplicates_end).enumerate() {
                let id = senders.device(index).map(|(id, _)| id);
                let entry = id.and_then(|id| devices.iter().flatten().find(|d| d.id == id));
                if let (Some(d), Some(attrs)) =
                    (entry, outbox.duplicates.as_slice().get(start..end))
                {
                    for attr_id in attrs {
                        d.counters
                            .count(mad.origin.port(), Counter::Duplicate, *attr_id);
                    }
                }
                start = end;
            }
        }
        let queued = self.send_output(outbox);
        // The events are delivered here, without a hop to the delivery
        // work, as the C CM calls its consumers from its MAD work; with
        // the reply paths unlocked, so that a consumer's handler runs
        // under no lock of the intake's but its own buffer.
        drop(senders);
        drop(recent);
        if queued {
            self.deliver_all();
        }
    }

    /// Posts collected MADs, reports failed requests to the endpoint and
    /// has the delivery work deliver the events (process context).
    fn flush(&self, outbox: Outbox) {
        if self.send_output(outbox) {
            self.wake_delivery();
        }
    }

    /// Posts collected MADs, reports failed requests to the endpoint and
    /// queues the events; true if it queued any (process context).
    fn send_output(&self, mut outbox: Outbox) -> bool {
        let mut queued = false;
        let mut next_deadline = outbox.next_deadline.take();
        // Bounded: a failure report produces at most a REJ, whose own
        // failure is not reported again.
        trace::state_changes(&outbox);
        for _ in 0..2 {
            // Every round's events: the failure reports' (REQ_ERROR ...)
            // too.
            queued |= self.queue_from(&mut outbox);
            if outbox.dropped > 0 {
                pr_warn!(
                    "out of memory: {} CM MADs not sent (the protocol sends them again)\n",
                    outbox.dropped
                );
            }
            let failed = self.post(&outbox);
            if failed.is_empty() {
                break;
            }
            // The reports change the endpoint: its deadline is read again.
            next_deadline = None;
            // Without room the reports wait for the requests' own
            // timeouts, which end the exchanges all the same.
            let Ok(mut reports) = Outbox::reserve(failed.len(), GFP_KERNEL) else {
                break;
            };
            {
                let mut ep = self.endpoint_locked("send failure reports");
                let now = now_ms();
                for (id, attr_id) in failed.iter() {
                    ep.send_failed(now, *id, *attr_id, &mut reports);
                }
            }
            trace::state_changes(&reports);
            outbox = reports;
        }
        // The last round's events, if its sends were not tried.
        queued |= self.queue_from(&mut outbox);
        match next_deadline {
            Some(Some(deadline)) => self.arm_at(deadline),
            Some(None) => {}
            None => self.rearm(),
        }
        if self.departing.load(Ordering::Relaxed) > 0 {
            wake_waiters();
        }
        self.keep_spare(outbox);
        queued
    }

    /// Room for the output of `inputs` inputs: a spare outbox for one,
    /// else a new one (process context).
    fn outbox_for(&self, inputs: usize) -> Result<Outbox> {
        let spare = match inputs {
            1 => self.spare_outboxes.lock().take(),
            _ => None,
        };
        match spare {
            Some(outbox) if outbox.traces_states_as_asked() => Ok(outbox),
            _ => Outbox::reserve(inputs, GFP_KERNEL),
        }
    }

    /// Keeps a sent outbox for the next input if it can serve one and
    /// there is room among the spares; frees it otherwise, unlocked.
    fn keep_spare(&self, outbox: Outbox) {
        let Some(spare) = outbox.into_spare() else {
            return;
        };
        let extra = self.spare_outboxes.lock().keep(spare);
        drop(extra);
    }

    /// Posts an outbox's MADs through the agents; the requests (comm id,
    /// attribute) whose send failed.
    fn post(&self, outbox: &Outbox) -> LazyVec<(CommId, u16)> {
        let mut failed = LazyVec::new();
        if outbox.sends.is_empty() {
            // Most timer runs and many calls send nothing: no lock.
            return failed;
        }
        let devices = self.devices.lock();
        for out in outbox.sends.as_slice() {
            // An answer whose sender has no path is not sent (see
            // `handle_mads`); it answers no request of ours.
            let Recipient::Peer(peer) = out.to else {
                continue;
            };
            let port = peer.path.port;
            let device = devices.iter().flatten().find(|d| d.id == peer.device);
            let agent = device.and_then(|d| d.agents.iter().find(|a| a.port() == port));
            let ok = agent.is_some_and(|a| a.send(&peer.path, &out.mad, out.cookie).is_ok());
            if let (true, Some(d)) = (ok, device) {
                let attr_id = peek_attr_id(&out.mad);
                d.counters.count(port, Counter::Sent, attr_id);
                if out.retry {
                    d.counters.count(port, Counter::Resent, attr_id);
                }
                trace::sent(out);
            }
            if let (false, Some(request)) = (ok, cookie_request(out.cookie)) {
                // Unreported, the request's timeout ends the exchange.
                let _ = failed.push(request, GFP_KERNEL);
            }
        }
        failed
    }

    /// Moves an outbox's events to the delivery queue and has them
    /// delivered; any context (it does not allocate).
    fn queue_events(&self, outbox: &mut Outbox) {
        if self.queue_from(outbox) {
            self.wake_delivery();
        }
    }

    /// Moves an outbox's events to the delivery queue; true if there were
    /// any. The queue's lock only when there is something to move or
    /// report: most inputs raise no event, and `send_output` comes here
    /// twice per input.
    fn queue_from(&self, outbox: &mut Outbox) -> bool {
        outbox.has_events_to_queue() && self.events.lock().push(outbox)
    }

    /// Whether a task is delivering events (it may hold some it took).
    pub(crate) fn delivering(&self) -> bool {
        self.delivering.load(Ordering::SeqCst)
    }

    /// Has the delivery work run (any context): on this CPU after the
    /// work item queuing it, on any CPU for a consumer's call (events it
    /// queued itself, delivered by [`EventConsumer::deliver_pending`]).
    pub(crate) fn wake_delivery(&self) {
        // A task delivering now (often the caller's own, whose handler
        // made the call) takes these too: it checks the request once more
        // after it lets go of `delivering` (the Dekker pair of
        // `deliver_all`). Queuing the work then woke a worker on this CPU
        // that preempted the delivering task only to find it busy.
        self.delivery_wanted.store(true, Ordering::SeqCst);
        if self.delivering.load(Ordering::SeqCst) {
            return;
        }
        if let Some(delivery) = self.delivery.lock().as_ref() {
            if in_work_item() {
                delivery.after_work.queue();
            } else {
                delivery.for_calls.queue();
            }
        }
    }

    /// Delivers the queued events and the consumer's own, in this task,
    /// unless another task is delivering: that one then delivers these
    /// too. So queued events keep one order and their handlers never run
    /// at once, whichever task delivers: the delivery work or the intake
    /// work (address results are not queued: the rdma_cm surface delivers
    /// them in ib_core's address work, as the C rdma_cm does). Only from
    /// such a work item, where a handler may block and call back in: never
    /// from a consumer's own call (it may hold the locks its handler takes)
    /// nor from ib_mad's completion.
    pub(crate) fn deliver_all(&self) {
        // Dekker-style: a request is either seen by the task delivering
        // (its last check follows its release) or wins the flag itself,
        // which takes sequentially consistent order on both flags.
        self.delivery_wanted.store(true, Ordering::SeqCst);
        while self
            .delivering
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            while self.delivery_wanted.swap(false, Ordering::SeqCst) {
                self.deliver_events();
                self.consumer.deliver_pending(self);
            }
            self.delivering.store(false, Ordering::SeqCst);
            if !self.delivery_wanted.load(Ordering::SeqCst) {
                return;
            }
        }
    }

    /// Hands the queued events to the consumer, oldest first.
    fn deliver_events(&self) {
        loop {
            // Popped and released before the consumer runs.
            let batch = self.events.lock().pop();
            let Some(batch) = batch else {
                return;
            };
            self.consumer.deliver(self, batch);
        }
    }

    /// Arms the timer for the endpoint's next deadline. The deadline may
    /// be stale by the time it is armed; arming keeps the earliest one,
    /// and a timer that fires early only re-arms.
    fn rearm(&self) {
        let next = self.endpoint_locked("the timer's deadline").poll_timeout();
        if let Some(deadline) = next {
            self.arm_at(deadline);
        }
    }

    fn arm_at(&self, deadline: u64) {
        if let Some(timer) = self.timer.lock().as_ref() {
            timer.arm_at(deadline);
        }
    }
}

impl MadHandler for CmService {
    /// Only buffers the MAD, so that ib_mad reposts its receive buffer
    /// at once (see `intake`); the intake work handles it.
    fn received(&self, mad: &ReceivedMad) {
        let queued = self.intake.lock().push(mad) || self.grow_intake(mad);
        if !queued {
            return;
        }
        if let Some(work) = self.intake_work.lock().as_ref() {
            work.queue();
        }
    }

    fn sent(&self, cookie: u64, ok: bool) {
        let Some((id, attr_id)) = cookie_request(cookie).filter(|_| !ok) else {
            return;
        };
        // Without room it goes unreported: the request's timeout ends the
        // exchange.
        let _ = self.call(|ep, out| {
            ep.send_failed(now_ms(), id, attr_id, out);
            Ok(())
        });
    }
}

impl CmService {
    /// The intake was full: moves it into a buffer twice as large and
    /// queues `mad` there. False if it is still full (the drop is counted).
    fn grow_intake(&self, mad: &ReceivedMad) -> bool {
        let room = self.intake.lock().room();
        // Allocated outside the spinlock (it may sleep).
        let mut larger = IntakeBuffer::larger_than(room);
        let queued = {
            let mut intake = self.intake.lock();
            // The intake work may have swapped in its own buffer meanwhile:
            // keep whichever is larger.
            if let Some(larger) = larger.as_mut() {
                if larger.room() > intake.room() && larger.take_over(&mut intake) {
                    core::mem::swap(&mut *intake, larger);
                }
            }
            let queued = intake.push(mad);
            if !queued {
                intake.count_dropped();
            }
            queued
        };
        // The buffer given up is freed here, outside the spinlock.
        drop(larger);
        queued
    }
}

/// Names the MAD intake work of a [`CmService`].
pub(crate) struct MadIntake;

impl WorkHandler<MadIntake> for CmService {
    /// Hands the buffered MADs to the endpoint, oldest first, until no
    /// more arrived meanwhile.
    fn run(&self) {
        let mut draining = self.draining.lock();
        loop {
            core::mem::swap(&mut *self.intake.lock(), &mut *draining);
            let dropped = draining.take_dropped();
            if dropped > 0 {
                pr_warn!(
                    "{} CM MADs dropped on arrival, the intake was full (their senders retransmit)\n",
                    dropped
                );
            }
            if draining.queued().is_empty() {
                return;
            }
            for batch in draining.queued().chunks(INTAKE_BATCH) {
                self.handle_mads(batch);
                // A storm fills the intake with hundreds of MADs: let
                // ib_mad's completion work (which reposts the receive
                // buffers) and rxe run between batches, or the device
                // finds no buffer and drops MADs.
                yield_between_batches();
            }
            draining.clear();
        }
    }
}

impl TimerHandler for CmService {
    /// Retransmissions, give-ups and TIMEWAIT ends that are due, in
    /// batches whose output has room reserved.
    fn fire(&self) {
        // Usually one timer is due (a connection's TIMEWAIT ends): room
        // for one first, a whole batch only once more are due (room for
        // a batch is beyond the slab caches: pages of their own).
        let mut batch = 1;
        loop {
            let Ok(mut outbox) = self.outbox_for(batch) else {
                self.arm_at(now_ms() + TIMER_RETRY_MS);
                return;
            };
            let more = self
                .endpoint
                .lock()
                .handle_timeouts(now_ms(), batch, &mut outbox);
            trace::timer_events(&outbox);
            self.flush(outbox);
            if !more {
                return;
            }
            batch = TIMER_BATCH;
            yield_between_batches();
        }
    }
}

impl WorkHandler for CmService {
    /// Delivers the queued events to their consumers.
    fn run(&self) {
        self.deliver_all();
    }
}

/// The delivery work, queued on one of two workqueues by who asks.
struct DeliveryWork {
    /// Bound to the CPU that queues it, for a work item (the intake, a
    /// timer): it runs after that one, which usually delivers the events
    /// itself first.
    after_work: Work<CmService>,
    /// Unbound, for a consumer's own call: bound, it preempted the caller
    /// on its CPU while the other one idled (6.12's rdma_cm delivers from
    /// an unbound queue too).
    for_calls: Work<CmService, CallEvents>,
}

/// Names the delivery work for events of consumers' calls.
pub(crate) struct CallEvents;

impl WorkHandler<CallEvents> for CmService {
    /// Applies the QP reports left by interrupt context, then delivers
    /// the queued events to their consumers.
    fn run(&self) {
        self.apply_deferred_reports();
        self.deliver_all();
    }
}

/// What a QP reported to the CM (`ib_cm_notify`, `rdma_notify`).
#[derive(Clone, Copy)]
pub(crate) enum QpReport {
    /// Traffic arrived before the RTU (`IB_EVENT_COMM_EST`).
    Established,
    /// The QP moved to its alternate path (`IB_EVENT_PATH_MIG`).
    PathMigrated,
}
