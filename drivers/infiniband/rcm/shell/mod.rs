// SPDX-License-Identifier: GPL-2.0

//! Layer 2, the kernel shell: runs the protocol core in the kernel. It
//! feeds the core's endpoint with the MADs of a CM agent per port, with
//! time from a timer and with the ABI surfaces' calls, posts the MADs it
//! produces and hands its events to an [`EventConsumer`].
//!
//! Rules (checked by `scripts/check-layers.py`): the shell uses only the
//! core (`crate::proto`) and the safe abstractions of `rust/rdma`; it has
//! no `unsafe` and does not touch the raw bindings; it calls up into the
//! ABI surfaces only through the traits it defines here.

pub(crate) mod intake;
pub(crate) mod kernel_maps;
pub(crate) mod lazy_vec;
pub(crate) mod lock_meter;
pub(crate) mod outbox;
pub(crate) mod peer;
pub(crate) mod rdma_cm;
pub(crate) mod service;
pub(crate) mod trace;

pub(crate) use outbox::{EventBatch, Outbox};
pub(crate) use peer::Peer;
pub(crate) use service::{CmService, EventConsumer, KernelEndpoint, QpReport};
