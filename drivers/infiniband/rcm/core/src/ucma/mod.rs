// SPDX-License-Identifier: GPL-2.0

//! The rdma_ucm character device's ABI (version 4, what librdmacm speaks
//! through `/dev/infiniband/rdma_cm`): the command frame, each command's
//! input parsed from the bytes userspace wrote, with the checks 6.12's
//! ucma.c makes before it looks an id up, and the errors it gives.
//!
//! Userspace structs are in the host's byte order (the kernel and
//! librdmacm share one machine); addresses inside them keep network order.
//! Nothing here trusts a length: every read is bounds-checked, and a body
//! shorter than its struct is an error, never a panic.

pub mod command;
pub mod contexts;
pub mod event;
mod event_queue;
pub mod frame;
pub mod layout;
pub mod option;
pub mod query;
pub mod queues;
pub mod table;

pub use command::{Command, ConnParam, Ece, JoinMode, PrivateData, UserAddr};
pub use frame::{Header, Opcode};
pub use option::{IdOption, SetOption};
pub use table::{Both, CtxId, FileId, McId, UcmaContexts, UcmaQueues, UcmaTable};

/// The ABI version the device reports (`abi_version` in sysfs and the
/// netlink chardev answer).
pub const ABI_VERSION: u32 = 4;

/// Why a command was refused; the character device maps each to the errno
/// the in-tree module returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UcmaError {
    /// A malformed frame or argument (`-EINVAL`).
    Invalid,
    /// The response buffer is too small (`-ENOSPC`).
    NoSpace,
    /// A command, query or option the ABI does not implement (`-ENOSYS`).
    NotImplemented,
    /// No such context or membership (`-ENOENT`).
    NoEntry,
    /// The context is closing after its device went away (`-ENXIO`).
    Gone,
    /// Out of memory (`-ENOMEM`).
    NoMemory,
}
