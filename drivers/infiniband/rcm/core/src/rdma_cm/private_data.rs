// SPDX-License-Identifier: GPL-2.0

//! Private data as rdma_cm's callers pass it (`rdma_conn_param`,
//! `rdma_reject`, the ucma commands): a length in one byte, so at most
//! 255 bytes, kept by value where a call outlives the caller's buffer.

/// The most private data a caller can pass (its length is a `u8`).
const CAPACITY: usize = u8::MAX as usize;

/// Up to 255 bytes of private data, by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrivateData {
    bytes: [u8; CAPACITY],
    len: u8,
}

impl Default for PrivateData {
    /// No private data.
    fn default() -> Self {
        PrivateData {
            bytes: [0; CAPACITY],
            len: 0,
        }
    }
}

impl PrivateData {
    /// Private data holding `data` (`None` if longer than 255 bytes).
    pub fn new(data: &[u8]) -> Option<Self> {
        let len = u8::try_from(data.len()).ok()?;
        let mut bytes = [0u8; CAPACITY];
        bytes.get_mut(..data.len())?.copy_from_slice(data);
        Some(PrivateData { bytes, len })
    }

    /// Private data read from a buffer of a caller's struct: the first
    /// `len` bytes of `bytes`.
    pub(crate) fn from_buffer(bytes: [u8; CAPACITY], len: u8) -> Self {
        PrivateData { bytes, len }
    }

    /// The bytes held.
    pub fn as_slice(&self) -> &[u8] {
        // A u8 length always lies inside the buffer.
        self.bytes.get(..usize::from(self.len)).unwrap_or(&[])
    }
}
