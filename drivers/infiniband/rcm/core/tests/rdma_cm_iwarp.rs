// SPDX-License-Identifier: GPL-2.0

//! rdma_cm over iWARP devices: the connection goes through the device's
//! own iWARP CM, which these tests play (the simulated nodes record what
//! rdma_cm asks of it, and the tests feed back what it reports), and the
//! ids' states and events are 6.12's (`cma_iw_handler`,
//! `iw_conn_req_handler`).

use rcm_core::rdma_cm::iwarp::{ECONNREFUSED, ECONNRESET, ETIMEDOUT};
use rcm_core::rdma_cm::{
    BindContext, ConnParams, EventKind, EventStatus, IdState, IwCall, IwEvent, IwEventKind,
    IwRequest, PortSpace, RdmaCmError, RdmaId, RdmaQpType, Route, RoutePath, SockAddr,
};
use rcm_core::reason::RejectReason;
use rcm_core::sim::rdma::{node_addr, IwOp, RdmaFabric, SIM_DEVICE, SIM_NET};
use rcm_core::sim::Faults;
use rcm_core::timer::IbaTime;

const SERVER: u32 = 0;
const CLIENT: u32 = 1;
const PORT: u16 = 4420;
const CLIENT_PORT: u16 = 40000;

fn cx() -> BindContext {
    BindContext {
        device: Ok(SIM_DEVICE),
        local_ports: (CLIENT_PORT, CLIENT_PORT + 1),
        random: 0,
        privileged: false,
        bindv6only: false,
    }
}

fn iwarp_fabric() -> RdmaFabric {
    let mut f = RdmaFabric::new(2, 7, Faults::default());
    for n in &mut f.nodes {
        n.side.iwarp = true;
    }
    f
}

fn params(data: &[u8]) -> ConnParams<'_> {
    ConnParams {
        private_data: data,
        responder_resources: 4,
        initiator_depth: 2,
        ..ConnParams::default()
    }
}

fn ops(f: &mut RdmaFabric, n: u32) -> Vec<(RdmaId, IwOp)> {
    core::mem::take(&mut f.nodes[n as usize].side.iw_ops)
}

fn state(f: &RdmaFabric, n: u32, id: RdmaId) -> Option<IdState> {
    f.nodes[n as usize].rdma.get(id).map(|r| r.state())
}

/// A server id listening on its address and a client id resolved (the
/// route of an iWARP id is no path, as 6.12's `cma_resolve_iw_route`).
fn resolved_pair(f: &mut RdmaFabric) -> (RdmaId, RdmaId) {
    let l = f.call(SERVER, |cm, h| {
        let l = cm
            .create_id(SIM_NET, PortSpace::Tcp, RdmaQpType::Rc, 1)
            .unwrap();
        cm.bind_addr(l, node_addr(SERVER, PORT), &cx()).unwrap();
        cm.listen(h, l, 8, &cx()).unwrap();
        l
    });
    assert_eq!(ops(f, SERVER), vec![(l, IwOp::Listen(Some(SIM_DEVICE)))]);
    let dst = node_addr(SERVER, PORT);
    let c = f.call(CLIENT, |cm, _| {
        let c = cm
            .create_id(SIM_NET, PortSpace::Tcp, RdmaQpType::Rc, 2)
            .unwrap();
        cm.resolve_addr(c, None, dst, 2000, &cx()).unwrap();
        c
    });
    let found = f.resolve_addr(CLIENT, &dst);
    assert!(f.call(CLIENT, |cm, h| cm.addr_resolved(h, c, found)));
    f.call(CLIENT, |cm, _| cm.resolve_route(c, 2000).unwrap());
    let route = Route {
        path: RoutePath::default(),
        peer: None,
        ack_delay: IbaTime::new(0),
    };
    assert!(f.call(CLIENT, |cm, h| cm.route_resolved(h, c, Ok(route))));
    f.take_events(CLIENT);
    (l, c)
}

fn request(data: &[u8]) -> IwRequest<'_> {
    IwRequest {
        device: SIM_DEVICE,
        local: node_addr(SERVER, PORT),
        remote: node_addr(CLIENT, CLIENT_PORT),
        private_data: data,
        ird: 2,
        ord: 4,
    }
}

fn report(kind: IwEventKind, status: i32, data: &[u8]) -> IwEvent<'_> {
    IwEvent {
        kind,
        status,
        private_data: data,
        ird: 3,
        ord: 5,
        addrs: None,
    }
}

/// The client connects and the server's consumer gets the request on a
/// new id.
fn requested(f: &mut RdmaFabric, l: RdmaId, c: RdmaId) -> RdmaId {
    f.call(CLIENT, |cm, h| cm.connect(h, c, &params(b"hi")).unwrap());
    assert_eq!(ops(f, CLIENT), vec![(c, IwOp::Connect(b"hi".to_vec()))]);
    assert_eq!(state(f, CLIENT, c), Some(IdState::Connect));
    let s = f.call(SERVER, |cm, h| {
        cm.iw_request(h, l, &request(b"hi"), 9).unwrap()
    });
    let evs = f.take_events(SERVER);
    assert_eq!(evs.len(), 1, "{evs:?}");
    let (id, e) = evs[0];
    assert_eq!(
        (id, e.kind, e.listener),
        (s, EventKind::ConnectRequest, Some(l))
    );
    // iWARP reports the data as sent, not the message's maximum.
    assert_eq!(e.conn.data(), b"hi");
    assert_eq!((e.conn.initiator_depth, e.conn.responder_resources), (2, 4));
    let rec = f.nodes[SERVER as usize].rdma.get(s).unwrap();
    assert_eq!(rec.state(), IdState::Connect);
    assert_eq!(rec.src(), Some(node_addr(SERVER, PORT)));
    assert_eq!(rec.dst(), Some(node_addr(CLIENT, CLIENT_PORT)));
    assert_eq!(rec.port_space(), PortSpace::Tcp);
    s
}

#[test]
fn connect_accept_disconnect() {
    let mut f = iwarp_fabric();
    let (l, c) = resolved_pair(&mut f);
    let s = requested(&mut f, l, c);
    f.call_settled(SERVER, |cm, h| cm.accept(h, s, Some(&params(b"ok"))))
        .unwrap();
    assert_eq!(ops(&mut f, SERVER), vec![(s, IwOp::Accept(b"ok".to_vec()))]);
    f.call(SERVER, |cm, h| {
        assert!(cm.iw_event(h, s, &report(IwEventKind::Established, 0, &[])))
    });
    let mut reply = report(IwEventKind::ConnectReply, 0, b"ok");
    reply.addrs = Some((node_addr(CLIENT, 50000), node_addr(SERVER, PORT)));
    f.call(CLIENT, |cm, h| assert!(cm.iw_event(h, c, &reply)));
    let evs = f.take_events(CLIENT);
    assert_eq!(evs.len(), 1);
    let e = evs[0].1;
    assert_eq!(
        (e.kind, e.status),
        (EventKind::Established, EventStatus::Ok)
    );
    assert_eq!((e.conn.initiator_depth, e.conn.responder_resources), (3, 5));
    assert_eq!(e.conn.data(), b"ok");
    // The reply's addresses are the id's from now on.
    let src = f.nodes[CLIENT as usize].rdma.get(c).unwrap().src();
    assert_eq!(src, Some(node_addr(CLIENT, 50000)));
    assert_eq!(
        f.take_events(SERVER)
            .iter()
            .map(|(id, e)| (*id, e.kind))
            .collect::<Vec<_>>(),
        vec![(s, EventKind::Established)]
    );

    f.call(CLIENT, |cm, h| cm.disconnect(h, c).unwrap());
    assert_eq!(ops(&mut f, CLIENT), vec![(c, IwOp::Disconnect)]);
    // An orderly-close notice is not an event; the close is.
    f.call(SERVER, |cm, h| {
        assert!(!cm.iw_event(h, s, &report(IwEventKind::Disconnect, 0, &[])));
        assert!(cm.iw_event(h, s, &report(IwEventKind::Close, 0, &[])));
    });
    f.call(CLIENT, |cm, h| {
        assert!(cm.iw_event(h, c, &report(IwEventKind::Close, 0, &[])))
    });
    for (n, id) in [(SERVER, s), (CLIENT, c)] {
        let evs = f.take_events(n);
        assert_eq!(evs.len(), 1);
        assert_eq!((evs[0].0, evs[0].1.kind), (id, EventKind::Disconnected));
    }
    // Destroyed ids hear nothing more; nothing is left.
    f.call(SERVER, |cm, h| {
        cm.destroy(h, s).unwrap();
        cm.destroy(h, l).unwrap();
        assert!(!cm.iw_event(h, s, &report(IwEventKind::Close, 0, &[])));
        assert!(cm.is_empty());
        assert_eq!(cm.ports_held(), 0);
    });
    f.call(CLIENT, |cm, h| {
        cm.destroy(h, c).unwrap();
        assert_eq!(cm.ports_held(), 0);
    });
    assert!(f.take_events(SERVER).is_empty());
}

#[test]
fn the_answer_decides_the_event() {
    let cases = [
        (ECONNREFUSED, EventKind::Rejected),
        (ECONNRESET, EventKind::Rejected),
        (ETIMEDOUT, EventKind::Unreachable),
        (-22, EventKind::ConnectError),
    ];
    for (status, kind) in cases {
        let mut f = iwarp_fabric();
        let (l, c) = resolved_pair(&mut f);
        let s = requested(&mut f, l, c);
        f.call_settled(SERVER, |cm, h| {
            cm.reject(h, s, b"no", RejectReason::ConsumerDefined)
        })
        .unwrap();
        assert_eq!(ops(&mut f, SERVER), vec![(s, IwOp::Reject(b"no".to_vec()))]);
        f.call(CLIENT, |cm, h| {
            assert!(cm.iw_event(h, c, &report(IwEventKind::ConnectReply, status, b"no")))
        });
        let evs = f.take_events(CLIENT);
        assert_eq!(evs.len(), 1);
        let e = evs[0].1;
        assert_eq!((e.kind, e.status), (kind, EventStatus::Errno(status)));
        assert_eq!(e.conn.data(), b"no");
        // Only established connections carry the peer's read limits.
        assert_eq!((e.conn.initiator_depth, e.conn.responder_resources), (0, 0));
    }
}

#[test]
fn a_connect_the_iwarp_cm_refuses_leaves_the_id_route_resolved() {
    let mut f = iwarp_fabric();
    let (_, c) = resolved_pair(&mut f);
    f.nodes[CLIENT as usize].side.fail_qp = Some(-12);
    let r = f.call_settled(CLIENT, |cm, h| cm.connect(h, c, &params(&[])));
    assert_eq!(r, Err(RdmaCmError::Qp(-12)));
    assert_eq!(state(&f, CLIENT, c), Some(IdState::RouteResolved));
    // Nothing reaches an id that is not connecting.
    f.call(CLIENT, |cm, h| {
        assert!(!cm.iw_event(h, c, &report(IwEventKind::ConnectReply, 0, &[])))
    });
    f.nodes[CLIENT as usize].side.fail_qp = None;
    f.call_settled(CLIENT, |cm, h| cm.connect(h, c, &params(&[])))
        .unwrap();
    assert_eq!(state(&f, CLIENT, c), Some(IdState::Connect));
}

#[test]
fn an_accept_that_fails_refuses_the_request() {
    let mut f = iwarp_fabric();
    let (l, c) = resolved_pair(&mut f);
    let s = requested(&mut f, l, c);
    // No parameters: iWARP needs them.
    let r = f.call_settled(SERVER, |cm, h| cm.accept(h, s, None));
    assert_eq!(r, Err(RdmaCmError::Invalid));
    assert_eq!(ops(&mut f, SERVER), vec![(s, IwOp::Reject(Vec::new()))]);
    f.nodes[SERVER as usize].side.fail_qp = Some(-5);
    let r = f.call_settled(SERVER, |cm, h| cm.accept(h, s, Some(&params(&[]))));
    assert_eq!(r, Err(RdmaCmError::Qp(-5)));
    assert_eq!(ops(&mut f, SERVER), vec![(s, IwOp::Reject(Vec::new()))]);
}

#[test]
fn requests_need_a_listening_id() {
    let mut f = iwarp_fabric();
    let (l, c) = resolved_pair(&mut f);
    f.call_settled(CLIENT, |cm, h| cm.connect(h, c, &params(&[])))
        .unwrap();
    f.call(SERVER, |cm, h| {
        // Not a listener.
        let other = cm
            .create_id(SIM_NET, PortSpace::Tcp, RdmaQpType::Rc, 3)
            .unwrap();
        assert_eq!(
            cm.iw_request(h, other, &request(&[]), 1),
            Err(RdmaCmError::Invalid)
        );
        cm.destroy(h, l).unwrap();
        assert_eq!(
            cm.iw_request(h, l, &request(&[]), 1),
            Err(RdmaCmError::NoSuchId)
        );
    });
    assert!(f.take_events(SERVER).is_empty());
}

#[test]
fn a_wildcard_listener_listens_on_both_kinds_of_device() {
    let mut f = iwarp_fabric();
    let l = f.call(SERVER, |cm, h| {
        let l = cm
            .create_id(SIM_NET, PortSpace::Tcp, RdmaQpType::Rc, 1)
            .unwrap();
        cm.listen(h, l, 8, &cx()).unwrap();
        l
    });
    assert_eq!(ops(&mut f, SERVER), vec![(l, IwOp::Listen(None))]);
    assert_eq!(state(&f, SERVER, l), Some(IdState::Listen));
    // An iWARP device that comes later listens for it (and not for a
    // listener bound to an address).
    let (bound, _) = resolved_pair(&mut f);
    let later: Vec<_> = f.nodes[SERVER as usize]
        .rdma
        .wildcard_listeners()
        .map(|(id, backlog, _)| (id, backlog))
        .collect();
    assert_eq!(later, vec![(l, 8)]);
    assert_ne!(bound, l);
}

#[test]
fn ud_ids_do_not_connect_over_iwarp() {
    let mut f = iwarp_fabric();
    let (_, c) = resolved_pair(&mut f);
    // Make the client's id a UD one by creating a second, UD id.
    let u = f.call(CLIENT, |cm, _| {
        let u = cm
            .create_id(SIM_NET, PortSpace::Udp, RdmaQpType::Ud, 4)
            .unwrap();
        cm.resolve_addr(u, None, node_addr(SERVER, PORT), 2000, &cx())
            .unwrap();
        u
    });
    let found = f.resolve_addr(CLIENT, &node_addr(SERVER, PORT));
    f.call(CLIENT, |cm, h| cm.addr_resolved(h, u, found));
    f.call(CLIENT, |cm, _| cm.resolve_route(u, 2000).unwrap());
    let route = Route {
        path: RoutePath::default(),
        peer: None,
        ack_delay: IbaTime::new(0),
    };
    f.call(CLIENT, |cm, h| cm.route_resolved(h, u, Ok(route)));
    let r = f.call_settled(CLIENT, |cm, h| cm.connect(h, u, &params(&[])));
    assert_eq!(r, Err(RdmaCmError::Invalid));
    assert_eq!(state(&f, CLIENT, u), Some(IdState::RouteResolved));
    assert_eq!(state(&f, CLIENT, c), Some(IdState::RouteResolved));
    assert!(ops(&mut f, CLIENT).is_empty());
}

#[test]
fn a_connect_that_fails_later_leaves_the_id_route_resolved() {
    let mut f = iwarp_fabric();
    let (_, c) = resolved_pair(&mut f);
    let (cm, mut h) = f.split(CLIENT);
    cm.connect(&mut h, c, &params(b"hi")).unwrap();
    let call = f.nodes[CLIENT as usize].side.iw_calls.remove(0);
    assert!(
        matches!(call, IwCall::Connect { id, .. } if id == c),
        "{call:?}"
    );
    assert_eq!(state(&f, CLIENT, c), Some(IdState::Connect));
    let (cm, mut h) = f.split(CLIENT);
    let r = cm.iw_call_done(&mut h, call, Err(-111));
    assert_eq!(r, Err(RdmaCmError::Qp(-111)));
    assert_eq!(state(&f, CLIENT, c), Some(IdState::RouteResolved));
    assert!(f.take_events(CLIENT).is_empty());
    f.call_settled(CLIENT, |cm, h| cm.connect(h, c, &params(&[])))
        .unwrap();
    assert_eq!(state(&f, CLIENT, c), Some(IdState::Connect));
}

#[test]
fn a_listen_the_iwarp_cm_refuses_leaves_the_id_addr_bound() {
    for wildcard in [false, true] {
        let mut f = iwarp_fabric();
        let l = f.call(SERVER, |cm, _| {
            let l = cm
                .create_id(SIM_NET, PortSpace::Tcp, RdmaQpType::Rc, 1)
                .unwrap();
            let addr = if wildcard {
                SockAddr::V4 {
                    addr: [0; 4],
                    port: PORT,
                }
            } else {
                node_addr(SERVER, PORT)
            };
            cm.bind_addr(l, addr, &cx()).unwrap();
            l
        });
        let (cm, mut h) = f.split(SERVER);
        cm.listen(&mut h, l, 8, &cx()).unwrap();
        assert_eq!(state(&f, SERVER, l), Some(IdState::Listen));
        let call = f.nodes[SERVER as usize].side.iw_calls.remove(0);
        let (cm, mut h) = f.split(SERVER);
        let r = cm.iw_call_done(&mut h, call, Err(-98));
        assert_eq!(r, Err(RdmaCmError::Qp(-98)), "wildcard {wildcard}");
        assert_eq!(state(&f, SERVER, l), Some(IdState::AddrBound));
        // Nothing of the failed listen is left: it can listen again.
        f.call_settled(SERVER, |cm, h| cm.listen(h, l, 8, &cx()))
            .unwrap();
        assert_eq!(state(&f, SERVER, l), Some(IdState::Listen));
    }
}
