// SPDX-License-Identifier: GPL-2.0

//! The socket addresses rdma_cm ids are named by (`sockaddr_in`,
//! `sockaddr_in6`, `sockaddr_ib`), as plain values, and the comparisons
//! 6.12's cma.c makes on them: "any" addresses, ports, and address
//! equality (link-local IPv6 addresses only within one scope).

/// An rdma_cm address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SockAddr {
    /// `AF_INET`.
    V4 {
        /// The address, network order.
        addr: [u8; 4],
        /// The port.
        port: u16,
    },
    /// `AF_INET6`.
    V6 {
        /// The address, network order.
        addr: [u8; 16],
        /// The port.
        port: u16,
        /// Flow information.
        flowinfo: u32,
        /// The interface a link-local address belongs to.
        scope_id: u32,
    },
    /// `AF_IB`: a GID and a service id; the port is the service id's low
    /// 16 bits under its mask.
    Ib {
        /// The GID.
        gid: [u8; 16],
        /// Service id.
        sid: u64,
        /// Which bits of `sid` are set.
        sid_mask: u64,
        /// Partition key.
        pkey: u16,
        /// Flow information.
        flowinfo: u32,
        /// Scope id.
        scope_id: u64,
    },
}

/// An address family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// `AF_INET`.
    Inet,
    /// `AF_INET6`.
    Inet6,
    /// `AF_IB`.
    Ib,
}

/// The IPv6 loopback address `::1` (also AF_IB's loopback GID).
const LOOPBACK_V6: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

impl SockAddr {
    /// The address family.
    pub const fn family(&self) -> Family {
        match self {
            SockAddr::V4 { .. } => Family::Inet,
            SockAddr::V6 { .. } => Family::Inet6,
            SockAddr::Ib { .. } => Family::Ib,
        }
    }

    /// The GID the address names (`rdma_ip2gid`): an IPv4 address
    /// mapped (`::ffff:a.b.c.d`), an IPv6 one as it is, AF_IB's GID.
    pub const fn gid(&self) -> [u8; 16] {
        match *self {
            SockAddr::V4 { addr, .. } => [
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, addr[0], addr[1], addr[2], addr[3],
            ],
            SockAddr::V6 { addr, .. } => addr,
            SockAddr::Ib { gid, .. } => gid,
        }
    }

    /// The port (`cma_port`).
    pub const fn port(&self) -> u16 {
        match *self {
            SockAddr::V4 { port, .. } | SockAddr::V6 { port, .. } => port,
            SockAddr::Ib { sid, sid_mask, .. } => (sid & sid_mask) as u16,
        }
    }

    /// The same address with another port (`cma_bind_port`: an AF_IB
    /// address keeps the masked service id bits and becomes exact).
    pub const fn with_port(self, port: u16) -> Self {
        match self {
            SockAddr::V4 { addr, .. } => SockAddr::V4 { addr, port },
            SockAddr::V6 {
                addr,
                flowinfo,
                scope_id,
                ..
            } => SockAddr::V6 {
                addr,
                port,
                flowinfo,
                scope_id,
            },
            SockAddr::Ib { sid, sid_mask, .. } => {
                self.with_service_id((sid & sid_mask) | port as u64, u64::MAX)
            }
        }
    }

    /// An AF_IB address with another service id and mask; others as
    /// they are.
    pub const fn with_service_id(self, sid: u64, sid_mask: u64) -> Self {
        match self {
            SockAddr::Ib {
                gid,
                pkey,
                flowinfo,
                scope_id,
                ..
            } => SockAddr::Ib {
                gid,
                sid,
                sid_mask,
                pkey,
                flowinfo,
                scope_id,
            },
            other => other,
        }
    }

    /// The all-zero address of this one's family (what 6.12 leaves as an
    /// id's destination once it is bound).
    pub const fn zero_of_family(&self) -> SockAddr {
        match self {
            SockAddr::V4 { .. } => SockAddr::V4 {
                addr: [0; 4],
                port: 0,
            },
            SockAddr::V6 { .. } => SockAddr::V6 {
                addr: [0; 16],
                port: 0,
                flowinfo: 0,
                scope_id: 0,
            },
            SockAddr::Ib { .. } => SockAddr::Ib {
                gid: [0; 16],
                sid: 0,
                sid_mask: 0,
                pkey: 0,
                flowinfo: 0,
                scope_id: 0,
            },
        }
    }

    /// Port 0: bind picks one.
    pub const fn is_any_port(&self) -> bool {
        self.port() == 0
    }

    /// The unspecified address (IPv4 0.0.0.0/8, `::`, GID 0).
    pub fn is_zero(&self) -> bool {
        match self {
            SockAddr::V4 { addr, .. } => addr[0] == 0,
            SockAddr::V6 { addr, .. } => *addr == [0; 16],
            SockAddr::Ib { gid, .. } => *gid == [0; 16],
        }
    }

    /// A loopback address (127.0.0.0/8, `::1`, GID `::1`).
    pub fn is_loopback(&self) -> bool {
        match self {
            SockAddr::V4 { addr, .. } => addr[0] == 127,
            SockAddr::V6 { addr, .. } => *addr == LOOPBACK_V6,
            SockAddr::Ib { gid, .. } => *gid == LOOPBACK_V6,
        }
    }

    /// Unspecified or loopback: an id bound to it serves every device
    /// (`cma_any_addr`).
    pub fn is_any(&self) -> bool {
        self.is_zero() || self.is_loopback()
    }

    /// The same address, ports aside (`cma_addr_cmp() == 0`): link-local
    /// IPv6 addresses also need the same scope, AF_IB compares GIDs.
    pub fn same_addr(&self, other: &SockAddr) -> bool {
        match (self, other) {
            (SockAddr::V4 { addr: a, .. }, SockAddr::V4 { addr: b, .. }) => a == b,
            (
                SockAddr::V6 {
                    addr: a,
                    scope_id: sa,
                    ..
                },
                SockAddr::V6 {
                    addr: b,
                    scope_id: sb,
                    ..
                },
            ) => a == b && (!is_link_local(b) || sa == sb),
            (SockAddr::Ib { gid: a, .. }, SockAddr::Ib { gid: b, .. }) => a == b,
            _ => false,
        }
    }

    /// The same IP address, ports and scope aside: how a neighbour entry
    /// (which knows its interface, not a scope) names an id's destination.
    pub fn same_ip(&self, other: &SockAddr) -> bool {
        match (self, other) {
            (SockAddr::V4 { addr: a, .. }, SockAddr::V4 { addr: b, .. }) => a == b,
            (SockAddr::V6 { addr: a, .. }, SockAddr::V6 { addr: b, .. }) => a == b,
            _ => false,
        }
    }
}

/// An IP address as an ordered key, port and scope aside (a neighbour's
/// address; IPv4 in the first four bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IpKey {
    v6: bool,
    addr: [u8; 16],
}

impl SockAddr {
    /// The address as an [`IpKey`] (`None` for AF_IB): equal keys are
    /// [`SockAddr::same_ip`].
    pub fn ip_key(&self) -> Option<IpKey> {
        match *self {
            SockAddr::V4 { addr, .. } => {
                let mut key = [0; 16];
                key[..4].copy_from_slice(&addr);
                Some(IpKey {
                    v6: false,
                    addr: key,
                })
            }
            SockAddr::V6 { addr, .. } => Some(IpKey { v6: true, addr }),
            SockAddr::Ib { .. } => None,
        }
    }
}

/// fe80::/10.
fn is_link_local(addr: &[u8; 16]) -> bool {
    addr[0] == 0xfe && addr[1] & 0xc0 == 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(a: [u8; 4], port: u16) -> SockAddr {
        SockAddr::V4 { addr: a, port }
    }

    fn v6(a: [u8; 16], scope_id: u32) -> SockAddr {
        SockAddr::V6 {
            addr: a,
            port: 1,
            flowinfo: 0,
            scope_id,
        }
    }

    #[test]
    fn any_addresses_as_cma_c() {
        assert!(v4([0, 0, 0, 0], 0).is_any());
        assert!(v4([0, 9, 9, 9], 0).is_zero(), "0.0.0.0/8 is zeronet");
        assert!(v4([127, 0, 0, 5], 0).is_loopback());
        assert!(!v4([10, 0, 0, 1], 0).is_any());
        assert!(v6([0; 16], 0).is_any());
        assert!(v6(LOOPBACK_V6, 0).is_any());
        let mut global = [0u8; 16];
        global[0] = 0x20;
        assert!(!v6(global, 0).is_any());
    }

    #[test]
    fn address_equality_and_scopes() {
        assert!(v4([10, 0, 0, 1], 1).same_addr(&v4([10, 0, 0, 1], 2)));
        assert!(!v4([10, 0, 0, 1], 1).same_addr(&v4([10, 0, 0, 2], 1)));
        let mut ll = [0u8; 16];
        ll[0] = 0xfe;
        ll[1] = 0x80;
        ll[15] = 1;
        assert!(v6(ll, 2).same_addr(&v6(ll, 2)));
        assert!(
            !v6(ll, 2).same_addr(&v6(ll, 3)),
            "link-local: scope matters"
        );
        let mut global = ll;
        global[0] = 0x20;
        assert!(
            v6(global, 2).same_addr(&v6(global, 3)),
            "global: scope ignored"
        );
        assert!(!v4([0; 4], 0).same_addr(&v6([0; 16], 0)), "families differ");
    }

    #[test]
    fn ib_ports_live_in_the_service_id() {
        let ib = SockAddr::Ib {
            gid: [1; 16],
            sid: 0x0106_0000 | 0x1C06,
            sid_mask: 0xFFFF_FFFF_FFFF_0000,
            pkey: 0xFFFF,
            flowinfo: 0,
            scope_id: 0,
        };
        assert_eq!(ib.port(), 0, "the port bits are masked off");
        assert!(ib.is_any_port());
        let bound = ib.with_port(7174);
        assert_eq!(bound.port(), 7174);
        match bound {
            SockAddr::Ib { sid, sid_mask, .. } => {
                assert_eq!((sid, sid_mask), (0x0106_1C06, u64::MAX));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(v4([1, 2, 3, 4], 0).with_port(9).port(), 9);
    }
}
