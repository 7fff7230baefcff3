// SPDX-License-Identifier: GPL-2.0

//! iWARP ids through the in-tree iw_cm (`rcm_iw_helpers.c`): the calls
//! the core makes for them ([`IwarpCm`]), iw_cm's callbacks fed back to the
//! core, and the iw_cm ids an id holds besides its connection's (its
//! listeners, and a request's until the request is delivered).
//!
//! iw_cm's callbacks run on its workqueue and take the core's lock;
//! `iw_destroy_cm_id` may flush that workqueue, so iw_cm ids are destroyed
//! only with no lock of rdma_cm's held (see `release_iw`).

use super::id::RdmaIdBox;
use super::types::{read_sockaddr, ECONNREFUSED};
use super::{take_column, RdmaCmAbi};
use crate::abi::service::{with_service, Service};
use crate::bindings;
use crate::proto::cm::store::OrderedMap;
use crate::proto::cm::DeviceId;
use crate::proto::rdma_cm::{ConnParams, IwEvent, IwEventKind, IwOptions, IwRequest, RdmaId};
use crate::rdma::device::Device;
use crate::rdma::timer::random_u32;
use crate::shell::rdma_cm::IwarpCm;
use kernel::ffi::c_int;
use kernel::prelude::*;

/// The key of a request's iw_cm id among an id's iw_cm ids (a listener's
/// is its device's number).
const REQUEST_SLOT: u32 = u32::MAX;

/// A connect the core asked for, started once the core's lock is
/// released (siw's connect waits for TCP's handshake).
#[derive(Clone, Copy)]
pub(crate) struct IwConnect {
    data: [u8; 255],
    param: bindings::rcm_h_iw_param,
}

// SAFETY: `param`'s private data pointer is replaced by `data`'s when the
// connect starts; it is never read through.
unsafe impl Send for IwConnect {}

/// An iw_cm id rcm created or was handed, and destroys.
#[derive(Clone, Copy)]
pub(crate) struct IwId(*mut bindings::iw_cm_id);

// SAFETY: iw_cm ids are used and destroyed from any process context; the
// map that holds one is its only owner.
unsafe impl Send for IwId {}

/// Whether an iWARP listener was kept.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kept {
    Yes,
    /// Its device is going: it must not outlive the removal.
    DeviceGoing,
}

impl RdmaCmAbi {
    /// Keeps `cm_id` for `id` under `slot`; `false` if out of memory.
    fn keep_iw(&self, id: RdmaId, slot: u32, cm_id: *mut bindings::iw_cm_id) -> bool {
        self.iw_ids
            .lock()
            .try_insert((id.0, slot), IwId(cm_id))
            .is_ok()
    }

    /// Keeps listener `cm_id` of `id` on `dev`, unless `dev` is going (its
    /// removal takes its listeners under this lock once it has begun, so
    /// one kept later would outlive the device) or there is no memory.
    fn keep_iw_listener(
        &self,
        id: RdmaId,
        dev: DeviceId,
        cm_id: *mut bindings::iw_cm_id,
    ) -> Result<Kept, c_int> {
        let mut ids = self.iw_ids.lock();
        if with_service(|s| s.is_going(dev)).unwrap_or(true) {
            return Ok(Kept::DeviceGoing);
        }
        match ids.try_insert((id.0, dev.0), IwId(cm_id)) {
            Ok(()) => Ok(Kept::Yes),
            Err(_) => Err(ENOMEM.to_errno()),
        }
    }

    /// The iw_cm id of a request `id` came from, until it is delivered.
    pub(super) fn take_iw_request(&self, id: RdmaId) -> Option<*mut bindings::iw_cm_id> {
        self.iw_ids
            .lock()
            .remove(&(id.0, REQUEST_SLOT))
            .map(|i| i.0)
    }

    /// Destroys every iw_cm id `b`'s id holds: its connection's, its
    /// listeners', an undelivered request's. Never with a lock held that
    /// iw_cm's callbacks take.
    pub(super) fn release_iw(&self, b: &RdmaIdBox) {
        // SAFETY: the id's own field; its connection's iw_cm id is ours.
        let conn = unsafe { bindings::rcm_h_iw_take(b.private()) };
        // SAFETY: taken out of the id: nobody else destroys it.
        unsafe { bindings::rcm_h_iw_destroy(conn) };
        if let Some(cm_id) = self.take_iw_request(b.core) {
            // SAFETY: taken out of the map: ours alone.
            unsafe { bindings::rcm_h_iw_refuse(cm_id) };
        }
        self.release_iw_listeners(b);
    }

    /// Destroys `b`'s iWARP listeners, as [`Self::release_iw`].
    pub(super) fn release_iw_listeners(&self, b: &RdmaIdBox) {
        loop {
            let next = {
                let mut ids = self.iw_ids.lock();
                let key = ids.keys().find(|k| k.0 == b.core.0);
                key.and_then(|k| ids.remove(&k))
            };
            let Some(listener) = next else {
                return;
            };
            // SAFETY: as above.
            unsafe { bindings::rcm_h_iw_destroy(listener.0) };
        }
    }

    /// Starts the connect the core asked for on `b`'s id during the call
    /// just made, if it did; a failure reverts the id (ROUTE_RESOLVED).
    pub(super) fn start_iw_connect(&self, s: &Service, b: &RdmaIdBox) -> c_int {
        let Some(mut c) = self.iw_connects.lock().remove(&b.core.0) else {
            return 0;
        };
        c.param.private_data = c.data.as_ptr().cast();
        // SAFETY: the id's fields are ours during its own call (the
        // consumer holds its handler lock); `c` lives for the call.
        let ret = unsafe { bindings::rcm_h_iw_connect(b.private(), b.core.0, &c.param) };
        if ret != 0 {
            self.call(s, |core, _| core.iw_connect_failed(b.core));
        }
        ret
    }

    /// A new device lists the wildcard listeners and, if iWARP, listens
    /// for them (as 6.12's `cma_add_one` makes them listen on it).
    pub(crate) fn add_device(&self, s: &Service, device: &Device<'_>) {
        let Some(dev) = s.device_id(device.identity()) else {
            return;
        };
        // Reserves the core's record of the device (its removal then
        // needs no memory); without it the removal makes it then.
        let _ = self.call(s, |core, _| core.device_added(dev));
        self.add_listen_rows_on(s, dev);
        if !s.device_info(dev).is_some_and(|i| i.iwarp) {
            return;
        }
        let listeners = self.read(|core| {
            let mut v = KVec::new();
            for l in core.wildcard_listeners() {
                if v.push(l, GFP_KERNEL).is_err() {
                    break;
                }
            }
            v
        });
        for (id, backlog, options) in listeners.iter() {
            if let Err(e) = self.iw_listen(*id, Some(dev), *backlog, *options) {
                pr_warn!(
                    "{}: no iWARP listener for a wildcard id ({})\n",
                    device.name(),
                    e
                );
            }
            // Destroyed meanwhile: its release may have run before the
            // listener was kept; whoever takes it destroys it.
            if self.read(|core| core.get(*id).is_none()) {
                let taken = self.iw_ids.lock().remove(&(id.0, dev.0));
                if let Some(listener) = taken {
                    // SAFETY: taken out of the map: ours alone.
                    unsafe { bindings::rcm_h_iw_destroy(listener.0) };
                }
            }
        }
    }

    /// A departing device's iWARP listeners (of wildcard listeners, which
    /// stay) go before the device does.
    pub(super) fn remove_iw_listeners(&self, dev: DeviceId) {
        let mut taken = KVec::new();
        take_column(&mut self.iw_ids.lock(), dev.0, &mut taken);
        for listener in taken {
            // SAFETY: taken out of the map: ours alone.
            unsafe { bindings::rcm_h_iw_destroy(listener.0) };
        }
    }

    /// A connection request on a listener of `listener` (iw_cm's work):
    /// a new id through the core, which takes `cm_id`; non-zero refuses it
    /// (iw_cm then destroys `cm_id`).
    fn iw_request(
        &self,
        s: &Service,
        listener: RdmaId,
        cm_id: *mut bindings::iw_cm_id,
        e: &bindings::rcm_h_iw_event,
    ) -> c_int {
        // SAFETY: iw_cm passes the event's addresses for the call.
        let addrs = unsafe { (read_sockaddr(e.local), read_sockaddr(e.remote)) };
        let (Ok(local), Ok(remote)) = addrs else {
            return EINVAL.to_errno();
        };
        // SAFETY: iw_cm passes a live id of a registered device.
        let ibdev = unsafe { (*cm_id).device };
        let Some(device) = s.device_id(ibdev as usize) else {
            return ENODEV.to_errno();
        };
        // SAFETY: iw_cm passes the event's private data for the call.
        let data = unsafe { event_data(e) };
        let req = IwRequest {
            device,
            local,
            remote,
            private_data: data,
            ird: e.ird,
            ord: e.ord,
        };
        let psn = random_u32();
        let taken = self.call(s, |core, host| {
            let child = core.iw_request(host, listener, &req, psn).ok()?;
            // Before the request can be delivered (after this call): the
            // new id's events find it by its number.
            // SAFETY: a live request id, not yet shared.
            unsafe { bindings::rcm_h_iw_adopt(cm_id, child.0) };
            if !self.keep_iw(child, REQUEST_SLOT, cm_id) {
                // The request's event is queued but its id is gone: not
                // delivered. iw_cm destroys `cm_id`.
                let _ = core.destroy(host, child);
                return None;
            }
            Some(child)
        });
        match taken {
            Some(_) => 0,
            None => ECONNREFUSED,
        }
    }

    /// An event of `id`'s connection (iw_cm's work), for the core.
    fn iw_event(&self, s: &Service, id: RdmaId, e: &bindings::rcm_h_iw_event) {
        let kind = match e.event {
            bindings::iw_cm_event_type_IW_CM_EVENT_CONNECT_REPLY => IwEventKind::ConnectReply,
            bindings::iw_cm_event_type_IW_CM_EVENT_ESTABLISHED => IwEventKind::Established,
            bindings::iw_cm_event_type_IW_CM_EVENT_DISCONNECT => IwEventKind::Disconnect,
            bindings::iw_cm_event_type_IW_CM_EVENT_CLOSE => IwEventKind::Close,
            _ => return,
        };
        // SAFETY: iw_cm passes the event's addresses for the call.
        let addrs = match unsafe { (read_sockaddr(e.local), read_sockaddr(e.remote)) } {
            (Ok(local), Ok(remote)) if kind == IwEventKind::ConnectReply => Some((local, remote)),
            _ => None,
        };
        let ev = IwEvent {
            kind,
            status: e.status,
            // SAFETY: as for the addresses.
            private_data: unsafe { event_data(e) },
            ird: e.ird,
            ord: e.ord,
            addrs,
        };
        self.call(s, |core, host| core.iw_event(host, id, &ev));
        if let Some(b) = self.id_box(id) {
            self.sync(&b);
        }
    }
}

/// An iw_cm event's private data.
///
/// # Safety
///
/// The event's private data must be valid for its length.
unsafe fn event_data(e: &bindings::rcm_h_iw_event) -> &[u8] {
    if e.private_data.is_null() || e.private_data_len == 0 {
        return &[];
    }
    // SAFETY: per this function's contract.
    unsafe {
        core::slice::from_raw_parts(e.private_data.cast::<u8>(), usize::from(e.private_data_len))
    }
}

/// The consumer's parameters as the C helper takes them.
fn iw_param(p: &ConnParams<'_>, tos: Option<u8>) -> bindings::rcm_h_iw_param {
    bindings::rcm_h_iw_param {
        private_data: p.private_data.as_ptr().cast(),
        // The ABI's private data length is a u8 already.
        private_data_len: p.private_data.len().min(255) as u8,
        ord: p.initiator_depth,
        ird: p.responder_resources,
        qpn: p.qp_num,
        tos: tos.map_or(-1, c_int::from),
    }
}

/// A C helper's return as the core takes it.
fn result(ret: c_int) -> Result<(), i32> {
    match ret {
        0 => Ok(()),
        e => Err(e),
    }
}

impl IwarpCm for RdmaCmAbi {
    fn iw_listen(
        &self,
        id: RdmaId,
        device: Option<DeviceId>,
        backlog: u32,
        options: IwOptions,
    ) -> Result<(), i32> {
        let b = self.id_box(id).ok_or(EINVAL.to_errno())?;
        let devices = with_service(|s| s.iwarp_devices())
            .ok_or(ENODEV.to_errno())?
            .map_err(|e| e.to_errno())?;
        let backlog = c_int::try_from(backlog).unwrap_or(c_int::MAX);
        let tos = options.tos.map_or(-1, c_int::from);
        for (dev, identity) in devices.iter() {
            if device.is_some_and(|d| d != *dev) {
                continue;
            }
            let ibdev = *identity as *mut bindings::ib_device;
            // SAFETY: a served device stays registered during the call;
            // the id's source address is written (it is bound).
            let cm_id = unsafe {
                bindings::rcm_h_iw_listen(b.private(), ibdev, id.0, backlog, tos, options.afonly)
            };
            kernel::error::from_err_ptr(cm_id).map_err(|e| e.to_errno())?;
            let kept = self.keep_iw_listener(id, *dev, cm_id);
            if kept != Ok(Kept::Yes) {
                // SAFETY: just created and not shared; a listener nobody
                // has connected to yet has no work queued.
                unsafe { bindings::rcm_h_iw_destroy(cm_id) };
                // A going device is simply not listened on.
                kept?;
            }
        }
        Ok(())
    }

    fn iw_connect(&self, id: RdmaId, p: &ConnParams<'_>, options: IwOptions) -> Result<(), i32> {
        // Started by `start_iw_connect` once the core's lock is released.
        let mut c = IwConnect {
            data: [0; 255],
            param: iw_param(p, options.tos),
        };
        let n = usize::from(c.param.private_data_len);
        c.data[..n].copy_from_slice(&p.private_data[..n]);
        let mut connects = self.iw_connects.lock();
        let _ = connects.remove(&id.0);
        connects.try_insert(id.0, c).map_err(|_| ENOMEM.to_errno())
    }

    fn iw_accept(&self, id: RdmaId, p: &ConnParams<'_>) -> Result<(), i32> {
        let b = self.id_box(id).ok_or(EINVAL.to_errno())?;
        let param = iw_param(p, None);
        // SAFETY: as in `iw_connect`.
        result(unsafe { bindings::rcm_h_iw_accept(b.private(), &param) })
    }

    fn iw_reject(&self, id: RdmaId, private_data: &[u8]) -> Result<(), i32> {
        let b = self.id_box(id).ok_or(EINVAL.to_errno())?;
        let len = private_data.len().min(255) as u8;
        // SAFETY: as in `iw_connect`.
        result(unsafe { bindings::rcm_h_iw_reject(b.private(), private_data.as_ptr().cast(), len) })
    }

    fn iw_disconnect(&self, id: RdmaId) -> Result<(), i32> {
        let b = self.id_box(id).ok_or(EINVAL.to_errno())?;
        // SAFETY: as in `iw_connect`.
        result(unsafe { bindings::rcm_h_iw_disconnect(b.private()) })
    }
}

/// iw_cm reports on the connection of id `token` (its workqueue).
///
/// # Safety
///
/// Called by `rcm_iw_helpers.c` with a valid event.
#[no_mangle]
pub(crate) unsafe extern "C" fn rcm_rdma_iw_event(
    token: u64,
    e: *const bindings::rcm_h_iw_event,
) -> c_int {
    // SAFETY: per this function's contract.
    let e = unsafe { &*e };
    let id = RdmaId(token);
    with_service(|s| s.consumer().rdma_cm.iw_event(&s, id, e));
    // iw_cm never destroys an id of rcm's: rcm does, on its own paths.
    0
}

/// iw_cm has a connection request on a listener of id `token` (its
/// workqueue), on the new iw_cm id `cm_id`.
///
/// # Safety
///
/// Called by `rcm_iw_helpers.c` with a valid iw_cm id and event.
#[no_mangle]
pub(crate) unsafe extern "C" fn rcm_rdma_iw_request(
    token: u64,
    cm_id: *mut bindings::iw_cm_id,
    e: *const bindings::rcm_h_iw_event,
) -> c_int {
    // SAFETY: per this function's contract.
    let e = unsafe { &*e };
    let listener = RdmaId(token);
    with_service(|s| s.consumer().rdma_cm.iw_request(&s, listener, cm_id, e))
        .unwrap_or(ENODEV.to_errno())
}
