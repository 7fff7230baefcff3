// SPDX-License-Identifier: GPL-2.0

//! rdma_cm ids of a host, and the calls that name them by address before
//! any message flows: create, the REUSEADDR/AFONLY options, bind, listen
//! (its port checks) and destroy, with 6.12's transitions and errnos.
//! What the kernel decides (which device owns an address, the namespace's
//! port range, randomness, capabilities) comes in as arguments.

use super::addr::{Family, SockAddr};
use super::bind::{BindError, BindRequest, NetId, PortTable};
use super::port_space::{ib_address_space, PortSpace};
use super::state::IdState;
use crate::cm::store::{Collections, InsertError, OrderedMap};
use crate::cm::DeviceId;

/// An rdma_cm id of this host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RdmaId(pub u32);

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

/// One id.
#[derive(Clone, Copy, Debug)]
pub struct Id {
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
}

impl Id {
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
}

/// The rdma_cm ids of a host.
pub struct RdmaCm<C: Collections> {
    pub(crate) ids: C::Map<RdmaId, Id>,
    ports: PortTable<C>,
    next_id: u32,
}

impl<C: Collections> Default for RdmaCm<C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Collections> RdmaCm<C> {
    /// No ids.
    pub fn new() -> Self {
        RdmaCm {
            ids: OrderedMap::new_empty(),
            ports: PortTable::new(),
            next_id: 1,
        }
    }

    /// A new IDLE id in namespace `net` and port space `ps`
    /// (`__rdma_create_kernel_id`).
    pub fn create_id(&mut self, net: NetId, ps: PortSpace) -> Result<RdmaId, RdmaCmError> {
        let id = RdmaId(self.next_id);
        let record = Id {
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
        };
        match self.ids.try_insert(id, record) {
            Ok(()) => {
                self.next_id = self.next_id.wrapping_add(1).max(1);
                Ok(id)
            }
            Err(InsertError::NoMemory(_)) => Err(RdmaCmError::NoMemory),
            Err(InsertError::Occupied(_)) => Err(RdmaCmError::NoMemory),
        }
    }

    /// An id.
    pub fn get(&self, id: RdmaId) -> Option<&Id> {
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
        let r = *self.ids.get(&id).ok_or(RdmaCmError::NoSuchId)?;
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
        let port = self
            .ports
            .bind(id.0, &req, cx.local_ports, cx.random)
            .map_err(RdmaCmError::from)?;
        if let Some(rec) = self.ids.get_mut(&id) {
            rec.state = IdState::AddrBound;
            rec.src = Some(addr.with_port(port));
            rec.dst = dst;
            rec.device = device;
            rec.afonly = afonly;
        }
        Ok(port)
    }

    /// `rdma_listen`, as far as ports go: ADDR_BOUND (or IDLE, which binds
    /// the IPv4 wildcard first) -> LISTEN, holding the port alone (a
    /// REUSEADDR id drops the option if it may). The embedding then
    /// listens on the id's device, or on every device for a wildcard.
    pub fn listen(
        &mut self,
        id: RdmaId,
        backlog: u32,
        cx: &BindContext,
    ) -> Result<(), RdmaCmError> {
        let r = *self.ids.get(&id).ok_or(RdmaCmError::NoSuchId)?;
        if r.state != IdState::AddrBound {
            let any = SockAddr::V4 {
                addr: [0; 4],
                port: 0,
            };
            self.bind_addr(id, any, cx)?;
        }
        // On failure the id stays bound (ADDR_BOUND), as in 6.12.
        if r.reuseaddr {
            self.ports.check_listen(id.0)?;
        }
        if let Some(rec) = self.ids.get_mut(&id) {
            rec.reuseaddr = false;
            rec.backlog = backlog;
            rec.state = IdState::Listen;
        }
        Ok(())
    }

    /// `rdma_destroy_id`: releases the id and its port.
    pub fn destroy(&mut self, id: RdmaId) -> Result<(), RdmaCmError> {
        self.ids.remove(&id).ok_or(RdmaCmError::NoSuchId)?;
        self.ports.unbind(id.0);
        Ok(())
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
