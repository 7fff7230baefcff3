// SPDX-License-Identifier: GPL-2.0

//! Addresses and routes through ib_core: the device that owns a local
//! address, `rdma_resolve_addr` (ARP/ND by `rdma_resolve_ip`, whose
//! callback feeds the core), `rdma_resolve_route` (a RoCE path made from
//! the resolved addresses) and `rdma_set_ib_path`.

use super::id::RdmaIdBox;
use super::types::{errno, read_sockaddr_or_unspec, EOPNOTSUPP};
use super::RdmaCmAbi;
use crate::abi::service::with_part;
use crate::bindings;
use crate::proto::cm::DeviceId;
use crate::proto::rdma_cm::route::roce_packet_life_time;
use crate::proto::rdma_cm::service_id_of;
use crate::proto::rdma_cm::{
    roce_path, AddrResolution, AddrWork, IdState, RdmaCmError, RdmaId, Route, RoutePath, SockAddr,
};
use crate::proto::timer::IbaTime;
use crate::rdma::device::Device;
use crate::rdma::gid::GidAttr;
use crate::rdma::mad_path::MadPath;
use crate::rdma::path::path_record;
use crate::rdma::resolution::ResolutionHandler;
use crate::shell::rdma_cm::{HandBack, KernelRdmaCm};
use crate::shell::CmService;
use crate::shell::Peer;
use kernel::ffi::{c_int, c_ulong};
use kernel::prelude::*;

/// A served device's port whose GID table has an id's source address,
/// with that entry held: found for a bind, and the id's only once the core
/// has taken the bind ([`attach_if_taken`]). Dropped, it lets the entry
/// go, so a refused bind leaves the id as it was (6.12 attaches only after
/// the port is taken, and releases on every error path).
pub(super) struct Found {
    pub(super) device: DeviceId,
    ibdev: *mut bindings::ib_device,
    port: u32,
    gid: GidAttr,
}

impl Found {
    /// The id takes the device, port and GID entry, and enters ib_core's
    /// resource tracking.
    pub(super) fn attach(self, b: &RdmaIdBox) {
        // SAFETY: a served device stays registered during the call that
        // found it (its removal waits for the client callbacks, which take
        // the service).
        let device = unsafe { Device::from_raw(self.ibdev) };
        b.take_gid(self.gid, &device, self.port);
    }
}

/// Under the core's lock, after a bind or resolution: `b` takes what was
/// `found` for it if the core put the id on that device (and it has none
/// in C yet). An id destroyed meanwhile is not in the core, so nothing
/// attaches after its destroy has let go of its device.
pub(super) fn attach_if_taken(core: &KernelRdmaCm, b: &RdmaIdBox, found: Option<Found>) {
    if let Some(found) = found.filter(|found| taken_by(core, b, found)) {
        found.attach(b);
    }
}

/// Whether the core put `b`'s id on the device `found` names and the id
/// has none in C yet.
fn taken_by(core: &KernelRdmaCm, b: &RdmaIdBox, found: &Found) -> bool {
    core.get(b.core).and_then(|r| r.device()) == Some(found.device) && b.device_port().0.is_null()
}

/// The served device and port whose GID table has the id's source
/// address (written into the id first), through the id's device address
/// (`rdma_translate_ip` for an address not yet resolved). `NoDevice` if
/// none has it.
pub(super) fn own_device(
    s: &CmService,
    b: &RdmaIdBox,
    addr: &SockAddr,
) -> Result<Found, RdmaCmError> {
    b.write_addrs(Some(*addr), None);
    if b.translate_source().is_err() {
        return Err(RdmaCmError::NoDevice);
    }
    find_device(s, b, None)
}

/// The first port of a device new ids may use (of `only`, if given) with
/// a GID for the id's source address on its network device.
pub(super) fn find_device(
    s: &CmService,
    b: &RdmaIdBox,
    only: Option<DeviceId>,
) -> Result<Found, RdmaCmError> {
    let mut place = 0;
    while let Some(at) = s.device_at(place) {
        place += 1;
        let Some((id, identity)) = at else {
            continue;
        };
        if only.is_some_and(|d| d != id) {
            continue;
        }
        let ibdev = identity as *mut bindings::ib_device;
        // SAFETY: a served device stays registered during the call (its
        // removal waits for the client callbacks, which take the service).
        let device = unsafe { Device::from_raw(ibdev) };
        for port in device.ports() {
            let gid = if device.is_iwarp(port) {
                b.find_iwarp_gid(&device, port)
            } else {
                b.find_roce_gid(&device, port)
            };
            if let Some(gid) = gid {
                return Ok(Found {
                    device: id,
                    ibdev,
                    port,
                    gid,
                });
            }
        }
    }
    Err(RdmaCmError::NoDevice)
}

impl RdmaCmAbi {
    /// `rdma_resolve_addr`: binds if needed, then starts ARP/ND; the
    /// outcome arrives in [`ResolutionCallbacks`].
    pub(crate) fn resolve_addr(
        &self,
        s: &CmService,
        b: &RdmaIdBox,
        src: Option<SockAddr>,
        dst: SockAddr,
        timeout_ms: u32,
    ) -> c_int {
        // Only an IDLE id given a source address looks for its device;
        // any other id keeps its address and device untouched (6.12 once
        // rewrote a listener's: C bug 4). A wildcard names no device.
        // The state the id's last change left in its box, as 6.12 reads
        // it without a lock; the core checks it again under its own.
        let idle = b.mirrored_state_is(IdState::Idle);
        let bind_to = match (idle, src) {
            (true, Some(a)) => a.with_port(0),
            _ => SockAddr::V4 {
                addr: [0; 4],
                port: 0,
            },
        };
        let (cx, found) = self.bind_context(s, b, &bind_to);
        let work = self.call_mirrored(s, b, |core, _| {
            let work = core.resolve_addr(b.core, src, dst, timeout_ms, &cx);
            attach_if_taken(core, b, found);
            work
        });
        let work = match work {
            Ok(w) => w,
            Err(e) => return errno(e),
        };
        let started = match work {
            AddrWork::ResolveIp { .. } => {
                b.start_resolve_ip::<ResolutionCallbacks>(timeout_ms, b.core.0)
            }
            // Loopback and AF_IB destinations come later.
            AddrWork::Loopback | AddrWork::Ib => EOPNOTSUPP,
        };
        if started != 0 {
            self.call_mirrored(s, b, |core, _| core.addr_query_failed(b.core));
        }
        started
    }

    /// The outcome of an id's ARP/ND: the source address the route chose,
    /// the device that owns it, then ADDR_RESOLVED or ADDR_ERROR, delivered
    /// here in ib_core's address work as the C rdma_cm does: not queued
    /// behind other ids' events, and without running their handlers on
    /// that ordered queue (which would hold up every other resolution).
    /// The id's own order holds: an id resolving has no other event
    /// pending, and all its address events come from this queue.
    fn addr_done(&self, s: &CmService, id: RdmaId, resolved: Result<SockAddr, c_int>) {
        let Some(b) = self.id_box(id) else {
            return;
        };
        let mut taken = None;
        // The id's port and device as its box mirrors them (nothing else
        // changes them while it resolves): the core's lock is taken once.
        let outcome = resolved.and_then(|addr| {
            let port = b.addrs().0.map_or(0, |a| a.port());
            b.write_addrs(Some(addr.with_port(port)), None);
            if b.device().is_some() {
                // Bound to a device already: the address is on it.
                return Ok(AddrResolution {
                    src: addr,
                    device: None,
                });
            }
            find_device(s, &b, None).map_err(errno).map(|found| {
                let device = Some(found.device);
                taken = Some(found);
                AddrResolution { src: addr, device }
            })
        });
        // The handler lock before the core's, as 6.12's `addr_handler`: a
        // call the result lets in (RESOLVE_ROUTE) cannot have its event
        // delivered before this one. Without an event the core changed
        // nothing. The id takes its device once the core's lock is
        // released (its ib_core tracking entry and GID reference are no
        // business of the core's), under the handler lock, which a destroy
        // of the id takes before it lets go of the device; the consumer
        // hears of the result after.
        self.call_delivering(
            s,
            &b,
            HandBack::Always,
            |core, host| {
                let _ = core.addr_resolved(host, id, outcome);
                taken.filter(|found| taken_by(core, &b, found))
            },
            |taken| {
                if let Some(found) = taken.filter(|_| !b.destroying()) {
                    found.attach(&b);
                }
            },
        );
    }

    /// `rdma_resolve_route`: a RoCE path from the resolved addresses (the
    /// consumer's type of service and ACK timeout), then ROUTE_RESOLVED.
    /// `in_call`: the caller's handler may run in its own call (the
    /// rdma_ucm surface's only queues the event), so an event the route
    /// gives at once is delivered here rather than by the delivery work.
    pub(crate) fn resolve_route(
        &self,
        s: &CmService,
        b: &RdmaIdBox,
        timeout_ms: u32,
        in_call: bool,
    ) -> c_int {
        let work = match self.call(s, |core, _| core.resolve_route(b.core, timeout_ms)) {
            Ok(w) => w,
            Err(e) => return errno(e),
        };
        let device = b.device();
        if device.as_ref().is_some_and(|(d, port)| d.is_iwarp(*port)) {
            // An iWARP connection finds its own way (TCP): no path, as
            // 6.12's `cma_resolve_iw_route`.
            let route = Route {
                path: Default::default(),
                peer: None,
                ack_delay: IbaTime::new(0),
            };
            self.route_found(s, b, Ok(route), in_call);
            return 0;
        }
        let roce = device.is_some_and(|(d, port)| d.is_roce(port));
        if !roce {
            // IB: a path query to the SA; the outcome arrives in
            // `ResolutionCallbacks` (rxe, being RoCE, cannot run this).
            let service_id = self.read(|core| {
                core.get(b.core)
                    .and_then(|r| Some(service_id_of(r.port_space(), &r.dst()?)))
            });
            let ret = b.start_path_query::<ResolutionCallbacks>(
                timeout_ms,
                b.core.0,
                service_id.unwrap_or(0),
                work.tos,
            );
            if ret != 0 {
                self.call(s, |core, _| core.route_query_failed(b.core));
            }
            return ret;
        }
        let path = match self.roce_route(b, work.tos) {
            Ok(path) => path,
            Err(e) => {
                self.call(s, |core, _| core.route_query_failed(b.core));
                return e;
            }
        };
        self.route_found(s, b, Ok(route_on(s, work.device, path)), in_call);
        0
    }

    /// Hands the route worked out in the id's own call to the core; its
    /// event goes to the delivery work, or with `in_call` to the id's
    /// handler here (`call_delivering`: no later event of the id is
    /// delivered first), and then only if no event is waiting or being
    /// delivered (`HandBack::IfQuiet`), so it passes no earlier one
    /// either. A consumer's handler is never called here: its own call
    /// may hold the locks its handler takes.
    fn route_found(
        &self,
        s: &CmService,
        b: &RdmaIdBox,
        route: Result<Route<Peer>, i32>,
        in_call: bool,
    ) {
        if !in_call {
            self.call_mirrored(s, b, |core, host| core.route_resolved(host, b.core, route));
            return;
        }
        self.call_delivering(
            s,
            b,
            HandBack::IfQuiet,
            |core, host| {
                core.route_resolved(host, b.core, route);
            },
            |()| {},
        );
    }

    /// A resolved RoCE id's route: the core builds the path from the id's
    /// addresses and its link, stored as the id's record with its L2 part;
    /// the path is what the record says (no need to read it back).
    fn roce_route(&self, b: &RdmaIdBox, tos: Option<u8>) -> Result<RoutePath, c_int> {
        // 6.12's default type of service (configfs default_roce_tos).
        let tos = tos.unwrap_or(0);
        let link = b.roce_link(tos)?;
        let (Some(src), Some(dst)) = b.addrs() else {
            return Err(EINVAL.to_errno());
        };
        let plt = roce_packet_life_time(b.ack_timeout());
        let path = roce_path(&src, &dst, tos, plt, &link);
        match b.set_route(&path_record(&path)) {
            0 => Ok(path),
            e => Err(e),
        }
    }

    /// The core's route of the path record the id holds.
    fn route_of(&self, s: &CmService, b: &RdmaIdBox, device: DeviceId) -> Result<Route<Peer>, i32> {
        b.route_path().map(|path| route_on(s, device, path))
    }

    /// The CM's address of a connecting id's peer on its device, from the
    /// path record the id holds, worked out in its own call before the
    /// core's lock is taken (a route is resolved without one, as 6.12
    /// makes the address handle only in `ib_send_cm_req`). `None` on
    /// iWARP, whose connection finds its own way.
    pub(super) fn peer_for_connect(&self, b: &RdmaIdBox) -> Result<Option<MadPath>, c_int> {
        if b.device().is_some_and(|(d, port)| d.is_iwarp(port)) {
            return Ok(None);
        }
        b.mad_path().map(Some)
    }

    /// `rdma_set_ib_path`: the consumer's path on an ADDR_RESOLVED id,
    /// which becomes ROUTE_RESOLVED at once.
    pub(crate) fn set_ib_path(
        &self,
        s: &CmService,
        b: &RdmaIdBox,
        rec: &bindings::sa_path_rec,
    ) -> c_int {
        let state = self.read(|core| core.get(b.core).map(|r| (r.state(), r.device())));
        let Some((crate::proto::rdma_cm::IdState::AddrResolved, Some(device))) = state else {
            return EINVAL.to_errno();
        };
        let ret = b.set_route(rec);
        if ret != 0 {
            return ret;
        }
        match self.route_of(s, b, device) {
            Ok(route) => super::types::ret(self.call(s, |core, _| core.set_route(b.core, route))),
            Err(e) => e,
        }
    }
}

impl RdmaCmAbi {
    /// The outcome of an IB id's SA path query: its route, then
    /// ROUTE_RESOLVED or ROUTE_ERROR.
    fn route_done(&self, s: &CmService, id: RdmaId, found: Result<&bindings::sa_path_rec, c_int>) {
        let Some(b) = self.id_box(id) else {
            return;
        };
        let device = self.read(|core| core.get(id).and_then(|r| r.device()));
        let outcome = match (found, device) {
            (Ok(rec), Some(device)) => match b.set_route(rec) {
                0 => self.route_of(s, &b, device),
                e => Err(e),
            },
            (Ok(_), None) => Err(EINVAL.to_errno()),
            (Err(e), _) => Err(e),
        };
        self.call_mirrored(s, &b, |core, host| core.route_resolved(host, id, outcome));
    }
}

/// The resolutions' callbacks as rdma_cm handles them (named when each
/// resolution starts).
struct ResolutionCallbacks;

impl ResolutionHandler for ResolutionCallbacks {
    fn address_resolved(token: u64, outcome: Result<SockAddr, c_int>) {
        with_part(|s, cm: &RdmaCmAbi| cm.addr_done(s, RdmaId(token), outcome));
    }

    fn route_resolved(token: u64, outcome: Result<&bindings::sa_path_rec, c_int>) {
        with_part(|s, cm: &RdmaCmAbi| cm.route_done(s, RdmaId(token), outcome));
    }
}

/// The core's route of `path` on a served device, with the device's ACK
/// delay (0 if it is gone). It has no peer: the peer's address handle
/// attributes wait for the connect that needs them (`peer_for_connect`),
/// as 6.12 makes them only in `ib_send_cm_req`.
fn route_on(s: &CmService, device: DeviceId, path: RoutePath) -> Route<Peer> {
    Route {
        path,
        peer: None,
        ack_delay: s
            .device_info(device)
            .map_or(IbaTime::new(0), |d| d.ack_delay),
    }
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
    // SAFETY: per this function's contract. An unspecified family (0)
    // counts as no address.
    unsafe { read_sockaddr_or_unspec(sa) }
}
