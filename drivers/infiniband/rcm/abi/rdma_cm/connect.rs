// SPDX-License-Identifier: GPL-2.0

//! Connecting: `rdma_connect` (three variants), `rdma_listen`,
//! `rdma_accept` (two), `rdma_reject`, `rdma_disconnect`, `rdma_notify`
//! and the options, as thin calls on the core.

use super::id::RdmaIdBox;
use super::resolve;
use super::types::ret;
use super::RdmaCmAbi;
use crate::abi::ib_cm::qp::notify_connection;
use crate::bindings;
use crate::proto::rdma_cm::{CmResponse, ConnParams, IdState, RdmaCmError, RdmaQpType};
use crate::proto::reason::RejectReason;
use crate::proto::ucma::Ece;
use crate::shell::CmService;
use crate::shell::Peer;
use kernel::ffi::c_int;
use kernel::prelude::*;

/// The consumer's connection parameters.
///
/// # Safety
///
/// `p` must be valid, with private data valid for its length.
pub(super) unsafe fn conn_params<'a>(p: *const bindings::rdma_conn_param) -> ConnParams<'a> {
    // SAFETY: per this function's contract.
    let p = unsafe { &*p };
    let private_data = if p.private_data.is_null() || p.private_data_len == 0 {
        &[][..]
    } else {
        // SAFETY: per this function's contract.
        unsafe {
            core::slice::from_raw_parts(
                p.private_data.cast::<u8>(),
                usize::from(p.private_data_len),
            )
        }
    };
    ConnParams {
        private_data,
        responder_resources: p.responder_resources,
        initiator_depth: p.initiator_depth,
        flow_control: p.flow_control != 0,
        retry_count: p.retry_count,
        rnr_retry_count: p.rnr_retry_count,
        srq: p.srq != 0,
        qp_num: p.qp_num & 0x00FF_FFFF,
        qkey: p.qkey,
    }
}

impl RdmaCmAbi {
    /// `rdma_connect_locked`: the caller holds the id's handler lock.
    /// With `ece` (rdma_ucm's CONNECT), the ECE to offer is recorded under
    /// the same hold of the core's lock.
    pub(crate) fn connect(
        &self,
        s: &CmService,
        b: &RdmaIdBox,
        p: &ConnParams<'_>,
        ece: Option<Ece>,
    ) -> c_int {
        let path = match self.peer_for_connect(b) {
            Ok(path) => path,
            Err(e) => return e,
        };
        ret(self.call_settled_mirrored(s, b, |core, host| {
            if let Some(e) = ece {
                core.set_ece(b.core, e.vendor_id, e.attr_mod)?;
            }
            if let Some(path) = path {
                core.supply_peer(b.core, |device| Peer { device, path });
            }
            core.connect(host, b.core, p)
        }))
    }

    /// `rdma_listen`: binds the IPv4 wildcard first if the id is IDLE
    /// (its address written before iWARP listeners read it). A failed
    /// listen leaves no iWARP listener.
    pub(crate) fn listen(&self, s: &CmService, b: &RdmaIdBox, backlog: c_int) -> c_int {
        let any = crate::proto::rdma_cm::SockAddr::V4 {
            addr: [0; 4],
            port: 0,
        };
        if self.read(|core| core.get(b.core).map(|r| r.state())) == Some(IdState::Idle) {
            let r = self.bind(s, b, any);
            if r != 0 {
                return r;
            }
        }
        // A wildcard names no device: nothing is found to attach.
        let (cx, _) = self.bind_context(s, b, &any);
        let backlog = u32::try_from(backlog).unwrap_or(0);
        let r = self.call_settled(s, |core, host| core.listen(host, b.core, backlog, &cx));
        self.sync(b);
        let listening =
            self.read(|core| core.get(b.core).map(|r| r.state())) == Some(IdState::Listen);
        match &r {
            Ok(()) => self.add_listen_rows(s, b, None),
            // An id that listens already keeps its listeners.
            Err(_) if !listening => self.release_iw_listeners(b),
            Err(_) => {}
        }
        ret(r)
    }

    /// `rdma_bind_addr`.
    pub(crate) fn bind(
        &self,
        s: &CmService,
        b: &RdmaIdBox,
        addr: crate::proto::rdma_cm::SockAddr,
    ) -> c_int {
        if self.read(|core| core.get(b.core).map(|r| r.state())) != Some(IdState::Idle) {
            return EINVAL.to_errno();
        }
        let (cx, found) = self.bind_context(s, b, &addr);
        let device_found = cx.device.is_ok() || addr.is_any();
        let r = self.call(s, |core, _| {
            let r = core.bind_addr(b.core, addr, &cx).map(|_| ());
            resolve::attach_if_taken(core, b, found);
            r
        });
        // As 6.12: an id that got as far as its port (bound or not) has
        // the source address it asked for and a zero destination of its
        // family.
        if device_found {
            b.write_addrs(Some(addr), Some(addr.zero_of_family()));
        }
        self.sync(b);
        ret(r)
    }

    /// `rdma_accept`: the caller holds the id's handler lock. With `ece`
    /// (rdma_ucm's ACCEPT), as [`Self::connect`].
    pub(crate) fn accept(
        &self,
        s: &CmService,
        b: &RdmaIdBox,
        p: Option<&ConnParams<'_>>,
        ece: Option<Ece>,
    ) -> c_int {
        ret(self.call_settled_mirrored(s, b, |core, host| {
            if let Some(e) = ece {
                core.set_ece(b.core, e.vendor_id, e.attr_mod)?;
            }
            core.accept(host, b.core, p)
        }))
    }

    /// `rdma_reject`.
    pub(crate) fn reject(&self, s: &CmService, b: &RdmaIdBox, data: &[u8], reason: u8) -> c_int {
        let reason = RejectReason::from_wire(u16::from(reason));
        ret(self.call_settled(s, |core, host| core.reject(host, b.core, data, reason)))
    }

    /// `rdma_disconnect`.
    pub(crate) fn disconnect(&self, s: &CmService, b: &RdmaIdBox) -> c_int {
        ret(self.call_settled_mirrored(s, b, |core, host| core.disconnect(host, b.core)))
    }

    /// `rdma_notify`: what the id's QP saw, passed to its connection's
    /// CM id. From any context (QP event handlers, some in hard IRQ): it
    /// reads only the id's own fields and takes only the CM endpoint's
    /// lock, which interrupt context only tries.
    pub(crate) fn notify(
        &self,
        s: &CmService,
        b: &RdmaIdBox,
        event: bindings::ib_event_type,
    ) -> c_int {
        match b.comm() {
            Some(comm) => notify_connection(s, comm, event, |_| {}),
            // iw_cm needs no news (6.12 answers 0 for its ids).
            None if b.on_iwarp() => 0,
            None => EINVAL.to_errno(),
        }
    }

    /// The ECE a consumer offers in its REQ or REP.
    pub(crate) fn set_ece(
        &self,
        s: &CmService,
        b: &RdmaIdBox,
        vendor_id: u32,
        attr_mod: u32,
    ) -> c_int {
        ret(self.call(s, |core, _| core.set_ece(b.core, vendor_id, attr_mod)))
    }

    /// `rdma_set_service_type`.
    pub(crate) fn set_tos(&self, s: &CmService, b: &RdmaIdBox, tos: u8) -> c_int {
        ret(self.call(s, |core, _| core.set_tos(b.core, tos)))
    }

    /// `rdma_set_reuseaddr`.
    pub(crate) fn set_reuseaddr(&self, s: &CmService, b: &RdmaIdBox, reuse: bool) -> c_int {
        ret(self.call(s, |core, _| core.set_reuseaddr(b.core, reuse)))
    }

    /// `rdma_set_afonly`.
    pub(crate) fn set_afonly(&self, s: &CmService, b: &RdmaIdBox, afonly: bool) -> c_int {
        ret(self.call(s, |core, _| core.set_afonly(b.core, afonly)))
    }

    /// rcm's CM response timeout and retry count of `b`'s requests, as
    /// `change` makes them of the current ones (`None`: EINVAL, the id
    /// unchanged), in one hold of the core's lock.
    pub(crate) fn set_cm_response(
        &self,
        s: &CmService,
        b: &RdmaIdBox,
        change: impl FnOnce(CmResponse) -> Option<CmResponse>,
    ) -> c_int {
        ret(self.call(s, |core, _| {
            let now = core.cm_response(b.core).ok_or(RdmaCmError::NoSuchId)?;
            core.set_cm_response(b.core, change(now).ok_or(RdmaCmError::Invalid)?)
        }))
    }

    /// `rdma_set_ack_timeout`: RC ids only.
    pub(crate) fn set_ack_timeout(&self, b: &RdmaIdBox, timeout: u8) -> c_int {
        if self.read(|core| core.get(b.core).map(|r| r.qp_type())) != Some(RdmaQpType::Rc) {
            return EINVAL.to_errno();
        }
        b.set_ack_timeout(timeout);
        0
    }

    /// `rdma_set_min_rnr_timer`: RC ids only.
    pub(super) fn set_min_rnr_timer(&self, b: &RdmaIdBox, timer: u8) -> c_int {
        if self.read(|core| core.get(b.core).map(|r| r.qp_type())) != Some(RdmaQpType::Rc) {
            return EINVAL.to_errno();
        }
        b.set_min_rnr_timer(timer);
        0
    }
}
