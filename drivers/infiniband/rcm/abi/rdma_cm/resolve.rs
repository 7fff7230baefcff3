// SPDX-License-Identifier: GPL-2.0

//! Addresses and routes through ib_core: the device that owns a local
//! address, `rdma_resolve_addr` (ARP/ND by `rdma_resolve_ip`, whose
//! callback feeds the core), `rdma_resolve_route` (a RoCE path made from
//! the resolved addresses) and `rdma_set_ib_path`.

use super::id::RdmaIdBox;
use super::types::{core_sockaddr, errno, read_sockaddr, EOPNOTSUPP};
use super::RdmaCmAbi;
use crate::abi::service::{with_service, Service};
use crate::bindings;
use crate::proto::cm::DeviceId;
use crate::proto::rdma_cm::route::roce_packet_life_time;
use crate::proto::rdma_cm::{AddrResolution, AddrWork, RdmaCmError, RdmaId, Route, SockAddr};
use crate::proto::timer::IbaTime;
use crate::rdma::device::Device;
use crate::rdma::mad::MadPath;
use crate::rdma::path::route_path;
use crate::shell::Peer;
use kernel::ffi::{c_int, c_ulong};
use kernel::prelude::*;

/// The served device and port whose GID table has the id's source
/// address (written into the id first), through the id's device address
/// (`rdma_translate_ip` for an address not yet resolved). `NoDevice` if
/// none has it.
pub(super) fn own_device(
    s: &Service,
    b: &RdmaIdBox,
    addr: &SockAddr,
) -> Result<DeviceId, RdmaCmError> {
    b.write_addrs(Some(*addr), None);
    // SAFETY: the id's fields are ours to write during its own call.
    if unsafe { bindings::rcm_h_rdma_translate(b.private()) } != 0 {
        return Err(RdmaCmError::NoDevice);
    }
    attach(s, b)
}

/// Binds the id to the first served device and port with a GID for its
/// source address on its network device.
fn attach(s: &Service, b: &RdmaIdBox) -> Result<DeviceId, RdmaCmError> {
    let devices = s.devices().map_err(|_| RdmaCmError::NoMemory)?;
    for (id, identity) in devices.iter() {
        let ibdev = *identity as *mut bindings::ib_device;
        // SAFETY: a served device stays registered during the call (its
        // removal waits for the client callbacks, which take the service).
        let device = unsafe { Device::from_raw(ibdev) };
        for port in device.ports() {
            // SAFETY: the id's fields are ours to write; the device is
            // registered.
            if unsafe { bindings::rcm_h_rdma_attach(b.private(), ibdev, port) } == 0 {
                return Ok(*id);
            }
        }
    }
    Err(RdmaCmError::NoDevice)
}

impl RdmaCmAbi {
    /// `rdma_resolve_addr`: binds if needed, then starts ARP/ND; the
    /// outcome arrives in [`rcm_rdma_addr_done`].
    pub(super) fn resolve_addr(
        &self,
        s: &Service,
        b: &RdmaIdBox,
        src: Option<SockAddr>,
        dst: SockAddr,
        timeout_ms: u32,
    ) -> c_int {
        let bind_to = src.unwrap_or(dst);
        let cx = self.bind_context(s, b, &bind_to.with_port(0));
        let cx = if src.is_none() {
            // The wildcard of dst's family: no device to find.
            crate::proto::rdma_cm::BindContext {
                device: Err(RdmaCmError::NoDevice),
                ..cx
            }
        } else {
            cx
        };
        let work = self.call(s, |core, _| {
            core.resolve_addr(b.core, src, dst, timeout_ms, &cx)
        });
        self.sync(b);
        let work = match work {
            Ok(w) => w,
            Err(e) => return errno(e),
        };
        let started = match work {
            // SAFETY: the id's addresses were written by `sync`; its
            // device address lives with it until the resolution is over
            // (destroy cancels it).
            AddrWork::ResolveIp { .. } => unsafe {
                bindings::rcm_h_rdma_resolve_ip(
                    b.private(),
                    timeout_ms as c_int,
                    u64::from(b.core.0),
                )
            },
            // Loopback and AF_IB destinations come later.
            AddrWork::Loopback | AddrWork::Ib => EOPNOTSUPP,
        };
        if started != 0 {
            self.call(s, |core, _| core.addr_query_failed(b.core));
            self.sync(b);
        }
        started
    }

    /// The outcome of an id's ARP/ND: the source address the route chose,
    /// the device that owns it, then ADDR_RESOLVED or ADDR_ERROR.
    fn addr_done(&self, s: &Service, id: RdmaId, status: c_int, src: *const bindings::sockaddr) {
        let Some(b) = self.id_box(id) else {
            return;
        };
        let outcome = if status != 0 {
            Err(status)
        } else {
            // SAFETY: ib_core passes the resolved source address.
            match unsafe { read_sockaddr(src) } {
                Err(e) => Err(e),
                Ok(found) => {
                    let port = self
                        .read(|core| core.get(id).and_then(|r| r.src()))
                        .map_or(0, |a| a.port());
                    b.write_addrs(Some(found.with_port(port)), None);
                    match self.read(|core| core.get(id).and_then(|r| r.device())) {
                        // Bound to a device already: the address is on it.
                        Some(device) => Ok(AddrResolution { src: found, device }),
                        None => attach(s, &b)
                            .map(|device| AddrResolution { src: found, device })
                            .map_err(errno),
                    }
                }
            }
        };
        self.call(s, |core, host| core.addr_resolved(host, id, outcome));
        self.sync(&b);
    }

    /// `rdma_resolve_route`: a RoCE path from the resolved addresses (the
    /// consumer's type of service and ACK timeout), then ROUTE_RESOLVED.
    pub(super) fn resolve_route(&self, s: &Service, b: &RdmaIdBox, timeout_ms: u32) -> c_int {
        let work = match self.call(s, |core, _| core.resolve_route(b.core, timeout_ms)) {
            Ok(w) => w,
            Err(e) => return errno(e),
        };
        let (ibdev, port) = b.device_port();
        // SAFETY: the id's device is registered while the id has it.
        let roce = !ibdev.is_null() && unsafe { Device::from_raw(ibdev) }.is_roce(port);
        let ret = if roce {
            let plt = roce_packet_life_time(b.ack_timeout());
            // 6.12's default type of service (configfs default_roce_tos).
            let tos = work.tos.unwrap_or(0);
            // SAFETY: the id's route is ours to write during its own call.
            unsafe { bindings::rcm_h_rdma_roce_route(b.private(), tos, plt) }
        } else {
            // IB path queries through the SA come later.
            EOPNOTSUPP
        };
        if ret != 0 {
            self.call(s, |core, _| core.route_query_failed(b.core));
            return ret;
        }
        let route = self.route_of(s, b, work.device);
        self.call(s, |core, host| core.route_resolved(host, b.core, route));
        self.sync(b);
        0
    }

    /// The core's route of the path record the id holds.
    fn route_of(&self, s: &Service, b: &RdmaIdBox, device: DeviceId) -> Result<Route<Peer>, i32> {
        let p = b.private();
        // SAFETY: the id's route and device address live with it.
        let (rec, sgid_attr) = unsafe {
            (
                core::ptr::addr_of!((*p).id.route.path_rec).read(),
                core::ptr::addr_of!((*p).id.route.addr.dev_addr.sgid_attr).read(),
            )
        };
        let (ibdev, _) = b.device_port();
        if rec.is_null() || ibdev.is_null() {
            return Err(EINVAL.to_errno());
        }
        // SAFETY: the record is the id's (valid); the device registered.
        let (path, _gid) = unsafe { MadPath::from_path_record(ibdev, rec, sgid_attr) }
            .map_err(|e| e.to_errno())?;
        let ack_delay = s
            .device_info(device)
            .map_or(IbaTime::new(0), |d| d.ack_delay);
        Ok(Route {
            // SAFETY: the record is valid (above).
            path: route_path(unsafe { &*rec }),
            peer: Some(Peer { device, path }),
            ack_delay,
        })
    }

    /// `rdma_set_ib_path`: the consumer's path on an ADDR_RESOLVED id,
    /// which becomes ROUTE_RESOLVED at once.
    pub(super) fn set_ib_path(
        &self,
        s: &Service,
        b: &RdmaIdBox,
        rec: *const bindings::sa_path_rec,
    ) -> c_int {
        let state = self.read(|core| core.get(b.core).map(|r| (r.state(), r.device())));
        let Some((crate::proto::rdma_cm::IdState::AddrResolved, Some(device))) = state else {
            return EINVAL.to_errno();
        };
        // SAFETY: the consumer passes a valid record; the route is ours.
        let ret = unsafe { bindings::rcm_h_rdma_set_route(b.private(), rec) };
        if ret != 0 {
            return ret;
        }
        match self.route_of(s, b, device) {
            Ok(route) => super::types::ret(self.call(s, |core, _| core.set_route(b.core, route))),
            Err(e) => e,
        }
    }
}

/// ib_core's address resolution finished (its work queue).
///
/// # Safety
///
/// Called by `rcm_rdma_helpers.c` with ib_core's arguments.
#[no_mangle]
pub(crate) unsafe extern "C" fn rcm_rdma_addr_done(
    token: u64,
    status: c_int,
    src: *const bindings::sockaddr,
) {
    let id = RdmaId(token as u32);
    with_service(|s| s.consumer().rdma_cm.addr_done(&s, id, status, src));
}

/// A timeout from C (`unsigned long`) in the core's milliseconds.
pub(super) fn timeout_ms(t: c_ulong) -> u32 {
    u32::try_from(t).unwrap_or(u32::MAX)
}

/// A consumer's address, if it passed one.
///
/// # Safety
///
/// A non-NULL `sa` must be a valid socket address.
pub(super) unsafe fn optional_sockaddr(
    sa: *const bindings::sockaddr,
) -> Result<Option<SockAddr>, c_int> {
    if sa.is_null() {
        return Ok(None);
    }
    let mut c = bindings::rcm_h_sockaddr::default();
    // SAFETY: per this function's contract.
    let ret = unsafe { bindings::rcm_h_sockaddr_read(sa, &mut c) };
    if ret != 0 {
        return Err(ret);
    }
    // An unspecified family (0) counts as no address.
    Ok(core_sockaddr(&c))
}
