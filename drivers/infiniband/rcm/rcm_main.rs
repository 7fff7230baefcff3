// SPDX-License-Identifier: GPL-2.0

//! rcm: an RDMA connection manager written in Rust.
//!
//! It is to replace the kernel's ib_cm, rdma_cm and rdma_ucm as one module;
//! today it provides ib_cm (the in-tree rdma_cm and rdma_ucm load on it). This
//! crate root holds the `module!` declaration and wires the pieces together;
//! the raw bindings and ib_core abstractions live in the repository's
//! `rust/` directory and are compiled in through `#[path]` modules.

use kernel::{c_str, prelude::*};

#[path = "../../../rust/bindings/mod.rs"]
mod bindings;
#[path = "../../../rust/rdma/mod.rs"]
mod rdma;

mod cm_event_params;
mod cm_ids;
mod cm_service;
mod device_client;
mod ib_cm_connect;
mod ib_cm_exports;
mod ib_cm_lap;
mod ib_cm_qp;
mod ib_cm_types;
mod kernel_maps;
mod outbox;
mod peer;

/// The sans-IO protocol core: the very files `cargo test` checks on the host
/// (`core/src/`, crate `rcm-core`). Its items are `pub` because it is a
/// library there; keep this list in step with `core/src/lib.rs`.
#[path = "core/src"]
#[allow(unreachable_pub)]
// The core is a library: not all of it is used by the module (yet).
#[allow(dead_code, unused_imports)]
pub(crate) mod proto {
    pub mod cm;
    pub mod reason;
    pub mod timer;
    pub mod wire;
}
// The core names its modules from its crate root (`crate::timer`,
// `$crate::wire`); these make the same paths resolve inside rcm.ko.
use proto::{reason, timer, wire};

module! {
    type: RcmModule,
    name: "rcm",
    author: "rcm developers",
    description: "RDMA connection manager in Rust (ib_cm today; rdma_cm and rdma_ucm to come)",
    license: "GPL",
}

/// Fields drop in order: the client first (its removal of every device
/// unregisters the MAD agents), then the service.
struct RcmModule {
    _client: rdma::client::Registration<device_client::RcmClient>,
    _service: cm_service::ServiceHandle,
}

impl kernel::Module for RcmModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let service = cm_service::ServiceHandle::new()?;
        let client = rdma::client::Registration::new(c_str!("rcm"))?;
        pr_info!("rcm: loaded\n");
        Ok(Self {
            _client: client,
            _service: service,
        })
    }
}

impl Drop for RcmModule {
    fn drop(&mut self) {
        pr_info!("rcm: unloading\n");
    }
}
