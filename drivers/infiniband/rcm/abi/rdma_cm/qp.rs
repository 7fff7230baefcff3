// SPDX-License-Identifier: GPL-2.0

//! Consumers' QPs: `rdma_create_qp` (created and moved to INIT with the
//! id's attributes), `rdma_destroy_qp`, `rdma_init_qp_attr`, and the moves
//! rdma_cm makes itself as a connection progresses ([`QpControl`]).

use super::id::RdmaIdBox;
use super::RdmaCmAbi;
use crate::abi::ib_cm::qp::{connection_qp_attrs, qp_target};
use crate::bindings as b;
use crate::proto::cm::{CommId, QpTarget};
use crate::proto::rdma_cm::{QpLimits, RdmaId, RdmaQpType};
use crate::rdma::cm_id::QpLock;
use crate::rdma::qp::NewQp;
use crate::shell::rdma_cm::QpControl;
use crate::shell::CmService;
use kernel::ffi::c_int;
use kernel::prelude::*;

/// The mask bits of the attributes the consumer's options override.
const TIMEOUT: u32 = b::ib_qp_attr_mask_IB_QP_TIMEOUT;
const MIN_RNR_TIMER: u32 = b::ib_qp_attr_mask_IB_QP_MIN_RNR_TIMER;

impl RdmaCmAbi {
    /// The attributes for the state in `a.qp_state` (`rdma_init_qp_attr`):
    /// a connection's from the CM, else the id's port and P_Key (and
    /// access flags, or the Q_Key of a UD id); the mask, or an errno.
    pub(crate) fn qp_attrs(
        &self,
        s: &CmService,
        bx: &RdmaIdBox,
        a: &mut b::ib_qp_attr,
    ) -> Result<u32, c_int> {
        let rec = self.read(|core| core.get(bx.core).map(|r| (r.cm(), r.qp_type(), r.psn())));
        let Some((comm, qp_type, psn)) = rec else {
            return Err(EINVAL.to_errno());
        };
        if bx.on_iwarp() {
            let mask = bx.iw_qp_attrs(a)?;
            overrides(bx, a, mask);
            return Ok(mask);
        }
        match comm {
            Some(comm) if qp_type != RdmaQpType::Ud => {
                let target = qp_target(a.qp_state).ok_or(EINVAL.to_errno())?;
                connected_attrs(s, bx, comm, target, a, Some(psn))
            }
            _ => {
                let qkey = if qp_type == RdmaQpType::Ud {
                    let q = self.call(s, |core, _| core.ensure_qkey(bx.core));
                    Some(q.map_err(super::types::errno)?)
                } else {
                    None
                };
                let mask = id_attrs(bx, a, qkey)?;
                if a.qp_state == b::ib_qp_state_IB_QPS_RTR {
                    a.rq_psn = psn;
                }
                overrides(bx, a, mask);
                Ok(mask)
            }
        }
    }

    /// `rdma_create_qp`: a QP on the id's device and port, moved to INIT.
    pub(super) fn create_qp(
        &self,
        s: &CmService,
        bx: &RdmaIdBox,
        pd: *mut b::ib_pd,
        init: *mut b::ib_qp_init_attr,
    ) -> c_int {
        let (ibdev, port) = bx.device_port();
        // SAFETY: the consumer passes a valid PD and attributes.
        let (pd_device, init) = unsafe { ((*pd).device, &mut *init) };
        if ibdev.is_null() || ibdev != pd_device {
            return EINVAL.to_errno();
        }
        init.port_num = port;
        // SAFETY: a valid PD and attributes (above).
        let mut qp = match unsafe { NewQp::create(pd, init) } {
            Ok(qp) => qp,
            Err(e) => return e,
        };
        let mut a = b::ib_qp_attr {
            qp_state: b::ib_qp_state_IB_QPS_INIT,
            ..Default::default()
        };
        let ud = self.read(|core| core.get(bx.core).map(|r| r.qp_type())) == Some(RdmaQpType::Ud);
        let ret = match self.qp_attrs(s, bx, &mut a) {
            // A UD QP goes on to RTS at once, as 6.12's does.
            Ok(mask) if ud => qp.make_ud_ready(&mut a, mask),
            Ok(mask) => qp.modify(&mut a, mask),
            Err(e) => e,
        };
        if ret != 0 {
            // Dropped: destroyed, never handed out.
            return ret;
        }
        let (qp_num, srq) = qp.number_and_srq();
        bx.lock_qp().install(qp);
        super::types::ret(self.call(s, |core, _| core.set_qp(bx.core, qp_num, srq)))
    }

    /// `rdma_destroy_qp`: the core stops moving the QP, then it goes
    /// under the id's QP lock, so a move rcm started meanwhile (a REJ or
    /// a disconnect's move to ERROR, a connection's to RTS) has ended or
    /// finds no QP.
    pub(super) fn destroy_qp(&self, s: &CmService, bx: &RdmaIdBox) {
        if bx.qp().is_null() {
            return;
        }
        self.call(s, |core, _| core.clear_qp(bx.core));
        bx.lock_qp().destroy();
    }

    /// Moves an id's QP (its lock held: `qp`) with the attributes for
    /// `target`.
    #[allow(clippy::too_many_arguments)]
    fn modify(
        &self,
        s: &CmService,
        bx: &RdmaIdBox,
        qp: &QpLock<'_>,
        comm: CommId,
        target: QpTarget,
        rq_psn: Option<u32>,
        adjust: impl FnOnce(&mut b::ib_qp_attr),
    ) -> Result<(), i32> {
        let mut a = b::ib_qp_attr {
            qp_state: match target {
                QpTarget::Init => b::ib_qp_state_IB_QPS_INIT,
                QpTarget::Rtr => b::ib_qp_state_IB_QPS_RTR,
                QpTarget::Rts => b::ib_qp_state_IB_QPS_RTS,
            },
            ..Default::default()
        };
        let mask = connected_attrs(s, bx, comm, target, &mut a, rq_psn)?;
        adjust(&mut a);
        match qp.modify(&mut a, mask) {
            0 => Ok(()),
            e => Err(e),
        }
    }
}

impl QpControl for RdmaCmAbi {
    fn qp_ready(
        &self,
        s: &CmService,
        id: RdmaId,
        comm: CommId,
        limits: Option<QpLimits>,
        rq_psn: u32,
    ) -> Result<(), i32> {
        let Some(bx) = self.id_box(id) else {
            return Ok(());
        };
        let qp = bx.lock_qp();
        if !qp.has_qp() {
            return Ok(());
        }
        // INIT again first: the attributes may have changed since the QP
        // was created (6.12 does the same).
        self.modify(s, &bx, &qp, comm, QpTarget::Init, None, |_| {})?;
        self.modify(s, &bx, &qp, comm, QpTarget::Rtr, Some(rq_psn), |a| {
            if let Some(l) = limits {
                a.max_dest_rd_atomic = l.responder_resources;
            }
        })?;
        self.modify(s, &bx, &qp, comm, QpTarget::Rts, None, |a| {
            if let Some(l) = limits {
                a.max_rd_atomic = l.initiator_depth;
            }
        })
    }

    fn qp_error(&self, id: RdmaId) {
        let Some(bx) = self.id_box(id) else {
            return;
        };
        let mut a = b::ib_qp_attr {
            qp_state: b::ib_qp_state_IB_QPS_ERR,
            ..Default::default()
        };
        // Without a QP nothing moves. A failure leaves the QP as it was,
        // as in 6.12, which ignores it too.
        let _ = bx.lock_qp().modify(&mut a, b::ib_qp_attr_mask_IB_QP_STATE);
    }
}

/// A connection's attributes from the CM for `target`, with the RTR
/// receive PSN set to the id's (`psn`, when known) and the consumer's
/// option overrides.
fn connected_attrs(
    s: &CmService,
    bx: &RdmaIdBox,
    comm: CommId,
    target: QpTarget,
    a: &mut b::ib_qp_attr,
    psn: Option<u32>,
) -> Result<u32, c_int> {
    let (device, _) = bx.device().ok_or(EINVAL.to_errno())?;
    let mask = connection_qp_attrs(s, comm, target, &device, a)?;
    if let (QpTarget::Rtr, Some(psn)) = (target, psn) {
        a.rq_psn = psn;
    }
    overrides(bx, a, mask);
    Ok(mask)
}

/// The attributes of an id without a connection: its port and P_Key
/// index, and access flags (none) or a UD id's Q_Key (`qkey`).
fn id_attrs(bx: &RdmaIdBox, a: &mut b::ib_qp_attr, qkey: Option<u32>) -> Result<u32, c_int> {
    let (ibdev, port) = bx.device_port();
    if ibdev.is_null() {
        return Err(EINVAL.to_errno());
    }
    a.pkey_index = bx.pkey_index()?;
    a.port_num = port;
    let mut mask = b::ib_qp_attr_mask_IB_QP_STATE
        | b::ib_qp_attr_mask_IB_QP_PKEY_INDEX
        | b::ib_qp_attr_mask_IB_QP_PORT;
    if let Some(qkey) = qkey {
        a.qkey = qkey;
        mask |= b::ib_qp_attr_mask_IB_QP_QKEY;
    } else {
        a.qp_access_flags = 0;
        mask |= b::ib_qp_attr_mask_IB_QP_ACCESS_FLAGS;
    }
    Ok(mask)
}

/// The consumer's ACK timeout and minimum RNR timer, where the
/// attributes name them.
fn overrides(bx: &RdmaIdBox, a: &mut b::ib_qp_attr, mask: u32) {
    if mask & TIMEOUT != 0 {
        if let Some(t) = bx.ack_timeout() {
            a.timeout = t;
        }
    }
    if mask & MIN_RNR_TIMER != 0 {
        if let Some(t) = bx.min_rnr_timer() {
            a.min_rnr_timer = t;
        }
    }
}
