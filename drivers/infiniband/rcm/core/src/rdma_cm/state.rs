// SPDX-License-Identifier: GPL-2.0

//! The states of an rdma_cm id (`enum rdma_cm_state`, numbered as 6.12
//! numbers them, which `rdma res show cm_id` prints).

/// An rdma_cm id's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum IdState {
    /// Created; nothing bound.
    Idle = 0,
    /// Resolving the destination address.
    AddrQuery = 1,
    /// Destination address resolved (a device and port chosen).
    AddrResolved = 2,
    /// Resolving the route (path record).
    RouteQuery = 3,
    /// Route resolved: ready to connect.
    RouteResolved = 4,
    /// Connecting, connected, or a passive id handed to its consumer.
    Connect = 5,
    /// Disconnected.
    Disconnect = 6,
    /// Bound to an address and port.
    AddrBound = 7,
    /// Listening.
    Listen = 8,
    /// Its device is going away.
    DeviceRemoval = 9,
    /// Being destroyed.
    Destroying = 10,
}

impl IdState {
    /// 6.12's name of the state (`rdma res show cm_id`).
    pub const fn name(self) -> &'static str {
        match self {
            IdState::Idle => "IDLE",
            IdState::AddrQuery => "ADDR_QUERY",
            IdState::AddrResolved => "ADDR_RESOLVED",
            IdState::RouteQuery => "ROUTE_QUERY",
            IdState::RouteResolved => "ROUTE_RESOLVED",
            IdState::Connect => "CONNECT",
            IdState::Disconnect => "DISCONNECT",
            IdState::AddrBound => "ADDR_BOUND",
            IdState::Listen => "LISTEN",
            IdState::DeviceRemoval => "DEVICE_REMOVAL",
            IdState::Destroying => "DESTROYING",
        }
    }
}
