// SPDX-License-Identifier: GPL-2.0

//! Delivery of the core's events to rdma_cm consumers' handlers, from the
//! CM service's delivery (`CmService::deliver_all`): one at a time, in
//! order, each with its id's handler lock held (and, for a new
//! connection, its listener's), so a handler may call back in. A non-zero
//! return destroys the id. An address result alone is delivered from
//! ib_core's address work instead (`addr_done`), beside that delivery, as
//! the C rdma_cm's handlers run beside each other on several queues.

use super::calls::{device_ptr, Host};
use super::id::{NewId, RdmaIdBox};
use super::resolve::find_device;
use super::types::event_status;
use super::{mirror_at_end, RdmaCmAbi};
use crate::bindings;
use crate::proto::cm::DeviceId;
use crate::proto::rdma_cm::{EventKind, IdState, RdmaEvent, RdmaId, RdmaQpType, Route};
use crate::rdma::device::Device;
use crate::rdma::gid::GidAttr;
use crate::rdma::path::{plain_path, record_of};
use crate::shell::rdma_cm::{HandBack, KernelRdmaCm};
use crate::shell::CmService;
use crate::shell::Peer;
use kernel::prelude::*;
use kernel::sync::Arc;

impl RdmaCmAbi {
    /// Delivers every queued event.
    pub(crate) fn deliver(&self, s: &CmService) {
        // Events queued while these run are taken by the next round.
        loop {
            let events = self.service.take_events();
            if events.is_empty() {
                return;
            }
            for (id, event) in events.iter() {
                match event.listener {
                    Some(listener) => self.deliver_request(s, *id, listener, event),
                    None => self.deliver_to(s, *id, event),
                }
            }
        }
    }

    /// An event for an existing id.
    fn deliver_to(&self, s: &CmService, id: RdmaId, event: &RdmaEvent) {
        if let Some(b) = self.id_box(id) {
            self.deliver_to_box(s, &b, event);
        }
    }

    /// An event for the id of a box the caller holds. The core mirrored
    /// the id as the call that produced the event left it
    /// ([`IdMirror`](crate::shell::rdma_cm::IdMirror)), and every later
    /// change mirrors itself, so no lock of the core is taken here.
    fn deliver_to_box(&self, s: &CmService, b: &RdmaIdBox, event: &RdmaEvent) {
        b.lock_handler();
        self.deliver_holding(s, b, event);
    }

    /// Runs `f` on the core with `b`'s handler lock taken before the
    /// core's (the order of the two) and held until the event `f` gives
    /// `b`'s id, handed back as `when` allows, is delivered here: no later
    /// event of the id is delivered before it. The id is mirrored as the
    /// call leaves it (the event is not queued, so no one else does).
    /// `then` gets what `f` returned once the core's lock is released,
    /// before the delivery, still under the handler lock (which a destroy
    /// of the id takes first).
    pub(super) fn call_delivering<R>(
        &self,
        s: &CmService,
        b: &RdmaIdBox,
        when: HandBack,
        f: impl FnOnce(&mut KernelRdmaCm, &mut Host<'_>) -> R,
        then: impl FnOnce(R),
    ) {
        b.lock_handler();
        let mut taken = None;
        let r = self
            .service
            .call_taking(s, self, (b.core, when), &mut taken, |core, host| {
                let r = f(core, host);
                mirror_at_end(core, host, b);
                r
            });
        then(r);
        match &taken {
            Some(event) => self.deliver_holding(s, b, event),
            None => b.unlock_handler(),
        }
    }

    /// [`Self::deliver_to_box`] for a caller that holds the id's handler
    /// lock; it is released here.
    fn deliver_holding(&self, s: &CmService, b: &RdmaIdBox, event: &RdmaEvent) {
        if b.destroying() {
            b.unlock_handler();
            return;
        }
        let ud = b.qp_type() == bindings::ib_qp_type_IB_QPT_UD;
        let ret = match event.group {
            Some(group) => self.deliver_group_event(b, group, event),
            None => call_handler(b, event, ud),
        };
        if ret != 0 {
            b.set_destroying();
            b.unlock_handler();
            self.destroy(s, b);
            return;
        }
        b.unlock_handler();
    }

    /// CONNECT_REQUEST: the new id gets its C side (the listener's
    /// handler, context and namespace, the REQ's route) and goes to the
    /// listener's handler, with both handler locks held.
    fn deliver_request(&self, s: &CmService, child: RdmaId, listener: RdmaId, event: &RdmaEvent) {
        let refuse = |this: &Self| {
            // Destroying the core's id rejects the REQ; an iWARP
            // request's own iw_cm id is refused.
            this.call(s, |core, host| {
                let _ = core.destroy(host, child);
            });
            if let Some(cm_id) = this.take_iw_request(child) {
                cm_id.refuse();
            }
        };
        let Some(l) = self.id_box(listener) else {
            return refuse(self);
        };
        l.lock_handler();
        let listening = self.read(|core| core.get(listener).map(|r| r.state()));
        if l.destroying() || listening != Some(IdState::Listen) {
            l.unlock_handler();
            return refuse(self);
        }
        let b = match self.new_passive_id(s, &l, child) {
            Ok(b) => b,
            Err(_) => {
                l.unlock_handler();
                return refuse(self);
            }
        };
        // A new id's lock, below its listener's.
        b.lock_handler_nested();
        let ud = self.read(|core| core.get(child).map(|r| r.qp_type())) == Some(RdmaQpType::Ud);
        let ret = call_handler(&b, event, ud);
        if ret != 0 {
            b.set_destroying();
            b.unlock_handler();
            l.unlock_handler();
            self.destroy(s, &b);
            return;
        }
        b.unlock_handler();
        l.unlock_handler();
    }

    /// The C side of a passive id, registered.
    fn new_passive_id(
        &self,
        s: &CmService,
        l: &RdmaIdBox,
        child: RdmaId,
    ) -> Result<Arc<RdmaIdBox>> {
        let rec = self.read(|core| core.get(child).copied()).ok_or(EINVAL)?;
        let qp_type = super::types::ib_qp_type(rec.qp_type());
        let b = RdmaIdBox::new(child, &NewId::child_of(l, qp_type))?;
        b.set_state(rec.state());
        b.write_addrs(rec.src(), rec.dst());
        b.set_comm(rec.cm());
        if let Some(route) = rec.route() {
            passive_route(s, &b, route, rec.qp_type() != RdmaQpType::Ud)?;
        }
        if rec.iwarp() {
            iwarp_device(s, &b, rec.device())?;
        }
        self.register(b.clone())?;
        if let Some(cm_id) = self.take_iw_request(child) {
            // From now on the id owns the request's iw_cm id (destroyed
            // with it).
            b.set_iw(cm_id);
        }
        Ok(b)
    }
}

/// A passive id's device, port, GID entry and (with `with_path`: a REQ's;
/// a SIDR_REQ has none) path record, from the route the core took from
/// the request.
fn passive_route(s: &CmService, b: &RdmaIdBox, route: &Route<Peer>, with_path: bool) -> Result {
    let peer = route.peer.ok_or(EINVAL)?;
    let ibdev = device_ptr(s, peer.device).ok_or(ENODEV)?;
    // SAFETY: a served device is registered.
    let dev = unsafe { Device::from_raw(ibdev) };
    let port = peer.path.port;
    let gid = GidAttr::get(&dev, port, peer.path.sgid_index).ok_or(EINVAL)?;
    let rec = with_path.then(|| {
        record_of(
            &plain_path(&route.path),
            gid.path_record_type(dev.is_roce(port)),
        )
    });
    b.take_passive_route(gid, &dev, port, rec.as_ref())
}

/// A passive iWARP id's device and port: the GID entry of the network
/// device its address is on (6.12's `cma_iw_acquire_dev`).
fn iwarp_device(s: &CmService, b: &RdmaIdBox, device: Option<DeviceId>) -> Result {
    let device = device.ok_or(ENODEV)?;
    b.translate_source().map_err(Error::from_errno)?;
    let found = find_device(s, b, Some(device)).map_err(|_| ENODEV)?;
    found.attach(b);
    Ok(())
}

/// Calls the handler of `b`'s id with `event` (a UD id's as `param.ud`,
/// with the address of its route once it is ESTABLISHED); its return.
fn call_handler(b: &RdmaIdBox, event: &RdmaEvent, ud: bool) -> i32 {
    let c = &event.conn;
    let e = bindings::rcm_h_rdma_event {
        event: event.kind as u32,
        status: event_status(event.status),
        private_data: if c.private_data_len > 0 {
            c.private_data.as_ptr().cast()
        } else {
            core::ptr::null()
        },
        private_data_len: c.private_data_len,
        responder_resources: c.responder_resources,
        initiator_depth: c.initiator_depth,
        flow_control: u8::from(c.flow_control),
        retry_count: c.retry_count,
        rnr_retry_count: c.rnr_retry_count,
        srq: u8::from(c.srq),
        qp_num: c.qp_num,
        ece_vendor_id: c.ece_vendor_id,
        ece_attr_mod: c.ece_attr_mod,
        ud: u8::from(ud),
        ud_ah: u8::from(ud && event.kind == EventKind::Established),
        qkey: c.qkey,
    };
    // The caller holds a reference and the handler lock; `e`'s private
    // data lives for the call.
    b.deliver(&e)
}
