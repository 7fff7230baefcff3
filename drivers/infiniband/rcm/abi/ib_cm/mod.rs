// SPDX-License-Identifier: GPL-2.0

//! The ib_cm ABI (`include/rdma/ib_cm.h`, Linux 6.12): consumer ids, the
//! 16 exports and rcm's LAP/APR, and the delivery of events to consumers'
//! handlers. `rcm_exports.c` exports the symbols; `rust/rdma/cm_event.rs`
//! builds the C event structures.

mod connect;
mod delivery;
mod event_params;
mod exports;
mod ffi;
mod id;
mod lap;
mod path;
pub(crate) mod qp;
pub(crate) mod types;

use crate::abi::id_registry::IdRegistry;
use core::sync::atomic::{AtomicU32, AtomicUsize};
use id::CmIdBox;
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::sync::Mutex;

/// What the ib_cm surface keeps: its consumers' ids and which of them is
/// in a handler.
#[pin_data]
pub(crate) struct IbCm {
    /// Consumer ids (`struct ib_cm_id` boxes) by comm id: the consumer's
    /// reference, until it destroys the id.
    #[pin]
    ids: Mutex<IdRegistry<CmIdBox>>,
    /// The ids whose handler runs right now (0: none): the id, and the
    /// listener of a new id. `ib_destroy_cm_id` waits for those callbacks.
    delivering: [AtomicU32; 2],
    /// The task delivering (0: none), to tell a destroy from inside a
    /// handler.
    worker: AtomicUsize,
}

impl IbCm {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(IbCm {
            ids <- new_mutex!(IdRegistry::new(), "rcm::ib_cm_ids"),
            delivering: [AtomicU32::new(0), AtomicU32::new(0)],
            worker: AtomicUsize::new(0),
        })
    }
}
