// SPDX-License-Identifier: GPL-2.0

//! The consumers' id boxes by core id: one pointer per slot of the core's
//! id table, in page-sized chunks, rather than a tree node per id (a
//! 64-byte allocation each).

use super::id::RdmaIdBox;
use crate::proto::cm::store::{OrderedMap, SlotVec};
use crate::proto::rdma_cm::RdmaId;
use crate::shell::kernel_maps::{Accounted, ChunkedVec, KernelMap};
use kernel::prelude::*;
use kernel::sync::Arc;

/// The registry.
///
/// INVARIANT: a box is in `by_slot` at its core id's slot, or in
/// `overflow` under its core id, never both.
pub(crate) struct IdRegistry {
    by_slot: ChunkedVec<Option<Arc<RdmaIdBox>>, Accounted>,
    /// Boxes whose slot still held another's: the core frees an id's slot
    /// when it destroys the id, a moment before the box is unregistered,
    /// so a new id may get the slot first.
    overflow: KernelMap<u64, Arc<RdmaIdBox>, Accounted>,
}

impl IdRegistry {
    /// No box.
    pub(crate) fn new() -> Self {
        IdRegistry {
            by_slot: SlotVec::new_empty(),
            overflow: OrderedMap::new_empty(),
        }
    }

    /// The box of `id`.
    pub(crate) fn get(&self, id: RdmaId) -> Option<&Arc<RdmaIdBox>> {
        match self.by_slot.get(id.slot()) {
            Some(Some(b)) if b.core == id => Some(b),
            _ => self.overflow.get(&id.0),
        }
    }

    /// Registers `b` under its core id (not registered yet).
    pub(crate) fn insert(&mut self, b: Arc<RdmaIdBox>) -> Result {
        let slot = b.core.slot();
        while self.by_slot.len() <= slot {
            self.by_slot.try_grow(|| None).map_err(|_| ENOMEM)?;
        }
        match self.by_slot.get_mut(slot) {
            Some(entry @ None) => {
                *entry = Some(b);
                Ok(())
            }
            _ => self.overflow.try_insert(b.core.0, b).map_err(|_| ENOMEM),
        }
    }

    /// Takes the box of `id` out.
    pub(crate) fn remove(&mut self, id: RdmaId) -> Option<Arc<RdmaIdBox>> {
        match self.by_slot.get_mut(id.slot()) {
            Some(entry) if entry.as_ref().is_some_and(|b| b.core == id) => entry.take(),
            _ => self.overflow.remove(&id.0),
        }
    }
}
