// SPDX-License-Identifier: GPL-2.0

//! Two rdma_cm endpoints over two CM endpoints on the simulated fabric:
//! resolve, listen, connect, accept, reject, disconnect, as 6.12's
//! rdma_cm does them and with the events it reports.

use rcm_core::rdma_cm::{
    CmResponse, EventKind, EventStatus, IdState, PortSpace, RdmaCmError, RdmaId, RdmaQpType,
    ReadyMove,
};
use rcm_core::reason::RejectReason;
use rcm_core::sim::rdma::{node_addr, RdmaFabric, SimQp, SIM_DEVICE, SIM_NET};
use rcm_core::sim::Faults;

mod rdma_common;

use rdma_common::*;

#[test]
fn connect_accept_disconnect_with_qps() {
    let mut f = RdmaFabric::new(2, 1, Faults::default());
    let (l, c) = resolved_pair(&mut f, any(PORT));
    f.create_qp(CLIENT, c, 0x111);
    f.call(CLIENT, |cm, h| cm.connect(h, c, &params(b"hello")).unwrap());
    assert_eq!(
        f.nodes[CLIENT as usize].rdma.get(c).unwrap().state(),
        IdState::Connect
    );
    f.run_for(50);
    // The server's consumer gets a new id, through the listener.
    let evs = f.take_events(SERVER);
    assert_eq!(evs.len(), 1, "{evs:?}");
    let (s, req) = evs[0];
    assert_eq!(req.kind, EventKind::ConnectRequest);
    assert_eq!(req.listener, Some(l));
    assert_eq!(req.conn.private_data_len, 56, "92 minus the cma header");
    assert_eq!(&req.conn.data()[..5], b"hello");
    // resources seen from the receiver
    assert_eq!(
        (req.conn.responder_resources, req.conn.initiator_depth),
        (2, 4)
    );
    assert_eq!((req.conn.retry_count, req.conn.qp_num), (7, 0x111));
    let server = &f.nodes[SERVER as usize].rdma;
    let sid = server.get(s).unwrap();
    assert_eq!(sid.state(), IdState::Connect);
    assert_eq!(sid.src(), Some(node_addr(SERVER, PORT)));
    let client_port = f.nodes[CLIENT as usize]
        .rdma
        .get(c)
        .unwrap()
        .src()
        .unwrap()
        .port();
    assert_eq!(sid.dst(), Some(node_addr(CLIENT, client_port)));
    assert_eq!(sid.listener(), Some(l));

    f.create_qp(SERVER, s, 0x222);
    f.call_settled(SERVER, |cm, h| cm.accept(h, s, Some(&params(b"welcome"))))
        .unwrap();
    f.run_for(50);
    let evs = f.take_events(CLIENT);
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(evs[0].1.kind, EventKind::Established);
    assert_eq!(evs[0].1.conn.private_data_len, 196);
    assert_eq!(&evs[0].1.conn.data()[..7], b"welcome");
    assert_eq!(evs[0].1.conn.qp_num, 0x222);
    assert_eq!(kinds(&mut f, SERVER), vec![(s, EventKind::Established)]);
    use rcm_core::sim::rdma::SimQp;
    // Each side sends from the PSN the other receives from.
    let (
        SimQp::Rts {
            rq_psn: crq,
            sq_psn: csq,
        },
        SimQp::Rts {
            rq_psn: srq,
            sq_psn: ssq,
        },
    ) = (
        f.nodes[CLIENT as usize].side.qps[&c],
        f.nodes[SERVER as usize].side.qps[&s],
    )
    else {
        panic!("QPs not ready");
    };
    assert_eq!(
        (csq, ssq),
        (srq, crq),
        "client rq {crq:#x} sq {csq:#x}, server rq {srq:#x} sq {ssq:#x}"
    );
    assert_ne!(srq, 0);

    // The client disconnects; the server answers from its handler.
    f.call(CLIENT, |cm, h| cm.disconnect(h, c).unwrap());
    f.run_for(50);
    assert_eq!(kinds(&mut f, SERVER), vec![(s, EventKind::Disconnected)]);
    f.call(SERVER, |cm, h| cm.disconnect(h, s).unwrap());
    assert!(f.run_until_quiet(1000));
    assert_eq!(
        kinds(&mut f, CLIENT),
        vec![(c, EventKind::Disconnected), (c, EventKind::TimewaitExit)]
    );
    assert_eq!(kinds(&mut f, SERVER), vec![(s, EventKind::TimewaitExit)]);
    assert_eq!(f.nodes[CLIENT as usize].side.qps[&c], SimQp::Error);

    for (n, id) in [(CLIENT, c), (SERVER, s), (SERVER, l)] {
        f.call(n, |cm, h| cm.destroy(h, id).unwrap());
    }
    f.run_for(50);
    for n in [CLIENT, SERVER] {
        assert!(f.nodes[n as usize].rdma.is_empty());
        assert_eq!(f.nodes[n as usize].rdma.ports_held(), 0);
        assert!(
            f.fabric.nodes[n as usize].ep.is_empty(),
            "node {n} CM ids left"
        );
    }
}

#[test]
fn the_req_carries_the_cma_header() {
    let mut f = RdmaFabric::new(2, 2, Faults::default());
    let (_l, c) = resolved_pair(&mut f, node_addr(SERVER, PORT));
    f.call(CLIENT, |cm, h| cm.connect(h, c, &params(&[7; 56])).unwrap());
    // 57 bytes would not fit after the header
    let (_, c2) = {
        let dst = node_addr(SERVER, PORT);
        let c2 = resolving_client(&mut f, dst, 5);
        resolve(&mut f, c2, dst);
        ((), c2)
    };
    assert_eq!(
        f.call(CLIENT, |cm, h| cm.connect(h, c2, &params(&[7; 57]))),
        Err(RdmaCmError::Invalid)
    );
    assert_eq!(
        f.nodes[CLIENT as usize].rdma.get(c2).unwrap().state(),
        IdState::RouteResolved,
        "a failed connect leaves the route"
    );
    f.run_for(50);
    let evs = f.take_events(SERVER);
    assert_eq!(evs.len(), 1);
    assert_eq!(evs[0].1.conn.data(), &[7; 56][..]);
    let s = evs[0].0;
    let client_port = f.nodes[CLIENT as usize]
        .rdma
        .get(c)
        .unwrap()
        .src()
        .unwrap()
        .port();
    // What the server learnt is what the header said.
    let sid = f.nodes[SERVER as usize].rdma.get(s).unwrap();
    assert_eq!(sid.dst(), Some(node_addr(CLIENT, client_port)));
    assert_eq!(sid.src(), Some(node_addr(SERVER, PORT)));
}

/// The kernel resolves a RoCE route without the CM's address of the
/// peer and gives it when the id connects (6.12 makes the address handle
/// only then): without it the connect is refused and leaves the route;
/// given it, the REQ goes to that peer.
#[test]
fn a_route_resolved_without_its_peer_connects_once_given_it() {
    let mut f = RdmaFabric::new(2, 4, Faults::default());
    let (l, c) = resolving_pair(&mut f, any(PORT));
    let dst = node_addr(SERVER, PORT);
    let found = f.resolve_addr(CLIENT, &dst);
    assert!(f.call(CLIENT, |cm, h| cm.addr_resolved(h, c, found)));
    f.call(CLIENT, |cm, _| cm.resolve_route(c, 2000).unwrap());
    let mut route = f.route(CLIENT, &dst).unwrap();
    let peer = route.peer.take().unwrap();
    assert!(f.call(CLIENT, |cm, h| cm.route_resolved(h, c, Ok(route))));
    assert_eq!(
        f.call(CLIENT, |cm, h| cm.connect(h, c, &params(b"late"))),
        Err(RdmaCmError::Invalid)
    );
    assert_eq!(
        f.nodes[CLIENT as usize].rdma.get(c).unwrap().state(),
        IdState::RouteResolved
    );
    f.call(CLIENT, |cm, h| {
        cm.supply_peer(c, |device| {
            assert_eq!(device, SIM_DEVICE);
            peer
        });
        // A peer the route has is kept.
        cm.supply_peer(c, |_| unreachable!("the route has its peer"));
        cm.connect(h, c, &params(b"late")).unwrap()
    });
    f.run_for(50);
    let evs = f.take_events(SERVER);
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(evs[0].1.kind, EventKind::ConnectRequest);
    assert_eq!(evs[0].1.listener, Some(l));
    assert_eq!(&evs[0].1.conn.data()[..4], b"late");
}

#[test]
fn reject_reaches_the_client_with_reason_and_data() {
    let mut f = RdmaFabric::new(2, 3, Faults::default());
    let (_l, c) = resolved_pair(&mut f, any(PORT));
    f.call(CLIENT, |cm, h| cm.connect(h, c, &params(b"")).unwrap());
    f.run_for(50);
    let s = f.take_events(SERVER)[0].0;
    f.call(SERVER, |cm, h| {
        cm.reject(h, s, b"go away", RejectReason::ConsumerDefined)
            .unwrap();
        cm.destroy(h, s).unwrap();
    });
    f.run_for(50);
    let evs = f.take_events(CLIENT);
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(evs[0].1.kind, EventKind::Rejected);
    assert_eq!(
        evs[0].1.status,
        EventStatus::Rejected(RejectReason::ConsumerDefined)
    );
    assert_eq!(evs[0].1.conn.private_data_len, 148);
    assert_eq!(&evs[0].1.conn.data()[..7], b"go away");
}

#[test]
fn a_port_nobody_listens_on_and_an_address_nobody_listens_on() {
    let mut f = RdmaFabric::new(2, 4, Faults::default());
    // Listening on another address of the port: the CM listener takes the
    // REQ, rdma_cm finds no id for it and the REQ is rejected (28).
    let (l, c) = resolved_pair(&mut f, node_addr(7, PORT));
    f.call(CLIENT, |cm, h| cm.connect(h, c, &params(b"")).unwrap());
    f.run_for(50);
    assert!(f.take_events(SERVER).is_empty());
    let evs = f.take_events(CLIENT);
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(
        evs[0].1.status,
        EventStatus::Rejected(RejectReason::ConsumerDefined)
    );
    // Without a listener the CM itself rejects: invalid service id (8).
    f.call(SERVER, |cm, h| cm.destroy(h, l).unwrap());
    f.call(CLIENT, |cm, h| cm.destroy(h, c).unwrap());
    f.run_for(50);
    let (l2, c2) = resolved_pair(&mut f, any(PORT + 1));
    f.call(CLIENT, |cm, h| cm.connect(h, c2, &params(b"")).unwrap());
    f.run_for(50);
    let evs = f.take_events(CLIENT);
    assert_eq!(
        evs[0].1.status,
        EventStatus::Rejected(RejectReason::InvalidServiceId)
    );
    let _ = l2;
}

#[test]
fn a_handler_that_fails_leaves_the_peer_rejected() {
    let mut f = RdmaFabric::new(2, 5, Faults::default());
    let (_l, c) = resolved_pair(&mut f, any(PORT));
    f.call(CLIENT, |cm, h| cm.connect(h, c, &params(b"")).unwrap());
    f.run_for(50);
    // The consumer's CONNECT_REQUEST handler returned non-zero: the id
    // is destroyed, which rejects the REQ.
    let s = f.take_events(SERVER)[0].0;
    f.call(SERVER, |cm, h| cm.destroy(h, s).unwrap());
    f.run_for(50);
    let evs = f.take_events(CLIENT);
    assert_eq!(evs[0].1.kind, EventKind::Rejected);
    assert_eq!(
        evs[0].1.status,
        EventStatus::Rejected(RejectReason::ConsumerDefined)
    );
}

#[test]
fn an_unanswered_req_is_unreachable() {
    let faults = Faults {
        loss: 1000,
        ..Faults::default()
    };
    let mut f = RdmaFabric::new(2, 6, faults);
    let (_l, c) = resolved_pair(&mut f, any(PORT));
    f.call(CLIENT, |cm, h| cm.connect(h, c, &params(b"")).unwrap());
    assert!(f.run_until_quiet(10_000));
    let evs = f.take_events(CLIENT);
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(evs[0].1.kind, EventKind::Unreachable);
    assert_eq!(evs[0].1.status, EventStatus::TimedOut);
    // rdma_cm's defaults: 16 REQs, each waiting 2 packet lifetimes (64 ms
    // each, IBA time 14) and the CM response time (4096 ms, IBA time 20),
    // then the REJ (timeout) the CM sends on giving up.
    assert_eq!(f.fabric.sent, 16 + 1);
    assert_eq!(f.fabric.now, 16 * (2 * 64 + 4096));
}

/// Connects `c` with its CM response set to `to` on a fabric that drops
/// everything and returns the one event the client gets.
fn connect_unanswered(f: &mut RdmaFabric, c: RdmaId, to: CmResponse) -> EventKind {
    f.call(CLIENT, |cm, h| {
        cm.set_cm_response(c, to).unwrap();
        cm.connect(h, c, &params(b"")).unwrap()
    });
    assert!(f.run_until_quiet(10_000));
    let evs = f.take_events(CLIENT);
    assert_eq!(evs.len(), 1, "{evs:?}");
    evs[0].1.kind
}

/// Unreachable after the id's own CM response timeout and retries: on an
/// RC id its REQs, on a UD id its SIDR_REQs (2^(x-8) ms each).
#[test]
fn an_ids_cm_response_times_its_requests() {
    let faults = Faults {
        loss: 1000,
        ..Faults::default()
    };
    let mut f = RdmaFabric::new(2, 6, faults);
    let (_l, c) = resolved_pair(&mut f, any(PORT));
    let kind = connect_unanswered(&mut f, c, CmResponse::new(12, 2).unwrap());
    assert_eq!(kind, EventKind::Unreachable);
    assert_eq!(f.fabric.sent, 3 + 1, "3 REQs and the REJ (timeout)");
    assert_eq!(f.fabric.now, 3 * (2 * 64 + 16));

    let mut f = RdmaFabric::new(2, 7, faults);
    let (_l, c) = resolved_ud_pair(&mut f);
    let kind = connect_unanswered(&mut f, c, CmResponse::new(13, 1).unwrap());
    assert_eq!(kind, EventKind::Unreachable);
    assert_eq!(f.fabric.sent, 2);
    assert_eq!(f.fabric.now, 2 * 32);
}

#[test]
fn a_qp_that_cannot_be_moved_fails_the_connection() {
    let mut f = RdmaFabric::new(2, 7, Faults::default());
    let (_l, c) = resolved_pair(&mut f, any(PORT));
    f.create_qp(CLIENT, c, 0x10);
    f.call(CLIENT, |cm, h| cm.connect(h, c, &params(b"")).unwrap());
    f.run_for(50);
    let s = f.take_events(SERVER)[0].0;
    f.nodes[CLIENT as usize].side.fail_qp = Some(-5);
    f.call_settled(SERVER, |cm, h| cm.accept(h, s, Some(&params(b""))))
        .unwrap();
    f.run_for(50);
    let evs = f.take_events(CLIENT);
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(evs[0].1.kind, EventKind::ConnectError);
    assert_eq!(evs[0].1.status, EventStatus::Failed(RdmaCmError::Qp(-5)));
    let evs = f.take_events(SERVER);
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(evs[0].1.kind, EventKind::Rejected);
}

#[test]
fn without_a_qp_the_consumer_completes_the_connection() {
    let mut f = RdmaFabric::new(2, 8, Faults::default());
    let (_l, c) = resolved_pair(&mut f, any(PORT));
    let mut p = params(b"");
    p.qp_num = 0x77;
    f.call(CLIENT, |cm, h| cm.connect(h, c, &p).unwrap());
    f.run_for(50);
    let s = f.take_events(SERVER)[0].0;
    let mut p = params(b"");
    p.qp_num = 0x88;
    f.call_settled(SERVER, |cm, h| cm.accept(h, s, Some(&p)))
        .unwrap();
    f.run_for(50);
    let evs = f.take_events(CLIENT);
    assert_eq!(evs[0].1.kind, EventKind::ConnectResponse);
    assert_eq!(evs[0].1.conn.qp_num, 0x88);
    assert!(f.take_events(SERVER).is_empty(), "no RTU yet");
    f.call_settled(CLIENT, |cm, h| cm.accept(h, c, None))
        .unwrap();
    f.run_for(50);
    assert_eq!(kinds(&mut f, SERVER), vec![(s, EventKind::Established)]);
}

/// A UD listener (PS_UDP) on the server and a resolved UD client id.
fn resolved_ud_pair(f: &mut RdmaFabric) -> (RdmaId, RdmaId) {
    let l = f.call(SERVER, |cm, h| {
        let l = cm
            .create_id(SIM_NET, PortSpace::Udp, RdmaQpType::Ud, 1)
            .unwrap();
        cm.bind_addr(l, any(PORT), &cx()).unwrap();
        cm.listen(h, l, 8, &cx()).unwrap();
        l
    });
    let dst = node_addr(SERVER, PORT);
    let c = f.call(CLIENT, |cm, _| {
        let c = cm
            .create_id(SIM_NET, PortSpace::Udp, RdmaQpType::Ud, 2)
            .unwrap();
        cm.resolve_addr(c, None, dst, 2000, &cx()).unwrap();
        c
    });
    resolve(f, c, dst);
    (l, c)
}

#[test]
fn ud_ids_resolve_the_service_through_sidr() {
    use rcm_core::rdma_cm::sidr::UDP_QKEY;
    let mut f = RdmaFabric::new(2, 10, Faults::default());
    let (l, c) = resolved_ud_pair(&mut f);
    f.call(CLIENT, |cm, h| {
        cm.connect(h, c, &params(b"who serves")).unwrap()
    });
    f.run_for(50);
    let evs = f.take_events(SERVER);
    assert_eq!(evs.len(), 1, "{evs:?}");
    let (s, req) = evs[0];
    assert_eq!(
        (req.kind, req.listener),
        (EventKind::ConnectRequest, Some(l))
    );
    assert_eq!(req.conn.private_data_len, 180, "216 minus the cma header");
    assert_eq!(&req.conn.data()[..10], b"who serves");
    let mut p = params(b"me");
    p.qp_num = 0x99;
    f.call_settled(SERVER, |cm, h| cm.accept(h, s, Some(&p)))
        .unwrap();
    f.run_for(50);
    let evs = f.take_events(CLIENT);
    assert_eq!(evs.len(), 1, "{evs:?}");
    let ev = evs[0].1;
    assert_eq!(ev.kind, EventKind::Established);
    assert_eq!((ev.conn.qp_num, ev.conn.qkey), (0x99, UDP_QKEY));
    assert_eq!(ev.conn.private_data_len, 136);
    assert_eq!(&ev.conn.data()[..2], b"me");
    assert_eq!(
        f.nodes[CLIENT as usize].rdma.get(c).unwrap().qkey(),
        UDP_QKEY
    );
    for (n, id) in [(CLIENT, c), (SERVER, s), (SERVER, l)] {
        f.call(n, |cm, h| cm.destroy(h, id).unwrap());
    }
    assert!(f.run_until_quiet(1000));
    for n in [CLIENT, SERVER] {
        assert!(f.nodes[n as usize].rdma.is_empty());
        assert!(
            f.fabric.nodes[n as usize].ep.is_empty(),
            "node {n} CM ids left"
        );
    }
}

#[test]
fn a_rejected_or_unknown_ud_service_is_unreachable() {
    use rcm_core::reason::SidrStatus;
    let mut f = RdmaFabric::new(2, 11, Faults::default());
    let (l, c) = resolved_ud_pair(&mut f);
    f.call(CLIENT, |cm, h| cm.connect(h, c, &params(b"")).unwrap());
    f.run_for(50);
    let s = f.take_events(SERVER)[0].0;
    f.call(SERVER, |cm, h| {
        cm.reject(h, s, b"no", RejectReason::ConsumerDefined)
            .unwrap()
    });
    f.run_for(50);
    let evs = f.take_events(CLIENT);
    assert_eq!(evs[0].1.kind, EventKind::Unreachable);
    assert_eq!(evs[0].1.status, EventStatus::Sidr(SidrStatus::Reject));
    // With the listener gone the CM answers "unsupported".
    f.call(SERVER, |cm, h| {
        cm.destroy(h, s).unwrap();
        cm.destroy(h, l).unwrap();
    });
    f.call(CLIENT, |cm, h| cm.destroy(h, c).unwrap());
    let (l2, c2) = resolved_ud_pair(&mut f);
    f.call(SERVER, |cm, h| cm.destroy(h, l2).unwrap());
    f.call(CLIENT, |cm, h| cm.connect(h, c2, &params(b"")).unwrap());
    f.run_for(50);
    let evs = f.take_events(CLIENT);
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(evs[0].1.status, EventStatus::Sidr(SidrStatus::Unsupported));
}

/// The server's side of a connection up to its accept with a QP: the
/// accept has left the QP move, not made yet. The move, and the ids.
fn accept_left_waiting(f: &mut RdmaFabric) -> (ReadyMove, RdmaId, RdmaId) {
    let (_l, c) = resolved_pair(f, any(PORT));
    f.create_qp(CLIENT, c, 0x111);
    f.call(CLIENT, |cm, h| cm.connect(h, c, &params(b"")).unwrap());
    f.run_for(50);
    let s = f.take_events(SERVER)[0].0;
    f.create_qp(SERVER, s, 0x222);
    let (cm, mut h) = f.split(SERVER);
    cm.accept(&mut h, s, Some(&params(b"late"))).unwrap();
    let readies = &mut f.nodes[SERVER as usize].side.readies;
    assert_eq!(readies.len(), 1, "{readies:?}");
    let mv = readies.remove(0);
    assert_eq!(
        (mv.id, mv.limits.map(|l| l.responder_resources)),
        (s, Some(4))
    );
    (mv, s, c)
}

/// Hands `mv` back to the server's rdma_cm as made (`Ok`) or failed.
fn moved(f: &mut RdmaFabric, mv: ReadyMove, result: Result<(), i32>) -> Result<(), RdmaCmError> {
    let (cm, mut h) = f.split(SERVER);
    cm.qp_ready_done(&mut h, mv, result)
}

#[test]
fn the_rep_waits_for_the_qp_move_it_follows() {
    let mut f = RdmaFabric::new(2, 21, Faults::default());
    let (mv, s, c) = accept_left_waiting(&mut f);
    f.run_for(50);
    assert!(f.take_events(CLIENT).is_empty(), "a REP before the move");
    f.nodes[SERVER as usize].side.qps.insert(
        s,
        SimQp::Rts {
            rq_psn: mv.rq_psn,
            sq_psn: 0,
        },
    );
    moved(&mut f, mv, Ok(())).unwrap();
    f.run_for(50);
    let evs = f.take_events(CLIENT);
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!((evs[0].0, evs[0].1.kind), (c, EventKind::Established));
    assert_eq!(&evs[0].1.conn.data()[..4], b"late");
    assert_eq!(kinds(&mut f, SERVER), vec![(s, EventKind::Established)]);
}

#[test]
fn a_failed_move_rejects_and_is_the_accepts_result() {
    let mut f = RdmaFabric::new(2, 22, Faults::default());
    let (mv, s, c) = accept_left_waiting(&mut f);
    assert_eq!(moved(&mut f, mv, Err(-5)), Err(RdmaCmError::Qp(-5)));
    assert_eq!(
        f.nodes[SERVER as usize].side.qps.get(&s),
        Some(&SimQp::Error)
    );
    f.run_for(50);
    assert_eq!(kinds(&mut f, CLIENT), vec![(c, EventKind::Rejected)]);
}

#[test]
fn a_move_the_connection_outlived_sends_nothing() {
    // The peer gave up meanwhile: its REJ arrives before the move is made.
    let mut f = RdmaFabric::new(2, 23, Faults::default());
    let (mv, s, c) = accept_left_waiting(&mut f);
    f.call(CLIENT, |cm, h| cm.destroy(h, c).unwrap());
    f.run_for(50);
    assert_eq!(kinds(&mut f, SERVER), vec![(s, EventKind::Rejected)]);
    assert!(moved(&mut f, mv, Ok(())).is_err());
    assert_eq!(
        f.nodes[SERVER as usize].side.qps.get(&s),
        Some(&SimQp::Error)
    );
    f.run_for(50);
    assert!(f.take_events(SERVER).is_empty());

    // The consumer destroyed the id meanwhile.
    let mut f = RdmaFabric::new(2, 24, Faults::default());
    let (mv, s, c) = accept_left_waiting(&mut f);
    f.call(SERVER, |cm, h| cm.destroy(h, s).unwrap());
    assert_eq!(moved(&mut f, mv, Ok(())), Err(RdmaCmError::NoSuchId));
    f.run_for(50);
    assert_eq!(kinds(&mut f, CLIENT), vec![(c, EventKind::Rejected)]);
}
