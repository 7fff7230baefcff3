// SPDX-License-Identifier: GPL-2.0

//! Received MADs between ib_mad's receive completion and the endpoint.
//!
//! 6.12's ib_mad reposts a QP1 receive buffer only after the agent's
//! receive handler returns. A handler that runs the protocol there (and
//! posts its answers) holds the receive queue down for as long, and in a
//! connection storm the queue drains and the device drops MADs, which the
//! peers then retransmit. So the handler only copies the MAD into an
//! [`IntakeBuffer`] and returns; a work item hands the buffered MADs to
//! the endpoint in batches (one lock, one reservation, one round of posts
//! per batch).
//!
//! ib_mad reposts at once, so in a storm MADs arrive faster than one
//! batch is handled: a full buffer is replaced by one twice as large
//! (allocated outside the lock; the receive handler may sleep), up to
//! [`INTAKE_MAX`]. Beyond that a MAD is dropped, counted and logged, and
//! its sender retransmits it, so a flood costs bounded memory. The
//! buffers keep the size of the largest storm so far.

use crate::rdma::mad::ReceivedMad;
use kernel::prelude::*;

/// A buffer's first room: ib_mad's receive queue size
/// (`IB_MAD_QP_RECV_SIZE`), what the device can hold at once.
pub(crate) const INTAKE_CAPACITY: usize = 512;

/// The most room a buffer grows to (about 5 MiB): 16 times the first.
pub(crate) const INTAKE_MAX: usize = 16 * INTAKE_CAPACITY;

/// MADs handed to the endpoint per lock hold (interrupts stay off while
/// it is held).
pub(crate) const INTAKE_BATCH: usize = 16;

/// Received MADs in arrival order, in room allocated once.
///
/// INVARIANT: `queued <= mads.len()` (the room, at most [`INTAKE_MAX`]);
/// the first `queued` slots hold the MADs.
pub(crate) struct IntakeBuffer {
    mads: KVVec<ReceivedMad>,
    queued: usize,
    /// MADs turned away for want of room since [`IntakeBuffer::take_dropped`].
    dropped: u32,
}

impl IntakeBuffer {
    /// An empty buffer with room for [`INTAKE_CAPACITY`] MADs.
    pub(crate) fn new() -> Result<Self> {
        Self::with_room(INTAKE_CAPACITY)
    }

    /// An empty buffer with room for `room` MADs (may sleep).
    fn with_room(room: usize) -> Result<Self> {
        // INVARIANT: filled to the room, nothing queued.
        Ok(IntakeBuffer {
            mads: KVVec::from_elem(ReceivedMad::EMPTY, room, GFP_KERNEL)?,
            queued: 0,
            dropped: 0,
        })
    }

    /// A buffer with twice the room of one with `room` (may sleep);
    /// `None` at [`INTAKE_MAX`] or without memory.
    pub(crate) fn larger_than(room: usize) -> Option<Self> {
        let room = room.checked_mul(2).filter(|&r| r <= INTAKE_MAX)?;
        Self::with_room(room).ok()
    }

    /// MADs the buffer has room for.
    pub(crate) fn room(&self) -> usize {
        self.mads.len()
    }

    /// Takes over `smaller`'s MADs and drop count, if they fit (they do
    /// when `self` has more room); false and nothing moved otherwise.
    pub(crate) fn take_over(&mut self, smaller: &mut IntakeBuffer) -> bool {
        let start = self.queued;
        let Some(end) = start.checked_add(smaller.queued) else {
            return false;
        };
        let Some(to) = self.mads.get_mut(start..end) else {
            return false;
        };
        for (slot, mad) in to.iter_mut().zip(smaller.queued()) {
            *slot = *mad;
        }
        self.queued = end;
        self.dropped = self.dropped.saturating_add(smaller.take_dropped());
        smaller.clear();
        true
    }

    /// Queues a copy of `mad`; false when the buffer is full.
    pub(crate) fn push(&mut self, mad: &ReceivedMad) -> bool {
        match self.mads.get_mut(self.queued) {
            Some(slot) => {
                *slot = *mad;
                self.queued += 1;
                true
            }
            None => false,
        }
    }

    /// Counts a MAD dropped for want of room (its sender retransmits it).
    pub(crate) fn count_dropped(&mut self) {
        self.dropped = self.dropped.saturating_add(1);
    }

    /// The queued MADs, oldest first.
    pub(crate) fn queued(&self) -> &[ReceivedMad] {
        self.mads.get(..self.queued).unwrap_or(&[])
    }

    /// Forgets the queued MADs (their room stays).
    pub(crate) fn clear(&mut self) {
        self.queued = 0;
    }

    /// How many MADs were dropped since the last call.
    pub(crate) fn take_dropped(&mut self) -> u32 {
        core::mem::take(&mut self.dropped)
    }
}
