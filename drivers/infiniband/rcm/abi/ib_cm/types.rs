// SPDX-License-Identifier: GPL-2.0

//! The kernel enums of the ib_cm ABI and the core's types they carry:
//! each mapping declared once, here.

use crate::bindings;
use crate::proto::cm::{CmError, QpType, State};
use kernel::error::code;
use kernel::ffi::c_int;

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

/// The negative errno 6.12's ib_cm returns for a refused call.
pub(crate) fn errno(e: CmError) -> c_int {
    match e {
        CmError::InvalidState | CmError::InvalidArgument | CmError::NoSuchId => {
            code::EINVAL.to_errno()
        }
        CmError::Busy => code::EBUSY.to_errno(),
        // 6.12's kernel crate names no EISCONN.
        CmError::AlreadyConnected => -(kernel::bindings::EISCONN as c_int),
        CmError::NoMemory => code::ENOMEM.to_errno(),
        CmError::NoSpace => code::ENOSPC.to_errno(),
    }
}
