// SPDX-License-Identifier: GPL-2.0

//! DREQ (DisconnectRequest, table 112) and DREP (DisconnectReply, 113).

wire_struct! {
    /// DisconnectRequest.
    pub struct Dreq at 24 {
        /// The sender's communication id.
        local_comm_id: u32 = bits(0, 0, 32),
        /// The receiver's communication id.
        remote_comm_id: u32 = bits(4, 0, 32),
        /// The receiver's QPN or EECN (24 bits), checked against the
        /// connection.
        remote_qpn_eecn: u32 = bits(8, 0, 24),
        /// Private data.
        private_data: [u8; 220] = bytes(12, 220),
    }
}

wire_struct! {
    /// DisconnectReply.
    pub struct Drep at 24 {
        /// The sender's communication id.
        local_comm_id: u32 = bits(0, 0, 32),
        /// The DREQ sender's communication id.
        remote_comm_id: u32 = bits(4, 0, 32),
        /// Private data.
        private_data: [u8; 224] = bytes(8, 224),
    }
}
