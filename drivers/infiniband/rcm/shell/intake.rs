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
//!
//! The handler does not work out a MAD's reply path either (on RoCE that
//! waits for an address resolution): the intake work does, through
//! [`Senders`], only for the MADs whose sender the endpoint keeps and for
//! its answers, and once per sender for a while ([`RecentPaths`]).

use super::peer::Peer;
use crate::proto::cm::DeviceId;
use crate::rdma::device::DeviceRef;
use crate::rdma::mad::ReceivedMad;
use crate::rdma::mad_path::{reply_path_reuse_ms, MadOrigin, MadPath};
use crate::rdma::netwatch;
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

/// Senders whose reply paths are remembered at once.
pub(crate) const RECENT_SENDERS: usize = 16;

/// A reply path worked out for a sender, while it serves.
#[derive(Clone, Copy)]
struct RecentPath {
    device: DeviceId,
    origin: MadOrigin,
    path: MadPath,
    /// When it was worked out (ms) and the network generation before.
    at_ms: u64,
    generation: u32,
}

impl RecentPath {
    /// Whether this is the path of `origin`'s sender on `device`.
    fn is_of(&self, device: DeviceId, origin: &MadOrigin) -> bool {
        self.device == device && self.origin.same_sender(origin)
    }
}

/// The reply paths of the last senders (the intake work's own), so that
/// a sender's path is worked out once per `rcm.reply_path_ms` (unless the
/// network changes first) and not for each of its REQs, as the C CM
/// does. A path gone stale within that time (a neighbour's MAC moved
/// without a neighbour update) costs the sender one retransmission.
pub(crate) struct RecentPaths {
    paths: [Option<RecentPath>; RECENT_SENDERS],
    /// The slot the next new sender takes (oldest first).
    next: usize,
}

impl RecentPaths {
    /// None remembered.
    pub(crate) const fn new() -> Self {
        RecentPaths {
            paths: [None; RECENT_SENDERS],
            next: 0,
        }
    }

    /// The path of `origin`'s sender on `device`, if worked out less than
    /// `reuse_ms` before `now_ms` and in network `generation`.
    fn find(
        &self,
        device: DeviceId,
        origin: &MadOrigin,
        now_ms: u64,
        reuse_ms: u64,
        generation: u32,
    ) -> Option<MadPath> {
        self.paths.iter().flatten().find_map(|r| {
            let fresh = r.generation == generation && now_ms.saturating_sub(r.at_ms) < reuse_ms;
            (fresh && r.is_of(device, origin)).then_some(r.path)
        })
    }

    /// Remembers `path` for `origin`'s sender, in place of its stale one
    /// or else of the oldest.
    fn remember(
        &mut self,
        device: DeviceId,
        origin: &MadOrigin,
        path: MadPath,
        at_ms: u64,
        generation: u32,
    ) {
        let recent = RecentPath {
            device,
            origin: *origin,
            path,
            at_ms,
            generation,
        };
        let same = self
            .paths
            .iter_mut()
            .flatten()
            .find(|r| r.is_of(device, origin));
        match same {
            Some(slot) => *slot = recent,
            None => {
                if let Some(slot) = self.paths.get_mut(self.next) {
                    *slot = Some(recent);
                }
                self.next = (self.next + 1) % RECENT_SENDERS;
            }
        }
    }
}

/// The senders of a batch of received MADs: each MAD's device (id, CA
/// GUID) and a reference on it, from which a reply path is worked out
/// when one is needed ([`Senders::peer`]), once per sender: in a storm the
/// MADs of a batch mostly come from one peer, and on RoCE each path costs
/// an address resolution.
pub(crate) struct Senders<'a> {
    batch: &'a [ReceivedMad],
    recent: &'a mut RecentPaths,
    /// When the batch is handled (ms), how long a recent path serves, and
    /// the network generation then, read before any path is worked out.
    now_ms: u64,
    reuse_ms: u64,
    generation: u32,
    devices: [Option<(DeviceId, u64)>; INTAKE_BATCH],
    held: [Option<DeviceRef>; INTAKE_BATCH],
    /// The paths worked out so far, by index.
    paths: [Option<MadPath>; INTAKE_BATCH],
}

impl<'a> Senders<'a> {
    /// The senders of `batch` (at most [`INTAKE_BATCH`] MADs) at `now_ms`,
    /// `served` giving each MAD's device: its id, CA GUID and a reference
    /// on it (`None` for a device already gone); `recent` the paths of
    /// earlier batches.
    pub(crate) fn new(
        batch: &'a [ReceivedMad],
        recent: &'a mut RecentPaths,
        now_ms: u64,
        mut served: impl FnMut(&ReceivedMad) -> Option<(DeviceId, u64, Option<DeviceRef>)>,
    ) -> Self {
        let mut senders = Senders {
            batch,
            recent,
            now_ms,
            reuse_ms: reply_path_reuse_ms(),
            generation: netwatch::generation(),
            devices: [None; INTAKE_BATCH],
            held: Default::default(),
            paths: [None; INTAKE_BATCH],
        };
        let slots = senders.devices.iter_mut().zip(senders.held.iter_mut());
        for ((device, held), mad) in slots.zip(batch) {
            if let Some((id, guid, reference)) = served(mad) {
                *device = Some((id, guid));
                *held = reference;
            }
        }
        senders
    }

    /// The device (id, CA GUID) the MAD at `index` arrived on, if served.
    pub(crate) fn device(&self, index: usize) -> Option<(DeviceId, u64)> {
        self.devices.get(index).copied().flatten()
    }

    /// The sender of the MAD at `index` as a peer: its reply path, that of
    /// an earlier MAD of the same sender (in this batch or a recent one)
    /// or else worked out now (may sleep; see `MadOrigin::reply_path`).
    /// `None` if it has none (after [`Senders::release`], if it was not
    /// worked out before).
    pub(crate) fn peer(&mut self, index: usize) -> Option<Peer> {
        let (device, _) = self.device(index)?;
        let origin = &self.batch.get(index)?.origin;
        let known = self.paths.get(index).copied().flatten().or_else(|| {
            let earlier = self.batch.iter().zip(&self.paths).zip(&self.devices);
            earlier.take(index).find_map(|((mad, path), on)| {
                let same = on.is_some_and(|(d, _)| d == device) && mad.origin.same_sender(origin);
                path.filter(|_| same)
            })
        });
        let (now, generation) = (self.now_ms, self.generation);
        let known = known.or_else(|| {
            self.recent
                .find(device, origin, now, self.reuse_ms, generation)
        });
        let path = match known {
            Some(path) => path,
            None => {
                let path = origin.reply_path(self.held.get(index)?.as_ref()?).ok()?;
                self.recent.remember(device, origin, path, now, generation);
                path
            }
        };
        if let Some(slot) = self.paths.get_mut(index) {
            *slot = Some(path);
        }
        Some(Peer { device, path })
    }

    /// Drops the device references (the reply paths are all worked out).
    pub(crate) fn release(&mut self) {
        self.held = Default::default();
    }
}
