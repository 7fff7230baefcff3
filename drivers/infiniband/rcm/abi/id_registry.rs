// SPDX-License-Identifier: GPL-2.0

//! The one model of a consumer's id, for both surfaces: a box the consumer
//! holds a pointer into, registered under the core id it stands for. The
//! registry holds one reference per id, taken out by the consumer's
//! destroy; a delivery takes its own while its handler runs.
//!
//! Ids whose core table gives them a dense slot (rdma_cm's) are found by
//! that slot in page-sized chunks of pointers rather than a tree node per
//! id (a 64-byte allocation each); the rest (ib_cm's, whose ids are
//! scrambled) by key in an ordered map.

use crate::proto::cm::store::{OrderedMap, SlotVec};
use crate::shell::kernel_maps::{Accounted, ChunkedVec, KernelMap};
use kernel::prelude::*;
use kernel::sync::Arc;

/// What a registered box tells the registry about its core id.
pub(crate) trait RegisteredId {
    /// The core id as a number (distinct among live ids).
    fn key(&self) -> u64;
    /// The dense slot the core's table gives the id of `key`, if its ids
    /// have one.
    fn slot_of(key: u64) -> Option<usize>;
}

/// The registry.
///
/// INVARIANT: a box is in `by_slot` at its slot, or in `by_key` under its
/// key, never both.
pub(crate) struct IdRegistry<B: RegisteredId> {
    by_slot: ChunkedVec<Option<Arc<B>>, Accounted>,
    /// Boxes without a slot, and boxes whose slot still held another's:
    /// the core frees an id's slot when it destroys the id, a moment
    /// before the box is unregistered, so a new id may get the slot first.
    by_key: KernelMap<u64, Arc<B>, Accounted>,
}

impl<B: RegisteredId> IdRegistry<B> {
    /// No box.
    pub(crate) fn new() -> Self {
        IdRegistry {
            by_slot: SlotVec::new_empty(),
            by_key: OrderedMap::new_empty(),
        }
    }

    /// The box registered under `key`.
    pub(crate) fn get(&self, key: u64) -> Option<&Arc<B>> {
        match B::slot_of(key).and_then(|s| self.by_slot.get(s)) {
            Some(Some(b)) if b.key() == key => Some(b),
            _ => self.by_key.get(&key),
        }
    }

    /// Registers `b` (not registered yet).
    pub(crate) fn insert(&mut self, b: Arc<B>) -> Result {
        if let Some(slot) = B::slot_of(b.key()) {
            let entry = self
                .by_slot
                .get_mut_growing(slot, || None)
                .map_err(|_| ENOMEM)?;
            if entry.is_none() {
                *entry = Some(b);
                return Ok(());
            }
        }
        self.by_key.try_insert(b.key(), b).map_err(|_| ENOMEM)
    }

    /// Takes the box registered under `key` out.
    pub(crate) fn remove(&mut self, key: u64) -> Option<Arc<B>> {
        match B::slot_of(key).and_then(|s| self.by_slot.get_mut(s)) {
            Some(entry) if entry.as_ref().is_some_and(|b| b.key() == key) => entry.take(),
            _ => self.by_key.remove(&key),
        }
    }
}
