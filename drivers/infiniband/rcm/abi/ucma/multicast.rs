// SPDX-License-Identifier: GPL-2.0

//! JOIN_IP_MCAST, JOIN_MCAST and LEAVE_MCAST: a membership per join, named
//! to userspace once the join is under way; its events carry the
//! membership as the join's context.

use super::context::copy_out;
use super::context::UcmaHost;
use super::{errno, ret, UcmaAbi};
use crate::proto::rdma_cm::SockAddr;
use crate::proto::ucma::command::JoinMode;
use crate::proto::ucma::{CtxId, FileId, McId};
use kernel::error::code;
use kernel::prelude::*;

impl UcmaAbi {
    /// A join of `file`'s context `ctx` to `group`; answers the
    /// membership.
    #[inline(never)]
    pub(super) fn join(
        &self,
        s: &UcmaHost<'_>,
        file: FileId,
        ctx: u32,
        uid: u64,
        group: SockAddr,
        mode: JoinMode,
        response: u64,
    ) -> Result {
        let b = self.id(s, file, ctx)?;
        if b.device_port().0.is_null() {
            return Err(code::EINVAL);
        }
        let mc = self
            .both(|t, _| t.reserve_membership(CtxId(ctx), uid, group))
            .map_err(|_| code::ENOMEM)?;
        let cm = s.rdma_cm;
        let send_only = mode == JoinMode::SendOnlyFullMember;
        if let Err(e) = ret(cm.join(s, &b, group, send_only, u64::from(mc.0))) {
            self.both(|t, _| t.finish_leave(mc));
            return Err(e);
        }
        if let Err(e) = copy_out(response, &mc.0.to_ne_bytes()) {
            cm.leave(s, &b, group);
            self.both(|t, _| t.finish_leave(mc));
            return Err(e);
        }
        self.contexts.lock().publish_membership(mc);
        Ok(())
    }

    /// LEAVE_MCAST: once rdma_cm has left (no event of the group is being
    /// delivered after), the membership goes with its undelivered events;
    /// answers the events it reported.
    #[inline(never)]
    pub(super) fn leave(&self, s: &UcmaHost<'_>, file: FileId, mc: u32, response: u64) -> Result {
        let mc = McId(mc);
        let (ctx, group) = self
            .contexts
            .lock()
            .unpublish_membership(file, mc)
            .map_err(errno)?;
        // A context destroyed meanwhile has left its groups with its id.
        if let Ok(b) = self.id(s, file, ctx.0) {
            s.rdma_cm.leave(s, &b, group);
        }
        let reported = self.both(|t, _| t.finish_leave(mc));
        copy_out(response, &reported.to_ne_bytes())
    }
}
