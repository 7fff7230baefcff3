// SPDX-License-Identifier: GPL-2.0

//! Scripted CM exchanges between simulated endpoints: SIDR, the service id
//! resolution of UD services.

mod common;

use common::*;

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
