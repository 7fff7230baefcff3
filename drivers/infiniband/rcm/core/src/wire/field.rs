// SPDX-License-Identifier: GPL-2.0

//! Field descriptors for MADs, in the notation of the IBTA tables.
//!
//! A [`Field`] is `Byte[Bit]` + width as the spec writes it: the byte
//! offset, the bit offset counted from the most significant bit of that
//! byte, and the width in bits (1..=64). Fields are big-endian and
//! contiguous, so one accessor serves every field, whatever its alignment
//! (24-bit QPNs, 5-bit timeouts, 64-bit ids at 4-byte alignment).
//! A [`Bytes`] is a byte-aligned run (GIDs, private data, ARI).
//!
//! All accessors work on a [`Mad`] buffer, a fixed 256-byte array, and every
//! descriptor is checked at compile time to lie inside it, so no accessor
//! can index out of bounds whatever the buffer holds.

/// Size of every MAD on the wire.
pub const MAD_SIZE: usize = 256;

/// One MAD: header and body.
pub type Mad = [u8; MAD_SIZE];

/// A bit field of up to 64 bits, big-endian, `Byte[Bit]` from the MSB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    byte: usize,
    bit: u32,
    bits: u32,
    /// Number of whole bytes the field touches.
    span: usize,
}

impl Field {
    /// A field at absolute MAD offset `byte`, starting `bit` bits below the
    /// byte's MSB, `bits` wide. Panics at compile time if it does not fit.
    pub const fn new(byte: usize, bit: u32, bits: u32) -> Self {
        assert!(bit < 8 && bits >= 1 && bits <= 64);
        let span = (bit as usize + bits as usize).div_ceil(8);
        assert!(span <= 8 && byte + span <= MAD_SIZE);
        Field {
            byte,
            bit,
            bits,
            span,
        }
    }

    /// Width in bits.
    pub const fn bits(self) -> u32 {
        self.bits
    }

    /// Largest value the field holds.
    pub const fn max(self) -> u64 {
        if self.bits == 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        }
    }

    /// How far the field's LSB sits above the LSB of its last byte.
    const fn shift(self) -> u32 {
        (self.span * 8) as u32 - self.bit - self.bits
    }

    /// Reads the field. Inlined: every descriptor is a constant, so a
    /// read folds into a load, a byte swap and a mask where it is made
    /// (an out-of-line call per field was a tenth of the CM's own time
    /// per connection in the kernel's profile).
    #[inline(always)]
    pub fn get(self, mad: &Mad) -> u64 {
        let mut window = 0u64;
        for &b in mad.iter().skip(self.byte).take(self.span) {
            window = (window << 8) | u64::from(b);
        }
        (window >> self.shift()) & self.max()
    }

    /// Writes the field; bits of `value` above its width are dropped, the
    /// neighbouring bits of shared bytes are kept. Inlined as [`Self::get`].
    #[inline(always)]
    pub fn set(self, mad: &mut Mad, value: u64) {
        let shift = self.shift();
        let mask = self.max() << shift;
        let value = (value & self.max()) << shift;
        for (i, b) in mad.iter_mut().skip(self.byte).take(self.span).enumerate() {
            let at = (self.span - 1 - i) * 8;
            let byte_mask = (mask >> at) as u8;
            *b = (*b & !byte_mask) | ((value >> at) as u8 & byte_mask);
        }
    }
}

/// A run of whole bytes at an absolute MAD offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bytes {
    offset: usize,
    len: usize,
}

impl Bytes {
    /// `len` bytes at `offset`; panics at compile time if outside a MAD.
    pub const fn new(offset: usize, len: usize) -> Self {
        assert!(offset + len <= MAD_SIZE);
        Bytes { offset, len }
    }

    /// Length in bytes.
    pub const fn len(self) -> usize {
        self.len
    }

    /// Whether the run is empty.
    pub const fn is_empty(self) -> bool {
        self.len == 0
    }

    /// The bytes (in bounds by construction).
    #[inline]
    pub fn get(self, mad: &Mad) -> &[u8] {
        let (_, tail) = mad.split_at(self.offset);
        let (run, _) = tail.split_at(self.len);
        run
    }

    /// Copies the run into `out`, which must be exactly as long.
    #[inline]
    pub fn read_into<const N: usize>(self, mad: &Mad, out: &mut [u8; N]) {
        debug_assert_eq!(N, self.len);
        // One copy, not a loop per byte: a MAD's GIDs and private data
        // are most of its bytes.
        if let Ok(run) = <&[u8; N]>::try_from(self.get(mad)) {
            *out = *run;
        }
    }

    /// Overwrites the run with `data`; a shorter `data` leaves the rest
    /// zero, a longer one is cut at the run's length.
    #[inline]
    pub fn set(self, mad: &mut Mad, data: &[u8]) {
        let (_, tail) = mad.split_at_mut(self.offset);
        let (run, _) = tail.split_at_mut(self.len);
        let (copied, rest) = run.split_at_mut(data.len().min(self.len));
        if let Some(data) = data.get(..copied.len()) {
            copied.copy_from_slice(data);
        }
        rest.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_bit_notation() {
        let mut mad = [0u8; MAD_SIZE];
        mad[10] = 0b1010_1100;
        // 5 bits from the MSB, then 2, then 1 (like REQ byte 43).
        assert_eq!(Field::new(10, 0, 5).get(&mad), 0b10101);
        assert_eq!(Field::new(10, 5, 2).get(&mad), 0b10);
        assert_eq!(Field::new(10, 7, 1).get(&mad), 0);
    }

    #[test]
    fn multi_byte_fields() {
        let mut mad = [0u8; MAD_SIZE];
        mad[32..36].copy_from_slice(&[0x12, 0x34, 0x56, 0x78]);
        // 24-bit QPN followed by an 8-bit field
        assert_eq!(Field::new(32, 0, 24).get(&mad), 0x123456);
        assert_eq!(Field::new(35, 0, 8).get(&mad), 0x78);
        // 24 bits starting at an odd byte
        assert_eq!(Field::new(33, 0, 24).get(&mad), 0x345678);
        // 20-bit flow label
        assert_eq!(Field::new(32, 0, 20).get(&mad), 0x12345);
        // 64 bits at 4-byte alignment
        mad[36..40].copy_from_slice(&[0x9a, 0xbc, 0xde, 0xf0]);
        assert_eq!(Field::new(32, 0, 64).get(&mad), 0x1234_5678_9abc_def0);
    }

    #[test]
    fn set_keeps_neighbours_and_truncates() {
        let mut mad = [0xffu8; MAD_SIZE];
        Field::new(10, 5, 2).set(&mut mad, 0);
        assert_eq!(mad[10], 0b1111_1001);
        Field::new(10, 5, 2).set(&mut mad, 0xff);
        assert_eq!(mad[10], 0xff);
        let mut mad = [0u8; MAD_SIZE];
        Field::new(32, 0, 24).set(&mut mad, 0xff12_3456);
        assert_eq!(&mad[31..37], &[0, 0x12, 0x34, 0x56, 0, 0]);
        Field::new(50, 4, 12).set(&mut mad, 0xabc);
        assert_eq!(&mad[50..52], &[0x0a, 0xbc]);
        Field::new(0, 0, 64).set(&mut mad, u64::MAX);
        assert_eq!(
            &mad[0..9],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0]
        );
    }

    #[test]
    fn every_width_and_offset_round_trips() {
        for bit in 0..8 {
            for bits in 1..=(64 - bit) {
                let f = Field::new(100, bit, bits);
                for v in [
                    0u64,
                    1,
                    f.max(),
                    f.max() / 3,
                    0x5555_5555_5555_5555 & f.max(),
                ] {
                    let mut mad = [0xa5u8; MAD_SIZE];
                    f.set(&mut mad, v);
                    assert_eq!(f.get(&mad), v, "bit {bit} bits {bits}");
                    // bytes outside the field untouched
                    assert_eq!(mad[99], 0xa5);
                    assert_eq!(mad[100 + f.span], 0xa5);
                }
            }
        }
    }

    #[test]
    fn byte_runs() {
        let mut mad = [0u8; MAD_SIZE];
        let pd = Bytes::new(240, 16);
        pd.set(&mut mad, &[1, 2, 3]);
        assert_eq!(
            pd.get(&mad),
            &[1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        );
        pd.set(&mut mad, &[7u8; 40]);
        assert_eq!(pd.get(&mad), &[7u8; 16]);
        assert_eq!(mad[239], 0);
        let mut out = [0u8; 16];
        pd.read_into(&mad, &mut out);
        assert_eq!(out, [7u8; 16]);
        // A shorter run over a longer one zeroes what it does not cover.
        pd.set(&mut mad, &[9]);
        assert_eq!(
            pd.get(&mad),
            &[9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        );
    }
}
