// SPDX-License-Identifier: GPL-2.0

//! Which ids are on which device, and which devices are going. Each
//! device's ids are a list threaded through their records (6.12's
//! `cma_dev->id_list`, see `id_list`), so a removal tells the ids on its
//! device by walking that list alone, whatever other devices hold. Once a
//! removal has begun no id attaches to the device: 6.12 takes a device
//! off its list before it tells anyone, so a bind, a resolution or a
//! request that comes later finds no device rather than an id the
//! removal would wait for forever.

use super::endpoint::{Id, RdmaCm, RdmaCmError, RdmaId};
use super::event::{EventKind, EventStatus, RdmaEvent};
use super::host::Host;
use super::id_list::{IdLink, IdList};
use super::state::IdState;
use crate::cm::store::{Collections, OrderedMap};
use crate::cm::DeviceId;

/// An id's link on its device's list.
fn device_link<A>(rec: &mut Id<A>) -> &mut IdLink {
    &mut rec.on_device
}

/// What the index knows of one device.
#[derive(Clone, Copy, Debug, Default)]
struct DeviceEntry {
    /// The ids on the device.
    ids: IdList,
    /// Its removal has begun: no id attaches any more.
    going: bool,
}

/// The devices, each with its list of ids.
///
/// INVARIANT: an id is on device `d`'s list exactly when its record's
/// `device` is `Some(d)`.
pub(crate) struct DeviceIndex<C: Collections> {
    devices: C::Map<DeviceId, DeviceEntry>,
}

impl<C: Collections> DeviceIndex<C> {
    pub(crate) fn new() -> Self {
        DeviceIndex {
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

    pub(crate) fn is_going(&self, dev: DeviceId) -> bool {
        self.devices.get(&dev).is_some_and(|e| e.going)
    }

    /// The number of ids on `dev`.
    pub(crate) fn count(&self, dev: DeviceId) -> u32 {
        self.devices.get(&dev).map_or(0, |e| e.ids.len())
    }
}

impl<C: Collections, A: Copy> RdmaCm<C, A> {
    /// Puts `id` (in the table, on no device's list) at the end of
    /// `dev`'s list; `NoDevice` once `dev` is going. Its record's
    /// `device` is the caller's to set.
    pub(crate) fn attach_to(&mut self, dev: DeviceId, id: RdmaId) -> Result<(), RdmaCmError> {
        if self.devices.is_going(dev) {
            return Err(RdmaCmError::NoDevice);
        }
        let entry = self.devices.add(dev)?;
        entry.ids.push_back(&mut self.ids, id, device_link)
    }

    /// Takes the id `id`, whose record `rec` is (or was until now) in the
    /// table, off its device's list.
    pub(crate) fn off_device(&mut self, id: RdmaId, rec: &Id<A>) {
        if let Some(entry) = rec.device.and_then(|d| self.devices.devices.get_mut(&d)) {
            entry
                .ids
                .unlink(&mut self.ids, id, rec.on_device, device_link);
        }
    }

    /// Checks every device's list against the records, which put
    /// `on_devices` ids on a device (the audit).
    pub(crate) fn check_devices(&self, on_devices: usize) -> Result<(), &'static str> {
        let mut listed = 0;
        for dev in self.devices.devices.keys() {
            if let Some(e) = self.devices.devices.get(&dev) {
                let n = e
                    .ids
                    .check(&self.ids, |r| r.on_device, |r| r.device == Some(dev))?;
                listed += n as usize;
            }
        }
        if listed != on_devices {
            return Err("device index misses ids on a device");
        }
        Ok(())
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
        // Telling an id changes no list.
        let mut cur = self.devices.devices.get(&dev).and_then(|e| e.ids.first());
        while let Some(id) = cur {
            cur = self.ids.get(&id).and_then(|r| r.on_device.next());
            if self.device_removal(host, id).is_some() {
                told += 1;
            }
        }
        told
    }

    /// `dev` is gone (every id on it destroyed). Its entry stays, marked
    /// going: a bind or resolution that found the device before its
    /// removal began and reaches the core after it ended must not make the
    /// entry anew and attach (the embedding's device numbers are never
    /// reused, so the mark names this device alone; one entry per removed
    /// device is what it costs).
    pub fn device_removed(&mut self, dev: DeviceId) {
        if let Ok(e) = self.devices.add(dev) {
            e.going = true;
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
        self.attach_to(dev, id)?;
        if let Some(rec) = self.ids.get_mut(&id) {
            rec.device = Some(dev);
        }
        Ok(())
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use crate::cm::store::btree::Std;
    use crate::rdma_cm::{PortSpace, RdmaQpType};
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    /// The ids on `dev`'s list, walked from its first.
    fn listed(cm: &RdmaCm<Std, u32>, dev: DeviceId) -> Vec<RdmaId> {
        let mut out = Vec::new();
        let mut cur = cm.devices.devices.get(&dev).and_then(|e| e.ids.first());
        while let Some(id) = cur {
            out.push(id);
            cur = cm.ids.get(&id).and_then(|r| r.on_device.next());
        }
        out
    }

    #[test]
    fn each_device_lists_its_ids_oldest_first_through_any_removal() {
        let mut cm: RdmaCm<Std, u32> = RdmaCm::new();
        let (a, b) = (DeviceId(1), DeviceId(2));
        let on = |cm: &mut RdmaCm<Std, u32>, dev| {
            let mut rec = Id::new(0, PortSpace::Tcp, RdmaQpType::Rc, 0);
            rec.device = Some(dev);
            cm.insert_id(rec).unwrap()
        };
        let ids: Vec<RdmaId> = [a, b, a, a, b, a]
            .into_iter()
            .map(|d| on(&mut cm, d))
            .collect();
        assert_eq!(listed(&cm, a), [ids[0], ids[2], ids[3], ids[5]]);
        assert_eq!(listed(&cm, b), [ids[1], ids[4]]);
        cm.check_devices(6).unwrap();
        // The middle, the first and the last of a's list.
        for (gone, left) in [
            (ids[2], vec![ids[0], ids[3], ids[5]]),
            (ids[0], vec![ids[3], ids[5]]),
            (ids[5], vec![ids[3]]),
        ] {
            cm.remove_id(gone).unwrap();
            assert_eq!(listed(&cm, a), left);
            assert_eq!(listed(&cm, b), [ids[1], ids[4]]);
        }
        cm.check_devices(3).unwrap();
        assert_eq!(cm.devices.count(a), 1);
        cm.remove_id(ids[3]).unwrap();
        assert!(listed(&cm, a).is_empty());
        assert!(!cm.has_ids_on(a));
        // A later id goes on the emptied list.
        let again = on(&mut cm, a);
        assert_eq!(listed(&cm, a), [again]);
        cm.check_devices(3).unwrap();
        // A record on a device it is not listed by fails the check.
        if let Some(r) = cm.ids.get_mut(&ids[1]) {
            r.device = Some(a);
        }
        assert!(cm.check_devices(3).is_err());
    }
}
