// SPDX-License-Identifier: GPL-2.0

//! Scripted CM exchanges between simulated endpoints: paths and QPs. LAP,
//! MRA and APR, QP attributes, path migration.

mod common;

use common::*;

#[test]
fn lap_mra_apr_both_ways() {
    let mut f = fabric();
    let (a, b) = established(&mut f);
    f.call(A, |ep, now, s| ep.send_lap(now, a, &sample_lap(), s))
        .unwrap();
    assert_eq!(f.nodes[0].ep.get(a).unwrap().lap_state(), LapState::Sent);
    assert!(matches!(next_event(&mut f, B).1, Event::LapReceived(_)));
    f.call(B, |ep, _, s| ep.send_mra(b, 20, &[], s)).unwrap();
    assert!(matches!(next_event(&mut f, A).1, Event::MraReceived(_)));
    assert_eq!(f.nodes[0].ep.get(a).unwrap().lap_state(), LapState::MraRcvd);
    f.call(B, |ep, _, s| {
        ep.send_apr(b, AprStatus::Success, &[], b"ok", s)
    })
    .unwrap();
    match next_event(&mut f, A).1 {
        Event::AprReceived(apr) => assert_eq!(apr.ap_status, AprStatus::Success),
        other => panic!("{other:?}"),
    }
    assert_eq!(f.nodes[0].ep.get(a).unwrap().lap_state(), LapState::Idle);
    // and the other way, timing out
    f.faults.loss = 1000;
    f.call(B, |ep, now, s| ep.send_lap(now, b, &sample_lap(), s))
        .unwrap();
    assert_eq!(next_event(&mut f, B).1, Event::LapError(Failure::Timeout));
    assert_eq!(state(&f, B, b), Some(State::Established));
    f.faults.loss = 0;
    // path migration needs an idle LAP state
    f.call(A, |ep, _, _| ep.notify_path_migrated(a)).unwrap();
    audit(&f);
}

/// `ib_cm_init_qp_attr`'s choices (6.12's cm_init_qp_*_attr): which
/// attributes each side gets per transition and transport, with and
/// without an alternate path, and after a LAP.
#[test]
fn qp_attributes_per_transport_and_path() {
    for transport in [Transport::Rc, Transport::Uc, Transport::Xrc] {
        let mut f = fabric();
        listen(&mut f, B, SID);
        let a = create(&mut f, A);
        // INIT needs a REQ sent or received
        let idle = f.nodes[0]
            .ep
            .get(a)
            .unwrap()
            .qp_attrs(QpTarget::Init, |_| true);
        assert_eq!(idle, Err(CmError::InvalidArgument));
        let mut req = sample_req(SID, 0x11, 5);
        (req.transport_service_type, req.extended_transport_type) = transport.req_fields();
        f.call(A, |ep, now, s| {
            ep.send_req(now, a, &req, 0, B, IbaTime::new(10), s)
        })
        .unwrap();
        let init = qp_attrs(&f, A, a, QpTarget::Init, true);
        assert!(init.state && init.port == Some(Some(B)));
        assert_eq!(init.remote_read, Some(req.responder_resources != 0));
        // RTR and RTS need the peer's QP
        let early = f.nodes[0]
            .ep
            .get(a)
            .unwrap()
            .qp_attrs(QpTarget::Rtr, |_| true);
        assert_eq!(early, Err(CmError::InvalidArgument));
        let (b, _) = next_event(&mut f, B);
        let mut rep = sample_rep(if transport == Transport::Xrc { 0 } else { 0x22 });
        rep.local_eecn = 0x33;
        f.call(B, |ep, now, s| ep.send_rep(now, b, &rep, 0, s))
            .unwrap();
        next_event(&mut f, A);
        f.call(A, |ep, _, s| ep.send_rtu(a, &[], s)).unwrap();
        next_event(&mut f, B);
        f.call(A, |ep, _, _| ep.set_alternate(a, Some(7), None))
            .unwrap();
        for (n, id) in [(A, a), (B, b)] {
            let conn = f.nodes[n as usize].ep.get(id).unwrap();
            let qp = *conn.qp_params();
            let t = conn.qp_type();
            let rtr = qp_attrs(&f, n, id, QpTarget::Rtr, false);
            assert!(rtr.state && rtr.av == conn.peer().copied());
            assert_eq!(
                (rtr.path_mtu, rtr.dest_qpn, rtr.rq_psn),
                (Some(qp.path_mtu), Some(qp.remote_qpn), Some(qp.rq_psn))
            );
            let responder = matches!(t, QpType::Rc | QpType::XrcTgt);
            assert_eq!(
                rtr.max_dest_rd_atomic,
                responder.then_some(qp.responder_resources)
            );
            assert_eq!(rtr.min_rnr_timer, responder.then_some(0));
            assert_eq!(rtr.alt_path, None, "no alternate on RoCE");
            let rts = qp_attrs(&f, n, id, QpTarget::Rts, false);
            let requester = matches!(t, QpType::Rc | QpType::XrcIni);
            assert!(rts.state && rts.sq_psn == Some(qp.sq_psn));
            assert_eq!(rts.retry_cnt, requester.then_some(qp.retry_count));
            assert_eq!(rts.rnr_retry, requester.then_some(qp.rnr_retry_count));
            assert_eq!(rts.max_rd_atomic, requester.then_some(qp.initiator_depth));
            assert_eq!(rts.timeout, (t != QpType::Uc).then_some(qp.ack_timeout));
            assert!(!rts.path_mig_rearm && rts.alt_path.is_none());
        }
        // A LID-routed alternate path goes into RTR, and RTS re-arms.
        let qp = *f.nodes[0].ep.get(a).unwrap().qp_params();
        let alt = Some(AltPath {
            path: Some(7),
            ack_timeout: qp.alt_ack_timeout,
        });
        assert_eq!(qp_attrs(&f, A, a, QpTarget::Rtr, true).alt_path, alt);
        assert!(qp_attrs(&f, A, a, QpTarget::Rts, true).path_mig_rearm);
        // B has none.
        assert_eq!(qp_attrs(&f, B, b, QpTarget::Rtr, true).alt_path, None);
        // After a LAP, RTS only loads the new alternate path.
        f.call(A, |ep, now, s| ep.send_lap(now, a, &sample_lap(), s))
            .unwrap();
        let rts = qp_attrs(&f, A, a, QpTarget::Rts, false);
        let lap_alt = f.nodes[0].ep.get(a).unwrap().qp_params().alt_ack_timeout;
        assert_eq!(
            rts,
            QpAttrs {
                alt_path: Some(AltPath {
                    path: Some(7),
                    ack_timeout: lap_alt
                }),
                path_mig_rearm: true,
                ..QpAttrs::default()
            }
        );
        audit(&f);
    }
}

/// Path migration moves the connection (and its MADs) to the alternate
/// path.
#[test]
fn path_migration_makes_the_alternate_primary() {
    let mut f = fabric();
    let (a, _) = established(&mut f);
    f.call(A, |ep, _, _| ep.set_alternate(a, Some(9), None))
        .unwrap();
    f.call(A, |ep, _, _| ep.notify_path_migrated(a)).unwrap();
    assert_eq!(f.nodes[0].ep.get(a).unwrap().peer(), Some(&9));
}
