// SPDX-License-Identifier: GPL-2.0

//! LAP (LoadAlternatePath, table 115) and APR (AlternatePathResponse, 116).

use crate::reason::AprStatus;
use crate::timer::IbaTime;

wire_struct! {
    /// LoadAlternatePath.
    pub struct Lap at 24 {
        /// The sender's communication id.
        local_comm_id: u32 = bits(0, 0, 32),
        /// The receiver's communication id.
        remote_comm_id: u32 = bits(4, 0, 32),
        /// The receiver's QPN or EECN (24 bits).
        remote_qpn_eecn: u32 = bits(12, 0, 24),
        /// How long the receiver may take to answer.
        remote_cm_response_timeout: IbaTime = bits(15, 0, 5),
        /// Alternate path: local port LID.
        alternate_local_port_lid: u16 = bits(20, 0, 16),
        /// Alternate path: remote port LID.
        alternate_remote_port_lid: u16 = bits(22, 0, 16),
        /// Alternate path: local port GID.
        alternate_local_port_gid: [u8; 16] = bytes(24, 16),
        /// Alternate path: remote port GID.
        alternate_remote_port_gid: [u8; 16] = bytes(40, 16),
        /// Alternate path: flow label (20 bits).
        alternate_flow_label: u32 = bits(56, 0, 20),
        /// Alternate path: traffic class.
        alternate_traffic_class: u8 = bits(59, 0, 8),
        /// Alternate path: hop limit.
        alternate_hop_limit: u8 = bits(60, 0, 8),
        /// Alternate path: packet rate (6 bits).
        alternate_packet_rate: u8 = bits(61, 2, 6),
        /// Alternate path: service level (4 bits).
        alternate_sl: u8 = bits(62, 0, 4),
        /// Alternate path stays in the local subnet.
        alternate_subnet_local: bool = bits(62, 4, 1),
        /// Alternate path: local ACK timeout.
        alternate_local_ack_timeout: IbaTime = bits(63, 0, 5),
        /// Private data.
        private_data: [u8; 168] = bytes(64, 168),
    }
}

wire_struct! {
    /// AlternatePathResponse.
    pub struct Apr at 24 {
        /// The sender's communication id.
        local_comm_id: u32 = bits(0, 0, 32),
        /// The LAP sender's communication id.
        remote_comm_id: u32 = bits(4, 0, 32),
        /// Length of the valid part of `additional_info`.
        additional_info_length: u8 = bits(8, 0, 8),
        /// Outcome.
        ap_status: AprStatus = bits(9, 0, 8),
        /// Additional information.
        additional_info: [u8; 72] = bytes(12, 72),
        /// Private data.
        private_data: [u8; 148] = bytes(84, 148),
    }
}
