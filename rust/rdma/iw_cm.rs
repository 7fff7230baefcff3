// SPDX-License-Identifier: GPL-2.0

//! The in-tree iw_cm as rdma_cm uses it: the iw_cm ids rcm owns (each
//! destroyed when its value drops), listeners, the connection id an
//! rdma_cm id holds with its connect, accept, reject and disconnect, and
//! iw_cm's callbacks, decoded for an [`IwCmHandler`] named when an id is
//! made. A callback's context is the rdma_cm id's number, never a
//! pointer.
//!
//! `iw_destroy_cm_id` may wait for iw_cm's work queue, whose callbacks
//! take rdma_cm's locks: an [`IwCmId`] is dropped with none of them held.

use crate::bindings;
use crate::proto::rdma_cm::{IwEventKind, SockAddr};
use crate::rdma::cm_id::{context_id, id_context, CmIdPrivate};
use crate::rdma::device::Device;
use crate::rdma::gid::GidAttr;
use crate::rdma::netdev::NetDevice;
use crate::rdma::sockaddr::{read_sockaddr, write_sockaddr};
use crate::rdma::sync::RcuReadGuard;
use core::marker::PhantomData;
use core::ptr::{addr_of, addr_of_mut, NonNull};
use kernel::error::{from_err_ptr, to_result};
use kernel::ffi::c_int;
use kernel::prelude::*;

impl CmIdPrivate {
    /// The GID entry of iWARP `port` of `device` for the id's address,
    /// held: the port's one entry, if its network device is in the id's
    /// namespace and is the interface the id is bound to, a VLAN's on it,
    /// or the device the bound VLAN is on (6.12's `cma_validate_port` on
    /// iWARP).
    pub(crate) fn find_iwarp_gid(&self, device: &Device<'_>, port: u32) -> Option<GidAttr> {
        if !device.is_iwarp(port) || !self.may_use(device) {
            return None;
        }
        let (net, ifindex) = (self.net(), self.bound_ifindex());
        let gid = GidAttr::get(device, port, 0)?;
        let _rcu = RcuReadGuard::new();
        // SAFETY: the entry is held; its network device is read under RCU.
        let ndev = from_err_ptr(unsafe { bindings::rdma_read_gid_attr_ndev_rcu(gid.as_ptr()) });
        // SAFETY: live under the RCU section, as the id's namespace is.
        let serves = ndev.is_ok_and(|ndev| unsafe { port_serves(ndev, net, ifindex) });
        serves.then_some(gid)
    }
}

/// Whether an iWARP port on `ndev` serves an id bound to `ifindex` in
/// `net`.
///
/// # Safety
///
/// `ndev` is a live network device and `net` a live namespace, and the
/// caller is in an RCU read-side section.
unsafe fn port_serves(
    ndev: *mut bindings::net_device,
    net: *mut bindings::net,
    ifindex: c_int,
) -> bool {
    // SAFETY: per this function's contract; a device found by index under
    // RCU stays live for the section.
    unsafe {
        if bindings::rcm_h_dev_net(ndev) != net {
            return false;
        }
        let port_ifindex = (*ndev).ifindex;
        if port_ifindex == ifindex {
            return true;
        }
        let bound = bindings::dev_get_by_index_rcu(net, ifindex);
        (!bound.is_null() && NetDevice::vlan_real_ifindex(bound) == Some(port_ifindex))
            || NetDevice::vlan_real_ifindex(ndev) == Some(ifindex)
    }
}

/// An iw_cm id rcm created or was handed by a connection request.
///
/// INVARIANT: `id` is a live iw_cm id that this value alone destroys.
pub(crate) struct IwCmId {
    id: NonNull<bindings::iw_cm_id>,
}

// SAFETY: iw_cm ids are used and destroyed from any process context; the
// value is the id's only owner.
unsafe impl Send for IwCmId {}

impl IwCmId {
    /// A new iw_cm id on `device` whose callbacks go to `handler` under
    /// `token`, with the type of service `tos` if set.
    ///
    /// # Safety
    ///
    /// `device` is registered for the call.
    unsafe fn create(
        device: *mut bindings::ib_device,
        handler: bindings::iw_cm_handler,
        token: u64,
        tos: Option<u8>,
    ) -> Result<Self> {
        // SAFETY: per this function's contract.
        let id =
            from_err_ptr(unsafe { bindings::iw_create_cm_id(device, handler, id_context(token)) })?;
        // INVARIANT: a new id, ours alone.
        let id = IwCmId {
            id: NonNull::new(id).ok_or(ENOMEM)?,
        };
        // SAFETY: the new id is not in use by iw_cm yet.
        unsafe {
            let raw = id.id.as_ptr();
            (*raw).tos = tos.unwrap_or(0);
            (*raw).set_tos_set(tos.is_some());
        }
        Ok(id)
    }

    /// A listener on `device` for the bound id `listener`, its requests
    /// reported to `H` under `token`.
    ///
    /// # Safety
    ///
    /// `device` is registered for the call.
    pub(crate) unsafe fn listen<H: IwCmHandler>(
        listener: &CmIdPrivate,
        device: *mut bindings::ib_device,
        token: u64,
        backlog: c_int,
        tos: Option<u8>,
        afonly: bool,
    ) -> Result<Self> {
        let src = listener.addrs().0.ok_or(EINVAL)?;
        // SAFETY: per this function's contract.
        let id = unsafe { Self::create(device, Some(request_callback::<H>), token, tos)? };
        let raw = id.id.as_ptr();
        // SAFETY: the new id is not in use by iw_cm until it listens.
        unsafe {
            (*raw).set_afonly(afonly);
            write_sockaddr(addr_of_mut!((*raw).local_addr), &src);
        }
        // SAFETY: a live id of ours; dropped (destroyed) on failure.
        to_result(unsafe { bindings::iw_cm_listen(raw, backlog) })?;
        Ok(id)
    }

    /// Hands the id to a new owner: iw_cm, which destroys a request's id
    /// that its handler refused.
    pub(crate) fn into_raw(self) -> *mut bindings::iw_cm_id {
        let id = self.id.as_ptr();
        core::mem::forget(self);
        id
    }

    /// Refuses the connection request the id came from, then destroys it.
    pub(crate) fn refuse(self) {
        // SAFETY: a live id of ours; the reject's outcome changes nothing
        // (the id goes).
        let _ = unsafe { bindings::iw_cm_reject(self.id.as_ptr(), core::ptr::null(), 0) };
    }
}

impl Drop for IwCmId {
    fn drop(&mut self) {
        // SAFETY: a live id this value alone destroys (invariant).
        unsafe { bindings::iw_destroy_cm_id(self.id.as_ptr()) };
    }
}

/// A connect's or accept's parameters with their own copy of the private
/// data, kept from the core's call until iw_cm gets them.
#[derive(Clone, Copy)]
pub(crate) struct IwConnParams {
    data: [u8; 255],
    len: u8,
    ord: u8,
    ird: u8,
    qpn: u32,
    tos: Option<u8>,
}

impl IwConnParams {
    /// The parameters (`ord`: the consumer's initiator depth, `ird`: its
    /// responder resources, `qpn`: its QP without one of rdma_cm's);
    /// private data past 255 bytes (the ABI's limit) is not sent.
    pub(crate) fn new(private_data: &[u8], ord: u8, ird: u8, qpn: u32, tos: Option<u8>) -> Self {
        let len = private_data.len().min(255);
        let mut data = [0; 255];
        data[..len].copy_from_slice(&private_data[..len]);
        IwConnParams {
            data,
            // At most 255 (above).
            len: len as u8,
            ord,
            ird,
            qpn,
            tos,
        }
    }

    /// iw_cm's view for a connection on `id`, its private data pointing
    /// into `self`: the QP is the id's if rdma_cm made it.
    fn conn_param(&self, id: &CmIdPrivate) -> bindings::iw_cm_conn_param {
        bindings::iw_cm_conn_param {
            private_data: if self.len > 0 {
                self.data.as_ptr().cast()
            } else {
                core::ptr::null()
            },
            private_data_len: u16::from(self.len),
            ord: u32::from(self.ord),
            ird: u32::from(self.ird),
            qpn: id.own_qp_num().unwrap_or(self.qpn),
        }
    }
}

impl CmIdPrivate {
    /// The iw_cm id of the id's connection (NULL if it has none), for
    /// `rdma_iw_cm_id`.
    pub(crate) fn iw_cm_id(&self) -> *mut bindings::iw_cm_id {
        // SAFETY: an iWARP id's connection field is the iw_cm member,
        // written only in its own calls.
        unsafe { addr_of!((*self.private()).cm_id.iw).read() }
    }

    fn set_iw_cm_id(&self, id: *mut bindings::iw_cm_id) {
        // SAFETY: as in `iw_cm_id`.
        unsafe { addr_of_mut!((*self.private()).cm_id.iw).write(id) };
    }

    /// The id's connection takes `id` (a request's, once delivered); it is
    /// destroyed with [`Self::take_iw`].
    pub(crate) fn set_iw(&self, id: IwCmId) {
        self.set_iw_cm_id(id.into_raw());
    }

    /// Takes the id's connection's iw_cm id out of it.
    pub(crate) fn take_iw(&self) -> Option<IwCmId> {
        let id = NonNull::new(self.iw_cm_id())?;
        self.set_iw_cm_id(core::ptr::null_mut());
        // INVARIANT: the id held it alone, and no longer does.
        Some(IwCmId { id })
    }

    /// The number of the QP rdma_cm made for the id, if it made one.
    fn own_qp_num(&self) -> Option<u32> {
        let p = self.private();
        // SAFETY: the id's QP fields change only in its own calls.
        unsafe { (!addr_of!((*p).id.qp).read().is_null()).then(|| addr_of!((*p).qp_num).read()) }
    }

    /// The QP attributes of the id's connection for `attr.qp_state`
    /// (`iw_cm_init_qp_attr`; before it has one, INIT without remote
    /// access), and their mask.
    pub(crate) fn iw_qp_attrs(&self, attr: &mut bindings::ib_qp_attr) -> Result<u32, c_int> {
        let iw = self.iw_cm_id();
        let mut mask: c_int = 0;
        if iw.is_null() {
            attr.qp_access_flags = 0;
            mask = (bindings::ib_qp_attr_mask_IB_QP_STATE
                | bindings::ib_qp_attr_mask_IB_QP_ACCESS_FLAGS) as c_int;
        } else {
            // SAFETY: the id's connection id is live while the id holds it.
            let ret = unsafe { bindings::iw_cm_init_qp_attr(iw, attr, &mut mask) };
            if ret != 0 {
                return Err(ret);
            }
        }
        // SAFETY: the port is set with the id's device, in its own calls.
        attr.port_num = unsafe { addr_of!((*self.private()).id.port_num).read() };
        Ok(mask as u32 | bindings::ib_qp_attr_mask_IB_QP_PORT)
    }

    /// Moves the id's QP, if rdma_cm made one, to INIT with the
    /// connection's attributes, then to RTR with `ird` responder
    /// resources.
    fn iw_qp_rtr(&self, ird: u8) -> c_int {
        // Under the id's QP lock: a consumer may destroy its QP meanwhile.
        let qp = self.lock_qp();
        if !qp.has_qp() {
            return 0;
        }
        let mut attr = bindings::ib_qp_attr {
            qp_state: bindings::ib_qp_state_IB_QPS_INIT,
            ..Default::default()
        };
        let mask = match self.iw_qp_attrs(&mut attr) {
            Ok(m) => m,
            Err(e) => return e,
        };
        let ret = qp.modify(&mut attr, mask);
        if ret != 0 {
            return ret;
        }
        attr.qp_state = bindings::ib_qp_state_IB_QPS_RTR;
        let mask = match self.iw_qp_attrs(&mut attr) {
            Ok(m) => m,
            Err(e) => return e,
        };
        attr.max_dest_rd_atomic = ird;
        qp.modify(&mut attr, mask)
    }

    /// Connects the id over iw_cm from its addresses: its events go to
    /// `H` under `token`. On failure the id has no connection id. In the
    /// id's own call.
    pub(crate) fn iw_connect<H: IwCmHandler>(&self, token: u64, p: &IwConnParams) -> c_int {
        let (Some((device, _)), (Some(src), Some(dst))) = (self.device(), self.addrs()) else {
            return EINVAL.to_errno();
        };
        // SAFETY: the device is registered while the id is on it.
        let id = match unsafe {
            IwCmId::create(device.as_raw(), Some(event_callback::<H>), token, p.tos)
        } {
            Ok(id) => id,
            Err(e) => return e.to_errno(),
        };
        let raw = id.id.as_ptr();
        // SAFETY: the new id is not in use by iw_cm until it connects.
        unsafe {
            write_sockaddr(addr_of_mut!((*raw).local_addr), &src);
            write_sockaddr(addr_of_mut!((*raw).remote_addr), &dst);
        }
        self.set_iw(id);
        let mut ret = self.iw_qp_rtr(p.ird);
        if ret == 0 {
            let mut param = p.conn_param(self);
            // SAFETY: the id's connection id is live; the parameters'
            // private data lives in `p` for the call.
            ret = unsafe { bindings::iw_cm_connect(raw, &mut param) };
        }
        if ret != 0 {
            // No event can be queued for an id that never connected.
            drop(self.take_iw());
        }
        ret
    }

    /// Accepts the connection request the id holds. In its own call.
    pub(crate) fn iw_accept(&self, p: &IwConnParams) -> c_int {
        let iw = self.iw_cm_id();
        if iw.is_null() {
            return EINVAL.to_errno();
        }
        let ret = self.iw_qp_rtr(p.ird);
        if ret != 0 {
            return ret;
        }
        let mut param = p.conn_param(self);
        // SAFETY: the id's connection id is live while the id holds it;
        // the parameters' private data lives in `p` for the call.
        unsafe { bindings::iw_cm_accept(iw, &mut param) }
    }

    /// Rejects the connection request the id holds with `private_data`
    /// (255 bytes at most are sent). In its own call.
    pub(crate) fn iw_reject(&self, private_data: &[u8]) -> c_int {
        let iw = self.iw_cm_id();
        if iw.is_null() {
            return EINVAL.to_errno();
        }
        let len = private_data.len().min(255) as u8;
        let data = if len > 0 {
            private_data.as_ptr().cast()
        } else {
            core::ptr::null()
        };
        // SAFETY: as in `iw_accept`; the data is read during the call.
        unsafe { bindings::iw_cm_reject(iw, data, len) }
    }

    /// Disconnects the id's connection (gracefully). In its own call.
    pub(crate) fn iw_disconnect(&self) -> c_int {
        let iw = self.iw_cm_id();
        if iw.is_null() {
            return EINVAL.to_errno();
        }
        // SAFETY: as in `iw_accept`.
        unsafe { bindings::iw_cm_disconnect(iw, 0) }
    }
}

/// What iw_cm reports on a connection, or with a connection request on a
/// listener, decoded; valid for the callback.
pub(crate) struct IwCmEvent<'a> {
    /// The event, if one rdma_cm handles (a request has its own callback).
    pub(crate) kind: Option<IwEventKind>,
    pub(crate) status: c_int,
    pub(crate) private_data: &'a [u8],
    pub(crate) ird: u8,
    pub(crate) ord: u8,
    /// The connection's addresses, as far as they decode.
    pub(crate) local: Result<SockAddr, c_int>,
    pub(crate) remote: Result<SockAddr, c_int>,
}

impl<'a> IwCmEvent<'a> {
    /// # Safety
    ///
    /// `e` is iw_cm's event for the callback, its private data valid for
    /// the returned value's life.
    unsafe fn decode(e: &'a bindings::iw_cm_event) -> Self {
        let kind = match e.event {
            bindings::iw_cm_event_type_IW_CM_EVENT_CONNECT_REPLY => Some(IwEventKind::ConnectReply),
            bindings::iw_cm_event_type_IW_CM_EVENT_ESTABLISHED => Some(IwEventKind::Established),
            bindings::iw_cm_event_type_IW_CM_EVENT_DISCONNECT => Some(IwEventKind::Disconnect),
            bindings::iw_cm_event_type_IW_CM_EVENT_CLOSE => Some(IwEventKind::Close),
            _ => None,
        };
        let private_data = if e.private_data.is_null() || e.private_data_len == 0 {
            &[][..]
        } else {
            // SAFETY: per this function's contract.
            unsafe {
                core::slice::from_raw_parts(
                    e.private_data.cast::<u8>(),
                    usize::from(e.private_data_len),
                )
            }
        };
        IwCmEvent {
            kind,
            status: e.status,
            private_data,
            ird: e.ird,
            ord: e.ord,
            // SAFETY: the event's own storages, valid for the call.
            local: unsafe { read_sockaddr(addr_of!(e.local_addr).cast()) },
            // SAFETY: as above.
            remote: unsafe { read_sockaddr(addr_of!(e.remote_addr).cast()) },
        }
    }
}

/// A connection request's new iw_cm id, as iw_cm hands it to a listener's
/// callback: iw_cm destroys it if the callback refuses the request.
///
/// INVARIANT: `id` is the live id of the request being handled.
pub(crate) struct IwCmRequest<'a> {
    id: NonNull<bindings::iw_cm_id>,
    _call: PhantomData<&'a ()>,
}

impl IwCmRequest<'_> {
    /// The device the request arrived on (its identity, as `Device` has).
    pub(crate) fn device_identity(&self) -> usize {
        // SAFETY: a live id of a registered device (invariant).
        unsafe { (*self.id.as_ptr()).device as usize }
    }

    /// Takes the request's id over, its events reported to `H` under
    /// `token` from now on. A callback that then refuses the request must
    /// hand the id back to iw_cm with [`IwCmId::into_raw`] (iw_cm destroys
    /// it).
    pub(crate) fn adopt<H: IwCmHandler>(self, token: u64) -> IwCmId {
        let raw = self.id.as_ptr();
        // SAFETY: a live id (invariant) in its request callback, before
        // any event of its connection.
        unsafe {
            (*raw).context = id_context(token);
            (*raw).cm_handler = Some(event_callback::<H>);
        }
        // INVARIANT: from now on rcm destroys it.
        IwCmId { id: self.id }
    }
}

/// What rdma_cm does with iw_cm's callbacks (iw_cm's work queue).
pub(crate) trait IwCmHandler {
    /// An event of the connection of the id reported as `token`.
    fn event(token: u64, e: &IwCmEvent<'_>);
    /// A connection request on a listener of the id reported as `token`:
    /// `Ok` once the handler has adopted the request's id, else the
    /// negative errno refusing it.
    fn request(token: u64, request: IwCmRequest<'_>, e: &IwCmEvent<'_>) -> Result<(), c_int>;
}

/// iw_cm's callback for a connection's events.
///
/// # Safety
///
/// Called by iw_cm with a live id of rcm's and a valid event.
unsafe extern "C" fn event_callback<H: IwCmHandler>(
    cm_id: *mut bindings::iw_cm_id,
    e: *mut bindings::iw_cm_event,
) -> c_int {
    // SAFETY: per this function's contract.
    let (token, e) = unsafe { (context_id((*cm_id).context), IwCmEvent::decode(&*e)) };
    H::event(token, &e);
    // iw_cm never destroys an id of rcm's: rcm does, on its own paths.
    0
}

/// iw_cm's callback on a listener: a connection request on a new id.
///
/// # Safety
///
/// Called by iw_cm with the request's live iw_cm id (whose context is the
/// listener's) and a valid event.
unsafe extern "C" fn request_callback<H: IwCmHandler>(
    cm_id: *mut bindings::iw_cm_id,
    e: *mut bindings::iw_cm_event,
) -> c_int {
    let Some(id) = NonNull::new(cm_id) else {
        return EINVAL.to_errno();
    };
    // SAFETY: per this function's contract.
    let e = unsafe { &*e };
    if e.event != bindings::iw_cm_event_type_IW_CM_EVENT_CONNECT_REQUEST {
        return EINVAL.to_errno();
    }
    // SAFETY: per this function's contract.
    let token = context_id(unsafe { (*cm_id).context });
    // INVARIANT: the request's live id, for this call.
    let request = IwCmRequest {
        id,
        _call: PhantomData,
    };
    // SAFETY: per this function's contract.
    let e = unsafe { IwCmEvent::decode(e) };
    match H::request(token, request, &e) {
        Ok(()) => 0,
        Err(errno) => errno,
    }
}
