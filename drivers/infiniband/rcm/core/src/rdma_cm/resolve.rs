// SPDX-License-Identifier: GPL-2.0

//! Address resolution (`rdma_resolve_addr`) as the core sees it: the call
//! binds if needed, moves the id to ADDR_QUERY and returns the work the
//! embedding must do (ARP/ND through `rdma_resolve_ip`, a local device for
//! a loopback or wildcard destination, nothing to look up for AF_IB); the
//! embedding reports the outcome back ([`RdmaCm::addr_resolved`]), which
//! yields the consumer's event, as 6.12's `addr_handler` does.

use super::addr::SockAddr;
use super::endpoint::{BindContext, RdmaCm, RdmaCmError, RdmaId};
use super::event::{EventKind, EventStatus, RdmaEvent};
use super::host::Host;
use super::state::IdState;
use crate::cm::store::Collections;
use crate::cm::DeviceId;

/// `-ENODEV`: the device the address resolved to is going.
pub const ENODEV: i32 = -19;
/// `-ENOMEM`.
pub const ENOMEM: i32 = -12;

/// What resolving a destination takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrWork {
    /// Resolve `dst` from `src` (route and neighbour), within `timeout_ms`.
    ResolveIp {
        /// The bound source (a wildcard lets the route choose).
        src: SockAddr,
        /// The destination.
        dst: SockAddr,
        /// How long the embedding may take.
        timeout_ms: u32,
    },
    /// A wildcard or loopback destination: a local device's own address.
    Loopback,
    /// AF_IB: the destination's GID is its address.
    Ib,
}

/// What the embedding found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddrResolution {
    /// The local address the route chose (the bound port is kept).
    pub src: SockAddr,
    /// The device that owns it; `None` for an id already on a device
    /// (which keeps it), so that the embedding need not ask the core.
    pub device: Option<DeviceId>,
}

impl<C: Collections, A: Copy + Ord> RdmaCm<C, A> {
    /// `rdma_resolve_addr`: from IDLE (binding `src`, or the wildcard of
    /// `dst`'s family, first) or ADDR_BOUND to ADDR_QUERY. `Invalid` in
    /// any other state (a resolution already pending included) or when
    /// the bound address and `dst` differ in family; nothing else changes
    /// then, but a bind done here stays.
    pub fn resolve_addr(
        &mut self,
        id: RdmaId,
        src: Option<SockAddr>,
        dst: SockAddr,
        timeout_ms: u32,
        cx: &BindContext,
    ) -> Result<AddrWork, RdmaCmError> {
        let state = self.ids.get(&id).ok_or(RdmaCmError::NoSuchId)?.state;
        if state == IdState::AddrBound {
            if let Some(rec) = self.ids.get_mut(&id) {
                rec.dst = Some(dst);
            }
        } else {
            let src = src.unwrap_or_else(|| wildcard_for(&dst));
            self.bind_to(id, src, Some(dst), cx)?;
        }
        let bound = self.ids.get(&id).and_then(|r| r.src);
        if bound.map(|s| s.family()) != Some(dst.family()) {
            return Err(RdmaCmError::Invalid);
        }
        let Some(bound) = bound else {
            return Err(RdmaCmError::Invalid);
        };
        if let Some(rec) = self.ids.get_mut(&id) {
            rec.state = IdState::AddrQuery;
        }
        Ok(if dst.is_any() {
            AddrWork::Loopback
        } else if let SockAddr::Ib { .. } = dst {
            AddrWork::Ib
        } else {
            AddrWork::ResolveIp {
                src: bound,
                dst,
                timeout_ms,
            }
        })
    }

    /// The resolution could not even start: ADDR_QUERY back to ADDR_BOUND,
    /// with no event (the call that started it returns the error).
    pub fn addr_query_failed(&mut self, id: RdmaId) {
        if let Some(rec) = self.ids.get_mut(&id) {
            if rec.state == IdState::AddrQuery {
                rec.state = IdState::AddrBound;
            }
        }
    }

    /// The outcome of an id's address resolution: ADDR_QUERY to
    /// ADDR_RESOLVED (the id takes the address the route chose and its
    /// device, unless bound to one already) or back to ADDR_BOUND, with
    /// the ADDR_RESOLVED or ADDR_ERROR event (the status an errno from the
    /// embedding). False, and no event, if the id is gone or no longer
    /// resolving (destroyed meanwhile).
    pub fn addr_resolved<H: Host<A>>(
        &mut self,
        host: &mut H,
        id: RdmaId,
        outcome: Result<AddrResolution, i32>,
    ) -> bool {
        let Some(rec) = self.ids.get(&id) else {
            return false;
        };
        if rec.state != IdState::AddrQuery {
            return false;
        }
        // An id that resolved to a device takes it, unless the device is
        // going (or there is no memory to record it): then the resolution
        // failed.
        let outcome = match outcome {
            Ok(found) if rec.device.is_none() => {
                let took = found.device.map(|d| self.set_device(id, d));
                match took {
                    Some(Ok(())) => Ok(found),
                    Some(Err(RdmaCmError::NoMemory)) => Err(ENOMEM),
                    Some(Err(_)) | None => Err(ENODEV),
                }
            }
            other => other,
        };
        let Some(rec) = self.ids.get_mut(&id) else {
            return false;
        };
        let event = match outcome {
            Ok(found) => {
                let port = rec.src.map_or(0, |s| s.port());
                rec.src = Some(found.src.with_port(port));
                rec.state = IdState::AddrResolved;
                RdmaEvent::plain(EventKind::AddrResolved, EventStatus::Ok)
            }
            Err(errno) => {
                rec.state = IdState::AddrBound;
                RdmaEvent::plain(EventKind::AddrError, EventStatus::Errno(errno))
            }
        };
        host.event(id, event);
        true
    }
}

/// The unspecified address of `dst`'s family (`cma_bind_addr` without a
/// source): an IPv6 one keeps `dst`'s scope, an AF_IB one its P_Key.
fn wildcard_for(dst: &SockAddr) -> SockAddr {
    match *dst {
        SockAddr::V4 { .. } => SockAddr::V4 {
            addr: [0; 4],
            port: 0,
        },
        SockAddr::V6 { scope_id, .. } => SockAddr::V6 {
            addr: [0; 16],
            port: 0,
            flowinfo: 0,
            scope_id,
        },
        SockAddr::Ib { pkey, .. } => SockAddr::Ib {
            gid: [0; 16],
            sid: 0,
            sid_mask: 0,
            pkey,
            flowinfo: 0,
            scope_id: 0,
        },
    }
}
