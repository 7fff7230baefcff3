// SPDX-License-Identifier: GPL-2.0

//! rcm's protocol core: everything about the InfiniBand connection manager
//! that does not touch the kernel. It is `no_std` with only `core`, does no
//! I/O, reads no clock and allocates nothing, so it builds and is tested on
//! the host with cargo, and the same files are compiled into rcm.ko (see
//! the `proto` module of `rcm_main.rs`, which must list the same modules).

#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cm;
pub mod rdma_cm;
pub mod reason;
pub mod timer;
pub mod ucma;
pub mod wire;

#[cfg(feature = "std")]
pub mod sim;
