// SPDX-License-Identifier: GPL-2.0

//! LAP (LoadAlternatePath, table 115) and APR (AlternatePathResponse, 116).

use crate::reason::AprStatus;
use crate::timer::IbaTime;
use crate::wire::req::ReqPath;

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

impl Lap {
    /// The alternate path the LAP proposes, in the form a REQ carries paths.
    pub const fn alternate_path(&self) -> ReqPath {
        ReqPath {
            local_port_lid: self.alternate_local_port_lid,
            remote_port_lid: self.alternate_remote_port_lid,
            local_port_gid: self.alternate_local_port_gid,
            remote_port_gid: self.alternate_remote_port_gid,
            flow_label: self.alternate_flow_label,
            packet_rate: self.alternate_packet_rate,
            traffic_class: self.alternate_traffic_class,
            hop_limit: self.alternate_hop_limit,
            sl: self.alternate_sl,
            subnet_local: self.alternate_subnet_local,
            local_ack_timeout: self.alternate_local_ack_timeout,
        }
    }

    /// Sets the alternate path the LAP proposes.
    pub fn set_alternate_path(&mut self, p: &ReqPath) {
        self.alternate_local_port_lid = p.local_port_lid;
        self.alternate_remote_port_lid = p.remote_port_lid;
        self.alternate_local_port_gid = p.local_port_gid;
        self.alternate_remote_port_gid = p.remote_port_gid;
        self.alternate_flow_label = p.flow_label;
        self.alternate_packet_rate = p.packet_rate;
        self.alternate_traffic_class = p.traffic_class;
        self.alternate_hop_limit = p.hop_limit;
        self.alternate_sl = p.sl;
        self.alternate_subnet_local = p.subnet_local;
        self.alternate_local_ack_timeout = p.local_ack_timeout;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternate_path_round_trips() {
        let p = ReqPath {
            local_port_lid: 1,
            remote_port_lid: 2,
            local_port_gid: [3; 16],
            remote_port_gid: [4; 16],
            flow_label: 5,
            packet_rate: 6,
            traffic_class: 7,
            hop_limit: 8,
            sl: 9,
            subnet_local: true,
            local_ack_timeout: IbaTime::new(10),
        };
        let mut lap = Lap::zeroed();
        lap.set_alternate_path(&p);
        assert_eq!(lap.alternate_path(), p);
    }
}
