// SPDX-License-Identifier: GPL-2.0

//! Errors of the CM API (each ABI surface maps them to its errnos).

/// Why a CM API call was refused. Nothing changed when one is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmError {
    /// The call is not valid in the id's current state.
    InvalidState,
    /// An argument is out of range.
    InvalidArgument,
    /// No such id, or it was destroyed.
    NoSuchId,
    /// Another id listens on that service id.
    Busy,
    /// The connection is already established.
    AlreadyConnected,
    /// The embedding environment ran out of memory.
    NoMemory,
    /// Every local communication id is in use.
    NoSpace,
}

impl core::fmt::Display for CmError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            CmError::InvalidState => "not valid in the current state",
            CmError::InvalidArgument => "invalid argument",
            CmError::NoSuchId => "no such communication id",
            CmError::Busy => "service id already in use",
            CmError::AlreadyConnected => "already connected",
            CmError::NoMemory => "out of memory",
            CmError::NoSpace => "no free communication id",
        })
    }
}
