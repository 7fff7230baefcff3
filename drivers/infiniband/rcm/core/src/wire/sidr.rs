// SPDX-License-Identifier: GPL-2.0

//! SIDR_REQ and SIDR_REP (service id resolution for UD, tables 119/120).

use crate::reason::SidrStatus;

wire_struct! {
    /// ServiceIDResolutionRequest.
    pub struct SidrReq at 24 {
        /// Identifies the request; echoed by the reply.
        request_id: u32 = bits(0, 0, 32),
        /// Partition key.
        partition_key: u16 = bits(4, 0, 16),
        /// The service to resolve.
        service_id: u64 = bits(8, 0, 64),
        /// Private data.
        private_data: [u8; 216] = bytes(16, 216),
    }
}

wire_struct! {
    /// ServiceIDResolutionResponse.
    pub struct SidrRep at 24 {
        /// The request's id.
        request_id: u32 = bits(0, 0, 32),
        /// Outcome.
        status: SidrStatus = bits(4, 0, 8),
        /// Length of the valid part of `additional_info`.
        additional_info_length: u8 = bits(5, 0, 8),
        /// Vendor id, high 16 bits (ECE).
        vendor_id_high: u16 = bits(6, 0, 16),
        /// The service's QPN (24 bits).
        qpn: u32 = bits(8, 0, 24),
        /// Vendor id, low byte.
        vendor_id_low: u8 = bits(11, 0, 8),
        /// The resolved service id.
        service_id: u64 = bits(12, 0, 64),
        /// The service's Q_Key.
        qkey: u32 = bits(20, 0, 32),
        /// Additional information (redirect, unsupported versions).
        additional_info: [u8; 72] = bytes(24, 72),
        /// Private data.
        private_data: [u8; 136] = bytes(96, 136),
    }
}

impl SidrRep {
    /// The 24-bit vendor id (ECE).
    pub const fn vendor_id(&self) -> u32 {
        (self.vendor_id_high as u32) << 8 | self.vendor_id_low as u32
    }

    /// Sets the vendor id; bits above 24 are dropped.
    pub fn set_vendor_id(&mut self, vendor_id: u32) {
        self.vendor_id_high = (vendor_id >> 8) as u16;
        self.vendor_id_low = vendor_id as u8;
    }
}
