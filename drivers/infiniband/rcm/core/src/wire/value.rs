// SPDX-License-Identifier: GPL-2.0

//! Conversion between a field's raw bits and its Rust type.

use crate::reason::{AprStatus, RejectReason, SidrStatus};
use crate::timer::IbaTime;

/// A type a wire field can hold. `BITS` is the widest field it may be
/// declared for (checked at compile time by `wire_struct!`), so `from_raw`
/// never loses bits of a field read from the wire.
pub trait WireValue: Copy {
    /// The widest field this type can represent.
    const BITS: u32;
    /// From a field's raw bits (at most `BITS` wide).
    fn from_raw(raw: u64) -> Self;
    /// To raw bits; the field setter drops what does not fit the field.
    fn to_raw(self) -> u64;
}

macro_rules! unsigned_wire_value {
    ($($t:ty),*) => {$(
        impl WireValue for $t {
            const BITS: u32 = <$t>::BITS;
            fn from_raw(raw: u64) -> Self {
                raw as $t
            }
            fn to_raw(self) -> u64 {
                u64::from(self)
            }
        }
    )*};
}
unsigned_wire_value!(u8, u16, u32, u64);

impl WireValue for bool {
    const BITS: u32 = 1;
    fn from_raw(raw: u64) -> Self {
        raw != 0
    }
    fn to_raw(self) -> u64 {
        u64::from(self)
    }
}

impl WireValue for IbaTime {
    const BITS: u32 = 5;
    fn from_raw(raw: u64) -> Self {
        IbaTime::new(raw as u8)
    }
    fn to_raw(self) -> u64 {
        u64::from(self.exponent())
    }
}

impl WireValue for RejectReason {
    const BITS: u32 = 16;
    fn from_raw(raw: u64) -> Self {
        RejectReason::from_wire(raw as u16)
    }
    fn to_raw(self) -> u64 {
        u64::from(self.to_wire())
    }
}

impl WireValue for AprStatus {
    const BITS: u32 = 8;
    fn from_raw(raw: u64) -> Self {
        AprStatus::from_wire(raw as u8)
    }
    fn to_raw(self) -> u64 {
        u64::from(self.to_wire())
    }
}

impl WireValue for SidrStatus {
    const BITS: u32 = 8;
    fn from_raw(raw: u64) -> Self {
        SidrStatus::from_wire(raw as u8)
    }
    fn to_raw(self) -> u64 {
        u64::from(self.to_wire())
    }
}
