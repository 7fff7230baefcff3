// SPDX-License-Identifier: GPL-2.0

//! What 6.12's kernel crate lacks for synchronisation: a spinlock that
//! disables interrupts while held (`spin_lock_irqsave`; state that
//! interrupt handlers and QP event handlers read or change sits behind it,
//! as the C CM keeps its per-id state behind an irq-safe lock), an RCU
//! read-side section, and a wait for a condition.

use crate::bindings;
use core::marker::PhantomData;
use kernel::sync::lock::{Backend, Lock};

/// A `spinlock_t` taken with `spin_lock_irqsave`: callable from any
/// context, never sleeping while held.
pub(crate) type IrqSpinLock<T> = Lock<T, IrqSaveBackend>;

/// Creates an [`IrqSpinLock`] initialiser with a lock class of its own.
#[macro_export]
macro_rules! new_irq_spinlock {
    ($inner:expr, $name:literal) => {
        $crate::rdma::sync::IrqSpinLock::new(
            $inner,
            kernel::c_str!($name),
            kernel::static_lock_class!(),
        )
    };
}

/// The backend of [`IrqSpinLock`]; the guard keeps the saved interrupt
/// flags.
pub(crate) struct IrqSaveBackend;

// SAFETY: the kernel's `spinlock_t` gives mutual exclusion; interrupts stay
// off on this CPU from `lock` to `unlock`, which restores the flags `lock`
// saved. `relock` uses the default, which calls `lock` again.
unsafe impl Backend for IrqSaveBackend {
    type State = kernel::bindings::spinlock_t;
    type GuardState = kernel::ffi::c_ulong;

    unsafe fn init(
        ptr: *mut Self::State,
        name: *const kernel::ffi::c_char,
        key: *mut kernel::bindings::lock_class_key,
    ) {
        // SAFETY: `ptr` is valid for writes, `name` and `key` for reads
        // forever (the trait's contract).
        unsafe { kernel::bindings::__spin_lock_init(ptr, name, key) }
    }

    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: initialised per the trait's contract.
        unsafe { bindings::rcm_h_spin_lock_irqsave(ptr.cast()) }
    }

    unsafe fn unlock(ptr: *mut Self::State, flags: &Self::GuardState) {
        // SAFETY: the caller owns the lock; `flags` are what `lock` saved.
        unsafe { bindings::rcm_h_spin_unlock_irqrestore(ptr.cast(), *flags) }
    }
}

/// An RCU read-side critical section, from `new` to drop: what ib_core and
/// the network stack publish under RCU (a GID entry's network device, a
/// device found by index) stays valid while it lives. It never sleeps.
pub(crate) struct RcuReadGuard {
    /// Not `Send`: the section ends on the CPU it began on.
    _not_send: PhantomData<*mut ()>,
}

impl RcuReadGuard {
    /// Enters a read-side critical section.
    pub(crate) fn new() -> Self {
        // SAFETY: no preconditions; paired with the unlock in `drop`.
        unsafe { bindings::rcm_h_rcu_read_lock() };
        RcuReadGuard {
            _not_send: PhantomData,
        }
    }
}

impl Drop for RcuReadGuard {
    fn drop(&mut self) {
        // SAFETY: entered in `new`, on this task.
        unsafe { bindings::rcm_h_rcu_read_unlock() };
    }
}

/// An identity of the running task (its address; never dereferenced).
pub(crate) fn current_task() -> usize {
    // SAFETY: no preconditions.
    unsafe { bindings::rcm_h_current() as usize }
}

/// Sleeps until `done` holds, re-checking it at every [`wake_waiters`]
/// (one wait queue for the module: waits are rare).
pub(crate) fn wait_until<F: Fn() -> bool>(done: &F) {
    // SAFETY: `check::<F>` reads an `F`, which `done` is and which
    // outlives the call; the caller holds no lock (it sleeps).
    unsafe {
        bindings::rcm_h_wait_until(
            Some(check::<F>),
            core::ptr::from_ref(done).cast_mut().cast(),
        )
    };
}

/// Wakes every [`wait_until`] to re-check its condition.
pub(crate) fn wake_waiters() {
    // SAFETY: no preconditions.
    unsafe { bindings::rcm_h_wake_waiters() };
}

/// Lets other tasks on this CPU run if they are due (`cond_resched`):
/// a work item handling many batches calls it between them, as a
/// workqueue does between work items. Process context, no lock held that
/// forbids sleeping.
pub(crate) fn yield_between_batches() {
    // SAFETY: no preconditions beyond the documented context.
    unsafe { bindings::rcm_h_cond_resched() };
}

/// # Safety
///
/// `ctx` must point to a live `F`.
unsafe extern "C" fn check<F: Fn() -> bool>(ctx: *mut kernel::ffi::c_void) -> bool {
    // SAFETY: per the function's contract.
    let done = unsafe { &*ctx.cast::<F>() };
    done()
}
