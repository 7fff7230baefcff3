// SPDX-License-Identifier: GPL-2.0

//! The commands that drive an id through rdma_cm: bind, resolve, connect,
//! listen, accept, reject, disconnect, notify and the options; each looks
//! its id up (with or without a device, as 6.12's command does) and calls
//! what `rdma_*` calls.

use super::context::{Held, UcmaHost};
use super::{errno, ret, UcmaAbi};
use crate::abi::rdma_cm::id::RdmaIdBox;
use crate::abi::rdma_cm::types::EAFNOSUPPORT;
use crate::bindings;
use crate::proto::rdma_cm::{ConnParams, Family, SockAddr};
use crate::proto::ucma::command::{ConnParam, UserAddr};
use crate::proto::ucma::option::{
    IdOption, SetOption, MAX_OPTION_LEN, RCM_ID_CM_RESPONSE_TIMEOUT, RCM_ID_MAX_CM_RETRIES,
};
use crate::proto::ucma::{CtxId, Ece, FileId};
use crate::rdma::user_route::unpack_path;
use kernel::error::code;
use kernel::prelude::*;
use kernel::uaccess::{UserPtr, UserSlice};

// The option numbers userspace takes from include/uapi/rdma/rcm_user_cm.h.
const _: () =
    assert!(RCM_ID_CM_RESPONSE_TIMEOUT == bindings::RCM_OPTION_ID_CM_RESPONSE_TIMEOUT as u32);
const _: () = assert!(RCM_ID_MAX_CM_RETRIES == bindings::RCM_OPTION_ID_MAX_CM_RETRIES as u32);

impl UcmaAbi {
    /// The id of a command that needs its device (6.12's
    /// `ucma_get_ctx_dev`): `-EINVAL` while it has none.
    fn id_with_device<'a>(
        &'a self,
        s: &'a UcmaHost<'a>,
        file: FileId,
        ctx: u32,
    ) -> Result<Held<'a>> {
        let b = self.id(s, file, ctx)?;
        if b.device_port().0.is_null() {
            return Err(code::EINVAL);
        }
        Ok(b)
    }

    /// BIND_IP and BIND.
    #[inline(never)]
    pub(super) fn bind(&self, s: &UcmaHost<'_>, file: FileId, ctx: u32, addr: SockAddr) -> Result {
        let b = self.id(s, file, ctx)?;
        ret(s.rdma_cm.bind(s, &b, addr))
    }

    /// RESOLVE_IP and RESOLVE_ADDR.
    #[inline(never)]
    pub(super) fn resolve_addr(
        &self,
        s: &UcmaHost<'_>,
        file: FileId,
        ctx: u32,
        src: UserAddr,
        dst: SockAddr,
        timeout_ms: u32,
    ) -> Result {
        let b = self.id(s, file, ctx)?;
        let src = match src {
            UserAddr::Unspecified => None,
            UserAddr::Addr(a) => Some(a),
            UserAddr::Unsupported(_) => return Err(Error::from_errno(EAFNOSUPPORT)),
        };
        ret(s.rdma_cm.resolve_addr(s, &b, src, dst, timeout_ms))
    }

    /// RESOLVE_ROUTE.
    #[inline(never)]
    pub(super) fn resolve_route(
        &self,
        s: &UcmaHost<'_>,
        file: FileId,
        ctx: u32,
        timeout_ms: u32,
    ) -> Result {
        let b = self.id_with_device(s, file, ctx)?;
        ret(s.rdma_cm.resolve_route(s, &b, timeout_ms, true))
    }

    /// CONNECT (`rdma_connect_ece`).
    #[inline(never)]
    pub(super) fn connect(
        &self,
        s: &UcmaHost<'_>,
        file: FileId,
        ctx: u32,
        param: &ConnParam,
        ece: Ece,
    ) -> Result {
        let b = self.id_with_device(s, file, ctx)?;
        let cm = s.rdma_cm;
        let p = conn_params(s, &b, param);
        b.lock_handler();
        let r = cm.connect(s, &b, &p, Some(ece));
        b.unlock_handler();
        ret(r)
    }

    /// LISTEN: the backlog asked for, within the sysctl's maximum.
    #[inline(never)]
    pub(super) fn listen(&self, s: &UcmaHost<'_>, file: FileId, ctx: u32, backlog: u32) -> Result {
        let b = self.id(s, file, ctx)?;
        // SAFETY: reads an int.
        let max = u32::try_from(unsafe { bindings::rcm_h_ucma_max_backlog() }).unwrap_or(0);
        let backlog = if backlog > 0 && backlog < max {
            backlog
        } else {
            max
        };
        self.queues.lock().queues.set_backlog(CtxId(ctx), backlog);
        let backlog = i32::try_from(backlog).unwrap_or(i32::MAX);
        ret(s.rdma_cm.listen(s, &b, backlog))
    }

    /// ACCEPT, with the handler lock held so that the context's new uid
    /// and the events after the accept go together.
    #[inline(never)]
    pub(super) fn accept(
        &self,
        s: &UcmaHost<'_>,
        file: FileId,
        ctx: u32,
        uid: u64,
        param: Option<&ConnParam>,
        ece: Ece,
    ) -> Result {
        let b = self.id_with_device(s, file, ctx)?;
        let cm = s.rdma_cm;
        let p = param.map(|p| conn_params(s, &b, p));
        b.lock_handler();
        let r = cm.accept(s, &b, p.as_ref(), Some(ece));
        if r == 0 && p.is_some() {
            self.queues.lock().queues.set_uid(CtxId(ctx), uid);
        }
        b.unlock_handler();
        ret(r)
    }

    /// REJECT.
    #[inline(never)]
    pub(super) fn reject(
        &self,
        s: &UcmaHost<'_>,
        file: FileId,
        ctx: u32,
        reason: u8,
        data: &[u8],
    ) -> Result {
        let b = self.id_with_device(s, file, ctx)?;
        ret(s.rdma_cm.reject(s, &b, data, reason))
    }

    /// DISCONNECT.
    #[inline(never)]
    pub(super) fn disconnect(&self, s: &UcmaHost<'_>, file: FileId, ctx: u32) -> Result {
        let b = self.id_with_device(s, file, ctx)?;
        ret(s.rdma_cm.disconnect(s, &b))
    }

    /// NOTIFY.
    #[inline(never)]
    pub(super) fn notify(&self, s: &UcmaHost<'_>, file: FileId, ctx: u32, event: u32) -> Result {
        let b = self.id(s, file, ctx)?;
        ret(s.rdma_cm.notify(s, &b, event))
    }

    /// SET_OPTION: the id, then its value copied in, then the option.
    #[inline(never)]
    pub(super) fn set_option(&self, s: &UcmaHost<'_>, file: FileId, opt: &SetOption) -> Result {
        let b = self.id(s, file, opt.id)?;
        let len = usize::try_from(opt.optlen).map_err(|_| code::EINVAL)?;
        if opt.optlen > MAX_OPTION_LEN {
            return Err(code::EINVAL);
        }
        let mut value = KVec::new();
        let from = UserPtr::try_from(opt.optval).map_err(|_| code::EFAULT)?;
        UserSlice::new(from, len)
            .reader()
            .read_all(&mut value, GFP_KERNEL)?;
        let cm = s.rdma_cm;
        match opt.value(&value).map_err(errno)? {
            IdOption::Tos(tos) => ret(cm.set_tos(s, &b, tos)),
            IdOption::ReuseAddr(on) => ret(cm.set_reuseaddr(s, &b, on)),
            IdOption::AfOnly(on) => ret(cm.set_afonly(s, &b, on)),
            IdOption::AckTimeout(t) => ret(cm.set_ack_timeout(&b, t)),
            IdOption::CmResponseTimeout(t) => {
                ret(cm.set_cm_response(s, &b, |now| now.with_timeout(t)))
            }
            IdOption::MaxCmRetries(r) => ret(cm.set_cm_response(s, &b, |now| now.with_retries(r))),
            IdOption::IbPath(packed) => {
                if b.device_port().0.is_null() {
                    return Err(code::EINVAL);
                }
                let rec = unpack_path(&packed);
                ret(cm.set_ib_path(s, &b, &rec))?;
                // As 6.12: the route is resolved now, and userspace hears it.
                self.queue(
                    CtxId(opt.id),
                    bindings::rdma_cm_event_type_RDMA_CM_EVENT_ROUTE_RESOLVED,
                );
                Ok(())
            }
        }
    }
}

/// rdma_cm's parameters for a command's: the Q_Key counts only on an
/// AF_IB id (6.12's `ucma_copy_conn_param`).
fn conn_params<'a>(s: &UcmaHost<'_>, b: &RdmaIdBox, p: &'a ConnParam) -> ConnParams<'a> {
    let af_ib = s.rdma_cm.read(|core| {
        core.get(b.core)
            .and_then(|r| r.src())
            .is_some_and(|a| a.family() == Family::Ib)
    });
    ConnParams {
        private_data: p.private_data.as_slice(),
        responder_resources: p.responder_resources,
        initiator_depth: p.initiator_depth,
        flow_control: p.flow_control,
        retry_count: p.retry_count,
        rnr_retry_count: p.rnr_retry_count,
        srq: p.srq,
        qp_num: p.qp_num & 0x00FF_FFFF,
        qkey: if af_ib { p.qkey } else { 0 },
    }
}
