// SPDX-License-Identifier: GPL-2.0

//! Scripted CM exchanges between simulated endpoints: disconnection and the
//! end of ids. DREQ and DREP, TIMEWAIT, destroy in every state.

mod common;

use common::*;

/// A departing device's DREQs get one more timeout, no retries: the
/// exchange ends (DREQ_ERROR, TIMEWAIT) after the interval already running.
#[test]
fn last_try_ends_a_dreq_after_its_current_timeout() {
    let mut f = fabric();
    let (a, _) = established(&mut f);
    f.faults.loss = 1000;
    let before = f.sent;
    f.call(A, |ep, now, s| ep.send_dreq(now, a, &[], s))
        .unwrap();
    let sent_at = f.now;
    f.nodes[0].ep.last_try(a);
    assert!(f.nodes[0].ep.awaits_drep(a));
    assert_eq!(
        next_event(&mut f, A),
        (a, Event::DreqError(Failure::Timeout))
    );
    assert_eq!(f.sent - before, 1, "the DREQ once, no retry");
    assert!(f.now - sent_at < 1000, "one timeout of the path");
    assert_eq!(state(&f, A, a), Some(State::Timewait));
    assert!(!f.nodes[0].ep.awaits_drep(a));
    audit(&f);
}

#[test]
fn simultaneous_dreqs_end_in_timewait_on_both_sides() {
    let mut f = fabric();
    let (a, b) = established(&mut f);
    f.call(A, |ep, now, s| ep.send_dreq(now, a, &[], s))
        .unwrap();
    f.call(B, |ep, now, s| ep.send_dreq(now, b, &[], s))
        .unwrap();
    assert!(matches!(next_event(&mut f, A).1, Event::DreqReceived(_)));
    assert!(matches!(next_event(&mut f, B).1, Event::DreqReceived(_)));
    f.call(A, |ep, now, s| ep.send_drep(now, a, &[], s))
        .unwrap();
    f.call(B, |ep, now, s| ep.send_drep(now, b, &[], s))
        .unwrap();
    settle(&mut f);
    assert_eq!(state(&f, A, a), Some(State::Idle));
    assert_eq!(state(&f, B, b), Some(State::Idle));
    audit(&f);
}

#[test]
fn dreq_before_rtu_is_retried_until_the_active_side_is_established() {
    let mut f = fabric();
    listen(&mut f, B, SID);
    let a = connect(&mut f, A, B, SID, 0x11, 6);
    let (b, _) = next_event(&mut f, B);
    f.call(B, |ep, now, s| ep.send_rep(now, b, &sample_rep(0x22), 0, s))
        .unwrap();
    next_event(&mut f, A);
    // B's QP saw traffic first: established by notification, then it
    // disconnects while A is still in REP_RCVD.
    f.call(B, |ep, _, s| ep.notify_established(b, s)).unwrap();
    assert_eq!(f.take_events(B), vec![(b, Event::UserEstablished)]);
    assert_eq!(
        f.call(B, |ep, _, s| ep.notify_established(b, s)),
        Err(CmError::AlreadyConnected)
    );
    f.call(B, |ep, now, s| ep.send_dreq(now, b, &[], s))
        .unwrap();
    for _ in 0..3 {
        f.step();
    }
    assert_eq!(
        state(&f, A, a),
        Some(State::RepRcvd),
        "DREQ ignored in REP_RCVD"
    );
    f.call(A, |ep, _, s| ep.send_rtu(a, &[], s)).unwrap();
    assert!(matches!(next_event(&mut f, A).1, Event::DreqReceived(_)));
}

#[test]
fn timewait_answers_a_repeated_dreq_with_its_drep() {
    let mut f = fabric();
    let (a, b) = established(&mut f);
    f.call(A, |ep, now, s| ep.send_dreq(now, a, &[], s))
        .unwrap();
    next_event(&mut f, B);
    f.faults.loss = 1000;
    f.call(B, |ep, now, s| ep.send_drep(now, b, &[], s))
        .unwrap();
    f.faults.loss = 0;
    // A retries its DREQ; B, in TIMEWAIT, repeats the DREP.
    assert!(matches!(next_event(&mut f, A).1, Event::DrepReceived(_)));
    assert_eq!(f.nodes[1].duplicates, 1);
}

#[test]
fn dreq_for_a_forgotten_connection_is_answered() {
    let mut f = fabric();
    let dreq = rcm_core::wire::disconnect::Dreq {
        local_comm_id: 5,
        remote_comm_id: 77,
        remote_qpn_eecn: 1,
        private_data: [0; 220],
    };
    assert_eq!(
        deliver(&mut f, A, B, &emit(CmMessage::Dreq(dreq))),
        Handled::Answered
    );
}

#[test]
fn destroy_in_every_state_leaves_nothing_behind() {
    // For each state reachable by the passive (B) or active (A) side,
    // destroy there and check both endpoints end empty and consistent.
    for target in 0..9 {
        let mut f = fabric();
        let listener = listen(&mut f, B, SID);
        let a = connect(&mut f, A, B, SID, 0x11, 3);
        let (side, id) = match target {
            0 => (A, a), // REQ_SENT
            _ => {
                let (b, _) = next_event(&mut f, B);
                match target {
                    1 => (B, b), // REQ_RCVD
                    2 => {
                        f.call(B, |ep, _, s| ep.send_mra(b, 20, &[], s)).unwrap();
                        (B, b) // MRA_REQ_SENT
                    }
                    _ => {
                        f.call(B, |ep, now, s| ep.send_rep(now, b, &sample_rep(0x22), 0, s))
                            .unwrap();
                        if target == 3 {
                            (B, b) // REP_SENT
                        } else {
                            next_event(&mut f, A);
                            match target {
                                4 => (A, a), // REP_RCVD
                                5 => {
                                    f.call(A, |ep, _, s| ep.send_mra(a, 20, &[], s)).unwrap();
                                    (A, a) // MRA_REP_SENT
                                }
                                _ => {
                                    f.call(A, |ep, _, s| ep.send_rtu(a, &[], s)).unwrap();
                                    next_event(&mut f, B);
                                    match target {
                                        6 => (A, a), // ESTABLISHED
                                        7 => {
                                            f.call(A, |ep, now, s| ep.send_dreq(now, a, &[], s))
                                                .unwrap();
                                            (A, a) // DREQ_SENT
                                        }
                                        _ => {
                                            f.call(A, |ep, now, s| ep.send_dreq(now, a, &[], s))
                                                .unwrap();
                                            next_event(&mut f, B);
                                            (B, b) // DREQ_RCVD
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        };
        let before = state(&f, side, id);
        assert_eq!(
            f.call(side, |ep, now, s| ep.destroy(now, id, true, s)),
            Ok(true),
            "destroy in {before:?}"
        );
        audit(&f);
        // The peer answers what it must; the survivors settle.
        loop {
            let peer = 1 - side;
            let evs = f.take_events(peer);
            for (pid, ev) in evs {
                match ev {
                    Event::DreqReceived(_) => {
                        let _ = f.call(peer, |ep, now, s| ep.send_drep(now, pid, &[], s));
                    }
                    Event::RepReceived { .. } => {
                        let _ = f.call(peer, |ep, _, s| ep.send_rtu(pid, &[], s));
                    }
                    _ => {}
                }
            }
            if !f.step() {
                break;
            }
        }
        assert!(
            f.take_events(side).is_empty(),
            "event after destroy in {before:?}"
        );
        for n in [A, B] {
            for pid in f.nodes[n as usize].ep.ids().collect::<Vec<_>>() {
                if pid != listener {
                    let _ = f.call(n, |ep, now, s| ep.destroy(now, pid, true, s));
                }
            }
        }
        f.call(B, |ep, now, s| ep.destroy(now, listener, true, s))
            .unwrap();
        settle(&mut f);
        for n in [A, B] {
            let ep = &f.nodes[n as usize].ep;
            assert_eq!(ep.len(), 0, "node {n} after destroy in {before:?}");
            assert_eq!(
                ep.table_sizes(),
                [0; 5],
                "node {n} after destroy in {before:?}"
            );
        }
    }
}

#[test]
fn ids_are_not_reused_while_in_timewait() {
    let mut f = fabric();
    let (a, _) = established(&mut f);
    f.call(A, |ep, now, s| ep.send_dreq(now, a, &[], s))
        .unwrap();
    f.call(A, |ep, now, s| ep.destroy(now, a, true, s)).unwrap();
    // a destroyed id finishing the protocol keeps its number
    assert!(f.nodes[0].ep.get(a).is_some_and(|c| c.is_destroyed()));
    for _ in 0..100 {
        let id = create(&mut f, A);
        assert_ne!(id, a);
    }
}

/// Destroying an id never fails, not even when the MAD pool cannot grow
/// (`ib_destroy_cm_id` returns nothing): an idle id goes at once.
#[test]
fn destroy_succeeds_without_memory_for_the_mad_pool() {
    let mut f = fabric();
    let id = create(&mut f, A);
    inject_insert_failures(1, 7);
    let destroyed = f.call(A, |ep, now, s| ep.destroy(now, id, true, s));
    inject_insert_failures(0, 0);
    assert_eq!(destroyed, Ok(true));
    assert!(f.nodes[A as usize].ep.is_empty());
    audit(&f);
}
