// SPDX-License-Identifier: GPL-2.0

//! The answers of QUERY (ADDR and GID) as `struct rdma_ucm_query_addr_resp`:
//! the id's addresses, as they are (ADDR) or as AF_IB GIDs with service ids
//! (GID), and its device, port and P_Key once it has one. The caller
//! copies out as much as userspace asked for, at least
//! [`response::QUERY_ADDR_MIN`](super::layout::response::QUERY_ADDR_MIN).

use super::layout::{response, SOCKADDR_STORAGE_SIZE};
use crate::rdma_cm::sockaddr::{self, SOCKADDR_IB_SIZE};
use crate::rdma_cm::{PortSpace, SockAddr};

/// Offsets inside `struct rdma_ucm_query_addr_resp`.
mod at {
    pub const NODE_GUID: usize = 0;
    pub const PORT_NUM: usize = 8;
    pub const PKEY: usize = 10;
    pub const SRC_SIZE: usize = 12;
    pub const DST_SIZE: usize = 14;
    pub const SRC_ADDR: usize = 16;
    pub const DST_ADDR: usize = SRC_ADDR + super::SOCKADDR_STORAGE_SIZE;
    pub const IBDEV_INDEX: usize = DST_ADDR + super::SOCKADDR_STORAGE_SIZE;
}

/// The device an id is bound to, as queries report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoundDevice {
    /// The device's node GUID (host value; reported in network order).
    pub node_guid: u64,
    /// The device's index in ib_core.
    pub ibdev_index: u32,
    /// The port (from 1).
    pub port_num: u8,
    /// The P_Key of the id's address.
    pub pkey: u16,
}

/// What an id's queries report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdFacts {
    /// The source address, if set.
    pub src: Option<SockAddr>,
    /// The destination address, if set.
    pub dst: Option<SockAddr>,
    /// The device, once bound.
    pub device: Option<BoundDevice>,
    /// The id's port space (for the service ids of GID answers).
    pub port_space: PortSpace,
    /// The local GID (zero until bound).
    pub sgid: [u8; 16],
    /// The remote GID (zero until resolved).
    pub dgid: [u8; 16],
}

impl IdFacts {
    /// RDMA_USER_CM_QUERY_ADDR: the addresses as they are.
    pub fn write_addr(&self) -> [u8; response::QUERY_ADDR] {
        let mut out = self.device_part();
        for (addr, size_at, addr_at) in [
            (&self.src, at::SRC_SIZE, at::SRC_ADDR),
            (&self.dst, at::DST_SIZE, at::DST_ADDR),
        ] {
            let size = addr
                .as_ref()
                .and_then(|a| {
                    sockaddr::write(a, &mut out[addr_at..addr_at + SOCKADDR_STORAGE_SIZE])
                })
                .unwrap_or(0);
            out[size_at..size_at + 2].copy_from_slice(&(size as u16).to_ne_bytes());
        }
        out
    }

    /// RDMA_USER_CM_QUERY_GID: both ends as AF_IB addresses (GID, P_Key,
    /// service id), or an AF_IB address copied as it is.
    pub fn write_gid(&self) -> [u8; response::QUERY_ADDR] {
        let mut out = self.device_part();
        let pkey = self.device.map_or(0, |d| d.pkey);
        for (addr, gid, size_at, addr_at) in [
            (&self.src, self.sgid, at::SRC_SIZE, at::SRC_ADDR),
            (&self.dst, self.dgid, at::DST_SIZE, at::DST_ADDR),
        ] {
            let ib = match addr {
                Some(a @ SockAddr::Ib { .. }) => *a,
                _ => SockAddr::Ib {
                    gid,
                    sid: addr.map_or(self.port_space.service_id(0), |a| self.service_id(&a)),
                    sid_mask: 0,
                    pkey,
                    flowinfo: 0,
                    scope_id: 0,
                },
            };
            let _ = sockaddr::write(&ib, &mut out[addr_at..addr_at + SOCKADDR_STORAGE_SIZE]);
            out[size_at..size_at + 2].copy_from_slice(&(SOCKADDR_IB_SIZE as u16).to_ne_bytes());
        }
        out
    }

    /// `rdma_get_service_id` of one of the id's addresses.
    fn service_id(&self, addr: &SockAddr) -> u64 {
        match *addr {
            SockAddr::Ib { sid, .. } => sid,
            a => self.port_space.service_id(a.port()),
        }
    }

    /// The answer with only the device fields set.
    fn device_part(&self) -> [u8; response::QUERY_ADDR] {
        let mut out = [0u8; response::QUERY_ADDR];
        if let Some(d) = self.device {
            out[at::NODE_GUID..at::NODE_GUID + 8].copy_from_slice(&d.node_guid.to_be_bytes());
            out[at::PORT_NUM] = d.port_num;
            out[at::PKEY..at::PKEY + 2].copy_from_slice(&d.pkey.to_be_bytes());
            out[at::IBDEV_INDEX..at::IBDEV_INDEX + 4].copy_from_slice(&d.ibdev_index.to_ne_bytes());
        }
        out
    }
}

// `ibdev_index` is the field older librdmacm does not ask for.
const _: () = assert!(at::IBDEV_INDEX == response::QUERY_ADDR_MIN);

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> IdFacts {
        IdFacts {
            src: Some(SockAddr::V4 {
                addr: [10, 0, 0, 1],
                port: 7471,
            }),
            dst: None,
            device: Some(BoundDevice {
                node_guid: 0x0002_c903_0001_0203,
                ibdev_index: 3,
                port_num: 1,
                pkey: 0xffff,
            }),
            port_space: PortSpace::Tcp,
            sgid: [0xfe; 16],
            dgid: [0; 16],
        }
    }

    #[test]
    fn addr_answer_at_librdmacm_offsets() {
        let b = facts().write_addr();
        assert_eq!(&b[0..8], &[0x00, 0x02, 0xc9, 0x03, 0x00, 0x01, 0x02, 0x03]);
        assert_eq!((b[8], &b[10..12]), (1, &[0xff, 0xff][..]));
        assert_eq!(u16::from_ne_bytes([b[12], b[13]]), 16);
        assert_eq!(u16::from_ne_bytes([b[14], b[15]]), 0, "no destination yet");
        assert_eq!(&b[16..24], &[2, 0, 0x1d, 0x2f, 10, 0, 0, 1]);
        assert_eq!(u32::from_ne_bytes(b[272..276].try_into().unwrap()), 3);
        // Unbound: no device fields at all.
        let unbound = IdFacts {
            device: None,
            ..facts()
        };
        assert_eq!(&unbound.write_addr()[..12], &[0; 12]);
    }

    #[test]
    fn gid_answer_names_ports_by_service_id() {
        let b = facts().write_gid();
        assert_eq!(u16::from_ne_bytes([b[12], b[13]]), 48);
        let src = sockaddr::read(&b[16..16 + 48]).unwrap();
        assert_eq!(
            src,
            SockAddr::Ib {
                gid: [0xfe; 16],
                sid: 0x0106_1d2f,
                sid_mask: 0,
                pkey: 0xffff,
                flowinfo: 0,
                scope_id: 0,
            }
        );
    }
}
