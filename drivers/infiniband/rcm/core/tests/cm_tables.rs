// SPDX-License-Identifier: GPL-2.0

//! Scripted CM exchanges between simulated endpoints: the endpoint's tables
//! and API. Listeners, the API's errors, the remote indexes, comm ids.

mod common;

use common::*;

#[test]
fn listen_table_rules() {
    let mut f = fabric();
    let spec = |sid, tag| ListenSpec {
        device: None,
        service_id: sid,
        service_mask: 0,
        share_tag: tag,
        join: tag.is_some(),
    };
    let l1 = create(&mut f, B);
    let l2 = create(&mut f, B);
    f.call(B, |ep, _, out| ep.listen(l1, spec(SID, None), out))
        .unwrap();
    assert_eq!(
        f.call(B, |ep, _, out| ep.listen(l2, spec(SID, None), out)),
        Err(CmError::Busy)
    );
    assert_eq!(
        f.call(B, |ep, _, out| ep.listen(l1, spec(SID + 1, None), out)),
        Err(CmError::InvalidState)
    );
    // shared listeners: same tag, same id back
    let s1 = create(&mut f, B);
    let s2 = create(&mut f, B);
    let got1 = f
        .call(B, |ep, _, out| ep.listen(s1, spec(7, Some(9)), out))
        .unwrap();
    let got2 = f
        .call(B, |ep, _, out| ep.listen(s2, spec(7, Some(9)), out))
        .unwrap();
    assert_eq!((got1, got2), (s1, s1));
    assert_eq!(
        f.call(B, |ep, _, out| ep.listen(l2, spec(7, Some(8)), out)),
        Err(CmError::Busy)
    );
    assert_eq!(
        f.call(B, |ep, now, s| ep.destroy(now, s1, true, s)),
        Ok(false)
    );
    assert_eq!(
        f.call(B, |ep, now, s| ep.destroy(now, s1, true, s)),
        Ok(true)
    );
    // ib_cm_listen's listener (tagged, not joining) is joined by an
    // ib_cm_insert_listen with its handler, as in 6.12; a second
    // ib_cm_listen with that handler is still refused.
    let own = create(&mut f, B);
    let joiner = create(&mut f, B);
    let other = create(&mut f, B);
    let exclusive = ListenSpec {
        join: false,
        ..spec(11, Some(9))
    };
    f.call(B, |ep, _, out| ep.listen(own, exclusive, out))
        .unwrap();
    assert_eq!(
        f.call(B, |ep, _, out| ep.listen(other, exclusive, out)),
        Err(CmError::Busy)
    );
    assert_eq!(
        f.call(B, |ep, _, out| ep.listen(joiner, spec(11, Some(9)), out)),
        Ok(own)
    );
    // assigned ids, and the reserved range
    let got = f
        .call(B, |ep, _, out| {
            ep.listen(l2, spec(ASSIGN_SERVICE_ID, None), out)
        })
        .unwrap();
    assert_eq!(
        f.nodes[1].ep.get(got).unwrap().service_id(),
        ASSIGN_SERVICE_ID
    );
    let l3 = create(&mut f, B);
    assert_eq!(
        f.call(B, |ep, _, out| ep.listen(
            l3,
            spec(ASSIGN_SERVICE_ID + 5, None),
            out
        )),
        Err(CmError::InvalidArgument)
    );
    // a masked listener catches a whole port space; exact ones win
    let wide = create(&mut f, B);
    f.call(B, |ep, _, out| {
        ep.listen(
            wide,
            ListenSpec {
                device: Some(DeviceId(0)),
                service_id: 0x0106_0000_0000_0000,
                service_mask: 0xFFFF_FFFF_FFFF_0000,
                share_tag: None,
                join: false,
            },
            out,
        )
    })
    .unwrap();
    connect(&mut f, A, B, 0x0106_0000_0000_1234, 0x11, 3);
    assert!(
        matches!(next_event(&mut f, B).1, Event::ReqReceived { listener, .. } if listener == wide)
    );
    // the device's listeners are searched before the any-device ones
    connect(&mut f, A, B, SID, 0x12, 3);
    assert!(
        matches!(next_event(&mut f, B).1, Event::ReqReceived { listener, .. } if listener == wide)
    );
    let exact = create(&mut f, B);
    f.call(B, |ep, _, out| {
        ep.listen(
            exact,
            ListenSpec {
                device: Some(DeviceId(0)),
                service_id: SID,
                service_mask: 0,
                share_tag: None,
                join: false,
            },
            out,
        )
    })
    .unwrap();
    connect(&mut f, A, B, SID, 0x13, 3);
    assert!(
        matches!(next_event(&mut f, B).1, Event::ReqReceived { listener, .. } if listener == exact)
    );
    connect(&mut f, A, B, 0x0107_0000_0000_0001, 0x14, 3);
    // outside every listener's mask: rejected
    assert!(matches!(
        next_event(&mut f, A).1,
        Event::RejReceived { rej, .. } if rej.reason == RejectReason::InvalidServiceId
    ));
    audit(&f);
}

#[test]
fn api_errors_match_the_c_cm() {
    let mut f = fabric();
    let a = create(&mut f, A);
    assert_eq!(
        f.call(A, |ep, now, s| ep.send_rep(now, a, &sample_rep(1), 0, s)),
        Err(CmError::InvalidState)
    );
    assert_eq!(
        f.call(A, |ep, _, s| ep.send_rtu(a, &[], s)),
        Err(CmError::InvalidState)
    );
    assert_eq!(
        f.call(A, |ep, _, s| ep.send_rtu(a, &[0; 225], s)),
        Err(CmError::InvalidArgument)
    );
    assert_eq!(
        f.call(A, |ep, now, s| ep.send_dreq(now, a, &[], s)),
        Err(CmError::InvalidState)
    );
    assert_eq!(
        f.call(A, |ep, _, s| ep.send_mra(a, 1, &[], s)),
        Err(CmError::InvalidState)
    );
    assert_eq!(
        f.call(A, |ep, now, s| ep.send_rej(
            now,
            a,
            RejectReason::ConsumerDefined,
            &[],
            &[],
            s
        )),
        Err(CmError::InvalidState)
    );
    let mut bad = sample_req(SID, 1, 1);
    bad.transport_service_type = 2; // RD
    assert_eq!(
        f.call(A, |ep, now, s| ep.send_req(
            now,
            a,
            &bad,
            0,
            B,
            IbaTime::new(10),
            s
        )),
        Err(CmError::InvalidArgument)
    );
    f.call(A, |ep, now, s| ep.destroy(now, a, true, s)).unwrap();
    assert_eq!(
        f.call(A, |ep, now, s| ep.destroy(now, a, true, s)),
        Err(CmError::NoSuchId)
    );
}

/// Hundreds of connections at once: the remote id and QPN indexes double
/// their buckets several times and still find every connection, for a
/// repeated REQ (reused comm id from another QP: REJ 30) and a stale QP
/// (REJ 10 and the old connection ended), and empty out at the end.
#[test]
fn remote_indexes_find_each_of_many_connections() {
    const N: u32 = 300;
    let mut f = fabric();
    // Every REQ is answered only once all have arrived.
    f.set_peer_window(0);
    listen(&mut f, B, SID);
    let ids: Vec<CommId> = (0..N)
        .map(|i| connect(&mut f, A, B, SID, 0x1000 + i, 5))
        .collect();
    let wait_for = |f: &mut Fabric, n: u32| {
        while f.nodes[n as usize].events.len() < N as usize {
            assert!(
                f.step(),
                "node {n} got {} events",
                f.nodes[n as usize].events.len()
            );
        }
        std::mem::take(&mut f.nodes[n as usize].events)
    };
    for (b, ev) in wait_for(&mut f, B) {
        assert!(matches!(ev, Event::ReqReceived { .. }), "{ev:?}");
        let rep = sample_rep(0x8000 + b.0 % 0x1000);
        f.call(B, |ep, now, s| ep.send_rep(now, b, &rep, 0, s))
            .expect("send_rep");
    }
    for (a, ev) in wait_for(&mut f, A) {
        assert!(matches!(ev, Event::RepReceived { .. }), "{ev:?}");
        f.call(A, |ep, _, s| ep.send_rtu(a, &[], s))
            .expect("send_rtu");
    }
    wait_for(&mut f, B);
    audit(&f);
    assert_eq!(f.nodes[B as usize].ep.table_sizes()[1..3], [N as usize; 2]);
    assert!(ids
        .iter()
        .all(|&a| state(&f, A, a) == Some(State::Established)));

    f.faults.loss = 1000;
    for (n, &a) in ids.iter().enumerate().step_by(37) {
        let mut again = sample_req(SID, 0x7000 + n as u32, 3);
        again.local_comm_id = a.0;
        again.local_ca_guid = f.nodes[A as usize].guid;
        assert_eq!(
            deliver(&mut f, A, B, &emit(CmMessage::Req(again))),
            Handled::Answered
        );
        let stale = CommId(0x00AB_0000 + n as u32);
        let mut from_stale_qp = sample_req(SID, 0x1000 + n as u32, 3);
        from_stale_qp.local_comm_id = stale.0;
        from_stale_qp.local_ca_guid = f.nodes[A as usize].guid;
        assert_eq!(
            deliver(&mut f, A, B, &emit(CmMessage::Req(from_stale_qp))),
            Handled::Answered
        );
    }
    for (n, &a) in ids.iter().enumerate() {
        let b = CommId(f.nodes[A as usize].ep.get(a).map_or(0, |c| c.remote_id()));
        let expected = if n % 37 == 0 {
            State::DreqSent
        } else {
            State::Established
        };
        assert_eq!(state(&f, B, b), Some(expected), "connection {n}");
    }
    audit(&f);
    f.faults.loss = 0;

    for &a in &ids {
        f.call(A, |ep, now, s| ep.destroy(now, a, true, s))
            .expect("destroy");
    }
    settle(&mut f);
    for n in [A, B] {
        let ids_left: Vec<CommId> = f.nodes[n as usize].ep.ids().collect();
        for id in ids_left {
            if state(&f, n, id) != Some(State::Listen) {
                let _ = f.call(n, |ep, now, s| ep.destroy(now, id, true, s));
            }
        }
    }
    settle(&mut f);
    audit(&f);
    assert_eq!(f.nodes[A as usize].ep.table_sizes(), [0; 5]);
    assert_eq!(f.nodes[B as usize].ep.table_sizes()[1..4], [0; 3]);
    assert_eq!(f.nodes[B as usize].ep.len(), 1, "only the listener is left");
}

/// Any comm id but 0 may be live, u32::MAX included: an endpoint whose
/// first id (its listener) is 0xFFFFFFFF still finds and files each REQ
/// (the remote indexes once ended their chains with that number and
/// looped on it).
#[test]
fn comm_id_all_ones_is_an_ordinary_id() {
    let mut ep: Endpoint<u32, Std> = Endpoint::new(Config {
        id_operand: u32::MAX,
        tid_high: 1,
        hash_seed: 5,
        peer_window: 0,
    });
    let listener = ep.create_id(DeviceId(0), 0xB).expect("create_id");
    assert_eq!(listener, CommId(u32::MAX));
    ep.listen(listener, ListenSpec::exact(SID), &mut Capture::default())
        .expect("listen");
    let rx = Received {
        from: Some(A),
        device: DeviceId(0),
        local_ca_guid: 0xB,
    };
    for n in 0..3u32 {
        let mut req = sample_req(SID, 0x100 + n, 3);
        req.local_comm_id = 0x77 + n;
        req.local_ca_guid = 0xA;
        let mut out = Capture::default();
        let handled = ep.handle_mad(0, &rx, &emit(CmMessage::Req(req)), &mut out);
        assert!(
            matches!(handled, Handled::Delivered(_)),
            "REQ {n}: {handled:?}"
        );
        let again = ep.handle_mad(0, &rx, &emit(CmMessage::Req(req)), &mut out);
        assert_eq!(again, Handled::Duplicate, "REQ {n} again");
    }
    assert_eq!(ep.audit(), Ok(()));
}
