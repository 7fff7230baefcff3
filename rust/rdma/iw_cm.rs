// SPDX-License-Identifier: GPL-2.0

//! What rdma_cm holds of the in-tree iw_cm (`rcm_iw_helpers.c`): the
//! iw_cm ids it owns, each destroyed when its value drops, the parameters
//! of a connect or accept as the helper takes them, and iw_cm's callbacks,
//! decoded and handed to an [`IwCmHandler`].
//!
//! `iw_destroy_cm_id` may wait for iw_cm's work queue, whose callbacks
//! take rdma_cm's locks: an [`IwCmId`] is dropped with none of them held.

use crate::bindings;
use crate::proto::rdma_cm::{IwEventKind, SockAddr};
use crate::rdma::sockaddr::read_sockaddr;
use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::ffi::c_int;
use kernel::prelude::*;

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
    /// Takes ownership of `id`; `None` for NULL.
    ///
    /// # Safety
    ///
    /// A non-NULL `id` is a live iw_cm id that nobody else destroys from
    /// now on.
    pub(crate) unsafe fn from_raw(id: *mut bindings::iw_cm_id) -> Option<Self> {
        // INVARIANT: per this function's contract.
        NonNull::new(id).map(|id| IwCmId { id })
    }

    /// A listener on `device` for the id `listener` (bound), its requests
    /// reported under `token`.
    ///
    /// # Safety
    ///
    /// `device` is registered for the call and `listener`'s source address
    /// is written.
    pub(crate) unsafe fn listen(
        listener: *mut bindings::rdma_id_private,
        device: *mut bindings::ib_device,
        token: u64,
        backlog: c_int,
        tos: Option<u8>,
        afonly: bool,
    ) -> Result<Self> {
        let tos = tos.map_or(-1, c_int::from);
        // SAFETY: per this function's contract.
        let id =
            unsafe { bindings::rcm_h_iw_listen(listener, device, token, backlog, tos, afonly) };
        let id = kernel::error::from_err_ptr(id)?;
        // SAFETY: a new id, ours alone.
        unsafe { Self::from_raw(id) }.ok_or(ENOMEM)
    }

    /// Hands the id to a new owner: an rdma_cm id's connection field, or
    /// iw_cm (which destroys a request's id that its handler refused).
    pub(crate) fn into_raw(self) -> *mut bindings::iw_cm_id {
        let id = self.id.as_ptr();
        core::mem::forget(self);
        id
    }

    /// Refuses the connection request the id came from, then destroys it.
    pub(crate) fn refuse(self) {
        // SAFETY: a live id, taken out of this value: destroyed once.
        unsafe { bindings::rcm_h_iw_refuse(self.into_raw()) };
    }
}

impl Drop for IwCmId {
    fn drop(&mut self) {
        // SAFETY: a live id this value alone destroys (invariant).
        unsafe { bindings::rcm_h_iw_destroy(self.id.as_ptr()) };
    }
}

/// A connect's or accept's parameters with their own copy of the private
/// data, kept from the core's call until the helper runs.
#[derive(Clone, Copy)]
pub(crate) struct IwConnParams {
    data: [u8; 255],
    param: bindings::rcm_h_iw_param,
}

// SAFETY: `param.private_data` is set to `data` only by `param`, whose
// borrow ends before the value can move; it is never read through
// otherwise.
unsafe impl Send for IwConnParams {}

impl IwConnParams {
    /// The parameters; private data past 255 bytes (the ABI's limit) is
    /// not sent.
    pub(crate) fn new(private_data: &[u8], ord: u8, ird: u8, qpn: u32, tos: Option<u8>) -> Self {
        let len = private_data.len().min(255);
        let mut data = [0; 255];
        data[..len].copy_from_slice(&private_data[..len]);
        IwConnParams {
            data,
            param: bindings::rcm_h_iw_param {
                private_data: core::ptr::null(),
                // At most 255 (above).
                private_data_len: len as u8,
                ord,
                ird,
                qpn,
                tos: tos.map_or(-1, c_int::from),
            },
        }
    }

    /// The helper's view, its private data pointing into `self`.
    pub(crate) fn param(&mut self) -> &bindings::rcm_h_iw_param {
        self.param.private_data = self.data.as_ptr().cast();
        &self.param
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

impl IwCmEvent<'_> {
    /// # Safety
    ///
    /// `e` is the helper's valid event, its private data and addresses
    /// valid for the returned value's life.
    unsafe fn decode(e: &bindings::rcm_h_iw_event) -> Self {
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
            // SAFETY: per this function's contract.
            local: unsafe { read_sockaddr(e.local) },
            // SAFETY: per this function's contract.
            remote: unsafe { read_sockaddr(e.remote) },
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

    /// Takes the request's id over, its events reported under `token`
    /// from now on. A callback that then refuses the request must hand the
    /// id back to iw_cm with [`IwCmId::into_raw`] (iw_cm destroys it).
    pub(crate) fn adopt(self, token: u64) -> IwCmId {
        // SAFETY: a live id (invariant).
        unsafe { bindings::rcm_h_iw_adopt(self.id.as_ptr(), token) };
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

/// Has iw_cm's callbacks go to `H` from now on, for the module's life.
pub(crate) fn set_handler<H: IwCmHandler>() {
    // SAFETY: the table is a constant of the module, so it outlives every
    // iw_cm id; the helper only reads it.
    unsafe { bindings::rcm_h_iw_set_callbacks(&Callbacks::<H>::TABLE) };
}

struct Callbacks<H>(PhantomData<H>);

impl<H: IwCmHandler> Callbacks<H> {
    const TABLE: bindings::rcm_iw_callbacks = bindings::rcm_iw_callbacks {
        event: Some(event_callback::<H>),
        request: Some(request_callback::<H>),
    };
}

/// # Safety
///
/// Called by the helper with a valid event.
unsafe extern "C" fn event_callback<H: IwCmHandler>(
    token: u64,
    e: *const bindings::rcm_h_iw_event,
) -> c_int {
    // SAFETY: per this function's contract.
    let e = unsafe { IwCmEvent::decode(&*e) };
    H::event(token, &e);
    // iw_cm never destroys an id of rcm's: rcm does, on its own paths.
    0
}

/// # Safety
///
/// Called by the helper with the request's live iw_cm id and a valid
/// event.
unsafe extern "C" fn request_callback<H: IwCmHandler>(
    token: u64,
    cm_id: *mut bindings::iw_cm_id,
    e: *const bindings::rcm_h_iw_event,
) -> c_int {
    let Some(id) = NonNull::new(cm_id) else {
        return EINVAL.to_errno();
    };
    // INVARIANT: the request's live id, for this call.
    let request = IwCmRequest {
        id,
        _call: PhantomData,
    };
    // SAFETY: per this function's contract.
    let e = unsafe { IwCmEvent::decode(&*e) };
    match H::request(token, request, &e) {
        Ok(()) => 0,
        Err(errno) => errno,
    }
}
