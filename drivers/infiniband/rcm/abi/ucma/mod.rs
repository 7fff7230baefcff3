// SPDX-License-Identifier: GPL-2.0

//! The rdma_ucm surface: `/dev/infiniband/rdma_cm` for librdmacm (ABI 4).
//! The core reads and checks each command (`proto::ucma`) and keeps the
//! files' contexts and event queues; this surface copies bytes from and to
//! userspace, runs the commands on rcm's rdma_cm as an in-module consumer
//! (its ids carry the handler of [`events::UcmaIdEvents`]), and maps
//! errors to the errno of the in-tree module.
//!
//! Locking: two locks, taken in this order when both are needed. The
//! contexts' (`contexts`) is what commands take to hold and let go of a
//! context; the queues' (`queues`) is what an event takes to be queued
//! and GET_EVENT to read one, so a command's hold and release never wait
//! for an event being queued (a CONNECT_REQUEST, which makes a context,
//! takes both; so do CREATE_ID, DESTROY_ID, the joins and MIGRATE_ID).
//! Both are taken inside an id's handler lock (events) and never
//! held across a call into rdma_cm that may wait for a handler (destroy,
//! leave), so teardown is two-step (see the table).
//!
//! The device is registered only with `rcm.ucma=1` (the in-tree rdma_ucm
//! registers the same name).

mod context;
mod control;
mod events;
pub(crate) mod file;
mod multicast;
mod query;

use crate::abi::rdma_cm::id::RdmaIdBox;
use crate::proto::cm::store::OrderedMap;
use crate::proto::ucma::table::Delivery;
use crate::proto::ucma::{Both, FileId, UcmaContexts, UcmaError, UcmaQueues};
use crate::rdma::ucma_dev::FileWaker;
use crate::shell::kernel_maps::{Accounted, KernelCollections, KernelMap};
use core::sync::atomic::AtomicU64;
use kernel::error::code;
use kernel::ffi::c_int;
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};

/// Contexts keep a reference to their rdma_cm id's box, which a command
/// holding the context clones: no lookup in rdma_cm's registry per
/// command. An id rdma_cm destroyed meanwhile shows as destroying.
type Contexts = UcmaContexts<KernelCollections<Accounted>, Arc<RdmaIdBox>>;

/// What the queues' lock covers.
struct Queues {
    queues: UcmaQueues<KernelCollections<Accounted>>,
    files: Files,
}

/// Every open file's waker, from open until release.
struct Files(KernelMap<u64, FileWaker>);

impl Files {
    /// Wakes the readers of a file that was given an event.
    fn wake(&self, delivery: Delivery) {
        if let Delivery::Queued(file) = delivery {
            self.wake_file(file);
        }
    }

    fn wake_file(&self, file: FileId) {
        if let Some(w) = self.0.get(&file.0) {
            w.wake();
        }
    }
}

/// Both halves of the table under their locks.
type BothHalves<'a> = Both<'a, KernelCollections<Accounted>, Arc<RdmaIdBox>>;

/// What the surface keeps: every open file's contexts and events.
#[pin_data]
pub(crate) struct UcmaAbi {
    #[pin]
    contexts: Mutex<Contexts>,
    #[pin]
    queues: Mutex<Queues>,
    /// Commands that have let go of their context so far: a teardown
    /// waiting for one sleeps until it changes (its check takes no lock).
    released: AtomicU64,
}

impl UcmaAbi {
    /// An empty surface.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(UcmaAbi {
            contexts <- new_mutex!(UcmaContexts::new(), "rcm::ucma_contexts"),
            queues <- new_mutex!(
                Queues {
                    queues: UcmaQueues::new(),
                    files: Files(OrderedMap::new_empty()),
                },
                "rcm::ucma_queues"
            ),
            released: AtomicU64::new(0),
        })
    }

    /// Runs `f` on both halves of the table, their locks taken in order,
    /// with the files to wake.
    fn both<R>(&self, f: impl FnOnce(&mut BothHalves<'_>, &Files) -> R) -> R {
        let mut contexts = self.contexts.lock();
        let mut q = self.queues.lock();
        let Queues { queues, files } = &mut *q;
        let mut both = Both {
            contexts: &mut contexts,
            queues,
        };
        f(&mut both, files)
    }
}

/// `-ENOSYS`, which 6.12's kernel crate does not name.
fn enosys() -> Error {
    Error::from_errno(-(kernel::bindings::ENOSYS as i32))
}

/// The in-tree module's errno for a refusal.
fn errno(e: UcmaError) -> Error {
    match e {
        UcmaError::Invalid => code::EINVAL,
        UcmaError::NoSpace => code::ENOSPC,
        UcmaError::NotImplemented => enosys(),
        UcmaError::NoEntry => code::ENOENT,
        UcmaError::Gone => code::ENXIO,
        UcmaError::NoMemory => code::ENOMEM,
    }
}

/// rdma_cm's answer (0 or a negative errno) as a result.
fn ret(r: c_int) -> Result {
    kernel::error::to_result(r)
}
