// SPDX-License-Identifier: GPL-2.0

//! Running the core for the rdma_cm surface: calls with the CM service
//! and this surface's QPs, the CM's events for rdma_cm's connections and
//! listeners, the end of an id, and what a bind needs to know.

use super::id::{NewId, RdmaIdBox};
use super::types::{errno, port_space, rdma_qp_type};
use super::{mirror_at_end, net_id, resolve, RdmaCmAbi};
use crate::bindings;
use crate::proto::cm::{CommId, DeviceId, Event};
use crate::proto::rdma_cm::bind::PRIVILEGED_PORTS;
use crate::proto::rdma_cm::{Arrival, BindContext, CmEventOutcome, IdState, RdmaCmError, SockAddr};
use crate::rdma::device::Device;
use crate::rdma::sync::{wait_until, wake_waiters};
use crate::rdma::timer::{now_ms, random_u32};
use crate::shell::rdma_cm::{KernelHost, KernelRdmaCm};
use crate::shell::CmService;
use core::sync::atomic::Ordering;
use kernel::ffi::c_int;
use kernel::prelude::*;
use kernel::sync::Arc;

/// The host the core runs with here.
pub(crate) type Host<'a> = KernelHost<'a, RdmaCmAbi>;
impl RdmaCmAbi {
    /// Runs `f` on the core, with this surface moving the QPs.
    pub(crate) fn call<R>(
        &self,
        s: &CmService,
        f: impl FnOnce(&mut KernelRdmaCm, &mut Host<'_>) -> R,
    ) -> R {
        self.service.call(s, self, f)
    }

    /// As [`Self::call`], then mirrors `b`'s id (see [`Self::sync`]) under
    /// the same hold of the core's lock. Only for a call that leaves no QP
    /// move or iw_cm call, whose results would change the id after.
    pub(crate) fn call_mirrored<R>(
        &self,
        s: &CmService,
        b: &RdmaIdBox,
        f: impl FnOnce(&mut KernelRdmaCm, &mut Host<'_>) -> R,
    ) -> R {
        self.call(s, |core, host| {
            let r = f(core, host);
            mirror_at_end(core, host, b);
            r
        })
    }

    /// As [`Self::call`], for a call whose result a QP move or iw_cm call
    /// it left decides: the call's failure, else theirs.
    pub(crate) fn call_settled(
        &self,
        s: &CmService,
        f: impl FnOnce(&mut KernelRdmaCm, &mut Host<'_>) -> Result<(), RdmaCmError>,
    ) -> Result<(), RdmaCmError> {
        self.service.call_settled(s, self, f)
    }

    /// As [`Self::call_settled`], then mirrors `b`'s id (see
    /// [`Self::sync`]): under the call's own hold of the core's lock if
    /// nothing it left changes the id after (on IB and RoCE a connect, a
    /// disconnect, an accept without a QP to move), else with one more
    /// hold once it is settled.
    pub(crate) fn call_settled_mirrored(
        &self,
        s: &CmService,
        b: &RdmaIdBox,
        f: impl FnOnce(&mut KernelRdmaCm, &mut Host<'_>) -> Result<(), RdmaCmError>,
    ) -> Result<(), RdmaCmError> {
        let mut mirrored = false;
        let r = self.call_settled(s, |core, host| {
            let r = f(core, host);
            if host.leaves_ids_settled() {
                mirror_at_end(core, host, b);
                mirrored = true;
            }
            r
        });
        if !mirrored {
            self.sync(b);
        }
        r
    }

    /// A CM event of an id rdma_cm owns (its connections', and REQs for
    /// its listeners), read in place (an event is a few hundred bytes) and
    /// handled under the core's mutex: true once handled, a REQ the core
    /// refused rejected after the mutex is released; false for one the
    /// core no longer knows, which goes to ib_cm, which drops it.
    pub(crate) fn cm_event(&self, s: &CmService, comm: CommId, event: &Event) -> bool {
        let at = arrival(s, comm, event);
        match self.call(s, |core, host| core.cm_event(host, at, comm, event)) {
            CmEventOutcome::NotOurs => false,
            CmEventOutcome::Refused => {
                // As ib_cm does when a REQ handler fails: the REQ is
                // rejected.
                let _ = s.destroy(comm, true);
                true
            }
            CmEventOutcome::Handled(_) => true,
        }
    }

    /// Creates an IDLE id for `n` and registers it (the registry holds a
    /// reference until the id is destroyed); an errno on failure.
    pub(crate) fn create_id(&self, s: &CmService, n: &NewId) -> Result<Arc<RdmaIdBox>, c_int> {
        let (Some(ps), Some(qp_type)) = (port_space(n.ps), rdma_qp_type(n.qp_type)) else {
            return Err(EINVAL.to_errno());
        };
        let psn = random_u32();
        let id = self
            .call(s, |core, _| core.create_id(net_id(n.net), ps, qp_type, psn))
            .map_err(errno)?;
        let undo = |e: Error| {
            self.call(s, |core, host| {
                let _ = core.destroy(host, id);
            });
            e.to_errno()
        };
        let b = RdmaIdBox::new(id, n).map_err(undo)?;
        self.register(b.clone()).map_err(undo)?;
        Ok(b)
    }

    /// `rdma_destroy_id`: waits for the id's running handler; none runs
    /// after.
    pub(crate) fn destroy_id(&self, s: &CmService, b: &RdmaIdBox) {
        b.lock_handler_to_destroy();
        b.set_destroying();
        b.unlock_handler();
        self.destroy(s, b);
    }

    /// Ends an id (`rdma_destroy_id`, or a handler's non-zero return):
    /// the core tears it down, a pending resolution is cancelled, the
    /// registry's reference goes.
    pub(super) fn destroy(&self, s: &CmService, b: &RdmaIdBox) {
        b.set_destroying();
        // Counted from before the core lets go of the id until its device
        // is let go of below: a removal that no longer finds the id in the
        // core waits for that too.
        self.detaching.fetch_add(1, Ordering::AcqRel);
        let state = self.call(s, |core, host| core.destroy(host, b.core));
        match state {
            Ok(IdState::AddrQuery) => {
                // Waits for a callback already running (it finds no id).
                b.cancel_resolve_ip();
            }
            Ok(IdState::RouteQuery) => {
                // An SA query's callback may still run: it finds no id.
                b.cancel_path_query();
            }
            _ => {}
        }
        // The core no longer reports on the id: its iw_cm ids can go.
        self.release_iw(b);
        self.drop_listen_rows_of(b);
        // Its hold on the device goes now, not at the last reference,
        // which a delivery or a call may keep after the removal is over.
        b.detach_device();
        drop(self.unregister(b.core));
        self.detaching.fetch_sub(1, Ordering::AcqRel);
        // A device removal may be waiting for this id.
        self.destroyed.fetch_add(1, Ordering::AcqRel);
        wake_waiters();
    }

    /// A device is going (ib_client removal, before the CM service lets
    /// it go). First no new id finds it (6.12 takes a device off its list
    /// before telling anyone): binds, resolutions, wildcard listeners and
    /// requests arriving on it are refused from here on. Then every id on
    /// it hears DEVICE_REMOVAL, and this waits until their consumers have
    /// destroyed them all, as 6.12 does (ib_core then finds no id,
    /// tracking entry or GID reference left on the device).
    pub(crate) fn remove_device(&self, s: &CmService, device: &Device<'_>) {
        let Some(dev) = s.begin_removal(device.identity()) else {
            return;
        };
        self.remove_iw_listeners(dev);
        self.drop_listen_rows_on(dev);
        let told = self.call(s, |core, host| core.device_going(host, dev));
        let start = now_ms();
        loop {
            let seen = self.destroyed.load(Ordering::Acquire);
            // An id the core no longer has may still hold the device until
            // its destroy lets go of it.
            if !self.read(|core| core.has_ids_on(dev))
                && self.detaching.load(Ordering::Acquire) == 0
            {
                break;
            }
            // Sleeps until an id is destroyed (a lock-free check).
            wait_until(&|| self.destroyed.load(Ordering::Acquire) != seen);
        }
        self.call(s, |core, _| core.device_removed(dev));
        if told > 0 {
            pr_info!(
                "{}: going: {} rdma_cm id(s) released in {} ms\n",
                device.name(),
                told,
                now_ms().saturating_sub(start)
            );
        }
    }

    /// What a bind needs to know: the device that owns `addr` (found
    /// through the id's device address, and handed back to be attached
    /// once the core takes the bind), the namespace's port range and IPv6
    /// setting, randomness, the caller's capability.
    pub(super) fn bind_context(
        &self,
        s: &CmService,
        b: &RdmaIdBox,
        addr: &SockAddr,
    ) -> (BindContext, Option<resolve::Found>) {
        let (device, found) = if addr.is_any() {
            (Err(RdmaCmError::NoDevice), None)
        } else {
            match resolve::own_device(s, b, addr) {
                Ok(found) => (Ok(found.device), Some(found)),
                Err(e) => (Err(e), None),
            }
        };
        let cx = BindContext {
            device,
            local_ports: b.local_port_range(),
            random: random_u32(),
            // Asked only for a privileged port, as 6.12 does (a capability
            // check is audited).
            privileged: !addr.is_any_port()
                && addr.port() < PRIVILEGED_PORTS
                && b.may_bind_privileged(),
            bindv6only: b.bindv6only(),
        };
        (cx, found)
    }
}

/// Where a request (REQ or SIDR_REQ, the events that make a new id)
/// arrived: the device, the namespace of the network device its GID
/// belongs to, a random starting PSN. Other events have no use for it:
/// they get no device, without the lookups.
fn arrival(s: &CmService, comm: CommId, event: &Event) -> Arrival {
    let nowhere = |psn| Arrival {
        net: net_id(core::ptr::null_mut()),
        device: DeviceId(u32::MAX),
        psn,
    };
    if !matches!(
        event,
        Event::ReqReceived { .. } | Event::SidrReqReceived { .. }
    ) {
        return nowhere(0);
    }
    let peer = s.read(|ep| ep.get(comm).and_then(|c| c.peer().copied()));
    let psn = random_u32();
    let Some(peer) = peer else {
        return nowhere(psn);
    };
    let net = device_ptr(s, peer.device).map_or(core::ptr::null_mut(), |ibdev| {
        // SAFETY: a served device is registered.
        let device = unsafe { Device::from_raw(ibdev) };
        device.gid_net(peer.path.port, peer.path.sgid_index)
    });
    Arrival {
        net: net_id(net),
        device: peer.device,
        psn,
    }
}

/// The `ib_device` of a served device (going or not).
pub(crate) fn device_ptr(s: &CmService, id: DeviceId) -> Option<*mut bindings::ib_device> {
    s.device_identity(id)
        .map(|identity| identity as *mut bindings::ib_device)
}
