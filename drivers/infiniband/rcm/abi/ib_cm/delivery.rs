// SPDX-License-Identifier: GPL-2.0

//! Delivery of the service's events to ib_cm consumers, and the end of
//! their ids.
//!
//! Events arrive from the service's delivery (its delivery work or its
//! MAD intake work, one task at a time), one at a time and in order, with
//! no lock held, so a handler may call back into the API.
//! `ib_destroy_cm_id` waits for a running callback of the id (or of the
//! listener a REQ came from), unless called from that very callback. A
//! delivery holds its own reference on the ids it calls back for, so an
//! id destroyed from its callback is freed when the delivery lets go.

use super::event_params::{event_params, EventContext};
use super::id::CmIdBox;
use super::path::event_path;
use super::types::kernel_qp_type;
use super::IbCm;
use crate::abi::id_registry::RegisteredId;
use crate::bindings;
use crate::proto::cm::{CommId, Event, Transport};
use crate::proto::reason::RejectReason;
use crate::proto::wire::req::Req;
use crate::proto::wire::sidr::SidrReq;
use crate::rdma::cm_event;
use crate::rdma::device::Device;
use crate::rdma::gid::GidAttr;
use crate::rdma::mad_path::MadPath;
use crate::rdma::sync::{current_task, wait_until, wake_waiters};
use crate::rdma::timer::now_ms;
use crate::shell::CmService;
use crate::shell::{EventBatch, KernelEndpoint, Peer};
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;

/// What created a passive id.
enum Incoming<'a> {
    /// A REQ and its MAD's attribute modifier (ECE).
    Req(&'a Req, u32),
    SidrReq(&'a SidrReq),
}

impl IbCm {
    /// Delivers a batch of its consumers' events, in order (the CM
    /// service's delivery, no lock held).
    pub(crate) fn deliver(&self, s: &CmService, batch: EventBatch) {
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
    /// The registered box of a comm id, with a reference for the caller.
    pub(crate) fn id_box(&self, comm: CommId) -> Option<Arc<CmIdBox>> {
        let ids = self.ids.lock();
        let found = ids.get(comm.0.into()).cloned();
        found
    }

    /// Registers a box as its consumer's (dropped on failure).
    pub(crate) fn register_id(&self, b: Arc<CmIdBox>) -> Result {
        self.ids.lock().insert(b)
    }

    /// Whether `b` is still its consumer's (not destroyed).
    fn is_registered(&self, b: &CmIdBox) -> bool {
        let ids = self.ids.lock();
        let found = ids.get(b.key()).is_some_and(|r| core::ptr::eq(&**r, b));
        found
    }

    /// Ends the consumer's id `comm` (`ib_destroy_cm_id`, or a non-zero
    /// handler return): the core finishes the protocol, the consumer's
    /// reference goes. Outside the id's own callback, waits for one
    /// running, then puts the id's GID entry (its device may go once this
    /// returns; the box may outlive the call in a delivery's hands).
    pub(crate) fn destroy_id(&self, s: &CmService, comm: CommId) {
        if s.destroy(comm, true) == Ok(false) {
            // A shared listener someone else still holds.
            return;
        }
        let Some(b) = self.ids.lock().remove(comm.0.into()) else {
            return;
        };
        if self.in_callback(comm.0) && self.worker.load(Ordering::Acquire) == current_task() {
            // Called from the callback that is delivering to this id: the
            // delivery's reference keeps the box (and the GID entry its
            // event names) until the callback has returned.
            return;
        }
        wait_until(&|| !self.in_callback(comm.0));
        b.hold_gid(None);
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
    fn deliver_new(&self, s: &CmService, comm: CommId, listener: CommId, incoming: Incoming<'_>) {
        let l = {
            let ids = self.ids.lock();
            let Some(l) = ids.get(listener.0.into()).cloned() else {
                drop(ids);
                self.reject_orphan(s, comm);
                return;
            };
            // Mark the listener busy before the lock goes, so that its
            // destroy waits for this callback.
            self.delivering[1].store(listener.0, Ordering::Release);
            l
        };
        let ((handler, context), device) = (l.handler_and_context(), l.device());
        let peer = s.read(|ep| ep.get(comm).and_then(|c| c.peer().copied()));
        // The listener's device stays registered while the listener
        // exists, which `delivering[1]` ensures.
        let dev = l.dev();
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
        if self.register_id(b.clone()).is_err() {
            self.callback_done();
            self.reject_orphan(s, comm);
            return;
        }
        if alternate.is_some() {
            // Without memory for the outbox the id goes on without it.
            let _ = s.call(|ep, _| ep.set_alternate(comm, alternate, None));
        }
        sync_id(s, &b);
        let sgid_attr = gid.as_ref().map_or(core::ptr::null(), GidAttr::as_ptr);
        b.hold_gid(gid);
        let pkey_index = peer.map_or(0, |p| p.path.pkey_index);
        self.delivering[0].store(comm.0, Ordering::Release);
        let ret = match incoming {
            Incoming::Req(req, attr_mod) => self.call_req(&b, &l, req, attr_mod, peer, sgid_attr),
            Incoming::SidrReq(req) => {
                let ev = bindings::rcm_h_sidr_req_event {
                    listen_id: l.as_raw(),
                    sgid_attr,
                    private_data: req.private_data.as_ptr().cast(),
                    service_id: req.service_id,
                    port,
                    pkey: req.partition_key,
                    pkey_index,
                };
                // SAFETY: both ids are live (references held); `b` holds
                // `sgid_attr`; the private data lives until the call
                // returns.
                unsafe { cm_event::deliver_sidr_req(b.as_raw(), &ev) }
            }
        };
        self.finish_delivery(s, &b, ret);
    }

    /// Calls the handler of `b` with `IB_CM_REQ_RECEIVED` (`sgid_attr`:
    /// the GID entry `b` holds, or NULL).
    fn call_req(
        &self,
        b: &CmIdBox,
        listen_box: &CmIdBox,
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
            listen_id: listen_box.as_raw(),
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
        // SAFETY: both ids are live (their references are held by the
        // caller); the event's pointers live until the call returns.
        unsafe { cm_event::deliver_req(b.as_raw(), &ev) }
    }

    /// An event for an id the consumer already has.
    fn deliver_existing(&self, s: &CmService, comm: CommId, event: &Event) {
        let b = {
            let ids = self.ids.lock();
            let Some(b) = ids.get(comm.0.into()).cloned() else {
                // Destroyed meanwhile: the consumer wants no more events.
                return;
            };
            // Under the registry lock, so that a destroy waits for us.
            self.delivering[0].store(comm.0, Ordering::Release);
            b
        };
        // The fields the consumer reads and the event's context, under one
        // hold of the endpoint.
        let view = s.read(|ep| {
            ep.get(comm).map(|c| {
                b.mirror(c);
                EventContext::of(c)
            })
        });
        let gid = b.gid();
        let ret = match view.and_then(|cx| event_params(event, &cx).map(|p| (p, cx))) {
            Some((mut params, cx)) => {
                if let (Event::LapReceived(_), Some(peer)) = (event, cx.peer) {
                    learn_alternate(s, &b.dev(), comm, peer, &params.lap, gid.as_ref());
                }
                params.sgid_attr = gid.as_ref().map_or(core::ptr::null(), GidAttr::as_ptr);
                // SAFETY: `b` is live (a reference is held); the event's
                // pointers borrow `event` and `gid`, which outlive the call.
                unsafe { cm_event::deliver_event(b.as_raw(), &params) }
            }
            None => 0,
        };
        self.finish_delivery(s, &b, ret);
    }

    /// After a handler returned `ret` for id `b`: destroy `b` if the
    /// handler gave it up (the ib_cm contract: its consumer does not
    /// destroy it then), unless the handler destroyed it already. The
    /// caller's references (on `b` and a new id's listener) go after.
    fn finish_delivery(&self, s: &CmService, b: &CmIdBox, ret: i32) {
        self.callback_done();
        if ret != 0 && self.is_registered(b) {
            self.destroy_id(s, b.comm);
        }
    }

    /// A passive id whose consumer cannot be reached: refuse the REQ.
    fn reject_orphan(&self, s: &CmService, comm: CommId) {
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
fn reject_alternate(s: &CmService, comm: CommId, req: &Req) {
    let ari = req.primary_path.remote_port_gid;
    let _ =
        s.call(|ep, out| ep.send_rej(now_ms(), comm, RejectReason::InvalidAltGid, &ari, &[], out));
    let _ = s.destroy(comm, false);
}

/// Keeps the alternate path a LAP proposed (rcm's extension: 6.12 has no
/// LAP on RoCE) for the QP attributes and path migration, if it resolves
/// on this device (else the id goes on without one).
fn learn_alternate(
    s: &CmService,
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
    // Without memory for the outbox the id goes on without it.
    let _ = s.call(|ep, _| ep.set_alternate(comm, Some(alternate), None));
}

/// Copies the core's view of an id into the fields its consumer reads.
pub(crate) fn sync_id(s: &CmService, b: &CmIdBox) {
    s.read(|ep| mirror_from(ep, b));
}

/// [`sync_id`] under a hold of the endpoint the caller already has.
pub(crate) fn mirror_from(ep: &KernelEndpoint, b: &CmIdBox) {
    if let Some(c) = ep.get(b.comm) {
        b.mirror(c);
    }
}
