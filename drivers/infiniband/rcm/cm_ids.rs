// SPDX-License-Identifier: GPL-2.0

//! Consumer ids: the `struct ib_cm_id` rcm hands to ib_cm consumers, the
//! registry from comm id to id, and the delivery of events to their
//! handlers.
//!
//! Events are delivered by the service's work item, one at a time and in
//! order (a work item never runs concurrently with itself), with no lock
//! held, so a handler may call back into the API. `ib_destroy_cm_id` waits
//! for a running callback of the id (or of the listener a REQ came from);
//! called from that very callback, it leaves the freeing to the delivery
//! code instead.

use crate::bindings;
use crate::cm_event_params::{event_params, packet_life_time, EventContext};
use crate::cm_service::CmService;
use crate::cm_service::Peer;
use crate::ib_cm_types::{kernel_qp_type, kernel_state};
use crate::outbox::Outbox;
use crate::proto::cm::store::OrderedMap;
use crate::proto::cm::Connection;
use crate::proto::cm::{CmError, CommId, Event, Transport};
use crate::proto::wire::req::Req;
use crate::proto::wire::sidr::SidrReq;
use crate::rdma::device::Device;
use crate::rdma::gid::GidAttr;
use crate::rdma::timer::now_ms;
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::ffi::c_void;
use kernel::prelude::*;
use kernel::types::Opaque;
use kernel::{new_spinlock, sync::SpinLock};

/// What created a passive id.
enum Incoming<'a> {
    /// A REQ and its MAD's attribute modifier (ECE).
    Req(&'a Req, u32),
    SidrReq(&'a SidrReq),
}

/// A consumer's id. `id` comes first: consumers hold `&id` and the API
/// gets the box back by casting.
///
/// INVARIANT: rcm writes the fields of `id` that mirror the core (state,
/// LAP state, remote id, service id) only under the endpoint lock, and
/// forms no Rust reference to `id`: consumers read it and write `context`
/// (and may swap the handler) without any lock, as with the C CM.
#[pin_data]
#[repr(C)]
pub(crate) struct CmIdBox {
    /// What consumers see.
    id: Opaque<bindings::ib_cm_id>,
    /// The core's id.
    pub(crate) comm: CommId,
    /// Destroyed from inside its own callback: freed when it returns.
    free_pending: AtomicBool,
    /// The GID entry of the id's path, held for the id's lifetime as 6.12
    /// holds its address vector's (events hand it out as `sgid_attr`).
    #[pin]
    gid: SpinLock<Option<GidAttr>>,
}

impl CmIdBox {
    /// A box for `comm` with the consumer's handler and context.
    pub(crate) fn new(
        comm: CommId,
        device: *mut bindings::ib_device,
        handler: bindings::ib_cm_handler,
        context: *mut kernel::ffi::c_void,
    ) -> Result<*mut CmIdBox> {
        let id = bindings::ib_cm_id {
            cm_handler: handler,
            context,
            device,
            local_id: comm.0.to_be(),
            // The C CM's default: the CM's own QP1.
            remote_cm_qpn: 1,
            ..Default::default()
        };
        let b = KBox::pin_init(
            try_pin_init!(CmIdBox {
                id: Opaque::new(id),
                comm,
                free_pending: AtomicBool::new(false),
                gid <- new_spinlock!(None, "rcm::id_gid"),
            }? Error),
            GFP_KERNEL,
        )?;
        // SAFETY: the box is never moved out of: it is freed in place
        // through `KBox::from_raw`.
        Ok(KBox::into_raw(unsafe { Pin::into_inner_unchecked(b) }))
    }

    /// Holds `gid` as the id's GID entry (the previous one is put).
    pub(crate) fn hold_gid(&self, gid: Option<GidAttr>) {
        let old = core::mem::replace(&mut *self.gid.lock(), gid);
        drop(old);
    }

    /// Another reference on the id's GID entry, if it has one.
    pub(crate) fn gid(&self) -> Option<GidAttr> {
        self.gid.lock().clone()
    }

    /// The consumer's pointer to the id.
    pub(crate) fn as_raw(&self) -> *mut bindings::ib_cm_id {
        self.id.get()
    }

    /// The device the id was created on (set at creation, never changed).
    pub(crate) fn device(&self) -> *mut bindings::ib_device {
        // SAFETY: `id` is live with `self`; no one writes `device`.
        unsafe { core::ptr::addr_of!((*self.id.get()).device).read() }
    }

    /// The consumer's handler and context, as they are now (consumers may
    /// change them at any time).
    pub(crate) fn handler_and_context(&self) -> (bindings::ib_cm_handler, *mut c_void) {
        let p = self.id.get();
        // SAFETY: `id` is live with `self`; a racing consumer write is a
        // single aligned pointer store, read here once (READ_ONCE).
        unsafe {
            (
                core::ptr::addr_of!((*p).cm_handler).read_volatile(),
                core::ptr::addr_of!((*p).context).read_volatile(),
            )
        }
    }

    /// Writes the fields that mirror the core's view of the id. The caller
    /// holds the endpoint lock (type invariant).
    fn mirror(&self, c: &Connection<Peer>) {
        let p = self.id.get();
        // SAFETY: `id` is live with `self`; these fields are written only
        // here, under the endpoint lock the caller holds (type invariant),
        // and consumers only read them (WRITE_ONCE for their racy reads).
        unsafe {
            core::ptr::addr_of_mut!((*p).state).write_volatile(kernel_state(c.state()));
            core::ptr::addr_of_mut!((*p).lap_state)
                .write_volatile(c.lap_state() as bindings::ib_cm_lap_state);
            core::ptr::addr_of_mut!((*p).remote_id).write_volatile(c.remote_id().to_be());
            core::ptr::addr_of_mut!((*p).service_id).write_volatile(c.service_id().to_be());
        }
    }

    /// The box of a consumer's id pointer.
    ///
    /// # Safety
    ///
    /// `id` must be a pointer rcm returned from `ib_create_cm_id` (or
    /// delivered in an event) and not yet destroyed.
    pub(crate) unsafe fn from_id<'a>(id: *mut bindings::ib_cm_id) -> &'a CmIdBox {
        // SAFETY: `id` is the first field of a live `CmIdBox` (repr(C)),
        // per the function's contract.
        unsafe { &*id.cast::<CmIdBox>() }
    }
}

/// The alternate path of a REQ, seen from the passive side.
fn req_alt_path(req: &Req, roce: bool) -> bindings::rcm_h_lap_path {
    let a = &req.alternate_path;
    bindings::rcm_h_lap_path {
        sgid: a.remote_port_gid,
        dgid: a.local_port_gid,
        service_id: req.service_id,
        flow_label: a.flow_label,
        slid: a.remote_port_lid,
        dlid: a.local_port_lid,
        pkey: req.partition_key,
        sl: a.sl,
        rate: a.packet_rate,
        hop_limit: a.hop_limit,
        traffic_class: a.traffic_class,
        packet_life_time: packet_life_time(a.local_ack_timeout),
        mtu: req.path_mtu,
        roce: u8::from(roce),
    }
}

/// What a destroy waits for: no callback of `comm` running.
struct CallbackWait<'a> {
    service: &'a CmService,
    comm: u32,
}

/// # Safety
///
/// `ctx` must point to a live `CallbackWait`.
unsafe extern "C" fn callback_over(ctx: *mut kernel::ffi::c_void) -> bool {
    // SAFETY: per the function's contract.
    let w = unsafe { &*ctx.cast::<CallbackWait<'_>>() };
    !w.service.in_callback(w.comm)
}

impl CmService {
    /// Copies the core's view of an id into the consumer-visible fields.
    pub(crate) fn sync_id(&self, b: &CmIdBox) {
        let ep = self.endpoint.lock();
        if let Some(c) = ep.get(b.comm) {
            b.mirror(c);
        }
    }

    /// Registers a box; on failure the caller still owns it.
    pub(crate) fn register_id(&self, b: *mut CmIdBox) -> Result {
        // SAFETY: the caller passes a live box.
        let comm = unsafe { (*b).comm };
        self.ids
            .lock()
            .try_insert(comm.0, b as usize)
            .map_err(|_| ENOMEM)
    }

    /// Ends an id for its consumer (`ib_destroy_cm_id`, or a non-zero
    /// handler return): the core finishes the protocol, the box goes.
    ///
    /// # Safety
    ///
    /// `b` must be a live, registered box, not used by the caller after.
    pub(crate) unsafe fn destroy_id(&self, b: *mut CmIdBox) {
        // SAFETY: live per the contract.
        let comm = unsafe { (*b).comm };
        if self.end_comm(comm, true) == Ok(false) {
            // A shared listener someone else still holds.
            return;
        }
        self.ids.lock().remove(&comm.0);
        // SAFETY: no preconditions.
        let me = unsafe { bindings::rcm_h_current() } as usize;
        if self.in_callback(comm.0) && self.worker.load(Ordering::Acquire) == me {
            // Called from the callback that is delivering to this id.
            // SAFETY: live per the contract.
            unsafe { (*b).free_pending.store(true, Ordering::Release) };
            return;
        }
        if self.in_callback(comm.0) {
            let wait = CallbackWait {
                service: self,
                comm: comm.0,
            };
            // SAFETY: `callback_over` reads a `CallbackWait`, which `wait`
            // is and which outlives the call; we hold no lock.
            unsafe {
                bindings::rcm_h_wait_until(
                    Some(callback_over),
                    core::ptr::from_ref(&wait).cast_mut().cast(),
                )
            };
        }
        // SAFETY: unregistered and no callback runs for it: ours to free.
        drop(unsafe { KBox::from_raw(b) });
    }

    /// Whether a handler runs for `comm` (as the id or as the listener of
    /// a new id) right now.
    fn in_callback(&self, comm: u32) -> bool {
        self.delivering
            .iter()
            .any(|d| d.load(Ordering::Acquire) == comm)
    }

    /// Clears the marks of a finished callback and wakes destroys waiting
    /// for it.
    fn callback_done(&self) {
        self.delivering[0].store(0, Ordering::Release);
        self.delivering[1].store(0, Ordering::Release);
        // SAFETY: no preconditions.
        unsafe { bindings::rcm_h_delivery_done() };
    }

    /// Delivers queued events, in order, one at a time.
    pub(crate) fn deliver_events(&self) {
        // SAFETY: no preconditions.
        let me = unsafe { bindings::rcm_h_current() } as usize;
        self.worker.store(me, Ordering::Release);
        while let Some(batch) = self.next_events() {
            for (id, event) in batch {
                match event {
                    Event::ReqReceived {
                        listener,
                        req,
                        attr_mod,
                    } => self.deliver_new(id, listener, Incoming::Req(&req, attr_mod)),
                    Event::SidrReqReceived { listener, req } => {
                        self.deliver_new(id, listener, Incoming::SidrReq(&req))
                    }
                    other => self.deliver_existing(id, &other),
                }
            }
        }
        self.worker.store(0, Ordering::Release);
    }

    /// A REQ or SIDR_REQ for a consumer's listener: a new id with the
    /// listener's handler and context, then `IB_CM_REQ_RECEIVED` or
    /// `IB_CM_SIDR_REQ_RECEIVED`.
    fn deliver_new(&self, comm: CommId, listener: CommId, incoming: Incoming<'_>) {
        let (listen_box, handler, context, device) = {
            let ids = self.ids.lock();
            let Some(&lb) = ids.get(&listener.0) else {
                drop(ids);
                self.reject_orphan(comm);
                return;
            };
            let lb = lb as *mut CmIdBox;
            // SAFETY: registered boxes are live while the registry lock is
            // held (destroy unregisters before freeing).
            let l = unsafe { &*lb };
            // Mark the listener busy before the lock goes, so that its
            // destroy waits for this callback.
            self.delivering[1].store(listener.0, Ordering::Release);
            let (handler, context) = l.handler_and_context();
            (lb, handler, context, l.device())
        };
        let Ok(b) = CmIdBox::new(comm, device, handler, context) else {
            self.callback_done();
            self.reject_orphan(comm);
            return;
        };
        if self.register_id(b).is_err() {
            self.callback_done();
            // SAFETY: never published.
            drop(unsafe { KBox::from_raw(b) });
            self.reject_orphan(comm);
            return;
        }
        // SAFETY: `b` is live and registered.
        self.sync_id(unsafe { &*b });
        let peer = self
            .endpoint
            .lock()
            .get(comm)
            .and_then(|c| c.peer().copied());
        let port = peer.map_or(1, |p| p.path.port);
        // The GID the message arrived on, held by the new id (RoCE).
        let gid = peer.filter(|p| p.path.has_grh).and_then(|p| {
            // SAFETY: the listener's device is registered while the
            // listener exists, which `delivering[1]` ensures.
            let dev = unsafe { Device::from_raw(device) };
            GidAttr::get(&dev, port, p.path.sgid_index)
        });
        let sgid_attr = gid.as_ref().map_or(core::ptr::null(), GidAttr::as_ptr);
        // SAFETY: `b` is live and not yet handed to anyone.
        unsafe { (*b).hold_gid(gid) };
        let pkey_index = peer.map_or(0, |p| p.path.pkey_index);
        self.delivering[0].store(comm.0, Ordering::Release);
        let ret = match incoming {
            // SAFETY: `b` is live (its destroy waits for `delivering`), the
            // listener too (`delivering[1]`); `b` holds `sgid_attr`.
            Incoming::Req(req, attr_mod) => unsafe {
                self.call_req(b, listen_box, req, attr_mod, peer, sgid_attr)
            },
            // SAFETY: as above; the private data lives until the call returns.
            Incoming::SidrReq(req) => unsafe {
                let ev = bindings::rcm_h_sidr_req_event {
                    listen_id: (*listen_box).as_raw(),
                    sgid_attr,
                    private_data: req.private_data.as_ptr().cast(),
                    service_id: req.service_id,
                    port,
                    pkey: req.partition_key,
                    pkey_index,
                };
                bindings::rcm_h_deliver_sidr_req((*b).as_raw(), &ev)
            },
        };
        self.finish_delivery(b, Some(listen_box), ret);
    }

    /// Calls the handler of `b` with `IB_CM_REQ_RECEIVED`.
    ///
    /// # Safety
    ///
    /// `b` and `listen_box` must be live boxes.
    unsafe fn call_req(
        &self,
        b: *mut CmIdBox,
        listen_box: *mut CmIdBox,
        req: &Req,
        attr_mod: u32,
        peer: Option<crate::cm_service::Peer>,
        sgid_attr: *const bindings::ib_gid_attr,
    ) -> i32 {
        let p = &req.primary_path;
        let a = &req.alternate_path;
        let has_alt = a.local_port_lid != 0 || a.local_port_gid != [0; 16];
        let path = peer.map(|p| p.path).unwrap_or_default();
        // As 6.12 reports them: the requester's resources and timeouts
        // seen from this side (its initiator depth is our responder
        // resources, its remote response timeout is ours to keep).
        let ev = bindings::rcm_h_req_event {
            // SAFETY: the listener is kept alive by `delivering[1]`.
            listen_id: unsafe { (*listen_box).as_raw() },
            sgid_attr,
            private_data: req.private_data.as_ptr().cast(),
            remote_ca_guid: req.local_ca_guid,
            service_id: req.service_id,
            port: path.port,
            remote_qkey: req.local_qkey,
            remote_qpn: req.local_qpn,
            starting_psn: req.starting_psn,
            flow_label: p.flow_label,
            vendor_id: req.vendor_id,
            attr_mod,
            pkey: req.partition_key,
            pkey_index: path.pkey_index,
            slid: p.remote_port_lid,
            dlid: path.dlid,
            qp_type: kernel_qp_type(
                Transport::from_req(req.transport_service_type, req.extended_transport_type)
                    .unwrap_or_default()
                    .qp_type(true),
            ),
            responder_resources: req.initiator_depth,
            initiator_depth: req.responder_resources,
            local_cm_response_timeout: req.remote_cm_response_timeout.exponent(),
            remote_cm_response_timeout: req.local_cm_response_timeout.exponent(),
            flow_control: u8::from(req.end_to_end_flow_control),
            retry_count: req.retry_count,
            rnr_retry_count: req.rnr_retry_count,
            srq: u8::from(req.srq),
            roce: u8::from(path.has_grh),
            sl: p.sl,
            mtu: req.path_mtu,
            rate: p.packet_rate,
            packet_life_time: packet_life_time(p.local_ack_timeout),
            // The hop limit of the GRH the REQ came with, as 6.12.
            hop_limit: path.hop_limit,
            traffic_class: p.traffic_class,
            sgid: p.remote_port_gid,
            dgid: p.local_port_gid,
            dmac: path.dmac,
            has_alt: u8::from(has_alt),
            alt: if has_alt {
                req_alt_path(req, path.has_grh)
            } else {
                Default::default()
            },
        };
        // SAFETY: live per the contract; the event's pointers live until
        // the call returns.
        unsafe { bindings::rcm_h_deliver_req((*b).as_raw(), &ev) }
    }

    /// An event for an id the consumer already has.
    fn deliver_existing(&self, comm: CommId, event: &Event) {
        let b = {
            let ids = self.ids.lock();
            let Some(&b) = ids.get(&comm.0) else {
                // Destroyed meanwhile: the consumer wants no more events.
                return;
            };
            // Under the registry lock, so that a destroy waits for us.
            self.delivering[0].store(comm.0, Ordering::Release);
            b as *mut CmIdBox
        };
        // SAFETY: `b` is live: its destroy waits for `delivering[0]`.
        self.sync_id(unsafe { &*b });
        let view = self.endpoint.lock().get(comm).map(EventContext::of);
        // SAFETY: `b` is live (as above).
        let gid = unsafe { (*b).gid() };
        let ret = match view.and_then(|cx| event_params(event, &cx)) {
            Some(mut params) => {
                params.sgid_attr = gid.as_ref().map_or(core::ptr::null(), GidAttr::as_ptr);
                // SAFETY: `b` is live; the event's pointers borrow `event`
                // and `gid`, which outlive the call.
                unsafe { bindings::rcm_h_deliver_event((*b).as_raw(), &params) }
            }
            None => 0,
        };
        self.finish_delivery(b, None, ret);
    }

    /// After a handler returned `ret` for id `b` (and the listener of a
    /// new id): free what a destroy from inside the callback left to us,
    /// or destroy `b` if the handler gave it up.
    fn finish_delivery(&self, b: *mut CmIdBox, listen_box: Option<*mut CmIdBox>, ret: i32) {
        // Read the flags while the callback marks still keep a destroy on
        // another thread waiting: once they are cleared, such a destroy
        // frees the box. (A flag is only set by a destroy from inside the
        // callback, which has returned.)
        // SAFETY: both boxes are live until `callback_done`.
        let listener_freed =
            listen_box.is_some_and(|l| unsafe { (*l).free_pending.load(Ordering::Acquire) });
        // SAFETY: as above.
        let freed = unsafe { (*b).free_pending.load(Ordering::Acquire) };
        self.callback_done();
        if let (Some(listen_box), true) = (listen_box, listener_freed) {
            // SAFETY: unregistered by the destroy that flagged it; nothing
            // else has it.
            drop(unsafe { KBox::from_raw(listen_box) });
        }
        if freed {
            // SAFETY: as above.
            drop(unsafe { KBox::from_raw(b) });
        } else if ret != 0 {
            // SAFETY: live and registered: the consumer gave it up, so it
            // does not destroy it itself (the ib_cm contract).
            unsafe { self.destroy_id(b) };
        }
    }

    /// A passive id whose consumer cannot be reached: refuse the REQ.
    fn reject_orphan(&self, comm: CommId) {
        let _ = self.end_comm(comm, true);
    }

    /// Destroys the core's id (see `Endpoint::destroy`) and sends what
    /// that takes; goes ahead without memory (its MADs are then best
    /// effort: a DREQ is retransmitted, a lost REJ times out the peer).
    pub(crate) fn end_comm(
        &self,
        comm: CommId,
        reject: bool,
    ) -> core::result::Result<bool, CmError> {
        let mut outbox = Outbox::reserve(1, GFP_KERNEL).unwrap_or_else(|_| Outbox::unreserved());
        let r = self
            .endpoint
            .lock()
            .destroy(now_ms(), comm, reject, &mut outbox);
        self.flush(outbox);
        r
    }
}
