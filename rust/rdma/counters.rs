// SPDX-License-Identifier: GPL-2.0

//! The CM's per-port message counters in sysfs (`cm_tx_msgs`,
//! `cm_tx_retries`, `cm_rx_msgs`, `cm_rx_duplicates` under each port of
//! `/sys/class/infiniband/<dev>/`), as the C CM of 6.12 exposes them.

use crate::bindings;
use crate::rdma::device::Device;
use core::ptr::NonNull;
use kernel::error::from_err_ptr;
use kernel::prelude::*;

/// Which counter of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Counter {
    /// Messages sent (first sends and resends).
    Sent,
    /// Messages sent again.
    Resent,
    /// Messages received.
    Received,
    /// Received messages that repeated one already processed.
    Duplicate,
}

impl Counter {
    fn group(self) -> u32 {
        match self {
            Counter::Sent => bindings::rcm_h_counter_group_RCM_H_TX,
            Counter::Resent => bindings::rcm_h_counter_group_RCM_H_TX_RETRIES,
            Counter::Received => bindings::rcm_h_counter_group_RCM_H_RX,
            Counter::Duplicate => bindings::rcm_h_counter_group_RCM_H_RX_DUPLICATES,
        }
    }
}

/// A device's counters; their sysfs files go away on drop.
///
/// INVARIANT: `raw` came from `rcm_h_counters_add` and is not yet removed.
pub(crate) struct PortCounters {
    raw: NonNull<bindings::rcm_h_counters>,
}

// SAFETY: the counters are atomics; the sysfs files are removed by the
// C helper from any thread.
unsafe impl Send for PortCounters {}
// SAFETY: `count` only does atomic increments.
unsafe impl Sync for PortCounters {}

impl PortCounters {
    /// Creates the counters and their sysfs files for every CM port.
    pub(crate) fn new(device: &Device<'_>) -> Result<Self> {
        // SAFETY: `device` is registered (type invariant of `Device`).
        let raw = from_err_ptr(unsafe { bindings::rcm_h_counters_add(device.as_raw()) })?;
        // INVARIANT: freshly added.
        Ok(PortCounters {
            raw: NonNull::new(raw).ok_or(ENOMEM)?,
        })
    }

    /// Counts one message of CM attribute `attr_id` on `port`.
    pub(crate) fn count(&self, port: u32, counter: Counter, attr_id: u16) {
        // SAFETY: live per the type invariant; the helper checks the port
        // and attribute ranges.
        unsafe { bindings::rcm_h_count(self.raw.as_ptr(), port, counter.group(), attr_id) };
    }
}

impl Drop for PortCounters {
    fn drop(&mut self) {
        // SAFETY: live per the type invariant; removed exactly once.
        unsafe { bindings::rcm_h_counters_remove(self.raw.as_ptr()) };
    }
}
