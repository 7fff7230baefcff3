// SPDX-License-Identifier: GPL-2.0

//! The device's bookkeeping as one: contexts (an rdma_cm id as one open
//! file knows it) with their memberships ([`super::contexts`]), and where
//! their events go ([`super::queues`]), with the accounting librdmacm
//! depends on (6.12's ucma.c rules):
//!
//! - events are delivered in order per file; `events_reported` counts
//!   only delivered events, a CONNECT_REQUEST on the listener's context,
//!   a multicast event on both the membership and its context;
//! - a listener's backlog is a number of undelivered requests: a request
//!   takes a slot until GET_EVENT delivers it, and none left refuses it;
//! - a new connection's context has no handle (`uid` 0) until ACCEPT gives
//!   it one, and events for it before then are dropped;
//! - destroying a context drops its undelivered events and destroys the
//!   new connections of its undelivered requests; leaving a group drops
//!   the membership's; closing a file destroys all its contexts;
//! - MIGRATE_ID moves a context and its undelivered events, in order, to
//!   the end of another file's queue.
//!
//! The two halves are kept apart so that an embedding can lock them
//! apart: commands hold and let go of contexts without meeting event
//! delivery, and an event is queued without the contexts. [`Both`] makes
//! the changes that touch both (the caller holds both, contexts first);
//! [`UcmaTable`] owns both for an embedding with one lock, and the tests.
//!
//! Teardown is two-step, as the rdma_cm id must be destroyed between the
//! steps (outside any lock of the embedding): `unpublish_*` hides the
//! context or membership from lookups and hands back what to destroy, and
//! `finish_*` removes it with its events once no more can arrive.

use super::contexts::Life;
pub use super::contexts::{CtxId, FileId, McId, UcmaContexts};
use super::event::EventResp;
pub use super::queues::{Delivery, EventTicket, Refusal, UcmaQueues};
use super::UcmaError;
use crate::cm::store::{Collections, NoMemory};
use crate::rdma_cm::SockAddr;

/// The two halves, borrowed together for a change that touches both.
pub struct Both<'a, C: Collections, H: Clone> {
    /// The contexts and memberships.
    pub contexts: &'a mut UcmaContexts<C, H>,
    /// Where their events go.
    pub queues: &'a mut UcmaQueues<C>,
}

impl<C: Collections, H: Clone> Both<'_, C, H> {
    /// Allocates a context of `file`, named `uid`, whose rdma_cm id is
    /// being created; [`UcmaContexts::publish`] or [`Self::discard`] it
    /// next.
    pub fn reserve(&mut self, file: FileId, uid: u64) -> Result<CtxId, NoMemory> {
        let ctx = self.contexts.insert(file, None, Life::Reserved)?;
        if self.queues.add(ctx, file, uid).is_err() {
            self.contexts.remove(ctx, &mut |_| {});
            return Err(NoMemory);
        }
        Ok(ctx)
    }

    /// The context's rdma_cm id could not be created.
    pub fn discard(&mut self, ctx: CtxId) {
        self.remove_context(ctx, &mut |_, _| {});
    }

    /// A connection request for listener `listener`: a context for the new
    /// rdma_cm id `handle` (with no uid until ACCEPT), and the event on the
    /// listener's file naming it (`resp`'s uid and id are filled in).
    /// Returns the new context and that file (whose readers to wake).
    pub fn request(
        &mut self,
        listener: CtxId,
        handle: H,
        mut resp: EventResp,
    ) -> Result<(CtxId, FileId), Refusal> {
        if !self.contexts.contains(listener) {
            return Err(Refusal::NoListener);
        }
        let (file, uid) = self.queues.request_room(listener)?;
        let new_ctx = self
            .contexts
            .insert(file, Some(handle), Life::Public)
            .map_err(|_| Refusal::NoMemory)?;
        resp.uid = uid;
        resp.id = new_ctx.0;
        if let Err(e) = self.queues.request(listener, new_ctx, file, resp) {
            self.contexts.remove(new_ctx, &mut |_| {});
            return Err(e);
        }
        Ok((new_ctx, file))
    }

    /// DESTROY_ID, last step (its rdma_cm id is destroyed): removes the
    /// context, its undelivered events and memberships. The new
    /// connections of its undelivered requests are hidden and their
    /// rdma_cm ids go to `release`, with their contexts, which stay until
    /// the caller has destroyed those ids and finishes them here too:
    /// until then an event of such an id finds its own context (and is
    /// dropped, as it has no handle), never a new context that took its
    /// number. Returns the events it reported.
    pub fn finish_destroy(&mut self, ctx: CtxId, release: &mut impl FnMut(CtxId, H)) -> u32 {
        self.remove_context(ctx, release)
    }

    fn remove_context(&mut self, ctx: CtxId, release: &mut impl FnMut(CtxId, H)) -> u32 {
        let queues = &mut *self.queues;
        if !self.contexts.remove(ctx, &mut |mc| {
            queues.remove_membership(mc);
        }) {
            return 0;
        }
        let Some((file, reported)) = self.queues.remove(ctx) else {
            return 0;
        };
        // The next event of the context is found before a request's new
        // connection goes (which removes that one's events, never this
        // context's), so the walk is one pass over the file's queue.
        let mut at = self.queues.next_event_of(file, ctx, None);
        while let Some(t) = at {
            at = self.queues.next_event_of(file, ctx, Some(t));
            if let Some(Some(child)) = self.queues.remove_event(t) {
                self.destroy_unaccepted(child, release);
            }
        }
        reported
    }

    /// The new connection of a request that was never delivered, unless a
    /// destroy of its own is under way: its id to `release`, or with none
    /// left (its device's removal took it) the context goes now.
    fn destroy_unaccepted(&mut self, child: CtxId, release: &mut impl FnMut(CtxId, H)) {
        match self.contexts.take_unaccepted(child) {
            Some(Some(h)) => release(child, h),
            Some(None) => {
                self.remove_context(child, release);
            }
            None => {}
        }
    }

    /// JOIN, first step: a membership of `ctx` in `group`, named `uid`
    /// (not yet visible).
    pub fn reserve_membership(
        &mut self,
        ctx: CtxId,
        uid: u64,
        group: SockAddr,
    ) -> Result<McId, NoMemory> {
        let mc = self.contexts.insert_membership(ctx, group)?;
        if self.queues.add_membership(mc, ctx, uid).is_err() {
            self.contexts.remove_membership(mc);
            return Err(NoMemory);
        }
        Ok(mc)
    }

    /// LEAVE_MCAST (or a failed JOIN), last step: removes the membership
    /// and its undelivered events; returns the events it reported.
    pub fn finish_leave(&mut self, mc: McId) -> u32 {
        self.contexts.remove_membership(mc);
        self.queues.remove_membership(mc)
    }

    /// MIGRATE_ID: context `ctx` of file `from` moves to file `to`, with
    /// its undelivered events (appended to `to`'s queue in order).
    /// Returns the events it reported.
    pub fn migrate(&mut self, to: FileId, from: FileId, ctx: CtxId) -> Result<u32, UcmaError> {
        self.queues.open(to).map_err(|_| UcmaError::NoMemory)?;
        self.contexts.move_to(to, from, ctx)?;
        Ok(self.queues.move_to(to, ctx))
    }

    /// Numbers of contexts, memberships and queued events (for audits and
    /// leak checks).
    pub fn counts(&self) -> (usize, usize, usize) {
        let (contexts, memberships) = self.contexts.counts();
        (contexts, memberships, self.queues.len())
    }

    /// Checks the invariants of both halves and between them.
    pub fn audit(&self) -> Result<(), &'static str> {
        self.contexts.audit()?;
        self.queues.audit(
            self.contexts.files(),
            self.contexts.membership_contexts(),
            |ctx| self.contexts.contains(ctx),
            |mc| self.contexts.contains_membership(mc),
        )
    }
}

/// Both halves owned together.
pub struct UcmaTable<C: Collections, H: Clone> {
    /// The contexts and memberships.
    pub contexts: UcmaContexts<C, H>,
    /// Where their events go.
    pub queues: UcmaQueues<C>,
}

impl<C: Collections, H: Clone> Default for UcmaTable<C, H> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Collections, H: Clone> UcmaTable<C, H> {
    /// An empty table.
    pub fn new() -> Self {
        UcmaTable {
            contexts: UcmaContexts::new(),
            queues: UcmaQueues::new(),
        }
    }

    /// Both halves, for a change that touches both.
    pub fn both(&mut self) -> Both<'_, C, H> {
        Both {
            contexts: &mut self.contexts,
            queues: &mut self.queues,
        }
    }
}
