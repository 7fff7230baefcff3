// SPDX-License-Identifier: GPL-2.0

//! The `struct ib_cm_id` rcm hands to ib_cm consumers, in an `Arc` with
//! the core's comm id and what rcm keeps per consumer id (the model of
//! rdma_cm's ids: the registry holds the consumer's reference, a call or
//! a delivery holds its own while it uses the id).

use super::types::kernel_state;
use crate::abi::id_registry::RegisteredId;
use crate::bindings;
use crate::proto::cm::{CommId, Connection};
use crate::proto::timer::IbaTime;
use crate::rdma::device::Device;
use crate::rdma::gid::GidAttr;
use crate::shell::Peer;
use kernel::ffi::c_void;
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::Opaque;
use kernel::{new_spinlock, sync::SpinLock};

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
    /// The GID entry of the id's path, held for the id's lifetime as 6.12
    /// holds its address vector's (events hand it out as `sgid_attr`).
    #[pin]
    gid: SpinLock<Option<GidAttr>>,
}

// SAFETY: the C fields are shared with consumers under the rules of the
// type invariant, which hold from any thread; the rest is `Send`.
unsafe impl Send for CmIdBox {}
// SAFETY: as above; `&CmIdBox` only hands out raw pointers to `id`.
unsafe impl Sync for CmIdBox {}

impl RegisteredId for CmIdBox {
    fn key(&self) -> u64 {
        self.comm.0.into()
    }

    /// None: comm ids are scrambled (their slots are the endpoint's).
    fn slot_of(_key: u64) -> Option<usize> {
        None
    }
}

impl CmIdBox {
    /// A box for `comm` with the consumer's handler and context.
    pub(crate) fn new(
        comm: CommId,
        device: *mut bindings::ib_device,
        handler: bindings::ib_cm_handler,
        context: *mut kernel::ffi::c_void,
    ) -> Result<Arc<CmIdBox>> {
        let id = bindings::ib_cm_id {
            cm_handler: handler,
            context,
            device,
            local_id: comm.0.to_be(),
            // The C CM's default: the CM's own QP1.
            remote_cm_qpn: 1,
            ..Default::default()
        };
        Arc::pin_init(
            try_pin_init!(CmIdBox {
                id: Opaque::new(id),
                comm,
                gid <- new_spinlock!(None, "rcm::id_gid"),
            }? Error),
            GFP_KERNEL,
        )
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

    /// The id's device.
    pub(crate) fn dev(&self) -> Device<'_> {
        // SAFETY: an id's device stays registered while the id exists
        // (ib_core removes consumers, and so their ids, first).
        unsafe { Device::from_raw(self.device()) }
    }

    /// The local ACK delay of the id's device (IBA time).
    pub(crate) fn ack_delay(&self) -> IbaTime {
        IbaTime::new(self.dev().ack_delay())
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
    pub(super) fn mirror(&self, c: &Connection<Peer>) {
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

    /// As [`Self::from_id`], `None` for NULL.
    ///
    /// # Safety
    ///
    /// A non-NULL `id` must be as [`Self::from_id`] requires.
    pub(crate) unsafe fn from_id_or_null<'a>(id: *mut bindings::ib_cm_id) -> Option<&'a CmIdBox> {
        // SAFETY: as in `from_id`, per this function's contract.
        unsafe { id.cast::<CmIdBox>().as_ref() }
    }
}
