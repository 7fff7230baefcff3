// SPDX-License-Identifier: GPL-2.0

//! How long the core's locks are waited for and held. The design keeps
//! QP moves, MAD posts, user copies and consumer callbacks outside them;
//! this is how that is measured (`/sys/module/rcm/lock_times`, read around
//! `make bench`'s runs). Off by default: then a lock costs one atomic load
//! more.

use crate::new_irq_spinlock;
use crate::rdma::sync::{IrqSpinLock, TaskSpinGuard};
use core::fmt;
use core::ops::{Deref, DerefMut};
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::prelude::*;
use kernel::time::Ktime;

/// Whether the meters record (one switch for all of them).
static METERING: AtomicBool = AtomicBool::new(false);

/// Starts recording from zero (`true`) or stops (`false`; the figures
/// stay readable).
pub(crate) fn set_metering<'a>(on: bool, meters: impl Iterator<Item = &'a LockMeter>) {
    if on {
        for m in meters {
            *m.figures.lock() = Figures::ZERO;
        }
    }
    METERING.store(on, Ordering::Relaxed);
}

/// Whether the meters record.
pub(crate) fn metering() -> bool {
    METERING.load(Ordering::Relaxed)
}

/// One lock's figures since metering started.
#[derive(Clone, Copy)]
struct Figures {
    acquisitions: u64,
    waited_ns: u64,
    longest_wait_ns: u64,
    held_ns: u64,
    longest_hold_ns: u64,
    /// The code that held the lock longest (the call's closure type).
    longest_hold_by: &'static str,
    /// Holds of at least 10 us, 100 us, 1 ms and 10 ms: how rare the long
    /// ones are (under TCG on a busy host a vCPU the host descheduled
    /// stretches a hold it did nothing in).
    long_holds: [u64; LONG_HOLD_BOUNDS.len()],
    /// Acquisitions and hold time per holder, in order of first
    /// acquisition: which calls take the lock how often, and for how long.
    holders: [Holder; HOLDERS],
    /// Holds by holders that found the table full.
    other_holds: u64,
}

/// The holders [`Figures`] tells apart (more are counted together).
const HOLDERS: usize = 48;

/// How often one holder took a lock and how long it held it.
#[derive(Clone, Copy)]
struct Holder {
    by: &'static str,
    holds: u64,
    held_ns: u64,
}

impl Holder {
    const NONE: Holder = Holder {
        by: "",
        holds: 0,
        held_ns: 0,
    };
}

/// The bounds of [`Figures::long_holds`], in nanoseconds.
const LONG_HOLD_BOUNDS: [u64; 4] = [10_000, 100_000, 1_000_000, 10_000_000];

impl Figures {
    const ZERO: Figures = Figures {
        acquisitions: 0,
        waited_ns: 0,
        longest_wait_ns: 0,
        held_ns: 0,
        longest_hold_ns: 0,
        longest_hold_by: "",
        long_holds: [0; LONG_HOLD_BOUNDS.len()],
        holders: [Holder::NONE; HOLDERS],
        other_holds: 0,
    };

    /// Counts a hold of `held` nanoseconds by `by`.
    fn count_holder(&mut self, by: &'static str, held: u64) {
        let slot = self
            .holders
            .iter_mut()
            .find(|h| h.holds == 0 || core::ptr::eq(h.by, by) || h.by == by);
        match slot {
            Some(h) => {
                h.by = by;
                h.holds += 1;
                h.held_ns = h.held_ns.saturating_add(held);
            }
            None => self.other_holds += 1,
        }
    }
}

/// The holders with the most hold time, at most this many per line.
const HOLDERS_SHOWN: usize = 6;

/// The meter of one lock.
#[pin_data]
pub(crate) struct LockMeter {
    #[pin]
    figures: IrqSpinLock<Figures>,
}

impl LockMeter {
    /// A meter with nothing recorded.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(LockMeter {
            figures <- new_irq_spinlock!(Figures::ZERO, "rcm::lock_meter"),
        })
    }

    /// Takes a lock with `lock` for the code `by` (a name for the longest
    /// hold), timing the wait and, when the returned guard drops, the
    /// hold.
    pub(crate) fn lock<G>(&self, by: &'static str, lock: impl FnOnce() -> G) -> Metered<'_, G> {
        if !metering() {
            return Metered {
                guard: lock(),
                since: None,
            };
        }
        let asked = Ktime::ktime_get();
        let guard = lock();
        let got = Ktime::ktime_get();
        let waited = ns_between(asked, got);
        let mut f = self.figures.lock();
        f.acquisitions += 1;
        f.waited_ns = f.waited_ns.saturating_add(waited);
        f.longest_wait_ns = f.longest_wait_ns.max(waited);
        drop(f);
        Metered {
            guard,
            since: Some((self, got, by)),
        }
    }

    fn record_hold(&self, held: u64, by: &'static str) {
        let mut f = self.figures.lock();
        f.held_ns = f.held_ns.saturating_add(held);
        for (count, bound) in f.long_holds.iter_mut().zip(LONG_HOLD_BOUNDS) {
            if held >= bound {
                *count += 1;
            }
        }
        if held > f.longest_hold_ns {
            f.longest_hold_ns = held;
            f.longest_hold_by = by;
        }
        f.count_holder(by, held);
    }
}

fn ns_between(earlier: Ktime, later: Ktime) -> u64 {
    u64::try_from((later - earlier).to_ns()).unwrap_or(0)
}

/// Shown as one line: acquisitions, mean and longest wait and hold in
/// nanoseconds, what held it longest, how many holds took at least
/// 10 us, 100 us, 1 ms and 10 ms, and the holders with the most hold
/// time (acquisitions and mean hold).
impl fmt::Display for LockMeter {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let f = *self.figures.lock();
        let mean = |total: u64| total / f.acquisitions.max(1);
        write!(
            out,
            "{} acquisitions, wait mean {} ns longest {} ns, hold mean {} ns longest {} ns ({}), \
             holds of 10us+ {} 100us+ {} 1ms+ {} 10ms+ {}",
            f.acquisitions,
            mean(f.waited_ns),
            f.longest_wait_ns,
            mean(f.held_ns),
            f.longest_hold_ns,
            ShortName(f.longest_hold_by),
            f.long_holds[0],
            f.long_holds[1],
            f.long_holds[2],
            f.long_holds[3]
        )?;
        // The holders with the most hold time, largest first.
        let mut shown = [false; HOLDERS];
        write!(out, "; most held by")?;
        for _ in 0..HOLDERS_SHOWN {
            let next = (0..HOLDERS)
                .filter(|&i| !shown[i] && f.holders[i].holds > 0)
                .max_by_key(|&i| f.holders[i].held_ns);
            let Some(i) = next else {
                break;
            };
            shown[i] = true;
            let h = &f.holders[i];
            write!(
                out,
                " {} {} x {} ns,",
                ShortName(h.by),
                h.holds,
                h.held_ns / h.holds
            )?;
        }
        write!(out, " others {}", f.other_holds)
    }
}

/// A holder's name as `lock_times` shows it: for a closure's type name
/// (`a::b::<impl X>::call::{{closure}}`), its last two path segments
/// outside generic arguments (`b::call`); any other name whole.
struct ShortName(&'static str);

impl fmt::Display for ShortName {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.0;
        if !name.contains("::") {
            return out.write_str(name);
        }
        // The last two identifiers outside angle brackets, "closure" not
        // counted.
        let (mut last, mut before) = (None, None);
        let (mut depth, mut start, mut prev) = (0usize, None, ' ');
        for (i, c) in Iterator::chain(name.char_indices(), core::iter::once((name.len(), ' '))) {
            let after = core::mem::replace(&mut prev, c);
            let ident = c.is_ascii_alphanumeric() || c == '_';
            if ident && depth == 0 {
                start.get_or_insert(i);
                continue;
            }
            if let Some(from) = start.take() {
                let word = &name[from..i];
                if word != "closure" {
                    before = last;
                    last = Some(word);
                }
            }
            match c {
                '<' => depth += 1,
                // Not the arrow of a function type's return.
                '>' if after != '-' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        match (before, last) {
            (Some(b), Some(l)) => write!(out, "{b}::{l}"),
            (None, Some(l)) => out.write_str(l),
            _ => out.write_str(name),
        }
    }
}

/// A lock's guard whose hold is recorded when it drops (if metering was
/// on when it was taken).
pub(crate) struct Metered<'a, G> {
    guard: G,
    since: Option<(&'a LockMeter, Ktime, &'static str)>,
}

impl<G: Deref> Deref for Metered<'_, G> {
    type Target = G::Target;

    fn deref(&self) -> &G::Target {
        &self.guard
    }
}

impl<G: DerefMut> DerefMut for Metered<'_, G> {
    fn deref_mut(&mut self) -> &mut G::Target {
        &mut self.guard
    }
}

impl<G> Drop for Metered<'_, G> {
    fn drop(&mut self) {
        // Timed before the guard's own drop releases the lock (the
        // release itself is not counted).
        if let Some((meter, since, by)) = self.since {
            meter.record_hold(ns_between(since, Ktime::ktime_get()), by);
        }
    }
}

/// The guard type of the endpoint's lock, metered.
pub(crate) type MeteredTaskGuard<'a, T> = Metered<'a, TaskSpinGuard<'a, T>>;
