// SPDX-License-Identifier: GPL-2.0

//! What 6.12's kernel crate lacks for synchronisation: a spinlock that
//! disables interrupts while held (`spin_lock_irqsave`, for short holds
//! interrupt handlers share), a spinlock that keeps them on and that
//! interrupt context may only try (`spin_trylock`, for the CM endpoint's
//! long holds), an RCU read-side section, and a wait for a condition.

use crate::bindings;
use core::cell::UnsafeCell;
use core::marker::{PhantomData, PhantomPinned};
use core::ops::{Deref, DerefMut};
use kernel::prelude::*;
use kernel::sync::lock::{Backend, Lock};
use kernel::types::Opaque;

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

/// A lockdep class for a [`TaskSpinLock`] (the kernel crate's
/// `LockClassKey` hands its pointer only to the kernel crate's locks).
pub(crate) struct LockClass(Opaque<kernel::bindings::lock_class_key>);

// SAFETY: lockdep synchronises its use of a key itself.
unsafe impl Sync for LockClass {}

impl LockClass {
    /// An unregistered key, for a `static` (lockdep wants a static key
    /// left uninitialised).
    pub(crate) const fn new() -> Self {
        LockClass(Opaque::uninit())
    }
}

/// Creates a [`TaskSpinLock`] initialiser with a lock class of its own.
#[macro_export]
macro_rules! new_task_spinlock {
    ($inner:expr, $name:literal) => {{
        static CLASS: $crate::rdma::sync::LockClass = $crate::rdma::sync::LockClass::new();
        $crate::rdma::sync::TaskSpinLock::new($inner, kernel::c_str!($name), &CLASS)
    }};
}

/// A `spinlock_t` taken with `spin_lock`: interrupts stay on while it is
/// held (preemption is off), so a long hold delays no interrupt. Tasks
/// take it in any state, interrupts off included: its holder on the same
/// CPU is never a task it interrupted. Interrupt context (hard IRQ,
/// softirq), which may have interrupted the holder on its own CPU, can
/// only [`TaskSpinLock::try_lock`] it.
///
/// INVARIANT: `lock` was initialised by `__spin_lock_init`, and `data` is
/// only reached through a [`TaskSpinGuard`], which exists while the lock
/// is held.
#[pin_data]
pub(crate) struct TaskSpinLock<T> {
    #[pin]
    lock: Opaque<kernel::bindings::spinlock_t>,
    /// A `spinlock_t` may not move.
    #[pin]
    _pin: PhantomPinned,
    data: UnsafeCell<T>,
}

// SAFETY: the lock hands `data` to one holder at a time; it may move
// between threads if `T` may.
unsafe impl<T: Send> Send for TaskSpinLock<T> {}
// SAFETY: as above: shared references only reach `data` through the lock.
unsafe impl<T: Send> Sync for TaskSpinLock<T> {}

impl<T> TaskSpinLock<T> {
    /// A lock around `data` in lockdep class `class` named `name`.
    pub(crate) fn new(
        data: T,
        name: &'static kernel::str::CStr,
        class: &'static LockClass,
    ) -> impl PinInit<Self> {
        // INVARIANT: the lock is initialised here, before any use.
        pin_init!(TaskSpinLock {
            lock <- Opaque::ffi_init(|slot| {
                // SAFETY: `slot` is valid for writes; `name` and the key
                // live forever.
                unsafe { kernel::bindings::__spin_lock_init(slot, name.as_char_ptr(), class.0.get()) }
            }),
            _pin: PhantomPinned,
            data: UnsafeCell::new(data),
        })
    }

    /// Waits for the lock (task context only; see the type).
    pub(crate) fn lock(&self) -> TaskSpinGuard<'_, T> {
        // SAFETY: initialised (type invariant).
        unsafe { kernel::bindings::spin_lock(self.lock.get()) };
        // INVARIANT: the lock is held.
        TaskSpinGuard {
            lock: self,
            _not_send: PhantomData,
        }
    }

    /// The lock if it is free now: what interrupt context may do.
    pub(crate) fn try_lock(&self) -> Option<TaskSpinGuard<'_, T>> {
        // SAFETY: initialised (type invariant).
        let held = unsafe { bindings::rcm_h_spin_trylock(self.lock.get().cast()) };
        // INVARIANT: the guard exists only if the lock was taken.
        held.then_some(TaskSpinGuard {
            lock: self,
            _not_send: PhantomData,
        })
    }

    /// The lock, waited for in task context and tried in interrupt
    /// context (where `None` says it is busy).
    pub(crate) fn lock_from_any_context(&self) -> Option<TaskSpinGuard<'_, T>> {
        if in_interrupt() {
            self.try_lock()
        } else {
            Some(self.lock())
        }
    }
}

/// A held [`TaskSpinLock`]; released on drop.
///
/// INVARIANT: `lock` is held from the guard's creation to its drop.
pub(crate) struct TaskSpinGuard<'a, T> {
    lock: &'a TaskSpinLock<T>,
    /// Released by the task or interrupt that took it.
    _not_send: PhantomData<*mut ()>,
}

impl<T> Deref for TaskSpinGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the lock is held (type invariant), so nothing else
        // reaches `data`.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for TaskSpinGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` is the only way in.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for TaskSpinGuard<'_, T> {
    fn drop(&mut self) {
        // SAFETY: held by this guard (type invariant).
        unsafe { kernel::bindings::spin_unlock(self.lock.lock.get()) };
    }
}

/// Whether the caller runs in interrupt context (hard IRQ, softirq or
/// NMI; `in_interrupt()`), where it may have interrupted a lock's holder.
pub(crate) fn in_interrupt() -> bool {
    // SAFETY: reads the preempt count; no preconditions.
    unsafe { bindings::rcm_h_in_interrupt() }
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
