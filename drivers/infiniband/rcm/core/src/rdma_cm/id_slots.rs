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
const OPERAND: u32 = 0;

impl RdmaId {
    /// The id's slot in the table, which an embedding can index its own
    /// per-id data by densely (see [`slot_of`]).
    pub fn slot(self) -> usize {
        slot_of(self.0, OPERAND)
    }
}

/// The ids and their records.
pub(crate) struct IdSlots<V, C: Collections> {
    table: IdTable<V, C>,
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
            .map(|id| RdmaId(id.0))
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
        self.table.ids().map(|id| RdmaId(id.0))
    }

    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.table.len() == 0
    }
}
