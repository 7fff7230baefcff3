// SPDX-License-Identifier: GPL-2.0

//! Kernel socket addresses (`struct sockaddr` of the families rdma_cm
//! takes) as the core's [`SockAddr`]. The bytes are the same as in
//! userspace, so the core's codec (`rdma_cm::sockaddr`) is the module's
//! one codec; this file only bounds the memory it reads and writes.

use crate::bindings;
use crate::proto::rdma_cm::sockaddr::{self, SOCKADDR_IB_SIZE};
use crate::proto::rdma_cm::SockAddr;
use core::mem::size_of;
use kernel::ffi::c_int;

/// `-EAFNOSUPPORT`, which 6.12's kernel crate does not name.
pub(crate) const EAFNOSUPPORT: c_int = -(kernel::bindings::EAFNOSUPPORT as c_int);

/// `struct sockaddr_storage`, which every address rdma_cm takes fits.
type Storage = bindings::__kernel_sockaddr_storage;
const _: () = assert!(size_of::<Storage>() >= SOCKADDR_IB_SIZE);

/// Reads a kernel socket address: `Ok(None)` for `AF_UNSPEC`, `-EINVAL`
/// for NULL, `-EAFNOSUPPORT` for a family rdma_cm has no use for.
///
/// # Safety
///
/// A non-NULL `sa` must point to a socket address of its family's size.
pub(crate) unsafe fn read_sockaddr_or_unspec(
    sa: *const bindings::sockaddr,
) -> Result<Option<SockAddr>, c_int> {
    if sa.is_null() {
        return Err(-(kernel::bindings::EINVAL as c_int));
    }
    let at = sa.cast::<u8>();
    let mut family = [0u8; 2];
    // SAFETY: every socket address starts with its two-byte family.
    unsafe { core::ptr::copy_nonoverlapping(at, family.as_mut_ptr(), 2) };
    let family = u16::from_ne_bytes(family);
    let size = sockaddr::family_size(family);
    if size == 0 {
        return match family {
            0 => Ok(None),
            _ => Err(EAFNOSUPPORT),
        };
    }
    // SAFETY: per this function's contract, `sa` holds `size` bytes (its
    // family's size), which the slice does not outlive.
    let bytes = unsafe { core::slice::from_raw_parts(at, size) };
    sockaddr::read(bytes).map(Some).ok_or(EAFNOSUPPORT)
}

/// Reads a kernel socket address (`-EINVAL` for NULL, `-EAFNOSUPPORT`
/// for `AF_UNSPEC` or another family rdma_cm has no use for).
///
/// # Safety
///
/// As for [`read_sockaddr_or_unspec`].
pub(crate) unsafe fn read_sockaddr(sa: *const bindings::sockaddr) -> Result<SockAddr, c_int> {
    // SAFETY: per this function's contract.
    unsafe { read_sockaddr_or_unspec(sa) }?.ok_or(EAFNOSUPPORT)
}

/// Writes `a` into a `struct sockaddr_storage`, zeroing the rest of it.
///
/// # Safety
///
/// `ss` is valid for writes of a `struct sockaddr_storage`.
pub(crate) unsafe fn write_sockaddr(ss: *mut Storage, a: &SockAddr) {
    let mut bytes = [0u8; size_of::<Storage>()];
    // The storage holds every family (checked above): nothing is cut.
    let _ = sockaddr::write(a, &mut bytes);
    // SAFETY: per this function's contract; the storage is plain bytes of
    // this size.
    unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), ss.cast::<u8>(), bytes.len()) };
}
