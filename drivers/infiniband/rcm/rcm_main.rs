// SPDX-License-Identifier: GPL-2.0

//! rcm: an RDMA connection manager written in Rust.
//!
//! It replaces the kernel's ib_cm, rdma_cm and rdma_ucm as one module: it
//! exports ib_cm's and rdma_cm's symbols (the in-tree rdma_ucm can load on
//! them) and, with `rcm.ucma=1`, provides `/dev/infiniband/rdma_cm` itself.
//! This crate root holds the `module!` declaration and composes the layers;
//! the raw bindings and ib_core abstractions live in the repository's
//! `rust/` directory and are compiled in through `#[path]` modules.
//!
//! Layers, each using only those below it (`scripts/check-layers.py`
//! checks it in `make test`):
//!
//! 0. `proto`: the sans-IO protocol core (`core/`, crate `rcm-core`), with
//!    no kernel dependency and no unsafe.
//! 1. `rdma` (`rust/rdma/`): safe abstractions over ib_core, the only
//!    place besides the ABI surfaces with unsafe code and raw bindings.
//! 2. `shell`: runs the core in the kernel; no raw bindings; calls up only
//!    through the traits it defines.
//! 3. `abi`: the C symbols consumers link against (ib_cm, rdma_cm) and
//!    the rdma_ucm device's commands; the only code that takes raw
//!    consumer pointers, mapping errors to errno.

// `CmService`'s pin initializer expands deeper than the default limit.
#![recursion_limit = "256"]

use abi::ib_cm::IbCm;
use abi::rdma_cm::RdmaCmAbi;
use abi::ucma::UcmaAbi;
use core::any::{Any, TypeId};
use kernel::sync::Arc;
use kernel::{c_str, prelude::*};
use proto::cm::{CommId, Event, Owner};
use rdma::client::{ClientOps, Registration};
use rdma::device::Device;
use rdma::module_file::{FileHandler, ModuleFile};
use rdma::netwatch::NetWatch;
use rdma::sa::SaClient;
use rdma::ucma_dev::UcmaDevice;
use shell::lazy_vec::LazyVec;
use shell::lock_meter::{metering, set_metering, LockMeter};

#[path = "../../../rust/bindings/mod.rs"]
mod bindings;
#[path = "../../../rust/rdma/mod.rs"]
mod rdma;

mod abi;
mod shell;

/// The sans-IO protocol core: the very files `cargo test` checks on the host
/// (`core/src/`, crate `rcm-core`). Its items are `pub` because it is a
/// library there; keep this list in step with `core/src/lib.rs`.
#[path = "core/src"]
#[allow(unreachable_pub)]
// The core is a library: not all of it is used by the module (yet).
#[allow(dead_code, unused_imports)]
pub(crate) mod proto {
    pub mod cm;
    pub mod rdma_cm;
    pub mod reason;
    pub mod timer;
    pub mod ucma;
    pub mod wire;
}
// The core names its modules from its crate root (`crate::timer`,
// `$crate::wire`); these make the same paths resolve inside rcm.ko.
use proto::{cm, rdma_cm, reason, timer, wire};

module! {
    type: RcmModule,
    name: "rcm",
    author: "rcm developers",
    description: "RDMA connection manager in Rust (ib_cm, rdma_cm and rdma_ucm)",
    license: "GPL",
}

/// The consumer of the CM service: the ABI surfaces built on it. Its
/// events go to the surface that owns each id (rdma_cm's connections and
/// listeners, or an ib_cm consumer's id); rdma_cm's own events go out from
/// the same delivery, after the CM's.
#[pin_data]
struct Surfaces {
    #[pin]
    ib_cm: IbCm,
    #[pin]
    rdma_cm: RdmaCmAbi,
    /// The rdma_ucm device's files.
    #[pin]
    ucma: UcmaAbi,
}

impl shell::EventConsumer for Surfaces {
    fn deliver(&self, s: &shell::CmService, batch: shell::EventBatch) {
        // rdma_cm takes its own events at once, read in place, and ib_cm's
        // consumers theirs in order after, without rdma_cm's lock. A batch
        // rdma_cm took none of goes to ib_cm as it is (an ib_cm consumer's,
        // or one rdma_cm no longer knows); of a batch it took some of, the
        // events it did not take are copied out (their vector made on the
        // first) and the batch freed before ib_cm's handlers run.
        let mut took_any = false;
        let mut rest = LazyVec::new();
        for (index, entry) in batch.iter().enumerate() {
            let (comm, owner, event) = entry;
            if *owner == Owner::RdmaCm && self.rdma_cm.cm_event(s, *comm, event) {
                if !took_any {
                    // Those before it are ib_cm's, kept in order.
                    for earlier in &batch[..index] {
                        keep_for_ib_cm(&mut rest, earlier);
                    }
                    took_any = true;
                }
            } else if took_any {
                keep_for_ib_cm(&mut rest, entry);
            }
        }
        if !took_any {
            if !batch.is_empty() {
                self.ib_cm.deliver(s, batch);
            }
        } else {
            drop(batch);
            if let Some(rest) = rest.into_vec().filter(|v| !v.is_empty()) {
                self.ib_cm.deliver(s, rest);
            }
        }
    }

    fn deliver_pending(&self, s: &shell::CmService) {
        self.rdma_cm.deliver(s);
    }

    fn part(&self, which: TypeId) -> Option<&dyn Any> {
        if which == TypeId::of::<IbCm>() {
            Some(&self.ib_cm)
        } else if which == TypeId::of::<RdmaCmAbi>() {
            Some(&self.rdma_cm)
        } else if which == TypeId::of::<UcmaAbi>() {
            Some(&self.ucma)
        } else {
            None
        }
    }
}

/// Copies an event of a batch rdma_cm took some of for ib_cm's delivery.
fn keep_for_ib_cm(rest: &mut LazyVec<(CommId, Owner, Event)>, entry: &(CommId, Owner, Event)) {
    if rest.push(entry.clone(), GFP_KERNEL).is_err() {
        pr_warn!("out of memory: an ib_cm event not delivered\n");
    }
}

/// rcm's ib_client: the devices the CM serves come and go.
struct DeviceClient;

impl ClientOps for DeviceClient {
    fn add(device: &Device<'_>) -> Result {
        let ports = device.ports();
        let roce = ports.clone().filter(|&p| device.is_roce(p)).count();
        let cm = ports.clone().filter(|&p| device.has_ib_cm(p)).count();
        pr_info!(
            "device {} added: ports {}-{}, {} RoCE, {} with IB CM\n",
            device.name(),
            ports.start(),
            ports.end(),
            roce,
            cm
        );
        abi::service::with_service(|s| {
            shell::CmService::add_device(&s.into(), device)?;
            if let Some(rdma_cm) = s.part::<RdmaCmAbi>() {
                rdma_cm.add_device(&s, device);
            }
            Ok(())
        })
        .unwrap_or(Err(ENODEV))
    }

    fn remove(device: &Device<'_>) {
        abi::service::with_service(|s| {
            // rdma_cm's consumers let go of their ids on the device first;
            // then the CM's connections end.
            if let Some(rdma_cm) = s.part::<RdmaCmAbi>() {
                rdma_cm.remove_device(&s, device);
            }
            s.remove_device(device);
        });
        pr_info!("device {} removed\n", device.name());
    }
}

/// `/sys/module/rcm/lock_times`: the core's locks' wait and hold times.
/// Writing 1 starts recording from zero, 0 stops; reading shows one line
/// per lock.
struct LockTimes;

impl FileHandler for LockTimes {
    fn show(&self, out: &mut dyn core::fmt::Write) {
        let _ = writeln!(out, "metering: {}", if metering() { "on" } else { "off" });
        abi::service::with_service(|s| {
            for (name, meter) in lock_meters(&s) {
                let _ = writeln!(out, "{name}: {meter}");
            }
        });
    }

    fn store(&self, input: &[u8]) -> Result {
        let on = match input.trim_ascii() {
            b"1" => true,
            b"0" => false,
            _ => return Err(EINVAL),
        };
        abi::service::with_service(|s| set_metering(on, lock_meters(&s).map(|(_, m)| m)))
            .ok_or(ENODEV)
    }
}

/// The metered locks, by the name `lock_times` shows.
fn lock_meters(s: &shell::CmService) -> impl Iterator<Item = (&str, &LockMeter)> {
    let rdma_cm = s.part::<RdmaCmAbi>().map(|r| ("rdma_cm", r.lock_meter()));
    [rdma_cm, Some(("cm_endpoint", s.lock_meter()))]
        .into_iter()
        .flatten()
}

/// Fields drop in order: the rdma_ucm device first (no file operation
/// after it), the network watch (no change reaches rdma_cm after it), the
/// client (its removal of every device unregisters
/// the MAD agents), then the service, then the SA client (whose late query
/// callbacks find no service).
struct RcmModule {
    _lock_times: ModuleFile<LockTimes>,
    _ucma: Option<UcmaDevice<abi::ucma::file::UcmaFiles>>,
    _net: NetWatch<abi::rdma_cm::netevent::NetCallbacks>,
    _client: Registration<DeviceClient>,
    _service: abi::service::ServiceHandle,
    _sa: SaClient,
}

impl kernel::Module for RcmModule {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let sa = SaClient::register();
        let surfaces = Arc::pin_init(
            try_pin_init!(Surfaces {
                ib_cm <- IbCm::new(),
                rdma_cm <- RdmaCmAbi::new(),
                ucma <- UcmaAbi::new(),
            }? Error),
            GFP_KERNEL,
        )?;
        let service = abi::service::ServiceHandle::new(surfaces)?;
        let client = Registration::new(c_str!("rcm"))?;
        let net = NetWatch::start()?;
        let ucma = UcmaDevice::register()?;
        let lock_times = ModuleFile::new(module, c_str!("lock_times"), LockTimes)?;
        pr_info!("loaded\n");
        Ok(Self {
            _lock_times: lock_times,
            _ucma: ucma,
            _net: net,
            _client: client,
            _service: service,
            _sa: sa,
        })
    }
}

impl Drop for RcmModule {
    fn drop(&mut self) {
        pr_info!("unloading\n");
    }
}
