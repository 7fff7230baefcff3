// SPDX-License-Identifier: GPL-2.0

//! The one CM service the ABI surfaces share: its events go to the
//! surface that owns each id (rdma_cm's connections and listeners, or an
//! ib_cm consumer's id), and rdma_cm's own events go out from the same
//! delivery, after the CM's.

use crate::abi::ib_cm::IbCm;
use crate::abi::rdma_cm::RdmaCmAbi;
use crate::abi::ucma::UcmaAbi;
use crate::proto::cm::Owner;
use crate::shell::{CmService, EventBatch, EventConsumer};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};

/// The consumers of the CM service: the surfaces built on it.
#[pin_data]
pub(crate) struct Consumers {
    /// ib_cm's consumers.
    #[pin]
    pub(crate) ib_cm: IbCm,
    /// rdma_cm.
    #[pin]
    pub(crate) rdma_cm: RdmaCmAbi,
    /// The rdma_ucm device's files.
    #[pin]
    pub(crate) ucma: UcmaAbi,
}

/// The CM service as rcm.ko runs it.
pub(crate) type Service = CmService<Consumers>;

impl EventConsumer for Consumers {
    fn deliver(&self, s: &Service, batch: EventBatch) {
        // Each event goes to the surface its id belongs to: rdma_cm takes
        // its own at once, ib_cm's consumers theirs in order after, without
        // rdma_cm's lock.
        let mut rest = EventBatch::new();
        for (comm, owner, event) in batch {
            let event = match owner {
                Owner::RdmaCm => match self.rdma_cm.cm_event(s, comm, event) {
                    Some((_, event)) => event,
                    None => continue,
                },
                Owner::IbCm => event,
            };
            if rest.push((comm, owner, event), GFP_KERNEL).is_err() {
                pr_warn!("out of memory: an ib_cm event not delivered\n");
            }
        }
        if !rest.is_empty() {
            self.ib_cm.deliver(s, rest);
        }
    }

    fn deliver_pending(&self, s: &Service) {
        self.rdma_cm.deliver(s);
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
        let consumers = try_pin_init!(Consumers {
            ib_cm <- IbCm::new(),
            rdma_cm <- RdmaCmAbi::new(),
            ucma <- UcmaAbi::new(),
        }? Error);
        let service = Arc::pin_init(CmService::new(consumers), GFP_KERNEL)?;
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
