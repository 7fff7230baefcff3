// SPDX-License-Identifier: GPL-2.0

//! The one CM service the ABI surfaces share, published for their entry
//! points from C (which carry no context pointer). It names no surface:
//! `rcm_main.rs` composes them into its consumer, and each surface finds
//! its own state as a part of it ([`with_part`]).

use crate::shell::{CmService, EventConsumer};
use core::any::Any;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};

/// The service, for entry points from C (which carry no context pointer):
/// the address of the contents of the [`ServiceHandle`]'s `Arc`.
static SERVICE: AtomicPtr<CmService> = AtomicPtr::new(core::ptr::null_mut());

/// Runs `f` on the service, if one is published.
pub(crate) fn with_service<R>(f: impl FnOnce(ArcBorrow<'_, CmService>) -> R) -> Option<R> {
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

/// Runs `f` on the service and its consumer's part of type `T` (a
/// surface's state), if the service is published.
pub(crate) fn with_part<T: Any, R>(f: impl FnOnce(&CmService, &T) -> R) -> Option<R> {
    with_service(|s| s.part::<T>().map(|part| f(&s, part))).flatten()
}

/// Owns the service and publishes it for the entry points.
pub(crate) struct ServiceHandle(Arc<CmService>);

impl ServiceHandle {
    /// Creates, starts and publishes the service, delivering to `consumer`.
    pub(crate) fn new(consumer: Arc<dyn EventConsumer>) -> Result<Self> {
        let service = Arc::pin_init(CmService::new(consumer), GFP_KERNEL)?;
        CmService::start(&service)?;
        let ptr: *const CmService = &*service;
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
