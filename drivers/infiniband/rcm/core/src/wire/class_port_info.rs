// SPDX-License-Identifier: GPL-2.0

//! ClassPortInfo (IBTA 13.4.8.1) as carried by the CM class.

use crate::timer::IbaTime;

wire_struct! {
    /// ClassPortInfo: the class's capabilities and redirection info.
    pub struct ClassPortInfo at 24 {
        /// MAD base version supported.
        base_version: u8 = bits(0, 0, 8),
        /// Highest class version supported.
        class_version: u8 = bits(1, 0, 8),
        /// Capability mask.
        capability_mask: u16 = bits(2, 0, 16),
        /// Capability mask 2 (27 bits).
        capability_mask2: u32 = bits(4, 0, 27),
        /// Expected response time.
        resp_time_value: IbaTime = bits(7, 3, 5),
        /// Redirect GID.
        redirect_gid: [u8; 16] = bytes(8, 16),
        /// Redirect traffic class.
        redirect_tc: u8 = bits(24, 0, 8),
        /// Redirect service level (4 bits).
        redirect_sl: u8 = bits(25, 0, 4),
        /// Redirect flow label (20 bits).
        redirect_fl: u32 = bits(25, 4, 20),
        /// Redirect LID.
        redirect_lid: u16 = bits(28, 0, 16),
        /// Redirect partition key.
        redirect_pkey: u16 = bits(30, 0, 16),
        /// Redirect QP (24 bits).
        redirect_qp: u32 = bits(33, 0, 24),
        /// Redirect Q_Key.
        redirect_qkey: u32 = bits(36, 0, 32),
        /// Trap GID.
        trap_gid: [u8; 16] = bytes(40, 16),
        /// Trap traffic class.
        trap_tc: u8 = bits(56, 0, 8),
        /// Trap service level (4 bits).
        trap_sl: u8 = bits(57, 0, 4),
        /// Trap flow label (20 bits).
        trap_fl: u32 = bits(57, 4, 20),
        /// Trap LID.
        trap_lid: u16 = bits(60, 0, 16),
        /// Trap partition key.
        trap_pkey: u16 = bits(62, 0, 16),
        /// Trap hop limit.
        trap_hl: u8 = bits(64, 0, 8),
        /// Trap QP (24 bits).
        trap_qp: u32 = bits(65, 0, 24),
        /// Trap Q_Key.
        trap_qkey: u32 = bits(68, 0, 32),
    }
}
