// SPDX-License-Identifier: GPL-2.0

//! A one-shot timer on the system workqueue (6.12's kernel crate has no
//! delayed work) that fires a callback in process context at a deadline,
//! and a work item on a workqueue of its own, bound to the CPU that queues
//! it or unbound ([`WorkCpu`]). Arming keeps the
//! earliest deadline, so arms racing with each other never postpone one.

use crate::bindings;
use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::prelude::*;
use kernel::sync::Arc;

/// What a timer calls when it fires.
pub(crate) trait TimerHandler: Send + Sync {
    /// The timer fired (process context).
    fn fire(&self);
}

/// A delayed work item calling `H::fire`; cancelled and freed on drop.
/// It holds a reference on its handler: a handler that owns its timer
/// must drop it to be freed.
///
/// INVARIANT: `timer` was created by `rcm_h_timer_new` with the address
/// of `handler`'s contents as context.
pub(crate) struct Timer<H: TimerHandler> {
    timer: NonNull<bindings::rcm_h_timer>,
    /// Released after the timer is freed (`Drop` runs before fields drop).
    _handler: Arc<H>,
}

// SAFETY: arming and cancelling a delayed work item is allowed from any
// thread; the handler is `Sync`.
unsafe impl<H: TimerHandler> Send for Timer<H> {}
// SAFETY: `&Timer` only arms, which the C side serialises with a lock.
unsafe impl<H: TimerHandler> Sync for Timer<H> {}

impl<H: TimerHandler> Timer<H> {
    /// A timer for `handler`.
    pub(crate) fn new(handler: Arc<H>) -> Result<Self> {
        let ctx: *const H = &*handler;
        // SAFETY: `fire::<H>` matches the callback type; the context is
        // kept alive by the reference the timer holds.
        let raw = unsafe { bindings::rcm_h_timer_new(Some(fire::<H>), ctx.cast_mut().cast()) };
        // INVARIANT: created with `handler`'s contents as context.
        Ok(Timer {
            timer: NonNull::new(raw).ok_or(ENOMEM)?,
            _handler: handler,
        })
    }

    /// Fires at [`now_ms`] time `deadline`, or earlier if armed earlier.
    pub(crate) fn arm_at(&self, deadline: u64) {
        // SAFETY: the timer is live (type invariant).
        unsafe { bindings::rcm_h_timer_arm_at(self.timer.as_ptr(), deadline) };
    }
}

impl<H: TimerHandler> Drop for Timer<H> {
    fn drop(&mut self) {
        // SAFETY: live per the type invariant; waits for a running callback.
        unsafe { bindings::rcm_h_timer_free(self.timer.as_ptr()) };
    }
}

/// # Safety
///
/// Called by the timer's work item with the context given to `new`.
unsafe extern "C" fn fire<H: TimerHandler>(ctx: *mut kernel::ffi::c_void) {
    // SAFETY: the context is the handler, kept alive by the timer, which
    // exists while its callback runs (freeing it waits for the callback).
    let handler = unsafe { &*ctx.cast::<H>() };
    handler.fire();
}

/// What a work item calls when it runs. `K` names the work, for a
/// handler that runs more than one (each a [`Work<H, K>`] of its own).
pub(crate) trait WorkHandler<K = ()>: Send + Sync {
    /// The work runs (process context, never concurrently with itself).
    fn run(&self);
}

/// Which CPU a [`Work`] runs on.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum WorkCpu {
    /// The CPU that queued it: no wakeup of another CPU (for work queued
    /// from a completion, which that CPU is done with).
    Queuing,
    /// Whichever CPU is free (an unbound workqueue): the task that queued
    /// it is not preempted by it, so a caller queuing work call after call
    /// goes on while the work runs beside it.
    Any,
}

/// Whether the caller runs in a workqueue's work item (rather than in a
/// task of its own, such as a consumer's call).
pub(crate) fn in_work_item() -> bool {
    // SAFETY: reads the running task's flags.
    unsafe { bindings::rcm_h_in_work_item() }
}

/// A work item calling `H::run` on a workqueue of its own (its runs never
/// overlap, so they are ordered); cancelled and freed on drop.
/// It holds a reference on its handler, as [`Timer`] does.
///
/// INVARIANT: `work` was created by `rcm_h_work_new` with the address of
/// `handler`'s contents as context.
pub(crate) struct Work<H: WorkHandler<K>, K: 'static = ()> {
    work: NonNull<bindings::rcm_h_work>,
    /// Released after the work is freed.
    _handler: Arc<H>,
    _kind: PhantomData<fn() -> K>,
}

// SAFETY: queueing a work item is allowed from any thread and context;
// the handler is `Sync`.
unsafe impl<H: WorkHandler<K>, K> Send for Work<H, K> {}
// SAFETY: `&Work` only queues, which the workqueue serialises.
unsafe impl<H: WorkHandler<K>, K> Sync for Work<H, K> {}

impl<H: WorkHandler<K>, K> Work<H, K> {
    /// A work item for `handler` on a new workqueue called `name`, run on
    /// the CPU `cpu` says.
    pub(crate) fn new(
        name: &'static kernel::str::CStr,
        handler: Arc<H>,
        cpu: WorkCpu,
    ) -> Result<Self> {
        let ctx: *const H = &*handler;
        // SAFETY: `run::<H>` matches the callback type; the context is
        // kept alive by the reference the work holds.
        let raw = unsafe {
            bindings::rcm_h_work_new(
                name.as_char_ptr(),
                Some(run::<H, K>),
                ctx.cast_mut().cast(),
                cpu == WorkCpu::Any,
            )
        };
        // INVARIANT: created with `handler`'s contents as context.
        Ok(Work {
            work: NonNull::new(raw).ok_or(ENOMEM)?,
            _handler: handler,
            _kind: PhantomData,
        })
    }

    /// Has the work run soon (once, if queued several times before).
    pub(crate) fn queue(&self) {
        // SAFETY: the work is live (type invariant).
        unsafe { bindings::rcm_h_work_queue(self.work.as_ptr()) };
    }
}

impl<H: WorkHandler<K>, K> Drop for Work<H, K> {
    fn drop(&mut self) {
        // SAFETY: live per the type invariant; waits for a running callback.
        unsafe { bindings::rcm_h_work_free(self.work.as_ptr()) };
    }
}

/// # Safety
///
/// Called by the work item with the context given to `new`.
unsafe extern "C" fn run<H: WorkHandler<K>, K>(ctx: *mut kernel::ffi::c_void) {
    // SAFETY: the context is the handler, kept alive by the work item,
    // which exists while its callback runs.
    let handler = unsafe { &*ctx.cast::<H>() };
    <H as WorkHandler<K>>::run(handler);
}

/// Milliseconds of a monotonic clock.
pub(crate) fn now_ms() -> u64 {
    // SAFETY: reads jiffies; no preconditions.
    unsafe { bindings::rcm_h_now_ms() }
}

/// A random 32-bit value.
pub(crate) fn random_u32() -> u32 {
    // SAFETY: no preconditions.
    unsafe { bindings::rcm_h_random_u32() }
}
