// SPDX-License-Identifier: GPL-2.0

//! The `struct rdma_cm_id` rcm hands to rdma_cm consumers: inside 6.12's
//! `struct rdma_id_private` (ib_core's resource tracking reads the id's
//! state, addresses and QP number through that layout), in an `Arc` with
//! the core's id.

use super::types::{kernel_state, read_sockaddr, write_sockaddr};
use crate::bindings;
use crate::proto::cm::CommId;
use crate::proto::rdma_cm::{IdState, RdmaId, SockAddr};
use crate::rdma::device::Device;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::ffi::{c_char, c_void};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::Opaque;

/// A consumer's id. `private` comes first, and `id` is its first field:
/// consumers hold `&private.id` and the API gets the box back by casting.
///
/// INVARIANT: rcm writes the fields consumers read (addresses, device,
/// port, route, QP, state) only while the core's lock or the id's handler
/// lock keeps the id's own calls apart, and forms no Rust reference to
/// `private`: consumers read it, and write `context` and `event_handler`,
/// without a lock, as with the C rdma_cm.
#[pin_data(PinnedDrop)]
#[repr(C)]
pub(crate) struct RdmaIdBox {
    #[pin]
    private: Opaque<bindings::rdma_id_private>,
    /// The core's id.
    pub(crate) core: RdmaId,
    /// The CM id of the connection ([`NO_COMM`]: none), for calls from
    /// any context (`rdma_notify` from a QP event handler).
    comm: AtomicU64,
}

/// No CM id.
const NO_COMM: u64 = u64::MAX;

// SAFETY: the C fields are shared with consumers and ib_core under the
// rules of the type invariant, which hold from any thread.
unsafe impl Send for RdmaIdBox {}
// SAFETY: as above; `&RdmaIdBox` only hands out raw pointers.
unsafe impl Sync for RdmaIdBox {}

/// What an id is created with.
pub(crate) struct NewId {
    pub(crate) net: *mut bindings::net,
    pub(crate) handler: bindings::rdma_cm_event_handler,
    pub(crate) context: *mut c_void,
    pub(crate) ps: bindings::rdma_ucm_port_space,
    pub(crate) qp_type: bindings::ib_qp_type,
    /// A kernel consumer's module name; NULL for a user id.
    pub(crate) caller: *const c_char,
    /// A request's listener, whose owner the id takes in resource
    /// tracking (NULL: `caller`, or the current task).
    pub(crate) parent: *const bindings::rdma_id_private,
}

impl RdmaIdBox {
    /// A new IDLE id for the core's `core`.
    pub(crate) fn new(core: RdmaId, n: &NewId) -> Result<Arc<Self>> {
        let (net, handler, context, ps, qp_type, caller, parent) = (
            n.net, n.handler, n.context, n.ps, n.qp_type, n.caller, n.parent,
        );
        Arc::pin_init(
            try_pin_init!(RdmaIdBox {
                private <- Opaque::ffi_init(move |p: *mut bindings::rdma_id_private| {
                    // SAFETY: `p` is this field's memory, which we zero and
                    // set up before anyone sees it; `net` is a live
                    // namespace the caller holds, which the id references;
                    // a parent is a listener whose handler lock the caller
                    // holds (its tracking entry is live).
                    unsafe {
                        core::ptr::write_bytes(p, 0, 1);
                        bindings::rcm_h_rdma_id_init(
                            p, net, handler, context, ps, qp_type, caller, parent,
                        );
                    }
                }),
                core,
                comm: AtomicU64::new(NO_COMM),
            }? Error),
            // A user's ids count against its memory cgroup.
            GFP_KERNEL_ACCOUNT,
        )
    }

    /// The consumer's pointer.
    pub(crate) fn as_id(&self) -> *mut bindings::rdma_cm_id {
        self.private.get().cast()
    }

    /// The private part ib_core's resource tracking and the helpers use.
    pub(crate) fn private(&self) -> *mut bindings::rdma_id_private {
        self.private.get()
    }

    /// The box of a consumer's id pointer.
    ///
    /// # Safety
    ///
    /// `id` must be a pointer rcm handed out (from a create call or an
    /// event) whose id is not destroyed.
    pub(crate) unsafe fn from_id<'a>(id: *mut bindings::rdma_cm_id) -> &'a RdmaIdBox {
        // SAFETY: `id` is the first field of `private`, the first field of a
        // live `RdmaIdBox` (both repr(C)), per the function's contract.
        unsafe { &*id.cast::<RdmaIdBox>() }
    }

    /// The consumer's context pointer (`id->context`).
    pub(crate) fn context(&self) -> *mut c_void {
        // SAFETY: `private` lives with `self`; consumers write the field
        // without a lock (type invariant), so it is read whole, once.
        unsafe { core::ptr::addr_of!((*self.private()).id.context).read_volatile() }
    }

    /// Sets the consumer's context pointer (a consumer inside rcm, from
    /// the id's handler).
    pub(crate) fn set_context(&self, context: *mut c_void) {
        // SAFETY: as in `context`.
        unsafe { core::ptr::addr_of_mut!((*self.private()).id.context).write_volatile(context) }
    }

    /// The id's QP type (`id->qp_type`), fixed at creation.
    pub(crate) fn qp_type(&self) -> bindings::ib_qp_type {
        // SAFETY: `private` lives with `self`; written before the id is
        // handed out.
        unsafe { core::ptr::addr_of!((*self.private()).id.qp_type).read() }
    }

    /// Mirrors the core's state for ib_core's resource tracking.
    pub(crate) fn set_state(&self, state: IdState) {
        // SAFETY: `private` lives with `self`; an aligned word store that
        // racy readers (nldev) see whole.
        unsafe {
            core::ptr::addr_of_mut!((*self.private()).state).write_volatile(kernel_state(state));
        }
    }

    /// Records the connection's CM id.
    pub(crate) fn set_comm(&self, comm: Option<CommId>) {
        self.comm
            .store(comm.map_or(NO_COMM, |c| u64::from(c.0)), Ordering::Release);
    }

    /// The connection's CM id, if any.
    pub(crate) fn comm(&self) -> Option<CommId> {
        let c = self.comm.load(Ordering::Acquire);
        (c != NO_COMM).then_some(CommId(c as u32))
    }

    /// Marks the id as being destroyed (deliveries stop).
    pub(crate) fn set_destroying(&self) {
        // SAFETY: as in `set_state`.
        unsafe {
            core::ptr::addr_of_mut!((*self.private()).state)
                .write_volatile(bindings::rdma_cm_state_RDMA_CM_DESTROYING);
        }
    }

    /// Whether the id is being destroyed.
    pub(crate) fn destroying(&self) -> bool {
        // SAFETY: as in `set_state`.
        let state = unsafe { core::ptr::addr_of!((*self.private()).state).read_volatile() };
        state == bindings::rdma_cm_state_RDMA_CM_DESTROYING
    }

    /// Writes the addresses consumers read (`route.addr.src_addr` and
    /// `dst_addr`).
    pub(crate) fn write_addrs(&self, src: Option<SockAddr>, dst: Option<SockAddr>) {
        let p = self.private();
        // SAFETY: `private` lives with `self`; the address fields are ours
        // to write (type invariant).
        unsafe {
            let addr = core::ptr::addr_of_mut!((*p).id.route.addr);
            if let Some(src) = src {
                write_sockaddr(core::ptr::addr_of_mut!((*addr).src_addr), &src);
            }
            if let Some(dst) = dst {
                write_sockaddr(core::ptr::addr_of_mut!((*addr).dst_addr), &dst);
            }
        }
    }

    /// The addresses consumers read (`route.addr.src_addr` and
    /// `dst_addr`); `None` for an unset (AF_UNSPEC) one.
    pub(crate) fn addrs(&self) -> (Option<SockAddr>, Option<SockAddr>) {
        let p = self.private();
        // SAFETY: both fields live with `self` and hold a socket address
        // (AF_UNSPEC until set, which reads as none).
        unsafe {
            (
                read_sockaddr(core::ptr::addr_of!((*p).id.route.addr.src_addr).cast()).ok(),
                read_sockaddr(core::ptr::addr_of!((*p).id.route.addr.dst_addr).cast()).ok(),
            )
        }
    }

    /// Mirrors the QP number for ib_core's resource tracking.
    pub(crate) fn set_qp(&self, qp: *mut bindings::ib_qp, qp_num: u32) {
        let p = self.private();
        // SAFETY: as in `write_addrs`.
        unsafe {
            core::ptr::addr_of_mut!((*p).id.qp).write_volatile(qp);
            core::ptr::addr_of_mut!((*p).qp_num).write_volatile(qp_num);
        }
    }

    /// The id's QP (NULL if none).
    pub(crate) fn qp(&self) -> *mut bindings::ib_qp {
        // SAFETY: `private` lives with `self`.
        unsafe { core::ptr::addr_of!((*self.private()).id.qp).read_volatile() }
    }

    /// The id's device (NULL before it has one) and port.
    pub(crate) fn device_port(&self) -> (*mut bindings::ib_device, u32) {
        let p = self.private();
        // SAFETY: `private` lives with `self`.
        unsafe {
            (
                core::ptr::addr_of!((*p).id.device).read_volatile(),
                core::ptr::addr_of!((*p).id.port_num).read_volatile(),
            )
        }
    }

    /// Whether the id is on an iWARP port (lock-free: its device and port
    /// fields).
    pub(crate) fn on_iwarp(&self) -> bool {
        let (ibdev, port) = self.device_port();
        if ibdev.is_null() {
            return false;
        }
        // SAFETY: a device an id is on stays registered while the id is
        // (its removal waits for the id's destroy).
        unsafe { Device::from_raw(ibdev) }.is_iwarp(port)
    }

    /// The ACK timeout the consumer set (`rdma_set_ack_timeout`), if any.
    pub(crate) fn ack_timeout(&self) -> Option<u8> {
        let p = self.private();
        // SAFETY: `private` lives with `self`; written only by the option
        // calls of the id's consumer.
        let (set, value) = unsafe {
            (
                (*p).timeout_set() != 0,
                core::ptr::addr_of!((*p).timeout).read_volatile(),
            )
        };
        set.then_some(value)
    }

    /// The minimum RNR timer the consumer set, if any.
    pub(crate) fn min_rnr_timer(&self) -> Option<u8> {
        let p = self.private();
        // SAFETY: as in `ack_timeout`.
        let (set, value) = unsafe {
            (
                (*p).min_rnr_timer_set() != 0,
                core::ptr::addr_of!((*p).min_rnr_timer).read_volatile(),
            )
        };
        set.then_some(value)
    }

    /// Sets the ACK timeout (`rdma_set_ack_timeout`).
    pub(crate) fn set_ack_timeout(&self, timeout: u8) {
        let p = self.private();
        // SAFETY: as in `ack_timeout`; the bit field shares its byte only
        // with the other option flags, written by the same consumer.
        unsafe {
            (*p).timeout = timeout;
            (*p).set_timeout_set(1);
        }
    }

    /// Sets the minimum RNR timer (`rdma_set_min_rnr_timer`).
    pub(crate) fn set_min_rnr_timer(&self, timer: u8) {
        let p = self.private();
        // SAFETY: as in `set_ack_timeout`.
        unsafe {
            (*p).min_rnr_timer = timer;
            (*p).set_min_rnr_timer_set(1);
        }
    }

    /// Lets go of the id's device: its resource-tracking entry and GID
    /// entry (its destroy, before a removal waiting for it is woken: at
    /// the last reference, the device may be gone).
    pub(crate) fn detach_device(&self) {
        // SAFETY: the id is destroyed in the core (nothing attaches it
        // again) and its handler no longer runs; the device is registered
        // until the removal that waits for this destroy returns.
        unsafe { bindings::rcm_h_rdma_id_detach(self.private()) };
    }

    /// Takes the id's handler lock (`rdma_lock_handler`).
    pub(crate) fn lock_handler(&self) {
        // SAFETY: the mutex was set up at creation and lives with `self`.
        unsafe { bindings::rcm_h_rdma_handler_lock(self.private()) };
    }

    /// Takes the id's handler lock to destroy it (possibly from a handler
    /// of another id).
    pub(crate) fn lock_handler_to_destroy(&self) {
        // SAFETY: as in `lock_handler`.
        unsafe { bindings::rcm_h_rdma_handler_lock_to_destroy(self.private()) };
    }

    /// Takes the id's QP lock: the QP is moved and destroyed under it
    /// (6.12's `qp_mutex`).
    pub(crate) fn lock_qp(&self) -> QpLock<'_> {
        // SAFETY: the mutex was set up at creation and lives with `self`.
        unsafe { bindings::rcm_h_rdma_qp_lock(self.private()) };
        QpLock { id: self }
    }

    /// Releases the id's handler lock.
    pub(crate) fn unlock_handler(&self) {
        // SAFETY: as in `lock_handler`; the caller holds it.
        unsafe { bindings::rcm_h_rdma_handler_unlock(self.private()) };
    }
}

/// An id's QP lock, held until dropped.
pub(crate) struct QpLock<'a> {
    id: &'a RdmaIdBox,
}

impl Drop for QpLock<'_> {
    fn drop(&mut self) {
        // SAFETY: this guard holds the lock.
        unsafe { bindings::rcm_h_rdma_qp_unlock(self.id.private()) };
    }
}

#[pinned_drop]
impl PinnedDrop for RdmaIdBox {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: the last reference is going: nothing else uses the id;
        // this releases what `rcm_h_rdma_id_init` and later calls took.
        unsafe { bindings::rcm_h_rdma_id_release(self.private.get()) };
    }
}
