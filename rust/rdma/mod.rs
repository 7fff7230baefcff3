// SPDX-License-Identifier: GPL-2.0

//! Layer 1, safe abstractions over ib_core for rcm.
//!
//! Everything that touches the raw bindings lives below this module, with a
//! `// SAFETY:` argument for each unsafe operation. Driver code above it uses
//! only the safe types exported here.

pub(crate) mod client;
pub(crate) mod cm_event;
pub(crate) mod cm_id;
pub(crate) mod counters;
pub(crate) mod device;
pub(crate) mod gid;
pub(crate) mod id_route;
pub(crate) mod iw_cm;
pub(crate) mod mad;
pub(crate) mod mad_ah;
pub(crate) mod mad_path;
pub(crate) mod module_file;
pub(crate) mod multicast;
pub(crate) mod netdev;
pub(crate) mod netwatch;
pub(crate) mod path;
pub(crate) mod qp;
pub(crate) mod rdma_event;
pub(crate) mod resolution;
pub(crate) mod restrack;
pub(crate) mod sa;
pub(crate) mod sockaddr;
pub(crate) mod sync;
pub(crate) mod timer;
pub(crate) mod trace;
pub(crate) mod ucma_dev;
pub(crate) mod user_route;
