// SPDX-License-Identifier: GPL-2.0

//! Network changes under ids, as 6.12 reports them: a changed neighbour
//! under a resolved RoCE route gives UNREACHABLE (-ETIMEDOUT), a netdev's
//! failover ADDR_CHANGE; passive ids, routes set by the consumer and ids
//! whose device is going are not told.

use rcm_core::rdma_cm::{
    BindContext, ConnParams, EventKind, EventStatus, PortSpace, RdmaId, RdmaQpType, SockAddr,
};
use rcm_core::sim::rdma::{node_addr, RdmaFabric, SIM_DEVICE, SIM_NET};
use rcm_core::sim::Faults;

const SERVER: u32 = 0;
const CLIENT: u32 = 1;
const PORT: u16 = 7174;

fn cx() -> BindContext {
    BindContext {
        device: Ok(SIM_DEVICE),
        local_ports: (32768, 60999),
        random: 7,
        privileged: false,
        bindv6only: false,
    }
}

fn params() -> ConnParams<'static> {
    ConnParams {
        private_data: b"",
        responder_resources: 1,
        initiator_depth: 1,
        flow_control: true,
        retry_count: 7,
        rnr_retry_count: 7,
        srq: false,
        qp_num: 0,
        qkey: 0,
    }
}

/// A client id on CLIENT with its address and route to SERVER resolved.
fn routed_client(f: &mut RdmaFabric) -> RdmaId {
    let dst = node_addr(SERVER, PORT);
    let c = f.call(CLIENT, |cm, _| {
        let c = cm
            .create_id(SIM_NET, PortSpace::Tcp, RdmaQpType::Rc, 1)
            .unwrap();
        cm.resolve_addr(c, None, dst, 2000, &cx()).unwrap();
        c
    });
    let found = f.resolve_addr(CLIENT, &dst);
    assert!(f.call(CLIENT, |cm, h| cm.addr_resolved(h, c, found)));
    f.call(CLIENT, |cm, _| cm.resolve_route(c, 2000).unwrap());
    let route = f.route(CLIENT, &dst);
    assert!(f.call(CLIENT, |cm, h| cm.route_resolved(h, c, route)));
    f.take_events(CLIENT);
    c
}

fn watchers(f: &mut RdmaFabric, n: u32, ip: SockAddr) -> Vec<RdmaId> {
    f.call(n, |cm, _| {
        let mut v = Vec::new();
        cm.neighbour_watchers(ip, |id| {
            v.push(id);
            true
        });
        v
    })
}

#[test]
fn a_changed_neighbour_makes_a_routed_id_unreachable() {
    let mut f = RdmaFabric::new(2, 1, Faults::default());
    let c = routed_client(&mut f);
    // the neighbour is named by its IP alone
    assert_eq!(watchers(&mut f, CLIENT, node_addr(SERVER, 0)), vec![c]);
    assert!(watchers(&mut f, CLIENT, node_addr(CLIENT, 0)).is_empty());
    assert!(f.call(CLIENT, |cm, h| cm.neighbour_changed(h, c)));
    let evs = f.take_events(CLIENT);
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(evs[0].0, c);
    assert_eq!(
        (evs[0].1.kind, evs[0].1.status),
        (EventKind::Unreachable, EventStatus::TimedOut)
    );
}

#[test]
fn an_established_connection_is_told_and_its_passive_side_is_not_watching() {
    let mut f = RdmaFabric::new(2, 1, Faults::default());
    f.call(SERVER, |cm, h| {
        let l = cm
            .create_id(SIM_NET, PortSpace::Tcp, RdmaQpType::Rc, 1)
            .unwrap();
        cm.bind_addr(
            l,
            SockAddr::V4 {
                addr: [0; 4],
                port: PORT,
            },
            &cx(),
        )
        .unwrap();
        cm.listen(h, l, 8, &cx()).unwrap();
    });
    let c = routed_client(&mut f);
    f.create_qp(CLIENT, c, 0x11);
    f.call(CLIENT, |cm, h| cm.connect(h, c, &params()).unwrap());
    f.run_for(50);
    let (s, _) = f.take_events(SERVER)[0];
    f.create_qp(SERVER, s, 0x22);
    f.call_settled(SERVER, |cm, h| cm.accept(h, s, Some(&params())))
        .unwrap();
    f.run_for(50);
    assert_eq!(f.take_events(CLIENT)[0].1.kind, EventKind::Established);
    f.take_events(SERVER);

    assert!(f.call(CLIENT, |cm, h| cm.neighbour_changed(h, c)));
    assert_eq!(f.take_events(CLIENT)[0].1.kind, EventKind::Unreachable);
    // the server's id has the client as its destination but resolved no route
    assert!(watchers(&mut f, SERVER, node_addr(CLIENT, 0)).is_empty());
    assert!(!f.call(SERVER, |cm, h| cm.neighbour_changed(h, s)));
    assert!(f.take_events(SERVER).is_empty());
}

#[test]
fn an_id_whose_device_goes_hears_of_no_change() {
    let mut f = RdmaFabric::new(2, 1, Faults::default());
    let c = routed_client(&mut f);
    assert!(f.call(CLIENT, |cm, h| cm.device_removal(h, c)).is_some());
    f.take_events(CLIENT);
    assert!(!f.call(CLIENT, |cm, h| cm.neighbour_changed(h, c)));
    assert!(!f.call(CLIENT, |cm, h| cm.address_changed(h, c)));
    assert!(f.take_events(CLIENT).is_empty());
}

#[test]
fn a_failover_reaches_ids_on_a_device_only() {
    let mut f = RdmaFabric::new(2, 1, Faults::default());
    let idle = f.call(CLIENT, |cm, _| {
        cm.create_id(SIM_NET, PortSpace::Tcp, RdmaQpType::Rc, 1)
            .unwrap()
    });
    let c = routed_client(&mut f);
    let on_device: Vec<RdmaId> = f.call(CLIENT, |cm, _| cm.ids_with_device().collect());
    assert_eq!(on_device, vec![c]);
    assert!(!f.call(CLIENT, |cm, h| cm.address_changed(h, idle)));
    assert!(f.call(CLIENT, |cm, h| cm.address_changed(h, c)));
    let evs = f.take_events(CLIENT);
    assert_eq!(
        evs.iter().map(|(id, e)| (*id, e.kind)).collect::<Vec<_>>(),
        vec![(c, EventKind::AddrChange)]
    );
}

#[test]
fn a_destroyed_id_is_no_watcher() {
    let mut f = RdmaFabric::new(2, 1, Faults::default());
    let c = routed_client(&mut f);
    f.call(CLIENT, |cm, h| cm.destroy(h, c).unwrap());
    assert!(watchers(&mut f, CLIENT, node_addr(SERVER, 0)).is_empty());
    assert!(!f.call(CLIENT, |cm, h| cm.neighbour_changed(h, c)));
}
