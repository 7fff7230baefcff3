// SPDX-License-Identifier: GPL-2.0

//! The address handles of one MAD agent's sends: the core's [`AhCache`]
//! (which handle a send on a path shares, when one is given back) under
//! an irq-safe lock, with the handles created and destroyed outside it.

use crate::bindings;
use crate::proto::cm::ah_cache::{AhCache, Freshness, Inserted, Lookup};
use crate::rdma::device::Device;
use crate::rdma::mad_path::{reply_path_reuse_ms, MadPath};
use crate::rdma::netwatch::generation;
use crate::rdma::sync::IrqSpinLock;
use crate::rdma::timer::now_ms;
use core::ptr::NonNull;
use kernel::error::from_err_ptr;
use kernel::prelude::*;

/// An address handle the cache keeps (compared by identity only).
#[derive(Clone, Copy)]
struct KeptAh(NonNull<bindings::ib_ah>);

/// An address handle a send holds: in a slot of the cache, or its own.
pub(crate) struct HeldAh {
    ah: NonNull<bindings::ib_ah>,
    slot: Option<usize>,
}

impl HeldAh {
    /// The handle, for the send buffer.
    pub(crate) fn as_ptr(&self) -> *mut bindings::ib_ah {
        self.ah.as_ptr()
    }

    /// What the send buffer keeps to give the handle back (0: its own,
    /// else the slot + 1).
    pub(crate) fn token(&self) -> usize {
        self.slot.map_or(0, |s| s + 1)
    }

    /// The held handle a send buffer kept with [`Self::token`]; `None` if
    /// it has no handle.
    pub(crate) fn from_token(ah: *mut bindings::ib_ah, token: usize) -> Option<Self> {
        Some(HeldAh {
            ah: NonNull::new(ah)?,
            slot: token.checked_sub(1),
        })
    }
}

/// The kept handles of one agent.
///
/// INVARIANT: every handle in the cache (in its slots or retired), and
/// every [`HeldAh`] it gave out, is a live address handle on the agent's
/// PD that only the cache (or, for a send's own, that send) destroys.
#[pin_data]
pub(crate) struct MadAhs {
    #[pin]
    kept: IrqSpinLock<AhCache<MadPath, KeptAh>>,
}

// SAFETY: the handles are shared by the agent's sends, which ib_mad runs
// on any CPU; they are only compared, handed to ib_mad, and destroyed once.
unsafe impl Send for KeptAh {}

impl MadAhs {
    /// No kept handles.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(MadAhs {
            kept <- IrqSpinLock::new(
                AhCache::new(),
                kernel::c_str!("rcm::mad_ahs"),
                kernel::static_lock_class!(),
            ),
        })
    }

    fn freshness() -> Freshness {
        Freshness {
            now_ms: now_ms(),
            generation: generation(),
            max_age_ms: reply_path_reuse_ms(),
        }
    }

    /// A handle for a send on `path`: a fresh kept one, else a new one.
    /// May sleep (creating handles, and destroying those the retired had
    /// no room for).
    ///
    /// # Safety
    ///
    /// `pd` is the agent's PD, alive for the call.
    pub(crate) unsafe fn get(&self, pd: *mut bindings::ib_pd, path: &MadPath) -> Result<HeldAh> {
        let stale = match self.kept.lock().lookup(path, &Self::freshness()) {
            Lookup::Hit { slot, ah } => {
                return Ok(HeldAh {
                    ah: ah.0,
                    slot: Some(slot),
                })
            }
            Lookup::Miss { stale } => stale,
        };
        for ah in stale {
            destroy(ah.0, true);
        }
        let mut attr = bindings::rdma_ah_attr::default();
        // SAFETY: per this function's contract the PD and its device are
        // alive for the call.
        path.fill_ah_attr(&unsafe { Device::from_raw((*pd).device) }, &mut attr);
        // SAFETY: as above; `attr` is ours.
        let ah = unsafe {
            bindings::rdma_create_ah(
                pd,
                &mut attr,
                bindings::rdma_create_ah_flags_RDMA_CREATE_AH_SLEEPABLE,
            )
        };
        let ah = match from_err_ptr(ah).and_then(|ah| NonNull::new(ah).ok_or(ENOMEM)) {
            Ok(ah) => ah,
            Err(e) => {
                // No send of this call completes to destroy what its
                // lookup retired: those go now.
                let retired = self.kept.lock().take_retired();
                for old in retired {
                    destroy(old.0, true);
                }
                return Err(e);
            }
        };
        // INVARIANT: a new handle, on the agent's PD, kept or the send's.
        let Inserted { slot, evicted } =
            self.kept
                .lock()
                .insert(*path, KeptAh(ah), &Self::freshness());
        if let Some(old) = evicted {
            destroy(old.0, true);
        }
        Ok(HeldAh { ah, slot })
    }

    /// A send's handle given back, at its completion or its failure,
    /// with the retired handles (never sleeps): what left the cache is
    /// destroyed here.
    pub(crate) fn put(&self, held: HeldAh) {
        let (gone, retired) = {
            let mut kept = self.kept.lock();
            let gone = match held.slot {
                None => Some(held.ah),
                Some(slot) => kept.put(slot, &Self::freshness()).map(|ah| ah.0),
            };
            (gone, kept.take_retired())
        };
        if let Some(ah) = gone {
            destroy(ah, false);
        }
        for ah in retired {
            destroy(ah.0, false);
        }
    }

    /// Destroys every kept handle: the agent is unregistered, so no send
    /// holds one any more.
    pub(crate) fn clear(&self) {
        let (gone, retired, held) = self.kept.lock().clear();
        if held {
            pr_warn!("rcm: an address handle outlived its MAD agent's sends\n");
        }
        for ah in Iterator::chain(gone.into_iter(), retired) {
            destroy(ah.0, true);
        }
    }
}

/// Destroys a handle nobody holds any more (`sleepable`: the caller may
/// sleep).
fn destroy(ah: NonNull<bindings::ib_ah>, sleepable: bool) {
    let flags = if sleepable {
        bindings::rdma_destroy_ah_flags_RDMA_DESTROY_AH_SLEEPABLE
    } else {
        0
    };
    // SAFETY: the handle is live and no longer given out (type invariant
    // of `MadAhs`); a kernel handle has no user data.
    let _ = unsafe { bindings::rdma_destroy_ah_user(ah.as_ptr(), flags, core::ptr::null_mut()) };
}
