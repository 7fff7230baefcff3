// SPDX-License-Identifier: GPL-2.0

//! Errors of the CM API, with the errno the C ib_cm returns for each.

/// Why a CM API call was refused. Nothing changed when one is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmError {
    /// The call is not valid in the id's current state (`-EINVAL`).
    InvalidState,
    /// An argument is out of range (`-EINVAL`).
    InvalidArgument,
    /// No such id, or it was destroyed (`-EINVAL`).
    NoSuchId,
    /// Another id listens on that service id (`-EBUSY`).
    Busy,
    /// The connection is already established (`-EISCONN`).
    AlreadyConnected,
    /// The embedding environment ran out of memory (`-ENOMEM`).
    NoMemory,
    /// Every local communication id is in use (`-ENOSPC`).
    NoSpace,
}

impl CmError {
    /// The negative errno the kernel's ib_cm returns for this case.
    pub const fn errno(self) -> i32 {
        const EINVAL: i32 = 22;
        const EBUSY: i32 = 16;
        const EISCONN: i32 = 106;
        const ENOMEM: i32 = 12;
        const ENOSPC: i32 = 28;
        -match self {
            CmError::InvalidState | CmError::InvalidArgument | CmError::NoSuchId => EINVAL,
            CmError::Busy => EBUSY,
            CmError::AlreadyConnected => EISCONN,
            CmError::NoMemory => ENOMEM,
            CmError::NoSpace => ENOSPC,
        }
    }
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
