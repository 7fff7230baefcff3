// SPDX-License-Identifier: GPL-2.0

//! The window of requests per peer: a storm of requests waits behind it
//! instead of overflowing the peer's receive queue, parked requests go out
//! in order as answers come back or as requests time out, and one that
//! ends while parked frees its place.

mod common;

use common::*;

/// Connects `n` ids of A to B at once.
fn storm(f: &mut Fabric, n: u32) -> Vec<CommId> {
    (0..n)
        .map(|i| connect(f, A, B, SID, 0x1000 + i, 3))
        .collect()
}

/// Answers every REQ B received with a REP and every REP A received with
/// an RTU until the fabric is quiet; the connections established.
fn answer_all(f: &mut Fabric) -> usize {
    let mut established = 0;
    while f.step() || !f.nodes[0].events.is_empty() || !f.nodes[1].events.is_empty() {
        for (b, ev) in std::mem::take(&mut f.nodes[B as usize].events) {
            match ev {
                Event::ReqReceived { .. } => {
                    let rep = sample_rep(0x8000 + b.0 % 0x1000);
                    f.call(B, |ep, now, s| ep.send_rep(now, b, &rep, 0, s))
                        .expect("send_rep");
                }
                Event::RtuReceived(_) => established += 1,
                other => panic!("B: {other:?}"),
            }
        }
        for (a, ev) in std::mem::take(&mut f.nodes[A as usize].events) {
            assert!(matches!(ev, Event::RepReceived { .. }), "A: {ev:?}");
            f.call(A, |ep, _, s| ep.send_rtu(a, &[], s))
                .expect("send_rtu");
        }
        audit(f);
    }
    established
}

fn retransmissions(f: &Fabric, n: u32) -> u32 {
    let ep = &f.nodes[n as usize].ep;
    ep.ids()
        .filter_map(|id| ep.get(id))
        .map(|c| c.retransmissions())
        .sum()
}

#[test]
fn a_storm_sends_no_more_than_the_window() {
    let mut f = fabric();
    f.set_peer_window(4);
    listen(&mut f, B, SID);
    storm(&mut f, 40);
    assert_eq!(f.in_flight(), 4, "REQs on the wire");
    audit(&f);
    assert_eq!(answer_all(&mut f), 40);
    assert_eq!(retransmissions(&f, A) + retransmissions(&f, B), 0);
    // Every MAD once: 40 REQs, REPs and RTUs.
    assert_eq!(f.sent, 120);
}

/// A thousand REQs into a receive queue of 512: unpaced, the burst
/// overflows it and the lost REQs wait out their timeouts; behind a
/// window of 128 nothing is lost or sent twice.
#[test]
fn a_paced_storm_fits_the_peers_receive_queue() {
    for (window, lossless) in [(128, true), (0, false)] {
        let mut f = fabric();
        f.faults.receive_queue = 512;
        f.set_peer_window(window);
        listen(&mut f, B, SID);
        storm(&mut f, 1000);
        assert_eq!(answer_all(&mut f), 1000, "window {window}");
        let resent = retransmissions(&f, A) + retransmissions(&f, B);
        assert_eq!(
            (f.lost == 0, resent == 0),
            (lossless, lossless),
            "window {window}: {} lost, {resent} resent",
            f.lost
        );
    }
}

/// A silent peer holds the queue one timeout per window: with a window
/// of 4, ten REQs with one retry each go out 4, 4 and 2 a timeout apart,
/// and each is still sent exactly twice before its REQ_ERROR.
#[test]
fn a_silent_peer_releases_the_window_at_each_timeout() {
    let mut f = fabric();
    f.set_peer_window(4);
    f.faults.loss = 1000;
    let ids: Vec<CommId> = (0..10)
        .map(|i| connect(&mut f, A, B, SID, 0x1000 + i, 1))
        .collect();
    let timeout = f.nodes[0].ep.get(ids[0]).map(|c| c.deadline()).unwrap() - f.now;
    assert_eq!(f.sent, 4);
    let at = |f: &mut Fabric, t: u64| {
        while f.next_time().is_some_and(|next| next <= t) {
            f.step();
        }
        f.sent
    };
    // Each timeout: the window's REQs again (or a REJ when they give up)
    // and as many new ones.
    assert_eq!(at(&mut f, timeout), 12);
    assert_eq!(at(&mut f, 2 * timeout), 12 + 4 + 4 + 2);
    settle(&mut f);
    let errors = f.nodes[0]
        .events
        .iter()
        .filter(|(_, ev)| matches!(ev, Event::ReqError(Failure::Timeout)))
        .count();
    assert_eq!(errors, 10);
    // Two REQs and a REJ (timeout) per id.
    assert_eq!(f.sent, 30);
    audit(&f);
}

/// A request ended while parked (its id destroyed) leaves the queue; the
/// next one takes the place the answered one frees.
#[test]
fn a_parked_request_destroyed_leaves_the_queue() {
    let mut f = fabric();
    f.set_peer_window(1);
    listen(&mut f, B, SID);
    let ids = storm(&mut f, 3);
    assert_eq!(f.in_flight(), 1);
    f.call(A, |ep, now, s| ep.destroy(now, ids[1], true, s))
        .expect("destroy");
    // Its REQ never left, so no REJ follows it.
    assert_eq!(f.in_flight(), 1);
    audit(&f);
    assert_eq!(answer_all(&mut f), 2);
    assert_eq!(state(&f, A, ids[2]), Some(State::Established));
    assert_eq!(state(&f, A, ids[1]), None);
}

/// The window is kept per key the embedding gives (the kernel: the peer
/// node, whatever each connection's flow label): with one key for both
/// peers, their REQs share one window.
#[test]
fn the_window_key_groups_addresses() {
    for (shared, sent) in [(false, 4), (true, 2)] {
        let mut f = Fabric::new(3, 7, Faults::default());
        f.set_peer_window(2);
        if shared {
            for node in &mut f.nodes {
                node.ep.set_window_key(|_| 0);
            }
        }
        listen(&mut f, 1, SID);
        listen(&mut f, 2, SID);
        for i in 0..3 {
            connect(&mut f, A, 1, SID, 0x100 + i, 3);
            connect(&mut f, A, 2, SID, 0x200 + i, 3);
        }
        assert_eq!(f.in_flight(), sent, "one key for both: {shared}");
        audit(&f);
    }
}
