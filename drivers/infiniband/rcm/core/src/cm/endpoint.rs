// SPDX-License-Identifier: GPL-2.0

//! The endpoint: id allocation, the tables, timers, message dispatch and
//! destruction. The per-message protocol lives in `connect.rs`,
//! `disconnect.rs`, `lap.rs` and `sidr.rs`.

use super::conn::{Connection, Owner, Timer};
use super::error::CmError;
use super::listen::{ListenKey, MaskSet};
use super::mad_store::MadStore;
use super::pacing::PeerWindow;
use super::remote_index::{Remote, RemoteIndex, RemoteKeys};
use super::state::{LapState, State};
use super::store::{Collections, OrderedMap};
use super::table::{IdTable, TableFull};
use super::{CommId, Destination, DeviceId, Millis, Sink, Transmit, NEVER};
use crate::reason::{RejectReason, SidrStatus};
use crate::timer;
use crate::wire::disconnect::{Drep, Dreq};
use crate::wire::field::{Mad, MAD_SIZE};
use crate::wire::lap::{Apr, Lap};
use crate::wire::mad::attr;
use crate::wire::mra::{message_ref, Mra, Rej};
use crate::wire::rep::{Rep, Rtu};
use crate::wire::req::Req;
use crate::wire::sidr::{SidrRep, SidrReq};
use crate::wire::{CmMad, CmMessage, ParseError};

/// Settings fixed when an endpoint is created.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// XORed into every local comm id so that ids are not predictable
    /// across boots (the caller supplies randomness).
    pub id_operand: u32,
    /// High 32 bits of the transaction ids of our requests.
    pub tid_high: u32,
    /// Keys the hash of the remote id and QPN indexes, whose keys come
    /// from the wire (random, and unlike the two above never sent).
    pub hash_seed: u64,
    /// Requests one peer may have awaiting their first answer; more wait
    /// their turn (`pacing.rs`). 0: no limit. See
    /// [`Endpoint::set_peer_window`].
    pub peer_window: u32,
}

/// Where a received MAD came from.
#[derive(Clone, Copy, Debug)]
pub struct Received<A> {
    /// The sender, as a reply address. Needed only for the messages
    /// [`keeps_sender`] names, whose sender becomes an id's peer: without
    /// it they are dropped ([`Dropped::NoSender`]). Other messages are
    /// answered (when they match no id) through [`Destination::Sender`]
    /// unless it is given, so an embedding where a reply address is costly
    /// to work out does so only for the few MADs that are answered.
    pub from: Option<A>,
    /// The device (and so the CA) it arrived on.
    pub device: DeviceId,
    /// That CA's GUID, for the REPs and REJs we send in answer.
    pub local_ca_guid: u64,
}

/// What became of a received MAD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handled {
    /// It moved an id's state machine (and usually produced an event).
    Delivered(CommId),
    /// It repeated a message already processed; answered again if the
    /// protocol asks for it.
    Duplicate,
    /// It matched no id and was answered directly (REJ, DREP, SIDR_REP).
    Answered,
    /// It was discarded.
    Dropped(Dropped),
}

/// Why a received MAD was discarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dropped {
    /// Not a CM MAD rcm processes.
    Malformed(ParseError),
    /// No id matches its comm ids.
    UnknownId,
    /// The id is in a state that does not take this message.
    WrongState,
    /// Out of memory; the peer will retransmit.
    NoMemory,
    /// Not a message the CM acts on (ClassPortInfo).
    Ignored,
    /// A message whose sender the endpoint keeps came without one
    /// ([`Received::from`]).
    NoSender,
}

/// Whether the endpoint keeps the sender of a received message of this
/// attribute as the new id's peer (REQ, SIDR_REQ), so that
/// [`Received::from`] must be given with it.
pub fn keeps_sender(attr_id: u16) -> bool {
    matches!(attr_id, attr::REQ | attr::SIDR_REQ)
}

/// The connection manager of one host. See the [module docs](super).
pub struct Endpoint<A: Copy + Ord, C: Collections> {
    pub(crate) conns: IdTable<Connection<A>, C>,
    pub(crate) listeners: C::Map<ListenKey, CommId>,
    pub(crate) masks: MaskSet,
    /// (remote comm id, remote CA GUID) of ids with a peer: duplicate REQs.
    pub(crate) remote_ids: RemoteIndex<C>,
    /// (remote QPN, remote CA GUID) of ids with a peer: stale connections.
    pub(crate) remote_qpns: RemoteIndex<C>,
    /// (remote request id, sender) of SIDR_REQs being answered.
    pub(crate) sidr: C::Map<(u32, A), CommId>,
    /// Every id has exactly one entry (its `deadline_key`, id), NEVER when
    /// unarmed, so re-arming never allocates.
    pub(crate) deadlines: C::Map<(Millis, u32), ()>,
    /// The MADs ids keep for retransmission and duplicates.
    pub(crate) mads: MadStore<C::Vec<Mad>>,
    /// The peers with requests in their window or parked behind it.
    pub(crate) windows: C::Map<A, PeerWindow>,
    pub(crate) peer_window: u32,
    /// The peer node a request's window is keyed by (see
    /// [`Endpoint::set_window_key`]).
    pub(crate) window_key: fn(&A) -> A,
    config: Config,
    pub(crate) next_service_id: u64,
}

/// Builds a CM Send MAD.
pub(crate) fn build(tid: u64, attr_mod: u32, message: CmMessage) -> Mad {
    let mut mad = [0u8; MAD_SIZE];
    CmMad::send(tid, attr_mod, message).emit(&mut mad);
    mad
}

/// size, which the message declares once; `None` if it does not fit.
pub fn fill<const N: usize>(data: &[u8]) -> Option<[u8; N]> {
    if data.len() > N {
        return None;
    }
    let mut out = [0u8; N];
    for (o, d) in out.iter_mut().zip(data) {
        *o = *d;
    }
    Some(out)
}

impl<A: Copy + Ord, C: Collections> Endpoint<A, C> {
    /// An endpoint with no ids.
    pub fn new(config: Config) -> Self {
        Endpoint {
            conns: IdTable::new(config.id_operand),
            listeners: OrderedMap::new_empty(),
            masks: MaskSet::new(),
            remote_ids: RemoteIndex::new(Remote::Id, config.hash_seed),
            remote_qpns: RemoteIndex::new(Remote::Qpn, config.hash_seed.rotate_left(32)),
            sidr: OrderedMap::new_empty(),
            deadlines: OrderedMap::new_empty(),
            mads: MadStore::new(),
            windows: OrderedMap::new_empty(),
            peer_window: config.peer_window,
            window_key: |peer| *peer,
            config,
            next_service_id: super::listen::ASSIGN_SERVICE_ID,
        }
    }

    // ---- ids ----------------------------------------------------------

    /// Creates an IDLE id on `device` (`ib_create_cm_id`) for a consumer
    /// of the ib_cm API.
    pub fn create_id(&mut self, device: DeviceId, local_ca_guid: u64) -> Result<CommId, CmError> {
        self.create_owned_id(device, local_ca_guid, Owner::IbCm)
    }

    /// Creates an IDLE id on `device` whose events go to `owner`.
    pub fn create_owned_id(
        &mut self,
        device: DeviceId,
        local_ca_guid: u64,
        owner: Owner,
    ) -> Result<CommId, CmError> {
        self.alloc(device, local_ca_guid, owner)
    }

    /// An id for a request to `listener`: on the request's device, owned
    /// as the listener is.
    pub(crate) fn alloc_for_request(
        &mut self,
        rx: &Received<A>,
        listener: CommId,
    ) -> Result<CommId, CmError> {
        let owner = self.conns.get(listener.0).map_or(Owner::IbCm, |l| l.owner);
        self.alloc(rx.device, rx.local_ca_guid, owner)
    }

    /// Allocates an id (see [`IdTable`] for why a new id does not match
    /// an old connection a peer still knows).
    fn alloc(&mut self, device: DeviceId, guid: u64, owner: Owner) -> Result<CommId, CmError> {
        let id = self
            .conns
            .try_insert(|id| Connection::new(CommId(id), device, guid, owner))
            .map(CommId)
            .map_err(|e| match e {
                TableFull::NoMemory => CmError::NoMemory,
                TableFull::NoSpace => CmError::NoSpace,
            })?;
        if self.deadlines.try_insert((NEVER, id.0), ()).is_err() {
            self.conns.remove(id.0);
            return Err(CmError::NoMemory);
        }
        Ok(id)
    }

    /// The id's record, if it exists (destroyed ids finishing the protocol
    /// included; see [`Connection::is_destroyed`]).
    pub fn get(&self, id: CommId) -> Option<&Connection<A>> {
        self.conns.get(id.0)
    }

    /// Number of ids, destroyed ones still finishing included.
    pub fn len(&self) -> usize {
        self.conns.len()
    }

    /// Whether no id exists.
    pub fn is_empty(&self) -> bool {
        self.conns.len() == 0
    }

    /// MADs the ids keep (outstanding requests and responses for
    /// duplicates).
    pub fn kept_mads(&self) -> usize {
        self.mads.in_use()
    }

    /// Entries in (listen, remote id, remote QPN, SIDR, deadline) tables.
    pub fn table_sizes(&self) -> [usize; 5] {
        [
            self.listeners.len(),
            self.remote_ids.len(),
            self.remote_qpns.len(),
            self.sidr.len(),
            self.deadlines.len(),
        ]
    }

    /// The ids on `device` whose DREQ waits for its DREP. When a device
    /// goes, its consumers disconnect first, and the embedding lets those
    /// answers arrive before it closes the port. O(n).
    pub fn dreps_awaited(&self, device: DeviceId) -> impl Iterator<Item = CommId> + '_ {
        self.ids().filter(move |id| {
            self.get(*id)
                .is_some_and(|c| c.device == device && c.state == State::DreqSent)
        })
    }

    /// Whether the id's DREQ still waits for its DREP.
    pub fn awaits_drep(&self, id: CommId) -> bool {
        self.get(id).is_some_and(|c| c.state == State::DreqSent)
    }

    /// Every id (in table order).
    pub fn ids(&self) -> impl Iterator<Item = CommId> + '_ {
        self.conns.ids().map(CommId)
    }

    /// A live (not destroyed) id, for API calls.
    pub(crate) fn live(&self, id: CommId) -> Result<&Connection<A>, CmError> {
        match self.conns.get(id.0) {
            Some(c) if !c.destroyed => Ok(c),
            _ => Err(CmError::NoSuchId),
        }
    }

    pub(crate) fn live_mut(&mut self, id: CommId) -> Result<&mut Connection<A>, CmError> {
        match self.conns.get_mut(id.0) {
            Some(c) if !c.destroyed => Ok(c),
            _ => Err(CmError::NoSuchId),
        }
    }

    /// The id, if it exists (destroyed included). Internal paths only look
    /// up ids they know exist; `None` then means "nothing to do".
    pub(crate) fn conn_mut(&mut self, id: CommId) -> Option<&mut Connection<A>> {
        self.conns.get_mut(id.0)
    }

    /// Finds the id a message names: our comm id plus the peer's comm id
    /// we must have recorded (0 = "not yet known"), as the C CM matches.
    pub(crate) fn acquire(&self, local: u32, remote: u32) -> Option<CommId> {
        match self.conns.get(local) {
            Some(c) if c.remote_id == remote => Some(c.id),
            _ => None,
        }
    }

    /// A transaction id for a request of ours.
    pub(crate) fn form_tid(&self, id: CommId) -> u64 {
        (u64::from(self.config.tid_high) << 32) | u64::from(id.0)
    }

    // ---- state helpers --------------------------------------------------

    /// Forgets the peer's entries in the remote id and QPN tables.
    pub(crate) fn remove_remote(&mut self, id: CommId) {
        self.remote_ids.remove(&mut self.conns, id);
        self.remote_qpns.remove(&mut self.conns, id);
        if let Some(conn) = self.conns.get_mut(id.0) {
            conn.remote_indexed = false;
        }
    }

    pub(crate) fn remove_sidr(&mut self, id: CommId) {
        let Some(conn) = self.conns.get_mut(id.0) else {
            return;
        };
        if let Some(key) = conn.sidr_key() {
            conn.in_sidr_table = false;
            self.sidr.remove(&key);
        }
    }

    /// Back to IDLE: no peer, no timer.
    pub(crate) fn reset_to_idle<S: Sink<A>>(&mut self, id: CommId, sink: &mut S) {
        self.remove_remote(id);
        self.remove_sidr(id);
        self.cancel_timer(id);
        if let Some(conn) = self.conn_mut(id) {
            conn.move_to(State::Idle, sink);
        }
    }

    /// Into TIMEWAIT for one ACK timeout of the path: the peer's comm id and
    /// QPN are released, the id itself is not reusable until it ends.
    pub(crate) fn enter_timewait<S: Sink<A>>(&mut self, now: Millis, id: CommId, sink: &mut S) {
        self.remove_remote(id);
        self.drop_request(id);
        let Some(conn) = self.conn_mut(id) else {
            return;
        };
        conn.move_to(State::Timewait, sink);
        let wait = timer::timewait_ms(conn.qp.ack_timeout);
        self.set_timer(
            id,
            now.saturating_add(u64::from(wait.max(1))),
            Timer::Timewait,
        );
    }

    /// Frees a destroyed id once it has nothing left to do.
    pub(crate) fn reap(&mut self, id: CommId) {
        let done = matches!(self.conns.get(id.0), Some(c) if c.destroyed && c.state == State::Idle);
        if done {
            self.free(id);
        }
    }

    /// Removes the id and every table entry that refers to it.
    fn free(&mut self, id: CommId) {
        self.leave_window(id);
        self.remove_remote(id);
        self.remove_sidr(id);
        if let Some(conn) = self.conns.remove(id.0) {
            for slot in conn.kept_slots() {
                self.mads.release(slot);
            }
            // In place: a kernel map keeps the node for the next id's.
            self.deadlines
                .remove_with(&(conn.deadline_key, id.0), |_| ());
            if let Some(l) = conn.listening {
                self.listeners.remove(&l.key);
                self.masks.release(l.key.mask);
            }
        }
    }

    /// Records the peer of an id (its comm id, QPN and CA GUID) and puts
    /// the id in the remote id and remote QPN tables. Fails without
    /// changing anything if either entry cannot be added.
    pub(crate) fn insert_remote(&mut self, id: CommId, keys: RemoteKeys) -> Result<(), Dropped> {
        if self
            .remote_ids
            .get(&self.conns, keys.key(Remote::Id))
            .is_some()
            || self
                .remote_qpns
                .get(&self.conns, keys.key(Remote::Qpn))
                .is_some()
        {
            return Err(Dropped::WrongState);
        }
        self.remove_remote(id);
        let Some(conn) = self.conns.get_mut(id.0) else {
            return Err(Dropped::UnknownId);
        };
        let before = conn.remote_keys();
        conn.set_remote_keys(keys);
        conn.remote_indexed = true;
        if self.remote_ids.insert(&mut self.conns, id).is_err()
            || self.remote_qpns.insert(&mut self.conns, id).is_err()
        {
            // Removing from an index the id is not on changes nothing.
            self.remove_remote(id);
            if let Some(conn) = self.conns.get_mut(id.0) {
                conn.set_remote_keys(before);
            }
            return Err(Dropped::NoMemory);
        }
        Ok(())
    }

    // ---- destroy ------------------------------------------------------

    /// Destroys an id (`ib_destroy_cm_id`): the connection is ended as the
    /// protocol requires (REJ, DREQ or DREP to the peer) and the id delivers
    /// no further events. It disappears at once or, if the protocol still
    /// needs it (DREQ retries, TIMEWAIT), when that is over.
    ///
    /// `reject` false skips the REJ of a REQ still unanswered (the C CM's
    /// `-ENOMEM` case: let the peer retry). Returns false when the id was
    /// a shared listener that other users still hold.
    pub fn destroy<S: Sink<A>>(
        &mut self,
        now: Millis,
        id: CommId,
        reject: bool,
        sink: &mut S,
    ) -> Result<bool, CmError> {
        // Destroying cannot fail (`ib_destroy_cm_id` returns nothing): without
        // room in the pool the DREQ goes out once and is not retried, and a
        // REJ or DREP is not repeated.
        let _ = self.reserve_mads();
        let conn = self.live_mut(id)?;
        if let Some(l) = conn.listening.as_mut() {
            if l.share_count > 1 {
                l.share_count -= 1;
                return Ok(false);
            }
        }
        conn.destroyed = true;
        let (state, guid) = (conn.state, conn.local_ca_guid);
        match state {
            State::Idle => {}
            State::Listen => {
                let key = conn.listening.take().map(|l| l.key);
                conn.move_to(State::Idle, sink);
                if let Some(key) = key {
                    self.listeners.remove(&key);
                    self.masks.release(key.mask);
                }
            }
            State::SidrReqSent => self.reset_to_idle(id, sink),
            State::SidrReqRcvd => {
                let rep = SidrRep {
                    status: SidrStatus::Reject,
                    ..self.sidr_rep_template(id)
                };
                self.emit_sidr_rep(id, &rep, sink);
                self.reset_to_idle(id, sink);
            }
            // A REQ still waiting behind the peer's window never left:
            // nothing to reject.
            State::ReqSent if matches!(conn.timer, Timer::Paced { .. }) => {
                self.reset_to_idle(id, sink)
            }
            State::ReqSent | State::MraReqRcvd => {
                self.cancel_timer(id);
                let ari = guid.to_be_bytes();
                self.reject(now, id, RejectReason::Timeout, &ari, &[], sink)?;
            }
            State::ReqRcvd if !reject => self.reset_to_idle(id, sink),
            State::ReqRcvd
            | State::MraReqSent
            | State::RepRcvd
            | State::MraRepSent
            | State::RepSent
            | State::MraRepRcvd => {
                self.reject(now, id, RejectReason::ConsumerDefined, &[], &[], sink)?;
            }
            State::Established => {
                // The DREQ keeps being retried after the consumer is gone,
                // so the peer learns of the disconnect despite losses.
                self.disconnect(now, id, &[], sink)?;
            }
            State::DreqSent | State::Timewait => {}
            State::DreqRcvd => self.disconnect_reply(now, id, &[], sink)?,
        }
        self.reap(id);
        Ok(true)
    }

    // ---- receive --------------------------------------------------------

    /// Processes one received MAD (`bytes` must be the 256-byte MAD).
    pub fn handle_mad<S: Sink<A>>(
        &mut self,
        now: Millis,
        rx: &Received<A>,
        bytes: &[u8],
        sink: &mut S,
    ) -> Handled {
        let (header, mad) = match CmMad::check(bytes) {
            Ok(checked) => checked,
            Err(ParseError::ClassVersion(_)) => return self.reject_class_version(rx, bytes, sink),
            Err(e) => return Handled::Dropped(Dropped::Malformed(e)),
        };
        if self.reserve_mads().is_err() {
            return Handled::Dropped(Dropped::NoMemory);
        }
        let tid = header.transaction_id;
        let attr_mod = header.attr_mod;
        // Each message is read where it is used, not moved through a
        // `CmMessage` (copies of up to 248 bytes on the hottest path).
        match header.attr_id {
            attr::REQ => self.recv_req(now, rx, tid, attr_mod, &Req::read(mad), sink),
            attr::MRA => self.recv_mra(now, &Mra::read(mad), sink),
            attr::REJ => self.recv_rej(now, attr_mod, &Rej::read(mad), sink),
            attr::REP => self.recv_rep(now, rx, attr_mod, &Rep::read(mad), sink),
            attr::RTU => self.recv_rtu(rx, tid, &Rtu::read(mad), sink),
            attr::DREQ => self.recv_dreq(now, rx, tid, &Dreq::read(mad), sink),
            attr::DREP => self.recv_drep(now, &Drep::read(mad), sink),
            attr::SIDR_REQ => self.recv_sidr_req(rx, tid, &SidrReq::read(mad), sink),
            attr::SIDR_REP => self.recv_sidr_rep(&SidrRep::read(mad), sink),
            attr::LAP => self.recv_lap(tid, &Lap::read(mad), sink),
            attr::APR => self.recv_apr(&Apr::read(mad), sink),
            _ => Handled::Dropped(Dropped::Ignored),
        }
    }

    /// A REQ of a class version we do not speak gets REJ 31, naming the
    /// version we do in the ARI.
    fn reject_class_version<S: Sink<A>>(
        &mut self,
        rx: &Received<A>,
        bytes: &[u8],
        sink: &mut S,
    ) -> Handled {
        let Ok(raw) = <&Mad>::try_from(bytes) else {
            return Handled::Dropped(Dropped::Malformed(ParseError::WrongLength(bytes.len())));
        };
        let header = crate::wire::mad::MadHeader::read(raw);
        if header.attr_id != attr::REQ || header.mgmt_class != crate::wire::mad::MGMT_CLASS_CM {
            return Handled::Dropped(Dropped::Malformed(ParseError::ClassVersion(
                header.class_version,
            )));
        }
        let req = Req::read(raw);
        let mut ari = [0u8; 72];
        ari[0] = crate::wire::mad::CM_CLASS_VERSION;
        let rej = Rej {
            local_comm_id: 0,
            remote_comm_id: req.local_comm_id,
            message_rejected: message_ref::REQ,
            rejected_info_length: 1,
            reason: RejectReason::InvalidClassVersion,
            ari,
            private_data: [0; 148],
        };
        Self::answer(rx, header.transaction_id, CmMessage::Rej(rej), sink);
        Handled::Answered
    }

    /// Answers a MAD that matched no id with `message` to its sender.
    pub(crate) fn answer<S: Sink<A>>(rx: &Received<A>, tid: u64, message: CmMessage, sink: &mut S) {
        let mad = build(tid, 0, message);
        sink.transmit(Transmit {
            to: rx
                .from
                .as_ref()
                .map_or(Destination::Sender, Destination::Peer),
            mad: &mad,
            id: None,
            retry: false,
            state: State::Idle,
            lap_state: LapState::Uninit,
        });
    }
}
