// SPDX-License-Identifier: GPL-2.0

//! Delivery of the service's events to ib_cm consumers, and the end of
//! their ids.
//!
//! Events arrive from the service's delivery (its delivery work or its
//! MAD intake work, one task at a time), one at a time and in order, with
//! no lock held, so a handler may call back into the API.
//! `ib_destroy_cm_id` waits for a running callback of the id (or of the
//! listener a REQ came from); called from that very callback, it leaves
//! the freeing to the delivery code instead.

use super::event_params::{event_params, EventContext};
use super::id::{sync_id, CmIdBox};
use super::path::event_path;
use super::types::kernel_qp_type;
use super::IbCm;
use crate::abi::service::Service;
use crate::bindings;
use crate::proto::cm::store::OrderedMap;
use crate::proto::cm::{CommId, Event, Transport};
use crate::proto::reason::RejectReason;
use crate::proto::wire::req::Req;
use crate::proto::wire::sidr::SidrReq;
use crate::rdma::device::Device;
use crate::rdma::gid::GidAttr;
use crate::rdma::mad_path::MadPath;
use crate::rdma::sync::{current_task, wait_until, wake_waiters};
use crate::rdma::timer::now_ms;
use crate::shell::{EventBatch, Peer};
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// What created a passive id.
enum Incoming<'a> {
    /// A REQ and its MAD's attribute modifier (ECE).
    Req(&'a Req, u32),
    SidrReq(&'a SidrReq),
}

impl IbCm {
    /// Delivers a batch of its consumers' events, in order (the CM
    /// service's delivery, no lock held).
    pub(crate) fn deliver(&self, s: &Service, batch: EventBatch) {
        self.worker.store(current_task(), Ordering::Release);
        for (id, _, event) in batch {
            match event {
                Event::ReqReceived {
                    listener,
                    req,
                    attr_mod,
                } => self.deliver_new(s, id, listener, Incoming::Req(&req, attr_mod)),
                Event::SidrReqReceived { listener, req } => {
                    self.deliver_new(s, id, listener, Incoming::SidrReq(&req))
                }
                other => self.deliver_existing(s, id, &other),
            }
        }
        self.worker.store(0, Ordering::Release);
    }
}

impl IbCm {
    /// The registered box of a comm id.
    pub(crate) fn id_box(&self, comm: CommId) -> Option<*mut CmIdBox> {
        let ids = self.ids.lock();
        let found = ids.get(&comm.0).map(|&b| b as *mut CmIdBox);
        found
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
    pub(crate) unsafe fn destroy_id(&self, s: &Service, b: *mut CmIdBox) {
        // SAFETY: live per the contract.
        let comm = unsafe { (*b).comm };
        if s.destroy(comm, true) == Ok(false) {
            // A shared listener someone else still holds.
            return;
        }
        self.ids.lock().remove(&comm.0);
        if self.in_callback(comm.0) && self.worker.load(Ordering::Acquire) == current_task() {
            // Called from the callback that is delivering to this id.
            // SAFETY: live per the contract.
            unsafe { (*b).free_pending.store(true, Ordering::Release) };
            return;
        }
        wait_until(&|| !self.in_callback(comm.0));
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
        wake_waiters();
    }

    /// A REQ or SIDR_REQ for a consumer's listener: a new id with the
    /// listener's handler and context, then `IB_CM_REQ_RECEIVED` or
    /// `IB_CM_SIDR_REQ_RECEIVED`.
    fn deliver_new(&self, s: &Service, comm: CommId, listener: CommId, incoming: Incoming<'_>) {
        let (listen_box, handler, context, device) = {
            let ids = self.ids.lock();
            let Some(&lb) = ids.get(&listener.0) else {
                drop(ids);
                self.reject_orphan(s, comm);
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
        let peer = s.read(|ep| ep.get(comm).and_then(|c| c.peer().copied()));
        // SAFETY: the listener's device is registered while the listener
        // exists, which `delivering[1]` ensures.
        let dev = unsafe { Device::from_raw(device) };
        let port = peer.map_or(1, |p| p.path.port);
        // The GID the message arrived on, held by the new id (RoCE).
        let gid = peer
            .filter(|p| p.path.has_grh)
            .and_then(|p| GidAttr::get(&dev, port, p.path.sgid_index));
        // A REQ's alternate path must resolve as 6.12 resolves it (from
        // the path alone, which on RoCE never succeeds): else REJ 18,
        // before the consumer sees the REQ.
        let alternate = match (&incoming, peer) {
            (Incoming::Req(req, _), Some(peer)) => match req_alternate(req, peer.path.has_grh) {
                Some(proposed) => {
                    match MadPath::from_proposed(&dev, &proposed, gid.as_ref(), false) {
                        Ok(path) => Some(Peer {
                            device: peer.device,
                            path,
                        }),
                        Err(_) => {
                            self.callback_done();
                            reject_alternate(s, comm, req);
                            return;
                        }
                    }
                }
                None => None,
            },
            _ => None,
        };
        let Ok(b) = CmIdBox::new(comm, device, handler, context) else {
            self.callback_done();
            self.reject_orphan(s, comm);
            return;
        };
        if self.register_id(b).is_err() {
            self.callback_done();
            // SAFETY: never published.
            drop(unsafe { KBox::from_raw(b) });
            self.reject_orphan(s, comm);
            return;
        }
        if alternate.is_some() {
            // Without memory for the (empty) outbox the id goes on
            // without it.
            let _ = s.call_any_context(|ep, _| ep.set_alternate(comm, alternate, None));
        }
        // SAFETY: `b` is live and registered.
        sync_id(s, unsafe { &*b });
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
        self.finish_delivery(s, b, Some(listen_box), ret);
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
        peer: Option<Peer>,
        sgid_attr: *const bindings::ib_gid_attr,
    ) -> i32 {
        let p = &req.primary_path;
        let path = peer.map(|p| p.path).unwrap_or_default();
        let alt = req_alternate(req, path.has_grh);
        // As 6.12 reports them: the requester's resources and timeouts
        // seen from this side (its initiator depth is our responder
        // resources, its remote response timeout is ours to keep).
        let ev = bindings::rcm_h_req_event {
            // SAFETY: the listener is kept alive by `delivering[1]`.
            listen_id: unsafe { (*listen_box).as_raw() },
            sgid_attr,
            private_data: req.private_data.as_ptr().cast(),
            remote_ca_guid: req.local_ca_guid,
            port: path.port,
            remote_qkey: req.local_qkey,
            remote_qpn: req.local_qpn,
            starting_psn: req.starting_psn,
            vendor_id: req.vendor_id,
            attr_mod,
            pkey_index: path.pkey_index,
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
            primary: bindings::rcm_h_lap_path {
                // The LID and the hop limit of the GRH the REQ came with,
                // as 6.12.
                dlid: path.dlid,
                hop_limit: path.hop_limit,
                ..event_path(
                    p,
                    req.partition_key,
                    req.path_mtu,
                    req.service_id,
                    path.has_grh,
                )
            },
            dmac: path.dmac,
            has_alt: u8::from(alt.is_some()),
            alt: alt.unwrap_or_default(),
        };
        // SAFETY: live per the contract; the event's pointers live until
        // the call returns.
        unsafe { bindings::rcm_h_deliver_req((*b).as_raw(), &ev) }
    }

    /// An event for an id the consumer already has.
    fn deliver_existing(&self, s: &Service, comm: CommId, event: &Event) {
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
        sync_id(s, unsafe { &*b });
        let view = s.read(|ep| ep.get(comm).map(EventContext::of));
        // SAFETY: `b` is live (as above).
        let gid = unsafe { (*b).gid() };
        let ret = match view.and_then(|cx| event_params(event, &cx).map(|p| (p, cx))) {
            Some((mut params, cx)) => {
                if let (Event::LapReceived(_), Some(peer)) = (event, cx.peer) {
                    // SAFETY: `b` is live, and so its device registered.
                    let dev = unsafe { Device::from_raw((*b).device()) };
                    learn_alternate(s, &dev, comm, peer, &params.lap, gid.as_ref());
                }
                params.sgid_attr = gid.as_ref().map_or(core::ptr::null(), GidAttr::as_ptr);
                // SAFETY: `b` is live; the event's pointers borrow `event`
                // and `gid`, which outlive the call.
                unsafe { bindings::rcm_h_deliver_event((*b).as_raw(), &params) }
            }
            None => 0,
        };
        self.finish_delivery(s, b, None, ret);
    }

    /// After a handler returned `ret` for id `b` (and the listener of a
    /// new id): free what a destroy from inside the callback left to us,
    /// or destroy `b` if the handler gave it up.
    fn finish_delivery(
        &self,
        s: &Service,
        b: *mut CmIdBox,
        listen_box: Option<*mut CmIdBox>,
        ret: i32,
    ) {
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
            unsafe { self.destroy_id(s, b) };
        }
    }

    /// A passive id whose consumer cannot be reached: refuse the REQ.
    fn reject_orphan(&self, s: &Service, comm: CommId) {
        let _ = s.destroy(comm, true);
    }
}

/// A REQ's alternate path as the event reports it, if it has one.
fn req_alternate(req: &Req, roce: bool) -> Option<bindings::rcm_h_lap_path> {
    req.has_alternate_path().then(|| {
        event_path(
            &req.alternate_path,
            req.partition_key,
            req.path_mtu,
            req.service_id,
            roce,
        )
    })
}

/// Rejects a REQ whose alternate path does not resolve here (reason 18,
/// our GID on the primary path as ARI, as 6.12) and forgets its id.
fn reject_alternate(s: &Service, comm: CommId, req: &Req) {
    let ari = req.primary_path.remote_port_gid;
    let _ =
        s.call(|ep, out| ep.send_rej(now_ms(), comm, RejectReason::InvalidAltGid, &ari, &[], out));
    let _ = s.destroy(comm, false);
}

/// Keeps the alternate path a LAP proposed (rcm's extension: 6.12 has no
/// LAP on RoCE) for the QP attributes and path migration, if it resolves
/// on this device (else the id goes on without one).
fn learn_alternate(
    s: &Service,
    device: &Device<'_>,
    comm: CommId,
    peer: Peer,
    proposed: &bindings::rcm_h_lap_path,
    sgid_attr: Option<&GidAttr>,
) {
    let Ok(path) = MadPath::from_proposed(device, proposed, sgid_attr, true) else {
        return;
    };
    let alternate = Peer {
        device: peer.device,
        path,
    };
    // Without memory for the (empty) outbox the id goes on without it.
    let _ = s.call_any_context(|ep, _| ep.set_alternate(comm, Some(alternate), None));
}
