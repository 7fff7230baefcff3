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

use crate::rdma::mad::ReceivedMad;
use kernel::prelude::*;

/// MADs buffered between two runs of the intake work: ib_mad's receive
/// queue size (`IB_MAD_QP_RECV_SIZE`), so the buffer holds as much as the
/// device could have delivered meanwhile.
pub(crate) const INTAKE_CAPACITY: usize = 512;

/// MADs handed to the endpoint per lock hold (interrupts stay off while
/// it is held).
pub(crate) const INTAKE_BATCH: usize = 16;

/// Received MADs in arrival order, in room allocated once.
///
/// INVARIANT: `mads.len() == INTAKE_CAPACITY` and `queued <=
/// INTAKE_CAPACITY`; the first `queued` slots hold the MADs.
pub(crate) struct IntakeBuffer {
    mads: KVVec<ReceivedMad>,
    queued: usize,
    /// MADs turned away for want of room since [`IntakeBuffer::take_dropped`].
    dropped: u32,
}

impl IntakeBuffer {
    /// An empty buffer with room for [`INTAKE_CAPACITY`] MADs.
    pub(crate) fn new() -> Result<Self> {
        // INVARIANT: filled to the capacity, nothing queued.
        Ok(IntakeBuffer {
            mads: KVVec::from_elem(ReceivedMad::EMPTY, INTAKE_CAPACITY, GFP_KERNEL)?,
            queued: 0,
            dropped: 0,
        })
    }

    /// Queues a copy of `mad`; false (and counted) when the buffer is full:
    /// the MAD is dropped and its sender retransmits it.
    pub(crate) fn push(&mut self, mad: &ReceivedMad) -> bool {
        match self.mads.get_mut(self.queued) {
            Some(slot) => {
                *slot = *mad;
                self.queued += 1;
                true
            }
            None => {
                self.dropped = self.dropped.saturating_add(1);
                false
            }
        }
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
