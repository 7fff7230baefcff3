// SPDX-License-Identifier: GPL-2.0

//! The RDMA connection manager (rdma_cm) on top of the CM: ids named by
//! IP (or AF_IB) addresses and ports in per-namespace port spaces, which
//! resolve addresses and routes (work the embedding does, results fed
//! back), listen, and connect through the CM endpoint with the cma header
//! in their REQs. What it needs from its environment is the [`Host`]
//! trait.

pub mod addr;
pub mod audit;
pub mod bind;
pub mod cm_event;
pub mod cm_response;
pub mod connect;
mod devices;
pub mod endpoint;
pub mod event;
pub mod host;
mod id_list;
mod id_slots;
pub mod iwarp;
pub mod multicast;
pub mod net_changes;
pub mod netevent;
pub mod passive;
pub mod port_space;
pub mod private_data;
pub mod resolve;
pub mod route;
pub mod sidr;
pub mod sockaddr;
pub mod state;

pub use addr::{Family, SockAddr};
pub use audit::RdmaAuditError;
pub use bind::{BindError, BindRequest, NetId, PortKey, PortTable};
pub use cm_event::CmEventOutcome;
pub use cm_response::CmResponse;
pub use connect::{service_id_of, ConnParams};
pub use endpoint::{BindContext, Id, RdmaCm, RdmaCmError, RdmaId, RdmaQpType};
pub use event::{ConnData, EventKind, EventStatus, RdmaEvent};
pub use host::{AfterReady, DeviceInfo, Host, IwCall, IwOptions, IwParams, QpLimits, ReadyMove};
pub use iwarp::{IwEvent, IwEventKind, IwRequest};
pub use multicast::{GroupId, Membership, RoceGroup};
pub use passive::Arrival;
pub use port_space::PortSpace;
pub use private_data::PrivateData;
pub use resolve::{AddrResolution, AddrWork};
pub use route::{
    roce_mtu, roce_path, roce_record_kind, PathKind, RoceLink, Route, RoutePath, RouteWork,
};
pub use state::IdState;
