// SPDX-License-Identifier: GPL-2.0

//! Scripted CM exchanges between simulated endpoints: every message both
//! ways, the duplicate/stale/timeout paths, destroy in every state, and
//! the API's errors.

use rcm_core::cm::store::btree::inject_insert_failures;
use rcm_core::cm::store::btree::Std;
use rcm_core::cm::{
    keeps_sender, AltPath, CmError, CommId, Config, Destination, DeviceId, Dropped, Endpoint,
    Event, Failure, Handled, LapState, ListenSpec, QpAttrs, QpTarget, QpType, Received, Sink,
    State, Transmit, Transport, ASSIGN_SERVICE_ID, MRA_FLAG_DELAY,
};
use rcm_core::reason::{AprStatus, RejectReason, SidrStatus};
use rcm_core::sim::{sample_lap, sample_rep, sample_req, Fabric, Faults};
use rcm_core::timer::{self, IbaTime};
use rcm_core::wire::field::{Mad, MAD_SIZE};
use rcm_core::wire::mad::attr;
use rcm_core::wire::sidr::{SidrRep, SidrReq};
use rcm_core::wire::{CmMad, CmMessage};

const A: u32 = 0;
const B: u32 = 1;
const SID: u64 = 0x0106_0000_0000_4E20;

fn fabric() -> Fabric {
    let mut f = Fabric::new(
        2,
        7,
        Faults {
            delay_ms: 1,
            ..Faults::default()
        },
    );
    f.trace_limit = 200;
    f
}

fn create(f: &mut Fabric, n: u32) -> CommId {
    let guid = f.nodes[n as usize].guid;
    f.call(n, |ep, _, _| ep.create_id(DeviceId(0), guid))
        .expect("create_id")
}

fn listen(f: &mut Fabric, n: u32, sid: u64) -> CommId {
    let id = create(f, n);
    f.call(n, |ep, _, _| ep.listen(id, ListenSpec::exact(sid)))
        .expect("listen")
}

fn connect(f: &mut Fabric, from: u32, to: u32, sid: u64, qpn: u32, retries: u8) -> CommId {
    let id = create(f, from);
    let req = sample_req(sid, qpn, retries);
    f.call(from, |ep, now, s| {
        ep.send_req(now, id, &req, 0, to, IbaTime::new(10), s)
    })
    .expect("send_req");
    id
}

fn state(f: &Fabric, n: u32, id: CommId) -> Option<State> {
    f.nodes[n as usize].ep.get(id).map(|c| c.state())
}

/// Runs until node `n` has an event and returns the first.
fn next_event(f: &mut Fabric, n: u32) -> (CommId, Event) {
    for _ in 0..10_000 {
        if !f.nodes[n as usize].events.is_empty() {
            return f.nodes[n as usize].events.remove(0);
        }
        if !f.step() {
            break;
        }
    }
    panic!("node {n}: no event; trace:\n{}", f.trace.join("\n"));
}

fn settle(f: &mut Fabric) {
    assert!(f.run_until_quiet(100_000), "fabric never went quiet");
}

fn audit(f: &Fabric) {
    for (i, n) in f.nodes.iter().enumerate() {
        if let Err(e) = n.ep.audit() {
            panic!("node {i}: {e:?}\n{}", f.trace.join("\n"));
        }
    }
}

/// A and B connected: (A's id, B's id).
fn established(f: &mut Fabric) -> (CommId, CommId) {
    let listener = listen(f, B, SID);
    let a = connect(f, A, B, SID, 0x11, 5);
    let (b, ev) = next_event(f, B);
    assert!(matches!(ev, Event::ReqReceived { listener: l, .. } if l == listener));
    f.call(B, |ep, now, s| ep.send_rep(now, b, &sample_rep(0x22), 0, s))
        .unwrap();
    let (id, ev) = next_event(f, A);
    assert_eq!(id, a);
    assert!(matches!(ev, Event::RepReceived { .. }));
    f.call(A, |ep, _, s| ep.send_rtu(a, b"hello", s)).unwrap();
    let (id, ev) = next_event(f, B);
    assert_eq!(id, b);
    match ev {
        Event::RtuReceived(rtu) => assert_eq!(&rtu.private_data[..5], b"hello"),
        other => panic!("{other:?}"),
    }
    (a, b)
}

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

#[test]
fn delayed_mra_goes_out_only_when_the_req_is_repeated() {
    let mut f = fabric();
    listen(&mut f, B, SID);
    let a = connect(&mut f, A, B, SID, 0x11, 5);
    let (b, _) = next_event(&mut f, B);
    f.call(B, |ep, _, s| ep.send_mra(b, 24 | MRA_FLAG_DELAY, &[], s))
        .unwrap();
    // Nothing sent yet; A retransmits its REQ and gets the MRA in answer.
    let (_, ev) = next_event(&mut f, A);
    assert!(matches!(ev, Event::MraReceived(m) if m.service_timeout == IbaTime::new(24)));
    assert_eq!(f.nodes[0].ep.get(a).unwrap().retransmissions(), 1);
    assert_eq!(f.nodes[1].duplicates, 1);
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

fn emit(message: CmMessage) -> Mad {
    let mut mad = [0u8; MAD_SIZE];
    CmMad::send(0x1234, 0, message).emit(&mut mad);
    mad
}

fn deliver(f: &mut Fabric, from: u32, to: u32, mad: &Mad) -> Handled {
    f.deliver(rcm_core::sim::Packet {
        from,
        to,
        mad: Box::new(*mad),
    })
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
fn sidr_resolves_a_ud_service() {
    let mut f = fabric();
    listen(&mut f, B, SID);
    let a = create(&mut f, A);
    let req = SidrReq {
        request_id: 0,
        partition_key: 0xFFFF,
        service_id: SID,
        private_data: [7; 216],
    };
    f.call(A, |ep, now, s| ep.send_sidr_req(now, a, &req, B, 100, 3, s))
        .unwrap();
    let (b, ev) = next_event(&mut f, B);
    assert!(matches!(ev, Event::SidrReqReceived { req, .. } if req.private_data[0] == 7));
    let rep = SidrRep {
        qpn: 0x4242,
        qkey: 0x1111_2222,
        ..SidrRep::zeroed()
    };
    f.call(B, |ep, _, s| ep.send_sidr_rep(b, &rep, s)).unwrap();
    match next_event(&mut f, A).1 {
        Event::SidrRepReceived(rep) => {
            assert_eq!(rep.status, SidrStatus::Success);
            assert_eq!(
                (rep.qpn, rep.qkey, rep.service_id),
                (0x4242, 0x1111_2222, SID)
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(state(&f, A, a), Some(State::Idle));
    audit(&f);
}

#[test]
fn sidr_without_listener_and_timeout() {
    let mut f = fabric();
    let a = create(&mut f, A);
    let req = SidrReq {
        request_id: 0,
        partition_key: 0xFFFF,
        service_id: SID,
        private_data: [0; 216],
    };
    f.call(A, |ep, now, s| ep.send_sidr_req(now, a, &req, B, 100, 3, s))
        .unwrap();
    assert!(matches!(
        next_event(&mut f, A).1,
        Event::SidrRepReceived(r) if r.status == SidrStatus::Unsupported
    ));
    f.faults.loss = 1000;
    f.call(A, |ep, now, s| ep.send_sidr_req(now, a, &req, B, 100, 2, s))
        .unwrap();
    assert_eq!(
        next_event(&mut f, A).1,
        Event::SidrReqError(Failure::Timeout)
    );
}

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

fn qp_attrs(f: &Fabric, n: u32, id: CommId, target: QpTarget, lid: bool) -> QpAttrs<u32> {
    f.nodes[n as usize]
        .ep
        .get(id)
        .unwrap()
        .qp_attrs(target, |_| lid)
        .unwrap()
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
    f.call(B, |ep, _, _| ep.listen(l1, spec(SID, None)))
        .unwrap();
    assert_eq!(
        f.call(B, |ep, _, _| ep.listen(l2, spec(SID, None))),
        Err(CmError::Busy)
    );
    assert_eq!(
        f.call(B, |ep, _, _| ep.listen(l1, spec(SID + 1, None))),
        Err(CmError::InvalidState)
    );
    // shared listeners: same tag, same id back
    let s1 = create(&mut f, B);
    let s2 = create(&mut f, B);
    let got1 = f
        .call(B, |ep, _, _| ep.listen(s1, spec(7, Some(9))))
        .unwrap();
    let got2 = f
        .call(B, |ep, _, _| ep.listen(s2, spec(7, Some(9))))
        .unwrap();
    assert_eq!((got1, got2), (s1, s1));
    assert_eq!(
        f.call(B, |ep, _, _| ep.listen(l2, spec(7, Some(8)))),
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
    f.call(B, |ep, _, _| ep.listen(own, exclusive)).unwrap();
    assert_eq!(
        f.call(B, |ep, _, _| ep.listen(other, exclusive)),
        Err(CmError::Busy)
    );
    assert_eq!(
        f.call(B, |ep, _, _| ep.listen(joiner, spec(11, Some(9)))),
        Ok(own)
    );
    // assigned ids, and the reserved range
    let got = f
        .call(B, |ep, _, _| ep.listen(l2, spec(ASSIGN_SERVICE_ID, None)))
        .unwrap();
    assert_eq!(
        f.nodes[1].ep.get(got).unwrap().service_id(),
        ASSIGN_SERVICE_ID
    );
    let l3 = create(&mut f, B);
    assert_eq!(
        f.call(B, |ep, _, _| ep
            .listen(l3, spec(ASSIGN_SERVICE_ID + 5, None))),
        Err(CmError::InvalidArgument)
    );
    // a masked listener catches a whole port space; exact ones win
    let wide = create(&mut f, B);
    f.call(B, |ep, _, _| {
        ep.listen(
            wide,
            ListenSpec {
                device: Some(DeviceId(0)),
                service_id: 0x0106_0000_0000_0000,
                service_mask: 0xFFFF_FFFF_FFFF_0000,
                share_tag: None,
                join: false,
            },
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
    f.call(B, |ep, _, _| {
        ep.listen(
            exact,
            ListenSpec {
                device: Some(DeviceId(0)),
                service_id: SID,
                service_mask: 0,
                share_tag: None,
                join: false,
            },
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

/// Hundreds of connections at once: the remote id and QPN indexes double
/// their buckets several times and still find every connection, for a
/// repeated REQ (reused comm id from another QP: REJ 30) and a stale QP
/// (REJ 10 and the old connection ended), and empty out at the end.
#[test]
fn remote_indexes_find_each_of_many_connections() {
    const N: u32 = 300;
    let mut f = fabric();
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

/// Captures what one endpoint call sends.
#[derive(Default)]
struct Capture {
    sent: Vec<(Mad, bool)>,
    /// Each send's address; `None` for the sender of the MAD handled.
    to: Vec<Option<u32>>,
    events: Vec<(CommId, Event)>,
}

impl Sink<u32> for Capture {
    fn transmit(&mut self, tx: Transmit<'_, u32>) {
        self.sent.push((*tx.mad, tx.retry));
        self.to.push(match tx.to {
            Destination::Peer(to) => Some(*to),
            Destination::Sender => None,
        });
    }
    fn event(&mut self, id: CommId, event: Event) {
        self.events.push((id, event));
    }
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
    });
    let listener = ep.create_id(DeviceId(0), 0xB).expect("create_id");
    assert_eq!(listener, CommId(u32::MAX));
    ep.listen(listener, ListenSpec::exact(SID)).expect("listen");
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
    });
    let listener = ep.create_id(DeviceId(0), 0xB).expect("create_id");
    ep.listen(listener, ListenSpec::exact(SID)).expect("listen");
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
