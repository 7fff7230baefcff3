// SPDX-License-Identifier: GPL-2.0

//! The ib_cm ABI (`include/rdma/ib_cm.h`, Linux 6.12): consumer ids, the
//! 16 exports and rcm's LAP/APR, and the delivery of events to consumers'
//! handlers. `rcm_exports.c` exports the symbols; `rcm_cm_events.c` builds
//! the C event structures.

mod connect;
mod delivery;
mod event_params;
mod exports;
mod ffi;
mod id;
mod lap;
mod path;
mod qp;
mod types;

use crate::shell::kernel_maps::KernelMap;
use crate::shell::CmService;
use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow, Mutex};

/// The CM service as the ib_cm surface runs it.
pub(crate) type Service = CmService<IbCm>;

/// What the ib_cm surface keeps: its consumers' ids and which of them is
/// in a handler.
#[pin_data]
pub(crate) struct IbCm {
    /// Consumer ids (`struct ib_cm_id` boxes) by comm id.
    #[pin]
    ids: Mutex<KernelMap<u32, usize>>,
    /// The ids whose handler runs right now (0: none): the id, and the
    /// listener of a new id. `ib_destroy_cm_id` waits for those callbacks.
    delivering: [AtomicU32; 2],
    /// The task delivering (0: none), to tell a destroy from inside a
    /// handler.
    worker: AtomicUsize,
}

impl IbCm {
    fn new() -> impl PinInit<Self, Error> {
        use crate::proto::cm::store::OrderedMap;
        try_pin_init!(IbCm {
            ids <- new_mutex!(OrderedMap::new_empty(), "rcm::ib_cm_ids"),
            delivering: [AtomicU32::new(0), AtomicU32::new(0)],
            worker: AtomicUsize::new(0),
        })
    }
}

/// The service, for entry points from C (which carry no context pointer):
/// the address of the contents of the [`ServiceHandle`]'s `Arc`.
static SERVICE: AtomicPtr<Service> = AtomicPtr::new(core::ptr::null_mut());

/// Runs `f` on the service, if one is published.
pub(crate) fn with_service<R>(f: impl FnOnce(ArcBorrow<'_, Service>) -> R) -> Option<R> {
    let ptr = SERVICE.load(Ordering::Acquire);
    if ptr.is_null() {
        return None;
    }
    // SAFETY: a non-null pointer is an `Arc`'s contents, published by
    // `ServiceHandle::new` and withdrawn by its drop before it releases its
    // reference. That happens only after the ib_client whose callbacks
    // call this is unregistered (field order in `RcmModule`) and while no
    // consumer is loaded (they hold the module), so the reference outlives
    // the call.
    Some(f(unsafe { ArcBorrow::from_raw(ptr) }))
}

/// Owns the service and publishes it for the entry points.
pub(crate) struct ServiceHandle(Arc<Service>);

impl ServiceHandle {
    /// Creates, starts and publishes the service.
    pub(crate) fn new() -> Result<Self> {
        let service = Arc::pin_init(CmService::new(IbCm::new()), GFP_KERNEL)?;
        CmService::start(&service)?;
        let ptr: *const Service = &*service;
        SERVICE.store(ptr.cast_mut(), Ordering::Release);
        Ok(ServiceHandle(service))
    }
}

impl Drop for ServiceHandle {
    fn drop(&mut self) {
        SERVICE.store(core::ptr::null_mut(), Ordering::Release);
        // Breaks the timer's and the delivery work's references; the
        // agents' went with the devices.
        self.0.stop();
    }
}
