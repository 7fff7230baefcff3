// SPDX-License-Identifier: GPL-2.0

//! What the two-node rdma_cm tests (`tests/rdma_cm_connect.rs`,
//! `tests/rdma_cm_removal.rs`) share: a listening server and a client on
//! the simulated fabric, the fake resolver's steps, connection parameters.

// Each test crate uses a part of it.
#![allow(dead_code)]

use rcm_core::rdma_cm::{
    BindContext, ConnParams, EventKind, PortSpace, RdmaId, RdmaQpType, SockAddr,
};
use rcm_core::sim::rdma::{node_addr, RdmaFabric, SIM_DEVICE, SIM_NET};

/// The listening node.
pub const SERVER: u32 = 0;
/// The connecting node.
pub const CLIENT: u32 = 1;
/// The server's port.
pub const PORT: u16 = 7174;

/// A bind on the simulated device, with the default local port range.
pub fn cx() -> BindContext {
    BindContext {
        device: Ok(SIM_DEVICE),
        local_ports: (32768, 60999),
        random: 99,
        privileged: false,
        bindv6only: false,
    }
}

/// The IPv4 wildcard address on `port`.
pub fn any(port: u16) -> SockAddr {
    SockAddr::V4 { addr: [0; 4], port }
}

/// Node `n`'s events so far, by id and kind.
pub fn kinds(f: &mut RdmaFabric, n: u32) -> Vec<(RdmaId, EventKind)> {
    f.take_events(n)
        .into_iter()
        .map(|(id, e)| (id, e.kind))
        .collect()
}

/// A listening server and a client id resolved to ROUTE_RESOLVED.
pub fn resolved_pair(f: &mut RdmaFabric, listen_on: SockAddr) -> (RdmaId, RdmaId) {
    let (l, c) = resolving_pair(f, listen_on);
    resolve(f, c, node_addr(SERVER, PORT));
    (l, c)
}

/// A listening server and a client id resolving its address to it.
pub fn resolving_pair(f: &mut RdmaFabric, listen_on: SockAddr) -> (RdmaId, RdmaId) {
    let l = f.call(SERVER, |cm, h| {
        let l = cm
            .create_id(SIM_NET, PortSpace::Tcp, RdmaQpType::Rc, 1)
            .unwrap();
        cm.bind_addr(l, listen_on, &cx()).unwrap();
        cm.listen(h, l, 8, &cx()).unwrap();
        l
    });
    (l, resolving_client(f, node_addr(SERVER, PORT), 0x4242))
}

/// A new TCP client id (its first PSN `psn`) resolving its address to
/// `dst`.
pub fn resolving_client(f: &mut RdmaFabric, dst: SockAddr, psn: u32) -> RdmaId {
    f.call(CLIENT, |cm, _| {
        let c = cm
            .create_id(SIM_NET, PortSpace::Tcp, RdmaQpType::Rc, psn)
            .unwrap();
        cm.resolve_addr(c, None, dst, 2000, &cx()).unwrap();
        c
    })
}

/// Resolves the client id `c`'s address and route to `dst` with the fake
/// resolver: ADDR_RESOLVED, ROUTE_RESOLVED.
pub fn resolve(f: &mut RdmaFabric, c: RdmaId, dst: SockAddr) {
    let found = f.resolve_addr(CLIENT, &dst);
    assert!(f.call(CLIENT, |cm, h| cm.addr_resolved(h, c, found)));
    let work = f.call(CLIENT, |cm, _| cm.resolve_route(c, 2000).unwrap());
    assert_eq!(work.device, SIM_DEVICE);
    let route = f.route(CLIENT, &dst);
    assert!(f.call(CLIENT, |cm, h| cm.route_resolved(h, c, route)));
    assert_eq!(
        kinds(f, CLIENT),
        vec![(c, EventKind::AddrResolved), (c, EventKind::RouteResolved)]
    );
}

/// Connection parameters carrying `data` as private data.
pub fn params(data: &[u8]) -> ConnParams<'_> {
    ConnParams {
        private_data: data,
        responder_resources: 4,
        initiator_depth: 2,
        flow_control: true,
        retry_count: 9,
        rnr_retry_count: 7,
        srq: false,
        qp_num: 0,
        qkey: 0,
    }
}
