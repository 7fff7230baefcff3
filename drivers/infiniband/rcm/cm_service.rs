// SPDX-License-Identifier: GPL-2.0

//! The CM service: the protocol core's endpoint, fed by a CM MAD agent on
//! every IB/RoCE port and by a timer, its MADs posted through the agents.
//!
//! Locking: the endpoint and the device list have a mutex each and are
//! never held together. Everything runs in process context (ib_mad's
//! completion work, the timer's work, client callbacks). MADs the endpoint
//! produces are collected while it is locked and posted after.
//!
//! Two work items run the service: the protocol timer (retransmissions,
//! timeouts, TIMEWAIT; system workqueue) and event delivery (consumer
//! handlers; an ordered workqueue of its own), so a consumer that blocks
//! in its handler never holds up the protocol.

use crate::bindings;
use crate::kernel_maps::KernelCollections;
use crate::kernel_maps::KernelMap;
use crate::proto::cm::store::OrderedMap;
use crate::proto::cm::{CommId, Config, DeviceId, Endpoint, Event, Received, Sink, Transmit};
use crate::proto::wire::mad::peek_attr_id;
use crate::rdma::counters::{Counter, PortCounters};
use crate::rdma::deferred::{Deferred, DeferredHandler};
use crate::rdma::device::Device;
use crate::rdma::mad::{MadAgent, MadHandler, MadPath, ReceivedMad, MAD_SIZE};
use crate::rdma::timer::{now_ms, random_u32, Timer, TimerHandler, Work, WorkHandler};
use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use kernel::{c_str, new_mutex};
use kernel::prelude::*;
use kernel::sync::Mutex;

/// A peer as the endpoint sees it: the device it is reached through and
/// the path on that device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Peer {
    /// The device the peer is reached through.
    pub(crate) device: DeviceId,
    /// The path on that device.
    pub(crate) path: MadPath,
}

/// A device served by the CM, with its ports' MAD agents.
pub(crate) struct DeviceEntry {
    pub(crate) identity: usize,
    pub(crate) id: DeviceId,
    pub(crate) guid: u64,
    /// Dropped after the agents (field order), so no callback counts
    /// into freed counters.
    agents: KVec<MadAgent<CmService>>,
    counters: PortCounters,
}

/// One MAD to post.
struct Outgoing {
    peer: Peer,
    mad: [u8; MAD_SIZE],
    cookie: u64,
    retry: bool,
}

/// Collects the endpoint's output while it is locked.
pub(crate) struct Outbox {
    sends: KVec<Outgoing>,
    /// Sends that did not fit in memory; the protocol retransmits.
    dropped: u32,
    /// Attributes of received messages that were duplicates.
    duplicates: KVec<u16>,
    /// Events for consumers, in order.
    events: KVec<(CommId, Event)>,
}

impl Outbox {
    pub(crate) fn new() -> Self {
        Outbox {
            sends: KVec::new(),
            dropped: 0,
            duplicates: KVec::new(),
            events: KVec::new(),
        }
    }
}

/// A send's cookie: the comm id and attribute, so that a failed request
/// can be reported to the endpoint. Bit 48 marks "has an id".
fn cookie(id: Option<CommId>, attr_id: u16) -> u64 {
    match id {
        Some(id) => 1 << 48 | u64::from(attr_id) << 32 | u64::from(id.0),
        None => u64::from(attr_id) << 32,
    }
}

impl Sink<Peer> for Outbox {
    fn transmit(&mut self, tx: Transmit<'_, Peer>) {
        let out = Outgoing {
            peer: *tx.to,
            mad: *tx.mad,
            cookie: cookie(tx.id, peek_attr_id(tx.mad)),
            retry: tx.retry,
        };
        if self.sends.push(out, GFP_KERNEL).is_err() {
            self.dropped += 1;
        }
    }

    fn duplicate(&mut self, attr_id: u16) {
        // Only a statistic: losing one to memory pressure is harmless.
        let _ = self.duplicates.push(attr_id, GFP_KERNEL);
    }

    fn event(&mut self, id: CommId, event: Event) {
        if self.events.push((id, event), GFP_KERNEL).is_err() {
            pr_warn!("rcm: out of memory, CM event for {:#x} lost\n", id.0);
        }
    }
}

/// The CM of this host.
#[pin_data]
pub(crate) struct CmService {
    #[pin]
    pub(crate) endpoint: Mutex<Endpoint<Peer, KernelCollections>>,
    /// Device slots; a removed device leaves `None`, reused by the next
    /// (6.12's `KVec` cannot remove elements).
    #[pin]
    pub(crate) devices: Mutex<KVec<Option<DeviceEntry>>>,
    #[pin]
    timer: Mutex<Option<Timer<CmService>>>,
    /// Delivers queued events to consumers (set between `start` and `stop`).
    #[pin]
    delivery: Mutex<Option<Work<CmService>>>,
    next_device: AtomicU32,
    /// Consumer ids (`struct ib_cm_id` boxes) by comm id.
    #[pin]
    pub(crate) ids: Mutex<KernelMap<u32, usize>>,
    /// Events waiting for delivery, in order.
    #[pin]
    pub(crate) events: Mutex<KVec<(CommId, Event)>>,
    /// The ids whose handler runs right now (0: none), and the delivering
    /// task: `ib_destroy_cm_id` waits for those callbacks.
    pub(crate) delivering: [AtomicU32; 2],
    pub(crate) worker: AtomicUsize,
    /// Calls from atomic context waiting for process context (a leaked
    /// `KBox` between `start` and `stop`, null otherwise).
    deferred: AtomicPtr<Deferred<CmService>>,
}

impl CmService {
    /// A service with no devices.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        let config = Config {
            id_operand: random_u32(),
            tid_high: random_u32(),
        };
        try_pin_init!(CmService {
            endpoint <- new_mutex!(Endpoint::new(config), "rcm::endpoint"),
            devices <- new_mutex!(KVec::new(), "rcm::devices"),
            timer <- new_mutex!(None, "rcm::timer"),
            delivery <- new_mutex!(None, "rcm::delivery"),
            next_device: AtomicU32::new(0),
            ids <- new_mutex!(OrderedMap::new_empty(), "rcm::ids"),
            events <- new_mutex!(KVec::new(), "rcm::events"),
            delivering: [AtomicU32::new(0), AtomicU32::new(0)],
            worker: AtomicUsize::new(0),
            deferred: AtomicPtr::new(core::ptr::null_mut()),
        })
    }

    /// Starts the timer; call once the service has its final address.
    pub(crate) fn start(self: Pin<&Self>) -> Result {
        let this: *const CmService = &*self;
        // SAFETY: the service is pinned and the timer is dropped (in
        // `stop`) before the service is freed.
        let timer = unsafe { Timer::new(this)? };
        *self.timer.lock() = Some(timer);
        // SAFETY: as for the timer: dropped in `stop`.
        let delivery = unsafe { Work::new(c_str!("rcm_cm_events"), this)? };
        *self.delivery.lock() = Some(delivery);
        // SAFETY: as for the timer: dropped in `stop`.
        let deferred = KBox::new(unsafe { Deferred::new(this)? }, GFP_KERNEL)?;
        self.deferred
            .store(KBox::into_raw(deferred), Ordering::Release);
        Ok(())
    }

    /// Stops the timer and the deferred queue, waiting for running
    /// callbacks.
    pub(crate) fn stop(&self) {
        let deferred = self.deferred.swap(core::ptr::null_mut(), Ordering::AcqRel);
        if !deferred.is_null() {
            // SAFETY: leaked by `start`, withdrawn just now: ours.
            drop(unsafe { KBox::from_raw(deferred) });
        }
        let timer = self.timer.lock().take();
        drop(timer);
        let delivery = self.delivery.lock().take();
        drop(delivery);
    }

    /// Queues `value` for `comm` to be handled in process context (see
    /// [`DeferredHandler for CmService`]); callable in atomic context.
    pub(crate) fn defer(&self, comm: CommId, value: u32) -> Result {
        let deferred = self.deferred.load(Ordering::Acquire);
        // SAFETY: non-null between `start` and `stop`; exports (the only
        // callers) cannot run once unloading begins, as consumers hold
        // the module.
        match unsafe { deferred.as_ref() } {
            Some(d) => d.push(comm.0, value),
            None => Err(ENODEV),
        }
    }

    /// Registers CM MAD agents on the device's IB/RoCE ports.
    pub(crate) fn add_device(&self, device: &Device<'_>) -> Result {
        let mut agents = KVec::new();
        for port in device.ports() {
            if !device.has_ib_cm(port) {
                continue;
            }
            // SAFETY: the service outlives every agent: agents are dropped
            // in `remove_device`, which ib_core calls for every device
            // before client unregistration (and so module unload) returns.
            let agent = unsafe { MadAgent::register(device, port, self as *const CmService)? };
            agents.push(agent, GFP_KERNEL)?;
        }
        let entry = DeviceEntry {
            identity: device.identity(),
            id: DeviceId(self.next_device.fetch_add(1, Ordering::Relaxed)),
            guid: device.node_guid(),
            agents,
            counters: PortCounters::new(device)?,
        };
        let ports = entry.agents.len();
        {
            let mut devices = self.devices.lock();
            match devices.iter_mut().find(|slot| slot.is_none()) {
                Some(slot) => *slot = Some(entry),
                None => devices.push(Some(entry), GFP_KERNEL)?,
            }
        }
        pr_info!("rcm: {}: CM on {} port(s)\n", device.name(), ports);
        Ok(())
    }

    /// The id of the served device with this identity (its `ib_device`
    /// address).
    pub(crate) fn device_id(&self, identity: usize) -> Option<DeviceId> {
        let devices = self.devices.lock();
        let found = devices
            .iter()
            .flatten()
            .find(|d| d.identity == identity)
            .map(|d| d.id);
        found
    }

    /// Unregisters the device's agents (waiting for their callbacks).
    pub(crate) fn remove_device(&self, device: &Device<'_>) {
        let identity = device.identity();
        self.await_dreps(identity);
        let entry = {
            let mut devices = self.devices.lock();
            let slot = devices
                .iter_mut()
                .find(|slot| slot.as_ref().is_some_and(|d| d.identity == identity));
            slot.and_then(Option::take)
        };
        // Dropped outside the lock: unregistering waits for callbacks
        // that take it.
        drop(entry);
    }

    /// ib_core removes clients in reverse order, so the consumers of a
    /// departing device have just disconnected their connections on it:
    /// give the DREPs up to a second to arrive instead of dropping them at
    /// a closing port (which also keeps them out of ib_mad's own teardown).
    fn await_dreps(&self, identity: usize) {
        let Some(dev) = self.device_id(identity) else {
            return;
        };
        for _ in 0..100 {
            if !self.endpoint.lock().awaits_drep(dev) {
                return;
            }
            // SAFETY: no preconditions; no lock is held.
            unsafe { bindings::rcm_h_sleep_ms(10) };
        }
    }

    /// Posts collected MADs, reports failed requests to the endpoint and
    /// queues events for delivery.
    pub(crate) fn flush(&self, mut outbox: Outbox) {
        // Bounded: a failure report produces at most a REJ, whose own
        // failure is not reported again.
        for _ in 0..2 {
            // Every round's events: the failure reports' (REQ_ERROR ...)
            // too.
            self.queue_events(&mut outbox);
            let mut failed = KVec::new();
            {
                let devices = self.devices.lock();
                for out in outbox.sends.iter() {
                    let port = out.peer.path.port;
                    let device = devices.iter().flatten().find(|d| d.id == out.peer.device);
                    let agent = device.and_then(|d| d.agents.iter().find(|a| a.port() == port));
                    let ok =
                        agent.is_some_and(|a| a.send(&out.peer.path, &out.mad, out.cookie).is_ok());
                    if let (true, Some(d)) = (ok, device) {
                        let attr_id = peek_attr_id(&out.mad);
                        d.counters.count(port, Counter::Sent, attr_id);
                        if out.retry {
                            d.counters.count(port, Counter::Resent, attr_id);
                        }
                    }
                    if !ok && out.cookie >> 48 == 1 && failed.push(out.cookie, GFP_KERNEL).is_err()
                    {
                        break;
                    }
                }
            }
            if failed.is_empty() {
                break;
            }
            outbox = Outbox::new();
            {
                let mut ep = self.endpoint.lock();
                let now = now_ms();
                for c in failed.iter() {
                    ep.send_failed(now, CommId(*c as u32), (*c >> 32) as u16, &mut outbox);
                }
            }
        }
        // The last round's events, if its sends were not tried.
        self.queue_events(&mut outbox);
        self.rearm();
    }

    /// Moves an outbox's events to the delivery queue and has them
    /// delivered.
    fn queue_events(&self, outbox: &mut Outbox) {
        if outbox.events.is_empty() {
            return;
        }
        {
            let mut queue = self.events.lock();
            for ev in core::mem::take(&mut outbox.events) {
                if queue.push(ev, GFP_KERNEL).is_err() {
                    pr_warn!("rcm: out of memory, CM event lost\n");
                }
            }
        }
        if let Some(delivery) = self.delivery.lock().as_ref() {
            delivery.queue();
        }
    }

    /// Arms the timer for the endpoint's next deadline. The deadline may
    /// be stale by the time it is armed; arming keeps the earliest one,
    /// and a timer that fires early only re-arms.
    fn rearm(&self) {
        let next = self.endpoint.lock().poll_timeout();
        if let Some(deadline) = next {
            if let Some(timer) = self.timer.lock().as_ref() {
                timer.arm_at(deadline);
            }
        }
    }
}

impl MadHandler for CmService {
    fn received(&self, mad: &ReceivedMad) {
        let port = mad.from.port;
        let device = {
            let devices = self.devices.lock();
            let entry = devices.iter().flatten().find(|d| d.identity == mad.device);
            if let Some(d) = entry {
                d.counters
                    .count(port, Counter::Received, peek_attr_id(&mad.mad));
            }
            entry.map(|d| (d.id, d.guid))
        };
        let Some((device, guid)) = device else {
            return;
        };
        let rx = Received {
            from: Peer {
                device,
                path: mad.from,
            },
            device,
            local_ca_guid: guid,
        };
        let mut outbox = Outbox::new();
        self.endpoint
            .lock()
            .handle_mad(now_ms(), &rx, &mad.mad, &mut outbox);
        if !outbox.duplicates.is_empty() {
            let devices = self.devices.lock();
            if let Some(d) = devices.iter().flatten().find(|d| d.id == device) {
                for attr_id in outbox.duplicates.iter() {
                    d.counters.count(port, Counter::Duplicate, *attr_id);
                }
            }
        }
        self.flush(outbox);
    }

    fn sent(&self, cookie: u64, ok: bool) {
        if ok || cookie >> 48 != 1 {
            return;
        }
        let mut outbox = Outbox::new();
        self.endpoint.lock().send_failed(
            now_ms(),
            CommId(cookie as u32),
            (cookie >> 32) as u16,
            &mut outbox,
        );
        self.flush(outbox);
    }
}

impl DeferredHandler for CmService {
    /// A deferred `ib_cm_notify`: `value` is the `enum ib_event_type`.
    /// Errors are lost, as the caller has already been told 0.
    fn run(&self, id: u32, value: u32) {
        let comm = CommId(id);
        let mut outbox = Outbox::new();
        let _ = crate::ib_cm_qp::apply_notify(&mut self.endpoint.lock(), comm, value, &mut outbox);
        self.flush(outbox);
        // Under the registry lock: a destroy unregisters (taking it)
        // before it frees the box. (Lock order: ids, then endpoint.)
        let ids = self.ids.lock();
        if let Some(&b) = ids.get(&id) {
            // SAFETY: registered, and it stays so while we hold the lock.
            unsafe { self.sync_id(b as *mut crate::cm_ids::CmIdBox) };
        }
    }
}

impl TimerHandler for CmService {
    /// Retransmissions, give-ups and TIMEWAIT ends that are due.
    fn fire(&self) {
        let mut outbox = Outbox::new();
        self.endpoint.lock().handle_timeout(now_ms(), &mut outbox);
        self.flush(outbox);
    }
}

impl WorkHandler for CmService {
    /// Delivers the queued events to their consumers.
    fn run(&self) {
        self.deliver_events();
    }
}

/// The service, for ib_client callbacks (which get no context pointer).
static SERVICE: core::sync::atomic::AtomicPtr<CmService> =
    core::sync::atomic::AtomicPtr::new(core::ptr::null_mut());

/// Runs `f` on the service, if one is published.
pub(crate) fn with_service<R>(f: impl FnOnce(&CmService) -> R) -> Option<R> {
    let ptr = SERVICE.load(Ordering::Acquire);
    // SAFETY: a non-null pointer is published by `ServiceHandle::new` and
    // withdrawn by its drop, which happens only after the ib_client whose
    // callbacks call this is unregistered (field order in `RcmModule`).
    unsafe { ptr.as_ref() }.map(f)
}

/// Owns the service and publishes it for the client callbacks.
pub(crate) struct ServiceHandle(Pin<KBox<CmService>>);

impl ServiceHandle {
    /// Creates, starts and publishes the service.
    pub(crate) fn new() -> Result<Self> {
        let service = KBox::pin_init(CmService::new(), GFP_KERNEL)?;
        service.as_ref().start()?;
        let ptr: *const CmService = &*service;
        SERVICE.store(ptr.cast_mut(), Ordering::Release);
        Ok(ServiceHandle(service))
    }
}

impl Drop for ServiceHandle {
    fn drop(&mut self) {
        SERVICE.store(core::ptr::null_mut(), Ordering::Release);
        self.0.stop();
    }
}
