// SPDX-License-Identifier: GPL-2.0

//! Lists of ids threaded through their records, as 6.12 threads its ids
//! on `list_head`s: the ids on a device, the ids watching a neighbour.
//! Putting an id on a list or taking it off is O(1) and allocates
//! nothing, under the lock every id's call takes; a walk visits that
//! list's ids alone, whatever other lists hold.

use super::endpoint::{RdmaCmError, RdmaId};
use super::id_slots::IdSlots;
use crate::cm::store::Collections;

/// An id's place on one list: its neighbours, 0 for none (ids are never
/// 0), so a link costs an id two words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct IdLink {
    prev: u64,
    next: u64,
}

impl IdLink {
    /// On no list.
    pub(crate) const fn zero() -> Self {
        IdLink { prev: 0, next: 0 }
    }

    fn prev(self) -> Option<RdmaId> {
        (self.prev != 0).then_some(RdmaId(self.prev))
    }

    /// The id after this one.
    pub(crate) fn next(self) -> Option<RdmaId> {
        (self.next != 0).then_some(RdmaId(self.next))
    }
}

/// The raw link of an id, 0 for none.
fn raw(id: Option<RdmaId>) -> u64 {
    id.map_or(0, |i| i.0)
}

/// Which of a record's links a list uses.
pub(crate) type LinkOf<V> = fn(&mut V) -> &mut IdLink;

/// One list: its ends, oldest first, and its length.
///
/// INVARIANT: walking `next` links from `first` visits `len` ids, each
/// whose `prev` link names the one before, and ends at `last`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct IdList {
    first: Option<RdmaId>,
    last: Option<RdmaId>,
    len: u32,
}

impl IdList {
    /// The oldest id on the list.
    pub(crate) fn first(&self) -> Option<RdmaId> {
        self.first
    }

    /// How many ids are on the list.
    pub(crate) fn len(&self) -> u32 {
        self.len
    }

    /// Puts `id` (in `ids`, on no list of this kind) at the end.
    pub(crate) fn push_back<V, C: Collections>(
        &mut self,
        ids: &mut IdSlots<V, C>,
        id: RdmaId,
        link: LinkOf<V>,
    ) -> Result<(), RdmaCmError> {
        let rec = ids.get_mut(&id).ok_or(RdmaCmError::NoSuchId)?;
        *link(rec) = IdLink {
            prev: raw(self.last),
            next: 0,
        };
        match self.last.and_then(|l| ids.get_mut(&l)) {
            Some(l) => link(l).next = id.0,
            None => self.first = Some(id),
        }
        self.last = Some(id);
        self.len += 1;
        Ok(())
    }

    /// Takes `id` off the list by its link `at` (read from its record,
    /// which may be out of `ids` already).
    pub(crate) fn unlink<V, C: Collections>(
        &mut self,
        ids: &mut IdSlots<V, C>,
        id: RdmaId,
        at: IdLink,
        link: LinkOf<V>,
    ) {
        match at.prev().and_then(|p| ids.get_mut(&p)) {
            Some(p) => link(p).next = at.next,
            None if self.first == Some(id) => self.first = at.next(),
            None => {}
        }
        match at.next().and_then(|n| ids.get_mut(&n)) {
            Some(n) => link(n).prev = at.prev,
            None if self.last == Some(id) => self.last = at.prev(),
            None => {}
        }
        self.len = self.len.saturating_sub(1);
    }

    /// Checks the list against the records (`link` reads an id's link,
    /// `belongs` whether its record says it is on this list); its length.
    pub(crate) fn check<V, C: Collections>(
        &self,
        ids: &IdSlots<V, C>,
        link: impl Fn(&V) -> IdLink,
        belongs: impl Fn(&V) -> bool,
    ) -> Result<u32, &'static str> {
        let mut prev = None;
        let mut cur = self.first;
        let mut n = 0u32;
        while let Some(id) = cur {
            let Some(r) = ids.get(&id) else {
                return Err("a list names an id that is gone");
            };
            if !belongs(r) {
                return Err("a list names an id that is not on it");
            }
            if link(r).prev() != prev {
                return Err("a list's back link is off");
            }
            n += 1;
            if n > self.len {
                return Err("a list is longer than its count");
            }
            prev = cur;
            cur = link(r).next();
        }
        if prev != self.last || n != self.len {
            return Err("a list's count or end is off");
        }
        Ok(n)
    }
}
