// SPDX-License-Identifier: GPL-2.0

//! REQ (ConnectRequest, IBTA Vol 1 table 106).

use crate::timer::IbaTime;

wire_struct! {
    /// One path of a REQ (primary at body offset 52, alternate at 96).
    pub struct ReqPath at generic {
        /// Local port LID (0xFFFF "permissive" on RoCE).
        local_port_lid: u16 = bits(0, 0, 16),
        /// Remote port LID.
        remote_port_lid: u16 = bits(2, 0, 16),
        /// Local port GID.
        local_port_gid: [u8; 16] = bytes(4, 16),
        /// Remote port GID.
        remote_port_gid: [u8; 16] = bytes(20, 16),
        /// Flow label (20 bits).
        flow_label: u32 = bits(36, 0, 20),
        /// Packet rate (6 bits, IB rate encoding).
        packet_rate: u8 = bits(39, 2, 6),
        /// Traffic class.
        traffic_class: u8 = bits(40, 0, 8),
        /// Hop limit.
        hop_limit: u8 = bits(41, 0, 8),
        /// Service level (4 bits).
        sl: u8 = bits(42, 0, 4),
        /// Whether the path stays inside the local subnet.
        subnet_local: bool = bits(42, 4, 1),
        /// Local ACK timeout.
        local_ack_timeout: IbaTime = bits(43, 0, 5),
    }
}

wire_struct! {
    /// ConnectRequest.
    pub struct Req at 24 {
        /// The sender's communication id.
        local_comm_id: u32 = bits(0, 0, 32),
        /// Vendor id (24 bits; ECE).
        vendor_id: u32 = bits(5, 0, 24),
        /// The service the sender connects to.
        service_id: u64 = bits(8, 0, 64),
        /// The sender's CA (node) GUID.
        local_ca_guid: u64 = bits(16, 0, 64),
        /// The sender's Q_Key (RD).
        local_qkey: u32 = bits(28, 0, 32),
        /// The sender's QPN (24 bits).
        local_qpn: u32 = bits(32, 0, 24),
        /// RDMA read/atomic requests the sender accepts.
        responder_resources: u8 = bits(35, 0, 8),
        /// The sender's EE context (RD; 24 bits).
        local_eecn: u32 = bits(36, 0, 24),
        /// RDMA read/atomic requests the sender issues.
        initiator_depth: u8 = bits(39, 0, 8),
        /// The remote EE context (RD; 24 bits).
        remote_eecn: u32 = bits(40, 0, 24),
        /// How long the receiver may take to answer.
        remote_cm_response_timeout: IbaTime = bits(43, 0, 5),
        /// Transport service type (0 RC, 1 UC, 2 RD, 3 extended).
        transport_service_type: u8 = bits(43, 5, 2),
        /// End-to-end flow control.
        end_to_end_flow_control: bool = bits(43, 7, 1),
        /// Starting PSN (24 bits).
        starting_psn: u32 = bits(44, 0, 24),
        /// How long the sender takes to answer.
        local_cm_response_timeout: IbaTime = bits(47, 0, 5),
        /// Transport retry count (3 bits).
        retry_count: u8 = bits(47, 5, 3),
        /// Partition key.
        partition_key: u16 = bits(48, 0, 16),
        /// Path MTU (4 bits, IB MTU encoding).
        path_mtu: u8 = bits(50, 0, 4),
        /// RD channel exists.
        rdc_exists: bool = bits(50, 4, 1),
        /// RNR retry count (3 bits).
        rnr_retry_count: u8 = bits(50, 5, 3),
        /// How often the sender retries this REQ (4 bits).
        max_cm_retries: u8 = bits(51, 0, 4),
        /// The sender uses an SRQ.
        srq: bool = bits(51, 4, 1),
        /// Extended transport type (3 bits; XRC).
        extended_transport_type: u8 = bits(51, 5, 3),
        /// Primary path.
        primary_path: ReqPath = block(52),
        /// Alternate path (all zero when there is none).
        alternate_path: ReqPath = block(96),
        /// Sender supports SAP (alternate path migration by the CM).
        sap_supported: bool = bits(139, 5, 1),
        /// Private data.
        private_data: [u8; 92] = bytes(140, 92),
    }
}

/// The IEEE OUI in the interface id of an Omni-Path GID (`OPA_STL_OUI`).
const OPA_OUI: u64 = 0x00_066A;

impl Req {
    /// Whether the REQ names an alternate path, by 6.12's rule
    /// (`cm_req_has_alt_path`): a non-zero alternate local LID, or an
    /// Omni-Path alternate local GID. A RoCE REQ's alternate path carries
    /// the permissive LID.
    pub fn has_alternate_path(&self) -> bool {
        let gid = &self.alternate_path.local_port_gid;
        let mut interface_id = [0u8; 8];
        interface_id.copy_from_slice(&gid[8..]);
        self.alternate_path.local_port_lid != 0 || u64::from_be_bytes(interface_id) >> 40 == OPA_OUI
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternate_path_by_lid_or_omni_path_gid() {
        let mut req = Req::zeroed();
        assert!(!req.has_alternate_path());
        // a RoCE alternate path: GIDs, the permissive LID
        req.alternate_path.local_port_gid = [0xfe; 16];
        assert!(!req.has_alternate_path(), "a GID alone is not enough");
        req.alternate_path.local_port_lid = 0xFFFF;
        assert!(req.has_alternate_path());
        req.alternate_path.local_port_lid = 0;
        req.alternate_path.local_port_gid[8..11].copy_from_slice(&[0x00, 0x06, 0x6A]);
        assert!(req.has_alternate_path(), "an Omni-Path GID");
    }
}
