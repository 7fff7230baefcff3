// SPDX-License-Identifier: GPL-2.0

//! The kernel types of the rdma_cm ABI and the core's types they carry:
//! socket addresses, port spaces, QP types, states, event statuses and
//! errnos, each mapping declared once, here.

use crate::abi::ib_cm::types::errno as cm_errno;
use crate::bindings;
use crate::proto::rdma_cm::{EventStatus, IdState, PortSpace, RdmaCmError, RdmaQpType, SockAddr};
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
pub(crate) const EAFNOSUPPORT: c_int = neg(kernel::bindings::EAFNOSUPPORT);
const EPROTONOSUPPORT: c_int = neg(kernel::bindings::EPROTONOSUPPORT);
const EADDRINUSE: c_int = neg(kernel::bindings::EADDRINUSE);
const EADDRNOTAVAIL: c_int = neg(kernel::bindings::EADDRNOTAVAIL);
const ETIMEDOUT: c_int = neg(kernel::bindings::ETIMEDOUT);

/// `AF_INET`, `AF_INET6`, `AF_IB`.
const AF_INET: u16 = 2;
const AF_INET6: u16 = 10;
const AF_IB: u16 = 27;

/// A core address from the C helper's plain values.
pub(crate) fn core_sockaddr(a: &bindings::rcm_h_sockaddr) -> Option<SockAddr> {
    match a.family {
        AF_INET => Some(SockAddr::V4 {
            addr: [a.addr[0], a.addr[1], a.addr[2], a.addr[3]],
            port: a.port,
        }),
        AF_INET6 => Some(SockAddr::V6 {
            addr: a.addr,
            port: a.port,
            flowinfo: a.flowinfo,
            scope_id: a.scope_id,
        }),
        AF_IB => Some(SockAddr::Ib {
            gid: a.addr,
            sid: a.sid,
            sid_mask: a.sid_mask,
            pkey: a.pkey,
            flowinfo: a.flowinfo,
            scope_id: a.ib_scope_id,
        }),
        _ => None,
    }
}

/// The C helper's plain values of a core address.
pub(crate) fn c_sockaddr(a: &SockAddr) -> bindings::rcm_h_sockaddr {
    let mut c = bindings::rcm_h_sockaddr::default();
    match *a {
        SockAddr::V4 { addr, port } => {
            c.family = AF_INET;
            c.port = port;
            c.addr[..4].copy_from_slice(&addr);
        }
        SockAddr::V6 {
            addr,
            port,
            flowinfo,
            scope_id,
        } => {
            c.family = AF_INET6;
            c.port = port;
            c.addr = addr;
            c.flowinfo = flowinfo;
            c.scope_id = scope_id;
        }
        SockAddr::Ib {
            gid,
            sid,
            sid_mask,
            pkey,
            flowinfo,
            scope_id,
        } => {
            c.family = AF_IB;
            c.addr = gid;
            c.sid = sid;
            c.sid_mask = sid_mask;
            c.pkey = pkey;
            c.flowinfo = flowinfo;
            c.ib_scope_id = scope_id;
        }
    }
    c
}

/// Reads a consumer's socket address (`-EINVAL` for NULL,
/// `-EAFNOSUPPORT` for another family).
///
/// # Safety
///
/// A non-NULL `sa` must point to a socket address of its family's size.
pub(crate) unsafe fn read_sockaddr(sa: *const bindings::sockaddr) -> Result<SockAddr, c_int> {
    let mut c = bindings::rcm_h_sockaddr::default();
    // SAFETY: per this function's contract; the helper checks NULL.
    let ret = unsafe { bindings::rcm_h_sockaddr_read(sa, &mut c) };
    if ret != 0 {
        return Err(ret);
    }
    core_sockaddr(&c).ok_or(EAFNOSUPPORT)
}

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
