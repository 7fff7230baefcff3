// SPDX-License-Identifier: GPL-2.0

//! MAD agents of the CM class: one per port, receiving and sending whole
//! 256-byte MADs. Received MADs are copied out and the receive buffer is
//! returned to ib_mad before the handler returns; sends share address
//! handles per path (`mad_ah.rs`) and are freed on completion.

use crate::bindings;
use crate::rdma::device::{Device, DeviceRef};
use crate::rdma::mad_ah::{HeldAh, MadAhs};
use crate::rdma::mad_path::{MadOrigin, MadPath};
use core::ffi::c_void;
use core::ptr::NonNull;
use kernel::error::{from_err_ptr, to_result};
use kernel::ffi::c_int;
use kernel::prelude::*;
use kernel::sync::Arc;

/// Size of every MAD.
pub(crate) const MAD_SIZE: usize = 256;

/// `rcm.peer_window`: the requests one peer may have awaiting their first
/// answer (0: no limit).
pub(crate) fn peer_window() -> u32 {
    // SAFETY: reads a module parameter; any context.
    unsafe { bindings::rcm_h_peer_window() }
}

/// A received MAD: the bytes and where it came from.
#[derive(Clone, Copy)]
pub(crate) struct ReceivedMad {
    /// The device it arrived on (an identity, never dereferenced).
    pub(crate) device: usize,
    /// The whole MAD.
    pub(crate) mad: [u8; MAD_SIZE],
    /// Its sender, for a reply path.
    pub(crate) origin: MadOrigin,
}

impl ReceivedMad {
    /// No MAD (device 0 is no device): what a preallocated slot holds.
    pub(crate) const EMPTY: ReceivedMad = ReceivedMad {
        device: 0,
        mad: [0; MAD_SIZE],
        origin: MadOrigin::EMPTY,
    };
}

/// What a MAD agent's owner does with its traffic. Called in process
/// context (ib_mad's completion work), never concurrently with the
/// agent's unregistration returning.
pub(crate) trait MadHandler: Send + Sync {
    /// A MAD arrived.
    fn received(&self, mad: &ReceivedMad);
    /// A send finished; `ok` false if it could not be delivered.
    fn sent(&self, cookie: u64, ok: bool);
}

/// What an agent's callbacks reach through its context: the handler and
/// the agent's address handles.
#[pin_data]
struct AgentShared<H: MadHandler> {
    handler: Arc<H>,
    #[pin]
    ahs: MadAhs,
}

/// A registered CM MAD agent on one port; unregisters on drop. It holds
/// a reference on its handler: a handler that owns its agents must drop
/// them to be freed.
///
/// INVARIANT: `agent` is a registered agent whose context is the address
/// of `shared`, and every send buffer it posts holds a handle of
/// `shared.ahs` (`HeldAh::token` in `context[1]`) and its cookie in
/// `context[0]`.
pub(crate) struct MadAgent<H: MadHandler> {
    agent: NonNull<bindings::ib_mad_agent>,
    port: u32,
    /// Released after the agent is unregistered (`Drop` runs first).
    shared: Pin<KBox<AgentShared<H>>>,
}

// SAFETY: the agent pointer is only used to post sends and unregister,
// both of which ib_mad allows from any thread; `H: Sync` is shared.
unsafe impl<H: MadHandler> Send for MadAgent<H> {}
// SAFETY: `&MadAgent` only posts sends, which ib_mad serialises itself.
unsafe impl<H: MadHandler> Sync for MadAgent<H> {}

impl<H: MadHandler> MadAgent<H> {
    /// Registers the CM class on `port` of `device`.
    pub(crate) fn register(device: &Device<'_>, port: u32, handler: Arc<H>) -> Result<Self> {
        let shared = KBox::pin_init(
            pin_init!(AgentShared {
                handler,
                ahs <- MadAhs::new(),
            }),
            GFP_KERNEL,
        )?;
        let ctx: *const AgentShared<H> = &*shared;
        // The CM class, version 2 (IBTA 1.2, as the C CM), method Send.
        let mut req = bindings::ib_mad_reg_req {
            mgmt_class: bindings::IB_MGMT_CLASS_CM as u8,
            mgmt_class_version: 2,
            ..Default::default()
        };
        let send = bindings::IB_MGMT_METHOD_SEND as usize;
        let word_bits = 8 * core::mem::size_of_val(&req.method_mask[0]);
        req.method_mask[send / word_bits] |= 1 << (send % word_bits);
        // SAFETY: `device` is a registered device (type invariant of
        // `Device`); ib_mad copies the request; the callbacks match
        // ib_mad's handler types; the context is kept alive by the
        // reference the agent holds.
        let agent = from_err_ptr(unsafe {
            bindings::ib_register_mad_agent(
                device.as_raw(),
                port,
                bindings::ib_qp_type_IB_QPT_GSI,
                &mut req,
                0,
                Some(send_done::<H>),
                Some(received::<H>),
                ctx.cast_mut().cast(),
                0,
            )
        })?;
        let agent = NonNull::new(agent).ok_or(ENOMEM)?;
        // INVARIANT: registered with `shared` as context; no send yet.
        Ok(MadAgent {
            agent,
            port,
            shared,
        })
    }

    /// The port the agent serves.
    pub(crate) fn port(&self) -> u32 {
        self.port
    }

    /// A reference on the agent's device, which keeps it from being freed
    /// after the agent is gone; `None` once the device is going away.
    pub(crate) fn device_ref(&self) -> Option<DeviceRef> {
        // SAFETY: the agent is registered (type invariant), so its device
        // is registered and alive for this call.
        unsafe { DeviceRef::try_get(self.agent.as_ref().device) }
    }

    /// Sends a MAD on `path`; `cookie` comes back in [`MadHandler::sent`].
    /// May sleep (it may make an address handle).
    pub(crate) fn send(&self, path: &MadPath, mad: &[u8; MAD_SIZE], cookie: u64) -> Result {
        let agent = self.agent.as_ptr();
        // SAFETY: the agent is registered (type invariant), so its QP and
        // that QP's PD are alive.
        let pd = unsafe { (*(*agent).qp).pd };
        // SAFETY: the agent's PD, alive (above).
        let held = unsafe { self.shared.ahs.get(pd, path) }?;
        // SAFETY: the agent is registered; a whole MAD, no RMPP.
        let buf = unsafe {
            bindings::ib_create_send_mad(
                agent,
                1,
                path.pkey_index,
                0,
                bindings::IB_MGMT_MAD_HDR as c_int,
                bindings::IB_MGMT_MAD_DATA as c_int,
                kernel::bindings::GFP_KERNEL,
                bindings::IB_MGMT_BASE_VERSION as u8,
            )
        };
        let buf = match from_err_ptr(buf) {
            Ok(buf) => buf,
            Err(e) => {
                self.shared.ahs.put(held);
                return Err(e);
            }
        };
        // SAFETY: a new send buffer of this agent, ours until posted, with
        // room for a whole MAD. INVARIANT: it holds `held` and the cookie;
        // ib_mad neither retries nor times it out (rcm retransmits itself).
        unsafe {
            core::ptr::copy_nonoverlapping(mad.as_ptr(), (*buf).mad.cast::<u8>(), MAD_SIZE);
            (*buf).ah = held.as_ptr();
            (*buf).context[0] = cookie as usize as *mut c_void;
            (*buf).context[1] = held.token() as *mut c_void;
            (*buf).timeout_ms = 0;
            (*buf).retries = 0;
        }
        // SAFETY: `buf` is a send buffer of this agent, fully set up.
        let ret = unsafe { bindings::ib_post_send_mad(buf, core::ptr::null_mut()) };
        if ret != 0 {
            // SAFETY: the post failed, so the buffer is still ours.
            unsafe { free_send(&self.shared.ahs, buf) };
        }
        to_result(ret)
    }
}

impl<H: MadHandler> Drop for MadAgent<H> {
    fn drop(&mut self) {
        // SAFETY: registered per the type invariant; this flushes pending
        // sends (their completions free them and give their handles
        // back) and waits for callbacks.
        unsafe { bindings::ib_unregister_mad_agent(self.agent.as_ptr()) };
        self.shared.ahs.clear();
    }
}

/// Frees a send buffer and gives its address handle back; its cookie.
///
/// # Safety
///
/// `buf` is a send buffer a [`MadAgent`] set up with `ahs`, no longer
/// in ib_mad's hands.
unsafe fn free_send(ahs: &MadAhs, buf: *mut bindings::ib_mad_send_buf) -> u64 {
    // SAFETY: per this function's contract.
    let (ah, token, cookie) = unsafe { ((*buf).ah, (*buf).context[1], (*buf).context[0]) };
    // SAFETY: the buffer is ours to free, exactly once.
    unsafe { bindings::ib_free_send_mad(buf) };
    if let Some(held) = HeldAh::from_token(ah, token as usize) {
        ahs.put(held);
    }
    cookie as usize as u64
}

/// # Safety
///
/// Called by ib_mad for an agent registered by [`MadAgent::register`].
unsafe extern "C" fn received<H: MadHandler>(
    agent: *mut bindings::ib_mad_agent,
    _send_buf: *mut bindings::ib_mad_send_buf,
    wc: *mut bindings::ib_mad_recv_wc,
) {
    // SAFETY: ib_mad passes its agent and a receive completion that stay
    // valid until ib_free_recv_mad below.
    let (agent, recv) = unsafe { (&*agent, &*wc) };
    // SAFETY: the context is the agent's shared part, kept alive by the
    // `MadAgent`, which ib_mad does not let unregister while a callback
    // runs.
    let handler = &unsafe { &*agent.context.cast::<AgentShared<H>>() }.handler;
    let len = usize::try_from(recv.mad_len).unwrap_or(0);
    // SAFETY: every member of the union is a pointer to the same received
    // MAD buffer, which ib_mad always sets.
    let data = unsafe { recv.recv_buf.__bindgen_anon_1.mad }.cast::<u8>();
    if len >= MAD_SIZE && !data.is_null() {
        let mut received = ReceivedMad {
            device: agent.device as usize,
            ..ReceivedMad::EMPTY
        };
        // SAFETY: the receive buffer holds at least `mad_len` >= 256 bytes.
        let bytes = unsafe { core::slice::from_raw_parts(data, MAD_SIZE) };
        received.mad.copy_from_slice(bytes);
        // SAFETY: the completion is ib_mad's, valid during the callback.
        received.origin = unsafe { MadOrigin::of_received(u32::from(agent.port_num), recv) };
        handler.received(&received);
    }
    // SAFETY: the completion is ours to free, exactly once.
    unsafe { bindings::ib_free_recv_mad(wc) };
}

/// # Safety
///
/// Called by ib_mad when a send of an agent registered by
/// [`MadAgent::register`] completes.
unsafe extern "C" fn send_done<H: MadHandler>(
    agent: *mut bindings::ib_mad_agent,
    wc: *mut bindings::ib_mad_send_wc,
) {
    // SAFETY: ib_mad passes its agent and the send completion.
    let (agent, sent) = unsafe { (&*agent, &*wc) };
    // SAFETY: as in `received`.
    let shared = unsafe { &*agent.context.cast::<AgentShared<H>>() };
    let ok = sent.status == bindings::ib_wc_status_IB_WC_SUCCESS
        || sent.status == bindings::ib_wc_status_IB_WC_WR_FLUSH_ERR;
    // SAFETY: the send is complete: the buffer, set up by `send` (type
    // invariant of `MadAgent`), is ours again.
    let cookie = unsafe { free_send(&shared.ahs, sent.send_buf) };
    shared.handler.sent(cookie, ok);
}
