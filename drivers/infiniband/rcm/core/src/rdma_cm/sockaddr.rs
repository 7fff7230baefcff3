// SPDX-License-Identifier: GPL-2.0

//! The one codec of socket addresses (`sockaddr_in`, `sockaddr_in6`,
//! `sockaddr_ib`) as bytes, the same layout in the kernel and in
//! userspace: rdma_ucm commands and queries use it on user bytes, and the
//! module on the kernel consumers' and ib_core's `struct sockaddr`s.
//! Multi-byte fields are network order except the family and the IPv6
//! scope id, which are the host's.

use super::SockAddr;

/// `AF_INET`.
pub const AF_INET: u16 = 2;
/// `AF_INET6`.
pub const AF_INET6: u16 = 10;
/// `AF_IB`.
pub const AF_IB: u16 = 27;

/// `struct sockaddr_in`.
pub const SOCKADDR_IN_SIZE: usize = 16;
/// `struct sockaddr_in6`.
pub const SOCKADDR_IN6_SIZE: usize = 28;
/// `struct sockaddr_ib`.
pub const SOCKADDR_IB_SIZE: usize = 48;

/// The size of an address of `family` (`rdma_addr_size`: 0 for a family
/// rdma_cm has no use for).
pub const fn family_size(family: u16) -> usize {
    match family {
        AF_INET => SOCKADDR_IN_SIZE,
        AF_INET6 => SOCKADDR_IN6_SIZE,
        AF_IB => SOCKADDR_IB_SIZE,
        _ => 0,
    }
}

/// The family at the start of a user address (0 if it is too short).
pub fn family(bytes: &[u8]) -> u16 {
    read_u16_ne(bytes, 0).unwrap_or(0)
}

/// `rdma_addr_size` of the address at the start of a buffer of
/// `capacity` bytes: its size if the family is known and fits, else 0
/// (`rdma_addr_size_in6` and `rdma_addr_size_kss`).
pub fn size_within(bytes: &[u8], capacity: usize) -> usize {
    let size = family_size(family(bytes));
    if size <= capacity {
        size
    } else {
        0
    }
}

/// Reads the address at the start of `bytes`; `None` if its family is
/// not one rdma_cm uses or the buffer is too short for it.
pub fn read(bytes: &[u8]) -> Option<SockAddr> {
    let family = family(bytes);
    let a = bytes.get(..family_size(family))?;
    match family {
        AF_INET => Some(SockAddr::V4 {
            port: read_u16_be(a, 2)?,
            addr: read_array(a, 4)?,
        }),
        AF_INET6 => Some(SockAddr::V6 {
            port: read_u16_be(a, 2)?,
            flowinfo: u32::from_be_bytes(read_array(a, 4)?),
            addr: read_array(a, 8)?,
            scope_id: u32::from_ne_bytes(read_array(a, 24)?),
        }),
        AF_IB => Some(SockAddr::Ib {
            pkey: read_u16_be(a, 2)?,
            flowinfo: u32::from_be_bytes(read_array(a, 4)?),
            gid: read_array(a, 8)?,
            sid: u64::from_be_bytes(read_array(a, 24)?),
            sid_mask: u64::from_be_bytes(read_array(a, 32)?),
            scope_id: u64::from_be_bytes(read_array(a, 40)?),
        }),
        _ => None,
    }
}

/// Writes `addr` at the start of `out` (zeroing the rest of its size);
/// returns the bytes it takes, or `None` if `out` is too short.
pub fn write(addr: &SockAddr, out: &mut [u8]) -> Option<usize> {
    let (family, size) = match addr {
        SockAddr::V4 { .. } => (AF_INET, SOCKADDR_IN_SIZE),
        SockAddr::V6 { .. } => (AF_INET6, SOCKADDR_IN6_SIZE),
        SockAddr::Ib { .. } => (AF_IB, SOCKADDR_IB_SIZE),
    };
    let a = out.get_mut(..size)?;
    a.fill(0);
    a[..2].copy_from_slice(&family.to_ne_bytes());
    match *addr {
        SockAddr::V4 { addr, port } => {
            a[2..4].copy_from_slice(&port.to_be_bytes());
            a[4..8].copy_from_slice(&addr);
        }
        SockAddr::V6 {
            addr,
            port,
            flowinfo,
            scope_id,
        } => {
            a[2..4].copy_from_slice(&port.to_be_bytes());
            a[4..8].copy_from_slice(&flowinfo.to_be_bytes());
            a[8..24].copy_from_slice(&addr);
            a[24..28].copy_from_slice(&scope_id.to_ne_bytes());
        }
        SockAddr::Ib {
            gid,
            sid,
            sid_mask,
            pkey,
            flowinfo,
            scope_id,
        } => {
            a[2..4].copy_from_slice(&pkey.to_be_bytes());
            a[4..8].copy_from_slice(&flowinfo.to_be_bytes());
            a[8..24].copy_from_slice(&gid);
            a[24..32].copy_from_slice(&sid.to_be_bytes());
            a[32..40].copy_from_slice(&sid_mask.to_be_bytes());
            a[40..48].copy_from_slice(&scope_id.to_be_bytes());
        }
    }
    Some(size)
}

/// The address, port 0, of an IP family from its bare bytes (a
/// neighbour entry's key: 4 bytes for `AF_INET`, 16 for `AF_INET6`);
/// `None` for another family or too few bytes.
pub fn from_ip(family: u16, ip: &[u8]) -> Option<SockAddr> {
    match family {
        AF_INET => Some(SockAddr::V4 {
            addr: read_array(ip, 0)?,
            port: 0,
        }),
        AF_INET6 => Some(SockAddr::V6 {
            addr: read_array(ip, 0)?,
            port: 0,
            flowinfo: 0,
            scope_id: 0,
        }),
        _ => None,
    }
}

/// `N` bytes at `at`, if the buffer holds them.
pub(crate) fn read_array<const N: usize>(bytes: &[u8], at: usize) -> Option<[u8; N]> {
    bytes.get(at..at.checked_add(N)?)?.try_into().ok()
}

/// A host-order u16 at `at`.
pub(crate) fn read_u16_ne(bytes: &[u8], at: usize) -> Option<u16> {
    read_array(bytes, at).map(u16::from_ne_bytes)
}

/// A network-order u16 at `at`.
fn read_u16_be(bytes: &[u8], at: usize) -> Option<u16> {
    read_array(bytes, at).map(u16::from_be_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_family_round_trips_at_its_size() {
        let addrs = [
            SockAddr::V4 {
                addr: [10, 0, 0, 2],
                port: 7471,
            },
            SockAddr::V6 {
                addr: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9],
                port: 4420,
                flowinfo: 0x1234,
                scope_id: 3,
            },
            SockAddr::Ib {
                gid: [7; 16],
                sid: 0x0106_0000_0000_1234,
                sid_mask: !0,
                pkey: 0xffff,
                flowinfo: 5,
                scope_id: 9,
            },
        ];
        for (a, size) in addrs.iter().zip([16, 28, 48]) {
            let mut buf = [0xAAu8; 128];
            assert_eq!(write(a, &mut buf), Some(size));
            assert_eq!(size_within(&buf, 128), size);
            assert_eq!(read(&buf), Some(*a));
            // A buffer cut short of the family's size reads nothing.
            assert_eq!(read(&buf[..size - 1]), None);
        }
    }

    #[test]
    fn neighbour_keys_by_family() {
        let v4 = from_ip(AF_INET, &[10, 0, 0, 2, 99]);
        assert_eq!(
            v4,
            Some(SockAddr::V4 {
                addr: [10, 0, 0, 2],
                port: 0
            })
        );
        assert_eq!(from_ip(AF_INET6, &[1; 15]), None);
        assert_eq!(
            from_ip(AF_INET6, &[1; 16]),
            Some(SockAddr::V6 {
                addr: [1; 16],
                port: 0,
                flowinfo: 0,
                scope_id: 0
            })
        );
        assert_eq!(from_ip(AF_IB, &[1; 16]), None);
    }

    #[test]
    fn sizes_as_rdma_addr_size() {
        let mut ib = [0u8; 48];
        ib[..2].copy_from_slice(&AF_IB.to_ne_bytes());
        // AF_IB does not fit a sockaddr_in6: the legacy commands refuse it.
        assert_eq!(size_within(&ib, 28), 0);
        assert_eq!(size_within(&ib, 128), 48);
        assert_eq!(size_within(&[1, 0, 0, 0], 128), 0);
        assert_eq!(size_within(&[], 128), 0);
        assert_eq!(read(&[99, 0]), None);
    }
}
