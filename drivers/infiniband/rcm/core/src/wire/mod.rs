// SPDX-License-Identifier: GPL-2.0

//! CM MAD wire formats (IBTA Vol 1 ch. 12), each field declared once in a
//! layout table (`wire_struct!`), one message family per file.

#[macro_use]
mod layout;

pub mod class_port_info;
pub mod cma_hdr;
pub mod disconnect;
pub mod field;
pub mod grh;
pub mod lap;
pub mod mad;
pub mod message;
pub mod mra;
pub mod rep;
pub mod req;
pub mod sidr;
pub mod value;

pub use message::{attr_name, CmMad, CmMessage, MadSummary, ParseError};
