// SPDX-License-Identifier: GPL-2.0

//! The id table: every connection in a slot of a growable array, found
//! from its comm id in O(1), as the C CM finds its ids in an xarray.
//!
//! An id is `(generation << SLOT_BITS | slot) ^ operand`. Freeing a slot
//! advances its generation, and freed slots are reused oldest first, so
//! an id comes back only after its slot has been reused through every
//! generation (2^12 times for a CM's comm ids) and every other free slot
//! in between: a new id does not match an old connection a peer may
//! still remember. The operand (random per endpoint) keeps ids
//! unpredictable across boots.

use super::store::{Collections, NoMemory, SlotVec};

/// Bits of a comm id that name the slot: at most 2^20 connections per
/// endpoint (a table's default); the other 12 number its generations.
pub(crate) const COMM_SLOT_BITS: u32 = 20;
/// End of the free list (so a table has at most `u32::MAX` slots).
const NONE: u32 = u32::MAX;

/// The integer an id is: a CM's comm id is the wire's 32 bits, an
/// rdma_cm id (never on the wire) 64.
pub(crate) trait RawId: Copy + Eq {
    /// Bits of the id.
    const BITS: u32;
    /// The id of `v`, which has at most [`Self::BITS`] bits.
    fn from_u64(v: u64) -> Self;
    fn to_u64(self) -> u64;
}

impl RawId for u32 {
    const BITS: u32 = 32;
    fn from_u64(v: u64) -> Self {
        // Lossless: `v` has at most 32 bits.
        v as u32
    }
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
}

impl RawId for u64 {
    const BITS: u32 = 64;
    fn from_u64(v: u64) -> Self {
        v
    }
    fn to_u64(self) -> u64 {
        self
    }
}

/// The most slots (and so live ids) a table of `bits`-bit slots holds.
const fn max_ids(bits: u32) -> usize {
    let all = 1u64 << bits;
    if all > NONE as u64 {
        NONE as usize
    } else {
        all as usize
    }
}

const fn slot_mask(bits: u32) -> u64 {
    (1 << bits) - 1
}

/// Generations cycle through the bits above the slot's (at most 32).
const fn generation_mask(bits: u32, id_bits: u32) -> u32 {
    ((1u64 << (id_bits - bits)) - 1) as u32
}

/// The id of `slot` in `generation`.
fn encode<R: RawId>(bits: u32, slot: u32, generation: u32, operand: R) -> R {
    R::from_u64(((u64::from(generation) << bits) | u64::from(slot)) ^ operand.to_u64())
}

/// The slot of `id` in a table of `bits`-bit slots whose operand is
/// `operand`. Ids that exist at once have different slots, and a table
/// grows only when no slot is free, so slot numbers stay below the most
/// ids it ever held at once (rounded up to a chunk).
pub(crate) fn slot_of<R: RawId>(bits: u32, id: R, operand: R) -> usize {
    ((id.to_u64() ^ operand.to_u64()) & slot_mask(bits)) as usize
}

/// One slot.
enum Slot<V> {
    /// Free; `next` is the next free slot (oldest first).
    Free { generation: u32, next: u32 },
    /// Holds the value of the id with this generation.
    Used { generation: u32, value: V },
}

/// Why [`IdTable::try_insert`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TableFull {
    /// The embedding's allocator refused the slots.
    NoMemory,
    /// Every slot of the table is in use.
    NoSpace,
}

/// The id table.
///
/// INVARIANT: `free_head .. free_tail` links every `Slot::Free` exactly
/// once through `next` (`NONE` terminated, both `NONE` when there is
/// none), and `used` counts the `Slot::Used` slots.
pub(crate) struct IdTable<V, C: Collections, const SLOT_BITS: u32 = COMM_SLOT_BITS, R: RawId = u32>
{
    slots: C::Vec<Slot<V>>,
    free_head: u32,
    free_tail: u32,
    used: usize,
    operand: R,
}

impl<V, C: Collections, const SLOT_BITS: u32, R: RawId> IdTable<V, C, SLOT_BITS, R> {
    /// Generations that cycle through the id's bits above the slot's.
    const GENERATIONS: u32 = generation_mask(SLOT_BITS, R::BITS);

    /// An empty table whose ids are XORed with `operand`.
    pub(crate) fn new(operand: R) -> Self {
        IdTable {
            slots: SlotVec::new_empty(),
            free_head: NONE,
            free_tail: NONE,
            used: 0,
            operand,
        }
    }

    fn id_of(&self, slot: u32, generation: u32) -> R {
        encode(SLOT_BITS, slot, generation, self.operand)
    }

    /// (slot, generation) of an id; a generation out of range is none.
    fn decode(&self, id: R) -> (usize, u32) {
        let raw = id.to_u64() ^ self.operand.to_u64();
        let generation = u32::try_from(raw >> SLOT_BITS).unwrap_or(u32::MAX);
        ((raw & slot_mask(SLOT_BITS)) as usize, generation)
    }

    /// Number of ids in the table.
    pub(crate) fn len(&self) -> usize {
        self.used
    }

    /// The value of `id`.
    pub(crate) fn get(&self, id: R) -> Option<&V> {
        let (slot, generation) = self.decode(id);
        match self.slots.get(slot) {
            Some(Slot::Used {
                generation: g,
                value,
            }) if *g == generation => Some(value),
            _ => None,
        }
    }

    /// The value of `id`, mutably.
    pub(crate) fn get_mut(&mut self, id: R) -> Option<&mut V> {
        let (slot, generation) = self.decode(id);
        match self.slots.get_mut(slot) {
            Some(Slot::Used {
                generation: g,
                value,
            }) if *g == generation => Some(value),
            _ => None,
        }
    }

    /// Appends the embedding's next chunk of slots to the free list.
    fn grow(&mut self) -> Result<(), TableFull> {
        let first = self.slots.len();
        if first >= max_ids(SLOT_BITS) {
            return Err(TableFull::NoSpace);
        }
        self.slots
            .try_grow(|| Slot::Free {
                generation: 0,
                next: NONE,
            })
            .map_err(|NoMemory| TableFull::NoMemory)?;
        let end = self.slots.len().min(max_ids(SLOT_BITS));
        for slot in first..end {
            self.push_free(slot as u32);
        }
        Ok(())
    }

    /// Puts a free slot at the end of the free list.
    fn push_free(&mut self, slot: u32) {
        match self.slots.get_mut(self.free_tail as usize) {
            Some(Slot::Free { next, .. }) => *next = slot,
            _ => self.free_head = slot,
        }
        self.free_tail = slot;
    }

    /// Stores the value `make` builds for a new id; the id is its argument.
    pub(crate) fn try_insert(&mut self, make: impl FnOnce(R) -> V) -> Result<R, TableFull> {
        if self.free_head == NONE {
            self.grow()?;
        }
        let (slot, operand) = (self.free_head, self.operand);
        let Some(entry) = self.slots.get_mut(slot as usize) else {
            return Err(TableFull::NoSpace);
        };
        let Slot::Free {
            mut generation,
            next,
        } = *entry
        else {
            return Err(TableFull::NoSpace);
        };
        // Id 0 means "unknown" on the wire: skip the generation making it.
        if encode(SLOT_BITS, slot, generation, operand).to_u64() == 0 {
            generation = (generation + 1) & Self::GENERATIONS;
        }
        let id = encode(SLOT_BITS, slot, generation, operand);
        *entry = Slot::Used {
            generation,
            value: make(id),
        };
        self.free_head = next;
        if next == NONE {
            self.free_tail = NONE;
        }
        self.used += 1;
        Ok(id)
    }

    /// Removes `id`; its slot's next id has the next generation.
    pub(crate) fn remove(&mut self, id: R) -> Option<V> {
        let (slot, generation) = self.decode(id);
        let entry = self.slots.get_mut(slot)?;
        if !matches!(entry, Slot::Used { generation: g, .. } if *g == generation) {
            return None;
        }
        let old = core::mem::replace(
            entry,
            Slot::Free {
                generation: (generation + 1) & Self::GENERATIONS,
                next: NONE,
            },
        );
        self.used -= 1;
        self.push_free(slot as u32);
        match old {
            Slot::Used { value, .. } => Some(value),
            Slot::Free { .. } => None,
        }
    }

    /// Every id, in slot order.
    pub(crate) fn ids(&self) -> impl Iterator<Item = R> + '_ {
        (0..self.slots.len()).filter_map(move |slot| match self.slots.get(slot) {
            Some(Slot::Used { generation, .. }) => Some(self.id_of(slot as u32, *generation)),
            _ => None,
        })
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    extern crate std;
    use super::*;
    use crate::cm::store::btree::Std;
    use std::vec::Vec;

    #[test]
    fn ids_are_found_until_removed_and_not_reused_at_once() {
        let mut t: IdTable<u32, Std> = IdTable::new(0x1234_5678);
        let a = t.try_insert(|id| id).expect("insert");
        let b = t.try_insert(|id| id).expect("insert");
        assert_ne!(a, b);
        assert_eq!(t.get(a), Some(&a));
        assert_eq!(t.remove(a), Some(a));
        assert_eq!(t.get(a), None);
        assert_eq!(t.remove(a), None, "removed twice");
        // Every id made until the table grows again is new.
        let mut seen = std::collections::BTreeSet::from([a, b]);
        for _ in 0..10_000 {
            let c = t.try_insert(|id| id).expect("insert");
            assert!(seen.insert(c), "id {:#x} reused", c);
            assert_ne!(c, 0);
            assert_eq!(t.remove(c), Some(c));
        }
        assert_eq!(t.len(), 1);
        assert_eq!(t.ids().collect::<Vec<_>>(), [b]);
    }

    #[test]
    fn a_stale_generation_does_not_match() {
        let mut t: IdTable<(), Std> = IdTable::new(0);
        let a = t.try_insert(|_| ()).expect("insert");
        t.remove(a);
        // Fill every free slot so that a's slot is reused.
        let mut ids = Vec::new();
        while ids.len() < 4096 {
            let id = t.try_insert(|_| ()).expect("insert");
            if (u64::from(id) & slot_mask(COMM_SLOT_BITS))
                == (u64::from(a) & slot_mask(COMM_SLOT_BITS))
            {
                assert_ne!(id, a);
                assert_eq!(t.get(a), None);
                return;
            }
            ids.push(id);
        }
        panic!("slot never reused");
    }

    #[test]
    fn id_zero_is_never_made() {
        // With operand 0, slot 0 generation 0 would be id 0.
        let mut t: IdTable<(), Std> = IdTable::new(0);
        let a = t.try_insert(|_| ()).expect("insert");
        assert_ne!(a, 0);
        assert!(t.get(0).is_none());
    }

    /// rcm.ko keeps the slots in page-sized chunks; a connection whose
    /// peer address is the kernel's (48 bytes) fits 12 to a page, so an
    /// id costs 341 bytes there (at 11 to a page, 372).
    #[test]
    fn twelve_connections_fit_a_page() {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
        struct KernelPeer([u32; 12]);
        let slot = core::mem::size_of::<Slot<crate::cm::Connection<KernelPeer>>>();
        assert!(slot * 12 <= 4096, "{slot} bytes per connection slot");
    }
}
