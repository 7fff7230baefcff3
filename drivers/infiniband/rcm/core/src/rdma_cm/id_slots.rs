// SPDX-License-Identifier: GPL-2.0

//! The rdma_cm ids in slots of a growable array, as the CM keeps its own
//! (`cm/table.rs`): a lookup is an index, and an id costs its record in a
//! page-sized chunk rather than a tree node of its own. In rcm.ko such a
//! node (a 270-byte record, the link and the key) rounded up to a 512-byte
//! allocation per id.

use super::endpoint::{RdmaCmError, RdmaId};
use crate::cm::store::Collections;
use crate::cm::table::{slot_of, IdTable, TableFull};

/// Ids are not on the wire, so their numbers need no random operand.
const OPERAND: u64 = 0;

/// Bits of an id that name its slot. Ids are 64-bit, so the table sets
/// no limit of its own: 2^32 - 1 slots would take over a terabyte of
/// records, and the ids' memory (charged to the memory cgroup of the user
/// whose ids they are, in the kernel) stops a user long before. The other
/// 32 bits number generations: a late callback that names an id by number
/// (an SA query's, an iw_cm event's) finds the id gone unless its slot was
/// reused 2^32 times meanwhile.
const SLOT_BITS: u32 = 32;

impl RdmaId {
    /// The id's slot in the table, which an embedding can index its own
    /// per-id data by densely (see [`slot_of`]).
    pub fn slot(self) -> usize {
        slot_of(SLOT_BITS, self.0, OPERAND)
    }
}

/// The ids and their records.
pub(crate) struct IdSlots<V, C: Collections> {
    table: IdTable<V, C, SLOT_BITS, u64>,
}

impl<V, C: Collections> IdSlots<V, C> {
    pub(crate) fn new() -> Self {
        IdSlots {
            table: IdTable::new(OPERAND),
        }
    }

    /// Stores `record` under a new id (never 0).
    pub(crate) fn insert(&mut self, record: V) -> Result<RdmaId, RdmaCmError> {
        self.table
            .try_insert(move |_| record)
            .map(RdmaId)
            .map_err(|e| match e {
                TableFull::NoMemory | TableFull::NoSpace => RdmaCmError::NoMemory,
            })
    }

    pub(crate) fn get(&self, id: &RdmaId) -> Option<&V> {
        self.table.get(id.0)
    }

    pub(crate) fn get_mut(&mut self, id: &RdmaId) -> Option<&mut V> {
        self.table.get_mut(id.0)
    }

    pub(crate) fn remove(&mut self, id: &RdmaId) -> Option<V> {
        self.table.remove(id.0)
    }

    /// Every id, in slot order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = RdmaId> + '_ {
        self.table.ids().map(RdmaId)
    }

    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.table.len() == 0
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use crate::cm::store::btree::Std;

    #[test]
    fn no_cap_below_what_memory_allows() {
        // rdma_cm's ids are not capped at the CM's 2^20, nor at any
        // count memory allows (24-bit slots refused the 2^24+1st id): all
        // users' ids together are limited by memory, each user's by its
        // memory cgroup in the kernel.
        let mut t: IdSlots<(), Std> = IdSlots::new();
        let n = (1 << 24) + 1;
        let mut last = RdmaId(0);
        for _ in 0..n {
            last = t.insert(()).expect("room for another id");
        }
        assert_eq!(last.slot(), n - 1);
        assert!(t.get(&last).is_some());
    }
}
