// SPDX-License-Identifier: GPL-2.0

//! Layer 2, the ABI surfaces: the C symbols consumers link against. Only
//! these files take raw consumer pointers; each `extern "C"` entry point
//! turns them into safe types, calls the shell, and maps errors to the
//! errno of the C implementation it replaces. Surfaces do not import each
//! other (rdma_cm's ucma will import rdma_cm, as ucma.c calls rdma_cm).
//! `scripts/check-layers.py` checks the rules.

pub(crate) mod ib_cm;
