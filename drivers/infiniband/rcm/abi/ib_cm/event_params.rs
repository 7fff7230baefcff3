// SPDX-License-Identifier: GPL-2.0

//! The parameters of every CM event other than REQ/SIDR_REQ received, as
//! the plain `struct rcm_h_event` that `rust/rdma/cm_event.rs` turns into a
//! `struct ib_cm_event`. Pointers in it borrow the event's message.

use super::path::event_path;
use crate::bindings;
use crate::proto::cm::{Connection, Event, Failure, Transport};
use crate::shell::Peer;

/// What an event's parameters need from its connection besides the
/// message.
#[derive(Clone, Copy)]
pub(crate) struct EventContext {
    pub(crate) peer: Option<Peer>,
    pkey: u16,
    path_mtu: u8,
    /// The REP names an XRC target's number as its EE context.
    xrc: bool,
}

impl EventContext {
    pub(crate) fn of(conn: &Connection<Peer>) -> Self {
        EventContext {
            peer: conn.peer().copied(),
            pkey: conn.qp_params().pkey,
            path_mtu: conn.qp_params().path_mtu,
            xrc: conn.qp_params().transport == Transport::Xrc,
        }
    }
}

/// The `enum ib_wc_status` the C CM reports for a failed request.
fn send_status(failure: Failure) -> u32 {
    match failure {
        Failure::Timeout => bindings::ib_wc_status_IB_WC_RESP_TIMEOUT_ERR,
        Failure::SendFailed => bindings::ib_wc_status_IB_WC_GENERAL_ERR,
    }
}

/// The C parameters of `event`, or `None` for events delivered elsewhere
/// (REQ and SIDR_REQ received create ids).
pub(crate) fn event_params(event: &Event, cx: &EventContext) -> Option<bindings::rcm_h_event> {
    let mut e = bindings::rcm_h_event {
        event: event.kernel_type(),
        ..Default::default()
    };
    match event {
        Event::ReqReceived { .. } | Event::SidrReqReceived { .. } => return None,
        Event::ReqError(f)
        | Event::RepError(f)
        | Event::DreqError(f)
        | Event::LapError(f)
        | Event::SidrReqError(f) => e.status = send_status(*f),
        Event::RepReceived { rep, attr_mod } => {
            e.private_data = rep.private_data.as_ptr().cast();
            e.remote_ca_guid = rep.local_ca_guid;
            e.qkey = rep.local_qkey;
            e.qpn = if cx.xrc {
                rep.local_eecn
            } else {
                rep.local_qpn
            };
            e.starting_psn = rep.starting_psn;
            e.vendor_id = rep.vendor_id();
            e.attr_mod = *attr_mod;
            // Seen from this side, as 6.12 reports them.
            e.responder_resources = rep.initiator_depth;
            e.initiator_depth = rep.responder_resources;
            e.target_ack_delay = rep.target_ack_delay.exponent();
            e.failover_accepted = rep.failover_accepted;
            e.flow_control = u8::from(rep.end_to_end_flow_control);
            e.rnr_retry_count = rep.rnr_retry_count;
            e.srq = u8::from(rep.srq);
        }
        Event::RtuReceived(rtu) => e.private_data = rtu.private_data.as_ptr().cast(),
        Event::UserEstablished | Event::TimewaitExit => {}
        Event::DreqReceived(dreq) => e.private_data = dreq.private_data.as_ptr().cast(),
        Event::DrepReceived(drep) => e.private_data = drep.private_data.as_ptr().cast(),
        Event::MraReceived(mra) => {
            e.private_data = mra.private_data.as_ptr().cast();
            e.service_timeout = mra.service_timeout.exponent();
        }
        Event::RejReceived { rej, attr_mod } => {
            e.private_data = rej.private_data.as_ptr().cast();
            e.status = u32::from(rej.reason.to_wire());
            e.info = rej.ari.as_ptr().cast();
            e.info_len = rej.rejected_info_length.min(rej.ari.len() as u8);
            e.attr_mod = *attr_mod;
        }
        Event::LapReceived(lap) => {
            e.private_data = lap.private_data.as_ptr().cast();
            let roce = cx.peer.is_some_and(|p| p.path.has_grh);
            e.lap = event_path(&lap.alternate_path(), cx.pkey, cx.path_mtu, 0, roce);
        }
        Event::AprReceived(apr) => {
            e.private_data = apr.private_data.as_ptr().cast();
            e.status = u32::from(apr.ap_status.to_wire());
            e.info = apr.additional_info.as_ptr().cast();
            e.info_len = apr
                .additional_info_length
                .min(apr.additional_info.len() as u8);
        }
        Event::SidrRepReceived(rep) => {
            e.private_data = rep.private_data.as_ptr().cast();
            e.status = u32::from(rep.status.to_wire());
            e.qkey = rep.qkey;
            e.qpn = rep.qpn;
            e.info = rep.additional_info.as_ptr().cast();
            e.info_len = rep
                .additional_info_length
                .min(rep.additional_info.len() as u8);
        }
    }
    Some(e)
}
