// SPDX-License-Identifier: GPL-2.0

//! The 24-byte common MAD header and the CM class constants.

use super::field::Mad;

/// Bytes before a MAD's class-specific body.
pub const HEADER_SIZE: usize = 24;
/// The body: 232 bytes.
pub const BODY_SIZE: usize = super::field::MAD_SIZE - HEADER_SIZE;

/// `base_version` of every MAD.
pub const BASE_VERSION: u8 = 1;
/// Management class of the communication manager.
pub const MGMT_CLASS_CM: u8 = 0x07;
/// The CM class version rcm speaks (IBTA 1.2+; the C CM sends 2).
pub const CM_CLASS_VERSION: u8 = 2;

/// MAD methods the CM uses.
pub mod method {
    /// Get (ClassPortInfo).
    pub const GET: u8 = 0x01;
    /// Send: every CM protocol message.
    pub const SEND: u8 = 0x03;
    /// Response to a Get.
    pub const GET_RESP: u8 = 0x81;
}

/// CM attribute ids (the message type).
pub mod attr {
    /// ClassPortInfo.
    pub const CLASS_PORT_INFO: u16 = 0x0001;
    /// ConnectRequest.
    pub const REQ: u16 = 0x0010;
    /// MessageReceiptAcknowledgement.
    pub const MRA: u16 = 0x0011;
    /// ConnectReject.
    pub const REJ: u16 = 0x0012;
    /// ConnectReply.
    pub const REP: u16 = 0x0013;
    /// ReadyToUse.
    pub const RTU: u16 = 0x0014;
    /// DisconnectRequest.
    pub const DREQ: u16 = 0x0015;
    /// DisconnectReply.
    pub const DREP: u16 = 0x0016;
    /// ServiceIDResolutionRequest.
    pub const SIDR_REQ: u16 = 0x0017;
    /// ServiceIDResolutionResponse.
    pub const SIDR_REP: u16 = 0x0018;
    /// LoadAlternatePath.
    pub const LAP: u16 = 0x0019;
    /// AlternatePathResponse.
    pub const APR: u16 = 0x001A;

    /// Whether `attr_id` is one of the above.
    pub const fn is_cm(attr_id: u16) -> bool {
        matches!(attr_id, CLASS_PORT_INFO | REQ..=APR)
    }
}

wire_struct! {
    /// The common MAD header (IBTA 13.4.3).
    pub struct MadHeader at 0 {
        /// Always 1.
        base_version: u8 = bits(0, 0, 8),
        /// 0x07 for the CM.
        mgmt_class: u8 = bits(1, 0, 8),
        /// 2 for the CM as implemented here and in Linux.
        class_version: u8 = bits(2, 0, 8),
        /// Method, including the response bit (0x80).
        method: u8 = bits(3, 0, 8),
        /// MAD status (responses only).
        status: u16 = bits(4, 0, 16),
        /// Class specific; zero for the CM.
        class_specific: u16 = bits(6, 0, 16),
        /// Transaction id: a REP/REJ/MRA/RTU echoes the REQ's.
        transaction_id: u64 = bits(8, 0, 64),
        /// The message type (see [`attr`]).
        attr_id: u16 = bits(16, 0, 16),
        /// Attribute modifier: carries the ECE options of REQ/REP/REJ.
        attr_mod: u32 = bits(20, 0, 32),
    }
}

impl MadHeader {
    /// A CM header for a Send of `attr_id`.
    pub const fn cm_send(attr_id: u16, transaction_id: u64, attr_mod: u32) -> Self {
        MadHeader {
            base_version: BASE_VERSION,
            mgmt_class: MGMT_CLASS_CM,
            class_version: CM_CLASS_VERSION,
            method: method::SEND,
            status: 0,
            class_specific: 0,
            transaction_id,
            attr_id,
            attr_mod,
        }
    }
}

/// The attribute id of a raw MAD, for counting and routing before a full
/// parse.
pub fn peek_attr_id(mad: &Mad) -> u16 {
    MadHeader::read(mad).attr_id
}
