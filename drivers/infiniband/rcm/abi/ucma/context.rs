// SPDX-License-Identifier: GPL-2.0

//! A context's life: CREATE_ID, DESTROY_ID, MIGRATE_ID, and the end of
//! every context of a file at close.

use super::events::{ctx_pointer, UcmaIdEvents};
use super::{errno, UcmaAbi};
use crate::abi::rdma_cm::id::{NewId, RdmaIdBox};
use crate::abi::rdma_cm::types::ib_qp_type;
use crate::abi::rdma_cm::RdmaCmAbi;
use crate::bindings;
use crate::proto::cm::store::OrderedMap;
use crate::proto::rdma_cm::{PortSpace, RdmaQpType};
use crate::proto::ucma::{CtxId, FileId};
use crate::rdma::rdma_event::handler_of;
use crate::rdma::sync::{wait_until, wake_waiters};
use crate::rdma::ucma_dev::UcmaFile;
use crate::shell::lazy_vec::LazyVec;
use crate::shell::CmService;
use core::sync::atomic::Ordering;
use kernel::error::code;
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::uaccess::{UserPtr, UserSlice};

/// Copies `bytes` to the user pointer `to`.
pub(super) fn copy_out(to: u64, bytes: &[u8]) -> Result {
    let to = UserPtr::try_from(to).map_err(|_| code::EFAULT)?;
    UserSlice::new(to, bytes.len()).writer().write_slice(bytes)
}

/// The CM service as the commands see it: with rcm's rdma_cm, which runs
/// them.
pub(super) struct UcmaHost<'a> {
    pub(super) cm: &'a CmService,
    pub(super) rdma_cm: &'a RdmaCmAbi,
}

impl core::ops::Deref for UcmaHost<'_> {
    type Target = CmService;

    fn deref(&self) -> &CmService {
        self.cm
    }
}

impl UcmaAbi {
    /// The rdma_cm id of `file`'s context `ctx`, held for one command:
    /// commands on a context run one at a time, and its teardown waits for
    /// the running one (6.12's per-context mutex and reference), so no
    /// command uses an id while or after it is destroyed.
    pub(super) fn id<'a>(
        &'a self,
        s: &'a UcmaHost<'a>,
        file: FileId,
        ctx: u32,
    ) -> Result<Held<'a>> {
        let ctx = CtxId(ctx);
        loop {
            let seen = self.released.load(Ordering::Acquire);
            let held = self.contexts.lock().hold(file, ctx).map_err(errno)?;
            let Some(b) = held else {
                wait_until(&|| self.released.load(Ordering::Acquire) != seen);
                continue;
            };
            if b.destroying() {
                self.release(s, ctx);
                return Err(code::ENXIO);
            }
            return Ok(Held {
                abi: self,
                s,
                ctx,
                b,
            });
        }
    }

    /// A command lets go of `ctx`; if device removal closed the context
    /// meanwhile, its id is destroyed now (the removal waits for it).
    fn release(&self, s: &UcmaHost<'_>, ctx: CtxId) {
        let closed = self.contexts.lock().unhold(ctx);
        if let Some(b) = closed {
            destroy(s, &b);
        }
        self.released.fetch_add(1, Ordering::AcqRel);
        wake_waiters();
    }

    /// Waits until no command holds `ctx` (hidden from new ones first).
    fn wait_idle(&self, ctx: CtxId) {
        loop {
            let seen = self.released.load(Ordering::Acquire);
            if !self.contexts.lock().busy(ctx) {
                return;
            }
            wait_until(&|| self.released.load(Ordering::Acquire) != seen);
        }
    }

    /// A new file: named, and reachable by its events.
    pub(super) fn open(&self, f: &UcmaFile) -> Result<FileId> {
        let file = self.contexts.lock().open().map_err(|_| code::ENOMEM)?;
        let waker = self.queues.lock().files.0.try_insert(file.0, f.waker());
        if waker.is_err() {
            self.contexts.lock().forget(file);
            return Err(code::ENOMEM);
        }
        Ok(file)
    }

    /// CREATE_ID: an rdma_cm id in the caller's namespace, answered with
    /// the context that names it.
    #[inline(never)]
    pub(super) fn create_id(
        &self,
        s: &UcmaHost<'_>,
        file: FileId,
        uid: u64,
        response: u64,
        ps: PortSpace,
        qp_type: RdmaQpType,
    ) -> Result {
        let ctx = self
            .both(|t, _| t.reserve(file, uid))
            .map_err(|_| code::ENOMEM)?;
        let n = NewId {
            // SAFETY: the caller's namespace lives during its call; the id
            // takes its own reference.
            net: unsafe { bindings::rcm_h_current_net() },
            handler: handler_of::<UcmaIdEvents>(),
            context: ctx_pointer(ctx),
            ps: u32::from(ps.raw()),
            qp_type: ib_qp_type(qp_type),
            caller: core::ptr::null(),
            parent: core::ptr::null(),
        };
        let b = match s.rdma_cm.create_id(s, &n) {
            Ok(b) => b,
            Err(e) => {
                self.both(|t, _| t.discard(ctx));
                return Err(Error::from_errno(e));
            }
        };
        if let Err(e) = copy_out(response, &ctx.0.to_ne_bytes()) {
            s.rdma_cm.destroy_id(s, &b);
            self.both(|t, _| t.discard(ctx));
            return Err(e);
        }
        self.contexts.lock().publish(ctx, b);
        Ok(())
    }

    /// DESTROY_ID: the id goes, then the context with its undelivered
    /// events; answers the events it reported.
    #[inline(never)]
    pub(super) fn destroy_id(
        &self,
        s: &UcmaHost<'_>,
        file: FileId,
        ctx: u32,
        response: u64,
    ) -> Result {
        let ctx = CtxId(ctx);
        let (id, busy) = self.contexts.lock().unpublish(file, ctx).map_err(errno)?;
        let reported = self.finish_destroy(s, ctx, id, busy);
        copy_out(response, &reported.to_ne_bytes())
    }

    /// The end of a context hidden from commands: once no command holds
    /// it (`busy`: one did as it was hidden), its rdma_cm id (if it still
    /// has one) is destroyed, which waits for its handler, then the
    /// context goes, and the ids of requests never delivered with it.
    fn finish_destroy(
        &self,
        s: &UcmaHost<'_>,
        ctx: CtxId,
        id: Option<Arc<RdmaIdBox>>,
        busy: bool,
    ) -> u32 {
        if busy {
            self.wait_idle(ctx);
        }
        if let Some(b) = id {
            destroy(s, &b);
        }
        let mut orphans = LazyVec::new();
        // The ids of undelivered requests' connections are destroyed here,
        // without the locks their handlers may wait on; each one's context
        // goes after its id (and may hand back ids of its own).
        let keep = |orphans: &mut LazyVec<_>, child, id| {
            if orphans.push((child, id), GFP_KERNEL).is_err() {
                pr_warn!("ucma: no memory to end a pending request's id\n");
            }
        };
        let reported =
            self.both(|t, _| t.finish_destroy(ctx, &mut |child, id| keep(&mut orphans, child, id)));
        while !orphans.is_empty() {
            for (child, b) in orphans.take() {
                destroy(s, &b);
                self.both(|t, _| {
                    t.finish_destroy(child, &mut |child, id| keep(&mut orphans, child, id))
                });
            }
        }
        reported
    }

    /// MIGRATE_ID, written to the file `to`: the context `ctx` of the file
    /// open as descriptor `fd` moves here with its undelivered events;
    /// answers the events it reported.
    #[inline(never)]
    pub(super) fn migrate_id(&self, to: FileId, ctx: u32, fd: u32, response: u64) -> Result {
        let mut filp = core::ptr::null_mut();
        let mut from = core::ptr::null_mut();
        // SAFETY: plain outputs; a found file is referenced until `fput`.
        kernel::error::to_result(unsafe {
            bindings::rcm_h_ucma_fget(fd as i32, &mut filp, &mut from)
        })?;
        // SAFETY: `from` is the open file `filp` holds.
        let from = FileId(unsafe { (*from).token });
        // The move is one change of the queues, so an event being queued
        // for the context meanwhile goes wholly before or after it.
        let r = self.both(|t, files| {
            let r = t.migrate(to, from, CtxId(ctx));
            if r.is_ok() && t.queues.has_event(to) {
                files.wake_file(to);
            }
            r
        });
        // SAFETY: taken by `rcm_h_ucma_fget` above.
        unsafe { bindings::rcm_h_ucma_fput(filp) };
        let reported = r.map_err(errno)?;
        copy_out(response, &reported.to_ne_bytes())
    }

    /// The file is closing: every context of it ends, then the file.
    pub(super) fn close(&self, s: &UcmaHost<'_>, file: FileId) {
        loop {
            let next = {
                let mut contexts = self.contexts.lock();
                contexts
                    .next_context_of(file)
                    .map(|ctx| (ctx, contexts.unpublish_for_close(ctx)))
            };
            let Some((ctx, (id, busy))) = next else {
                break;
            };
            self.finish_destroy(s, ctx, id, busy);
        }
        {
            let mut q = self.queues.lock();
            q.files.0.remove(&file.0);
            q.queues.forget(file);
        }
        self.contexts.lock().forget(file);
    }
}

/// Destroys an rdma_cm id of the device (if rdma_cm still has it).
fn destroy(s: &UcmaHost<'_>, b: &RdmaIdBox) {
    if let Some(b) = s.rdma_cm.id_box(b.core) {
        s.rdma_cm.destroy_id(s, &b);
    }
}

/// A command's hold on a context and its id; let go when dropped.
pub(super) struct Held<'a> {
    abi: &'a UcmaAbi,
    s: &'a UcmaHost<'a>,
    ctx: CtxId,
    b: Arc<RdmaIdBox>,
}

impl core::ops::Deref for Held<'_> {
    type Target = RdmaIdBox;

    fn deref(&self) -> &RdmaIdBox {
        &self.b
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.abi.release(self.s, self.ctx);
    }
}
