// SPDX-License-Identifier: GPL-2.0

//! MAD agents of the CM class: one per port, receiving and sending whole
//! 256-byte MADs. Received MADs are copied out and the receive buffer is
//! returned to ib_mad before the handler returns; sends carry their own
//! address handle and are freed on completion.

use crate::bindings;
use crate::rdma::device::{Device, DeviceRef};
use crate::rdma::gid::GidAttr;
use core::ptr::NonNull;
use kernel::error::{from_err_ptr, to_result};
use kernel::prelude::*;
use kernel::sync::Arc;

/// Size of every MAD.
pub(crate) const MAD_SIZE: usize = 256;

/// Where a MAD goes or came from: the values an address handle is built
/// from (port, LID, SL, P_Key index and, for RoCE, the GRH).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct MadPath {
    /// Port number on the device.
    pub(crate) port: u32,
    /// Destination LID (IB) or 0.
    pub(crate) dlid: u16,
    /// Service level.
    pub(crate) sl: u8,
    /// P_Key table index to send with.
    pub(crate) pkey_index: u16,
    /// Whether a GRH is needed (always on RoCE).
    pub(crate) has_grh: bool,
    /// Destination GID.
    pub(crate) dgid: [u8; 16],
    /// Source GID table index.
    pub(crate) sgid_index: u8,
    /// GRH flow label.
    pub(crate) flow_label: u32,
    /// GRH hop limit.
    pub(crate) hop_limit: u8,
    /// GRH traffic class.
    pub(crate) traffic_class: u8,
    /// Static rate (`enum ib_rate`).
    pub(crate) static_rate: u8,
    /// Source path bits (IB).
    pub(crate) src_path_bits: u8,
    /// Destination MAC (RoCE).
    pub(crate) dmac: [u8; 6],
}

impl MadPath {
    fn from_raw(p: &bindings::rcm_h_path) -> Self {
        MadPath {
            port: p.port,
            dlid: p.dlid,
            sl: p.sl,
            pkey_index: p.pkey_index,
            has_grh: p.has_grh != 0,
            dgid: p.dgid,
            sgid_index: p.sgid_index,
            flow_label: p.flow_label,
            hop_limit: p.hop_limit,
            traffic_class: p.traffic_class,
            static_rate: p.static_rate,
            src_path_bits: p.src_path_bits,
            dmac: p.dmac,
        }
    }

    fn to_raw(self) -> bindings::rcm_h_path {
        bindings::rcm_h_path {
            port: self.port,
            flow_label: self.flow_label,
            dlid: self.dlid,
            pkey_index: self.pkey_index,
            sl: self.sl,
            has_grh: u8::from(self.has_grh),
            sgid_index: self.sgid_index,
            hop_limit: self.hop_limit,
            traffic_class: self.traffic_class,
            static_rate: self.static_rate,
            src_path_bits: self.src_path_bits,
            dgid: self.dgid,
            dmac: self.dmac,
        }
    }

    /// The path a consumer's path record describes on `device` (see
    /// `rcm_h_path_from_sa`), and the GID entry its source GID is.
    ///
    /// # Safety
    ///
    /// `device` must be registered, `rec` valid, and `sgid_attr` NULL or a
    /// GID attribute the caller holds a reference on.
    pub(crate) unsafe fn from_path_record(
        device: *mut bindings::ib_device,
        rec: *const bindings::sa_path_rec,
        sgid_attr: *const bindings::ib_gid_attr,
    ) -> Result<(Self, GidAttr)> {
        let mut raw = bindings::rcm_h_path::default();
        let mut held = core::ptr::null();
        // SAFETY: per this function's contract; `raw` and `held` are ours.
        to_result(unsafe {
            bindings::rcm_h_path_from_sa(device, rec, sgid_attr, &mut raw, &mut held)
        })?;
        // SAFETY: on success the helper hands over one reference in `held`.
        let gid = unsafe { GidAttr::from_owned(held) }.ok_or(EINVAL)?;
        Ok((MadPath::from_raw(&raw), gid))
    }

    /// The path a peer proposed (a REQ's alternate path, a LAP's), seen
    /// from this side, on `device`. `sgid_attr` is the GID the peer's
    /// message arrived on: its type gives the record type on RoCE, and
    /// with `route_from_gid` the RoCE route is resolved through it (6.12
    /// resolves a REQ's alternate path without it, which fails on RoCE).
    pub(crate) fn from_proposed(
        device: &Device<'_>,
        proposed: &bindings::rcm_h_lap_path,
        sgid_attr: Option<&GidAttr>,
        route_from_gid: bool,
    ) -> Result<Self> {
        let mut raw = bindings::rcm_h_path::default();
        let sgid_attr = sgid_attr.map_or(core::ptr::null(), GidAttr::as_ptr);
        // SAFETY: the device is registered (type invariant of `Device`),
        // `sgid_attr` NULL or held by the caller; the rest is ours.
        to_result(unsafe {
            bindings::rcm_h_path_from_lap_path(
                device.as_raw(),
                proposed,
                sgid_attr,
                route_from_gid,
                &mut raw,
            )
        })?;
        Ok(MadPath::from_raw(&raw))
    }

    /// Writes the address vector of this path on `device` into `attr`.
    pub(crate) fn fill_ah_attr(&self, device: &Device<'_>, attr: &mut bindings::rdma_ah_attr) {
        let raw = self.to_raw();
        // SAFETY: the device is registered (type invariant of `Device`);
        // `raw` and `attr` are valid for the call.
        unsafe { bindings::rcm_h_fill_ah_attr(device.as_raw(), &raw, attr) };
    }
}

/// Where a received MAD came from, as ib_mad reported it: what its reply
/// path is worked out from, later and only where it is needed (see
/// [`MadOrigin::reply_path`]).
#[derive(Clone, Copy)]
pub(crate) struct MadOrigin(bindings::rcm_h_mad_origin);

impl MadOrigin {
    /// No origin (port 0 is no IB/RoCE port).
    const EMPTY: MadOrigin = MadOrigin(bindings::rcm_h_mad_origin {
        grh: [0; 10],
        port: 0,
        wc_flags: 0,
        slid: 0,
        pkey_index: 0,
        vlan_id: 0,
        sl: 0,
        dlid_path_bits: 0,
        network_hdr_type: 0,
    });

    /// The port the MAD arrived on.
    pub(crate) fn port(&self) -> u32 {
        self.0.port
    }

    /// Whether `other` came from the same sender, so that its reply path
    /// is this one's (see `rcm_h_same_sender`).
    pub(crate) fn same_sender(&self, other: &MadOrigin) -> bool {
        // SAFETY: both origins are ours, valid for the call.
        unsafe { bindings::rcm_h_same_sender(&self.0, &other.0) }
    }

    /// The path to answer the MAD on, through `device`, the device it
    /// arrived on. May sleep: on RoCE it waits for ib_core's address
    /// resolution of the sender's MAC (on ib_core's address work queue,
    /// so the caller must hold nothing that queue's callbacks take).
    pub(crate) fn reply_path(&self, device: &DeviceRef) -> Result<MadPath> {
        let mut raw = bindings::rcm_h_path::default();
        // SAFETY: the reference keeps the device alive (type invariant of
        // `DeviceRef`); the origin and `raw` are ours.
        to_result(unsafe { bindings::rcm_h_reply_path(device.as_raw(), &self.0, &mut raw) })?;
        Ok(MadPath::from_raw(&raw))
    }
}

/// How long (ms) a sender's reply path may serve its later MADs: the
/// module parameter `reply_path_ms` (0: not beyond the batch it was
/// worked out for).
pub(crate) fn reply_path_reuse_ms() -> u64 {
    // SAFETY: reads a module parameter; any context.
    u64::from(unsafe { bindings::rcm_h_reply_path_ms() })
}

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

/// A registered CM MAD agent on one port; unregisters on drop. It holds
/// a reference on its handler: a handler that owns its agents must drop
/// them to be freed.
///
/// INVARIANT: `agent` is a registered agent whose context is the address
/// of `handler`'s contents.
pub(crate) struct MadAgent<H: MadHandler> {
    agent: NonNull<bindings::ib_mad_agent>,
    port: u32,
    /// Released after the agent is unregistered (`Drop` runs first).
    _handler: Arc<H>,
}

// SAFETY: the agent pointer is only used to post sends and unregister,
// both of which ib_mad allows from any thread; `H: Sync` is shared.
unsafe impl<H: MadHandler> Send for MadAgent<H> {}
// SAFETY: `&MadAgent` only posts sends, which ib_mad serialises itself.
unsafe impl<H: MadHandler> Sync for MadAgent<H> {}

impl<H: MadHandler> MadAgent<H> {
    /// Registers the CM class on `port` of `device`.
    pub(crate) fn register(device: &Device<'_>, port: u32, handler: Arc<H>) -> Result<Self> {
        let ctx: *const H = &*handler;
        // SAFETY: `device` is a registered device (type invariant of
        // `Device`); the callbacks match ib_mad's handler types; the
        // context is kept alive by the reference the agent holds.
        let agent = from_err_ptr(unsafe {
            bindings::rcm_h_register_cm_agent(
                device.as_raw(),
                port,
                Some(send_done::<H>),
                Some(received::<H>),
                ctx.cast_mut().cast(),
            )
        })?;
        let agent = NonNull::new(agent).ok_or(ENOMEM)?;
        // INVARIANT: registered with `handler`'s contents as context.
        Ok(MadAgent {
            agent,
            port,
            _handler: handler,
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
    pub(crate) fn send(&self, path: &MadPath, mad: &[u8; MAD_SIZE], cookie: u64) -> Result {
        let raw = path.to_raw();
        // SAFETY: the agent is registered (type invariant); `raw` and `mad`
        // are valid for the call, which copies both.
        let buf = from_err_ptr(unsafe {
            bindings::rcm_h_alloc_send(self.agent.as_ptr(), &raw, mad.as_ptr().cast(), cookie)
        })?;
        // SAFETY: `buf` is a send buffer of this agent, fully set up.
        let ret = unsafe { bindings::ib_post_send_mad(buf, core::ptr::null_mut()) };
        if ret != 0 {
            // SAFETY: the post failed, so the buffer is still ours.
            unsafe { bindings::rcm_h_free_send(buf) };
        }
        to_result(ret)
    }
}

impl<H: MadHandler> Drop for MadAgent<H> {
    fn drop(&mut self) {
        // SAFETY: registered per the type invariant; this flushes pending
        // sends (their completions free them), waits for callbacks, then
        // drops the port's kept address handles.
        unsafe { bindings::rcm_h_unregister_cm_agent(self.agent.as_ptr()) };
    }
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
    // SAFETY: the context is the handler, kept alive by the `MadAgent`,
    // which ib_mad does not let unregister while a callback runs.
    let handler = unsafe { &*agent.context.cast::<H>() };
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
        // SAFETY: the completion is ib_mad's, valid during the callback;
        // the origin is ours.
        unsafe {
            bindings::rcm_h_mad_origin(u32::from(agent.port_num), recv, &mut received.origin.0)
        };
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
    let handler = unsafe { &*agent.context.cast::<H>() };
    // SAFETY: the buffer was allocated by rcm_h_alloc_send.
    let cookie = unsafe { bindings::rcm_h_send_cookie(sent.send_buf) };
    let ok = sent.status == bindings::ib_wc_status_IB_WC_SUCCESS
        || sent.status == bindings::ib_wc_status_IB_WC_WR_FLUSH_ERR;
    // SAFETY: the send is complete; the buffer and its AH are ours.
    unsafe { bindings::rcm_h_free_send(sent.send_buf) };
    handler.sent(cookie, ok);
}
