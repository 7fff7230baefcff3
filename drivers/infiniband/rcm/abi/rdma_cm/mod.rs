// SPDX-License-Identifier: GPL-2.0

//! The rdma_cm ABI (`include/rdma/rdma_cm.h`, Linux 6.12): consumer ids
//! over the core's rdma_cm, its exports, the address and route services
//! of ib_core, the consumers' QPs and the delivery of events to their
//! handlers. `rcm_exports.c` exports the symbols; `rcm_rdma_helpers.c`
//! holds the C structures.
//!
//! Locking: an id's handler lock (`handler_mutex`, which consumers take
//! with `rdma_lock_handler`) is taken before the core's lock, never
//! while holding it; handlers run with their id's lock held and no other
//! lock, so they may call back in.

mod calls;
mod connect;
mod delivery;
mod exports;
pub(crate) mod id;
pub(crate) mod iwarp;
mod listen_rows;
mod messages;
mod multicast;
pub(crate) mod netevent;
mod qp;
pub(crate) mod resolve;
pub(crate) mod types;

use super::id_registry::IdRegistry;
use crate::bindings;
use crate::proto::cm::store::OrderedMap;
use crate::proto::rdma_cm::RdmaId;
use crate::rdma::iw_cm::IwCmId;
use crate::rdma::multicast::IgmpChange;
use crate::rdma::restrack::ListenRow;
use crate::shell::kernel_maps::KernelMap;
use crate::shell::rdma_cm::{IdMirror, KernelHost, KernelRdmaCm, RdmaService};
use core::sync::atomic::AtomicU64;
use id::RdmaIdBox;
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};

/// What the rdma_cm surface keeps: the core's rdma_cm and its consumers'
/// ids.
#[pin_data]
pub(crate) struct RdmaCmAbi {
    #[pin]
    service: RdmaService,
    /// Consumer ids by core id; each holds one reference, given up by
    /// `rdma_destroy_id` (deliveries hold their own while they run).
    #[pin]
    ids: Mutex<IdRegistry<RdmaIdBox>>,
    /// The iw_cm ids of iWARP ids besides their connections': listeners
    /// and undelivered requests, by (core id, slot).
    #[pin]
    iw_ids: Mutex<KernelMap<(u64, u32), IwCmId>>,
    /// Wildcard listeners' resource-tracking rows, by (core id, device).
    #[pin]
    listen_rows: Mutex<KernelMap<(u64, u32), ListenRow>>,
    /// IGMP joins and leaves the core asked for, in its order, applied
    /// once its lock is released (see [`multicast`]).
    #[pin]
    igmp_changes: Mutex<KVec<IgmpChange>>,
    /// Held while changes are applied, so that they apply in order.
    #[pin]
    igmp_applying: Mutex<()>,
    /// Ids destroyed so far: a device removal sleeps until it changes
    /// (its wake-up check may not take a lock).
    destroyed: AtomicU64,
    /// Destroys between the core's and the id's letting go of its device
    /// (a removal waits for none to be left).
    detaching: AtomicU64,
}

impl RdmaCmAbi {
    /// No ids.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(RdmaCmAbi {
            service <- RdmaService::new(),
            ids <- new_mutex!(IdRegistry::new(), "rcm::rdma_ids"),
            iw_ids <- new_mutex!(OrderedMap::new_empty(), "rcm::rdma_iw_ids"),
            listen_rows <- new_mutex!(OrderedMap::new_empty(), "rcm::rdma_listen_rows"),
            igmp_changes <- new_mutex!(KVec::new(), "rcm::rdma_igmp_changes"),
            igmp_applying <- new_mutex!((), "rcm::rdma_igmp_applying"),
            destroyed: AtomicU64::new(0),
            detaching: AtomicU64::new(0),
        })
    }

    /// The meter of the core's lock.
    pub(crate) fn lock_meter(&self) -> &crate::shell::lock_meter::LockMeter {
        self.service.lock_meter()
    }

    /// Reads the core.
    pub(crate) fn read<R>(&self, f: impl FnOnce(&KernelRdmaCm) -> R) -> R {
        self.service.read(f)
    }

    /// The registered box of a core id, with a reference.
    pub(crate) fn id_box(&self, id: RdmaId) -> Option<Arc<RdmaIdBox>> {
        self.ids.lock().get(id.0).cloned()
    }

    /// Registers a box.
    fn register(&self, b: Arc<RdmaIdBox>) -> Result {
        self.ids.lock().insert(b)
    }

    /// Takes a box out of the registry (the registry's reference).
    fn unregister(&self, id: RdmaId) -> Option<Arc<RdmaIdBox>> {
        self.ids.lock().remove(id.0)
    }

    /// Mirrors the core's view of an id (state, addresses) into the
    /// fields its consumer and ib_core read.
    fn sync(&self, b: &RdmaIdBox) {
        self.read(|core| mirror(core, b));
    }
}

impl IdMirror for RdmaCmAbi {
    fn mirror(&self, core: &KernelRdmaCm, id: RdmaId) {
        // The registry keeps its reference while the core has the id (its
        // destroy unregisters after the core's), so this one is not the
        // last: no id is freed under the core's lock.
        if let Some(b) = self.id_box(id) {
            mirror(core, &b);
        }
    }
}

/// [`RdmaCmAbi::sync`] under a hold of the core's lock the caller has:
/// mirrors land in the order of the core's changes, and a call that ends
/// with one takes the lock once for both.
fn mirror(core: &KernelRdmaCm, b: &RdmaIdBox) {
    if let Some(r) = core.get(b.core) {
        b.set_state(r.state());
        b.write_addrs(r.src(), r.dst());
        b.set_comm(r.cm());
    }
}

/// [`mirror`] as the last step of a call in `host`, which is told, so
/// that its mirror of the ids given events passes over `b`'s.
fn mirror_at_end(core: &KernelRdmaCm, host: &mut KernelHost<'_, RdmaCmAbi>, b: &RdmaIdBox) {
    mirror(core, b);
    host.mirrored(b.core);
}

/// Takes out of `map` (keyed by (id, column)) every entry of `column`,
/// looking once per id rather than at every entry each time.
fn take_column<V>(map: &mut KernelMap<(u64, u32), V>, column: u32, out: &mut KVec<V>) {
    let mut from = (0, column);
    while let Some(k) = map.first_key_from(&from) {
        if k.1 == column {
            if let Some(v) = map.remove(&k) {
                // Without room to hand it out, dropped here.
                let _ = out.push(v, GFP_KERNEL);
            }
        }
        from = match (k.1 < column, k.0.checked_add(1)) {
            (true, _) => (k.0, column),
            (false, Some(next)) => (next, column),
            (false, None) => break,
        };
    }
}

/// The core's name for a network namespace: its address.
pub(crate) fn net_id(net: *mut bindings::net) -> u64 {
    net as usize as u64
}
