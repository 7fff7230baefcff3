// SPDX-License-Identifier: GPL-2.0

//! rdma_cm's events for the device's ids, turned into the records
//! GET_EVENT hands out and queued on the owning file (6.12's rules, kept
//! by the table): a request becomes a context of its own, events of a
//! context userspace has not named yet are dropped, DEVICE_REMOVAL closes
//! the context and gives its id back to rdma_cm to destroy.

use super::UcmaAbi;
use crate::abi::rdma_cm::id::RdmaIdBox;
use crate::abi::rdma_cm::RdmaCmAbi;
use crate::abi::service::with_part;
use crate::bindings;
use crate::proto::ucma::command::{ConnParam, PrivateData};
use crate::proto::ucma::event::{EventParam, EventResp, UdEvent, AH_ATTR_SIZE};
use crate::proto::ucma::layout::response;
use crate::proto::ucma::table::Refusal;
use crate::proto::ucma::{CtxId, Ece, FileId, McId};
use crate::rdma::rdma_event::{EventParams, EventRef, IdEventHandler, USER_AH_SIZE};
use crate::rdma::ucma_dev::UcmaFile;
use crate::shell::CmService;
use kernel::error::code;
use kernel::ffi::{c_int, c_void};
use kernel::prelude::*;
use kernel::uaccess::{UserPtr, UserSlice};

const CONNECT_REQUEST: u32 = bindings::rdma_cm_event_type_RDMA_CM_EVENT_CONNECT_REQUEST;
const DEVICE_REMOVAL: u32 = bindings::rdma_cm_event_type_RDMA_CM_EVENT_DEVICE_REMOVAL;

/// A context as an id's `context` pointer (the id's consumer field).
pub(super) fn ctx_pointer(ctx: CtxId) -> *mut c_void {
    ctx.0 as usize as *mut c_void
}

/// The handler of every id the device creates
/// ([`crate::rdma::rdma_event::handler_of`]).
pub(super) struct UcmaIdEvents;

impl IdEventHandler for UcmaIdEvents {
    unsafe fn event(id: *mut bindings::rdma_cm_id, ev: EventRef<'_>) -> c_int {
        // SAFETY: an id of rcm's rdma_cm (this function's contract).
        let b = unsafe { RdmaIdBox::from_id(id) };
        with_part(|s, ucma: &UcmaAbi| ucma.on_event(s, b, ev)).unwrap_or(0)
    }
}

impl UcmaAbi {
    /// One event; non-zero makes rdma_cm destroy the id (a refused
    /// request's, or a removed device's).
    fn on_event(&self, s: &CmService, b: &RdmaIdBox, ev: EventRef<'_>) -> c_int {
        let ctx = CtxId(b.context() as usize as u32);
        // A new connection's context keeps its box, which its registry
        // holds (no lookup for other events).
        let new_box = match ev.raw().event {
            CONNECT_REQUEST => match s.part::<RdmaCmAbi>().and_then(|r| r.id_box(b.core)) {
                Some(new_box) => Some(new_box),
                None => return code::EINVAL.to_errno(),
            },
            _ => None,
        };
        let resp = record(b, ev);
        if let Some(mc) = ev.join_context() {
            // The join's context is the membership.
            let mut q = self.queues.lock();
            let d = q.queues.mc_event(McId(mc as u32), resp);
            q.files.wake(d);
            return 0;
        }
        match (ev.raw().event, new_box) {
            // A new context: both halves.
            (CONNECT_REQUEST, Some(new_box)) => {
                self.both(|t, files| match t.request(ctx, new_box, resp) {
                    Ok((new_ctx, file)) => {
                        b.set_context(ctx_pointer(new_ctx));
                        files.wake_file(file);
                        0
                    }
                    Err(Refusal::Backlog | Refusal::NoMemory) => code::ENOMEM.to_errno(),
                    Err(Refusal::NoListener) => code::EINVAL.to_errno(),
                })
            }
            (DEVICE_REMOVAL, _) => {
                // Closed before the event is queued, so a command after
                // GET_EVENT gave it out gets `-ENXIO`. The context stays
                // for DESTROY_ID; its id goes now, or when the command
                // using it ends.
                let destroy_now = self.contexts.lock().close(ctx).is_some();
                self.queue_record(ctx, resp);
                c_int::from(destroy_now)
            }
            _ => {
                self.queue_record(ctx, resp);
                0
            }
        }
    }

    /// GET_EVENT: waits for the file's next event, copies it out, then
    /// counts it as delivered. The copy runs under the file's own reader
    /// lock only: a response buffer whose fault never completes holds up
    /// this file's readers, not the queues' lock that every id's event
    /// handler (kernel consumers' deliveries among them) takes. A copy
    /// that faults delivers nothing (6.12 keeps the event).
    #[inline(never)]
    pub(super) fn get_event(
        &self,
        f: &UcmaFile,
        file: FileId,
        out_len: u32,
        response: u64,
    ) -> Result {
        let out = UserPtr::try_from(response).map_err(|_| code::EFAULT)?;
        let mut record = [0u8; response::EVENT];
        loop {
            let reader = f.lock_reader()?;
            // The queues' lock is held for the look only, which writes
            // the record here. An event already queued (the common case)
            // is taken without the wait's own look.
            let peeked = self
                .queues
                .lock()
                .queues
                .peek(file, |event| event.write_to(&mut record));
            let Some((ticket, ())) = peeked else {
                drop(reader);
                f.wait_event()?;
                continue;
            };
            let n = usize::try_from(out_len)
                .unwrap_or(usize::MAX)
                .min(record.len());
            UserSlice::new(out, n).writer().write_slice(&record[..n])?;
            // Gone meanwhile only if its context was destroyed: then
            // userspace has a copy of an event of a context it destroyed.
            self.queues.lock().queues.take(file, ticket);
            return Ok(());
        }
    }

    /// Queues an event of userspace's own making for `ctx` (IB_PATH's
    /// ROUTE_RESOLVED), as rdma_cm's are.
    pub(super) fn queue(&self, ctx: CtxId, event: u32) {
        let resp = EventResp {
            uid: 0,
            id: 0,
            event,
            status: 0,
            param: EventParam::Conn(conn(&bindings::rdma_conn_param::default(), &[])),
            ece: Ece::default(),
        };
        self.queue_record(ctx, resp);
    }

    /// Queues the record of an event of `ctx` on its file, and wakes the
    /// file's readers.
    fn queue_record(&self, ctx: CtxId, resp: EventResp) {
        let mut q = self.queues.lock();
        let d = q.queues.event(ctx, resp);
        q.files.wake(d);
    }

    /// Whether the file has an event (poll, GET_EVENT's wait).
    pub(super) fn has_event(&self, file: FileId) -> bool {
        self.queues.lock().queues.has_event(file)
    }
}

/// The record of an event as userspace reads it (uid and id are the
/// table's to fill).
fn record(b: &RdmaIdBox, event: EventRef<'_>) -> EventResp {
    let ud_id = b.qp_type() == bindings::ib_qp_type_IB_QPT_UD;
    let param = match event.params(ud_id || event.join_context().is_some()) {
        EventParams::Ud(u) => EventParam::Ud(ud(b, event, u)),
        EventParams::Conn(c) => EventParam::Conn(conn(
            c,
            event.private_data(c.private_data, c.private_data_len),
        )),
    };
    let ev = event.raw();
    EventResp {
        uid: 0,
        id: 0,
        event: ev.event,
        status: ev.status,
        param,
        ece: Ece {
            vendor_id: ev.ece.vendor_id,
            attr_mod: ev.ece.attr_mod,
        },
    }
}

/// A connected id's parameters (6.12 reports no Q_Key here), with the
/// event's private data (a u8 length always fits).
fn conn(c: &bindings::rdma_conn_param, private_data: &[u8]) -> ConnParam {
    ConnParam {
        qp_num: c.qp_num,
        qkey: 0,
        private_data: PrivateData::new(private_data).unwrap_or_default(),
        srq: c.srq != 0,
        responder_resources: c.responder_resources,
        initiator_depth: c.initiator_depth,
        flow_control: c.flow_control != 0,
        retry_count: c.retry_count,
        rnr_retry_count: c.rnr_retry_count,
    }
}

/// A datagram id's parameters, with the address handle in user layout.
fn ud(b: &RdmaIdBox, event: EventRef<'_>, u: &bindings::rdma_ud_param) -> UdEvent {
    let ah_attr = b
        .device()
        .map_or([0; AH_ATTR_SIZE], |(device, _)| event.user_ah(&device, u));
    // A multicast event's private data is the join's context, not data.
    UdEvent {
        qp_num: u.qp_num,
        qkey: u.qkey,
        ah_attr,
        private_data: if event.join_context().is_some() {
            PrivateData::default()
        } else {
            PrivateData::new(event.private_data(u.private_data, u.private_data_len))
                .unwrap_or_default()
        },
    }
}

const _: () = assert!(core::mem::size_of::<bindings::ib_uverbs_ah_attr>() == AH_ATTR_SIZE);

const _: () = assert!(USER_AH_SIZE == AH_ATTR_SIZE);
