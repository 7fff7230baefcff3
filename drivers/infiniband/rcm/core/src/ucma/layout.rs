// SPDX-License-Identifier: GPL-2.0

//! Sizes and offsets of the rdma_ucm ABI structs (`rdma/rdma_user_cm.h`,
//! x86_64), each declared once; the parsers and the response writers read
//! them from here.

/// `RDMA_MAX_PRIVATE_DATA`: the private data buffer of a command or event.
pub const MAX_PRIVATE_DATA: usize = 256;

pub use crate::rdma_cm::sockaddr::SOCKADDR_IN6_SIZE;
/// `struct __kernel_sockaddr_storage`.
pub const SOCKADDR_STORAGE_SIZE: usize = 128;

/// `struct rdma_ucm_conn_param`: qp_num, qkey, private data, then eight
/// one-byte fields.
pub mod conn_param {
    /// `qp_num`.
    pub const QP_NUM: usize = 0;
    /// `qkey`.
    pub const QKEY: usize = 4;
    /// `private_data[256]`.
    pub const PRIVATE_DATA: usize = 8;
    /// `private_data_len`.
    pub const PRIVATE_DATA_LEN: usize = 264;
    /// `srq`.
    pub const SRQ: usize = 265;
    /// `responder_resources`.
    pub const RESPONDER_RESOURCES: usize = 266;
    /// `initiator_depth`.
    pub const INITIATOR_DEPTH: usize = 267;
    /// `flow_control`.
    pub const FLOW_CONTROL: usize = 268;
    /// `retry_count`.
    pub const RETRY_COUNT: usize = 269;
    /// `rnr_retry_count`.
    pub const RNR_RETRY_COUNT: usize = 270;
    /// `valid`.
    pub const VALID: usize = 271;
    /// The whole struct.
    pub const SIZE: usize = 272;
}

/// `struct rdma_ucm_ece`: vendor id, attribute modifier.
pub const ECE_SIZE: usize = 8;

/// The command input structs: the size each handler reads.
pub mod input {
    use super::{conn_param, ECE_SIZE, SOCKADDR_IN6_SIZE, SOCKADDR_STORAGE_SIZE};

    /// `struct rdma_ucm_cmd_hdr`.
    pub const HEADER: usize = 8;
    /// `struct rdma_ucm_create_id`.
    pub const CREATE_ID: usize = 24;
    /// `struct rdma_ucm_destroy_id` (also LEAVE_MCAST's input).
    pub const DESTROY_ID: usize = 16;
    /// `struct rdma_ucm_bind_ip`: response, sockaddr_in6, id.
    pub const BIND_IP: usize = 8 + SOCKADDR_IN6_SIZE + 4;
    /// `struct rdma_ucm_resolve_ip`: two sockaddr_in6, id, timeout.
    pub const RESOLVE_IP: usize = 2 * SOCKADDR_IN6_SIZE + 8;
    /// `struct rdma_ucm_resolve_route`.
    pub const RESOLVE_ROUTE: usize = 8;
    /// `struct rdma_ucm_query` (also QUERY_ROUTE's input).
    pub const QUERY: usize = 16;
    /// `struct rdma_ucm_connect`: conn_param, id, reserved, ece.
    pub const CONNECT: usize = conn_param::SIZE + 8 + ECE_SIZE;
    /// `struct rdma_ucm_listen`.
    pub const LISTEN: usize = 8;
    /// `struct rdma_ucm_accept`: uid, conn_param, id, reserved, ece.
    pub const ACCEPT: usize = 8 + conn_param::SIZE + 8 + ECE_SIZE;
    /// `struct rdma_ucm_reject`.
    pub const REJECT: usize = 8 + super::MAX_PRIVATE_DATA;
    /// `struct rdma_ucm_disconnect`.
    pub const DISCONNECT: usize = 4;
    /// `struct rdma_ucm_init_qp_attr`.
    pub const INIT_QP_ATTR: usize = 16;
    /// `struct rdma_ucm_get_event`.
    pub const GET_EVENT: usize = 8;
    /// `struct rdma_ucm_set_option`.
    pub const SET_OPTION: usize = 24;
    /// `struct rdma_ucm_notify`.
    pub const NOTIFY: usize = 8;
    /// `struct rdma_ucm_join_ip_mcast`: response, uid, sockaddr_in6, id.
    pub const JOIN_IP_MCAST: usize = 16 + SOCKADDR_IN6_SIZE + 4;
    /// `struct rdma_ucm_migrate_id`.
    pub const MIGRATE_ID: usize = 16;
    /// `struct rdma_ucm_bind`: id, addr_size, reserved, storage.
    pub const BIND: usize = 8 + SOCKADDR_STORAGE_SIZE;
    /// `struct rdma_ucm_resolve_addr`: id, timeout, sizes, two storages.
    pub const RESOLVE_ADDR: usize = 16 + 2 * SOCKADDR_STORAGE_SIZE;
    /// `struct rdma_ucm_join_mcast`: response, uid, id, size, flags,
    /// storage.
    pub const JOIN_MCAST: usize = 24 + SOCKADDR_STORAGE_SIZE;
}

/// The response structs.
pub mod response {
    /// `struct rdma_ucm_create_id_resp` (also a join's answer).
    pub const CREATE_ID: usize = 4;
    /// `struct rdma_ucm_destroy_id_resp` (also LEAVE_MCAST's and
    /// MIGRATE_ID's answer: `events_reported`).
    pub const EVENTS_REPORTED: usize = 4;
    /// `struct rdma_ucm_query_route_resp`.
    pub const QUERY_ROUTE: usize = 208;
    /// `offsetof(struct rdma_ucm_query_route_resp, ibdev_index)`: the
    /// least a caller may ask for (older librdmacm).
    pub const QUERY_ROUTE_MIN: usize = 200;
    /// `struct rdma_ucm_query_addr_resp`.
    pub const QUERY_ADDR: usize = 280;
    /// `offsetof(struct rdma_ucm_query_addr_resp, ibdev_index)`.
    pub const QUERY_ADDR_MIN: usize = 272;
    /// `struct rdma_ucm_query_path_resp` without its path records.
    pub const QUERY_PATH_HEADER: usize = 8;
    /// `struct ib_path_rec_data`: flags, reserved, the packed record.
    pub const PATH_REC_DATA: usize = 72;
    /// `struct ib_uverbs_qp_attr`.
    pub const QP_ATTR: usize = 144;
    /// `struct rdma_ucm_event_resp`.
    pub const EVENT: usize = 336;
    /// The event without its trailing reserved word and ECE (old 32-bit
    /// userspace asks for no more).
    pub const EVENT_MIN: usize = 324;
}
