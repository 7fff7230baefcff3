// SPDX-License-Identifier: GPL-2.0

//! What the CM keeps per communication id.
//!
//! Memory per id is bounded and fixed: the fields below, 320 bytes with
//! the kernel's 48-byte address, plus a slot of the endpoint's MAD pool
//! for each MAD it keeps (the outstanding request, kept for
//! retransmission, and the last response, re-sent when the peer repeats
//! its message), and one entry in the deadline index. The remote id and
//! QPN indexes, and the queues behind the peers' windows, chain through
//! the `remote_*_next` and `parked_*` links here and need nothing more per
//! id.

use super::mad_store::MadSlot;
use super::pacing::WindowPlace;
use super::state::{LapState, State};
use super::transport::Transport;
use super::{CommId, Destination, DeviceId, Millis, Sink, Transmit, NEVER};
use crate::timer::IbaTime;
use crate::wire::field::Mad;

/// What a connection's single timer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timer {
    /// Not armed.
    Idle,
    /// Waiting for the answer to `request`; resend it when the timer fires
    /// while `retries_left` > 0.
    Retransmit {
        /// Sends of the request still allowed.
        retries_left: u8,
        /// Time between sends (extended by an MRA).
        interval_ms: u32,
    },
    /// The end of TIMEWAIT.
    Timewait,
    /// The request is kept but not sent yet: it waits for room in its
    /// peer's window (`pacing.rs`; unarmed while parked), then the timer
    /// sends it and becomes `Retransmit` with these settings.
    Paced {
        /// Sends of the request still allowed after the first.
        retries_left: u8,
        /// Time between sends.
        interval_ms: u32,
    },
}

/// The negotiated parameters a consumer's QP is programmed with
/// (`ib_cm_init_qp_attr`), as the connection exchange settled them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QpParams {
    /// The transport connected.
    pub transport: Transport,
    /// Path MTU (IB encoding).
    pub path_mtu: u8,
    /// Partition key.
    pub pkey: u16,
    /// Our QPN.
    pub local_qpn: u32,
    /// The peer's QPN.
    pub remote_qpn: u32,
    /// PSN our receive queue expects first.
    pub rq_psn: u32,
    /// PSN our send queue starts with.
    pub sq_psn: u32,
    /// Incoming RDMA read/atomic requests we accept.
    pub responder_resources: u8,
    /// Outgoing RDMA read/atomic requests we issue.
    pub initiator_depth: u8,
    /// Transport retry count.
    pub retry_count: u8,
    /// RNR retry count.
    pub rnr_retry_count: u8,
    /// Local ACK timeout of the primary path.
    pub ack_timeout: IbaTime,
    /// Local ACK timeout of the alternate path.
    pub alt_ack_timeout: IbaTime,
    /// The Q_Key (UD/SIDR).
    pub qkey: u32,
    /// End-to-end flow control.
    pub flow_control: bool,
    /// The QP uses an SRQ.
    pub srq: bool,
}

/// The last response an id sent, for answering a repeated message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Response {
    /// None to repeat.
    None,
    /// Kept whole in the endpoint's MAD pool (MRA, DREP, REJ, an RTU with
    /// private data).
    Kept(MadSlot),
    /// An RTU without private data (every rdma_cm RTU), rebuilt from the
    /// comm ids when the peer repeats its REP: an established active id
    /// keeps no MAD. `tid` is the transaction it answered.
    BareRtu {
        /// The REQ/REP/RTU exchange's transaction id.
        tid: u64,
    },
}

impl Response {
    /// The pool slot it holds.
    pub(crate) fn slot(self) -> Option<MadSlot> {
        match self {
            Response::Kept(slot) => Some(slot),
            _ => None,
        }
    }
}

/// A listener's registration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Listening {
    /// Its key in the listen table.
    pub(crate) key: super::listen::ListenKey,
    /// Consumers sharing the listener (`ib_cm_insert_listen`).
    pub(crate) share_count: u32,
    /// Identity of the shared handler; `None` for an exclusive listener.
    pub(crate) share_tag: Option<u64>,
}

/// The surface a communication id belongs to, which its events go to: a
/// consumer of the ib_cm API, or rdma_cm (whose ids the rdma_cm core
/// creates). A REQ's or SIDR_REQ's new id belongs to its listener's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Owner {
    /// A consumer of the ib_cm API.
    #[default]
    IbCm,
    /// rdma_cm.
    RdmaCm,
}

/// One communication id.
#[derive(Clone, Debug)]
pub struct Connection<A> {
    pub(crate) id: CommId,
    pub(crate) owner: Owner,
    pub(crate) state: State,
    pub(crate) lap_state: LapState,
    /// The consumer destroyed the id; it lives on only to finish the
    /// protocol (DREQ retries, TIMEWAIT) and delivers no more events.
    pub(crate) destroyed: bool,
    pub(crate) device: DeviceId,
    pub(crate) local_ca_guid: u64,
    pub(crate) service_id: u64,
    /// The peer's comm id; 0 until known.
    pub(crate) remote_id: u32,
    pub(crate) remote_ca_guid: u64,
    /// Where the peer's CM is reached.
    pub(crate) peer: Option<A>,
    /// The alternate path, as the embedding resolved it (REQ, LAP).
    pub(crate) alternate: Option<A>,
    /// Transaction id of the exchange in progress (our request's, or the
    /// peer's request we answer).
    pub(crate) tid: u64,
    /// How long to wait for the answer to one of our requests.
    pub(crate) timeout_ms: u32,
    pub(crate) max_cm_retries: u8,
    /// The service timeout of the last MRA we sent.
    pub(crate) service_timeout: IbaTime,
    pub(crate) qp: QpParams,
    /// Passive ids: the listener whose REQ/SIDR_REQ created them.
    pub(crate) listener: Option<CommId>,
    pub(crate) listening: Option<Listening>,
    /// In the remote id and remote QPN tables (both at once), under
    /// `remote_id`, `qp.remote_qpn` and `remote_ca_guid`.
    pub(crate) remote_indexed: bool,
    /// The next id in the remote id table's bucket.
    pub(crate) remote_id_next: u32,
    /// The next id in the remote QPN table's bucket.
    pub(crate) remote_qpn_next: u32,
    /// In the SIDR table, under (`remote_id`, `peer`): the request id
    /// and sender of the SIDR_REQ it answers.
    pub(crate) in_sidr_table: bool,
    pub(crate) deadline: Millis,
    /// The id's key in the deadline index: never after `deadline` (a
    /// cancelled or postponed timer leaves its entry early, and the entry
    /// moves when it comes up, which saves a tree update per transition).
    pub(crate) deadline_key: Millis,
    pub(crate) timer: Timer,
    /// The request being retransmitted (REQ, REP, DREQ, LAP, SIDR_REQ).
    pub(crate) request: Option<MadSlot>,
    /// The last response sent (MRA, RTU, DREP, REJ), for duplicates.
    pub(crate) response: Response,
    /// Retransmissions of requests so far, for statistics and invariants.
    pub(crate) retransmissions: u32,
    /// The request's place in its peer's window (`pacing.rs`).
    pub(crate) window: WindowPlace,
    /// The ids parked before and after this one behind the peer's window.
    pub(crate) parked_prev: u32,
    pub(crate) parked_next: u32,
}

impl<A: Copy> Connection<A> {
    pub(crate) fn new(id: CommId, device: DeviceId, local_ca_guid: u64, owner: Owner) -> Self {
        Connection {
            id,
            owner,
            state: State::Idle,
            lap_state: LapState::Uninit,
            destroyed: false,
            device,
            local_ca_guid,
            service_id: 0,
            remote_id: 0,
            remote_ca_guid: 0,
            peer: None,
            alternate: None,
            tid: 0,
            timeout_ms: 0,
            max_cm_retries: 0,
            service_timeout: IbaTime::new(0),
            qp: QpParams::default(),
            listener: None,
            listening: None,
            remote_indexed: false,
            remote_id_next: super::remote_index::NO_ID,
            remote_qpn_next: super::remote_index::NO_ID,
            in_sidr_table: false,
            deadline: NEVER,
            deadline_key: NEVER,
            timer: Timer::Idle,
            request: None,
            response: Response::None,
            retransmissions: 0,
            window: WindowPlace::Outside,
            parked_prev: super::remote_index::NO_ID,
            parked_next: super::remote_index::NO_ID,
        }
    }

    /// Moves the id to state `to`; the sink hears of a change.
    pub(crate) fn move_to<S: Sink<A>>(&mut self, to: State, sink: &mut S) {
        let from = core::mem::replace(&mut self.state, to);
        if from != to {
            sink.state_changed(self.id, from, to);
        }
    }

    /// Sends `mad`, a message of this id's, to its peer (if known yet).
    pub(crate) fn send_to_peer<S: Sink<A>>(&self, mad: &Mad, retry: bool, sink: &mut S) {
        if let Some(to) = self.peer.as_ref() {
            sink.transmit(Transmit {
                to: Destination::Peer(to),
                mad,
                id: Some(self.id),
                retry,
                state: self.state,
                lap_state: self.lap_state,
            });
        }
    }

    /// The local communication id.
    pub fn id(&self) -> CommId {
        self.id
    }
    /// The surface its events go to.
    pub fn owner(&self) -> Owner {
        self.owner
    }
    /// The connection state.
    pub fn state(&self) -> State {
        self.state
    }
    /// The alternate path state.
    pub fn lap_state(&self) -> LapState {
        self.lap_state
    }
    /// The peer's communication id (0 while unknown).
    pub fn remote_id(&self) -> u32 {
        self.remote_id
    }
    /// The peer's CA GUID (0 while unknown).
    pub fn remote_ca_guid(&self) -> u64 {
        self.remote_ca_guid
    }
    /// The service id connected to or listened on.
    pub fn service_id(&self) -> u64 {
        self.service_id
    }
    /// The device the id belongs to.
    pub fn device(&self) -> DeviceId {
        self.device
    }
    /// Where the peer is reached, once known.
    pub fn peer(&self) -> Option<&A> {
        self.peer.as_ref()
    }
    /// The alternate path, if the embedding gave one.
    pub fn alternate(&self) -> Option<&A> {
        self.alternate.as_ref()
    }
    /// The negotiated QP parameters.
    pub fn qp_params(&self) -> &QpParams {
        &self.qp
    }
    /// The listener a passive id came from.
    pub fn listener(&self) -> Option<CommId> {
        self.listener
    }
    /// Whether the consumer destroyed the id (it is finishing TIMEWAIT or
    /// a disconnect and delivers no events).
    pub fn is_destroyed(&self) -> bool {
        self.destroyed
    }
    /// When the id's timer fires next ([`NEVER`] if unarmed).
    pub fn deadline(&self) -> Millis {
        self.deadline
    }
    /// Request retransmissions so far.
    pub fn retransmissions(&self) -> u32 {
        self.retransmissions
    }
    /// Sends of the outstanding request still allowed.
    pub fn retries_left(&self) -> Option<u8> {
        match self.timer {
            Timer::Retransmit { retries_left, .. } | Timer::Paced { retries_left, .. } => {
                Some(retries_left)
            }
            _ => None,
        }
    }
    /// The configured maximum of CM retries for this exchange.
    pub fn max_cm_retries(&self) -> u8 {
        self.max_cm_retries
    }
    /// The MAD pool slots the id holds (its request and kept response).
    pub(crate) fn kept_slots(&self) -> impl Iterator<Item = MadSlot> {
        [self.request, self.response.slot()].into_iter().flatten()
    }

    /// The id's key in the SIDR table, when it has an entry there.
    pub(crate) fn sidr_key(&self) -> Option<(u32, A)> {
        self.peer
            .filter(|_| self.in_sidr_table)
            .map(|peer| (self.remote_id, peer))
    }

    /// Whether the id is in the remote id / remote QPN / SIDR tables.
    pub fn in_remote_tables(&self) -> bool {
        self.remote_indexed || self.in_sidr_table
    }
}
