// SPDX-License-Identifier: GPL-2.0

//! What the endpoint produces while it is locked, and the queue its events
//! wait in for delivery.
//!
//! The endpoint sits behind a spinlock, so nothing it calls may
//! sleep or allocate much: an [`Outbox`] reserves room for the output of
//! the inputs it will collect (the core bounds the output of each input)
//! *before* the lock is taken, including the node its events will occupy
//! in the [`EventQueue`]. Once a transition has happened its events are
//! therefore never lost to memory pressure; a MAD that finds no room is
//! counted, reported and recovered by the protocol's retransmission.
//!
//! Most inputs post a MAD or two and raise no event, so an outbox with room
//! for one input usually comes back whole once its MADs are posted: the
//! service keeps a few such [`SpareOutboxes`] and the next input reserves
//! without allocating.

use super::peer::Peer;
use crate::proto::cm::{
    CommId, Destination, Event, LapState, Owner, Sink, State, Transmit, MAX_EVENTS_PER_INPUT,
    MAX_SENDS_PER_INPUT, MAX_STATE_CHANGES_PER_INPUT,
};
use crate::proto::wire::mad::peek_attr_id;
use crate::rdma::mad::MAD_SIZE;
use crate::rdma::trace::icm_state_enabled as trace_states_enabled;
use kernel::alloc::{AllocError, Flags};
use kernel::prelude::*;
use kernel::rbtree::{RBTree, RBTreeNodeReservation};

/// A batch of events of one or more inputs, in order, each with the
/// surface its id belongs to.
pub(crate) type EventBatch = KVec<(CommId, Owner, Event)>;

/// Where a MAD to post goes.
#[derive(Clone, Copy)]
pub(crate) enum Recipient {
    /// A peer whose path is known.
    Peer(Peer),
    /// The sender of the received MAD at this index of the batch being
    /// handled, whose path is worked out after the endpoint is unlocked
    /// (it may sleep); not sent if it stays unknown.
    SenderOf(usize),
}

/// One MAD to post.
#[derive(Clone, Copy)]
pub(crate) struct Outgoing {
    pub(crate) to: Recipient,
    pub(crate) mad: [u8; MAD_SIZE],
    pub(crate) cookie: u64,
    pub(crate) retry: bool,
    /// The sending id's states, for the send's trace event.
    pub(crate) state: State,
    pub(crate) lap_state: LapState,
}

impl Outgoing {
    /// What fills a send's room before it is used.
    const BLANK: Self = Outgoing {
        to: Recipient::SenderOf(0),
        mad: [0; MAD_SIZE],
        cookie: 0,
        retry: false,
        state: State::Idle,
        lap_state: LapState::Uninit,
    };
}

/// An id's move from one state to another, for `rcm:icm_state`.
#[derive(Clone, Copy)]
pub(crate) struct StateChange {
    pub(crate) id: CommId,
    pub(crate) from: State,
    pub(crate) to: State,
}

impl StateChange {
    const BLANK: Self = StateChange {
        id: CommId(0),
        from: State::Idle,
        to: State::Idle,
    };
}

/// A vector whose room is filled up front, so that emptying it keeps the
/// room (6.12's `KVec` can neither pop nor truncate). Beyond its room it
/// grows with `GFP_ATOMIC`, best effort.
pub(crate) struct Room<T: Copy> {
    slots: KVec<T>,
    // INVARIANT: `len <= slots.len()`.
    len: usize,
}

impl<T: Copy> Room<T> {
    fn with_room(n: usize, blank: T, flags: Flags) -> Result<Self> {
        Ok(Room {
            slots: KVec::from_elem(blank, n, flags)?,
            len: 0,
        })
    }

    fn new() -> Self {
        Room {
            slots: KVec::new(),
            len: 0,
        }
    }

    /// Appends `value`; an error if it found no room.
    fn push(&mut self, value: T) -> core::result::Result<(), AllocError> {
        match self.slots.get_mut(self.len) {
            Some(slot) => *slot = value,
            None => self.slots.push(value, GFP_ATOMIC)?,
        }
        self.len += 1;
        Ok(())
    }

    fn clear(&mut self) {
        self.len = 0;
    }

    pub(crate) fn as_slice(&self) -> &[T] {
        self.slots.get(..self.len).unwrap_or(&[])
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        self.slots.get_mut(..self.len).unwrap_or(&mut [])
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A send's cookie: the comm id and attribute, so that a failed request
/// can be reported to the endpoint. Bit 48 marks "has an id".
fn cookie(id: Option<CommId>, attr_id: u16) -> u64 {
    match id {
        Some(id) => 1 << 48 | u64::from(attr_id) << 32 | u64::from(id.0),
        None => u64::from(attr_id) << 32,
    }
}

/// The comm id and attribute of a failed send's cookie, if it had an id.
pub(crate) fn cookie_request(cookie: u64) -> Option<(CommId, u16)> {
    (cookie >> 48 == 1).then(|| (CommId(cookie as u32), (cookie >> 32) as u16))
}

/// Collects the endpoint's output while it is locked.
pub(crate) struct Outbox {
    /// The inputs whose output it has room for (0: none reserved).
    inputs: usize,
    pub(crate) sends: Room<Outgoing>,
    /// The index in its batch of the received MAD being handled, whose
    /// sender the endpoint's answers go to (`Destination::Sender`).
    pub(crate) handling: Option<usize>,
    /// MADs that found no room (the protocol resends them).
    pub(crate) dropped: u32,
    /// Attributes of received messages that were duplicates.
    pub(crate) duplicates: Room<u16>,
    /// Whether state changes are collected: `rcm:icm_state` was on when
    /// the room was reserved (off, a transition costs a test).
    tracing_states: bool,
    /// The ids' state changes, in order, while `tracing_states`.
    pub(crate) states: Room<StateChange>,
    /// Events for consumers, in order.
    events: EventBatch,
    /// The queue node the events will occupy.
    node: Option<RBTreeNodeReservation<u64, EventBatch>>,
    /// Events that found no room: the core broke its per-input bound.
    lost: u32,
    /// The endpoint's next deadline as the input left it, read while the
    /// input still held the endpoint's lock (`None`: not read), so that
    /// arming the timer after the sends takes that lock no more.
    pub(crate) next_deadline: Option<Option<u64>>,
}

impl Outbox {
    /// Room for the output of `inputs` inputs (received MADs, API calls,
    /// expired timers), allocated with `flags`.
    pub(crate) fn reserve(inputs: usize, flags: Flags) -> Result<Self> {
        Outbox {
            inputs,
            sends: Room::with_room(inputs * MAX_SENDS_PER_INPUT, Outgoing::BLANK, flags)?,
            handling: None,
            dropped: 0,
            duplicates: Room::with_room(inputs, 0, flags)?,
            tracing_states: false,
            states: Room::new(),
            events: KVec::with_capacity(inputs * MAX_EVENTS_PER_INPUT, flags)?,
            node: Some(RBTreeNodeReservation::new(flags)?),
            lost: 0,
            next_deadline: None,
        }
        .with_state_room(flags)
    }

    /// Whether it collects state changes as `rcm:icm_state` now asks (a
    /// spare kept from before the event was switched does not, and is
    /// not taken).
    pub(crate) fn traces_states_as_asked(&self) -> bool {
        self.tracing_states == trace_states_enabled()
    }

    /// Room for the state changes of its inputs if `rcm:icm_state` is on.
    fn with_state_room(mut self, flags: Flags) -> Result<Self> {
        self.tracing_states = trace_states_enabled();
        if self.tracing_states {
            let room = self.inputs.max(1) * MAX_STATE_CHANGES_PER_INPUT;
            self.states = Room::with_room(room, StateChange::BLANK, flags)?;
        }
        Ok(self)
    }

    /// Room for the events of `inputs` inputs that send no MAD, for
    /// callers in atomic context, which cannot post MADs (they queue the
    /// events and drop the outbox).
    pub(crate) fn for_events(inputs: usize, flags: Flags) -> Result<Self> {
        Outbox {
            inputs: 0,
            sends: Room::new(),
            handling: None,
            dropped: 0,
            duplicates: Room::new(),
            tracing_states: false,
            states: Room::new(),
            events: KVec::with_capacity(inputs * MAX_EVENTS_PER_INPUT, flags)?,
            node: Some(RBTreeNodeReservation::new(flags)?),
            lost: 0,
            next_deadline: None,
        }
        .with_state_room(flags)
    }

    /// An outbox without room, for calls that must go ahead whatever the
    /// memory (a destroy): its MADs are best effort, and the inputs it
    /// serves emit no events.
    pub(crate) fn unreserved() -> Self {
        Outbox {
            inputs: 0,
            sends: Room::new(),
            handling: None,
            dropped: 0,
            duplicates: Room::new(),
            tracing_states: false,
            states: Room::new(),
            events: KVec::new(),
            node: None,
            lost: 0,
            next_deadline: None,
        }
    }
}

impl Outbox {
    /// The events collected so far, in order.
    pub(crate) fn events(&self) -> &[(CommId, Owner, Event)] {
        &self.events
    }

    /// Whether [`EventQueue::push`] has anything to do: events to move,
    /// or lost ones to report.
    pub(crate) fn has_events_to_queue(&self) -> bool {
        !self.events.is_empty() || self.lost > 0
    }

    /// Empties a sent outbox with room for one input and makes sure it
    /// still has room for one input's events (they went to the queue with
    /// their node), for [`SpareOutboxes`]; `None` if it cannot serve
    /// again. No lock held (it may allocate).
    pub(crate) fn into_spare(mut self) -> Option<Self> {
        if self.inputs != 1 {
            return None;
        }
        self.sends.clear();
        self.duplicates.clear();
        self.states.clear();
        self.handling = None;
        self.dropped = 0;
        self.lost = 0;
        self.next_deadline = None;
        if self.events.capacity() < MAX_EVENTS_PER_INPUT || !self.events.is_empty() {
            self.events = KVec::with_capacity(MAX_EVENTS_PER_INPUT, GFP_KERNEL).ok()?;
        }
        if self.node.is_none() {
            self.node = Some(RBTreeNodeReservation::new(GFP_KERNEL).ok()?);
        }
        Some(self)
    }
}

/// Outboxes with room for one input each, emptied after their MADs were
/// posted, for the next inputs (see the module's comment).
pub(crate) struct SpareOutboxes([Option<Outbox>; SPARE_OUTBOXES]);

/// How many spare outboxes the service keeps: about as many as inputs run
/// at once (each spare holds about 2.5 KB).
const SPARE_OUTBOXES: usize = 4;

impl SpareOutboxes {
    pub(crate) const fn new() -> Self {
        SpareOutboxes([const { None }; SPARE_OUTBOXES])
    }

    /// A spare outbox, if one is kept.
    pub(crate) fn take(&mut self) -> Option<Outbox> {
        self.0.iter_mut().find_map(Option::take)
    }

    /// Keeps `outbox` if there is a free place; hands it back otherwise
    /// (for the caller to free outside its lock).
    pub(crate) fn keep(&mut self, outbox: Outbox) -> Option<Outbox> {
        match self.0.iter_mut().find(|place| place.is_none()) {
            Some(place) => {
                *place = Some(outbox);
                None
            }
            None => Some(outbox),
        }
    }
}

impl Sink<Peer> for Outbox {
    fn transmit(&mut self, tx: Transmit<'_, Peer>) {
        let to = match (tx.to, self.handling) {
            (Destination::Peer(peer), _) => Recipient::Peer(*peer),
            (Destination::Sender, Some(index)) => Recipient::SenderOf(index),
            // The core answers senders only while it handles a MAD.
            (Destination::Sender, None) => {
                self.dropped += 1;
                return;
            }
        };
        let out = Outgoing {
            to,
            mad: *tx.mad,
            cookie: cookie(tx.id, peek_attr_id(tx.mad)),
            retry: tx.retry,
            state: tx.state,
            lap_state: tx.lap_state,
        };
        if self.sends.push(out).is_err() {
            self.dropped += 1;
        }
    }

    fn duplicate(&mut self, attr_id: u16) {
        // Only a statistic.
        let _ = self.duplicates.push(attr_id);
    }

    fn event(&mut self, id: CommId, owner: Owner, event: Event) {
        if self.events.push((id, owner, event), GFP_ATOMIC).is_err() {
            self.lost += 1;
        }
    }

    fn state_changed(&mut self, id: CommId, from: State, to: State) {
        if self.tracing_states {
            // Only a trace: beyond the core's bound it is best effort.
            let _ = self.states.push(StateChange { id, from, to });
        }
    }
}

/// Events waiting for delivery: batches in the order they were queued.
pub(crate) struct EventQueue {
    batches: RBTree<u64, EventBatch>,
    next: u64,
}

impl EventQueue {
    pub(crate) fn new() -> Self {
        EventQueue {
            batches: RBTree::new(),
            next: 0,
        }
    }

    /// Moves an outbox's events to the end of the queue without
    /// allocating; true if there were any.
    pub(crate) fn push(&mut self, outbox: &mut Outbox) -> bool {
        if outbox.lost > 0 {
            pr_err!(
                "{} CM events lost (the core's per-input bound broke)\n",
                outbox.lost
            );
            outbox.lost = 0;
        }
        if outbox.events.is_empty() {
            return false;
        }
        let Some(node) = outbox.node.take() else {
            // An unreserved outbox serves only inputs without events.
            pr_err!(
                "{} CM events lost (no room reserved)\n",
                outbox.events.len()
            );
            outbox.events = KVec::new();
            return false;
        };
        let batch = core::mem::take(&mut outbox.events);
        self.batches.insert(node.into_node(self.next, batch));
        self.next = self.next.wrapping_add(1);
        true
    }

    /// The oldest batch.
    pub(crate) fn pop(&mut self) -> Option<EventBatch> {
        let (_, node) = self.batches.cursor_front()?.remove_current();
        Some(node.to_key_value().1)
    }
}
