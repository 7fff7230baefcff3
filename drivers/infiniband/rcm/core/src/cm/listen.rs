// SPDX-License-Identifier: GPL-2.0

//! The listen table: service ids (with a mask) on one device or on all of
//! them, matched against incoming REQs and SIDR_REQs.
//!
//! A REQ matches the listener with the most specific mask on its device,
//! then on "any device". Few distinct masks exist in practice (exact ids,
//! rdma_cm's port-space prefixes), so the endpoint keeps at most
//! [`MAX_LISTEN_MASKS`] of them and looks each up exactly.

use super::conn::Listening;
use super::error::CmError;
use super::state::State;
use super::store::{Collections, InsertError, OrderedMap};
use super::{CommId, DeviceId, Endpoint, Sink};

/// Asks `listen` to pick an unused service id (`IB_CM_ASSIGN_SERVICE_ID`).
pub const ASSIGN_SERVICE_ID: u64 = 0x0200_0000_0000_0000;
/// The top byte of a service id that marks locally assigned ids.
const ASSIGN_MASK: u64 = 0xFF00_0000_0000_0000;

/// How many distinct service id masks listeners may use at once.
pub const MAX_LISTEN_MASKS: usize = 16;

/// What to listen on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListenSpec {
    /// A device, or `None` for every device.
    pub device: Option<DeviceId>,
    /// The service id ([`ASSIGN_SERVICE_ID`] to have one picked).
    pub service_id: u64,
    /// Bits of the service id that must match (0 means all).
    pub service_mask: u64,
    /// What a listener created by this call may be shared under (the C
    /// API's handler, when the listener has no context); `None` for a
    /// listener nobody may join.
    pub share_tag: Option<u64>,
    /// Join an existing listener with the same `share_tag` rather than
    /// fail with [`CmError::Busy`] (`ib_cm_insert_listen`; `ib_cm_listen`
    /// never joins, but its listener may be joined).
    pub join: bool,
}

impl ListenSpec {
    /// Listens on every device for exactly `service_id`, as a listener
    /// nobody may join (`ib_cm_listen` with a zero mask).
    pub fn exact(service_id: u64) -> Self {
        ListenSpec {
            device: None,
            service_id,
            service_mask: 0,
            share_tag: None,
            join: false,
        }
    }
}

/// A listener's key: device, mask, masked service id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ListenKey {
    pub(crate) device: Option<DeviceId>,
    pub(crate) mask: u64,
    pub(crate) service_id: u64,
}

/// The distinct masks in use, with how many listeners use each.
pub(crate) struct MaskSet {
    masks: [(u64, u32); MAX_LISTEN_MASKS],
}

impl MaskSet {
    pub(crate) const fn new() -> Self {
        MaskSet {
            masks: [(0, 0); MAX_LISTEN_MASKS],
        }
    }

    fn acquire(&mut self, mask: u64) -> Result<(), CmError> {
        if let Some(slot) = self.masks.iter_mut().find(|(m, n)| *n > 0 && *m == mask) {
            slot.1 += 1;
            return Ok(());
        }
        match self.masks.iter_mut().find(|(_, n)| *n == 0) {
            Some(slot) => {
                *slot = (mask, 1);
                Ok(())
            }
            None => Err(CmError::NoSpace),
        }
    }

    pub(crate) fn release(&mut self, mask: u64) {
        if let Some(slot) = self.masks.iter_mut().find(|(m, n)| *n > 0 && *m == mask) {
            slot.1 -= 1;
        }
    }

    fn in_use(&self) -> impl Iterator<Item = u64> + '_ {
        self.masks.iter().filter(|(_, n)| *n > 0).map(|(m, _)| *m)
    }
}

impl<A: Copy + Ord, C: Collections> Endpoint<A, C> {
    /// Makes an IDLE id listen (`ib_cm_listen` / `ib_cm_insert_listen`).
    ///
    /// Returns the listening id: `id` itself, or for a shared listen an
    /// existing listener with the same key and tag (then `id` stays IDLE
    /// and the caller may destroy it). A listener with the same key but
    /// another tag, or an exclusive one, gives [`CmError::Busy`].
    pub fn listen<S: Sink<A>>(
        &mut self,
        id: CommId,
        spec: ListenSpec,
        sink: &mut S,
    ) -> Result<CommId, CmError> {
        if self.live(id)?.state != State::Idle {
            return Err(CmError::InvalidState);
        }
        let mask = if spec.service_mask == 0 {
            u64::MAX
        } else {
            spec.service_mask
        };
        let service_id = if spec.service_id == ASSIGN_SERVICE_ID {
            let sid = self.next_service_id;
            self.next_service_id = self.next_service_id.wrapping_add(1);
            sid
        } else if spec.service_id & ASSIGN_MASK == ASSIGN_SERVICE_ID {
            return Err(CmError::InvalidArgument);
        } else {
            spec.service_id
        };
        let key = ListenKey {
            device: spec.device,
            mask,
            service_id: service_id & mask,
        };
        if let Some(&holder) = self.listeners.get(&key) {
            let shared = self
                .conns
                .get_mut(holder.0)
                .and_then(|c| c.listening.as_mut())
                .filter(|l| spec.join && l.share_tag.is_some() && l.share_tag == spec.share_tag);
            return match shared {
                Some(l) => {
                    l.share_count = l.share_count.saturating_add(1);
                    Ok(holder)
                }
                None => Err(CmError::Busy),
            };
        }
        self.masks.acquire(mask)?;
        match self.listeners.try_insert(key, id) {
            Ok(()) => {}
            Err(InsertError::Occupied(_)) => {
                self.masks.release(mask);
                return Err(CmError::Busy);
            }
            Err(InsertError::NoMemory(_)) => {
                self.masks.release(mask);
                return Err(CmError::NoMemory);
            }
        }
        let conn = self.live_mut(id)?;
        conn.move_to(State::Listen, sink);
        conn.service_id = service_id;
        conn.listening = Some(Listening {
            key,
            share_count: 1,
            share_tag: spec.share_tag,
        });
        Ok(id)
    }

    /// The listener for a service id arriving on `device`: the most
    /// specific mask on that device first, then on any device.
    pub(crate) fn find_listener(&self, device: DeviceId, service_id: u64) -> Option<CommId> {
        for dev in [Some(device), None] {
            let mut best: Option<(u32, CommId)> = None;
            for mask in self.masks.in_use() {
                let key = ListenKey {
                    device: dev,
                    mask,
                    service_id: service_id & mask,
                };
                if let Some(&id) = self.listeners.get(&key) {
                    let bits = mask.count_ones();
                    if best.is_none_or(|(b, _)| bits > b) {
                        best = Some((bits, id));
                    }
                }
            }
            if let Some((_, id)) = best {
                return Some(id);
            }
        }
        None
    }
}
