// SPDX-License-Identifier: GPL-2.0

//! The RDMA connection manager (rdma_cm) on top of the CM: ids named by
//! IP (or AF_IB) addresses and ports in per-namespace port spaces. Built
//! here piece by piece; the kernel's `rdma_cm.ko` still provides the
//! layer today (CM mode `hybrid`).

pub mod port_space;

pub use port_space::PortSpace;
