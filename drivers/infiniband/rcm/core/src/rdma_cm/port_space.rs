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

/// The port space an AF_IB address binds in (`cma_select_ib_ps`): the
/// one its service id's masked bits name, if the id's own space allows
/// it (an `Ib` id any of IB, TCP, UDP; a TCP or UDP id only its own).
/// Returns the space and the address's service id and mask with the
/// space's bits filled in; `None` if none fits (`-EPROTONOSUPPORT`).
pub fn ib_address_space(
    id_ps: PortSpace,
    sid: u64,
    sid_mask: u64,
) -> Option<(PortSpace, u64, u64)> {
    let mask = sid_mask & SERVICE_ID_PS_MASK;
    let masked = sid & mask;
    let allowed = |ps: PortSpace| id_ps == PortSpace::Ib || id_ps == ps;
    let ps = [PortSpace::Ib, PortSpace::Tcp, PortSpace::Udp]
        .into_iter()
        .find(|ps| allowed(*ps) && masked == (ps.service_id(0) & mask))?;
    let port = (sid & sid_mask) as u16;
    Some((ps, ps.service_id(port), SERVICE_ID_PS_MASK | sid_mask))
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

    #[test]
    fn af_ib_addresses_pick_their_space_from_the_service_id() {
        let tcp = PortSpace::Tcp.service_id(0);
        // a wildcard mask: an IB id gets the IB space first
        assert_eq!(
            ib_address_space(PortSpace::Ib, 0, 0),
            Some((
                PortSpace::Ib,
                PortSpace::Ib.service_id(0),
                SERVICE_ID_PS_MASK
            ))
        );
        // the TCP space named in full, with a port
        assert_eq!(
            ib_address_space(PortSpace::Ib, tcp | 7174, u64::MAX),
            Some((PortSpace::Tcp, tcp | 7174, u64::MAX))
        );
        assert_eq!(
            ib_address_space(PortSpace::Tcp, tcp, SERVICE_ID_PS_MASK),
            Some((PortSpace::Tcp, tcp, SERVICE_ID_PS_MASK))
        );
        // a UDP id cannot bind in the TCP space, an IPoIB id in none
        assert_eq!(
            ib_address_space(PortSpace::Udp, tcp, SERVICE_ID_PS_MASK),
            None
        );
        assert_eq!(ib_address_space(PortSpace::Ipoib, 0, 0), None);
        // a service id outside the IP spaces
        assert_eq!(
            ib_address_space(PortSpace::Ib, 0x1234_0000, SERVICE_ID_PS_MASK),
            None
        );
    }
}
