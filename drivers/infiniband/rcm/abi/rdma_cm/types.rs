// SPDX-License-Identifier: GPL-2.0

//! The kernel types of the rdma_cm ABI and the core's types they carry:
//! port spaces, QP types, states, event statuses and errnos, each mapping
//! declared once, here (socket addresses: `rdma::sockaddr`).

use crate::abi::ib_cm::types::errno as cm_errno;
use crate::bindings;
use crate::proto::rdma_cm::{EventStatus, IdState, PortSpace, RdmaCmError, RdmaQpType};
pub(crate) use crate::rdma::sockaddr::{read_sockaddr, read_sockaddr_or_unspec, EAFNOSUPPORT};
use kernel::error::code;
use kernel::ffi::c_int;

/// The negative errno of a code 6.12's kernel crate does not name.
const fn neg(code: u32) -> c_int {
    -(code as c_int)
}

/// Errnos of rdma_cm that 6.12's kernel crate does not name.
pub(crate) const EOPNOTSUPP: c_int = neg(kernel::bindings::EOPNOTSUPP);
/// `-ECONNREFUSED`.
pub(crate) const ECONNREFUSED: c_int = neg(kernel::bindings::ECONNREFUSED);
const EPROTONOSUPPORT: c_int = neg(kernel::bindings::EPROTONOSUPPORT);
const EADDRINUSE: c_int = neg(kernel::bindings::EADDRINUSE);
const EADDRNOTAVAIL: c_int = neg(kernel::bindings::EADDRNOTAVAIL);
const ETIMEDOUT: c_int = neg(kernel::bindings::ETIMEDOUT);

/// The port space of a kernel `enum rdma_ucm_port_space`.
pub(crate) fn port_space(ps: bindings::rdma_ucm_port_space) -> Option<PortSpace> {
    PortSpace::from_raw(ps)
}

/// The QP type of a kernel `enum ib_qp_type` that rdma_cm connects.
pub(crate) fn rdma_qp_type(qp_type: bindings::ib_qp_type) -> Option<RdmaQpType> {
    match qp_type {
        bindings::ib_qp_type_IB_QPT_RC => Some(RdmaQpType::Rc),
        bindings::ib_qp_type_IB_QPT_UC => Some(RdmaQpType::Uc),
        bindings::ib_qp_type_IB_QPT_UD => Some(RdmaQpType::Ud),
        _ => None,
    }
}

/// The kernel `enum ib_qp_type` of a QP type rdma_cm connects.
pub(crate) fn ib_qp_type(qp_type: RdmaQpType) -> bindings::ib_qp_type {
    match qp_type {
        RdmaQpType::Rc => bindings::ib_qp_type_IB_QPT_RC,
        RdmaQpType::Uc => bindings::ib_qp_type_IB_QPT_UC,
        RdmaQpType::Ud => bindings::ib_qp_type_IB_QPT_UD,
    }
}

/// The kernel's `enum rdma_cm_state` value of a core state (the core
/// numbers its states as the kernel does).
pub(crate) fn kernel_state(state: IdState) -> bindings::rdma_cm_state {
    state as bindings::rdma_cm_state
}

/// The negative errno 6.12's rdma_cm returns for a refused call.
pub(crate) fn errno(e: RdmaCmError) -> c_int {
    match e {
        RdmaCmError::Invalid | RdmaCmError::NoSuchId => code::EINVAL.to_errno(),
        RdmaCmError::FamilyNotSupported => EAFNOSUPPORT,
        RdmaCmError::PortSpaceNotSupported => EPROTONOSUPPORT,
        RdmaCmError::NoDevice => code::ENODEV.to_errno(),
        RdmaCmError::AddrInUse => EADDRINUSE,
        RdmaCmError::AddrNotAvailable => EADDRNOTAVAIL,
        RdmaCmError::NoPermission => code::EACCES.to_errno(),
        RdmaCmError::NoMemory => code::ENOMEM.to_errno(),
        RdmaCmError::Cm(e) => cm_errno(e),
        RdmaCmError::Qp(errno) => errno,
    }
}

/// An event's `status` field.
pub(crate) fn event_status(s: EventStatus) -> c_int {
    match s {
        EventStatus::Ok => 0,
        EventStatus::TimedOut => ETIMEDOUT,
        EventStatus::Failed(e) => errno(e),
        EventStatus::Errno(e) => e,
        EventStatus::Rejected(reason) => c_int::from(reason.to_wire()),
        EventStatus::Sidr(status) => c_int::from(status.to_wire()),
    }
}

/// 0 or the errno of a core result.
pub(crate) fn ret(r: Result<(), RdmaCmError>) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => errno(e),
    }
}
