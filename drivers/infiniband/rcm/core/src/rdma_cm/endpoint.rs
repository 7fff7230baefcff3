// SPDX-License-Identifier: GPL-2.0

//! rdma_cm ids of a host, and the calls that name them by address before
//! any message flows: create, the REUSEADDR/AFONLY options, bind, listen
//! (its port checks) and destroy, with 6.12's transitions and errnos.
//! What the kernel decides (which device owns an address, the namespace's
//! port range, randomness, capabilities) comes in as arguments.

use super::addr::{Family, IpKey, SockAddr};
use super::bind::{BindError, BindRequest, NetId, PortTable};
use super::cm_response::CmResponse;
use super::devices::DeviceIndex;
use super::host::{Host, IwOptions};
use super::id_list::{IdLink, IdList};
use super::id_slots::IdSlots;
use super::multicast::{GroupId, Membership};
use super::port_space::{ib_address_space, PortSpace};
use super::route::Route;
use super::state::IdState;
use crate::cm::store::{Collections, OrderedMap};
use crate::cm::{CmError, CommId, DeviceId};

/// An rdma_cm id of this host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RdmaId(pub u64);

/// Why an rdma_cm call was refused (each ABI maps it to its errno).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RdmaCmError {
    /// Not in this state, or a bad argument (`-EINVAL`).
    Invalid,
    /// An address family rdma_cm has no use for (`-EAFNOSUPPORT`).
    FamilyNotSupported,
    /// A port space the address family cannot bind in
    /// (`-EPROTONOSUPPORT`).
    PortSpaceNotSupported,
    /// No device has the address (`-ENODEV`, or what address translation
    /// reported).
    NoDevice,
    /// The port and address are taken (`-EADDRINUSE`).
    AddrInUse,
    /// No port can be had (`-EADDRNOTAVAIL`).
    AddrNotAvailable,
    /// A privileged port without the capability (`-EACCES`).
    NoPermission,
    /// No such id (the ABIs check their own handles first).
    NoSuchId,
    /// Out of memory (`-ENOMEM`).
    NoMemory,
    /// The CM refused (each ABI maps it as its ib_cm call would).
    Cm(CmError),
    /// The consumer's QP could not be moved (a negative errno).
    Qp(i32),
}

impl From<CmError> for RdmaCmError {
    fn from(e: CmError) -> Self {
        match e {
            CmError::NoMemory => RdmaCmError::NoMemory,
            e => RdmaCmError::Cm(e),
        }
    }
}

impl From<BindError> for RdmaCmError {
    fn from(e: BindError) -> Self {
        match e {
            BindError::InUse => RdmaCmError::AddrInUse,
            BindError::NotAvailable => RdmaCmError::AddrNotAvailable,
            BindError::NoPermission => RdmaCmError::NoPermission,
            BindError::AlreadyBound => RdmaCmError::Invalid,
            BindError::NoMemory => RdmaCmError::NoMemory,
        }
    }
}

/// What the kernel knows that a bind needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BindContext {
    /// The device that owns the address (`cma_translate_addr` and
    /// `cma_acquire_dev_by_src_ip`); not asked for wildcard addresses.
    pub device: Result<DeviceId, RdmaCmError>,
    /// The namespace's `ip_local_port_range`.
    pub local_ports: (u16, u16),
    /// A random number for the ephemeral port search.
    pub random: u32,
    /// The caller has `CAP_NET_BIND_SERVICE`.
    pub privileged: bool,
    /// The namespace's `net.ipv6.bindv6only`.
    pub bindv6only: bool,
}

/// The QP type an id connects (`enum ib_qp_type`, the ones rdma_cm
/// serves).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RdmaQpType {
    /// `IB_QPT_RC`.
    Rc,
    /// `IB_QPT_UC`.
    Uc,
    /// `IB_QPT_UD` (connects through SIDR).
    Ud,
}

/// One id.
#[derive(Clone, Copy, Debug)]
pub struct Id<A> {
    pub(crate) state: IdState,
    pub(crate) net: NetId,
    pub(crate) ps: PortSpace,
    pub(crate) src: Option<SockAddr>,
    pub(crate) dst: Option<SockAddr>,
    pub(crate) device: Option<DeviceId>,
    pub(crate) reuseaddr: bool,
    pub(crate) afonly: bool,
    /// AFONLY was set explicitly (else bind derives it).
    pub(crate) afonly_set: bool,
    pub(crate) backlog: u32,
    pub(crate) qp_type: RdmaQpType,
    /// The CM id of the connection.
    pub(crate) cm: Option<CommId>,
    /// The CM listener a listening id shares.
    pub(crate) cm_listener: Option<CommId>,
    pub(crate) route: Option<Route<A>>,
    /// A QP was created through rdma_cm (`rdma_create_qp`): rdma_cm moves it.
    pub(crate) has_qp: bool,
    pub(crate) qp_num: u32,
    pub(crate) srq: bool,
    /// Our starting PSN.
    pub(crate) psn: u32,
    /// A UD id's Q_Key (0: not chosen yet).
    pub(crate) qkey: u32,
    pub(crate) tos: Option<u8>,
    /// ECE (vendor id, options) to offer.
    pub(crate) ece: (u32, u32),
    /// How long its REQ or SIDR_REQ waits for an answer, how often it is
    /// sent again.
    pub(crate) cm_response: CmResponse,
    /// The listener a passive id came from.
    pub(crate) listener: Option<RdmaId>,
    /// rdma_cm gave up on the connection (CONNECT_ERROR): the CM's later
    /// news about it is not reported (6.12 would add a REJECTED).
    pub(crate) gave_up: bool,
    /// The connection goes through the device's iWARP CM, not the CM.
    pub(crate) iw: bool,
    /// A RoCE route was resolved toward `dst`: a change of its neighbour's
    /// hardware address is this id's concern (see `netevent`).
    pub(crate) watches_neighbour: bool,
    /// The state DEVICE_REMOVAL interrupted: a resolution then under way
    /// is still the embedding's to cancel when the id is destroyed.
    pub(crate) before_removal: Option<IdState>,
    /// Its place on its device's list of ids (see `devices`).
    pub(crate) on_device: IdLink,
    /// Its place on its neighbour's list of watchers, while
    /// `watches_neighbour` (see `netevent`).
    pub(crate) on_watch: IdLink,
}

impl<A> Id<A> {
    /// A new IDLE id in namespace `net` and port space `ps`, connecting
    /// `qp_type` QPs, starting its packets at `psn`.
    pub(crate) const fn new(net: NetId, ps: PortSpace, qp_type: RdmaQpType, psn: u32) -> Self {
        Id {
            state: IdState::Idle,
            net,
            ps,
            src: None,
            dst: None,
            device: None,
            reuseaddr: false,
            afonly: false,
            afonly_set: false,
            backlog: 0,
            qp_type,
            cm: None,
            cm_listener: None,
            route: None,
            has_qp: false,
            qp_num: 0,
            srq: false,
            psn: psn & 0x00FF_FFFF,
            qkey: 0,
            tos: None,
            ece: (0, 0),
            cm_response: CmResponse::DEFAULT,
            listener: None,
            gave_up: false,
            iw: false,
            watches_neighbour: false,
            before_removal: None,
            on_device: IdLink::zero(),
            on_watch: IdLink::zero(),
        }
    }
}

impl<A: Copy> Id<A> {
    /// The state.
    pub fn state(&self) -> IdState {
        self.state
    }
    /// The bound source address, with its port.
    pub fn src(&self) -> Option<SockAddr> {
        self.src
    }
    /// The destination being resolved or connected to.
    pub fn dst(&self) -> Option<SockAddr> {
        self.dst
    }
    /// The device the id is bound to, if any (wildcard ids have none).
    pub fn device(&self) -> Option<DeviceId> {
        self.device
    }
    /// The listen backlog.
    pub fn backlog(&self) -> u32 {
        self.backlog
    }
    /// The port space.
    pub fn port_space(&self) -> PortSpace {
        self.ps
    }
    /// The QP type.
    pub fn qp_type(&self) -> RdmaQpType {
        self.qp_type
    }
    /// The route, once resolved (or, on a passive id, from the REQ).
    pub fn route(&self) -> Option<&Route<A>> {
        self.route.as_ref()
    }
    /// The CM id of the connection.
    pub fn cm(&self) -> Option<CommId> {
        self.cm
    }
    /// The listener a passive id came from.
    pub fn listener(&self) -> Option<RdmaId> {
        self.listener
    }
    /// Our starting PSN.
    pub fn psn(&self) -> u32 {
        self.psn
    }
    /// A UD id's Q_Key (0 before it has one).
    pub fn qkey(&self) -> u32 {
        self.qkey
    }
    /// The connection goes through the device's iWARP CM.
    pub fn iwarp(&self) -> bool {
        self.iw
    }
    /// The options an iWARP CM id of this id takes.
    pub fn iw_options(&self) -> IwOptions {
        IwOptions {
            tos: self.tos,
            afonly: self.afonly,
        }
    }
}

/// The rdma_cm ids of a host, reaching their peers through CM addresses
/// `A`.
pub struct RdmaCm<C: Collections, A> {
    pub(crate) ids: IdSlots<Id<A>, C>,
    pub(crate) ports: PortTable<C>,
    /// The rdma_cm id of each connection's CM id.
    pub(crate) by_comm: C::Map<CommId, RdmaId>,
    /// The CM listeners rdma_cm holds, with how many ids share each.
    pub(crate) cm_listeners: C::Map<CommId, u32>,
    /// Multicast memberships.
    pub(crate) groups: C::Map<GroupId, Membership>,
    /// Each id's memberships (the keys of `groups`, by id).
    pub(crate) groups_of: C::Map<(RdmaId, GroupId), ()>,
    pub(crate) next_group: u32,
    /// The ids on each device, and the devices that are going.
    pub(crate) devices: DeviceIndex<C>,
    /// The ids that watch their destination's neighbour entry, listed by
    /// its address (see `netevent`).
    pub(crate) watchers: C::Map<IpKey, IdList>,
}

impl<C: Collections, A: Copy + Ord> Default for RdmaCm<C, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Collections, A: Copy + Ord> RdmaCm<C, A> {
    /// No ids.
    pub fn new() -> Self {
        RdmaCm {
            ids: IdSlots::new(),
            ports: PortTable::new(),
            by_comm: OrderedMap::new_empty(),
            cm_listeners: OrderedMap::new_empty(),
            groups: OrderedMap::new_empty(),
            groups_of: OrderedMap::new_empty(),
            next_group: 1,
            devices: DeviceIndex::new(),
            watchers: OrderedMap::new_empty(),
        }
    }

    /// A new IDLE id in namespace `net` and port space `ps`, connecting
    /// `qp_type` QPs, starting its packets at `psn`
    /// (`__rdma_create_kernel_id`).
    pub fn create_id(
        &mut self,
        net: NetId,
        ps: PortSpace,
        qp_type: RdmaQpType,
        psn: u32,
    ) -> Result<RdmaId, RdmaCmError> {
        self.insert_id(Id::new(net, ps, qp_type, psn))
    }

    /// Adds an id (on its device, if it has one: `NoDevice` if that is
    /// going).
    pub(crate) fn insert_id(&mut self, record: Id<A>) -> Result<RdmaId, RdmaCmError> {
        if let Some(dev) = record.device {
            if self.devices.is_going(dev) {
                return Err(RdmaCmError::NoDevice);
            }
        }
        let id = self.ids.insert(record)?;
        if let Some(dev) = record.device {
            if let Err(e) = self.attach_to(dev, id) {
                self.ids.remove(&id);
                return Err(e);
            }
        }
        Ok(id)
    }

    /// Removes `id` from the table and from the lists it is on; its
    /// record.
    pub(crate) fn remove_id(&mut self, id: RdmaId) -> Option<Id<A>> {
        let rec = self.ids.remove(&id)?;
        self.off_device(id, &rec);
        self.unwatch(id, &rec);
        Some(rec)
    }

    /// An id.
    pub fn get(&self, id: RdmaId) -> Option<&Id<A>> {
        self.ids.get(&id)
    }

    /// `rdma_set_reuseaddr`: while IDLE, or to set it outside LISTEN.
    pub fn set_reuseaddr(&mut self, id: RdmaId, reuse: bool) -> Result<(), RdmaCmError> {
        let r = self.ids.get_mut(&id).ok_or(RdmaCmError::NoSuchId)?;
        if (reuse && r.state != IdState::Listen) || r.state == IdState::Idle {
            r.reuseaddr = reuse;
            Ok(())
        } else {
            Err(RdmaCmError::Invalid)
        }
    }

    /// `rdma_set_afonly`: while IDLE or ADDR_BOUND.
    pub fn set_afonly(&mut self, id: RdmaId, afonly: bool) -> Result<(), RdmaCmError> {
        let r = self.ids.get_mut(&id).ok_or(RdmaCmError::NoSuchId)?;
        if matches!(r.state, IdState::Idle | IdState::AddrBound) {
            r.afonly = afonly;
            r.afonly_set = true;
            Ok(())
        } else {
            Err(RdmaCmError::Invalid)
        }
    }

    /// `rdma_bind_addr`: IDLE -> ADDR_BOUND with a port. Nothing changes
    /// on failure.
    pub fn bind_addr(
        &mut self,
        id: RdmaId,
        addr: SockAddr,
        cx: &BindContext,
    ) -> Result<u16, RdmaCmError> {
        self.bind_to(id, addr, None, cx)
    }

    /// Binds as [`RdmaCm::bind_addr`]; with the destination an id resolves
    /// (an ephemeral port is then unique per destination).
    pub(crate) fn bind_to(
        &mut self,
        id: RdmaId,
        addr: SockAddr,
        dst: Option<SockAddr>,
        cx: &BindContext,
    ) -> Result<u16, RdmaCmError> {
        let r = self.ids.get(&id).ok_or(RdmaCmError::NoSuchId)?;
        if r.state != IdState::Idle {
            return Err(RdmaCmError::Invalid);
        }
        // A link-local address names its interface by scope.
        if let SockAddr::V6 {
            addr: a, scope_id, ..
        } = addr
        {
            if a[0] == 0xfe && a[1] & 0xc0 == 0x80 && scope_id == 0 {
                return Err(RdmaCmError::Invalid);
            }
        }
        let device = if addr.is_any() {
            None
        } else {
            Some(cx.device?)
        };
        let afonly = match (r.afonly_set, addr.family()) {
            (true, _) => r.afonly,
            (false, Family::Inet) => true,
            (false, Family::Inet6) => cx.bindv6only,
            (false, Family::Ib) => r.afonly,
        };
        // An AF_IB address picks its space by its service id, whose
        // space bits are then filled in.
        let (ps, addr) = match addr {
            SockAddr::Ib { sid, sid_mask, .. } => {
                let (ps, sid, sid_mask) = ib_address_space(r.ps, sid, sid_mask)
                    .ok_or(RdmaCmError::PortSpaceNotSupported)?;
                (ps, addr.with_service_id(sid, sid_mask))
            }
            _ => (r.ps, addr),
        };
        let req = BindRequest {
            net: r.net,
            ps,
            src: addr,
            dst,
            reuseaddr: r.reuseaddr,
            afonly,
            privileged: cx.privileged,
        };
        if device.is_some_and(|d| self.devices.is_going(d)) {
            return Err(RdmaCmError::NoDevice);
        }
        let port = self
            .ports
            .bind(id.0, &req, cx.local_ports, cx.random)
            .map_err(RdmaCmError::from)?;
        if let Some(dev) = device {
            if let Err(e) = self.attach_to(dev, id) {
                self.ports.unbind(id.0);
                return Err(e);
            }
        }
        if let Some(rec) = self.ids.get_mut(&id) {
            rec.state = IdState::AddrBound;
            rec.src = Some(addr.with_port(port));
            rec.dst = dst;
            rec.device = device;
            rec.afonly = afonly;
        }
        Ok(port)
    }

    /// `rdma_destroy_id`: the id's CM id goes (with the REJ, DREQ or DREP
    /// its state calls for), a listener's share of its CM listener, its
    /// port. Returns what the embedding must cancel: the id's pending
    /// address or route resolution (its state then, or the state a device
    /// removal interrupted).
    pub fn destroy<H: Host<A>>(
        &mut self,
        host: &mut H,
        id: RdmaId,
    ) -> Result<IdState, RdmaCmError> {
        if self.ids.get(&id).is_none() {
            return Err(RdmaCmError::NoSuchId);
        }
        self.leave_all(host, id);
        let rec = self.remove_id(id).ok_or(RdmaCmError::NoSuchId)?;
        if let Some(holder) = rec.cm_listener {
            self.drop_cm_listener(host, holder);
        }
        if let Some(comm) = rec.cm {
            self.by_comm.remove(&comm);
            // Gone already if the CM reported it destroyed.
            let _ = host.cm(|ep, now, out| ep.destroy(now, comm, true, out));
        }
        self.ports.unbind(id.0);
        // An id told of its device's removal while resolving still has
        // that resolution pending.
        Ok(rec.before_removal.unwrap_or(rec.state))
    }

    /// The ids on `device`, by a scan of every id (tests and audits; a
    /// removal walks the device's index: [`RdmaCm::device_going`]).
    pub fn ids_on(&self, device: DeviceId) -> impl Iterator<Item = RdmaId> + '_ {
        self.ids
            .keys()
            .filter(move |id| self.ids.get(id).is_some_and(|r| r.device == Some(device)))
    }

    /// Number of ids.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// No ids.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Number of ports held.
    pub fn ports_held(&self) -> usize {
        self.ports.ports()
    }
}
