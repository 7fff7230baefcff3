// SPDX-License-Identifier: GPL-2.0

//! Storage the CM's tables are built on, supplied by whoever embeds the
//! core: the host tests use `BTreeMap`, rcm.ko the kernel's `RBTree` with
//! fallible allocation. The core itself never allocates.
//!
//! Only two operations may allocate, and both are at points where the
//! caller can still fail cleanly (before any state has changed):
//! [`OrderedMap::try_insert`]. Everything the state machine does in the
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
    /// Every key in order, O(1) amortized per step.
    fn keys(&self) -> impl Iterator<Item = K> + '_;
    /// Number of entries.
    fn len(&self) -> usize;
    /// Whether the map is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The family of maps an [`Endpoint`](super::Endpoint) is built from.
pub trait Collections {
    /// An ordered map from `K` to `V`.
    type Map<K: Ord + Copy, V>: OrderedMap<K, V>;
}

/// `BTreeMap`-backed collections for host tests, simulation, fuzzing and
/// benchmarks (cargo feature `std`).
#[cfg(feature = "std")]
pub mod btree {
    extern crate std;
    use super::{Collections, InsertError, OrderedMap};
    use std::collections::btree_map::{BTreeMap, Entry};

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
        fn rekey(&mut self, old: &K, new: K) -> bool
        where
            V: Clone,
        {
            if self.map.contains_key(&new) {
                return false;
            }
            match self.map.remove(old) {
                Some(v) => {
                    self.map.insert(new, v);
                    true
                }
                None => false,
            }
        }
        fn first_key(&self) -> Option<K> {
            self.map.keys().next().copied()
        }
        fn first_key_from(&mut self, from: &K) -> Option<K> {
            self.map.range(from..).next().map(|(k, _)| *k)
        }
        fn keys(&self) -> impl Iterator<Item = K> + '_ {
            self.map.keys().copied()
        }
        fn len(&self) -> usize {
            self.map.len()
        }
    }
}
