// SPDX-License-Identifier: GPL-2.0

//! A window of requests per peer: at most [`Config::peer_window`] of our
//! requests (REQ, REP, DREQ, LAP, SIDR_REQ) to one peer wait for their
//! first answer at a time. More are kept in the MAD pool, queued behind
//! the peer's window in the order they were made, and sent as answers
//! come back.
//!
//! Without it a connection storm (a thousand `rdma_connect` calls at
//! once) sends a thousand REQs in one burst: more than the peer's MAD
//! receive queue holds (ib_mad posts 512 buffers), so its device drops the
//! rest, and each dropped request waits out its whole timeout (seconds)
//! before it goes again; a peer that answers more slowly than the timeout
//! gets each REQ twice. A request leaves the window when it is answered
//! or ended, or when it is first retransmitted: a peer that does not
//! answer holds the queue for one timeout per window, not for good.
//!
//! The queue is a list through the ids' `parked_prev` / `parked_next`
//! links, so parking allocates nothing; only a peer's first request
//! makes its entry in the window table. Without memory for that entry the
//! request goes out at once, unpaced.
//!
//! [`Config::peer_window`]: super::Config::peer_window

use super::conn::{Connection, Timer};
use super::remote_index::NO_ID;
use super::store::{Collections, OrderedMap};
use super::table::IdTable;
use super::{CommId, Endpoint};

/// Where an id's request stands in its peer's window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WindowPlace {
    /// Not counted: no request, an unpaced one, or one retransmitted.
    Outside,
    /// Counted in the peer's window: sent, or woken to be sent by its
    /// timer.
    InFlight,
    /// Queued behind the window, its timer unarmed.
    Parked,
}

/// One peer's window.
///
/// INVARIANT: `in_flight` ids with this peer are [`WindowPlace::InFlight`];
/// the parked ones form the list `first_parked` .. `last_parked` (ends
/// [`NO_ID`]). An entry with neither is removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PeerWindow {
    pub(crate) in_flight: u32,
    pub(crate) first_parked: u32,
    pub(crate) last_parked: u32,
}

impl PeerWindow {
    /// Neither a request in flight nor one parked: the entry goes.
    pub(crate) fn is_unused(&self) -> bool {
        self.in_flight == 0 && self.first_parked == NO_ID
    }
}

impl<A: Copy + Ord, C: Collections> Endpoint<A, C> {
    /// Requests one peer may have awaiting their first answer (0: no
    /// limit). A smaller window applies as requests drain; a larger one
    /// as requests end.
    pub fn set_peer_window(&mut self, window: u32) {
        self.peer_window = window;
    }

    /// Keys the windows by `node(peer)` rather than the whole address: an
    /// embedding whose addresses carry per-connection path fields (the
    /// kernel's RoCE flow label, hashed from each connection's ports)
    /// maps them to the node whose receive queue they share.
    pub fn set_window_key(&mut self, node: fn(&A) -> A) {
        self.window_key = node;
    }

    /// The window the id's request counts in.
    pub(crate) fn window_of(&self, conn: &Connection<A>) -> Option<A> {
        conn.peer.as_ref().map(self.window_key)
    }

    /// Counts the id's kept request in its peer's window if there is room
    /// (true: send it now) or parks it behind the window (false).
    pub(crate) fn enter_window(&mut self, id: CommId) -> bool {
        let limit = self.peer_window;
        let key = self.window_key;
        let Some(conn) = self.conns.get_mut(id.0) else {
            return true;
        };
        let (Some(peer), true) = (conn.peer.as_ref().map(key), limit > 0) else {
            return true;
        };
        debug_assert_eq!(conn.window, WindowPlace::Outside);
        let Some(window) = self.windows.get_mut(&peer) else {
            let first = PeerWindow {
                in_flight: 1,
                first_parked: NO_ID,
                last_parked: NO_ID,
            };
            if self.windows.try_insert(peer, first).is_ok() {
                conn.window = WindowPlace::InFlight;
            }
            return true;
        };
        if window.in_flight < limit {
            window.in_flight += 1;
            conn.window = WindowPlace::InFlight;
            return true;
        }
        conn.window = WindowPlace::Parked;
        conn.parked_prev = window.last_parked;
        conn.parked_next = NO_ID;
        let last = core::mem::replace(&mut window.last_parked, id.0);
        if last == NO_ID {
            window.first_parked = id.0;
        } else if let Some(before) = self.conns.get_mut(last) {
            before.parked_next = id.0;
        }
        false
    }

    /// Takes the id's request out of its peer's window (answered, ended,
    /// retransmitted or replaced); a request parked behind the window
    /// takes the place freed, and its timer sends it.
    pub(crate) fn leave_window(&mut self, id: CommId) {
        let key = self.window_key;
        let Some(conn) = self.conns.get_mut(id.0) else {
            return;
        };
        let place = core::mem::replace(&mut conn.window, WindowPlace::Outside);
        let (prev, next) = (conn.parked_prev, conn.parked_next);
        conn.parked_prev = NO_ID;
        conn.parked_next = NO_ID;
        let Some(peer) = conn
            .peer
            .as_ref()
            .map(key)
            .filter(|_| place != WindowPlace::Outside)
        else {
            return;
        };
        let Some(window) = self.windows.get_mut(&peer) else {
            return;
        };
        match place {
            WindowPlace::Parked => unlink(&mut self.conns, window, prev, next),
            _ => {
                window.in_flight = window.in_flight.saturating_sub(1);
                while let Some(woken) = self.wake_first(&peer) {
                    // Due at once: the next timer run sends it.
                    let timer = self.conns.get(woken.0).map_or(Timer::Idle, |c| c.timer);
                    self.set_timer(woken, 0, timer);
                }
            }
        }
        // In place, so that a kernel map keeps the node for the next
        // window (one at a time, every request opens and closes one).
        self.windows.update_with(&peer, |w| ((), w.is_unused()));
    }

    /// Moves the first request parked behind `peer`'s window into it, if
    /// there is room.
    fn wake_first(&mut self, peer: &A) -> Option<CommId> {
        let limit = self.peer_window;
        let window = self.windows.get_mut(peer)?;
        if window.first_parked == NO_ID || (limit > 0 && window.in_flight >= limit) {
            return None;
        }
        let first = window.first_parked;
        let conn = self.conns.get_mut(first)?;
        let next = core::mem::replace(&mut conn.parked_next, NO_ID);
        conn.parked_prev = NO_ID;
        conn.window = WindowPlace::InFlight;
        window.in_flight += 1;
        unlink(&mut self.conns, window, NO_ID, next);
        Some(CommId(first))
    }
}

/// Takes the parked id between `prev` and `next` out of `window`'s list.
fn unlink<A, C: Collections>(
    conns: &mut IdTable<Connection<A>, C>,
    window: &mut PeerWindow,
    prev: u32,
    next: u32,
) {
    match conns.get_mut(prev) {
        Some(before) if prev != NO_ID => before.parked_next = next,
        _ => window.first_parked = next,
    }
    match conns.get_mut(next) {
        Some(after) if next != NO_ID => after.parked_prev = prev,
        _ => window.last_parked = prev,
    }
}
