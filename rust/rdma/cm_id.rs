// SPDX-License-Identifier: GPL-2.0

//! The C structure of an rdma_cm id: 6.12's `struct rdma_id_private`,
//! whose first field is the `struct rdma_cm_id` consumers hold and whose
//! layout ib_core's resource tracking reads. Its set-up and release, the
//! fields consumers and ib_core read, its handler and QP locks, and the
//! device, GID entry and tracking entry an id takes and lets go of.

use crate::bindings;
use crate::proto::rdma_cm::RoutePath;
use crate::proto::rdma_cm::SockAddr;
use crate::rdma::device::Device;
use crate::rdma::gid::GidAttr;
use crate::rdma::mad_path::MadPath;
use crate::rdma::path;
use crate::rdma::qp::{self, NewQp};
use crate::rdma::sockaddr::{read_sockaddr, write_sockaddr};
use core::ptr::{addr_of, addr_of_mut};
use kernel::error::from_err_ptr;
use kernel::ffi::{c_char, c_int, c_void};
use kernel::prelude::*;
use kernel::types::Opaque;

/// What an id is created with.
#[derive(Clone, Copy)]
pub(crate) struct NewId {
    pub(crate) net: *mut bindings::net,
    pub(crate) handler: bindings::rdma_cm_event_handler,
    pub(crate) context: *mut c_void,
    pub(crate) ps: bindings::rdma_ucm_port_space,
    pub(crate) qp_type: bindings::ib_qp_type,
    /// A kernel consumer's module name; NULL for a user id.
    pub(crate) caller: *const c_char,
    /// A request's listener, whose owner the id takes in resource
    /// tracking (NULL: `caller`, or the current task).
    pub(crate) parent: *const bindings::rdma_id_private,
}

impl NewId {
    /// A passive id of `listener`: its namespace, handler, context and
    /// port space, owned in resource tracking as the listener is (6.12),
    /// not by the kworker that delivers the request.
    pub(crate) fn child_of(listener: &CmIdPrivate, qp_type: bindings::ib_qp_type) -> Self {
        let p = listener.private();
        // SAFETY: the listener lives with `listener`; consumers may swap
        // its handler and context at any time, read once each.
        let (handler, ps) = unsafe {
            (
                addr_of!((*p).id.event_handler).read_volatile(),
                addr_of!((*p).id.ps).read(),
            )
        };
        NewId {
            net: listener.net(),
            handler,
            context: listener.context(),
            ps,
            qp_type,
            caller: core::ptr::null(),
            parent: p,
        }
    }
}

/// An id's C structure. It must stay where it was initialised:
/// consumers hold a pointer to its first field.
///
/// INVARIANT: rcm writes the fields consumers read (addresses, device,
/// port, route, QP, state) only while the core's lock or the id's handler
/// lock keeps the id's own calls apart, and forms no Rust reference to
/// the structure: consumers read it, and write `context` and
/// `event_handler`, without a lock, as with the C rdma_cm.
#[pin_data(PinnedDrop)]
#[repr(C)]
pub(crate) struct CmIdPrivate {
    #[pin]
    inner: Opaque<bindings::rdma_id_private>,
}

// SAFETY: the C fields are shared with consumers and ib_core under the
// rules of the type invariant, which hold from any thread.
unsafe impl Send for CmIdPrivate {}
// SAFETY: as above; `&CmIdPrivate` only hands out raw pointers.
unsafe impl Sync for CmIdPrivate {}

/// Where a device address of link type `dev_type` holds its GID: four
/// bytes in (after the QP number) for `ARPHRD_INFINIBAND`, else at the
/// start (6.12's `rdma_addr_gid_offset`).
pub(crate) fn gid_offset(dev_type: u16) -> usize {
    if u32::from(dev_type) == bindings::ARPHRD_INFINIBAND {
        4
    } else {
        0
    }
}

impl CmIdPrivate {
    /// A new IDLE id's structure.
    pub(crate) fn new(n: &NewId) -> impl PinInit<Self> {
        let n = *n;
        pin_init!(CmIdPrivate {
            inner <- Opaque::ffi_init(move |p: *mut bindings::rdma_id_private| {
                // SAFETY: `p` is this field's memory, which we zero and set
                // up before anyone sees it; `net` is a live namespace the
                // caller holds, which the id references; a parent is a
                // listener whose handler lock the caller holds (its
                // tracking entry is live).
                unsafe {
                    core::ptr::write_bytes(p, 0, 1);
                    init_private(p, &n);
                }
            }),
        })
    }

    /// The consumer's pointer.
    pub(crate) fn as_id(&self) -> *mut bindings::rdma_cm_id {
        self.inner.get().cast()
    }

    /// The whole structure, for the C helpers that fill its parts.
    pub(crate) fn private(&self) -> *mut bindings::rdma_id_private {
        self.inner.get()
    }

    /// The consumer's context pointer (`id->context`).
    pub(crate) fn context(&self) -> *mut c_void {
        // SAFETY: the structure lives with `self`; consumers write the
        // field without a lock (type invariant), so it is read whole, once.
        unsafe { addr_of!((*self.private()).id.context).read_volatile() }
    }

    /// Sets the consumer's context pointer (a consumer inside rcm, from
    /// the id's handler).
    pub(crate) fn set_context(&self, context: *mut c_void) {
        // SAFETY: as in `context`.
        unsafe { addr_of_mut!((*self.private()).id.context).write_volatile(context) }
    }

    /// The id's port space (`id->ps`), fixed at creation.
    pub(crate) fn port_space(&self) -> bindings::rdma_ucm_port_space {
        // SAFETY: as in `qp_type`.
        unsafe { addr_of!((*self.private()).id.ps).read() }
    }

    /// The id's QP type (`id->qp_type`), fixed at creation.
    pub(crate) fn qp_type(&self) -> bindings::ib_qp_type {
        // SAFETY: the structure lives with `self`; written before the id
        // is handed out.
        unsafe { addr_of!((*self.private()).id.qp_type).read() }
    }

    /// Sets the state ib_core's resource tracking shows.
    pub(crate) fn set_kernel_state(&self, state: bindings::rdma_cm_state) {
        // SAFETY: the structure lives with `self`; an aligned word store
        // that racy readers (nldev) see whole.
        unsafe { addr_of_mut!((*self.private()).state).write_volatile(state) }
    }

    /// The state last written by [`Self::set_kernel_state`].
    pub(crate) fn kernel_state(&self) -> bindings::rdma_cm_state {
        // SAFETY: as in `set_kernel_state`.
        unsafe { addr_of!((*self.private()).state).read_volatile() }
    }

    /// Writes DESTROYING into the state consumers and nldev read (the
    /// box keeps the mark deliveries go by).
    pub(crate) fn set_destroying(&self) {
        self.set_kernel_state(bindings::rdma_cm_state_RDMA_CM_DESTROYING);
    }

    /// Writes the addresses consumers read (`route.addr.src_addr` and
    /// `dst_addr`).
    pub(crate) fn write_addrs(&self, src: Option<SockAddr>, dst: Option<SockAddr>) {
        let p = self.private();
        // SAFETY: the structure lives with `self`; the address fields are
        // ours to write (type invariant).
        unsafe {
            let addr = addr_of_mut!((*p).id.route.addr);
            if let Some(src) = src {
                write_sockaddr(addr_of_mut!((*addr).src_addr), &src);
            }
            if let Some(dst) = dst {
                write_sockaddr(addr_of_mut!((*addr).dst_addr), &dst);
            }
        }
    }

    /// The addresses consumers read (`route.addr.src_addr` and
    /// `dst_addr`); `None` for an unset (AF_UNSPEC) one.
    pub(crate) fn addrs(&self) -> (Option<SockAddr>, Option<SockAddr>) {
        let p = self.private();
        // SAFETY: both fields live with `self` and hold a socket address
        // (AF_UNSPEC until set, which reads as none).
        unsafe {
            (
                read_sockaddr(addr_of!((*p).id.route.addr.src_addr).cast()).ok(),
                read_sockaddr(addr_of!((*p).id.route.addr.dst_addr).cast()).ok(),
            )
        }
    }

    /// Sets the id's QP and mirrors its number for ib_core's resource
    /// tracking (under the QP lock).
    fn set_qp(&self, qp: *mut bindings::ib_qp, qp_num: u32) {
        let p = self.private();
        // SAFETY: as in `write_addrs`.
        unsafe {
            addr_of_mut!((*p).id.qp).write_volatile(qp);
            addr_of_mut!((*p).qp_num).write_volatile(qp_num);
        }
    }

    /// The id's QP (NULL if none).
    pub(crate) fn qp(&self) -> *mut bindings::ib_qp {
        // SAFETY: the structure lives with `self`.
        unsafe { addr_of!((*self.private()).id.qp).read_volatile() }
    }

    /// The id's device (NULL before it has one) and port.
    pub(crate) fn device_port(&self) -> (*mut bindings::ib_device, u32) {
        let p = self.private();
        // SAFETY: the structure lives with `self`.
        unsafe {
            (
                addr_of!((*p).id.device).read_volatile(),
                addr_of!((*p).id.port_num).read_volatile(),
            )
        }
    }

    /// The id's device and port, if it has a device.
    pub(crate) fn device(&self) -> Option<(Device<'_>, u32)> {
        let (ibdev, port) = self.device_port();
        if ibdev.is_null() {
            return None;
        }
        // SAFETY: a device an id is on stays registered while the id is
        // (its removal waits for the id's destroy, which clears the field
        // first).
        Some((unsafe { Device::from_raw(ibdev) }, port))
    }

    /// Whether the id is on an iWARP port (lock-free: its device and port
    /// fields).
    pub(crate) fn on_iwarp(&self) -> bool {
        self.device()
            .is_some_and(|(device, port)| device.is_iwarp(port))
    }

    /// The ACK timeout the consumer set (`rdma_set_ack_timeout`), if any.
    pub(crate) fn ack_timeout(&self) -> Option<u8> {
        let p = self.private();
        // SAFETY: the structure lives with `self`; written only by the
        // option calls of the id's consumer.
        let (set, value) = unsafe {
            (
                (*p).timeout_set() != 0,
                addr_of!((*p).timeout).read_volatile(),
            )
        };
        set.then_some(value)
    }

    /// The minimum RNR timer the consumer set, if any.
    pub(crate) fn min_rnr_timer(&self) -> Option<u8> {
        let p = self.private();
        // SAFETY: as in `ack_timeout`.
        let (set, value) = unsafe {
            (
                (*p).min_rnr_timer_set() != 0,
                addr_of!((*p).min_rnr_timer).read_volatile(),
            )
        };
        set.then_some(value)
    }

    /// Sets the ACK timeout (`rdma_set_ack_timeout`).
    pub(crate) fn set_ack_timeout(&self, timeout: u8) {
        let p = self.private();
        // SAFETY: as in `ack_timeout`; the bit field shares its byte only
        // with the other option flags, written by the same consumer.
        unsafe {
            (*p).timeout = timeout;
            (*p).set_timeout_set(1);
        }
    }

    /// Sets the minimum RNR timer (`rdma_set_min_rnr_timer`).
    pub(crate) fn set_min_rnr_timer(&self, timer: u8) {
        let p = self.private();
        // SAFETY: as in `set_ack_timeout`.
        unsafe {
            (*p).min_rnr_timer = timer;
            (*p).set_min_rnr_timer_set(1);
        }
    }

    /// The GID entry of `port` of `device` for the id's source address on
    /// its network device (RoCE v2 entries where the port has them, else
    /// v1), held; `None` if the port is not RoCE or has none. The id is
    /// not changed: it takes the entry with [`Self::take_gid`] once its
    /// bind is accepted.
    pub(crate) fn find_roce_gid(&self, device: &Device<'_>, port: u32) -> Option<GidAttr> {
        if !device.is_roce(port) || !self.may_use(device) {
            return None;
        }
        let gid = bindings::ib_gid {
            raw: self.addrs().0?.gid(),
        };
        let ndev = self.net_device()?;
        let gid_type = device.roce_gid_type(port);
        // SAFETY: the device is registered; `ndev` is held for the call;
        // the GID is ours.
        let attr = unsafe {
            bindings::rdma_find_gid_by_port(device.as_raw(), &gid, gid_type, port, ndev.as_raw())
        };
        let attr = from_err_ptr(attr.cast_mut()).ok()?;
        // SAFETY: rdma_find_gid_by_port returns a held entry.
        unsafe { GidAttr::from_owned(attr) }
    }

    /// The id takes `gid`, its device and port (a bind or resolution the
    /// core accepted), and enters ib_core's resource tracking.
    pub(crate) fn take_gid(&self, gid: GidAttr, device: &Device<'_>, port: u32) {
        let p = self.private();
        let gid_type = gid.as_attr().gid_type;
        // SAFETY: the id's fields are ours during its own call (or under
        // the core's lock, or the address result's hold of its handler
        // lock, either of which its destroy takes first); the device is
        // registered while an id is on it; the GID reference is handed
        // over, the one it replaces put; the tracking entry was set up at
        // creation, and is added once (a second entry would outlive the
        // id).
        unsafe {
            let slot = addr_of_mut!((*p).id.route.addr.dev_addr.sgid_attr);
            drop(GidAttr::from_owned(slot.read()));
            slot.write(gid.into_raw());
            addr_of_mut!((*p).gid_type).write(gid_type);
            addr_of_mut!((*p).id.device).write(device.as_raw());
            addr_of_mut!((*p).id.port_num).write(port);
            if !addr_of!((*p).res.valid).read() {
                bindings::rdma_restrack_add(addr_of_mut!((*p).res));
            }
        }
    }

    /// Lets go of the id's device: its resource-tracking entry and GID
    /// entry (its destroy, before a removal waiting for it is woken: at
    /// the last reference, the device may be gone).
    pub(crate) fn detach_device(&self) {
        let p = self.private();
        // SAFETY: the id is destroyed in the core (nothing attaches it
        // again) and its handler no longer runs, or it is being dropped;
        // the device is registered until the removal that waits for this
        // destroy returns. The tracking entry was set up at creation (an
        // entry no longer tracked is left alone); the GID reference is
        // the id's, put once and cleared.
        unsafe {
            bindings::rdma_restrack_del(addr_of_mut!((*p).res));
            let sgid = addr_of_mut!((*p).id.route.addr.dev_addr.sgid_attr);
            let attr = sgid.read();
            if !attr.is_null() {
                sgid.write(core::ptr::null());
                bindings::rdma_put_gid_attr(attr);
            }
            addr_of_mut!((*p).id.device).write_volatile(core::ptr::null_mut());
        }
    }

    /// The id's source and destination GIDs (`rdma_read_gids`): all zero
    /// without a device; on RoCE those of its IP addresses (`None` for an
    /// address not set); elsewhere those in its device addresses.
    pub(crate) fn gids(&self) -> (Option<[u8; 16]>, Option<[u8; 16]>) {
        let Some((device, port)) = self.device() else {
            return (Some([0; 16]), Some([0; 16]));
        };
        if device.is_roce(port) {
            let (src, dst) = self.addrs();
            return (src.map(|a| a.gid()), dst.map(|a| a.gid()));
        }
        let p = self.private();
        // SAFETY: the device address is the id's, written by its
        // resolution before the id got its device.
        let (dev_type, src, dst) = unsafe {
            let da = addr_of!((*p).id.route.addr.dev_addr);
            (
                addr_of!((*da).dev_type).read(),
                addr_of!((*da).src_dev_addr).read(),
                addr_of!((*da).dst_dev_addr).read(),
            )
        };
        let offset = gid_offset(dev_type);
        let gid_at = |a: &[u8]| {
            a.get(offset..offset + 16)
                .and_then(|g| <[u8; 16]>::try_from(g).ok())
        };
        (gid_at(&src), gid_at(&dst))
    }

    /// The index of the id's P_Key in its port's table: the default
    /// P_Key on Ethernet ports, the resolved one elsewhere.
    pub(crate) fn pkey_index(&self) -> Result<u16, c_int> {
        let (device, port) = self.device().ok_or(EINVAL.to_errno())?;
        let pkey = if device.has_eth_ah(port) {
            0xffff
        } else {
            self.resolved_pkey()
        };
        let mut index = 0u16;
        // SAFETY: the device is registered; the output is ours.
        let ret = unsafe { bindings::ib_find_cached_pkey(device.as_raw(), port, pkey, &mut index) };
        if ret != 0 {
            return Err(ret);
        }
        Ok(index)
    }

    /// The P_Key address resolution found for the id (in its device
    /// address's broadcast address, `ib_addr_get_pkey`).
    pub(crate) fn resolved_pkey(&self) -> u16 {
        // SAFETY: the device address is the id's, written by its
        // resolution before the id got its device.
        let b = unsafe { addr_of!((*self.private()).id.route.addr.dev_addr.broadcast).read() };
        u16::from_be_bytes([b[8], b[9]])
    }

    /// Puts the network device its IP source address belongs to into the
    /// id's device address (`rdma_translate_ip`); -EADDRNOTAVAIL or
    /// -ENODEV if there is none. In the id's own call.
    pub(crate) fn translate_source(&self) -> Result<(), c_int> {
        // SAFETY: the id's address fields are ours during its own call
        // (type invariant).
        match unsafe { bindings::rcm_h_rdma_translate(self.private()) } {
            0 => Ok(()),
            e => Err(e),
        }
    }

    /// The id's path record, if it has one. In its own call (the record
    /// changes only there).
    fn own_path_record(&self) -> Result<&bindings::sa_path_rec, c_int> {
        // SAFETY: the id's route lives with it and changes only in its own
        // calls; a non-NULL record is a valid kmalloc'd one.
        unsafe {
            addr_of!((*self.private()).id.route.path_rec)
                .read()
                .as_ref()
        }
        .ok_or(EINVAL.to_errno())
    }

    /// The record's route fields as the core's path; -EINVAL without a
    /// record.
    pub(crate) fn route_path(&self) -> Result<RoutePath, c_int> {
        self.own_path_record().map(path::route_path)
    }

    /// The path the id's MADs take on its device, from its path record
    /// (the P_Key's index and the address handle's attributes); -EINVAL
    /// without a record or a device.
    pub(crate) fn mad_path(&self) -> Result<MadPath, c_int> {
        let Some((device, _)) = self.device() else {
            return Err(EINVAL.to_errno());
        };
        let rec = self.own_path_record()?;
        // SAFETY: the id holds a reference on a non-NULL `sgid_attr`,
        // written with its device.
        let sgid_attr = unsafe {
            addr_of!((*self.private()).id.route.addr.dev_addr.sgid_attr)
                .read()
                .as_ref()
        };
        let (path, _gid) =
            MadPath::from_path_record(&device, rec, sgid_attr).map_err(|e| e.to_errno())?;
        Ok(path)
    }

    /// The network namespace of the id's addresses, held by the id.
    pub(crate) fn net(&self) -> *mut bindings::net {
        // SAFETY: set at creation, never changed.
        unsafe { addr_of!((*self.private()).id.route.addr.dev_addr.net).read() }
    }

    /// The interface the id's address is bound to (0: none).
    pub(crate) fn bound_ifindex(&self) -> c_int {
        // SAFETY: written by the id's bind and resolution, in its own
        // calls; a word read once.
        unsafe { addr_of!((*self.private()).id.route.addr.dev_addr.bound_dev_if).read_volatile() }
    }

    /// Whether the id's namespace may use `device` (a device outside it
    /// is invisible unless devices are shared between namespaces).
    pub(crate) fn may_use(&self, device: &Device<'_>) -> bool {
        // SAFETY: the device is registered (type invariant of `Device`);
        // the namespace is held by the id.
        unsafe { bindings::rdma_dev_access_netns(device.as_raw(), self.net()) }
    }

    /// The local port range of the id's namespace
    /// (`ip_local_port_range`).
    pub(crate) fn local_port_range(&self) -> (u16, u16) {
        let (mut low, mut high) = (0, 0);
        // SAFETY: the namespace is held by the id; the outputs are ours.
        unsafe { bindings::rcm_h_net_port_range(self.net(), &mut low, &mut high) };
        (low as u16, high as u16)
    }

    /// Whether the caller may bind privileged ports in the id's namespace
    /// (`CAP_NET_BIND_SERVICE` in its user namespace; the check is
    /// audited, so it is asked only when it matters).
    pub(crate) fn may_bind_privileged(&self) -> bool {
        // SAFETY: the namespace is held by the id.
        unsafe { bindings::rcm_h_capable_net_bind_service(self.net()) }
    }

    /// The id's namespace's `bindv6only` setting.
    pub(crate) fn bindv6only(&self) -> bool {
        // SAFETY: the namespace is held by the id.
        unsafe { bindings::rcm_h_net_bindv6only(self.net()) }
    }

    /// Calls the consumer's event handler with `e`; its return. A UD id's
    /// event goes as `param.ud`, with `e.ud_ah` also the address handle
    /// attributes of the id's path (built for the call, released after;
    /// `RDMA_CM_EVENT_ADDR_ERROR` if they cannot be built).
    ///
    /// The caller holds the handler lock, so the route does not change.
    pub(crate) fn deliver(&self, e: &bindings::rcm_h_rdma_event) -> c_int {
        let id = self.as_id();
        let mut ev = bindings::rdma_cm_event {
            event: e.event,
            status: e.status,
            ece: bindings::rdma_ucm_ece {
                vendor_id: e.ece_vendor_id,
                attr_mod: e.ece_attr_mod,
            },
            ..Default::default()
        };
        if e.ud == 0 {
            ev.param.conn = bindings::rdma_conn_param {
                private_data: e.private_data,
                private_data_len: e.private_data_len,
                responder_resources: e.responder_resources,
                initiator_depth: e.initiator_depth,
                flow_control: e.flow_control,
                retry_count: e.retry_count,
                rnr_retry_count: e.rnr_retry_count,
                srq: e.srq,
                qp_num: e.qp_num,
                qkey: 0,
            };
            // SAFETY: the id lives with `self`; its handler is the
            // consumer's, called as rdma_cm's contract says (process
            // context, its handler lock held by the caller).
            return unsafe { call_handler(id, &mut ev) };
        }
        let mut ud = bindings::rdma_ud_param {
            private_data: e.private_data,
            private_data_len: e.private_data_len,
            qp_num: e.qp_num,
            qkey: e.qkey,
            ..Default::default()
        };
        // SAFETY: the route's fields are stable under the handler lock
        // (this function's contract); its path record, device and GID
        // entry are the id's.
        unsafe {
            let route = &(*id).route;
            if e.ud_ah != 0 && !route.path_rec.is_null() {
                let ret = bindings::ib_init_ah_attr_from_path(
                    (*id).device,
                    (*id).port_num,
                    route.path_rec,
                    &mut ud.ah_attr,
                    route.addr.dev_addr.sgid_attr,
                );
                if ret != 0 {
                    ev.event = bindings::rdma_cm_event_type_RDMA_CM_EVENT_ADDR_ERROR;
                    ev.status = ret;
                }
            }
        }
        ev.param.ud = ud;
        // SAFETY: as for a connected id's event above.
        let ret = unsafe { call_handler(id, &mut ev) };
        // SAFETY: `param.ud` is the member set above; its attributes
        // (and the GID reference they may hold) are released once.
        unsafe { bindings::rdma_destroy_ah_attr(&mut ev.param.ud.ah_attr) };
        ret
    }

    /// Takes the id's handler lock (`rdma_lock_handler`).
    pub(crate) fn lock_handler(&self) {
        // SAFETY: the mutex was set up at creation and lives with `self`.
        unsafe { bindings::rcm_h_rdma_handler_lock(self.private()) };
    }

    /// Takes the id's handler lock to destroy it (possibly from a handler
    /// of another id).
    pub(crate) fn lock_handler_to_destroy(&self) {
        // SAFETY: as in `lock_handler`.
        unsafe { bindings::rcm_h_rdma_handler_lock_to_destroy(self.private()) };
    }

    /// Takes a new id's handler lock while its listener's is held.
    pub(crate) fn lock_handler_nested(&self) {
        // SAFETY: as in `lock_handler`.
        unsafe { bindings::rcm_h_rdma_handler_lock_nested(self.private()) };
    }

    /// Releases the id's handler lock.
    pub(crate) fn unlock_handler(&self) {
        // SAFETY: as in `lock_handler`; the caller holds it.
        unsafe { bindings::rcm_h_rdma_handler_unlock(self.private()) };
    }

    /// Takes the id's QP lock: the QP is moved and destroyed under it
    /// (6.12's `qp_mutex`).
    pub(crate) fn lock_qp(&self) -> QpLock<'_> {
        // SAFETY: the mutex was set up at creation and lives with `self`.
        unsafe { bindings::rcm_h_rdma_qp_lock(self.private()) };
        QpLock { id: self }
    }
}

/// An id's QP lock, held until dropped: the id's QP is moved, taken and
/// destroyed under it.
pub(crate) struct QpLock<'a> {
    id: &'a CmIdPrivate,
}

impl QpLock<'_> {
    /// Whether the id has a QP.
    pub(crate) fn has_qp(&self) -> bool {
        !self.id.qp().is_null()
    }

    /// Moves the id's QP with `attr` and `mask`: 0, a negative errno, or
    /// -EINVAL if the id has no QP.
    pub(crate) fn modify(&self, attr: &mut bindings::ib_qp_attr, mask: u32) -> c_int {
        let qp = self.id.qp();
        if qp.is_null() {
            return EINVAL.to_errno();
        }
        // SAFETY: an id's QP lives while the id has it: it is taken and
        // destroyed only under this lock, which is held.
        unsafe { qp::modify(qp, attr, mask) }
    }

    /// The id takes `new` as its QP (it had none).
    pub(crate) fn install(&self, new: NewQp) {
        let (qp_num, _) = new.number_and_srq();
        self.id.set_qp(new.into_raw(), qp_num);
    }

    /// Takes the id's QP away and destroys it (nothing without one).
    pub(crate) fn destroy(&self) {
        let qp = self.id.qp();
        if qp.is_null() {
            return;
        }
        self.id.set_qp(core::ptr::null_mut(), 0);
        // SAFETY: the id's QP, no longer reachable through the id; its
        // moves take this lock, held here.
        unsafe { qp::destroy(qp) };
    }
}

impl Drop for QpLock<'_> {
    fn drop(&mut self) {
        // SAFETY: this guard holds the lock.
        unsafe { bindings::rcm_h_rdma_qp_unlock(self.id.private()) };
    }
}

#[pinned_drop]
impl PinnedDrop for CmIdPrivate {
    fn drop(self: Pin<&mut Self>) {
        self.detach_device();
        let p = self.private();
        // SAFETY: the last reference is going: nothing else uses the id.
        // This releases what its creation and later calls took: the path
        // records (kmalloc'd) and the namespace.
        unsafe {
            let route = addr_of_mut!((*p).id.route);
            kernel::bindings::kfree(addr_of!((*route).path_rec).read().cast());
            addr_of_mut!((*route).path_rec).write(core::ptr::null_mut());
            kernel::bindings::kfree(addr_of!((*route).path_rec_inbound).read().cast());
            kernel::bindings::kfree(addr_of!((*route).path_rec_outbound).read().cast());
            bindings::rcm_h_put_net(addr_of!((*route).addr.dev_addr.net).read());
        }
    }
}

/// Sets up the zeroed id `p` as `n` says: handler, context, port space,
/// QP type, a reference on the namespace, its locks and lists, a
/// reference count of one, and its resource-tracking entry owned as the
/// parent is (a request's listener: its module or task), else named after
/// the caller (a kernel consumer's module) or the current task (NULL).
///
/// # Safety
///
/// `p` is a zeroed id no one else sees; `n.net` a live namespace; a
/// non-NULL `n.parent` a live id whose tracking entry is set up.
unsafe fn init_private(p: *mut bindings::rdma_id_private, n: &NewId) {
    // SAFETY: per this function's contract.
    unsafe {
        addr_of_mut!((*p).id.event_handler).write(n.handler);
        addr_of_mut!((*p).id.context).write(n.context);
        addr_of_mut!((*p).id.ps).write(n.ps);
        addr_of_mut!((*p).id.qp_type).write(n.qp_type);
        addr_of_mut!((*p).state).write(bindings::rdma_cm_state_RDMA_CM_IDLE);
        bindings::rcm_h_rdma_id_init_locks(p);
        addr_of_mut!((*p).refcount.refs.counter).write(1);
        for list in [
            addr_of_mut!((*p).__bindgen_anon_2.listen_list),
            addr_of_mut!((*p).mc_list),
            addr_of_mut!((*p).id_list_entry),
        ] {
            // An empty list points at itself (`INIT_LIST_HEAD`).
            list.write(bindings::list_head {
                next: list,
                prev: list,
            });
        }
        addr_of_mut!((*p).id.route.addr.dev_addr.net).write(bindings::rcm_h_get_net(n.net));
        let res = addr_of_mut!((*p).res);
        bindings::rdma_restrack_new(res, bindings::rdma_restrack_type_RDMA_RESTRACK_CM_ID);
        if n.parent.is_null() {
            bindings::rdma_restrack_set_name(res, n.caller);
        } else {
            bindings::rdma_restrack_parent_name(res, addr_of!((*n.parent).res));
        }
    }
}

/// An id's number as the context of an ib_core callback (address
/// resolution, SA query, iw_cm): never a pointer, so a callback that
/// outlives the id finds nothing.
pub(crate) fn id_context(token: u64) -> *mut c_void {
    token as usize as *mut c_void
}

/// The id's number a callback's context carries ([`id_context`]).
pub(crate) fn context_id(context: *mut c_void) -> u64 {
    context as usize as u64
}

/// Calls `id`'s event handler with `ev` (0 without one, which rdma_cm's
/// API does not allow), between the `rdma_cma:cm_event_handler` and
/// `rdma_cma:cm_event_done` trace events, as 6.12's rdma_cm does.
///
/// # Safety
///
/// `id` is a live rdma_cm id (6.12's `struct rdma_id_private`'s `id`);
/// every pointer in `ev` is valid for the call.
pub(crate) unsafe fn call_handler(
    id: *mut bindings::rdma_cm_id,
    ev: &mut bindings::rdma_cm_event,
) -> c_int {
    // SAFETY: per this function's contract; the trace reads the id and
    // the event only.
    unsafe { bindings::rcm_h_trace_cm_event_handler(id, ev) };
    // SAFETY: per this function's contract.
    let ret = match unsafe { (*id).event_handler } {
        // SAFETY: per this function's contract.
        Some(handler) => unsafe { handler(id, ev) },
        None => 0,
    };
    // A handler that returns non-zero has its id destroyed by the caller
    // afterwards, so the id is still whole here.
    // SAFETY: as above.
    unsafe { bindings::rcm_h_trace_cm_event_done(id, ev, ret) };
    ret
}
