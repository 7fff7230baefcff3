// SPDX-License-Identifier: GPL-2.0

//! The MADs ids keep: the outstanding request (retransmitted until
//! answered) and the last response (re-sent when the peer repeats itself).
//!
//! They live in one pool of the endpoint's rather than inline in each
//! [`Connection`](super::Connection): most ids keep none once connected, so
//! an id costs its fields alone, and the slot table stays dense enough to
//! stay in cache with 10,000 ids. The pool grows only in
//! [`MadStore::reserve`], which every API call and received MAD runs before
//! it changes anything; taking a slot afterwards never allocates. Like the
//! slot table, the pool never shrinks: it stays the size of the busiest
//! moment so far.

use super::conn::Response;
use super::error::CmError;
use super::store::{Collections, NoMemory, SlotVec};
use super::{CommId, Endpoint};
use crate::wire::field::{Mad, MAD_SIZE};

/// Free slots each API call or received MAD may take (a request and a
/// response).
pub(crate) const SLOTS_PER_INPUT: usize = 2;

/// End of the free list.
const NO_SLOT: u32 = u32::MAX;

/// A kept MAD's place in the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MadSlot(u32);

/// The pool.
///
/// INVARIANT: the free slots form a list from `free_head` through the
/// index stored in the first four bytes of each free slot, `free_count`
/// long and ending in [`NO_SLOT`]; every other slot belongs to exactly one
/// id's `request` or `response`.
pub(crate) struct MadStore<V: SlotVec<Mad>> {
    slots: V,
    free_head: u32,
    free_count: usize,
}

impl<V: SlotVec<Mad>> MadStore<V> {
    pub(crate) fn new() -> Self {
        MadStore {
            slots: V::new_empty(),
            free_head: NO_SLOT,
            free_count: 0,
        }
    }

    /// Makes sure [`SLOTS_PER_INPUT`] slots are free (may allocate).
    pub(crate) fn reserve(&mut self) -> Result<(), NoMemory> {
        while self.free_count < SLOTS_PER_INPUT {
            let old = self.slots.len();
            self.slots.try_grow(|| [0u8; MAD_SIZE])?;
            let new = self.slots.len();
            // Indexes past u32 would need more than 1 TiB of MADs.
            let end = u32::try_from(new).map_err(|_| NoMemory)?;
            for index in (old as u32..end).rev() {
                self.push_free(index);
            }
        }
        Ok(())
    }

    fn push_free(&mut self, index: u32) {
        if let Some(slot) = self.slots.get_mut(index as usize) {
            slot[..4].copy_from_slice(&self.free_head.to_ne_bytes());
            self.free_head = index;
            self.free_count += 1;
        }
    }

    /// Keeps a copy of `mad`; `None` only if the caller did not
    /// [`reserve`](Self::reserve) first.
    pub(crate) fn keep(&mut self, mad: &Mad) -> Option<MadSlot> {
        let index = self.free_head;
        let slot = self.slots.get_mut(index as usize)?;
        let mut next = [0u8; 4];
        next.copy_from_slice(&slot[..4]);
        *slot = *mad;
        self.free_head = u32::from_ne_bytes(next);
        self.free_count = self.free_count.saturating_sub(1);
        Some(MadSlot(index))
    }

    /// The MAD kept in `slot`.
    pub(crate) fn get(&self, slot: MadSlot) -> Option<&Mad> {
        self.slots.get(slot.0 as usize)
    }

    /// Gives `slot` back to the pool.
    pub(crate) fn release(&mut self, slot: MadSlot) {
        self.push_free(slot.0);
    }

    /// Slots holding a MAD.
    pub(crate) fn in_use(&self) -> usize {
        self.slots.len().saturating_sub(self.free_count)
    }
}

/// The endpoint keeps and forgets its ids' MADs here.
impl<A: Copy + Ord, C: Collections> Endpoint<A, C> {
    /// Makes sure the MAD pool can take what one input keeps; every API
    /// call and received MAD that may keep a MAD runs this before it
    /// changes anything, so keeping never allocates (`destroy`, which
    /// cannot fail, goes on without: see `send_request`).
    pub(crate) fn reserve_mads(&mut self) -> Result<(), CmError> {
        self.mads.reserve().map_err(|_| CmError::NoMemory)
    }

    /// Keeps `mad` as the id's outstanding request, replacing the last.
    pub(crate) fn keep_request(&mut self, id: CommId, mad: &Mad) {
        if let Some(conn) = self.conns.get_mut(id.0) {
            if let Some(old) = conn.request.take() {
                self.mads.release(old);
            }
            conn.request = self.mads.keep(mad);
        }
    }

    /// Keeps `mad` as the id's last response, replacing the last.
    pub(crate) fn keep_response(&mut self, id: CommId, mad: &Mad) {
        if let Some(conn) = self.conns.get_mut(id.0) {
            if let Some(old) = conn.response.slot() {
                self.mads.release(old);
            }
            conn.response = self.mads.keep(mad).map_or(Response::None, Response::Kept);
        }
    }

    /// Forgets the id's outstanding request (and its place in the peer's
    /// window).
    pub(crate) fn drop_request(&mut self, id: CommId) {
        self.leave_window(id);
        if let Some(slot) = self.conns.get_mut(id.0).and_then(|c| c.request.take()) {
            self.mads.release(slot);
        }
    }

    /// Forgets the id's last response.
    pub(crate) fn drop_response(&mut self, id: CommId) {
        let old = self
            .conns
            .get_mut(id.0)
            .map(|c| core::mem::replace(&mut c.response, Response::None));
        if let Some(slot) = old.and_then(Response::slot) {
            self.mads.release(slot);
        }
    }
}
