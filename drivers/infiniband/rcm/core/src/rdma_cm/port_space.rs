// SPDX-License-Identifier: GPL-2.0

//! Port spaces (`enum rdma_ucm_port_space`) and the IB service ids that
//! carry an rdma_cm port on the wire: `(port space << 16) + port`, so a
//! REQ's service id tells the passive side which port space and port it
//! is for.

/// A port space: which ports an id binds in and which QP types it uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PortSpace {
    /// `RDMA_PS_IPOIB`: UD, IPoIB-compatible.
    Ipoib,
    /// `RDMA_PS_IB`: any QP type, AF_IB service ids.
    Ib,
    /// `RDMA_PS_TCP`: RC (connected).
    Tcp,
    /// `RDMA_PS_UDP`: UD (SIDR).
    Udp,
}

/// Every port space, in `enum rdma_ucm_port_space` order of values.
pub const PORT_SPACES: [PortSpace; 4] = [
    PortSpace::Ipoib,
    PortSpace::Tcp,
    PortSpace::Udp,
    PortSpace::Ib,
];

/// The bits of a service id that name the port space (`RDMA_IB_IP_PS_MASK`).
pub const SERVICE_ID_PS_MASK: u64 = 0xFFFF_FFFF_FFFF_0000;

impl PortSpace {
    /// The value of `enum rdma_ucm_port_space`.
    pub const fn raw(self) -> u16 {
        match self {
            PortSpace::Ipoib => 0x0002,
            PortSpace::Ib => 0x013F,
            PortSpace::Tcp => 0x0106,
            PortSpace::Udp => 0x0111,
        }
    }

    /// The port space of an `enum rdma_ucm_port_space` value.
    pub const fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0x0002 => Some(PortSpace::Ipoib),
            0x013F => Some(PortSpace::Ib),
            0x0106 => Some(PortSpace::Tcp),
            0x0111 => Some(PortSpace::Udp),
            _ => None,
        }
    }

    /// The service id of `port` in this space (`rdma_get_service_id` for
    /// IP addresses).
    pub const fn service_id(self, port: u16) -> u64 {
        ((self.raw() as u64) << 16) + port as u64
    }

    /// The port space and port a service id names (6.12 reads bits 16-31
    /// and 0-15 and ignores the rest); `None` if bits 16-31 name no port
    /// space.
    pub const fn of_service_id(service_id: u64) -> Option<(Self, u16)> {
        match PortSpace::from_raw(((service_id >> 16) & 0xFFFF) as u32) {
            Some(ps) => Some((ps, service_id as u16)),
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_ids_as_6_12_forms_them() {
        // rping's default port 7174 in the TCP space
        assert_eq!(PortSpace::Tcp.service_id(7174), 0x0000_0000_0106_1C06);
        assert_eq!(PortSpace::Udp.service_id(0), 0x0000_0000_0111_0000);
        assert_eq!(PortSpace::Ib.service_id(0xFFFF), 0x0000_0000_013F_FFFF);
        for ps in PORT_SPACES {
            assert_eq!(PortSpace::from_raw(u32::from(ps.raw())), Some(ps));
            for port in [0, 1, 4791, 0xFFFF] {
                let sid = ps.service_id(port);
                assert_eq!(sid & SERVICE_ID_PS_MASK, ps.service_id(0));
                assert_eq!(PortSpace::of_service_id(sid), Some((ps, port)));
            }
        }
        assert_eq!(PortSpace::of_service_id(0x0200_0000_0000_0001), None);
        assert_eq!(PortSpace::from_raw(0x0107), None);
    }
}
