// SPDX-License-Identifier: GPL-2.0

//! The CM's per-port message counters in sysfs, where the C CM of 6.12
//! keeps them: `/sys/class/infiniband/<dev>/ports/<n>/` `cm_tx_msgs`,
//! `cm_tx_retries`, `cm_rx_msgs` and `cm_rx_duplicates`, each with a file
//! per message (`req` ... `apr`).
//!
//! Each device has its own table of sysfs attributes, so that a file's
//! read finds its counter from the attribute alone (no list of devices to
//! search, no lock).

use crate::bindings;
use crate::rdma::device::Device;
use core::ptr::{addr_of, addr_of_mut};
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::ffi::c_char;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::{c_str, error::to_result};

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

/// The counters' directories, in `Counter` order.
const GROUP_NAMES: [&CStr; GROUPS] = [
    c_str!("cm_tx_msgs"),
    c_str!("cm_tx_retries"),
    c_str!("cm_rx_msgs"),
    c_str!("cm_rx_duplicates"),
];
const GROUPS: usize = 4;

/// The counted messages' files, by CM attribute id from
/// [`FIRST_ATTR_ID`] (REQ, 0x10) to APR (0x1A).
const MESSAGE_NAMES: [&CStr; MESSAGES] = [
    c_str!("req"),
    c_str!("mra"),
    c_str!("rej"),
    c_str!("rep"),
    c_str!("rtu"),
    c_str!("dreq"),
    c_str!("drep"),
    c_str!("sidr_req"),
    c_str!("sidr_rep"),
    c_str!("lap"),
    c_str!("apr"),
];
const MESSAGES: usize = 11;
const FIRST_ATTR_ID: u16 = 0x10;

impl Counter {
    fn group(self) -> usize {
        match self {
            Counter::Sent => 0,
            Counter::Resent => 1,
            Counter::Received => 2,
            Counter::Duplicate => 3,
        }
    }
}

/// One counter file: its sysfs attribute and which counter it shows.
#[repr(C)]
struct CounterFile {
    /// First, so that sysfs's attribute is the file's address.
    attr: bindings::ib_port_attribute,
    counters: *const PortCounters,
    group: usize,
    message: usize,
}

/// A device's sysfs attributes: files, their lists and groups, which
/// point into the table itself.
///
/// INVARIANT: once [`PortCounters::new`] filled it, it is not moved (it
/// stays in its box) and its pointers are valid while it lives.
#[repr(C)]
struct Table {
    files: [[CounterFile; MESSAGES]; GROUPS],
    /// NULL-terminated lists of each group's attributes.
    lists: [[*mut bindings::attribute; MESSAGES + 1]; GROUPS],
    groups: [bindings::attribute_group; GROUPS],
    /// NULL-terminated list of the groups, as ib_core takes it.
    group_list: [*const bindings::attribute_group; GROUPS + 1],
}

/// A device's counters; their sysfs files go away on drop.
///
/// INVARIANT: `device` is registered while `self` lives; the ports whose
/// bit is set in `registered` have `table`'s groups in sysfs, and their
/// files point to `self`, which is not moved (it is boxed).
pub(crate) struct PortCounters {
    device: *mut bindings::ib_device,
    first_port: u32,
    ports: u32,
    registered: u64,
    counts: KVec<AtomicU64>,
    table: KBox<Table>,
}

// SAFETY: the counts are atomics; the device pointer is only passed to
// ib_core, which registers and removes sysfs groups from any process
// context.
unsafe impl Send for PortCounters {}
// SAFETY: `count` and the sysfs reads only do atomic operations.
unsafe impl Sync for PortCounters {}

impl PortCounters {
    /// Creates the counters of every port of `device` and the sysfs files
    /// of its CM ports.
    pub(crate) fn new(device: &Device<'_>) -> Result<KBox<Self>> {
        let ports = device.ports();
        let first_port = *ports.start();
        let count = ports.clone().count();
        if count > 64 {
            return Err(EINVAL);
        }
        let mut counts = KVec::with_capacity(count * GROUPS * MESSAGES, GFP_KERNEL)?;
        for _ in 0..count * GROUPS * MESSAGES {
            counts.push(AtomicU64::new(0), GFP_KERNEL)?;
        }
        let table = KBox::<Table>::new_uninit(GFP_KERNEL)?;
        // SAFETY: every field of the table is a raw pointer, an integer or
        // a C structure for which all-zero is a valid value.
        let table = unsafe {
            let mut table = table;
            core::ptr::write_bytes(table.as_mut_ptr(), 0, 1);
            table.assume_init()
        };
        let mut this = KBox::new(
            PortCounters {
                device: device.as_raw(),
                first_port,
                ports: count as u32,
                registered: 0,
                counts,
                table,
            },
            GFP_KERNEL,
        )?;
        let owner: *const PortCounters = &*this;
        this.fill_table(owner);
        for port in ports.filter(|p| device.has_ib_cm(*p)) {
            // SAFETY: the device is registered; the groups live in the
            // boxed table until `Drop` removes them.
            to_result(unsafe {
                bindings::ib_port_register_client_groups(
                    this.device,
                    port,
                    this.table.group_list.as_mut_ptr(),
                )
            })?;
            // INVARIANT: registered just now.
            this.registered |= 1 << (port - first_port);
        }
        Ok(this)
    }

    /// Points the table's files at `owner`'s counters and links the
    /// lists. `owner` is `self`, boxed.
    fn fill_table(&mut self, owner: *const PortCounters) {
        let table: *mut Table = &mut *self.table;
        for group in 0..GROUPS {
            for message in 0..MESSAGES {
                // SAFETY: `table` is the boxed table, ours; the names are
                // static; the attribute is initialized for sysfs (its
                // lockdep key) before it is listed.
                unsafe {
                    let file = addr_of_mut!((*table).files[group][message]);
                    let attr = addr_of_mut!((*file).attr.attr);
                    (*attr).name = MESSAGE_NAMES[message].as_char_ptr();
                    (*attr).mode = 0o444;
                    bindings::rcm_h_sysfs_attr_init(attr);
                    (*file).attr.show = Some(show);
                    (*file).counters = owner;
                    (*file).group = group;
                    (*file).message = message;
                    (*table).lists[group][message] = attr;
                }
            }
            // SAFETY: as above.
            unsafe {
                (*table).lists[group][MESSAGES] = core::ptr::null_mut();
                (*table).groups[group].name = GROUP_NAMES[group].as_char_ptr();
                (*table).groups[group].attrs = addr_of_mut!((*table).lists[group]).cast();
                (*table).group_list[group] = addr_of!((*table).groups[group]);
            }
        }
        // SAFETY: as above.
        unsafe { (*table).group_list[GROUPS] = core::ptr::null() };
    }

    /// The counter of `message` (an index below [`MESSAGES`]) in `group`
    /// on `port`, if the device has that port.
    fn counter(&self, port: u32, group: usize, message: usize) -> Option<&AtomicU64> {
        let port = port
            .checked_sub(self.first_port)
            .filter(|p| *p < self.ports)?;
        self.counts
            .get((port as usize * GROUPS + group) * MESSAGES + message)
    }

    /// Counts one message of CM attribute `attr_id` on `port` (other
    /// attributes and ports are not counted).
    pub(crate) fn count(&self, port: u32, counter: Counter, attr_id: u16) {
        let Some(message) = attr_id
            .checked_sub(FIRST_ATTR_ID)
            .map(usize::from)
            .filter(|m| *m < MESSAGES)
        else {
            return;
        };
        if let Some(c) = self.counter(port, counter.group(), message) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Drop for PortCounters {
    fn drop(&mut self) {
        for i in 0..self.ports {
            if self.registered & (1 << i) != 0 {
                // SAFETY: registered for this port (type invariant); the
                // removal waits for reads in progress, after which no file
                // points to `self`.
                unsafe {
                    bindings::ib_port_unregister_client_groups(
                        self.device,
                        self.first_port + i,
                        self.table.group_list.as_mut_ptr(),
                    )
                };
            }
        }
    }
}

/// A counter file's read.
///
/// # Safety
///
/// Called by sysfs with one of a table's attributes, while its groups are
/// registered, and a page-sized buffer.
unsafe extern "C" fn show(
    _device: *mut bindings::ib_device,
    port: u32,
    attr: *mut bindings::ib_port_attribute,
    buf: *mut c_char,
) -> isize {
    // SAFETY: the attribute is the first field of a `CounterFile`
    // (`repr(C)`), whose counters are registered, so live (type invariants
    // of `Table` and `PortCounters`).
    let (counters, group, message) = unsafe {
        let file = attr.cast::<CounterFile>();
        (&*(*file).counters, (*file).group, (*file).message)
    };
    let value = counters
        .counter(port, group, message)
        .map_or(0, |c| c.load(Ordering::Relaxed));
    // SAFETY: a page for the value; the format takes one `u64`.
    unsafe { kernel::bindings::sysfs_emit(buf, c_str!("%llu\n").as_char_ptr(), value) as isize }
}
