// SPDX-License-Identifier: GPL-2.0

//! Where the device's events go: each context's recipient (its file, the
//! handle userspace named it by, the events it reported, a listener's
//! backlog), each membership's, and every file's queue, in order. An
//! event is queued and read here alone, without the contexts
//! ([`super::contexts`]), which an embedding locks apart: 6.12 keeps the
//! same facts under each file's mutex (`ctx->uid` is set under it), and
//! its handler reads `ctx->file` under the id's handler lock, which
//! MIGRATE_ID takes to change it.

use super::contexts::{CtxId, FileId, McId};
use super::event::EventResp;
use super::event_queue::EventQueues;
use crate::cm::store::{Collections, NoMemory, OrderedMap, SlotVec};

/// Where a context's events go.
#[derive(Clone, Copy, Debug)]
struct Recipient {
    file: FileId,
    /// The handle userspace named the context by; 0 (a new connection's
    /// before ACCEPT) drops its events.
    uid: u64,
    events_reported: u32,
    /// Requests the listener may still queue.
    backlog: u32,
}

/// Where a membership's events go (on its context's file).
#[derive(Clone, Copy, Debug)]
struct McRecipient {
    ctx: CtxId,
    uid: u64,
    events_reported: u32,
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

/// Names a queued event between [`UcmaQueues::peek`] and
/// [`UcmaQueues::take`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventTicket(u64);

/// What became of an event given to [`UcmaQueues::event`].
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

/// Every context's and membership's recipient, and every file's queue.
///
/// INVARIANT: `recipient_count` counts the `Some` entries of `recipients`.
pub struct UcmaQueues<C: Collections> {
    /// Indexed by context: a context's number is its slot in the
    /// contexts' table, so these are as dense as the contexts are.
    recipients: C::Vec<Option<Recipient>>,
    recipient_count: usize,
    mc_recipients: C::Map<McId, McRecipient>,
    /// Each file's queue, in order (a file with a recipient has one).
    events: EventQueues<Queued, C>,
}

impl<C: Collections> Default for UcmaQueues<C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Collections> UcmaQueues<C> {
    /// None.
    pub fn new() -> Self {
        UcmaQueues {
            recipients: SlotVec::new_empty(),
            recipient_count: 0,
            mc_recipients: OrderedMap::new_empty(),
            events: EventQueues::new(),
        }
    }

    /// `ctx`'s events go to `file`, named `uid`.
    pub(super) fn add(&mut self, ctx: CtxId, file: FileId, uid: u64) -> Result<(), NoMemory> {
        let r = Recipient {
            file,
            uid,
            events_reported: 0,
            backlog: 0,
        };
        self.events.open(file)?;
        let slot = self.recipients.get_mut_growing(index(ctx), || None)?;
        if slot.replace(r).is_none() {
            self.recipient_count += 1;
        }
        Ok(())
    }

    fn recipient(&self, ctx: CtxId) -> Option<&Recipient> {
        self.recipients.get(index(ctx)).and_then(Option::as_ref)
    }

    fn recipient_mut(&mut self, ctx: CtxId) -> Option<&mut Recipient> {
        self.recipients.get_mut(index(ctx)).and_then(Option::as_mut)
    }

    fn take_recipient(&mut self, ctx: CtxId) -> Option<Recipient> {
        let r = self.recipients.get_mut(index(ctx))?.take()?;
        self.recipient_count -= 1;
        Some(r)
    }

    /// `mc`'s events go to `ctx`'s file, named `uid`.
    pub(super) fn add_membership(
        &mut self,
        mc: McId,
        ctx: CtxId,
        uid: u64,
    ) -> Result<(), NoMemory> {
        let r = McRecipient {
            ctx,
            uid,
            events_reported: 0,
        };
        self.mc_recipients.try_insert(mc, r).map_err(|_| NoMemory)
    }

    /// ACCEPT succeeded: the context takes the caller's handle.
    pub fn set_uid(&mut self, ctx: CtxId, uid: u64) {
        if let Some(r) = self.recipient_mut(ctx) {
            r.uid = uid;
        }
    }

    /// LISTEN: how many undelivered requests the context may hold.
    pub fn set_backlog(&mut self, ctx: CtxId, backlog: u32) {
        if let Some(r) = self.recipient_mut(ctx) {
            r.backlog = backlog;
        }
    }

    /// The file a request for `listener` would be queued on, if it has
    /// backlog left.
    pub(super) fn request_room(&self, listener: CtxId) -> Result<(FileId, u64), Refusal> {
        let l = self.recipient(listener).ok_or(Refusal::NoListener)?;
        if l.backlog == 0 {
            return Err(Refusal::Backlog);
        }
        Ok((l.file, l.uid))
    }

    /// Queues the request `resp` (uid and id filled in) naming the new
    /// context `new_ctx` on `listener`'s file `file` (as
    /// [`Self::request_room`] found it), taking a backlog slot; the new
    /// context's events go there too, unnamed until ACCEPT.
    pub(super) fn request(
        &mut self,
        listener: CtxId,
        new_ctx: CtxId,
        file: FileId,
        resp: EventResp,
    ) -> Result<(), Refusal> {
        self.add(new_ctx, file, 0).map_err(|_| Refusal::NoMemory)?;
        let queued = Queued {
            ctx: listener,
            mc: None,
            new_ctx: Some(new_ctx),
            resp,
        };
        if self.enqueue(file, queued).is_err() {
            self.take_recipient(new_ctx);
            return Err(Refusal::NoMemory);
        }
        if let Some(l) = self.recipient_mut(listener) {
            l.backlog = l.backlog.saturating_sub(1);
        }
        Ok(())
    }

    /// An event for context `ctx` (`resp`'s uid and id are filled in); a
    /// context with no handle yet does not hear it.
    pub fn event(&mut self, ctx: CtxId, mut resp: EventResp) -> Delivery {
        let Some(r) = self.recipient(ctx) else {
            return Delivery::Dropped;
        };
        if r.uid == 0 {
            return Delivery::Dropped;
        }
        resp.uid = r.uid;
        resp.id = ctx.0;
        let file = r.file;
        self.deliver(file, ctx, None, resp)
    }

    /// A multicast event for membership `mc` (`resp`'s uid and id are the
    /// membership's).
    pub fn mc_event(&mut self, mc: McId, mut resp: EventResp) -> Delivery {
        let Some(m) = self.mc_recipients.get(&mc) else {
            return Delivery::Dropped;
        };
        let (ctx, uid) = (m.ctx, m.uid);
        let Some(r) = self.recipient(ctx) else {
            return Delivery::Dropped;
        };
        if r.uid == 0 {
            return Delivery::Dropped;
        }
        resp.uid = uid;
        resp.id = mc.0;
        let file = r.file;
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
        self.events.push(file, q).map(|_| ())
    }

    /// The file `ctx`'s events go to.
    pub fn file_of(&self, ctx: CtxId) -> Option<FileId> {
        self.recipient(ctx).map(|r| r.file)
    }

    /// Whether `file` has an event to deliver (poll).
    pub fn has_event(&mut self, file: FileId) -> bool {
        self.events.first(file).is_some()
    }

    /// The file `file` closed: its queue goes (its contexts, and so
    /// their events, went first).
    pub fn forget(&mut self, file: FileId) {
        self.events.forget(file);
    }

    /// `f` of the event GET_EVENT would deliver next on `file` (which
    /// writes its record out without moving it), with its ticket for
    /// [`Self::take`]. The copy out happens between the two, without the
    /// embedding's lock (a faulting buffer stalls only its own file's
    /// readers).
    pub fn peek<R>(
        &mut self,
        file: FileId,
        f: impl FnOnce(&EventResp) -> R,
    ) -> Option<(EventTicket, R)> {
        self.events
            .first(file)
            .map(|(id, q)| (EventTicket(id), f(&q.resp)))
    }

    /// Delivers the event `ticket` names on `file` (after it was copied
    /// out): counts it and frees a request's backlog slot. False if it is
    /// no longer queued (its context was destroyed meanwhile, or another
    /// reader took it).
    pub fn take(&mut self, file: FileId, ticket: EventTicket) -> bool {
        if self.events.get(file, ticket.0).is_none() {
            return false;
        }
        let Some(Queued {
            ctx, new_ctx, mc, ..
        }) = self.events.remove(ticket.0)
        else {
            return false;
        };
        let request = new_ctx.is_some();
        if let Some(r) = self.recipient_mut(ctx) {
            r.events_reported = r.events_reported.wrapping_add(1);
            if request {
                r.backlog = r.backlog.saturating_add(1);
            }
        }
        if let Some(m) = mc.and_then(|mc| self.mc_recipients.get_mut(&mc)) {
            m.events_reported = m.events_reported.wrapping_add(1);
        }
        true
    }

    /// The first undelivered event of `ctx` on `file` (its own, where a
    /// migration moves its events), or with `after` the first one queued
    /// after that event.
    pub(super) fn next_event_of(
        &self,
        file: FileId,
        ctx: CtxId,
        after: Option<EventTicket>,
    ) -> Option<EventTicket> {
        let mut at = match after {
            None => self.events.first(file),
            Some(t) => self.events.after(t.0),
        };
        while let Some((id, q)) = at {
            if q.ctx == ctx {
                return Some(EventTicket(id));
            }
            at = self.events.after(id);
        }
        None
    }

    /// Removes the undelivered event `ticket` names; for a request, its
    /// new connection.
    pub(super) fn remove_event(&mut self, ticket: EventTicket) -> Option<Option<CtxId>> {
        self.events.remove(ticket.0).map(|q| q.new_ctx)
    }

    /// Removes `ctx`'s recipient (its events are the caller's to remove
    /// next, with [`Self::remove_next_of`]): its file and the events it
    /// reported.
    pub(super) fn remove(&mut self, ctx: CtxId) -> Option<(FileId, u32)> {
        self.take_recipient(ctx)
            .map(|r| (r.file, r.events_reported))
    }

    /// Removes `mc`'s recipient and its undelivered events; the events it
    /// reported.
    pub(super) fn remove_membership(&mut self, mc: McId) -> u32 {
        let Some(m) = self.mc_recipients.remove(&mc) else {
            return 0;
        };
        if let Some(file) = self.file_of(m.ctx) {
            let mut at = self.events.first(file).map(|(id, _)| id);
            while let Some(id) = at {
                let of_mc = self.events.get(file, id).is_some_and(|q| q.mc == Some(mc));
                at = self.events.after(id).map(|(next, _)| next);
                if of_mc {
                    self.events.remove(id);
                }
            }
        }
        m.events_reported
    }

    /// Makes room for `file`'s queue, so that a migration there cannot
    /// fail half done.
    pub(super) fn open(&mut self, file: FileId) -> Result<(), NoMemory> {
        self.events.open(file)
    }

    /// MIGRATE_ID's part here: `ctx`'s events go to `to` (made room for
    /// with [`Self::open`]) from now on, and its undelivered ones move to
    /// the end of `to`'s queue, in order (its own file's too, as in
    /// 6.12). Returns the events it reported.
    pub(super) fn move_to(&mut self, to: FileId, ctx: CtxId) -> u32 {
        let Some(r) = self.recipient_mut(ctx) else {
            return 0;
        };
        let (from, reported) = (r.file, r.events_reported);
        r.file = to;
        // The walk ends at the event that was last before the move, so
        // that a move to the same file does not meet the ones it appends.
        let end = self.events.last(from);
        let mut at = self.events.first(from).map(|(id, _)| id);
        while let Some(id) = at {
            at = if Some(id) == end {
                None
            } else {
                self.events.after(id).map(|(next, _)| next)
            };
            if self.events.get(from, id).is_some_and(|q| q.ctx == ctx) {
                self.events.move_last(id, to);
            }
        }
        reported
    }

    /// Number of queued events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether no event is queued.
    pub fn is_empty(&self) -> bool {
        self.events.len() == 0
    }

    /// Checks this half against the contexts (`file_of` gives a context's
    /// file there, `membership_of` a membership's context, `contains` and
    /// `contains_membership` whether they exist): each context has a
    /// recipient on the same file and each membership one of the same
    /// context, and each event is on its context's file and names
    /// existing contexts and memberships.
    pub(super) fn audit(
        &self,
        contexts: impl Iterator<Item = (CtxId, Option<FileId>)>,
        memberships: impl Iterator<Item = (McId, Option<CtxId>)>,
        contains: impl Fn(CtxId) -> bool,
        contains_membership: impl Fn(McId) -> bool,
    ) -> Result<(), &'static str> {
        let mut n = 0;
        for (ctx, file) in contexts {
            n += 1;
            if self.file_of(ctx) != file {
                return Err("a context's events go to another file");
            }
        }
        if n != self.recipient_count {
            return Err("a recipient outlives its context");
        }
        let mut n = 0;
        for (mc, ctx) in memberships {
            n += 1;
            if self.mc_recipients.get(&mc).map(|m| m.ctx) != ctx {
                return Err("a membership's events go to another context");
            }
        }
        if n != self.mc_recipients.len() {
            return Err("a membership recipient outlives its membership");
        }
        self.events.audit(|file, q| {
            if self.file_of(q.ctx) != Some(file) {
                return Err("an event is not on its context's file");
            }
            if q.new_ctx.is_some_and(|n| !contains(n)) {
                return Err("a request names a context that is gone");
            }
            if q.mc.is_some_and(|m| !contains_membership(m)) {
                return Err("a multicast event outlives its membership");
            }
            Ok(())
        })
    }
}

/// A context's entry in the recipients.
fn index(ctx: CtxId) -> usize {
    ctx.0 as usize
}
