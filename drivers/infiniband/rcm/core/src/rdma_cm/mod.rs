// SPDX-License-Identifier: GPL-2.0

//! The RDMA connection manager (rdma_cm) on top of the CM: ids named by
//! IP (or AF_IB) addresses and ports in per-namespace port spaces. Built
//! here piece by piece; the kernel's `rdma_cm.ko` still provides the
//! layer today (CM mode `hybrid`).

pub mod addr;
pub mod bind;
pub mod endpoint;
pub mod port_space;
pub mod resolve;
pub mod state;

pub use addr::{Family, SockAddr};
pub use bind::{BindError, BindRequest, PortKey, PortTable};
pub use endpoint::{BindContext, RdmaCm, RdmaCmError, RdmaId};
pub use port_space::PortSpace;
pub use resolve::{AddrEvent, AddrResolution, AddrWork};
pub use state::IdState;
