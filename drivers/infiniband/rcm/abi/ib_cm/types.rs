// SPDX-License-Identifier: GPL-2.0

//! The kernel enums of the ib_cm ABI and the core's types they carry:
//! each mapping declared once, here.

use crate::bindings;
use crate::proto::cm::{QpType, State};

/// The kernel's `enum ib_qp_type` of a connected QP type.
pub(crate) fn kernel_qp_type(qp_type: QpType) -> bindings::ib_qp_type {
    match qp_type {
        QpType::Rc => bindings::ib_qp_type_IB_QPT_RC,
        QpType::Uc => bindings::ib_qp_type_IB_QPT_UC,
        QpType::XrcIni => bindings::ib_qp_type_IB_QPT_XRC_INI,
        QpType::XrcTgt => bindings::ib_qp_type_IB_QPT_XRC_TGT,
    }
}

/// The connected QP type a kernel `enum ib_qp_type` names, if it is one.
pub(crate) fn qp_type_of(qp_type: bindings::ib_qp_type) -> Option<QpType> {
    match qp_type {
        bindings::ib_qp_type_IB_QPT_RC => Some(QpType::Rc),
        bindings::ib_qp_type_IB_QPT_UC => Some(QpType::Uc),
        bindings::ib_qp_type_IB_QPT_XRC_INI => Some(QpType::XrcIni),
        bindings::ib_qp_type_IB_QPT_XRC_TGT => Some(QpType::XrcTgt),
        _ => None,
    }
}

/// The kernel's `enum ib_cm_state` value of a core state (the core numbers
/// its states as the kernel does).
pub(crate) fn kernel_state(state: State) -> bindings::ib_cm_state {
    state as bindings::ib_cm_state
}
