// SPDX-License-Identifier: GPL-2.0

//! The devices the CM service serves: their MAD agents and counters, the
//! lookups rdma_cm makes, and a removal that waits for the DREPs of the
//! connections its consumers just closed.

use super::{CmService, DeviceEntry};
use crate::proto::cm::{CommId, DeviceId};
use crate::proto::rdma_cm::{DeviceInfo, PathKind};
use crate::proto::timer::IbaTime;
use crate::rdma::counters::PortCounters;
use crate::rdma::device::Device;
use crate::rdma::mad::MadAgent;
use crate::rdma::sync::wait_until;
use crate::rdma::timer::now_ms;
use core::cell::Cell;
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::Arc;

/// A served device's id and identity, if new ids may use it (its removal
/// has not begun).
fn usable(d: &DeviceEntry) -> Option<(DeviceId, usize)> {
    (!d.going).then_some((d.id, d.identity))
}

impl CmService {
    /// Registers CM MAD agents on the device's IB/RoCE ports. They hold
    /// references on the service until `remove_device`, which ib_core
    /// calls for every device before client unregistration returns.
    pub(crate) fn add_device(this: &Arc<Self>, device: &Device<'_>) -> Result {
        let mut agents = KVec::new();
        for port in device.ports() {
            if !device.has_ib_cm(port) {
                continue;
            }
            let agent = MadAgent::register(device, port, this.clone())?;
            agents.push(agent, GFP_KERNEL)?;
        }
        let roce = device.ports().any(|p| device.is_roce(p));
        let iwarp = device.ports().any(|p| device.is_iwarp(p));
        let entry = DeviceEntry {
            identity: device.identity(),
            id: DeviceId(this.next_device.fetch_add(1, Ordering::Relaxed)),
            info: DeviceInfo {
                guid: device.node_guid(),
                ack_delay: IbaTime::new(device.ack_delay()),
                // The kind of the paths rdma_cm makes there (its RoCE
                // ports use RoCE v2 GIDs where they have them).
                path_kind: if roce { PathKind::RoceV2 } else { PathKind::Ib },
                iwarp,
            },
            agents,
            counters: PortCounters::new(device)?,
            going: false,
        };
        let ports = entry.agents.len();
        {
            let mut devices = this.devices.lock();
            match devices.iter_mut().find(|slot| slot.is_none()) {
                Some(slot) => *slot = Some(entry),
                None => devices.push(Some(entry), GFP_KERNEL)?,
            }
        }
        pr_info!("{}: CM on {} port(s)\n", device.name(), ports);
        Ok(())
    }

    /// The id of the served device with this identity (its `ib_device`
    /// address).
    pub(crate) fn device_id(&self, identity: usize) -> Option<DeviceId> {
        self.device_where(|d| d.identity == identity, |d| d.id)
    }

    /// `get` of the first served device `which` picks.
    fn device_where<R>(
        &self,
        which: impl Fn(&DeviceEntry) -> bool,
        get: impl FnOnce(&DeviceEntry) -> R,
    ) -> Option<R> {
        let devices = self.devices.lock();
        let found = devices.iter().flatten().find(|d| which(d)).map(get);
        found
    }

    /// What rdma_cm needs to know of a served device.
    pub(crate) fn device_info(&self, id: DeviceId) -> Option<DeviceInfo> {
        self.device_where(|d| d.id == id, |d| d.info)
    }

    /// A device new ids may use, by its place among the served devices:
    /// id and identity (`ib_device` address). `None` past the last place,
    /// `Some(None)` for a place that is empty or whose device's removal
    /// has begun. Walked place by place, the devices take the lock once
    /// each and no memory (an address result and a bind walk them).
    pub(crate) fn device_at(&self, place: usize) -> Option<Option<(DeviceId, usize)>> {
        let devices = self.devices.lock();
        let slot = devices.get(place)?;
        Some(slot.as_ref().and_then(usable))
    }

    /// The devices new ids may use: id and identity (`ib_device`
    /// address). A device whose removal has begun is not among them.
    pub(crate) fn devices(&self) -> Result<KVec<(DeviceId, usize)>> {
        let devices = self.devices.lock();
        let mut out = KVec::with_capacity(devices.len(), GFP_KERNEL)?;
        for d in devices.iter().flatten().filter_map(usable) {
            out.push(d, GFP_KERNEL)?;
        }
        Ok(out)
    }

    /// The iWARP devices new ids may use: id and identity.
    pub(crate) fn iwarp_devices(&self) -> Result<KVec<(DeviceId, usize)>> {
        let devices = self.devices.lock();
        let mut out = KVec::new();
        for d in devices
            .iter()
            .flatten()
            .filter(|d| d.info.iwarp && !d.going)
        {
            out.push((d.id, d.identity), GFP_KERNEL)?;
        }
        Ok(out)
    }

    /// The identity of served device `id`, going or not (ids already on
    /// it use it until they are destroyed).
    pub(crate) fn device_identity(&self, id: DeviceId) -> Option<usize> {
        self.device_where(|d| d.id == id, |d| d.identity)
    }

    /// The device's removal begins: [`CmService::devices`] no longer
    /// lists it, and `is_going` says so. Returns its id.
    pub(crate) fn begin_removal(&self, identity: usize) -> Option<DeviceId> {
        let mut devices = self.devices.lock();
        let d = devices
            .iter_mut()
            .flatten()
            .find(|d| d.identity == identity)?;
        d.going = true;
        Some(d.id)
    }

    /// Whether served device `id`'s removal has begun (or it is gone).
    pub(crate) fn is_going(&self, id: DeviceId) -> bool {
        self.device_where(|d| d.id == id && !d.going, |_| ())
            .is_none()
    }

    /// Unregisters the device's agents (waiting for their callbacks).
    pub(crate) fn remove_device(&self, device: &Device<'_>) {
        let identity = device.identity();
        self.await_dreps(device);
        let entry = {
            let mut devices = self.devices.lock();
            let slot = devices
                .iter_mut()
                .find(|slot| slot.as_ref().is_some_and(|d| d.identity == identity));
            slot.and_then(Option::take)
        };
        // Dropped outside the lock: unregistering waits for callbacks
        // that take it.
        drop(entry);
    }

    /// ib_core removes clients in reverse order, so the consumers of a
    /// departing device have just disconnected their connections on it.
    /// Waits until every DREQ on it has its DREP or has timed out (with
    /// no further retries), so that the answers do not arrive while
    /// ib_mad closes the port: 6.12's `ib_mad_port_close` destroys the
    /// MAD QPs before it stops polling their CQ, and a MAD received then
    /// is completed against a freed QP. Woken by each input that may end
    /// an exchange (see `flush`); never polls.
    fn await_dreps(&self, device: &Device<'_>) {
        let Some(dev) = self.device_id(device.identity()) else {
            return;
        };
        let capacity = self.read(|ep| ep.len());
        // Without memory the wait is skipped: the removal goes ahead as
        // the C CM's does, exposed to the ib_mad window.
        let Ok(mut pending) = KVVec::<CommId>::with_capacity(capacity, GFP_KERNEL) else {
            return;
        };
        {
            let mut ep = self.endpoint_locked("a device's departing ids");
            for id in ep.dreps_awaited(dev) {
                // Within the capacity (ids created since are not on a
                // departing device), so this does not allocate.
                if pending.push(id, GFP_ATOMIC).is_err() {
                    break;
                }
            }
            for id in pending.iter() {
                ep.last_try(*id);
            }
        }
        let start = now_ms();
        self.departing.fetch_add(1, Ordering::Relaxed);
        // Ids are checked in order and each is passed once: O(log n) per
        // wake-up, amortized.
        let checked = Cell::new(0);
        wait_until(&|| {
            let ep = self.endpoint_locked("a device's departing ids");
            let mut i = checked.get();
            while pending.get(i).is_some_and(|id| !ep.awaits_drep(*id)) {
                i += 1;
            }
            checked.set(i);
            i == pending.len()
        });
        self.departing.fetch_sub(1, Ordering::Relaxed);
        pr_info!(
            "{}: going: {} DREQ(s) answered or timed out in {} ms\n",
            device.name(),
            pending.len(),
            now_ms().saturating_sub(start)
        );
    }
}
