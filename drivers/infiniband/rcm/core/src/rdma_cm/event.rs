// SPDX-License-Identifier: GPL-2.0

//! Events rdma_cm delivers to the consumer of an id (`struct
//! rdma_cm_event`), with 6.12's numbering and its rule for the private
//! data length: the most the message can carry, not what was sent.

use super::endpoint::{RdmaCmError, RdmaId};
use super::multicast::GroupId;
use crate::reason::{RejectReason, SidrStatus};

/// An event's status (`rdma_cm_event.status`; each ABI maps it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventStatus {
    /// 0.
    Ok,
    /// The peer did not answer (`-ETIMEDOUT`).
    TimedOut,
    /// A step of rdma_cm's failed.
    Failed(RdmaCmError),
    /// What the embedding reported (a negative errno).
    Errno(i32),
    /// REJECTED: the REJ's reason.
    Rejected(RejectReason),
    /// UNREACHABLE after a SIDR_REP: its status.
    Sidr(SidrStatus),
}

/// `enum rdma_cm_event_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u32)]
pub enum EventKind {
    /// The destination address is resolved.
    AddrResolved = 0,
    /// It could not be.
    AddrError = 1,
    /// The route is resolved.
    RouteResolved = 2,
    /// It could not be.
    RouteError = 3,
    /// A peer asks to connect (delivered on the new id).
    ConnectRequest = 4,
    /// The peer accepted; the consumer moves its own QP and accepts.
    ConnectResponse = 5,
    /// Setting up the connection failed here.
    ConnectError = 6,
    /// The peer did not answer.
    Unreachable = 7,
    /// The peer rejected the connection.
    Rejected = 8,
    /// The connection is up.
    Established = 9,
    /// The connection is down.
    Disconnected = 10,
    /// The id's device is going away.
    DeviceRemoval = 11,
    /// A multicast join completed.
    MulticastJoin = 12,
    /// A multicast join failed.
    MulticastError = 13,
    /// The id's address moved to another device.
    AddrChange = 14,
    /// The connection's TIMEWAIT is over.
    TimewaitExit = 15,
}

impl EventKind {
    /// 6.12's name (`rdma_event_msg`), NUL-terminated for C (its
    /// "route resolved " has the trailing space 6.12's has).
    pub const fn message_nul(self) -> &'static str {
        match self {
            EventKind::AddrResolved => "address resolved\0",
            EventKind::AddrError => "address error\0",
            EventKind::RouteResolved => "route resolved \0",
            EventKind::RouteError => "route error\0",
            EventKind::ConnectRequest => "connect request\0",
            EventKind::ConnectResponse => "connect response\0",
            EventKind::ConnectError => "connect error\0",
            EventKind::Unreachable => "unreachable\0",
            EventKind::Rejected => "rejected\0",
            EventKind::Established => "established\0",
            EventKind::Disconnected => "disconnected\0",
            EventKind::DeviceRemoval => "device removal\0",
            EventKind::MulticastJoin => "multicast join\0",
            EventKind::MulticastError => "multicast error\0",
            EventKind::AddrChange => "address change\0",
            EventKind::TimewaitExit => "timewait exit\0",
        }
    }

    /// The kind of a kernel event number.
    pub const fn from_raw(raw: u32) -> Option<Self> {
        const ALL: [EventKind; 16] = [
            EventKind::AddrResolved,
            EventKind::AddrError,
            EventKind::RouteResolved,
            EventKind::RouteError,
            EventKind::ConnectRequest,
            EventKind::ConnectResponse,
            EventKind::ConnectError,
            EventKind::Unreachable,
            EventKind::Rejected,
            EventKind::Established,
            EventKind::Disconnected,
            EventKind::DeviceRemoval,
            EventKind::MulticastJoin,
            EventKind::MulticastError,
            EventKind::AddrChange,
            EventKind::TimewaitExit,
        ];
        if (raw as usize) < ALL.len() {
            Some(ALL[raw as usize])
        } else {
            None
        }
    }
}

/// 6.12's `rdma_event_msg` for an event number it does not know.
pub const UNRECOGNIZED_EVENT_NUL: &str = "unrecognized event\0";

/// The most private data an event carries (a REP's).
pub const EVENT_DATA_MAX: usize = 196;

/// The connection parameters an event reports (`rdma_conn_param` and
/// `rdma_ucm_ece`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnData {
    /// The message's private data (consumer part only: a REQ's cma header
    /// is not included).
    pub private_data: [u8; EVENT_DATA_MAX],
    /// The length 6.12 reports: the most the message carries.
    pub private_data_len: u8,
    /// RDMA reads and atomics the peer accepts.
    pub responder_resources: u8,
    /// RDMA reads and atomics the peer issues.
    pub initiator_depth: u8,
    /// End-to-end flow control.
    pub flow_control: bool,
    /// Transport retries (a REQ's).
    pub retry_count: u8,
    /// RNR retries.
    pub rnr_retry_count: u8,
    /// The peer uses an SRQ.
    pub srq: bool,
    /// The peer's QP number.
    pub qp_num: u32,
    /// The peer's Q_Key (UD: `rdma_ud_param`).
    pub qkey: u32,
    /// ECE vendor id.
    pub ece_vendor_id: u32,
    /// ECE options.
    pub ece_attr_mod: u32,
}

impl ConnData {
    /// Parameters with only private data: `data` reported as `len` bytes.
    pub fn with_data(data: &[u8], len: usize) -> Self {
        let mut d = ConnData::default();
        let n = data.len().min(EVENT_DATA_MAX);
        d.private_data[..n].copy_from_slice(&data[..n]);
        d.private_data_len = len.min(EVENT_DATA_MAX) as u8;
        d
    }

    /// The reported private data.
    pub fn data(&self) -> &[u8] {
        &self.private_data[..usize::from(self.private_data_len)]
    }
}

impl Default for ConnData {
    fn default() -> Self {
        ConnData {
            private_data: [0; EVENT_DATA_MAX],
            private_data_len: 0,
            responder_resources: 0,
            initiator_depth: 0,
            flow_control: false,
            retry_count: 0,
            rnr_retry_count: 0,
            srq: false,
            qp_num: 0,
            qkey: 0,
            ece_vendor_id: 0,
            ece_attr_mod: 0,
        }
    }
}

/// An event for the consumer of an id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RdmaEvent {
    /// What happened.
    pub kind: EventKind,
    /// How it went.
    pub status: EventStatus,
    /// The listener whose consumer gets a CONNECT_REQUEST (the event is
    /// for the new id, delivered to the listener's handler and context).
    pub listener: Option<RdmaId>,
    /// The multicast group a MULTICAST_JOIN or MULTICAST_ERROR is about.
    pub group: Option<GroupId>,
    /// Connection parameters and private data, where the event has them.
    pub conn: ConnData,
}

impl RdmaEvent {
    /// CONNECT_REQUEST for a new id that `listener` heard, with `conn`.
    pub fn connect_request(listener: RdmaId, conn: ConnData) -> Self {
        RdmaEvent {
            kind: EventKind::ConnectRequest,
            status: EventStatus::Ok,
            listener: Some(listener),
            group: None,
            conn,
        }
    }

    /// An event with nothing but its kind and status.
    pub fn plain(kind: EventKind, status: EventStatus) -> Self {
        RdmaEvent {
            kind,
            status,
            listener: None,
            group: None,
            conn: ConnData::default(),
        }
    }
}
