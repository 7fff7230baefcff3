// SPDX-License-Identifier: GPL-2.0

//! Network changes waiting for rdma_cm's network work.
//!
//! The kernel's notifiers report neighbour updates in atomic context, as
//! fast as anyone can make them (a user flapping neighbours in a namespace
//! of its own). They post here, under a spinlock, without allocating; one
//! work item takes the changes out in the order they came. A change
//! replaces a pending one of the same subject (the same neighbour, or the
//! same bond) instead of taking more room, and a change of another subject
//! while the queue is full is dropped and counted: the notifiers never
//! allocate, and the work never runs behind an unbounded queue.

use super::addr::SockAddr;
use core::ops::DerefMut;

/// Changes that may wait at once (distinct subjects): the room the
/// embedding gives a [`PendingNetChanges`].
pub const PENDING_NET_CHANGES: usize = 256;

/// The longest hardware address a change carries (`MAX_ADDR_LEN`).
pub const MAX_HW_ADDR: usize = 32;

/// What changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetChangeKind {
    /// The neighbour entry of this IP address (port 0) was updated.
    Neighbour(SockAddr),
    /// The bond failed over to another hardware address.
    Failover,
}

/// One change: where it happened and the new hardware address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetChange {
    /// The namespace's identity, compared, never followed.
    pub net: usize,
    /// The interface, unique within its namespace.
    pub ifindex: i32,
    /// What changed.
    pub kind: NetChangeKind,
    /// INVARIANT: `ha_len <= MAX_HW_ADDR`.
    ha: [u8; MAX_HW_ADDR],
    ha_len: u8,
}

impl NetChange {
    /// A change on interface `ifindex` of namespace `net` to the hardware
    /// address `ha` (cut at [`MAX_HW_ADDR`] bytes, as the kernel keeps it).
    pub fn new(net: usize, ifindex: i32, kind: NetChangeKind, ha: &[u8]) -> Self {
        let len = ha.len().min(MAX_HW_ADDR);
        let mut bytes = [0; MAX_HW_ADDR];
        bytes[..len].copy_from_slice(&ha[..len]);
        // INVARIANT: `len` is at most MAX_HW_ADDR.
        NetChange {
            net,
            ifindex,
            kind,
            ha: bytes,
            ha_len: len as u8,
        }
    }

    /// The new hardware address.
    pub fn hardware_address(&self) -> &[u8] {
        &self.ha[..usize::from(self.ha_len)]
    }

    /// Whether `other` is about the same thing (a later change of it
    /// supersedes this one).
    fn same_subject(&self, other: &NetChange) -> bool {
        self.net == other.net && self.ifindex == other.ifindex && self.kind == other.kind
    }
}

/// What [`PendingNetChanges::post`] did with a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Posted {
    /// Queued behind the others.
    Queued,
    /// It replaced a pending change of the same subject, in its place.
    Replaced,
    /// The queue was full of other subjects: dropped and counted.
    Dropped,
}

/// The bounded, coalescing queue of changes: a ring in the slots the
/// embedding allocated (so that it is never built on a stack).
pub struct PendingNetChanges<S> {
    slots: S,
    /// INVARIANT: `count <= slots.len()`; when `count > 0`, `head <
    /// slots.len()` and the `count` slots from `head` (wrapping) are
    /// `Some`.
    head: usize,
    count: usize,
    dropped: u64,
}

impl<S: DerefMut<Target = [Option<NetChange>]>> PendingNetChanges<S> {
    /// An empty queue with room for as many changes as `slots` has.
    pub fn new(mut slots: S) -> Self {
        slots.fill(None);
        // INVARIANT: empty.
        PendingNetChanges {
            slots,
            head: 0,
            count: 0,
            dropped: 0,
        }
    }

    /// The index of slot `i` from the head (the ring has room: `slots`
    /// is not empty).
    fn slot(&self, i: usize) -> usize {
        (self.head + i) % self.slots.len()
    }

    /// Posts `change`: it replaces a pending change of its subject, else
    /// it is queued if there is room, else dropped.
    pub fn post(&mut self, change: NetChange) -> Posted {
        for i in 0..self.count {
            let at = self.slot(i);
            if let Some(pending) = &mut self.slots[at] {
                if pending.same_subject(&change) {
                    *pending = change;
                    return Posted::Replaced;
                }
            }
        }
        if self.count == self.slots.len() {
            self.dropped = self.dropped.saturating_add(1);
            return Posted::Dropped;
        }
        let at = self.slot(self.count);
        self.slots[at] = Some(change);
        self.count += 1;
        Posted::Queued
    }

    /// The oldest pending change, taken out.
    pub fn take(&mut self) -> Option<NetChange> {
        if self.count == 0 {
            return None;
        }
        let change = self.slots[self.head].take();
        self.head = self.slot(1);
        self.count -= 1;
        change
    }

    /// How many changes were dropped since the last call.
    pub fn take_dropped(&mut self) -> u64 {
        core::mem::take(&mut self.dropped)
    }

    /// How many changes wait.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether no change waits.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn neighbour(last: u8, ha: u8) -> NetChange {
        let ip = SockAddr::V4 {
            addr: [10, 0, 0, last],
            port: 0,
        };
        NetChange::new(1, 2, NetChangeKind::Neighbour(ip), &[ha; 6])
    }

    fn queue(slots: &mut [Option<NetChange>]) -> PendingNetChanges<&mut [Option<NetChange>]> {
        PendingNetChanges::new(slots)
    }

    #[test]
    fn changes_come_out_in_the_order_they_came() {
        let mut room = [None; 4];
        let mut q = queue(&mut room);
        assert_eq!(q.post(neighbour(1, 0xa)), Posted::Queued);
        assert_eq!(q.post(neighbour(2, 0xb)), Posted::Queued);
        assert_eq!(q.take(), Some(neighbour(1, 0xa)));
        assert_eq!(q.take(), Some(neighbour(2, 0xb)));
        assert_eq!(q.take(), None);
    }

    #[test]
    fn a_later_change_of_a_subject_replaces_it_in_place() {
        let mut room = [None; 4];
        let mut q = queue(&mut room);
        q.post(neighbour(1, 0xa));
        q.post(neighbour(2, 0xb));
        assert_eq!(q.post(neighbour(1, 0xc)), Posted::Replaced);
        assert_eq!(q.len(), 2);
        assert_eq!(q.take().map(|c| c.hardware_address()[0]), Some(0xc));
        // Another interface or namespace is another subject.
        let mut other = neighbour(2, 0xd);
        other.ifindex = 3;
        assert_eq!(q.post(other), Posted::Queued);
        let failover = NetChange::new(1, 2, NetChangeKind::Failover, &[1; 6]);
        assert_eq!(q.post(failover), Posted::Queued);
        assert_eq!(q.len(), 3);
    }

    #[test]
    fn a_full_queue_drops_new_subjects_and_counts_them() {
        let mut room = [None; PENDING_NET_CHANGES];
        let mut q = queue(&mut room);
        for i in 0..PENDING_NET_CHANGES {
            let c = NetChange::new(1, i as i32, NetChangeKind::Failover, &[]);
            assert_eq!(q.post(c), Posted::Queued);
        }
        let extra = NetChange::new(1, -1, NetChangeKind::Failover, &[]);
        assert_eq!(q.post(extra), Posted::Dropped);
        assert_eq!(q.post(extra), Posted::Dropped);
        // A pending subject still coalesces when full.
        let again = NetChange::new(1, 7, NetChangeKind::Failover, &[9]);
        assert_eq!(q.post(again), Posted::Replaced);
        assert_eq!(q.take_dropped(), 2);
        assert_eq!(q.take_dropped(), 0);
        // The ring wraps: take some, post more.
        for _ in 0..10 {
            q.take();
        }
        for i in 0..10 {
            let c = NetChange::new(2, i, NetChangeKind::Failover, &[]);
            assert_eq!(q.post(c), Posted::Queued);
        }
        assert_eq!(q.len(), PENDING_NET_CHANGES);
        let mut n = 0;
        while q.take().is_some() {
            n += 1;
        }
        assert_eq!(n, PENDING_NET_CHANGES);
        assert!(q.is_empty());
    }

    #[test]
    fn a_queue_without_room_drops_everything() {
        let mut q = queue(&mut []);
        assert_eq!(q.post(neighbour(1, 1)), Posted::Dropped);
        assert_eq!(q.take(), None);
        assert_eq!(q.take_dropped(), 1);
    }

    #[test]
    fn a_hardware_address_is_cut_at_the_kernels_length() {
        let c = NetChange::new(0, 0, NetChangeKind::Failover, &[7; 40]);
        assert_eq!(c.hardware_address().len(), MAX_HW_ADDR);
    }
}
