// SPDX-License-Identifier: GPL-2.0

//! `wire_struct!`: declares a wire layout once, as a table, and derives
//! from it the representation struct, its reader and its writer.
//!
//! ```text
//! wire_struct! {
//!     /// doc
//!     pub struct Name at BASE {            // absolute offset of the block
//!         field: Type = bits(byte, bit, width),   // Byte[Bit] from the MSB
//!         data: [u8; N] = bytes(byte, N),
//!         path: Block = block(byte),      // a nested generic block
//!     }
//! }
//! ```
//!
//! `at <literal>` makes a fixed block (a message body at offset 24); `at
//! generic` makes a block read at any offset given as a const parameter
//! (the REQ's primary and alternate paths). Offsets inside the table are
//! relative to the block. Every descriptor is built in a `const` context,
//! so a field outside the 256-byte MAD or wider than its type fails the
//! build, and the reader and writer cannot index out of bounds.

macro_rules! wire_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident at generic {
            $($(#[$fmeta:meta])* $field:ident : $ty:ty = $kind:ident ( $($loc:expr),* ),)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
        }

        impl $name {
            /// The block with every field zero (what zero bytes read as).
            pub fn zeroed() -> Self {
                Self { $($field: wire_struct!(@zero $ty, $kind($($loc),*)),)* }
            }

            /// Reads the block found at absolute MAD offset `BASE`.
            pub fn read<const BASE: usize>(mad: &$crate::wire::field::Mad) -> Self {
                Self { $($field: wire_struct!(@read mad, BASE, $ty, $kind($($loc),*)),)* }
            }

            /// Writes the block at absolute MAD offset `BASE`.
            pub fn write<const BASE: usize>(&self, mad: &mut $crate::wire::field::Mad) {
                $(wire_struct!(@write mad, BASE, self.$field, $ty, $kind($($loc),*));)*
            }
        }
    };
    (
        $(#[$meta:meta])*
        pub struct $name:ident at $base:literal {
            $($(#[$fmeta:meta])* $field:ident : $ty:ty = $kind:ident ( $($loc:expr),* ),)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
        }

        impl $name {
            /// The message with every field zero (what a zeroed body reads
            /// as), made field by field: reading a zero MAD cost a REQ's
            /// sender as much as reading a received one.
            pub fn zeroed() -> Self {
                Self { $($field: wire_struct!(@zero $ty, $kind($($loc),*)),)* }
            }

            /// Reads the fields from a MAD (header already validated).
            pub fn read(mad: &$crate::wire::field::Mad) -> Self {
                Self { $($field: wire_struct!(@read mad, $base, $ty, $kind($($loc),*)),)* }
            }

            /// Writes the fields into a MAD whose body is zeroed, so that
            /// reserved bits go out as zero.
            pub fn write(&self, mad: &mut $crate::wire::field::Mad) {
                $(wire_struct!(@write mad, $base, self.$field, $ty, $kind($($loc),*));)*
            }
        }
    };

    (@zero $ty:ty, bits($byte:expr, $bit:expr, $width:expr)) => {
        <$ty as $crate::wire::value::WireValue>::from_raw(0)
    };
    (@zero $ty:ty, bytes($byte:expr, $len:expr)) => {
        [0u8; $len]
    };
    (@zero $ty:ty, block($byte:expr)) => {
        <$ty>::zeroed()
    };

    (@read $mad:ident, $base:expr, $ty:ty, bits($byte:expr, $bit:expr, $width:expr)) => {{
        let f = const {
            let f = $crate::wire::field::Field::new($base + $byte, $bit, $width);
            assert!(f.bits() <= <$ty as $crate::wire::value::WireValue>::BITS);
            f
        };
        <$ty as $crate::wire::value::WireValue>::from_raw(f.get($mad))
    }};
    (@read $mad:ident, $base:expr, $ty:ty, bytes($byte:expr, $len:expr)) => {{
        let mut out = [0u8; $len];
        const { $crate::wire::field::Bytes::new($base + $byte, $len) }.read_into($mad, &mut out);
        out
    }};
    (@read $mad:ident, $base:expr, $ty:ty, block($byte:expr)) => {
        <$ty>::read::<{ $base + $byte }>($mad)
    };

    (@write $mad:ident, $base:expr, $value:expr, $ty:ty, bits($byte:expr, $bit:expr, $width:expr)) => {
        const { $crate::wire::field::Field::new($base + $byte, $bit, $width) }
            .set($mad, <$ty as $crate::wire::value::WireValue>::to_raw($value))
    };
    (@write $mad:ident, $base:expr, $value:expr, $ty:ty, bytes($byte:expr, $len:expr)) => {
        const { $crate::wire::field::Bytes::new($base + $byte, $len) }.set($mad, &$value)
    };
    (@write $mad:ident, $base:expr, $value:expr, $ty:ty, block($byte:expr)) => {
        $value.write::<{ $base + $byte }>($mad)
    };
}
