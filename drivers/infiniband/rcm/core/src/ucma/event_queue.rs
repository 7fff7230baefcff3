// SPDX-License-Identifier: GPL-2.0

//! Every file's queue of undelivered events: the events in slots of one
//! growable array ([`IdTable`]), each file's queue a list through them in
//! the order they were queued (6.12 keeps a list per file). Queuing an
//! event takes no allocation of its own once the array has room, and
//! GET_EVENT finds a file's first event and unlinks it in O(1); removing a
//! context's or a membership's events walks its file's queue, as 6.12
//! does.
//!
//! An event's number is its slot and a generation, so a number kept
//! across a lock's release (GET_EVENT's copy out) never names an event
//! queued meanwhile in the slot of the one it named.

use super::contexts::FileId;
use crate::cm::store::{Collections, NoMemory, OrderedMap};
use crate::cm::table::IdTable;

/// Bits of an event's number that name its slot (the table sets no limit
/// of its own; queued events are their users' memory); the other 32
/// number generations.
const EVENT_SLOT_BITS: u32 = 32;

/// A queued event: its file, its neighbours there, and what was queued.
struct Node<T> {
    file: FileId,
    prev: Option<u64>,
    next: Option<u64>,
    item: T,
}

/// The ends of a file's queue.
#[derive(Clone, Copy, Debug, Default)]
struct Ends {
    first: Option<u64>,
    last: Option<u64>,
}

/// The files' queues of `T`.
///
/// INVARIANT: each file's list (its entry in `files`, linked through the
/// nodes' `prev` and `next`) holds exactly the nodes whose `file` it is,
/// each once, in the order they were queued or moved there.
pub(super) struct EventQueues<T, C: Collections> {
    events: IdTable<Node<T>, C, EVENT_SLOT_BITS, u64>,
    files: C::Map<FileId, Ends>,
}

impl<T, C: Collections> EventQueues<T, C> {
    pub(super) fn new() -> Self {
        EventQueues {
            events: IdTable::new(0),
            files: OrderedMap::new_empty(),
        }
    }

    /// Number of queued events, all files'.
    pub(super) fn len(&self) -> usize {
        self.events.len()
    }

    /// Makes room for `file`'s queue (once per file; queuing and moving
    /// events there need it).
    pub(super) fn open(&mut self, file: FileId) -> Result<(), NoMemory> {
        if self.files.get(&file).is_some() {
            return Ok(());
        }
        self.files
            .try_insert(file, Ends::default())
            .map_err(|_| NoMemory)
    }

    /// `file` is gone: its queue, with any event left on it.
    pub(super) fn forget(&mut self, file: FileId) {
        while let Some((id, _)) = self.first(file) {
            self.remove(id);
        }
        self.files.remove(&file);
    }

    /// Queues `item` last on `file`'s queue (made room for with
    /// [`Self::open`]); its number.
    pub(super) fn push(&mut self, file: FileId, item: T) -> Result<u64, NoMemory> {
        let last = self.files.get(&file).ok_or(NoMemory)?.last;
        let node = Node {
            file,
            prev: last,
            next: None,
            item,
        };
        let id = self.events.try_insert(|_| node).map_err(|_| NoMemory)?;
        self.link_last(file, id, last);
        Ok(id)
    }

    /// The node `id` (its `prev` already `last`) becomes the last of
    /// `file`'s queue.
    fn link_last(&mut self, file: FileId, id: u64, last: Option<u64>) {
        if let Some(ends) = self.files.get_mut(&file) {
            ends.last = Some(id);
            ends.first.get_or_insert(id);
        }
        if let Some(n) = last.and_then(|l| self.events.get_mut(l)) {
            n.next = Some(id);
        }
    }

    /// Takes the node of `file` whose neighbours are `prev` and `next` out
    /// of the file's queue.
    fn unlink(&mut self, file: FileId, prev: Option<u64>, next: Option<u64>) {
        if let Some(ends) = self.files.get_mut(&file) {
            if prev.is_none() {
                ends.first = next;
            }
            if next.is_none() {
                ends.last = prev;
            }
        }
        if let Some(n) = prev.and_then(|p| self.events.get_mut(p)) {
            n.next = next;
        }
        if let Some(n) = next.and_then(|n| self.events.get_mut(n)) {
            n.prev = prev;
        }
    }

    /// `file`'s first event and its number.
    pub(super) fn first(&self, file: FileId) -> Option<(u64, &T)> {
        let id = self.files.get(&file)?.first?;
        self.events.get(id).map(|n| (id, &n.item))
    }

    /// The event queued after `id` on its file, and its number.
    pub(super) fn after(&self, id: u64) -> Option<(u64, &T)> {
        let next = self.events.get(id)?.next?;
        self.events.get(next).map(|n| (next, &n.item))
    }

    /// The event `id`, if it is queued on `file`.
    pub(super) fn get(&self, file: FileId, id: u64) -> Option<&T> {
        self.events
            .get(id)
            .filter(|n| n.file == file)
            .map(|n| &n.item)
    }

    /// Removes the event `id` from its queue.
    pub(super) fn remove(&mut self, id: u64) -> Option<T> {
        let n = self.events.remove(id)?;
        self.unlink(n.file, n.prev, n.next);
        Some(n.item)
    }

    /// Moves the event `id` to the end of `to`'s queue (made room for
    /// with [`Self::open`]), which may be its own.
    pub(super) fn move_last(&mut self, id: u64, to: FileId) {
        let Some(n) = self.events.get(id) else {
            return;
        };
        let (from, prev, next) = (n.file, n.prev, n.next);
        if self.files.get(&to).is_none() || (from == to && next.is_none()) {
            return;
        }
        self.unlink(from, prev, next);
        let last = self.files.get(&to).and_then(|e| e.last);
        if let Some(n) = self.events.get_mut(id) {
            n.file = to;
            n.prev = last;
            n.next = None;
        }
        self.link_last(to, id, last);
    }

    /// The number of `file`'s last event.
    pub(super) fn last(&self, file: FileId) -> Option<u64> {
        self.files.get(&file)?.last
    }

    /// Checks the invariant: `f` is called with each queued event's file
    /// and the event, file by file in queue order.
    pub(super) fn audit(
        &self,
        mut f: impl FnMut(FileId, &T) -> Result<(), &'static str>,
    ) -> Result<(), &'static str> {
        let mut listed = 0;
        for file in self.files.keys() {
            let ends = self.files.get(&file).copied().unwrap_or_default();
            let (mut at, mut prev) = (ends.first, None);
            while let Some(id) = at {
                let Some(n) = self.events.get(id) else {
                    return Err("a file's queue names an event that is gone");
                };
                if n.file != file || n.prev != prev {
                    return Err("an event queue is linked wrong");
                }
                listed += 1;
                if listed > self.events.len() {
                    return Err("an event queue has a loop");
                }
                f(file, &n.item)?;
                (prev, at) = (Some(id), n.next);
            }
            if ends.last != prev {
                return Err("a file's last event is not its queue's end");
            }
        }
        if listed != self.events.len() {
            return Err("an event is on no file's queue");
        }
        Ok(())
    }
}
