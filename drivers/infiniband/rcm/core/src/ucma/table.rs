// SPDX-License-Identifier: GPL-2.0

//! The device's bookkeeping: contexts (an rdma_cm id as one open file
//! knows it), multicast memberships, and each file's event queue, with
//! the accounting librdmacm depends on (6.12's ucma.c rules):
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
//! Teardown is two-step, as the rdma_cm id must be destroyed between the
//! steps (outside any lock of the embedding): `unpublish_*` hides the
//! context or membership from lookups and hands back what to destroy, and
//! `finish_*` removes it with its events once no more can arrive.
//! `H` is the embedding's handle of an rdma_cm id, cloned for each
//! command that holds its context.

use super::event::EventResp;
use super::UcmaError;
use crate::cm::store::{Collections, InsertError, NoMemory, OrderedMap};
use crate::rdma_cm::SockAddr;

/// An open file of the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileId(pub u64);

/// A context: the id userspace names an rdma_cm id by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CtxId(pub u32);

/// A multicast membership.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct McId(pub u32);

/// Where a context is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Life {
    /// Allocated, its rdma_cm id being created; not visible.
    Reserved,
    /// Visible to commands.
    Public,
    /// Its device went away and its rdma_cm id was handed back to be
    /// destroyed; commands get `-ENXIO`, DESTROY_ID still works.
    Closed,
    /// Being destroyed; not visible.
    Destroying,
}

#[derive(Clone, Debug)]
struct Context<H> {
    file: FileId,
    uid: u64,
    handle: Option<H>,
    life: Life,
    events_reported: u32,
    /// Requests the listener may still queue.
    backlog: u32,
    /// A command is running on its id (see [`UcmaTable::hold`]).
    busy: bool,
}

#[derive(Clone, Copy, Debug)]
struct Membership {
    ctx: CtxId,
    uid: u64,
    /// The group's address, to leave it by.
    group: SockAddr,
    events_reported: u32,
    /// Joined and visible (not being joined or left).
    public: bool,
}

/// A queued event.
#[derive(Clone, Copy, Debug)]
struct Queued {
    /// The context it counts on (a request's: the listener's).
    ctx: CtxId,
    /// The membership of a multicast event.
    mc: Option<McId>,
    /// The new connection of a CONNECT_REQUEST.
    new_ctx: Option<CtxId>,
    resp: EventResp,
}

/// Names a queued event between [`UcmaTable::peek`] and
/// [`UcmaTable::take`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventTicket(u64);

/// What became of an event given to [`UcmaTable::event`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Queued on the context's file.
    Queued(FileId),
    /// Dropped: the context has no handle yet, or is gone.
    Dropped,
    /// Dropped for want of memory.
    NoMemory,
}

/// Why a connection request was refused (the rdma_cm id it would have
/// become is destroyed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// No backlog left.
    Backlog,
    /// The listener is gone.
    NoListener,
    /// No memory for the context or the event.
    NoMemory,
}

/// The contexts, memberships and event queues of every open file.
pub struct UcmaTable<C: Collections, H: Clone> {
    contexts: C::Map<CtxId, Context<H>>,
    /// Each file's contexts, for closing a file.
    by_file: C::Map<(FileId, CtxId), ()>,
    memberships: C::Map<McId, Membership>,
    /// Each context's memberships (the keys of `memberships`, by context),
    /// so that a destroy finds its own without looking at others'.
    memberships_of: C::Map<(CtxId, McId), ()>,
    /// Each file's queue, in order of `seq`.
    events: C::Map<(FileId, u64), Queued>,
    next_ctx: u32,
    next_mc: u32,
    next_file: u64,
    next_seq: u64,
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
            contexts: OrderedMap::new_empty(),
            by_file: OrderedMap::new_empty(),
            memberships: OrderedMap::new_empty(),
            memberships_of: OrderedMap::new_empty(),
            events: OrderedMap::new_empty(),
            next_ctx: 0,
            next_mc: 0,
            next_file: 0,
            next_seq: 0,
        }
    }

    /// A new file.
    pub fn open(&mut self) -> FileId {
        self.next_file += 1;
        FileId(self.next_file)
    }

    /// Allocates a context of `file` whose rdma_cm id is being created;
    /// [`publish`](Self::publish) or [`discard`](Self::discard) it next.
    /// Ids are handed out cyclically, so a stale id rarely names a new
    /// context.
    pub fn reserve(&mut self, file: FileId, uid: u64) -> Result<CtxId, NoMemory> {
        self.new_context(file, uid, None, Life::Reserved)
    }

    /// The context's rdma_cm id exists: commands may use it.
    pub fn publish(&mut self, ctx: CtxId, handle: H) {
        if let Some(c) = self.contexts.get_mut(&ctx) {
            c.handle = Some(handle);
            c.life = Life::Public;
        }
    }

    /// The context's rdma_cm id could not be created.
    pub fn discard(&mut self, ctx: CtxId) {
        self.remove_context(ctx, &mut |_| {});
    }

    fn new_context(
        &mut self,
        file: FileId,
        uid: u64,
        handle: Option<H>,
        life: Life,
    ) -> Result<CtxId, NoMemory> {
        let mut c = Context {
            file,
            uid,
            handle,
            life,
            events_reported: 0,
            backlog: 0,
            busy: false,
        };
        // The first free id from the cyclic counter (as `xa_alloc_cyclic`),
        // found by the insert itself: one walk of the map per id tried.
        let mut found = None;
        for _ in 0..=self.contexts.len() {
            let ctx = CtxId(self.next_ctx);
            self.next_ctx = self.next_ctx.wrapping_add(1);
            match self.contexts.try_insert(ctx, c) {
                Ok(()) => {
                    found = Some(ctx);
                    break;
                }
                Err(InsertError::Occupied(back)) => c = back,
                Err(InsertError::NoMemory(_)) => return Err(NoMemory),
            }
        }
        let ctx = found.ok_or(NoMemory)?;
        if self.by_file.try_insert((file, ctx), ()).is_err() {
            self.contexts.remove(&ctx);
            return Err(NoMemory);
        }
        Ok(ctx)
    }

    /// The rdma_cm id of `file`'s context `ctx`, with 6.12's errors:
    /// unknown (or not visible) `-ENOENT`, another file's `-EINVAL`,
    /// closed by device removal `-ENXIO`.
    pub fn find(&self, file: FileId, ctx: CtxId) -> Result<H, UcmaError> {
        let c = self.contexts.get(&ctx).ok_or(UcmaError::NoEntry)?;
        Self::found(c, file).cloned()
    }

    /// What [`Self::find`] answers for the context `c`.
    fn found(c: &Context<H>, file: FileId) -> Result<&H, UcmaError> {
        Self::check_visible(c, file)?;
        match (c.life, &c.handle) {
            (Life::Public, Some(h)) => Ok(h),
            _ => Err(UcmaError::Gone),
        }
    }

    /// A command's claim on `file`'s context `ctx`: its id, with the
    /// context marked busy until [`UcmaTable::unhold`]; `Ok(None)` while
    /// another command holds it (the caller waits and tries again). One
    /// command at a time per context, as 6.12's per-context mutex makes
    /// it, and teardown waits for the running one ([`UcmaTable::busy`]).
    pub fn hold(&mut self, file: FileId, ctx: CtxId) -> Result<Option<H>, UcmaError> {
        let c = self.contexts.get_mut(&ctx).ok_or(UcmaError::NoEntry)?;
        Self::found(c, file)?;
        if c.busy {
            return Ok(None);
        }
        c.busy = true;
        Self::found(c, file).cloned().map(Some)
    }

    /// The command holding `ctx` is done. Hands back the rdma_cm id to
    /// destroy if device removal closed the context meanwhile.
    pub fn unhold(&mut self, ctx: CtxId) -> Option<H> {
        let c = self.contexts.get_mut(&ctx)?;
        c.busy = false;
        if c.life == Life::Closed {
            c.handle.take()
        } else {
            None
        }
    }

    /// Whether a command holds `ctx`.
    pub fn busy(&self, ctx: CtxId) -> bool {
        self.contexts.get(&ctx).is_some_and(|c| c.busy)
    }

    /// A context as lookups see it (public or closed), of `file`.
    fn visible(&self, file: FileId, ctx: CtxId) -> Result<&Context<H>, UcmaError> {
        let c = self.contexts.get(&ctx).ok_or(UcmaError::NoEntry)?;
        Self::check_visible(c, file)?;
        Ok(c)
    }

    /// Whether lookups of `file` see the context `c` (public or closed).
    fn check_visible(c: &Context<H>, file: FileId) -> Result<(), UcmaError> {
        if matches!(c.life, Life::Reserved | Life::Destroying) {
            return Err(UcmaError::NoEntry);
        }
        if c.file != file {
            return Err(UcmaError::Invalid);
        }
        Ok(())
    }

    /// ACCEPT succeeded: the context takes the caller's handle.
    pub fn set_uid(&mut self, ctx: CtxId, uid: u64) {
        if let Some(c) = self.contexts.get_mut(&ctx) {
            c.uid = uid;
        }
    }

    /// LISTEN: how many undelivered requests the context may hold.
    pub fn set_backlog(&mut self, ctx: CtxId, backlog: u32) {
        if let Some(c) = self.contexts.get_mut(&ctx) {
            c.backlog = backlog;
        }
    }

    /// A connection request for listener `listener`: a context for the new
    /// rdma_cm id `handle` (with no uid until ACCEPT), and the event on the
    /// listener's file naming it (`resp`'s uid and id are filled in).
    pub fn request(
        &mut self,
        listener: CtxId,
        handle: H,
        mut resp: EventResp,
    ) -> Result<CtxId, Refusal> {
        let l = self.contexts.get(&listener).ok_or(Refusal::NoListener)?;
        if l.backlog == 0 {
            return Err(Refusal::Backlog);
        }
        let (file, uid) = (l.file, l.uid);
        let new_ctx = self
            .new_context(file, 0, Some(handle), Life::Public)
            .map_err(|_| Refusal::NoMemory)?;
        resp.uid = uid;
        resp.id = new_ctx.0;
        let queued = Queued {
            ctx: listener,
            mc: None,
            new_ctx: Some(new_ctx),
            resp,
        };
        if self.enqueue(file, queued).is_err() {
            self.remove_context(new_ctx, &mut |_| {});
            return Err(Refusal::NoMemory);
        }
        if let Some(l) = self.contexts.get_mut(&listener) {
            l.backlog = l.backlog.saturating_sub(1);
        }
        Ok(new_ctx)
    }

    /// An event for context `ctx` (`resp`'s uid and id are filled in); a
    /// context with no handle yet does not hear it.
    pub fn event(&mut self, ctx: CtxId, mut resp: EventResp) -> Delivery {
        let Some(c) = self.contexts.get(&ctx) else {
            return Delivery::Dropped;
        };
        if c.uid == 0 {
            return Delivery::Dropped;
        }
        resp.uid = c.uid;
        resp.id = ctx.0;
        let file = c.file;
        self.deliver(file, ctx, None, resp)
    }

    /// A multicast event for membership `mc` (`resp`'s uid and id are the
    /// membership's).
    pub fn mc_event(&mut self, mc: McId, mut resp: EventResp) -> Delivery {
        let Some(m) = self.memberships.get(&mc) else {
            return Delivery::Dropped;
        };
        let (ctx, uid) = (m.ctx, m.uid);
        let Some(c) = self.contexts.get(&ctx) else {
            return Delivery::Dropped;
        };
        if c.uid == 0 {
            return Delivery::Dropped;
        }
        resp.uid = uid;
        resp.id = mc.0;
        let file = c.file;
        self.deliver(file, ctx, Some(mc), resp)
    }

    fn deliver(&mut self, file: FileId, ctx: CtxId, mc: Option<McId>, resp: EventResp) -> Delivery {
        let queued = Queued {
            ctx,
            mc,
            new_ctx: None,
            resp,
        };
        match self.enqueue(file, queued) {
            Ok(()) => Delivery::Queued(file),
            Err(NoMemory) => Delivery::NoMemory,
        }
    }

    fn enqueue(&mut self, file: FileId, q: Queued) -> Result<(), NoMemory> {
        let seq = self.next_seq;
        match self.events.try_insert((file, seq), q) {
            Ok(()) => {
                self.next_seq += 1;
                Ok(())
            }
            Err(InsertError::Occupied(_) | InsertError::NoMemory(_)) => Err(NoMemory),
        }
    }

    /// The file context `ctx` belongs to.
    pub fn file_of(&self, ctx: CtxId) -> Option<FileId> {
        self.contexts.get(&ctx).map(|c| c.file)
    }

    /// DEVICE_REMOVAL was queued (or dropped) for `ctx`: it closes, and
    /// its rdma_cm id is handed back to be destroyed, unless a command
    /// still uses the id: then [`UcmaTable::unhold`] hands it back (6.12
    /// destroys it from a work item that waits for the context's
    /// commands).
    pub fn close(&mut self, ctx: CtxId) -> Option<H> {
        let c = self.contexts.get_mut(&ctx)?;
        if c.life != Life::Public {
            return None;
        }
        c.life = Life::Closed;
        if c.busy {
            return None;
        }
        c.handle.take()
    }

    /// The first key of `file`'s queue.
    fn front(&mut self, file: FileId) -> Option<(FileId, u64)> {
        self.queued_from(file, 0)
    }

    /// The key after `key` in its file's queue.
    fn queued_after(&mut self, key: (FileId, u64)) -> Option<(FileId, u64)> {
        self.queued_from(key.0, key.1.saturating_add(1))
    }

    /// The first key of `file`'s queue numbered `seq` or later.
    fn queued_from(&mut self, file: FileId, seq: u64) -> Option<(FileId, u64)> {
        self.events
            .first_key_from(&(file, seq))
            .filter(|k| k.0 == file)
    }

    /// Whether `file` has an event to deliver (poll).
    pub fn has_event(&mut self, file: FileId) -> bool {
        self.front(file).is_some()
    }

    /// `f` of the event GET_EVENT would deliver next on `file` (which
    /// writes its record out without moving it), with its ticket for
    /// [`UcmaTable::take`]. The copy out happens between the two, without
    /// the embedding's lock (a faulting buffer stalls only its own file's
    /// readers).
    pub fn peek<R>(
        &mut self,
        file: FileId,
        f: impl FnOnce(&EventResp) -> R,
    ) -> Option<(EventTicket, R)> {
        self.events
            .first_entry_with(&(file, 0), |k, q| {
                (k.0 == file).then(|| (EventTicket(k.1), f(&q.resp)))
            })
            .flatten()
    }

    /// Delivers the event `ticket` names on `file` (after it was copied
    /// out): counts it and frees a request's backlog slot. False if it is
    /// no longer queued (its context was destroyed meanwhile, or another
    /// reader took it).
    pub fn take(&mut self, file: FileId, ticket: EventTicket) -> bool {
        let key = (file, ticket.0);
        let Some((ctx, request, mc)) = self
            .events
            .remove_with(&key, |q| (q.ctx, q.new_ctx.is_some(), q.mc))
        else {
            return false;
        };
        if let Some(c) = self.contexts.get_mut(&ctx) {
            c.events_reported = c.events_reported.wrapping_add(1);
            if request {
                c.backlog = c.backlog.saturating_add(1);
            }
        }
        if let Some(m) = mc.and_then(|mc| self.memberships.get_mut(&mc)) {
            m.events_reported = m.events_reported.wrapping_add(1);
        }
        true
    }

    /// DESTROY_ID, first step: hides `file`'s context `ctx` and hands back
    /// its rdma_cm id to destroy (none if device removal already took it).
    pub fn unpublish(&mut self, file: FileId, ctx: CtxId) -> Result<Option<H>, UcmaError> {
        self.visible(file, ctx)?;
        let c = self.contexts.get_mut(&ctx).ok_or(UcmaError::NoEntry)?;
        c.life = Life::Destroying;
        Ok(c.handle.take())
    }

    /// DESTROY_ID, last step (its rdma_cm id is destroyed): removes the
    /// context, its undelivered events and memberships, and the new
    /// connections of its undelivered requests, whose rdma_cm ids go to
    /// `release`. Returns the events it reported.
    pub fn finish_destroy(&mut self, ctx: CtxId, release: &mut impl FnMut(H)) -> u32 {
        self.remove_context(ctx, release)
    }

    fn remove_context(&mut self, ctx: CtxId, release: &mut impl FnMut(H)) -> u32 {
        let Some(c) = self.contexts.remove(&ctx) else {
            return 0;
        };
        self.by_file.remove(&(c.file, ctx));
        // Its events can only be on its own file: a migration moves them.
        let mut key = self.front(c.file);
        while let Some(k) = key {
            key = self.queued_after(k);
            let Some(q) = self.events.get(&k).copied() else {
                continue;
            };
            if q.ctx != ctx {
                continue;
            }
            self.events.remove(&k);
            if let Some(child) = q.new_ctx {
                self.destroy_unaccepted(child, release);
            }
        }
        while let Some(k) = self
            .memberships_of
            .first_key_from(&(ctx, McId(0)))
            .filter(|k| k.0 == ctx)
        {
            self.memberships_of.remove(&k);
            self.memberships.remove(&k.1);
        }
        c.events_reported
    }

    /// The new connection of a request that was never delivered, unless a
    /// destroy of its own is under way.
    fn destroy_unaccepted(&mut self, child: CtxId, release: &mut impl FnMut(H)) {
        let Some(c) = self.contexts.get_mut(&child) else {
            return;
        };
        if c.life == Life::Destroying {
            return;
        }
        if let Some(h) = c.handle.take() {
            release(h);
        }
        self.remove_context(child, release);
    }

    /// The first context of `file` still to destroy when it closes.
    pub fn next_context_of(&mut self, file: FileId) -> Option<CtxId> {
        let mut key = self.by_file.first_key_from(&(file, CtxId(0)));
        while let Some((f, ctx)) = key.filter(|k| k.0 == file) {
            match self.contexts.get(&ctx).map(|c| c.life) {
                Some(Life::Public | Life::Closed) => return Some(ctx),
                _ => {
                    key = self
                        .by_file
                        .first_key_from(&(f, CtxId(ctx.0.checked_add(1)?)))
                }
            }
        }
        None
    }

    /// Close of a file, per context: like DESTROY_ID without the file
    /// check (the file is going).
    pub fn unpublish_for_close(&mut self, ctx: CtxId) -> Option<H> {
        let c = self.contexts.get_mut(&ctx)?;
        c.life = Life::Destroying;
        c.handle.take()
    }

    /// JOIN, first step: a membership of `ctx` in `group` (not yet
    /// visible).
    pub fn reserve_membership(
        &mut self,
        ctx: CtxId,
        uid: u64,
        group: SockAddr,
    ) -> Result<McId, NoMemory> {
        let mc = McId(free_id(&self.memberships, &mut self.next_mc, McId)?);
        let m = Membership {
            ctx,
            uid,
            group,
            events_reported: 0,
            public: false,
        };
        self.memberships.try_insert(mc, m).map_err(|_| NoMemory)?;
        if self.memberships_of.try_insert((ctx, mc), ()).is_err() {
            self.memberships.remove(&mc);
            return Err(NoMemory);
        }
        Ok(mc)
    }

    /// The join was started: LEAVE_MCAST may name the membership.
    pub fn publish_membership(&mut self, mc: McId) {
        if let Some(m) = self.memberships.get_mut(&mc) {
            m.public = true;
        }
    }

    /// LEAVE_MCAST, first step: hides `file`'s membership `mc` and returns
    /// its context and the group (to leave), with 6.12's errors.
    pub fn unpublish_membership(
        &mut self,
        file: FileId,
        mc: McId,
    ) -> Result<(CtxId, SockAddr), UcmaError> {
        let m = self
            .memberships
            .get(&mc)
            .filter(|m| m.public)
            .ok_or(UcmaError::NoEntry)?;
        let c = self.contexts.get(&m.ctx).ok_or(UcmaError::NoEntry)?;
        if c.file != file {
            return Err(UcmaError::Invalid);
        }
        if !matches!((c.life, &c.handle), (Life::Public, Some(_))) {
            return Err(UcmaError::Gone);
        }
        let (ctx, group) = (m.ctx, m.group);
        if let Some(m) = self.memberships.get_mut(&mc) {
            m.public = false;
        }
        Ok((ctx, group))
    }

    /// LEAVE_MCAST (or a failed JOIN), last step: removes the membership
    /// and its undelivered events; returns the events it reported.
    pub fn finish_leave(&mut self, mc: McId) -> u32 {
        let Some(m) = self.memberships.remove(&mc) else {
            return 0;
        };
        self.memberships_of.remove(&(m.ctx, mc));
        if let Some(file) = self.contexts.get(&m.ctx).map(|c| c.file) {
            let mut key = self.front(file);
            while let Some(k) = key {
                key = self.queued_after(k);
                if self.events.get(&k).is_some_and(|q| q.mc == Some(mc)) {
                    self.events.remove(&k);
                }
            }
        }
        m.events_reported
    }

    /// MIGRATE_ID: context `ctx` of file `from` moves to file `to`, with
    /// its undelivered events (appended to `to`'s queue in order).
    /// Returns the events it reported.
    pub fn migrate(&mut self, to: FileId, from: FileId, ctx: CtxId) -> Result<u32, UcmaError> {
        self.find(from, ctx)?;
        if !self.by_file.rekey(&(from, ctx), (to, ctx)) && from != to {
            return Err(UcmaError::NoEntry);
        }
        let reported = match self.contexts.get_mut(&ctx) {
            Some(c) => {
                c.file = to;
                c.events_reported
            }
            None => return Err(UcmaError::NoEntry),
        };
        // Events queued before the move; `to == from` must not revisit
        // the ones it appends.
        let end = self.next_seq;
        let mut key = self.front(from);
        while let Some(k) = key {
            if k.1 >= end {
                break;
            }
            key = self.queued_after(k);
            if self.events.get(&k).is_some_and(|q| q.ctx == ctx) {
                let seq = self.next_seq;
                // Re-keying reuses the entry: the move cannot fail for
                // memory, and the new key is fresh.
                if self.events.rekey(&k, (to, seq)) {
                    self.next_seq += 1;
                }
            }
        }
        Ok(reported)
    }

    /// Numbers of contexts, memberships and queued events (for audits and
    /// leak checks).
    pub fn counts(&self) -> (usize, usize, usize) {
        (
            self.contexts.len(),
            self.memberships.len(),
            self.events.len(),
        )
    }

    /// Checks the table's invariants: each context is listed once under its
    /// file, each membership's context exists, each event is on its
    /// context's file and names existing contexts and memberships.
    pub fn audit(&self) -> Result<(), &'static str> {
        if self.by_file.len() != self.contexts.len() {
            return Err("contexts and file lists differ in size");
        }
        for (file, ctx) in self.by_file.keys() {
            if self.contexts.get(&ctx).map(|c| c.file) != Some(file) {
                return Err("a context is listed under another file");
            }
        }
        for mc in self.memberships.keys() {
            let ctx = self.memberships.get(&mc).map(|m| m.ctx);
            if ctx.and_then(|c| self.contexts.get(&c)).is_none() {
                return Err("a membership outlives its context");
            }
            if ctx.is_some_and(|c| self.memberships_of.get(&(c, mc)).is_none()) {
                return Err("a membership missing from its context's index");
            }
        }
        if self.memberships_of.len() != self.memberships.len() {
            return Err("the membership index lists no membership");
        }
        for key in self.events.keys() {
            let Some(q) = self.events.get(&key) else {
                return Err("an event key without an event");
            };
            match self.contexts.get(&q.ctx) {
                Some(c) if c.file == key.0 => {}
                _ => return Err("an event is not on its context's file"),
            }
            if q.new_ctx.is_some_and(|n| self.contexts.get(&n).is_none()) {
                return Err("a request names a context that is gone");
            }
            if q.mc.is_some_and(|m| self.memberships.get(&m).is_none()) {
                return Err("a multicast event outlives its membership");
            }
            if key.1 >= self.next_seq {
                return Err("an event is numbered ahead of the queue");
            }
        }
        Ok(())
    }
}

/// A free id from a cyclic counter (as `xa_alloc_cyclic`): the first one
/// at or after `next` that `map` does not hold.
fn free_id<K: Ord + Copy, V>(
    map: &impl OrderedMap<K, V>,
    next: &mut u32,
    key: impl Fn(u32) -> K,
) -> Result<u32, NoMemory> {
    for _ in 0..=map.len() {
        let id = *next;
        *next = next.wrapping_add(1);
        if map.get(&key(id)).is_none() {
            return Ok(id);
        }
    }
    Err(NoMemory)
}
