// SPDX-License-Identifier: GPL-2.0

//! An rdma_cm event as an id's handler receives it from rcm, read through
//! safe accessors.

use crate::bindings;
use crate::rdma::device::Device;
use kernel::ffi::c_int;

/// A consumer inside rcm (the rdma_ucm device) that hears its rdma_cm ids'
/// events through the handler [`handler_of`] gives it, as a kernel
/// consumer does through its own.
pub(crate) trait IdEventHandler {
    /// The event `ev` of the id `id`: non-zero makes rdma_cm destroy the
    /// id (the return of an `rdma_cm_event_handler`).
    ///
    /// # Safety
    ///
    /// `id` is a live id of rcm's rdma_cm whose handler this is, its
    /// handler lock held for the call.
    unsafe fn event(id: *mut bindings::rdma_cm_id, ev: EventRef<'_>) -> c_int;
}

/// The `rdma_cm_event_handler` that hands an id's events to `H`.
pub(crate) fn handler_of<H: IdEventHandler>() -> bindings::rdma_cm_event_handler {
    Some(id_event::<H>)
}

/// # Safety
///
/// Called by rcm's rdma_cm with a live id whose handler this is (its
/// handler lock held) and an event it built.
unsafe extern "C" fn id_event<H: IdEventHandler>(
    id: *mut bindings::rdma_cm_id,
    ev: *mut bindings::rdma_cm_event,
) -> c_int {
    // SAFETY: per this function's contract.
    unsafe { H::event(id, EventRef::from_raw(ev)) }
}

/// The size of an address handle in the uverbs layout.
pub(crate) const USER_AH_SIZE: usize = core::mem::size_of::<bindings::ib_uverbs_ah_attr>();

/// A `struct rdma_cm_event` rcm delivered, borrowed for the handler's call.
///
/// INVARIANT: the event was built by rcm (`CmIdPrivate::deliver` or the
/// multicast delivery): zeroed, then `param.ud` set for a multicast event
/// and for an id whose QP type is UD, `param.conn` for the others (a
/// multicast event's `ud.private_data` is its join's context, with length
/// 0); a non-NULL private data
/// pointer with a non-zero length points to that many bytes living for
/// `'a`.
#[derive(Clone, Copy)]
pub(crate) struct EventRef<'a>(&'a bindings::rdma_cm_event);

/// An event's parameters, by the kind of the id's QP.
pub(crate) enum EventParams<'a> {
    /// A connected id's.
    Conn(&'a bindings::rdma_conn_param),
    /// A datagram id's.
    Ud(&'a bindings::rdma_ud_param),
}

impl<'a> EventRef<'a> {
    /// The event `ev` points to.
    ///
    /// # Safety
    ///
    /// `ev` is an event rcm delivered (see the type invariant), valid for
    /// `'a`.
    pub(crate) unsafe fn from_raw(ev: *const bindings::rdma_cm_event) -> Self {
        // INVARIANT: per this function's contract.
        // SAFETY: per this function's contract.
        EventRef(unsafe { &*ev })
    }

    /// The event's fields outside its parameters.
    pub(crate) fn raw(&self) -> &'a bindings::rdma_cm_event {
        self.0
    }

    /// The parameters of an event for an id whose QP type is UD (`ud`)
    /// or not.
    pub(crate) fn params(&self, ud: bool) -> EventParams<'a> {
        // SAFETY: rcm sets the member the id's QP type uses on a zeroed
        // event (type invariant); either member's fields are plain data.
        unsafe {
            if ud {
                EventParams::Ud(&self.0.param.ud)
            } else {
                EventParams::Conn(&self.0.param.conn)
            }
        }
    }

    /// A datagram event's address handle in the uverbs layout
    /// (`ib_copy_ah_attr_to_user` for `device`, the id's), as bytes.
    pub(crate) fn user_ah(
        &self,
        device: &Device<'_>,
        ud: &bindings::rdma_ud_param,
    ) -> [u8; USER_AH_SIZE] {
        let mut ah = bindings::ib_uverbs_ah_attr::default();
        // SAFETY: the device is registered (type invariant of `Device`);
        // ib_core only reads the attributes; `ah` is ours.
        unsafe {
            bindings::ib_copy_ah_attr_to_user(
                device.as_raw(),
                &mut ah,
                core::ptr::addr_of!(ud.ah_attr).cast_mut(),
            )
        };
        // SAFETY: the uverbs structure is plain data of this size, without
        // padding (a uAPI layout).
        unsafe { core::mem::transmute::<bindings::ib_uverbs_ah_attr, [u8; USER_AH_SIZE]>(ah) }
    }

    /// The context of the join a multicast event reports, or `None` for
    /// other events.
    pub(crate) fn join_context(&self) -> Option<usize> {
        matches!(
            self.0.event,
            bindings::rdma_cm_event_type_RDMA_CM_EVENT_MULTICAST_JOIN
                | bindings::rdma_cm_event_type_RDMA_CM_EVENT_MULTICAST_ERROR
        )
        // SAFETY: a multicast event's member is `ud` (type invariant).
        .then(|| unsafe { self.0.param.ud.private_data } as usize)
    }

    /// The private data `ptr` and `len` of this event's parameters name.
    pub(crate) fn private_data(&self, ptr: *const core::ffi::c_void, len: u8) -> &'a [u8] {
        if ptr.is_null() || len == 0 {
            return &[];
        }
        // SAFETY: the parameters' private data lives for `'a` (type
        // invariant).
        unsafe { core::slice::from_raw_parts(ptr.cast::<u8>(), usize::from(len)) }
    }
}
