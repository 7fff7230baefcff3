// SPDX-License-Identifier: GPL-2.0

//! A device going under rdma_cm's ids, as 6.12 handles it: every id on it
//! hears DEVICE_REMOVAL once, no new id takes it, and a resolution it
//! interrupted is still named for the embedding to cancel.

mod rdma_common;

use rcm_core::rdma_cm::{
    EventKind, EventStatus, IdState, PortSpace, RdmaCmError, RdmaId, RdmaQpType,
};
use rcm_core::sim::rdma::{node_addr, RdmaFabric, SIM_DEVICE, SIM_NET};
use rcm_core::sim::Faults;
use rdma_common::*;

#[test]
fn device_removal_reaches_every_id_on_the_device_once() {
    let mut f = RdmaFabric::new(2, 9, Faults::default());
    let (l, c) = resolved_pair(&mut f, node_addr(SERVER, PORT));
    f.call(CLIENT, |cm, h| cm.connect(h, c, &params(b"")).unwrap());
    f.run_for(50);
    let s = f.take_events(SERVER)[0].0;
    f.call_settled(SERVER, |cm, h| cm.accept(h, s, Some(&params(b""))))
        .unwrap();
    f.run_for(50);
    f.take_events(CLIENT);
    f.take_events(SERVER);
    // The server's device goes: its listener (bound to its address) and
    // the connection both hear of it, once.
    let on: Vec<RdmaId> = f.nodes[SERVER as usize].rdma.ids_on(SIM_DEVICE).collect();
    assert_eq!(on, vec![l, s]);
    for id in on.iter().copied() {
        let was = f.call(SERVER, |cm, h| cm.device_removal(h, id));
        assert!(was.is_some());
        assert_eq!(
            f.call(SERVER, |cm, h| cm.device_removal(h, id)),
            None,
            "told once"
        );
    }
    assert_eq!(
        kinds(&mut f, SERVER),
        vec![(l, EventKind::DeviceRemoval), (s, EventKind::DeviceRemoval)]
    );
    // The CM's news about the connection is no longer reported.
    f.call(CLIENT, |cm, h| cm.disconnect(h, c).unwrap());
    f.run_for(50);
    assert!(f.take_events(SERVER).is_empty());
    // The consumer destroys its ids; nothing is left on the device.
    for id in on {
        f.call(SERVER, |cm, h| cm.destroy(h, id).unwrap());
    }
    assert_eq!(f.nodes[SERVER as usize].rdma.ids_on(SIM_DEVICE).count(), 0);
    assert!(f.nodes[SERVER as usize].rdma.audit().is_ok());
}

#[test]
fn a_going_device_takes_no_new_id() {
    let mut f = RdmaFabric::new(2, 9, Faults::default());
    let (l, c) = resolved_pair(&mut f, any(PORT));
    // A client id whose resolution is under way when the device goes.
    let dst = node_addr(SERVER, PORT);
    let late = resolving_client(&mut f, dst, 7);
    // And one whose result comes only after the removal is over.
    let later = resolving_client(&mut f, dst, 10);
    // The client's device goes: the resolved id hears it; the one still
    // resolving has no device yet.
    assert_eq!(f.call(CLIENT, |cm, h| cm.device_going(h, SIM_DEVICE)), 1);
    assert_eq!(kinds(&mut f, CLIENT), vec![(c, EventKind::DeviceRemoval)]);
    assert_eq!(
        f.call(CLIENT, |cm, h| cm.device_going(h, SIM_DEVICE)),
        0,
        "told once"
    );
    // Its resolution finding the device now fails, and attaches nothing.
    let src = node_addr(CLIENT, 0);
    let took = f.call(CLIENT, |cm, h| {
        cm.addr_resolved(
            h,
            late,
            Ok(rcm_core::rdma_cm::AddrResolution {
                src,
                device: Some(SIM_DEVICE),
            }),
        )
    });
    assert!(took);
    let evs = f.take_events(CLIENT);
    assert_eq!(evs.len(), 1);
    assert_eq!(evs[0].1.kind, EventKind::AddrError);
    assert_eq!(evs[0].1.status, EventStatus::Errno(-19));
    // A bind to an address of the device fails as if nobody had it.
    let bound = f.call(CLIENT, |cm, _| {
        let id = cm
            .create_id(SIM_NET, PortSpace::Tcp, RdmaQpType::Rc, 8)
            .unwrap();
        cm.bind_addr(id, node_addr(CLIENT, 7000), &cx())
    });
    assert_eq!(bound, Err(RdmaCmError::NoDevice));
    // Only the resolved id is on the device; once it is destroyed the
    // removal has nothing left to wait for.
    assert!(f.nodes[CLIENT as usize].rdma.has_ids_on(SIM_DEVICE));
    f.call(CLIENT, |cm, h| cm.destroy(h, c).unwrap());
    assert!(!f.nodes[CLIENT as usize].rdma.has_ids_on(SIM_DEVICE));
    f.call(CLIENT, |cm, _| cm.device_removed(SIM_DEVICE));
    assert!(f.nodes[CLIENT as usize].rdma.audit().is_ok());
    // A resolution that found the device before its removal began and
    // reports after it ended attaches to nothing: the gone device is
    // still known as gone (its entry would otherwise be made anew).
    f.call(CLIENT, |cm, h| {
        cm.addr_resolved(
            h,
            later,
            Ok(rcm_core::rdma_cm::AddrResolution {
                src,
                device: Some(SIM_DEVICE),
            }),
        )
    });
    let evs = f.take_events(CLIENT);
    assert_eq!(evs.len(), 1);
    assert_eq!(evs[0].1.kind, EventKind::AddrError);
    assert!(!f.nodes[CLIENT as usize].rdma.has_ids_on(SIM_DEVICE));
    f.call(CLIENT, |cm, h| cm.destroy(h, later).unwrap());
    assert!(f.nodes[CLIENT as usize].rdma.audit().is_ok());
    // On the server, a wildcard listener is on no device; a request that
    // arrives on a going device makes no id.
    f.call(SERVER, |cm, h| cm.device_going(h, SIM_DEVICE));
    let c2 = f.call(CLIENT, |cm, _| {
        cm.device_added(SIM_DEVICE).unwrap();
        let id = cm
            .create_id(SIM_NET, PortSpace::Tcp, RdmaQpType::Rc, 9)
            .unwrap();
        cm.resolve_addr(id, None, dst, 2000, &cx()).unwrap();
        id
    });
    resolve(&mut f, c2, dst);
    f.call(CLIENT, |cm, h| cm.connect(h, c2, &params(b"")).unwrap());
    f.run_for(50);
    assert!(
        f.take_events(SERVER)
            .iter()
            .all(|(_, e)| e.kind != EventKind::ConnectRequest),
        "no request on a going device"
    );
    assert!(!f.nodes[SERVER as usize].rdma.has_ids_on(SIM_DEVICE));
    assert_eq!(
        f.nodes[SERVER as usize].rdma.get(l).map(|r| r.state()),
        Some(IdState::Listen)
    );
    assert!(f.nodes[SERVER as usize].rdma.audit().is_ok());
}

#[test]
fn a_resolution_a_removal_interrupted_is_still_cancelled() {
    // An id on the device resolves when the device goes: it hears
    // DEVICE_REMOVAL, and its destroy still names the resolution for the
    // embedding to cancel (ib_core's request points into the id).
    let mut f = RdmaFabric::new(2, 9, Faults::default());
    let dst = node_addr(SERVER, PORT);
    let id = f.call(CLIENT, |cm, _| {
        let id = cm
            .create_id(SIM_NET, PortSpace::Tcp, RdmaQpType::Rc, 3)
            .unwrap();
        cm.bind_addr(id, node_addr(CLIENT, 0), &cx()).unwrap();
        cm.resolve_addr(id, None, dst, 2000, &cx()).unwrap();
        id
    });
    assert_eq!(f.call(CLIENT, |cm, h| cm.device_going(h, SIM_DEVICE)), 1);
    assert_eq!(kinds(&mut f, CLIENT), vec![(id, EventKind::DeviceRemoval)]);
    assert_eq!(
        f.call(CLIENT, |cm, h| cm.destroy(h, id)),
        Ok(IdState::AddrQuery)
    );
}
