// SPDX-License-Identifier: GPL-2.0

//! The 40 network-header bytes ib_mad hands over with a received MAD
//! (`union rdma_network_hdr`): an IB GRH or RoCE v2's IPv6 header, or a
//! RoCE v2 IPv4 header in the last 20 bytes. Which one it is, and whether
//! two MADs came the same way (so that one reply path serves both).

/// The header's size (`struct ib_grh`).
pub const GRH_SIZE: usize = 40;

/// Where a RoCE v2 IPv4 header starts.
const IPV4_AT: usize = 20;
/// The IPv4 header's size without options (RoCE v2 sends none).
const IPV4_SIZE: usize = 20;

/// Which network header the bytes hold (6.12's
/// `ib_get_rdma_header_version`): 6 for a GRH or IPv6 header, 4 for an
/// IPv4 one, 0 for neither. The first 20 bytes of an IPv4 MAD's buffer
/// are garbage and may look like IPv6, so an IPv4 header with a valid
/// checksum wins.
pub fn header_version(h: &[u8; GRH_SIZE]) -> u8 {
    let ip4 = &h[IPV4_AT..];
    let ip4_version = ip4[0] >> 4;
    if h[0] >> 4 != 6 {
        return if ip4_version == 4 { 4 } else { 0 };
    }
    if ip4[0] & 0x0F != 5 {
        return 6;
    }
    if ipv4_checksum(ip4) == u16::from_be_bytes([ip4[10], ip4[11]]) {
        4
    } else {
        6
    }
}

/// The IPv4 header checksum of `ip4` (its first 20 bytes, with the
/// checksum field counted as zero).
fn ipv4_checksum(ip4: &[u8]) -> u16 {
    let mut sum: u32 = ip4
        .chunks_exact(2)
        .take(IPV4_SIZE / 2)
        .enumerate()
        .filter(|(i, _)| *i != 5)
        .map(|(_, w)| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// Whether two MADs' network headers name the same way back: the same
/// header version, and for IPv4 the same addresses, TOS and TTL (the rest
/// of the header changes per packet), else the whole 40 bytes.
pub fn same_route_back(a: &[u8; GRH_SIZE], b: &[u8; GRH_SIZE]) -> bool {
    let version = header_version(a);
    if version != header_version(b) {
        return false;
    }
    if version == 4 {
        let (a4, b4) = (&a[IPV4_AT..], &b[IPV4_AT..]);
        // TOS (1), TTL (8), source and destination addresses (12..20).
        return a4[1] == b4[1] && a4[8] == b4[8] && a4[12..20] == b4[12..20];
    }
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A RoCE v2 IPv4 MAD's header bytes, checksum filled in, after 20
    /// bytes of `junk`.
    fn ipv4(src: [u8; 4], tos: u8, id: u16, junk: u8) -> [u8; GRH_SIZE] {
        let mut h = [junk; GRH_SIZE];
        let [id_hi, id_lo] = id.to_be_bytes();
        let header = [
            0x45, tos, 0, 0x28, id_hi, id_lo, 0x40, 0, 64, 17, 0, 0, src[0], src[1], src[2],
            src[3], 10, 0, 0, 2,
        ];
        h[IPV4_AT..].copy_from_slice(&header);
        let check = ipv4_checksum(&h[IPV4_AT..]).to_be_bytes();
        h[IPV4_AT + 10..IPV4_AT + 12].copy_from_slice(&check);
        h
    }

    #[test]
    fn the_ipv4_checksum_of_a_known_header() {
        let header = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(ipv4_checksum(&header), 0xb861);
    }

    #[test]
    fn versions_as_ib_core_tells_them() {
        // Junk that looks like IPv6 does not hide a valid IPv4 header.
        assert_eq!(header_version(&ipv4([10, 0, 0, 1], 0, 1, 0x60)), 4);
        assert_eq!(header_version(&ipv4([10, 0, 0, 1], 0, 1, 0)), 4);
        // A GRH / IPv6 header whose last 20 bytes are no IPv4 header.
        let mut grh = [0u8; GRH_SIZE];
        grh[0] = 0x60;
        grh[IPV4_AT] = 0x45;
        assert_eq!(header_version(&grh), 6);
        grh[IPV4_AT] = 0x46;
        assert_eq!(header_version(&grh), 6);
        assert_eq!(header_version(&[0; GRH_SIZE]), 0);
    }

    #[test]
    fn one_route_back_per_sender_tos_and_ttl() {
        let a = ipv4([10, 0, 0, 1], 0, 1, 0);
        // Another packet of the same flow: the id and junk change.
        assert!(same_route_back(&a, &ipv4([10, 0, 0, 1], 0, 2, 0x60)));
        assert!(!same_route_back(&a, &ipv4([10, 0, 0, 3], 0, 1, 0)));
        assert!(!same_route_back(&a, &ipv4([10, 0, 0, 1], 32, 1, 0)));
        let mut grh = [0u8; GRH_SIZE];
        grh[0] = 0x60;
        assert!(!same_route_back(&a, &grh));
        let mut other = grh;
        assert!(same_route_back(&grh, &other));
        other[39] = 1;
        assert!(!same_route_back(&grh, &other));
    }
}
