// SPDX-License-Identifier: GPL-2.0

//! A one-shot timer on the system workqueue (6.12's kernel crate has no
//! delayed work): fires a callback in process context after a delay;
//! re-arming moves the deadline.

use crate::bindings;
use core::ptr::NonNull;
use kernel::prelude::*;

/// What a timer calls when it fires.
pub(crate) trait TimerHandler: Sync {
    /// The timer fired (process context).
    fn fire(&self);
}

/// A delayed work item calling `H::fire`; cancelled and freed on drop.
///
/// INVARIANT: `timer` was created by `rcm_h_timer_new` with a `*const H`
/// context valid until `self` is dropped.
pub(crate) struct Timer<H: TimerHandler> {
    timer: NonNull<bindings::rcm_h_timer>,
    _handler: core::marker::PhantomData<*const H>,
}

// SAFETY: arming and cancelling a delayed work item is allowed from any
// thread; the handler is `Sync`.
unsafe impl<H: TimerHandler> Send for Timer<H> {}
// SAFETY: `&Timer` only re-arms, which mod_delayed_work serialises.
unsafe impl<H: TimerHandler> Sync for Timer<H> {}

impl<H: TimerHandler> Timer<H> {
    /// A timer for `handler`.
    ///
    /// # Safety
    ///
    /// `handler` must stay valid until the timer is dropped.
    pub(crate) unsafe fn new(handler: *const H) -> Result<Self> {
        // SAFETY: `fire::<H>` matches the callback type; the context
        // outlives the timer per this function's contract.
        let raw = unsafe { bindings::rcm_h_timer_new(Some(fire::<H>), handler.cast_mut().cast()) };
        // INVARIANT: created with `handler` as context.
        Ok(Timer {
            timer: NonNull::new(raw).ok_or(ENOMEM)?,
            _handler: core::marker::PhantomData,
        })
    }

    /// Fires in `delay_ms` (replacing any earlier deadline).
    pub(crate) fn arm(&self, delay_ms: u64) {
        // SAFETY: the timer is live (type invariant).
        unsafe { bindings::rcm_h_timer_arm(self.timer.as_ptr(), delay_ms) };
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
    // SAFETY: the context is the handler, valid while the timer exists.
    let handler = unsafe { &*ctx.cast::<H>() };
    handler.fire();
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
