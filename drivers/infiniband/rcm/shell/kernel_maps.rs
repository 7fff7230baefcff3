// SPDX-License-Identifier: GPL-2.0

//! The protocol core's tables on the kernel's red-black tree and on
//! chunked vectors.
//!
//! Allocation happens only in `try_insert` (a node reservation taken
//! before anything changes) and `try_grow` (one more chunk), with the
//! flags of the table's [`Alloc`]: `GFP_ATOMIC` for the CM endpoint, used
//! under a spinlock; `GFP_KERNEL_ACCOUNT` for the tables users'
//! calls grow under a mutex (rdma_cm's ids, the rdma_ucm device's
//! contexts and events), so that a user's ids count against its memory
//! cgroup rather than against everyone. `rekey` re-uses the removed
//! node's memory.

use crate::proto::cm::store::{Collections, InsertError, NoMemory, OrderedMap, SlotVec};
use core::marker::PhantomData;
use kernel::alloc::Flags;
use kernel::prelude::*;
use kernel::rbtree::{Entry, RBTree, RBTreeNodeReservation};

/// How a table allocates.
pub(crate) trait Alloc {
    /// The flags of every allocation.
    const FLAGS: Flags;
}

/// For tables used under a spinlock.
pub(crate) struct Atomic;

impl Alloc for Atomic {
    const FLAGS: Flags = GFP_ATOMIC;
}

/// For tables grown by users' calls, in process context: charged to the
/// caller's memory cgroup.
pub(crate) struct Accounted;

impl Alloc for Accounted {
    const FLAGS: Flags = GFP_KERNEL_ACCOUNT;
}

/// [`Collections`] for rcm.ko, allocating as `A` says.
pub(crate) struct KernelCollections<A: Alloc = Atomic>(PhantomData<A>);

impl<A: Alloc> Collections for KernelCollections<A> {
    type Map<K: Ord + Copy, V> = KernelMap<K, V, A>;
    type Vec<T> = ChunkedVec<T, A>;
}

/// Bytes per chunk of a [`ChunkedVec`]: one page, so that growing needs
/// no high-order atomic allocation and elements never move.
const CHUNK_BYTES: usize = 4096;

/// A growable array in page-sized chunks (at least one element each).
/// The array of chunks may outgrow what kmalloc can give (4 MiB: about
/// 2.5 million rdma_cm ids), so it falls back to vmalloc where the flags
/// allow sleeping; with `GFP_ATOMIC` it stays kmalloc's.
pub(crate) struct ChunkedVec<T, A: Alloc = Atomic> {
    chunks: KVVec<KVec<T>>,
    len: usize,
    _alloc: PhantomData<A>,
}

impl<T, A: Alloc> ChunkedVec<T, A> {
    const PER_CHUNK: usize =
        if core::mem::size_of::<T>() == 0 || core::mem::size_of::<T>() >= CHUNK_BYTES {
            1
        } else {
            CHUNK_BYTES / core::mem::size_of::<T>()
        };
}

impl<T, A: Alloc> SlotVec<T> for ChunkedVec<T, A> {
    fn new_empty() -> Self {
        ChunkedVec {
            chunks: KVVec::new(),
            len: 0,
            _alloc: PhantomData,
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
        self.chunks.reserve(1, A::FLAGS).map_err(|_| NoMemory)?;
        let mut chunk = KVec::with_capacity(Self::PER_CHUNK, A::FLAGS).map_err(|_| NoMemory)?;
        for _ in 0..Self::PER_CHUNK {
            // Cannot fail: the capacity is reserved.
            chunk.push(make(), A::FLAGS).map_err(|_| NoMemory)?;
        }
        self.chunks.push(chunk, A::FLAGS).map_err(|_| NoMemory)?;
        self.len += Self::PER_CHUNK;
        Ok(())
    }
}

/// An `RBTree` that counts its entries and keeps the node of the last
/// entry removed in place (`remove_with`, `update_with`) for the next
/// insert: the endpoint's maps churn an entry per request or id (a peer's
/// window, an id's deadline) under its lock, where each allocation is an
/// atomic one.
pub(crate) struct KernelMap<K, V, A: Alloc = Atomic> {
    tree: RBTree<K, V>,
    len: usize,
    spare: Option<RBTreeNodeReservation<K, V>>,
    _alloc: PhantomData<A>,
}

impl<K: Ord + Copy, V, A: Alloc> OrderedMap<K, V> for KernelMap<K, V, A> {
    fn new_empty() -> Self {
        KernelMap {
            tree: RBTree::new(),
            len: 0,
            spare: None,
            _alloc: PhantomData,
        }
    }

    fn get(&self, key: &K) -> Option<&V> {
        self.tree.get(key)
    }

    fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.tree.get_mut(key)
    }

    fn try_insert(&mut self, key: K, value: V) -> Result<(), InsertError<V>> {
        // The node first, then one walk that finds the key or its place
        // (keys are rarely present: a present one keeps the node spare).
        let node = match self.spare.take() {
            Some(spare) => Ok(spare),
            None => RBTreeNodeReservation::new(A::FLAGS),
        };
        let Ok(reservation) = node else {
            return Err(match self.tree.get(&key) {
                Some(_) => InsertError::Occupied(value),
                None => InsertError::NoMemory(value),
            });
        };
        match self.tree.entry(key) {
            Entry::Occupied(_) => {
                self.spare = Some(reservation);
                Err(InsertError::Occupied(value))
            }
            Entry::Vacant(place) => {
                place.insert(value, reservation);
                self.len += 1;
                Ok(())
            }
        }
    }

    fn remove(&mut self, key: &K) -> Option<V> {
        let value = self.tree.remove(key)?;
        self.len -= 1;
        Some(value)
    }

    fn remove_with<R>(&mut self, key: &K, f: impl FnOnce(&V) -> R) -> Option<R> {
        let entry = self.tree.find_mut(key)?;
        let r = f(entry.get());
        // The value is dropped in place; its node stays for the next insert.
        self.spare = Some(entry.remove_node().into_reservation());
        self.len -= 1;
        Some(r)
    }

    fn update_with<R>(&mut self, key: &K, f: impl FnOnce(&mut V) -> (R, bool)) -> Option<R> {
        let mut entry = self.tree.find_mut(key)?;
        let (r, remove) = f(entry.get_mut());
        if remove {
            self.spare = Some(entry.remove_node().into_reservation());
            self.len -= 1;
        }
        Some(r)
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

    fn first_entry_with<R>(&mut self, from: &K, f: impl FnOnce(&K, &V) -> R) -> Option<R> {
        self.tree.cursor_lower_bound(from).map(|c| {
            let (k, v) = c.current();
            f(k, v)
        })
    }

    fn keys(&self) -> impl Iterator<Item = K> + '_ {
        self.tree.keys().copied()
    }

    fn len(&self) -> usize {
        self.len
    }
}
