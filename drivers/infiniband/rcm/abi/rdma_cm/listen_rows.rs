// SPDX-License-Identifier: GPL-2.0

//! Wildcard listeners in ib_core's resource tracking. 6.12 listens on
//! every device through an internal id per device, and `rdma res show
//! cm_id` lists those (state LISTEN, one per device); rcm's core listens
//! without them, so the shell keeps one tracking row per (listener,
//! device) to show what 6.12 shows. Tools and scripts wait for these rows
//! to know a server listens.

use super::id::RdmaIdBox;
use super::{take_column, RdmaCmAbi};
use crate::bindings;
use crate::proto::cm::store::{InsertError, OrderedMap};
use crate::proto::cm::DeviceId;
use crate::rdma::device::Device;
use crate::rdma::restrack::ListenRow;
use crate::shell::CmService;
use kernel::prelude::*;

impl RdmaCmAbi {
    /// Adds `b`'s rows (a wildcard listener) on `only` or on every device
    /// new ids may use. Best effort: a row is what a dump shows, not the
    /// listen. Each row is made under the rows' lock while the core still
    /// has `b` listening: its destroy drops its rows under that lock
    /// before it lets go of the tracking entry a row copies its owner
    /// from.
    pub(super) fn add_listen_rows(&self, s: &CmService, b: &RdmaIdBox, only: Option<DeviceId>) {
        b.note_listen_rows();
        let Ok(devices) = s.devices() else {
            return;
        };
        for (dev, identity) in devices.iter() {
            let key = (b.core.0, dev.0);
            if only.is_some_and(|d| d != *dev) {
                continue;
            }
            let mut rows = self.listen_rows.lock();
            if rows.get(&key).is_some() {
                continue;
            }
            // A device whose removal has begun gets no row: the removal
            // drops its rows under this lock once, after it began.
            if s.is_going(*dev) {
                continue;
            }
            if self.read(|core| core.wildcard_listener(b.core)).is_none() {
                return;
            }
            // SAFETY: a served device stays registered during the call.
            let device = unsafe { Device::from_raw(*identity as *mut bindings::ib_device) };
            // SAFETY: the listener's address is written (it listens) and
            // its tracking entry is live (above) until its destroy has
            // dropped its rows.
            let row = unsafe { ListenRow::add(b, &device) };
            let Some(row) = row else {
                continue;
            };
            // Out of memory: the row goes again, once the lock is released
            // (its free waits for dumps).
            let refused = rows.try_insert(key, row).map_err(InsertError::into_value);
            drop(rows);
            drop(refused);
        }
    }

    /// A new device gets a row for every wildcard listener.
    pub(super) fn add_listen_rows_on(&self, s: &CmService, dev: DeviceId) {
        let listeners = self.read(|core| {
            let mut v = KVec::new();
            for (id, _, _) in core.wildcard_listeners() {
                if v.push(id, GFP_KERNEL).is_err() {
                    break;
                }
            }
            v
        });
        for id in listeners.iter() {
            if let Some(b) = self.id_box(*id) {
                self.add_listen_rows(s, &b, Some(dev));
            }
        }
    }

    /// Drops the rows of listener `b`: found by key, without looking at
    /// other listeners' rows (nor at the rows' lock for an id that never
    /// listened).
    pub(super) fn drop_listen_rows_of(&self, b: &RdmaIdBox) {
        if !b.may_have_listen_rows() {
            return;
        }
        let id = b.core;
        loop {
            // Freed outside the lock: the free waits for dumps reading it.
            let next = {
                let mut rows = self.listen_rows.lock();
                let key = rows.first_key_from(&(id.0, 0)).filter(|k| k.0 == id.0);
                key.and_then(|k| rows.remove(&k))
            };
            if next.is_none() {
                return;
            }
        }
    }

    /// Drops device `dev`'s rows (its removal): one look per listener.
    pub(super) fn drop_listen_rows_on(&self, dev: DeviceId) {
        let mut taken = KVec::new();
        take_column(&mut self.listen_rows.lock(), dev.0, &mut taken);
        // Freed outside the lock: the free waits for dumps reading them.
        drop(taken);
    }
}
