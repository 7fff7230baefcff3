// SPDX-License-Identifier: GPL-2.0

//! iWARP ids through the in-tree iw_cm (`rdma::iw_cm`): the calls
//! the core leaves for them ([`IwarpCm`], made once its lock is
//! released), iw_cm's callbacks fed back to the
//! core, and the iw_cm ids an id holds besides its connection's (its
//! listeners, and a request's until the request is delivered).
//!
//! iw_cm's callbacks run on its workqueue and take the core's lock;
//! `iw_destroy_cm_id` may flush that workqueue, so iw_cm ids are destroyed
//! only with no lock of rdma_cm's held (see `release_iw`).

use super::id::RdmaIdBox;
use super::types::ECONNREFUSED;
use super::{take_column, RdmaCmAbi};
use crate::abi::service::{with_part, with_service};
use crate::bindings;
use crate::proto::cm::store::{InsertError, OrderedMap};
use crate::proto::cm::DeviceId;
use crate::proto::rdma_cm::{IwCall, IwEvent, IwEventKind, IwOptions, IwParams, IwRequest, RdmaId};
use crate::rdma::device::Device;
use crate::rdma::iw_cm::{IwCmEvent, IwCmHandler, IwCmId, IwCmRequest, IwConnParams};
use crate::rdma::timer::random_u32;
use crate::shell::rdma_cm::IwarpCm;
use crate::shell::CmService;
use kernel::ffi::c_int;
use kernel::prelude::*;

/// The key of a request's iw_cm id among an id's iw_cm ids (a listener's
/// is its device's number).
const REQUEST_SLOT: u32 = u32::MAX;

impl RdmaCmAbi {
    /// Keeps `cm_id` for `id` under `slot`; handed back without memory.
    fn keep_iw(&self, id: RdmaId, slot: u32, cm_id: IwCmId) -> Result<(), IwCmId> {
        self.iw_ids
            .lock()
            .try_insert((id.0, slot), cm_id)
            .map_err(InsertError::into_value)
    }

    /// Keeps listener `cm_id` of `id` on `dev`, unless `dev` is going (its
    /// removal takes its listeners under this lock once it has begun, so
    /// one kept later would outlive the device: such a device is simply
    /// not listened on) or there is no memory.
    fn keep_iw_listener(&self, id: RdmaId, dev: DeviceId, cm_id: IwCmId) -> Result<(), c_int> {
        let mut ids = self.iw_ids.lock();
        let refused = if with_service(|s| s.is_going(dev)).unwrap_or(true) {
            cm_id
        } else {
            match ids.try_insert((id.0, dev.0), cm_id) {
                Ok(()) => return Ok(()),
                Err(e) => {
                    drop(ids);
                    drop(e.into_value());
                    return Err(ENOMEM.to_errno());
                }
            }
        };
        // Destroyed with the lock released.
        drop(ids);
        drop(refused);
        Ok(())
    }

    /// The iw_cm id of a request `id` came from, until it is delivered.
    pub(super) fn take_iw_request(&self, id: RdmaId) -> Option<IwCmId> {
        self.iw_ids.lock().remove(&(id.0, REQUEST_SLOT))
    }

    /// Destroys every iw_cm id `b`'s id holds: its connection's, its
    /// listeners', an undelivered request's. Never with a lock held that
    /// iw_cm's callbacks take.
    pub(super) fn release_iw(&self, b: &RdmaIdBox) {
        drop(b.take_iw());
        // Listeners and requests are kept only for ids on an iWARP port or
        // on none (a wildcard listener): one on an IB or RoCE port has no
        // entry to look for, and its device stays until its destroy ends.
        if b.device().is_some_and(|(d, port)| !d.is_iwarp(port)) {
            return;
        }
        if let Some(cm_id) = self.take_iw_request(b.core) {
            cm_id.refuse();
        }
        self.release_iw_listeners(b);
    }

    /// Destroys `b`'s iWARP listeners, as [`Self::release_iw`].
    pub(super) fn release_iw_listeners(&self, b: &RdmaIdBox) {
        loop {
            let next = {
                let mut ids = self.iw_ids.lock();
                // The id's entries are adjacent: found by key, without
                // looking at other ids'.
                let key = ids
                    .first_key_from(&(b.core.0, 0))
                    .filter(|k| k.0 == b.core.0);
                key.and_then(|k| ids.remove(&k))
            };
            // Destroyed here, with the lock released.
            if next.is_none() {
                return;
            }
        }
    }

    /// A new device lists the wildcard listeners and, if iWARP, listens
    /// for them (as 6.12's `cma_add_one` makes them listen on it).
    pub(crate) fn add_device(&self, s: &CmService, device: &Device<'_>) {
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
                // Destroyed once the lock is released.
                let _taken = self.iw_ids.lock().remove(&(id.0, dev.0));
            }
        }
    }

    /// A departing device's iWARP listeners (of wildcard listeners, which
    /// stay) go before the device does.
    pub(super) fn remove_iw_listeners(&self, dev: DeviceId) {
        let mut taken = KVec::new();
        take_column(&mut self.iw_ids.lock(), dev.0, &mut taken);
        // Destroyed here, with the lock released.
        drop(taken);
    }

    /// A connection request on a listener of `listener` (iw_cm's work):
    /// a new id through the core, which adopts the request's iw_cm id; an
    /// error refuses it (iw_cm then destroys that id).
    fn iw_request(
        &self,
        s: &CmService,
        listener: RdmaId,
        request: IwCmRequest<'_>,
        e: &IwCmEvent<'_>,
    ) -> Result<(), c_int> {
        let (Ok(local), Ok(remote)) = (e.local, e.remote) else {
            return Err(EINVAL.to_errno());
        };
        let device = s
            .device_id(request.device_identity())
            .ok_or(ENODEV.to_errno())?;
        let req = IwRequest {
            device,
            local,
            remote,
            private_data: e.private_data,
            ird: e.ird,
            ord: e.ord,
        };
        let psn = random_u32();
        let taken = self.call(s, |core, host| {
            let child = core.iw_request(host, listener, &req, psn).ok()?;
            // Before the request can be delivered (after this call): the
            // new id's events find it by its number.
            let cm_id = request.adopt::<IwCallbacks>(child.0);
            if let Err(cm_id) = self.keep_iw(child, REQUEST_SLOT, cm_id) {
                // The request's event is queued but its id is gone: not
                // delivered. iw_cm destroys the request's id.
                let _ = cm_id.into_raw();
                let _ = core.destroy(host, child);
                return None;
            }
            Some(child)
        });
        taken.map(|_| ()).ok_or(ECONNREFUSED)
    }

    /// An event of `id`'s connection (iw_cm's work), for the core.
    fn iw_event(&self, s: &CmService, id: RdmaId, e: &IwCmEvent<'_>) {
        let Some(kind) = e.kind else {
            return;
        };
        let addrs = match (e.local, e.remote) {
            (Ok(local), Ok(remote)) if kind == IwEventKind::ConnectReply => Some((local, remote)),
            _ => None,
        };
        let ev = IwEvent {
            kind,
            status: e.status,
            private_data: e.private_data,
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

/// The consumer's parameters as iw_cm takes them.
fn iw_params(p: &IwParams, tos: Option<u8>) -> IwConnParams {
    IwConnParams::new(p.private_data.as_slice(), p.ord, p.ird, p.qp_num, tos)
}

/// An iw_cm call's return as the core takes it.
fn result(ret: c_int) -> Result<(), i32> {
    match ret {
        0 => Ok(()),
        e => Err(e),
    }
}

impl RdmaCmAbi {
    /// Listens for `id` on `device`'s iw_cm, or every iWARP device's.
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
        for (dev, identity) in devices.iter() {
            // A device that came meanwhile may already listen for it.
            if device.is_some_and(|d| d != *dev) || self.iw_ids.lock().get(&(id.0, dev.0)).is_some()
            {
                continue;
            }
            let ibdev = *identity as *mut bindings::ib_device;
            // SAFETY: a served device stays registered during the call;
            // the id's source address is written (it is bound).
            let cm_id = unsafe {
                IwCmId::listen::<IwCallbacks>(&b, ibdev, id.0, backlog, options.tos, options.afonly)
            }
            .map_err(|e| e.to_errno())?;
            // A going device is simply not listened on.
            self.keep_iw_listener(id, *dev, cm_id)?;
        }
        Ok(())
    }
}

impl IwarpCm for RdmaCmAbi {
    fn iw_call(&self, call: &IwCall) -> Result<(), i32> {
        // In the id's own call, once the core's lock is released.
        let id_box = || self.id_box(call.id()).ok_or(EINVAL.to_errno());
        match *call {
            IwCall::Listen {
                id,
                device,
                backlog,
                options,
            } => self.iw_listen(id, device, backlog, options),
            IwCall::Connect {
                id,
                params,
                options,
            } => {
                result(id_box()?.iw_connect::<IwCallbacks>(id.0, &iw_params(&params, options.tos)))
            }
            IwCall::Accept { params, .. } => result(id_box()?.iw_accept(&iw_params(&params, None))),
            IwCall::Reject { private_data, .. } => {
                result(id_box()?.iw_reject(private_data.as_slice()))
            }
            IwCall::Disconnect { .. } => result(id_box()?.iw_disconnect()),
        }
    }
}

/// iw_cm's callbacks as rdma_cm handles them (named when an iw_cm id is
/// made).
struct IwCallbacks;

impl IwCmHandler for IwCallbacks {
    fn event(token: u64, e: &IwCmEvent<'_>) {
        with_part(|s, cm: &RdmaCmAbi| cm.iw_event(s, RdmaId(token), e));
    }

    fn request(token: u64, request: IwCmRequest<'_>, e: &IwCmEvent<'_>) -> Result<(), c_int> {
        with_part(|s, cm: &RdmaCmAbi| cm.iw_request(s, RdmaId(token), request, e))
            .unwrap_or(Err(ENODEV.to_errno()))
    }
}
