// SPDX-License-Identifier: GPL-2.0

//! MRA (MessageReceiptAcknowledgement, table 107) and REJ (ConnectReject,
//! table 108): the two answers that name the message they refer to.

use crate::reason::RejectReason;
use crate::timer::IbaTime;

/// Which message an MRA or REJ refers to (2 bits).
pub mod message_ref {
    /// The REQ.
    pub const REQ: u8 = 0;
    /// The REP.
    pub const REP: u8 = 1;
    /// The LAP (MRA) or another message (REJ).
    pub const OTHER: u8 = 2;
}

wire_struct! {
    /// MessageReceiptAcknowledgement: "received, answer will take longer".
    pub struct Mra at 24 {
        /// The sender's communication id.
        local_comm_id: u32 = bits(0, 0, 32),
        /// The acknowledged message's sender's communication id.
        remote_comm_id: u32 = bits(4, 0, 32),
        /// Which message is acknowledged (see [`message_ref`]).
        message_mraed: u8 = bits(8, 0, 2),
        /// How much longer the answer will take.
        service_timeout: IbaTime = bits(9, 0, 5),
        /// Private data.
        private_data: [u8; 222] = bytes(10, 222),
    }
}

wire_struct! {
    /// ConnectReject.
    pub struct Rej at 24 {
        /// The sender's communication id (0 if it never allocated one).
        local_comm_id: u32 = bits(0, 0, 32),
        /// The rejected side's communication id.
        remote_comm_id: u32 = bits(4, 0, 32),
        /// Which message is rejected (see [`message_ref`]).
        message_rejected: u8 = bits(8, 0, 2),
        /// Length of the valid part of `ari` (7 bits).
        rejected_info_length: u8 = bits(9, 0, 7),
        /// Why.
        reason: RejectReason = bits(10, 0, 16),
        /// Additional rejection information.
        ari: [u8; 72] = bytes(12, 72),
        /// Private data.
        private_data: [u8; 148] = bytes(84, 148),
    }
}

impl Rej {
    /// A REJ with no additional information and no private data.
    pub const fn plain(
        local_comm_id: u32,
        remote_comm_id: u32,
        message_rejected: u8,
        reason: RejectReason,
    ) -> Self {
        Rej {
            local_comm_id,
            remote_comm_id,
            message_rejected,
            rejected_info_length: 0,
            reason,
            ari: [0; 72],
            private_data: [0; 148],
        }
    }
}
