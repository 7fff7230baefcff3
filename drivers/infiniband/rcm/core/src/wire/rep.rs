// SPDX-License-Identifier: GPL-2.0

//! REP (ConnectReply, table 110) and RTU (ReadyToUse, table 111).

use crate::timer::IbaTime;

wire_struct! {
    /// ConnectReply.
    pub struct Rep at 24 {
        /// The sender's communication id.
        local_comm_id: u32 = bits(0, 0, 32),
        /// The REQ sender's communication id.
        remote_comm_id: u32 = bits(4, 0, 32),
        /// The sender's Q_Key (RD).
        local_qkey: u32 = bits(8, 0, 32),
        /// The sender's QPN (24 bits).
        local_qpn: u32 = bits(12, 0, 24),
        /// Vendor id, high byte (ECE).
        vendor_id_high: u8 = bits(15, 0, 8),
        /// The sender's EE context (24 bits).
        local_eecn: u32 = bits(16, 0, 24),
        /// Vendor id, middle byte.
        vendor_id_mid: u8 = bits(19, 0, 8),
        /// Starting PSN (24 bits).
        starting_psn: u32 = bits(20, 0, 24),
        /// Vendor id, low byte.
        vendor_id_low: u8 = bits(23, 0, 8),
        /// RDMA read/atomic requests the sender accepts.
        responder_resources: u8 = bits(24, 0, 8),
        /// RDMA read/atomic requests the sender issues.
        initiator_depth: u8 = bits(25, 0, 8),
        /// The sender's ACK delay.
        target_ack_delay: IbaTime = bits(26, 0, 5),
        /// Answer to the alternate path (0 accepted, 1 unsupported, 2 rejected).
        failover_accepted: u8 = bits(26, 5, 2),
        /// End-to-end flow control.
        end_to_end_flow_control: bool = bits(26, 7, 1),
        /// RNR retry count (3 bits).
        rnr_retry_count: u8 = bits(27, 0, 3),
        /// The sender uses an SRQ.
        srq: bool = bits(27, 3, 1),
        /// The sender's CA GUID.
        local_ca_guid: u64 = bits(28, 0, 64),
        /// Private data.
        private_data: [u8; 196] = bytes(36, 196),
    }
}

impl Rep {
    /// The QP the REP names for the requester: an XRC target has no QP of
    /// its own and sends its number as the EE context.
    pub const fn peer_qpn(&self, xrc: bool) -> u32 {
        if xrc {
            self.local_eecn
        } else {
            self.local_qpn
        }
    }

    /// The 24-bit vendor id (ECE) spread over three bytes.
    pub const fn vendor_id(&self) -> u32 {
        (self.vendor_id_high as u32) << 16
            | (self.vendor_id_mid as u32) << 8
            | self.vendor_id_low as u32
    }

    /// Sets the vendor id; bits above 24 are dropped.
    pub fn set_vendor_id(&mut self, vendor_id: u32) {
        self.vendor_id_high = (vendor_id >> 16) as u8;
        self.vendor_id_mid = (vendor_id >> 8) as u8;
        self.vendor_id_low = vendor_id as u8;
    }
}

wire_struct! {
    /// ReadyToUse.
    pub struct Rtu at 24 {
        /// The sender's communication id.
        local_comm_id: u32 = bits(0, 0, 32),
        /// The REP sender's communication id.
        remote_comm_id: u32 = bits(4, 0, 32),
        /// Private data.
        private_data: [u8; 224] = bytes(8, 224),
    }
}
