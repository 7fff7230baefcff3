// SPDX-License-Identifier: GPL-2.0

//! Scripted CM exchanges between simulated endpoints: connection setup.
//! REQ, MRA, REP, RTU and REJ both ways, their duplicates, timeouts and
//! stale connections, and what the receiver needs of a sender.

mod common;

use common::*;

/// XRC: the target has no QP of its own and names its number as the REP's
/// EE context; the initiator's peer QPN (QP attributes, stale-connection
/// table) is that number, as in 6.12's `cm_rep_get_qpn`.
#[test]
fn xrc_initiator_takes_the_targets_number_from_the_eecn() {
    let mut f = fabric();
    listen(&mut f, B, SID);
    let a = create(&mut f, A);
    let mut req = sample_req(SID, 0x11, 5);
    (req.transport_service_type, req.extended_transport_type) = Transport::Xrc.req_fields();
    f.call(A, |ep, now, s| {
        ep.send_req(now, a, &req, 0, B, IbaTime::new(10), s)
    })
    .expect("send_req");
    let (b, ev) = next_event(&mut f, B);
    assert!(matches!(ev, Event::ReqReceived { .. }));
    assert_eq!(
        f.nodes[1].ep.get(b).unwrap().qp_params().transport,
        Transport::Xrc
    );
    let mut rep = sample_rep(0);
    rep.local_eecn = 0x33;
    rep.srq = true;
    f.call(B, |ep, now, s| ep.send_rep(now, b, &rep, 0, s))
        .unwrap();
    let (_, ev) = next_event(&mut f, A);
    assert!(matches!(ev, Event::RepReceived { .. }));
    let qa = *f.nodes[0].ep.get(a).unwrap().qp_params();
    assert_eq!((qa.transport, qa.remote_qpn), (Transport::Xrc, 0x33));
    // The target knows itself by that number: the initiator's DREQ, which
    // names it, is answered.
    assert_eq!(f.nodes[1].ep.get(b).unwrap().qp_params().local_qpn, 0x33);
    f.call(A, |ep, _, s| ep.send_rtu(a, &[], s)).unwrap();
    next_event(&mut f, B);
    f.call(A, |ep, now, s| ep.send_dreq(now, a, &[], s))
        .unwrap();
    assert!(matches!(next_event(&mut f, B).1, Event::DreqReceived(_)));
    audit(&f);
}

#[test]
fn connect_negotiates_and_disconnects_through_timewait() {
    let mut f = fabric();
    let (a, b) = established(&mut f);
    assert_eq!(state(&f, A, a), Some(State::Established));
    assert_eq!(state(&f, B, b), Some(State::Established));
    let (qa, qb) = (
        *f.nodes[0].ep.get(a).unwrap().qp_params(),
        *f.nodes[1].ep.get(b).unwrap().qp_params(),
    );
    assert_eq!((qa.local_qpn, qa.remote_qpn), (0x11, 0x22));
    assert_eq!((qb.local_qpn, qb.remote_qpn), (0x22, 0x11));
    assert_eq!(qa.sq_psn, qb.rq_psn);
    assert_eq!(qb.sq_psn, qa.rq_psn);
    // each side's reads are the other's responder resources
    assert_eq!(qa.initiator_depth, 2);
    assert_eq!(qb.responder_resources, 2);
    assert_eq!(f.nodes[0].ep.get(a).unwrap().remote_id(), b.0);
    assert_eq!(f.nodes[1].ep.get(b).unwrap().remote_id(), a.0);
    audit(&f);

    assert_eq!(f.nodes[0].ep.dreps_awaited(DeviceId(0)).count(), 0);
    f.call(A, |ep, now, s| ep.send_dreq(now, a, b"bye", s))
        .unwrap();
    assert_eq!(state(&f, A, a), Some(State::DreqSent));
    let awaited: Vec<_> = f.nodes[0].ep.dreps_awaited(DeviceId(0)).collect();
    assert_eq!(awaited, vec![a]);
    assert!(f.nodes[0].ep.awaits_drep(a));
    assert_eq!(f.nodes[0].ep.dreps_awaited(DeviceId(1)).count(), 0);
    let (_, ev) = next_event(&mut f, B);
    assert!(matches!(ev, Event::DreqReceived(d) if &d.private_data[..3] == b"bye"));
    f.call(B, |ep, now, s| ep.send_drep(now, b, &[], s))
        .unwrap();
    let drep_at = f.now;
    assert_eq!(state(&f, B, b), Some(State::Timewait));
    assert!(matches!(next_event(&mut f, A).1, Event::DrepReceived(_)));
    assert_eq!(state(&f, A, a), Some(State::Timewait));
    assert!(!f.nodes[0].ep.awaits_drep(a));
    assert_eq!(f.nodes[0].ep.dreps_awaited(DeviceId(0)).count(), 0);
    audit(&f);
    // TIMEWAIT lasts one ACK timeout of the path.
    let (_, ev) = next_event(&mut f, B);
    assert_eq!(ev, Event::TimewaitExit);
    let ack = f.nodes[1].ep.get(b).unwrap().qp_params().ack_timeout;
    assert!(f.now - drep_at >= u64::from(timer::timewait_ms(ack)));
    assert_eq!(next_event(&mut f, A).1, Event::TimewaitExit);
    assert_eq!(state(&f, A, a), Some(State::Idle));
    settle(&mut f);
    audit(&f);
}

#[test]
fn no_listener_is_rejected_with_reason_8() {
    let mut f = fabric();
    let a = connect(&mut f, A, B, SID, 0x11, 3);
    match next_event(&mut f, A) {
        (id, Event::RejReceived { rej, .. }) => {
            assert_eq!(id, a);
            assert_eq!(rej.reason, RejectReason::InvalidServiceId);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(state(&f, A, a), Some(State::Idle));
    settle(&mut f);
    assert_eq!(f.nodes[1].ep.len(), 0);
    audit(&f);
}

#[test]
fn consumer_reject_carries_private_data() {
    let mut f = fabric();
    listen(&mut f, B, SID);
    let a = connect(&mut f, A, B, SID, 0x11, 3);
    let (b, _) = next_event(&mut f, B);
    f.call(B, |ep, now, s| {
        ep.send_rej(now, b, RejectReason::ConsumerDefined, &[], b"not today", s)
    })
    .unwrap();
    assert_eq!(state(&f, B, b), Some(State::Idle));
    match next_event(&mut f, A).1 {
        Event::RejReceived { rej, .. } => {
            assert_eq!(rej.reason, RejectReason::ConsumerDefined);
            assert_eq!(&rej.private_data[..9], b"not today");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(state(&f, A, a), Some(State::Idle));
    settle(&mut f);
    audit(&f);
}

#[test]
fn mra_extends_the_active_sides_wait() {
    let mut f = fabric();
    listen(&mut f, B, SID);
    let a = connect(&mut f, A, B, SID, 0x11, 2);
    let (b, _) = next_event(&mut f, B);
    // ~268 s of service time: far beyond the REQ's own timeout.
    f.call(B, |ep, _, s| ep.send_mra(b, 26, &[], s)).unwrap();
    assert_eq!(state(&f, B, b), Some(State::MraReqSent));
    assert!(matches!(next_event(&mut f, A).1, Event::MraReceived(_)));
    assert_eq!(state(&f, A, a), Some(State::MraReqRcvd));
    let deadline = f.nodes[0].ep.get(a).unwrap().deadline();
    assert!(deadline - f.now >= u64::from(IbaTime::new(26).as_millis_approx()));
    // accepting later still works
    f.call(B, |ep, now, s| ep.send_rep(now, b, &sample_rep(0x22), 0, s))
        .unwrap();
    assert!(matches!(next_event(&mut f, A).1, Event::RepReceived { .. }));
    assert_eq!(f.nodes[0].ep.get(a).unwrap().retransmissions(), 0);
}

/// A's REQ at B, which stored a delayed MRA for it: (A's id, B's id).
fn req_with_delayed_mra(f: &mut Fabric) -> (CommId, CommId) {
    listen(f, B, SID);
    let a = connect(f, A, B, SID, 0x11, 5);
    let (b, _) = next_event(f, B);
    f.call(B, |ep, _, s| ep.send_mra(b, 24 | MRA_FLAG_DELAY, &[], s))
        .unwrap();
    (a, b)
}

#[test]
fn delayed_mra_goes_out_only_when_the_req_is_repeated() {
    let mut f = fabric();
    let (a, _) = req_with_delayed_mra(&mut f);
    // Nothing sent yet; A retransmits its REQ and gets the MRA in answer.
    let (_, ev) = next_event(&mut f, A);
    assert!(matches!(ev, Event::MraReceived(m) if m.service_timeout == IbaTime::new(24)));
    assert_eq!(f.nodes[0].ep.get(a).unwrap().retransmissions(), 1);
    assert_eq!(f.nodes[1].duplicates, 1);
}

/// Once connected, neither side keeps a MAD: the delayed MRA the passive
/// side kept for repeated REQs goes with its REP, the REP with the RTU.
#[test]
fn connected_ids_keep_no_mads() {
    let mut f = fabric();
    let (a, b) = req_with_delayed_mra(&mut f);
    assert_eq!(f.nodes[1].ep.kept_mads(), 1);
    f.call(B, |ep, now, s| ep.send_rep(now, b, &sample_rep(0x22), 0, s))
        .unwrap();
    next_event(&mut f, A);
    f.call(A, |ep, _, s| ep.send_rtu(a, &[], s)).unwrap();
    assert!(matches!(next_event(&mut f, B), (id, Event::RtuReceived(_)) if id == b));
    assert_eq!(state(&f, B, b), Some(State::Established));
    assert_eq!(
        (f.nodes[0].ep.kept_mads(), f.nodes[1].ep.kept_mads()),
        (0, 0)
    );
    audit(&f);
}

#[test]
fn lost_rtu_is_recovered_by_rep_retransmission() {
    let mut f = fabric();
    listen(&mut f, B, SID);
    let a = connect(&mut f, A, B, SID, 0x11, 5);
    let (b, _) = next_event(&mut f, B);
    f.call(B, |ep, now, s| ep.send_rep(now, b, &sample_rep(0x22), 0, s))
        .unwrap();
    next_event(&mut f, A);
    // Lose the RTU.
    f.faults.loss = 1000;
    f.call(A, |ep, _, s| ep.send_rtu(a, &[], s)).unwrap();
    f.faults.loss = 0;
    assert_eq!(state(&f, B, b), Some(State::RepSent));
    // B retransmits the REP; A, established, answers with its RTU again.
    let (id, ev) = next_event(&mut f, B);
    assert_eq!(id, b);
    assert!(matches!(ev, Event::RtuReceived(_)));
    assert_eq!(f.nodes[0].duplicates, 1);
    assert_eq!(state(&f, B, b), Some(State::Established));
}

#[test]
fn duplicate_req_while_rep_sent_repeats_the_rep() {
    let mut f = fabric();
    listen(&mut f, B, SID);
    let a = connect(&mut f, A, B, SID, 0x11, 5);
    let (b, _) = next_event(&mut f, B);
    f.call(B, |ep, now, s| ep.send_rep(now, b, &sample_rep(0x22), 0, s))
        .unwrap();
    // A REQ copy arrives at B again (the network duplicated it).
    let req = sample_req(SID, 0x11, 5);
    let mut r = req;
    r.local_comm_id = a.0;
    r.local_ca_guid = f.nodes[0].guid;
    let mad = emit(CmMessage::Req(r));
    let h = deliver(&mut f, A, B, &mad);
    assert_eq!(h, Handled::Duplicate);
    assert_eq!(f.nodes[1].ep.len(), 2, "no second id for a duplicate REQ");
    // A gets the REP twice; the second is a duplicate it only counts.
    assert!(matches!(next_event(&mut f, A).1, Event::RepReceived { .. }));
    for _ in 0..3 {
        f.step();
    }
    assert!(f.nodes[0].events.is_empty());
    assert!(f.nodes[0].duplicates >= 1);
}

#[test]
fn req_timeout_after_max_retries() {
    let mut f = fabric();
    f.faults.loss = 1000;
    let a = connect(&mut f, A, B, SID, 0x11, 3);
    match next_event(&mut f, A) {
        (id, Event::ReqError(Failure::Timeout)) => assert_eq!(id, a),
        other => panic!("{other:?}"),
    }
    assert_eq!(f.sent, 5, "one REQ, three retries, a REJ (timeout)");
    assert_eq!(state(&f, A, a), Some(State::Idle));
    audit(&f);
}

#[test]
fn rep_timeout_without_rtu() {
    let mut f = fabric();
    listen(&mut f, B, SID);
    connect(&mut f, A, B, SID, 0x11, 2);
    let (b, _) = next_event(&mut f, B);
    f.faults.loss = 1000;
    f.call(B, |ep, now, s| ep.send_rep(now, b, &sample_rep(0x22), 0, s))
        .unwrap();
    assert_eq!(
        next_event(&mut f, B),
        (b, Event::RepError(Failure::Timeout))
    );
    assert_eq!(state(&f, B, b), Some(State::Idle));
    audit(&f);
}

#[test]
fn send_failure_fails_the_exchange_at_once() {
    let mut f = fabric();
    let a = connect(&mut f, A, B, SID, 0x11, 5);
    // a failed send of another message of the id does not count
    f.call(A, |ep, now, s| ep.send_failed(now, a, attr::DREQ, s));
    assert!(f.take_events(A).is_empty());
    f.call(A, |ep, now, s| ep.send_failed(now, a, attr::REQ, s));
    assert_eq!(
        f.take_events(A),
        vec![(a, Event::ReqError(Failure::SendFailed))]
    );
}

#[test]
fn stale_connection_is_rejected_and_the_old_one_disconnected() {
    let mut f = fabric();
    let (a, b) = established(&mut f);
    // A "reboots": a new comm id from the same QP while B still holds the
    // old connection.
    let a2 = connect(&mut f, A, B, SID, 0x11, 3);
    let mut saw_rej = false;
    let mut saw_dreq = false;
    for _ in 0..2 {
        match next_event(&mut f, A) {
            (id, Event::RejReceived { rej, .. }) => {
                assert_eq!(id, a2);
                assert_eq!(rej.reason, RejectReason::StaleConn);
                saw_rej = true;
            }
            (id, Event::DreqReceived(_)) => {
                assert_eq!(id, a);
                saw_dreq = true;
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(saw_rej && saw_dreq);
    assert_eq!(state(&f, A, a2), Some(State::Timewait));
    assert_eq!(state(&f, B, b), Some(State::DreqSent));
    audit(&f);
}

#[test]
fn reused_comm_id_with_another_qp_gets_rej_30() {
    let mut f = fabric();
    let (a, _) = established(&mut f);
    let mut r = sample_req(SID, 0x99, 3);
    r.local_comm_id = a.0;
    r.local_ca_guid = f.nodes[0].guid;
    let sent = f.sent;
    f.faults.loss = 1000;
    assert_eq!(
        deliver(&mut f, A, B, &emit(CmMessage::Req(r))),
        Handled::Answered
    );
    assert_eq!(f.sent, sent + 1, "one REJ and nothing else");
}

#[test]
fn wrong_class_version_req_gets_rej_31() {
    let mut f = fabric();
    let mut r = sample_req(SID, 0x11, 3);
    r.local_comm_id = 0x77;
    let mut mad = emit(CmMessage::Req(r));
    mad[2] = 1; // class version 1
    assert_eq!(deliver(&mut f, A, B, &mad), Handled::Answered);
    // B answered with a REJ to A (which has no id 0x77 and drops it)
    f.step();
    assert!(
        f.trace.iter().any(|t| t.contains("1 -> 0 REJ")),
        "no REJ: {:?}",
        f.trace
    );
}

#[test]
fn rep_for_an_unknown_id_is_rejected() {
    let mut f = fabric();
    listen(&mut f, B, SID);
    let a = connect(&mut f, A, B, SID, 0x11, 5);
    let (b, _) = next_event(&mut f, B);
    // A gives up before the REP arrives and is gone.
    f.faults.loss = 1000;
    f.call(A, |ep, now, s| ep.destroy(now, a, false, s))
        .unwrap();
    f.faults.loss = 0;
    settle(&mut f);
    assert!(f.nodes[0].ep.get(a).is_none());
    f.call(B, |ep, now, s| ep.send_rep(now, b, &sample_rep(0x22), 0, s))
        .unwrap();
    match next_event(&mut f, B).1 {
        Event::RejReceived { rej, .. } => assert_eq!(rej.reason, RejectReason::InvalidCommId),
        other => panic!("{other:?}"),
    }
    assert_eq!(state(&f, B, b), Some(State::Idle));
}

#[test]
fn out_of_memory_drops_the_req_and_the_retry_succeeds() {
    let mut f = fabric();
    listen(&mut f, B, SID);
    inject_insert_failures(1, 1); // every insert fails
    assert_eq!(
        f.call(A, |ep, _, _| ep.create_id(DeviceId(0), 1)),
        Err(CmError::NoMemory)
    );
    inject_insert_failures(0, 0);
    let a = connect(&mut f, A, B, SID, 0x11, 5);
    // B is out of memory when the first REQ arrives.
    inject_insert_failures(1, 1);
    f.step();
    inject_insert_failures(0, 0);
    assert!(f.nodes[1].events.is_empty());
    let (_, ev) = next_event(&mut f, B);
    assert!(matches!(ev, Event::ReqReceived { .. }));
    assert_eq!(f.nodes[0].ep.get(a).unwrap().retransmissions(), 1);
    audit(&f);
}

#[test]
fn rtu_after_user_established_counts_as_duplicate() {
    let mut f = fabric();
    listen(&mut f, B, SID);
    let a = connect(&mut f, A, B, SID, 0x11, 5);
    let (b, _) = next_event(&mut f, B);
    f.call(B, |ep, now, s| ep.send_rep(now, b, &sample_rep(0x22), 0, s))
        .unwrap();
    next_event(&mut f, A);
    f.call(B, |ep, _, s| ep.notify_established(b, s)).unwrap();
    f.call(A, |ep, _, s| ep.send_rtu(a, &[], s)).unwrap();
    settle(&mut f);
    assert_eq!(f.nodes[1].duplicates, 1);
}

/// An RTU without private data is not kept but rebuilt for a repeated
/// REP: byte for byte the RTU first sent, with its transaction id, also
/// after the peer's LAP gave the id a transaction of its own.
#[test]
fn bare_rtu_is_rebuilt_for_a_repeated_rep() {
    let mut f = fabric();
    listen(&mut f, B, SID);
    let a = connect(&mut f, A, B, SID, 0x11, 5);
    let (b, _) = next_event(&mut f, B);
    let rx_a = Received {
        from: Some(B),
        device: DeviceId(0),
        local_ca_guid: f.nodes[A as usize].guid,
    };
    let now = f.now;
    let mut rep = Capture::default();
    f.nodes[B as usize]
        .ep
        .send_rep(now, b, &sample_rep(0x22), 0, &mut rep)
        .expect("send_rep");
    let rep = rep.sent[0].0;
    let ep = &mut f.nodes[A as usize].ep;
    let mut first = Capture::default();
    ep.handle_mad(now, &rx_a, &rep, &mut first);
    ep.send_rtu(a, &[], &mut first).expect("send_rtu");
    let (rtu, retry) = first.sent[0];
    assert!(!retry);
    assert_eq!(ep.audit(), Ok(()));
    let mut lap = sample_lap();
    lap.local_comm_id = b.0;
    lap.remote_comm_id = a.0;
    let lap = emit(CmMessage::Lap(lap));
    for round in 0..2 {
        let mut again = Capture::default();
        assert_eq!(
            ep.handle_mad(now, &rx_a, &rep, &mut again),
            Handled::Duplicate
        );
        assert_eq!(again.sent.len(), 1, "round {round}: one RTU");
        assert_eq!(again.sent[0].0[..], rtu[..], "round {round}: the same RTU");
        assert!(again.sent[0].1, "round {round}: a repeat");
        let handled = ep.handle_mad(now, &rx_a, &lap, &mut again);
        let expected = [Handled::Delivered(a), Handled::Duplicate][round];
        assert_eq!(handled, expected, "round {round}: LAP");
    }
}

/// A receiver that works out reply addresses only where the endpoint
/// keeps them (the kernel's, where it costs an address resolution): a
/// REQ without its sender is dropped and files nothing, while messages
/// that match no id are answered to their sender all the same.
#[test]
fn only_a_request_needs_its_sender() {
    let mut ep: Endpoint<u32, Std> = Endpoint::new(Config {
        id_operand: 0x5A5A,
        tid_high: 1,
        hash_seed: 5,
        peer_window: 0,
    });
    let listener = ep.create_id(DeviceId(0), 0xB).expect("create_id");
    ep.listen(listener, ListenSpec::exact(SID), &mut Capture::default())
        .expect("listen");
    let anonymous = Received {
        from: None,
        device: DeviceId(0),
        local_ca_guid: 0xB,
    };
    let mut req = sample_req(SID, 0x100, 3);
    req.local_ca_guid = 0xA;
    let req = emit(CmMessage::Req(req));
    let mut out = Capture::default();
    assert_eq!(
        ep.handle_mad(0, &anonymous, &req, &mut out),
        Handled::Dropped(Dropped::NoSender)
    );
    assert_eq!(ep.len(), 1, "only the listener");
    assert!(out.sent.is_empty() && out.events.is_empty());
    assert_eq!(ep.audit(), Ok(()));

    // A DREQ and an RTU for ids this side never had.
    let dreq = rcm_core::wire::disconnect::Dreq {
        local_comm_id: 0x99,
        remote_comm_id: 0x1234,
        remote_qpn_eecn: 0x55,
        private_data: [0; 220],
    };
    let rtu = rcm_core::wire::rep::Rtu {
        local_comm_id: 0x99,
        remote_comm_id: 0x1234,
        private_data: [0; 224],
    };
    for mad in [emit(CmMessage::Dreq(dreq)), emit(CmMessage::Rtu(rtu))] {
        let mut out = Capture::default();
        assert_eq!(
            ep.handle_mad(0, &anonymous, &mad, &mut out),
            Handled::Answered
        );
        assert_eq!(out.to, [None], "answered to the sender");
    }
    // Given, the sender is the answer's address.
    let known = Received {
        from: Some(A),
        ..anonymous
    };
    let mut out = Capture::default();
    ep.handle_mad(0, &known, &emit(CmMessage::Dreq(dreq)), &mut out);
    assert_eq!(out.to, [Some(A)]);
    assert!(keeps_sender(attr::REQ) && keeps_sender(attr::SIDR_REQ));
    assert!(!keeps_sender(attr::DREQ) && !keeps_sender(attr::REP));
}

/// A REQ's new id belongs to its listener's surface (rdma_cm or an ib_cm
/// consumer), and its events say so: the kernel delivers them to that
/// surface without asking the other.
#[test]
fn a_request_goes_to_the_surface_of_its_listener() {
    // Two requesters (one REQ each: a peer's window may hold one).
    let mut f = Fabric::new(3, 7, Faults::default());
    let guid_b = f.nodes[B as usize].guid;
    let now = f.now;
    {
        let ep = &mut f.nodes[B as usize].ep;
        let rdma = ep
            .create_owned_id(DeviceId(0), guid_b, Owner::RdmaCm)
            .expect("create_owned_id");
        ep.listen(rdma, ListenSpec::exact(SID), &mut Capture::default())
            .expect("listen");
        assert_eq!(ep.get(rdma).map(|c| c.owner()), Some(Owner::RdmaCm));
        let plain = ep.create_id(DeviceId(0), guid_b).expect("create_id");
        ep.listen(plain, ListenSpec::exact(SID + 1), &mut Capture::default())
            .expect("listen");
    }
    for (from, sid, owner) in [(A, SID, Owner::RdmaCm), (2, SID + 1, Owner::IbCm)] {
        let rx_b = Received {
            from: Some(from),
            device: DeviceId(0),
            local_ca_guid: guid_b,
        };
        let a = create(&mut f, from);
        let mut sent = Capture::default();
        f.nodes[from as usize]
            .ep
            .send_req(
                now,
                a,
                &sample_req(sid, 0x11, 5),
                0,
                B,
                IbaTime::new(10),
                &mut sent,
            )
            .expect("send_req");
        let mut got = Capture::default();
        let handled = f.nodes[B as usize]
            .ep
            .handle_mad(now, &rx_b, &sent.sent[0].0, &mut got);
        let Handled::Delivered(b) = handled else {
            panic!("REQ for {sid:#x}: {handled:?}");
        };
        assert_eq!(got.owners, [owner], "REQ for {sid:#x}");
        let ep = &f.nodes[B as usize].ep;
        assert_eq!(ep.get(b).map(|c| c.owner()), Some(owner));
    }
}
