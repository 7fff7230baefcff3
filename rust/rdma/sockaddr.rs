// SPDX-License-Identifier: GPL-2.0

//! Kernel socket addresses (`struct sockaddr` of the families rdma_cm
//! takes) as the core's [`SockAddr`], through the C helper's plain values
//! (`rcm_h_sockaddr`): the one codec of the module.

use crate::bindings;
use crate::proto::rdma_cm::SockAddr;
use kernel::ffi::c_int;

/// `-EAFNOSUPPORT`, which 6.12's kernel crate does not name.
pub(crate) const EAFNOSUPPORT: c_int = -(kernel::bindings::EAFNOSUPPORT as c_int);

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

/// Reads a kernel socket address (`-EINVAL` for NULL,
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
