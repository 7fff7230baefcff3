// SPDX-License-Identifier: GPL-2.0

//! Which ids are on which device, and which devices are going. A removal
//! tells the ids on its device by walking an index (each step O(log n),
//! whatever other devices hold), and once it has begun no id attaches to
//! the device: 6.12 takes a device off its list before it tells anyone,
//! so a bind, a resolution or a request that comes later finds no device
//! rather than an id the removal would wait for forever.

use super::endpoint::{RdmaCm, RdmaCmError, RdmaId};
use super::event::{EventKind, EventStatus, RdmaEvent};
use super::host::Host;
use super::state::IdState;
use crate::cm::store::{Collections, OrderedMap};
use crate::cm::DeviceId;

/// What the index knows of one device.
#[derive(Clone, Copy, Debug, Default)]
struct DeviceEntry {
    /// Ids on the device.
    ids: u32,
    /// Its removal has begun: no id attaches any more.
    going: bool,
}

/// The ids of each device.
///
/// INVARIANT: `(d, id)` is in `by_device` exactly when id `id` is on
/// device `d`, and `devices[d].ids` counts those keys.
pub(crate) struct DeviceIndex<C: Collections> {
    by_device: C::Map<(DeviceId, RdmaId), ()>,
    devices: C::Map<DeviceId, DeviceEntry>,
}

impl<C: Collections> DeviceIndex<C> {
    pub(crate) fn new() -> Self {
        DeviceIndex {
            by_device: OrderedMap::new_empty(),
            devices: OrderedMap::new_empty(),
        }
    }

    /// Reserves `dev`'s entry (so that its removal needs no memory).
    fn add(&mut self, dev: DeviceId) -> Result<&mut DeviceEntry, RdmaCmError> {
        if self.devices.get(&dev).is_none() {
            self.devices
                .try_insert(dev, DeviceEntry::default())
                .map_err(|_| RdmaCmError::NoMemory)?;
        }
        self.devices.get_mut(&dev).ok_or(RdmaCmError::NoMemory)
    }

    /// Records that `id` is on `dev`; `NoDevice` once `dev` is going.
    pub(crate) fn attach(&mut self, dev: DeviceId, id: RdmaId) -> Result<(), RdmaCmError> {
        if self.is_going(dev) {
            return Err(RdmaCmError::NoDevice);
        }
        self.add(dev)?;
        self.by_device
            .try_insert((dev, id), ())
            .map_err(|_| RdmaCmError::NoMemory)?;
        if let Some(e) = self.devices.get_mut(&dev) {
            e.ids += 1;
        }
        Ok(())
    }

    /// `id` is no longer on `dev`.
    pub(crate) fn detach(&mut self, dev: DeviceId, id: RdmaId) {
        if self.by_device.remove(&(dev, id)).is_some() {
            if let Some(e) = self.devices.get_mut(&dev) {
                e.ids = e.ids.saturating_sub(1);
            }
        }
    }

    pub(crate) fn is_going(&self, dev: DeviceId) -> bool {
        self.devices.get(&dev).is_some_and(|e| e.going)
    }

    /// The number of ids on `dev`.
    pub(crate) fn count(&self, dev: DeviceId) -> u32 {
        self.devices.get(&dev).map_or(0, |e| e.ids)
    }

    /// Whether the index has `id` on `dev`.
    pub(crate) fn holds(&self, dev: DeviceId, id: RdmaId) -> bool {
        self.by_device.get(&(dev, id)).is_some()
    }

    /// Checks the counts against the index, which must list `on_devices`
    /// ids (the audit).
    pub(crate) fn check(&self, on_devices: usize) -> Result<(), &'static str> {
        if self.by_device.len() != on_devices {
            return Err("device index lists ids on no device");
        }
        let counted: usize = self
            .devices
            .keys()
            .filter_map(|d| self.devices.get(&d))
            .map(|e| e.ids as usize)
            .sum();
        if counted != on_devices {
            return Err("device id count off");
        }
        Ok(())
    }

    /// The first id on `dev` numbered `from` or later.
    fn next_on(&mut self, dev: DeviceId, from: RdmaId) -> Option<RdmaId> {
        self.by_device
            .first_key_from(&(dev, from))
            .filter(|k| k.0 == dev)
            .map(|k| k.1)
    }
}

impl<C: Collections, A: Copy + Ord> RdmaCm<C, A> {
    /// A device came: its entry is made now, so that its removal later
    /// needs no memory.
    pub fn device_added(&mut self, dev: DeviceId) -> Result<(), RdmaCmError> {
        let e = self.devices.add(dev)?;
        e.going = false;
        Ok(())
    }

    /// `dev` is going: from now on no id attaches to it (binds and
    /// resolutions that find it fail with `NoDevice`, requests that
    /// arrive on it are refused), and every id on it enters
    /// DEVICE_REMOVAL with the event for its consumer, who must destroy
    /// it. Returns how many ids were told; ids told already are skipped.
    pub fn device_going<H: Host<A>>(&mut self, host: &mut H, dev: DeviceId) -> u32 {
        if let Ok(e) = self.devices.add(dev) {
            e.going = true;
        }
        let mut told = 0;
        let mut from = RdmaId(0);
        while let Some(id) = self.devices.next_on(dev, from) {
            from = RdmaId(id.0.saturating_add(1));
            if self.device_removal(host, id).is_some() {
                told += 1;
            }
            if id.0 == u64::MAX {
                break;
            }
        }
        told
    }

    /// `dev` is gone (every id on it destroyed): its entry goes.
    pub fn device_removed(&mut self, dev: DeviceId) {
        if self.devices.count(dev) == 0 {
            self.devices.devices.remove(&dev);
        }
    }

    /// Whether any id is on `dev` (a removal waits until none is).
    pub fn has_ids_on(&self, dev: DeviceId) -> bool {
        self.devices.count(dev) > 0
    }

    /// `id`'s device is going: the id enters DEVICE_REMOVAL (the CM's news
    /// about its connection is no longer reported) and its consumer gets
    /// the DEVICE_REMOVAL event, after which it must destroy the id.
    /// Returns the state the id was in; `None` if it is gone or was told
    /// already.
    pub fn device_removal<H: Host<A>>(&mut self, host: &mut H, id: RdmaId) -> Option<IdState> {
        let rec = self.ids.get_mut(&id)?;
        if rec.state == IdState::DeviceRemoval {
            return None;
        }
        let was = rec.state;
        rec.state = IdState::DeviceRemoval;
        rec.before_removal = Some(was);
        host.event(
            id,
            RdmaEvent::plain(EventKind::DeviceRemoval, EventStatus::Ok),
        );
        Some(was)
    }

    /// Puts `id` on `dev` (it has no device yet); `NoDevice` if `dev` is
    /// going.
    pub(crate) fn set_device(&mut self, id: RdmaId, dev: DeviceId) -> Result<(), RdmaCmError> {
        let rec = self.ids.get(&id).ok_or(RdmaCmError::NoSuchId)?;
        if rec.device.is_some() {
            return Err(RdmaCmError::Invalid);
        }
        self.devices.attach(dev, id)?;
        if let Some(rec) = self.ids.get_mut(&id) {
            rec.device = Some(dev);
        }
        Ok(())
    }
}
