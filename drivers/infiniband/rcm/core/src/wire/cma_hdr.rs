// SPDX-License-Identifier: GPL-2.0

//! The header rdma_cm puts at the start of the private data of a REQ or a
//! SIDR_REQ between IP addresses (AF_INET, AF_INET6; AF_IB has none): the
//! header version, the IP version, the source port and both addresses.
//! The destination port travels in the service id.
//!
//! Layout (36 bytes): version @0 (0), IP version in the high nibble @1
//! (4 or 6), source port @2 (big-endian), source address @4 and
//! destination address @20 (16 bytes each; an IPv4 address in the last
//! 4).

/// Bytes of the header.
pub const CMA_HDR_LEN: usize = 36;

/// The only header version (`CMA_VERSION`).
pub const CMA_VERSION: u8 = 0;

const SRC_PORT: usize = 2;
const SRC_ADDR: usize = 4;
const DST_ADDR: usize = 20;
const ADDR_LEN: usize = 16;
const IPV4_AT: usize = ADDR_LEN - 4;

/// An IP address as the header carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpAddr {
    /// IPv4, network order.
    V4([u8; 4]),
    /// IPv6, network order.
    V6([u8; 16]),
}

/// A parsed header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmaHdr {
    /// The requester's port.
    pub src_port: u16,
    /// The requester's address.
    pub src: IpAddr,
    /// The address the requester asked for.
    pub dst: IpAddr,
}

/// Why private data holds no usable header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmaHdrError {
    /// Fewer than [`CMA_HDR_LEN`] bytes.
    TooShort,
    /// A version other than [`CMA_VERSION`] (6.12: `-EINVAL`).
    BadVersion(u8),
    /// An IP version other than 4 or 6 (6.12: `-EAFNOSUPPORT`).
    BadIpVersion(u8),
    /// Source and destination of different IP versions (emit only).
    MixedVersions,
}

impl CmaHdr {
    /// Reads the header at the start of `private_data`.
    pub fn parse(private_data: &[u8]) -> Result<Self, CmaHdrError> {
        let Some(h) = private_data.get(..CMA_HDR_LEN) else {
            return Err(CmaHdrError::TooShort);
        };
        if h[0] != CMA_VERSION {
            return Err(CmaHdrError::BadVersion(h[0]));
        }
        let src_port = u16::from_be_bytes([h[SRC_PORT], h[SRC_PORT + 1]]);
        let field = |at: usize| {
            let mut a = [0u8; ADDR_LEN];
            a.copy_from_slice(&h[at..at + ADDR_LEN]);
            a
        };
        let (src, dst) = (field(SRC_ADDR), field(DST_ADDR));
        let (src, dst) = match h[1] >> 4 {
            4 => (v4_of(&src), v4_of(&dst)),
            6 => (IpAddr::V6(src), IpAddr::V6(dst)),
            v => return Err(CmaHdrError::BadIpVersion(v)),
        };
        Ok(CmaHdr { src_port, src, dst })
    }

    /// Writes the header over the start of `private_data` (at least
    /// [`CMA_HDR_LEN`] bytes), as 6.12 formats it: unused bytes zero.
    pub fn emit(&self, private_data: &mut [u8]) -> Result<(), CmaHdrError> {
        let Some(h) = private_data.get_mut(..CMA_HDR_LEN) else {
            return Err(CmaHdrError::TooShort);
        };
        let ip_version = match (self.src, self.dst) {
            (IpAddr::V4(_), IpAddr::V4(_)) => 4,
            (IpAddr::V6(_), IpAddr::V6(_)) => 6,
            _ => return Err(CmaHdrError::MixedVersions),
        };
        h.fill(0);
        h[0] = CMA_VERSION;
        h[1] = ip_version << 4;
        h[SRC_PORT..SRC_PORT + 2].copy_from_slice(&self.src_port.to_be_bytes());
        for (at, addr) in [(SRC_ADDR, self.src), (DST_ADDR, self.dst)] {
            match addr {
                IpAddr::V4(a) => h[at + IPV4_AT..at + ADDR_LEN].copy_from_slice(&a),
                IpAddr::V6(a) => h[at..at + ADDR_LEN].copy_from_slice(&a),
            }
        }
        Ok(())
    }
}

/// The IPv4 address in the last 4 bytes of a 16-byte field.
fn v4_of(field: &[u8; ADDR_LEN]) -> IpAddr {
    let mut a = [0u8; 4];
    a.copy_from_slice(&field[IPV4_AT..]);
    IpAddr::V4(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10.0.0.1:4791 asks for 10.0.0.2, as 6.12's cma_format_hdr writes it
    /// (bytes written from the layout by hand).
    #[test]
    fn ipv4_header_bytes() {
        let mut want = [0u8; CMA_HDR_LEN];
        want[1] = 0x40;
        want[2..4].copy_from_slice(&[0x12, 0xb7]);
        want[16..20].copy_from_slice(&[10, 0, 0, 1]);
        want[32..36].copy_from_slice(&[10, 0, 0, 2]);
        let hdr = CmaHdr {
            src_port: 4791,
            src: IpAddr::V4([10, 0, 0, 1]),
            dst: IpAddr::V4([10, 0, 0, 2]),
        };
        let mut pd = [0xAAu8; 56];
        hdr.emit(&mut pd).unwrap();
        assert_eq!(pd[..CMA_HDR_LEN], want);
        assert_eq!(pd[CMA_HDR_LEN..], [0xAA; 20], "the consumer's data is kept");
        assert_eq!(CmaHdr::parse(&pd), Ok(hdr));
    }

    #[test]
    fn ipv6_round_trip_and_errors() {
        let hdr = CmaHdr {
            src_port: 1,
            src: IpAddr::V6([0xfe; 16]),
            dst: IpAddr::V6([1; 16]),
        };
        let mut pd = [0u8; 92];
        hdr.emit(&mut pd).unwrap();
        assert_eq!(pd[1], 0x60);
        assert_eq!(CmaHdr::parse(&pd), Ok(hdr));
        assert_eq!(CmaHdr::parse(&pd[..35]), Err(CmaHdrError::TooShort));
        let mut bad = pd;
        bad[0] = 1;
        assert_eq!(CmaHdr::parse(&bad), Err(CmaHdrError::BadVersion(1)));
        bad = pd;
        bad[1] = 0x50;
        assert_eq!(CmaHdr::parse(&bad), Err(CmaHdrError::BadIpVersion(5)));
        // the low nibble is not the version's
        bad = pd;
        bad[1] = 0x6f;
        assert_eq!(CmaHdr::parse(&bad), Ok(hdr));
        let mixed = CmaHdr {
            dst: IpAddr::V4([1, 2, 3, 4]),
            ..hdr
        };
        assert_eq!(mixed.emit(&mut pd), Err(CmaHdrError::MixedVersions));
        assert_eq!(hdr.emit(&mut pd[..10]), Err(CmaHdrError::TooShort));
    }
}
