// SPDX-License-Identifier: GPL-2.0

//! Layer 3, the ABI surfaces: the C symbols consumers link against. Only
//! these files take raw consumer pointers; each `extern "C"` entry point
//! turns them into safe types, calls the shell, and maps errors to the
//! errno of the C implementation it replaces. Surfaces import each other
//! only as the C modules do (rdma_cm uses ib_cm; ucma uses rdma_cm);
//! `service` is the CM service they share.
//! `scripts/check-layers.py` checks the rules.

pub(crate) mod ib_cm;
pub(crate) mod id_registry;
pub(crate) mod rdma_cm;
pub(crate) mod service;
pub(crate) mod ucma;
