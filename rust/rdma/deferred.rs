// SPDX-License-Identifier: GPL-2.0

//! Work handed over from atomic context: (id, value) pairs queued from any
//! context and handled in order by a work item in process context.

use crate::bindings;
use core::ptr::NonNull;
use kernel::prelude::*;

/// What a deferred queue calls for each pair (process context).
pub(crate) trait DeferredHandler: Sync {
    /// Handle one queued pair.
    fn run(&self, id: u32, value: u32);
}

/// A deferred queue; on drop it waits for a running drain and discards
/// what is still queued.
///
/// INVARIANT: `queue` came from `rcm_h_deferred_new` with a `*const H`
/// context valid until `self` is dropped.
pub(crate) struct Deferred<H: DeferredHandler> {
    queue: NonNull<bindings::rcm_h_deferred>,
    _handler: core::marker::PhantomData<*const H>,
}

// SAFETY: pushing is allowed from any context and thread; the handler is
// `Sync`.
unsafe impl<H: DeferredHandler> Send for Deferred<H> {}
// SAFETY: `&Deferred` only pushes, which the C side serialises.
unsafe impl<H: DeferredHandler> Sync for Deferred<H> {}

impl<H: DeferredHandler> Deferred<H> {
    /// A queue for `handler`.
    ///
    /// # Safety
    ///
    /// `handler` must stay valid until the queue is dropped.
    pub(crate) unsafe fn new(handler: *const H) -> Result<Self> {
        // SAFETY: `run::<H>` matches the callback type; the context
        // outlives the queue per this function's contract.
        let raw =
            unsafe { bindings::rcm_h_deferred_new(Some(run::<H>), handler.cast_mut().cast()) };
        // INVARIANT: created with `handler` as context.
        Ok(Deferred {
            queue: NonNull::new(raw).ok_or(ENOMEM)?,
            _handler: core::marker::PhantomData,
        })
    }

    /// Queues a pair; callable in atomic context.
    pub(crate) fn push(&self, id: u32, value: u32) -> Result {
        // SAFETY: the queue is live (type invariant).
        kernel::error::to_result(unsafe {
            bindings::rcm_h_deferred_push(self.queue.as_ptr(), id, value)
        })
    }
}

impl<H: DeferredHandler> Drop for Deferred<H> {
    fn drop(&mut self) {
        // SAFETY: live per the type invariant; waits for a running drain.
        unsafe { bindings::rcm_h_deferred_free(self.queue.as_ptr()) };
    }
}

/// # Safety
///
/// Called by the queue's work item with the context given to `new`.
unsafe extern "C" fn run<H: DeferredHandler>(ctx: *mut kernel::ffi::c_void, id: u32, value: u32) {
    // SAFETY: the context is the handler, valid while the queue exists.
    let handler = unsafe { &*ctx.cast::<H>() };
    handler.run(id, value);
}

/// Whether the caller may sleep (take a mutex, allocate with GFP_KERNEL).
pub(crate) fn may_sleep() -> bool {
    // SAFETY: reads the preemption state; no preconditions.
    unsafe { bindings::rcm_h_may_sleep() }
}
