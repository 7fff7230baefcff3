// SPDX-License-Identifier: GPL-2.0

//! The protocol core's tables on the kernel's red-black tree and on
//! chunked vectors.
//!
//! Allocation happens only in `try_insert` (a node reservation taken
//! before anything changes) and `try_grow` (one more chunk), both
//! `GFP_ATOMIC`, as the endpoint is used under an irq-safe spinlock;
//! `rekey` re-uses the removed node's memory.

use crate::proto::cm::store::{Collections, InsertError, NoMemory, OrderedMap, SlotVec};
use kernel::prelude::*;
use kernel::rbtree::{RBTree, RBTreeNodeReservation};

/// [`Collections`] for rcm.ko.
pub(crate) struct KernelCollections;

impl Collections for KernelCollections {
    type Map<K: Ord + Copy, V> = KernelMap<K, V>;
    type Vec<T> = ChunkedVec<T>;
}

/// Bytes per chunk of a [`ChunkedVec`]: one page, so that growing needs
/// no high-order atomic allocation and elements never move.
const CHUNK_BYTES: usize = 4096;

/// A growable array in page-sized chunks (at least one element each).
pub(crate) struct ChunkedVec<T> {
    chunks: KVec<KVec<T>>,
    len: usize,
}

impl<T> ChunkedVec<T> {
    const PER_CHUNK: usize =
        if core::mem::size_of::<T>() == 0 || core::mem::size_of::<T>() >= CHUNK_BYTES {
            1
        } else {
            CHUNK_BYTES / core::mem::size_of::<T>()
        };
}

impl<T> SlotVec<T> for ChunkedVec<T> {
    fn new_empty() -> Self {
        ChunkedVec {
            chunks: KVec::new(),
            len: 0,
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn get(&self, index: usize) -> Option<&T> {
        self.chunks
            .get(index / Self::PER_CHUNK)?
            .get(index % Self::PER_CHUNK)
    }

    fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        self.chunks
            .get_mut(index / Self::PER_CHUNK)?
            .get_mut(index % Self::PER_CHUNK)
    }

    fn try_grow(&mut self, mut make: impl FnMut() -> T) -> Result<(), NoMemory> {
        self.chunks.reserve(1, GFP_ATOMIC).map_err(|_| NoMemory)?;
        let mut chunk = KVec::with_capacity(Self::PER_CHUNK, GFP_ATOMIC).map_err(|_| NoMemory)?;
        for _ in 0..Self::PER_CHUNK {
            // Cannot fail: the capacity is reserved.
            chunk.push(make(), GFP_ATOMIC).map_err(|_| NoMemory)?;
        }
        self.chunks.push(chunk, GFP_ATOMIC).map_err(|_| NoMemory)?;
        self.len += Self::PER_CHUNK;
        Ok(())
    }
}

/// An `RBTree` that counts its entries.
pub(crate) struct KernelMap<K, V> {
    tree: RBTree<K, V>,
    len: usize,
}

impl<K: Ord + Copy, V> OrderedMap<K, V> for KernelMap<K, V> {
    fn new_empty() -> Self {
        KernelMap {
            tree: RBTree::new(),
            len: 0,
        }
    }

    fn get(&self, key: &K) -> Option<&V> {
        self.tree.get(key)
    }

    fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.tree.get_mut(key)
    }

    fn try_insert(&mut self, key: K, value: V) -> Result<(), InsertError<V>> {
        if self.tree.get(&key).is_some() {
            return Err(InsertError::Occupied(value));
        }
        let reservation = match RBTreeNodeReservation::new(GFP_ATOMIC) {
            Ok(r) => r,
            Err(_) => return Err(InsertError::NoMemory(value)),
        };
        self.tree.insert(reservation.into_node(key, value));
        self.len += 1;
        Ok(())
    }

    fn remove(&mut self, key: &K) -> Option<V> {
        let value = self.tree.remove(key)?;
        self.len -= 1;
        Some(value)
    }

    fn rekey(&mut self, old: &K, new: K) -> bool
    where
        V: Clone,
    {
        let Some(entry) = self.tree.find_mut(old) else {
            return false;
        };
        let value = entry.get().clone();
        let node = entry.remove_node();
        let present = self.tree.get(&new).is_some();
        let key = if present { *old } else { new };
        self.tree
            .insert(node.into_reservation().into_node(key, value));
        !present
    }

    fn first_key(&self) -> Option<K> {
        self.tree.iter().next().map(|(k, _)| *k)
    }

    fn first_key_from(&mut self, from: &K) -> Option<K> {
        self.tree.cursor_lower_bound(from).map(|c| *c.current().0)
    }

    fn keys(&self) -> impl Iterator<Item = K> + '_ {
        self.tree.keys().copied()
    }

    fn len(&self) -> usize {
        self.len
    }
}
