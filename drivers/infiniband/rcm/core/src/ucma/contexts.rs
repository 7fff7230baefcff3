// SPDX-License-Identifier: GPL-2.0

//! The device's contexts and multicast memberships as commands see them:
//! which file each belongs to, where it is in its life, its rdma_cm id and
//! whether a command holds it. What events need (the handle userspace
//! named a context by, the counts, the queues) is in [`super::queues`],
//! which an embedding locks apart from this, so that a command's hold on
//! a context never waits for an ordinary event being queued (6.12 keeps
//! its contexts in an xarray apart from each file's event list).
//!
//! The contexts are slots of a growable array ([`IdTable`], as rdma_cm
//! keeps its ids): a context's number is its slot, so a command finds its
//! context by index, as 6.12 finds it in an xarray, and a new one takes
//! no allocation of its own once the array has room. Each file's contexts
//! are a list through their slots, for closing the file.
//!
//! `H` is the embedding's handle of an rdma_cm id, cloned for each
//! command that holds its context.

use super::UcmaError;
use crate::cm::store::{Collections, NoMemory, OrderedMap};
use crate::cm::table::IdTable;
use crate::rdma_cm::SockAddr;

/// Every bit of a context's number names its slot: userspace's contexts
/// are 32-bit (6.12's `xa_limit_32b`), and the table sets no other limit
/// (the memory of a user's contexts is its memory cgroup's). Freed slots
/// are reused oldest first, so a stale number names a new context only
/// after every other free slot was taken.
const CTX_SLOT_BITS: u32 = 32;

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
pub(super) enum Life {
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
    handle: Option<H>,
    life: Life,
    /// A command is running on its id (see [`UcmaContexts::hold`]).
    busy: bool,
    /// Its neighbours in its file's list.
    prev: Option<CtxId>,
    next: Option<CtxId>,
}

/// An open file's contexts: a list through their slots, oldest first (a
/// file's close destroys a listener before the connections of its
/// undelivered requests, which its destroy ends with it).
#[derive(Clone, Copy, Debug, Default)]
struct FileList {
    first: Option<CtxId>,
    last: Option<CtxId>,
}

#[derive(Clone, Copy, Debug)]
struct Membership {
    ctx: CtxId,
    /// The group's address, to leave it by.
    group: SockAddr,
    /// Joined and visible (not being joined or left).
    public: bool,
}

/// Every open file's contexts and memberships.
///
/// INVARIANT: each open file's list (its entry in `files`, linked
/// through the contexts' `prev` and `next`) holds exactly the contexts
/// whose `file` it is, each once.
pub struct UcmaContexts<C: Collections, H: Clone> {
    contexts: IdTable<Context<H>, C, CTX_SLOT_BITS, u32>,
    /// Each open file's contexts.
    files: C::Map<FileId, FileList>,
    memberships: C::Map<McId, Membership>,
    /// Each context's memberships (the keys of `memberships`, by context),
    /// so that a destroy finds its own without looking at others'.
    memberships_of: C::Map<(CtxId, McId), ()>,
    next_mc: u32,
    next_file: u64,
}

impl<C: Collections, H: Clone> Default for UcmaContexts<C, H> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Collections, H: Clone> UcmaContexts<C, H> {
    /// None.
    pub fn new() -> Self {
        UcmaContexts {
            contexts: IdTable::new(0),
            files: OrderedMap::new_empty(),
            memberships: OrderedMap::new_empty(),
            memberships_of: OrderedMap::new_empty(),
            next_mc: 0,
            next_file: 0,
        }
    }

    /// A new file, with no contexts.
    pub fn open(&mut self) -> Result<FileId, NoMemory> {
        let file = FileId(self.next_file + 1);
        self.files
            .try_insert(file, FileList::default())
            .map_err(|_| NoMemory)?;
        self.next_file += 1;
        Ok(file)
    }

    /// The file is closed, its contexts gone ([`Self::next_context_of`]
    /// found none).
    pub fn forget(&mut self, file: FileId) {
        self.files.remove(&file);
    }

    /// A new context of the open file `file`, in `life`.
    pub(super) fn insert(
        &mut self,
        file: FileId,
        handle: Option<H>,
        life: Life,
    ) -> Result<CtxId, NoMemory> {
        let last = self.files.get(&file).ok_or(NoMemory)?.last;
        let c = Context {
            file,
            handle,
            life,
            busy: false,
            prev: last,
            next: None,
        };
        let ctx = CtxId(self.contexts.try_insert(|_| c).map_err(|_| NoMemory)?);
        self.link_last(file, ctx);
        Ok(ctx)
    }

    /// Puts `ctx` (its `prev` already the file's last) last in `file`'s
    /// list.
    fn link_last(&mut self, file: FileId, ctx: CtxId) {
        let Some(list) = self.files.get_mut(&file) else {
            return;
        };
        let before = list.last.replace(ctx);
        list.first.get_or_insert(ctx);
        if let Some(c) = before.and_then(|b| self.contexts.get_mut(b.0)) {
            c.next = Some(ctx);
        }
    }

    /// Takes a context of `file` whose links were `prev` and `next` out of
    /// the file's list.
    fn unlink(&mut self, file: FileId, prev: Option<CtxId>, next: Option<CtxId>) {
        if let Some(list) = self.files.get_mut(&file) {
            if prev.is_none() {
                list.first = next;
            }
            if next.is_none() {
                list.last = prev;
            }
        }
        if let Some(c) = prev.and_then(|p| self.contexts.get_mut(p.0)) {
            c.next = next;
        }
        if let Some(c) = next.and_then(|n| self.contexts.get_mut(n.0)) {
            c.prev = prev;
        }
    }

    /// The context's rdma_cm id exists: commands may use it.
    pub fn publish(&mut self, ctx: CtxId, handle: H) {
        if let Some(c) = self.contexts.get_mut(ctx.0) {
            c.handle = Some(handle);
            c.life = Life::Public;
        }
    }

    /// Removes `ctx` and its memberships (each handed to `left`).
    pub(super) fn remove(&mut self, ctx: CtxId, left: &mut impl FnMut(McId)) -> bool {
        let Some(c) = self.contexts.remove(ctx.0) else {
            return false;
        };
        self.unlink(c.file, c.prev, c.next);
        while let Some(k) = self
            .memberships_of
            .first_key_from(&(ctx, McId(0)))
            .filter(|k| k.0 == ctx)
        {
            self.memberships_of.remove(&k);
            self.memberships.remove(&k.1);
            left(k.1);
        }
        true
    }

    /// The rdma_cm id of `file`'s context `ctx`, with 6.12's errors:
    /// unknown (or not visible) `-ENOENT`, another file's `-EINVAL`,
    /// closed by device removal `-ENXIO`.
    pub fn find(&self, file: FileId, ctx: CtxId) -> Result<H, UcmaError> {
        let c = self.contexts.get(ctx.0).ok_or(UcmaError::NoEntry)?;
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
    /// context marked busy until [`Self::unhold`]; `Ok(None)` while
    /// another command holds it (the caller waits and tries again). One
    /// command at a time per context, as 6.12's per-context mutex makes
    /// it, and teardown waits for the running one ([`Self::busy`]).
    pub fn hold(&mut self, file: FileId, ctx: CtxId) -> Result<Option<H>, UcmaError> {
        let c = self.contexts.get_mut(ctx.0).ok_or(UcmaError::NoEntry)?;
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
        let c = self.contexts.get_mut(ctx.0)?;
        c.busy = false;
        if c.life == Life::Closed {
            c.handle.take()
        } else {
            None
        }
    }

    /// Whether a command holds `ctx`.
    pub fn busy(&self, ctx: CtxId) -> bool {
        self.contexts.get(ctx.0).is_some_and(|c| c.busy)
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

    /// The file context `ctx` belongs to.
    pub fn file_of(&self, ctx: CtxId) -> Option<FileId> {
        self.contexts.get(ctx.0).map(|c| c.file)
    }

    /// The new connection `ctx` of a request its listener's destroy found
    /// undelivered: hidden, its rdma_cm id (if it still has one) taken, or
    /// `None` if it is gone or a destroy of its own is under way (which
    /// must not happen twice).
    pub(super) fn take_unaccepted(&mut self, ctx: CtxId) -> Option<Option<H>> {
        let c = self.contexts.get_mut(ctx.0)?;
        if c.life == Life::Destroying {
            return None;
        }
        c.life = Life::Destroying;
        Some(c.handle.take())
    }

    /// DEVICE_REMOVAL was queued (or dropped) for `ctx`: it closes, and
    /// its rdma_cm id is handed back to be destroyed, unless a command
    /// still uses the id: then [`Self::unhold`] hands it back (6.12
    /// destroys it from a work item that waits for the context's
    /// commands).
    pub fn close(&mut self, ctx: CtxId) -> Option<H> {
        let c = self.contexts.get_mut(ctx.0)?;
        if c.life != Life::Public {
            return None;
        }
        c.life = Life::Closed;
        if c.busy {
            return None;
        }
        c.handle.take()
    }

    /// DESTROY_ID, first step: hides `file`'s context `ctx` and hands back
    /// its rdma_cm id to destroy (none if device removal already took it),
    /// and whether a command holds it still (see [`Self::busy`]).
    pub fn unpublish(&mut self, file: FileId, ctx: CtxId) -> Result<(Option<H>, bool), UcmaError> {
        let c = self.contexts.get_mut(ctx.0).ok_or(UcmaError::NoEntry)?;
        Self::check_visible(c, file)?;
        c.life = Life::Destroying;
        Ok((c.handle.take(), c.busy))
    }

    /// The first context of `file` still to destroy when it closes.
    pub fn next_context_of(&mut self, file: FileId) -> Option<CtxId> {
        let mut at = self.files.get(&file)?.first;
        while let Some(ctx) = at {
            let c = self.contexts.get(ctx.0)?;
            if matches!(c.life, Life::Public | Life::Closed) {
                return Some(ctx);
            }
            at = c.next;
        }
        None
    }

    /// Close of a file, per context: like DESTROY_ID without the file
    /// check (the file is going).
    pub fn unpublish_for_close(&mut self, ctx: CtxId) -> (Option<H>, bool) {
        let Some(c) = self.contexts.get_mut(ctx.0) else {
            return (None, false);
        };
        c.life = Life::Destroying;
        (c.handle.take(), c.busy)
    }

    /// A new membership of `ctx` in `group`, not yet visible.
    pub(super) fn insert_membership(
        &mut self,
        ctx: CtxId,
        group: SockAddr,
    ) -> Result<McId, NoMemory> {
        let mc = McId(free_id(&self.memberships, &mut self.next_mc, McId)?);
        let m = Membership {
            ctx,
            group,
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
        let c = self.contexts.get(m.ctx.0).ok_or(UcmaError::NoEntry)?;
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

    /// Removes the membership `mc`; its context.
    pub(super) fn remove_membership(&mut self, mc: McId) -> Option<CtxId> {
        let m = self.memberships.remove(&mc)?;
        self.memberships_of.remove(&(m.ctx, mc));
        Some(m.ctx)
    }

    /// MIGRATE_ID's part here: context `ctx` of file `from` moves to file
    /// `to`.
    pub(super) fn move_to(
        &mut self,
        to: FileId,
        from: FileId,
        ctx: CtxId,
    ) -> Result<(), UcmaError> {
        self.find(from, ctx)?;
        if from == to {
            return Ok(());
        }
        let last = self.files.get(&to).ok_or(UcmaError::NoEntry)?.last;
        let c = self.contexts.get_mut(ctx.0).ok_or(UcmaError::NoEntry)?;
        let (prev, next) = (c.prev, c.next);
        c.file = to;
        c.prev = last;
        c.next = None;
        self.unlink(from, prev, next);
        self.link_last(to, ctx);
        Ok(())
    }

    /// Numbers of contexts and memberships.
    pub fn counts(&self) -> (usize, usize) {
        (self.contexts.len(), self.memberships.len())
    }

    /// Every context with its file, in order.
    pub(super) fn files(&self) -> impl Iterator<Item = (CtxId, Option<FileId>)> + '_ {
        self.contexts
            .ids()
            .map(|ctx| (CtxId(ctx), self.contexts.get(ctx).map(|c| c.file)))
    }

    /// Every membership with its context, in order.
    pub(super) fn membership_contexts(&self) -> impl Iterator<Item = (McId, Option<CtxId>)> + '_ {
        self.memberships
            .keys()
            .map(|mc| (mc, self.memberships.get(&mc).map(|m| m.ctx)))
    }

    /// Whether `ctx` exists.
    pub(super) fn contains(&self, ctx: CtxId) -> bool {
        self.contexts.get(ctx.0).is_some()
    }

    /// Whether `mc` exists.
    pub(super) fn contains_membership(&self, mc: McId) -> bool {
        self.memberships.get(&mc).is_some()
    }

    /// Checks this half's invariants: each context is listed once under
    /// its file, each membership's context exists and lists it.
    pub(super) fn audit(&self) -> Result<(), &'static str> {
        let mut listed = 0;
        for file in self.files.keys() {
            let list = self.files.get(&file).copied().unwrap_or_default();
            let mut at = list.first;
            let mut prev = None;
            while let Some(ctx) = at {
                let Some(c) = self.contexts.get(ctx.0) else {
                    return Err("a file lists a context that is gone");
                };
                if c.file != file {
                    return Err("a context is listed under another file");
                }
                if c.prev != prev {
                    return Err("a context's file list is linked wrong");
                }
                listed += 1;
                if listed > self.contexts.len() {
                    return Err("a file's list has a loop");
                }
                (prev, at) = (Some(ctx), c.next);
            }
            if list.last != prev {
                return Err("a file's last context is not its list's end");
            }
        }
        if listed != self.contexts.len() {
            return Err("a context is on no open file's list");
        }
        for (mc, ctx) in self.membership_contexts() {
            let Some(ctx) = ctx.filter(|c| self.contains(*c)) else {
                return Err("a membership outlives its context");
            };
            if self.memberships_of.get(&(ctx, mc)).is_none() {
                return Err("a membership missing from its context's index");
            }
        }
        if self.memberships_of.len() != self.memberships.len() {
            return Err("the membership index lists no membership");
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
