// SPDX-License-Identifier: GPL-2.0

//! rcm's watch on the network (neighbour updates, bonding failovers) for
//! rdma_cm: `rcm_net_helpers.c` registers the notifiers and hands each
//! change to rdma_cm from a work queue of its own.

use crate::bindings;
use kernel::error::to_result;
use kernel::prelude::*;

/// The notifiers, registered for as long as this value lives.
pub(crate) struct NetWatch(());

impl NetWatch {
    /// Registers the notifiers (once: module init).
    pub(crate) fn start() -> Result<Self> {
        // SAFETY: the helper's notifiers and work queue are static; this
        // runs once, before `Drop` below.
        to_result(unsafe { bindings::rcm_h_net_watch_start() })?;
        Ok(NetWatch(()))
    }
}

/// How many network changes (neighbour updates, netdev events) were seen
/// so far: a reply path worked out while it had another value may be
/// stale.
pub(crate) fn generation() -> u32 {
    // SAFETY: reads a static counter; any context.
    unsafe { bindings::rcm_h_net_generation() }
}

impl Drop for NetWatch {
    fn drop(&mut self) {
        // SAFETY: started by `start`; returns once no change is being
        // handed over any more.
        unsafe { bindings::rcm_h_net_watch_stop() };
    }
}
