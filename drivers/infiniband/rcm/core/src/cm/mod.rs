// SPDX-License-Identifier: GPL-2.0

//! The InfiniBand connection manager as a sans-IO state machine.
//!
//! An [`Endpoint`] owns every communication id of one host (all devices):
//! their states, the listen table, the remote id / remote QPN tables that
//! catch duplicate and stale REQs, the SIDR table, and one timer per id.
//! It does no I/O and reads no clock: the embedding code feeds it received
//! MADs ([`Endpoint::handle_mad`]), API calls, and the current time
//! ([`Endpoint::handle_timeout`]), and it answers through a [`Sink`]: MADs to
//! transmit and events for the consumers. [`Endpoint::poll_timeout`] says
//! when it next needs the time.
//!
//! Peer addresses are opaque (`A`): the host tests use node numbers, rcm.ko
//! the port and path a MAD arrived on. Storage comes from a
//! [`Collections`](store::Collections) implementation.

pub mod ah_cache;
mod audit;
mod conn;
mod connect;
mod disconnect;
mod endpoint;
mod error;
mod event;
mod lap;
mod listen;
mod mad_store;
mod pacing;
mod qp_attr;
mod remote_index;
mod sidr;
mod state;
pub mod store;
pub(crate) mod table;
mod timers;
mod transport;

pub use audit::AuditError;
pub use conn::{Connection, Owner, QpParams};
pub use endpoint::{fill, keeps_sender, Config, Dropped, Endpoint, Handled, Received};
pub use error::CmError;
pub use event::{Event, Failure};
pub use listen::{ListenSpec, ASSIGN_SERVICE_ID, MAX_LISTEN_MASKS};
pub use qp_attr::{AltPath, QpAttrs, QpTarget};
pub use state::{LapState, State};
pub use transport::{QpType, Transport};

use crate::wire::field::Mad;

/// Monotonic time in milliseconds, as supplied by the caller.
pub type Millis = u64;

/// A deadline that never comes.
pub const NEVER: Millis = Millis::MAX;

/// A local communication id, as it appears on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CommId(pub u32);

/// An RDMA device, as the embedding code numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeviceId(pub u32);

/// The flag in `send_mra`'s service timeout that stores the MRA without
/// sending it: it goes out only if the peer repeats its message
/// (`IB_CM_MRA_FLAG_DELAY`).
pub const MRA_FLAG_DELAY: u8 = 0x80;

/// The most consumer events one input produces: one received MAD, one API
/// call, or one expired timer (see [`Endpoint::handle_timeouts`]). The
/// simulation checks it after every input, so an embedding may reserve
/// room for them before it hands the endpoint an input and never has to
/// drop an event after a transition.
pub const MAX_EVENTS_PER_INPUT: usize = 2;

/// The most state changes one input makes, over all ids (as
/// [`MAX_EVENTS_PER_INPUT`]; the simulation checks it too): room an
/// embedding reserves to trace them.
pub const MAX_STATE_CHANGES_PER_INPUT: usize = 4;

/// The most MADs one input produces (as [`MAX_EVENTS_PER_INPUT`]). A MAD
/// that cannot be sent is recovered by the protocol, so this bound is for
/// sizing, not for correctness.
pub const MAX_SENDS_PER_INPUT: usize = 4;

/// Where a MAD the endpoint sends goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Destination<'a, A> {
    /// An address the endpoint has: an id's peer, or the sender the
    /// embedding supplied with the received MAD ([`Received::from`]).
    Peer(&'a A),
    /// The sender of the MAD being handled, which the embedding did not
    /// supply (see [`keeps_sender`]): an answer to a message that matched
    /// no id, emitted only within that [`Endpoint::handle_mad`] call.
    Sender,
}

/// A MAD the endpoint wants sent.
#[derive(Debug)]
pub struct Transmit<'a, A> {
    /// Where to.
    pub to: Destination<'a, A>,
    /// The whole MAD.
    pub mad: &'a Mad,
    /// The id it belongs to (`None` for answers to MADs that matched no id).
    pub id: Option<CommId>,
    /// Whether this is a retransmission of a request sent before.
    pub retry: bool,
    /// The id's state and LAP state as it sends (IDLE and LAP_UNINIT for
    /// an answer that belongs to no id), for traces.
    pub state: State,
    /// See `state`.
    pub lap_state: LapState,
}

/// Where the endpoint's output goes.
pub trait Sink<A> {
    /// Send a MAD. Failures are reported back with
    /// [`Endpoint::send_failed`]; a lost MAD is recovered by retransmission.
    fn transmit(&mut self, tx: Transmit<'_, A>);
    /// Deliver an event to the consumer of `id`, which `owner` serves.
    fn event(&mut self, id: CommId, owner: Owner, event: Event);
    /// A received message was a duplicate (`cm_rx_duplicates`).
    fn duplicate(&mut self, _attr_id: u16) {}
    /// An id moved from state `from` to `to` (the `rcm:icm_state` trace).
    fn state_changed(&mut self, _id: CommId, _from: State, _to: State) {}
}
