// SPDX-License-Identifier: GPL-2.0

//! Storage the CM's tables are built on, supplied by whoever embeds the
//! core: the host tests use `BTreeMap` and `Vec`, rcm.ko the kernel's
//! `RBTree` and chunks of `KVec` with fallible allocation. The core itself
//! never allocates.
//!
//! Only two operations may allocate, and both are at points where the
//! caller can still fail cleanly (before any state has changed):
//! [`OrderedMap::try_insert`] and [`SlotVec::try_grow`]. Everything the state machine does in the
//! middle of a transition ([`OrderedMap::rekey`], `remove`, `get_mut`) must
//! not allocate, so a transition either happens whole or not at all.

/// The caller's allocator refused memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoMemory;

/// Why [`OrderedMap::try_insert`] did not insert.
#[derive(Debug, PartialEq, Eq)]
pub enum InsertError<V> {
    /// The key is present; the value is handed back.
    Occupied(V),
    /// No memory for a new entry; the value is handed back.
    NoMemory(V),
}

impl<V> InsertError<V> {
    /// The value that was not inserted.
    pub fn into_value(self) -> V {
        match self {
            InsertError::Occupied(v) | InsertError::NoMemory(v) => v,
        }
    }
}

/// An ordered map with fallible insertion.
pub trait OrderedMap<K: Ord + Copy, V> {
    /// An empty map.
    fn new_empty() -> Self;
    /// The value for `key`.
    fn get(&self, key: &K) -> Option<&V>;
    /// The value for `key`, mutably.
    fn get_mut(&mut self, key: &K) -> Option<&mut V>;
    /// Inserts a new entry; never replaces one.
    fn try_insert(&mut self, key: K, value: V) -> Result<(), InsertError<V>>;
    /// Removes and returns the entry for `key`.
    fn remove(&mut self, key: &K) -> Option<V>;
    /// Removes the entry for `key`, handing `f` its value before it is
    /// dropped (nothing of it is moved out).
    fn remove_with<R>(&mut self, key: &K, f: impl FnOnce(&V) -> R) -> Option<R>;
    /// `f` of the value for `key`, which may change it; the entry is
    /// removed if `f` says so (one walk where a `get_mut` and a `remove`
    /// take two).
    fn update_with<R>(&mut self, key: &K, f: impl FnOnce(&mut V) -> (R, bool)) -> Option<R>;
    /// Moves the entry at `old` to `new` without allocating (the value is
    /// cloned so that an implementation can re-use the entry's memory).
    /// Returns false (and changes nothing) if `old` is absent or `new` is
    /// present.
    fn rekey(&mut self, old: &K, new: K) -> bool
    where
        V: Clone;
    /// The smallest key.
    fn first_key(&self) -> Option<K>;
    /// The smallest key not below `from` (`&mut` because the kernel's
    /// tree seeks with a cursor).
    fn first_key_from(&mut self, from: &K) -> Option<K>;
    /// `f` of the entry of the smallest key not below `from` (one walk
    /// where [`Self::first_key_from`] and a `get` take two).
    fn first_entry_with<R>(&mut self, from: &K, f: impl FnOnce(&K, &V) -> R) -> Option<R>;
    /// Every key in order, O(1) amortized per step.
    fn keys(&self) -> impl Iterator<Item = K> + '_;
    /// Number of entries.
    fn len(&self) -> usize;
    /// Whether the map is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A growable array addressed by index, which never shrinks.
pub trait SlotVec<T> {
    /// An empty array.
    fn new_empty() -> Self;
    /// Number of elements.
    fn len(&self) -> usize;
    /// Whether there is none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The element at `index`.
    fn get(&self, index: usize) -> Option<&T>;
    /// The element at `index`, mutably.
    fn get_mut(&mut self, index: usize) -> Option<&mut T>;
    /// Appends at least one element made by `make` (how many is the
    /// implementation's allocation unit), or none and `NoMemory`.
    fn try_grow(&mut self, make: impl FnMut() -> T) -> Result<(), NoMemory>;
    /// The element at `index`, mutably, the array grown first (by
    /// elements `make` makes) if it is shorter.
    fn get_mut_growing(
        &mut self,
        index: usize,
        mut make: impl FnMut() -> T,
    ) -> Result<&mut T, NoMemory> {
        while self.len() <= index {
            self.try_grow(&mut make)?;
        }
        self.get_mut(index).ok_or(NoMemory)
    }
}

/// The family of maps an [`Endpoint`](super::Endpoint) is built from.
pub trait Collections {
    /// An ordered map from `K` to `V`.
    type Map<K: Ord + Copy, V>: OrderedMap<K, V>;
    /// A growable array of `T`.
    type Vec<T>: SlotVec<T>;
}

/// `BTreeMap`-backed collections for host tests, simulation, fuzzing and
/// benchmarks (cargo feature `std`).
#[cfg(feature = "std")]
pub mod btree {
    extern crate std;
    use super::{Collections, InsertError, NoMemory, OrderedMap, SlotVec};
    use std::collections::btree_map::{BTreeMap, Entry};
    use std::vec::Vec;

    use std::cell::Cell;

    std::thread_local! {
        static FAILURE: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
    }

    /// Makes roughly one insert in `one_in` fail with `NoMemory` on this
    /// thread (0 turns failures off), from a generator seeded with `seed`,
    /// so that tests reach the out-of-memory paths reproducibly.
    pub fn inject_insert_failures(one_in: u64, seed: u64) {
        FAILURE.with(|f| f.set((one_in, seed | 1)));
    }

    fn insert_should_fail() -> bool {
        FAILURE.with(|f| {
            let (one_in, mut x) = f.get();
            if one_in == 0 {
                return false;
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            f.set((one_in, x));
            x % one_in == 0
        })
    }

    /// [`Collections`] on `std::collections::BTreeMap`.
    pub struct Std;

    /// A `BTreeMap` whose inserts can be made to fail (see
    /// [`inject_insert_failures`]).
    pub struct StdMap<K, V> {
        map: BTreeMap<K, V>,
    }

    impl Collections for Std {
        type Map<K: Ord + Copy, V> = StdMap<K, V>;
        type Vec<T> = StdVec<T>;
    }

    /// A `Vec` that grows by half its size (at least 64), failing as
    /// inserts do under [`inject_insert_failures`].
    pub struct StdVec<T> {
        items: Vec<T>,
    }

    impl<T> SlotVec<T> for StdVec<T> {
        fn new_empty() -> Self {
            StdVec { items: Vec::new() }
        }
        fn len(&self) -> usize {
            self.items.len()
        }
        fn get(&self, index: usize) -> Option<&T> {
            self.items.get(index)
        }
        fn get_mut(&mut self, index: usize) -> Option<&mut T> {
            self.items.get_mut(index)
        }
        fn try_grow(&mut self, mut make: impl FnMut() -> T) -> Result<(), NoMemory> {
            let more = (self.items.len() / 2).max(64);
            if insert_should_fail() || self.items.try_reserve(more).is_err() {
                return Err(NoMemory);
            }
            self.items
                .extend(core::iter::repeat_with(&mut make).take(more));
            Ok(())
        }
    }

    impl<K: Ord + Copy, V> OrderedMap<K, V> for StdMap<K, V> {
        fn new_empty() -> Self {
            StdMap {
                map: BTreeMap::new(),
            }
        }
        fn get(&self, key: &K) -> Option<&V> {
            self.map.get(key)
        }
        fn get_mut(&mut self, key: &K) -> Option<&mut V> {
            self.map.get_mut(key)
        }
        fn try_insert(&mut self, key: K, value: V) -> Result<(), InsertError<V>> {
            if insert_should_fail() {
                return Err(InsertError::NoMemory(value));
            }
            match self.map.entry(key) {
                Entry::Occupied(_) => Err(InsertError::Occupied(value)),
                Entry::Vacant(v) => {
                    v.insert(value);
                    Ok(())
                }
            }
        }
        fn remove(&mut self, key: &K) -> Option<V> {
            self.map.remove(key)
        }
        fn remove_with<R>(&mut self, key: &K, f: impl FnOnce(&V) -> R) -> Option<R> {
            self.map.remove(key).map(|v| f(&v))
        }
        fn update_with<R>(&mut self, key: &K, f: impl FnOnce(&mut V) -> (R, bool)) -> Option<R> {
            let (r, remove) = f(self.map.get_mut(key)?);
            if remove {
                self.map.remove(key);
            }
            Some(r)
        }
        fn rekey(&mut self, old: &K, new: K) -> bool
        where
            V: Clone,
        {
            let Some(value) = self.map.remove(old) else {
                return false;
            };
            match self.map.entry(new) {
                Entry::Vacant(v) => {
                    v.insert(value);
                    true
                }
                Entry::Occupied(_) => {
                    self.map.insert(*old, value);
                    false
                }
            }
        }
        fn first_key(&self) -> Option<K> {
            self.map.keys().next().copied()
        }
        fn first_key_from(&mut self, from: &K) -> Option<K> {
            self.map.range(from..).next().map(|(k, _)| *k)
        }
        fn first_entry_with<R>(&mut self, from: &K, f: impl FnOnce(&K, &V) -> R) -> Option<R> {
            self.map.range(from..).next().map(|(k, v)| f(k, v))
        }
        fn keys(&self) -> impl Iterator<Item = K> + '_ {
            self.map.keys().copied()
        }
        fn len(&self) -> usize {
            self.map.len()
        }
    }
}
