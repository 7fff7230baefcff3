// SPDX-License-Identifier: GPL-2.0

//! rdma_cm ids before any message flows: options, bind and listen, with
//! 6.12's transitions and errnos.

use rcm_core::cm::store::btree::Std;
use rcm_core::cm::DeviceId;
use rcm_core::rdma_cm::{
    AddrResolution, AddrWork, BindContext, EventKind, EventStatus, IdState, PortSpace, RdmaCm,
    RdmaCmError, RdmaId, RdmaQpType, SockAddr,
};
use rcm_core::sim::rdma::{NodeHost, RdmaFabric};
use rcm_core::sim::Faults;

const NET: u64 = 1;

/// The one event queued since the last look, if any.
fn last_event(h: &mut NodeHost<'_>) -> Option<(RdmaId, EventKind, EventStatus)> {
    let evs = h.take_events();
    assert!(evs.len() <= 1, "{evs:?}");
    evs.first().map(|(id, e)| (*id, e.kind, e.status))
}

fn cx() -> BindContext {
    BindContext {
        device: Ok(DeviceId(3)),
        local_ports: (32768, 60999),
        random: 7,
        privileged: false,
        bindv6only: false,
    }
}

fn v4(last: u8, port: u16) -> SockAddr {
    SockAddr::V4 {
        addr: if last == 0 { [0; 4] } else { [10, 0, 0, last] },
        port,
    }
}

fn v6_any(port: u16) -> SockAddr {
    SockAddr::V6 {
        addr: [0; 16],
        port,
        flowinfo: 0,
        scope_id: 0,
    }
}

fn state(cm: &RdmaCm<Std, u32>, id: RdmaId) -> IdState {
    cm.get(id).unwrap().state()
}

#[test]
fn bind_takes_the_address_its_device_and_a_port() {
    let mut f = RdmaFabric::new(1, 0, Faults::default());
    let (cm, mut h) = f.split(0);
    let _ = &mut h;
    let a = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    assert_eq!(state(cm, a), IdState::Idle);
    assert_eq!(cm.bind_addr(a, v4(1, 7174), &cx()), Ok(7174));
    assert_eq!(state(cm, a), IdState::AddrBound);
    assert_eq!(cm.get(a).unwrap().device(), Some(DeviceId(3)));
    assert_eq!(cm.get(a).unwrap().src(), Some(v4(1, 7174)));
    // once only
    assert_eq!(
        cm.bind_addr(a, v4(1, 7175), &cx()),
        Err(RdmaCmError::Invalid)
    );
    // the same address and port again
    let b = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    assert_eq!(
        cm.bind_addr(b, v4(1, 7174), &cx()),
        Err(RdmaCmError::AddrInUse)
    );
    assert_eq!(state(cm, b), IdState::Idle, "nothing changed");
    // the same port in the UDP space, or in another namespace
    let u = cm
        .create_id(NET, PortSpace::Udp, RdmaQpType::Rc, 0)
        .unwrap();
    assert_eq!(cm.bind_addr(u, v4(1, 7174), &cx()), Ok(7174));
    let n = cm
        .create_id(NET + 1, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    assert_eq!(cm.bind_addr(n, v4(1, 7174), &cx()), Ok(7174));
    // a wildcard needs no device, an address one
    let w = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    let no_dev = BindContext {
        device: Err(RdmaCmError::NoDevice),
        ..cx()
    };
    assert_eq!(
        cm.bind_addr(w, v4(2, 0), &no_dev),
        Err(RdmaCmError::NoDevice)
    );
    assert_eq!(state(cm, w), IdState::Idle);
    let port = cm.bind_addr(w, v4(0, 0), &no_dev).unwrap();
    assert!((32768..=60999).contains(&port));
    assert_eq!(cm.get(w).unwrap().device(), None);
    // privileged ports
    let p = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    assert_eq!(
        cm.bind_addr(p, v4(1, 80), &cx()),
        Err(RdmaCmError::NoPermission)
    );
    let root = BindContext {
        privileged: true,
        ..cx()
    };
    assert_eq!(cm.bind_addr(p, v4(1, 80), &root), Ok(80));
    // destroy gives the ports back
    for id in [a, b, u, n, w, p] {
        cm.destroy(&mut h, id).unwrap();
    }
    assert_eq!(cm.destroy(&mut h, a), Err(RdmaCmError::NoSuchId));
    assert_eq!((cm.len(), cm.ports_held()), (0, 0));
}

#[test]
fn link_local_addresses_need_a_scope() {
    let mut f = RdmaFabric::new(1, 0, Faults::default());
    let (cm, mut h) = f.split(0);
    let _ = &mut h;
    let a = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    let mut ll = [0u8; 16];
    ll[0] = 0xfe;
    ll[1] = 0x80;
    ll[15] = 1;
    let addr = |scope_id| SockAddr::V6 {
        addr: ll,
        port: 7174,
        flowinfo: 0,
        scope_id,
    };
    assert_eq!(cm.bind_addr(a, addr(0), &cx()), Err(RdmaCmError::Invalid));
    assert_eq!(cm.bind_addr(a, addr(2), &cx()), Ok(7174));
}

#[test]
fn options_follow_the_state() {
    let mut f = RdmaFabric::new(1, 0, Faults::default());
    let (cm, mut h) = f.split(0);
    let _ = &mut h;
    let a = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    assert_eq!(cm.set_reuseaddr(a, true), Ok(()));
    assert_eq!(cm.set_reuseaddr(a, false), Ok(()), "IDLE: either way");
    assert_eq!(cm.set_afonly(a, true), Ok(()));
    cm.bind_addr(a, v4(1, 7174), &cx()).unwrap();
    assert_eq!(cm.set_reuseaddr(a, true), Ok(()));
    assert_eq!(cm.set_reuseaddr(a, false), Err(RdmaCmError::Invalid));
    assert_eq!(cm.set_afonly(a, false), Ok(()), "ADDR_BOUND");
    cm.listen(&mut h, a, 8, &cx()).unwrap();
    assert_eq!(cm.set_reuseaddr(a, true), Err(RdmaCmError::Invalid));
    assert_eq!(cm.set_afonly(a, true), Err(RdmaCmError::Invalid));
}

#[test]
fn ipv4_binds_are_af_only_ipv6_ones_per_bindv6only() {
    let mut f = RdmaFabric::new(1, 0, Faults::default());
    let (cm, mut h) = f.split(0);
    let _ = &mut h;
    // an IPv6 wildcard without AFONLY holds the IPv4 side too
    let six = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    cm.bind_addr(six, v6_any(7174), &cx()).unwrap();
    let four = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    assert_eq!(
        cm.bind_addr(four, v4(0, 7174), &cx()),
        Err(RdmaCmError::AddrNotAvailable)
    );
    // with bindv6only, both wildcards coexist
    let mut f = RdmaFabric::new(1, 0, Faults::default());
    let (cm, mut h) = f.split(0);
    let _ = &mut h;
    let only = BindContext {
        bindv6only: true,
        ..cx()
    };
    let six = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    cm.bind_addr(six, v6_any(7174), &only).unwrap();
    let four = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    assert_eq!(cm.bind_addr(four, v4(0, 7174), &only), Ok(7174));
}

#[test]
fn listen_binds_if_needed_and_holds_its_port_alone() {
    let mut f = RdmaFabric::new(1, 0, Faults::default());
    let (cm, mut h) = f.split(0);
    let _ = &mut h;
    // IDLE: the IPv4 wildcard, an ephemeral port
    let l = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    cm.listen(&mut h, l, 16, &cx()).unwrap();
    let id = cm.get(l).unwrap();
    assert_eq!((id.state(), id.backlog()), (IdState::Listen, 16));
    assert!(matches!(id.src(), Some(SockAddr::V4 { addr: [0, 0, 0, 0], port }) if port >= 32768));
    assert_eq!(
        cm.listen(&mut h, l, 16, &cx()),
        Err(RdmaCmError::Invalid),
        "twice"
    );
    // two REUSEADDR ids on one address: the first may not listen
    let (a, b) = (
        cm.create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
            .unwrap(),
        cm.create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
            .unwrap(),
    );
    for id in [a, b] {
        cm.set_reuseaddr(id, true).unwrap();
        cm.bind_addr(id, v4(1, 9000), &cx()).unwrap();
    }
    assert_eq!(cm.listen(&mut h, a, 1, &cx()), Err(RdmaCmError::AddrInUse));
    assert_eq!(state(cm, a), IdState::AddrBound, "still bound");
    cm.destroy(&mut h, b).unwrap();
    assert_eq!(cm.listen(&mut h, a, 1, &cx()), Ok(()));
}

#[test]
fn af_ib_binds_in_the_space_its_service_id_names() {
    let mut f = RdmaFabric::new(1, 0, Faults::default());
    let (cm, mut h) = f.split(0);
    let _ = &mut h;
    let tcp = PortSpace::Tcp.service_id(0);
    let ib = |sid, sid_mask| SockAddr::Ib {
        gid: [0; 16],
        sid,
        sid_mask,
        pkey: 0xffff,
        flowinfo: 0,
        scope_id: 0,
    };
    let a = cm.create_id(NET, PortSpace::Ib, RdmaQpType::Rc, 0).unwrap();
    assert_eq!(cm.bind_addr(a, ib(tcp | 7174, u64::MAX), &cx()), Ok(7174));
    // it holds TCP port 7174: an IP id in the TCP space conflicts
    let b = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    assert_eq!(
        cm.bind_addr(b, v4(0, 7174), &cx()),
        Err(RdmaCmError::AddrNotAvailable)
    );
    assert_eq!(cm.bind_addr(b, v4(0, 7175), &cx()), Ok(7175));
    let u = cm
        .create_id(NET, PortSpace::Udp, RdmaQpType::Rc, 0)
        .unwrap();
    assert_eq!(
        cm.bind_addr(u, ib(tcp, 0xFFFF_FFFF_FFFF_0000), &cx()),
        Err(RdmaCmError::PortSpaceNotSupported)
    );
}

/// rdma_resolve_addr and its outcome, as 6.12's addr_handler: an IDLE id
/// binds the wildcard of the destination's family on an ephemeral port
/// first; a second call while pending is refused; an error goes back to
/// ADDR_BOUND, from where it may try again.
#[test]
fn address_resolution_is_work_out_and_a_result_in() {
    let mut f = RdmaFabric::new(1, 0, Faults::default());
    let (cm, mut h) = f.split(0);
    let _ = &mut h;
    let a = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    let dst = v4(2, 7174);
    let work = cm.resolve_addr(a, None, dst, 2000, &cx()).unwrap();
    let bound = cm.get(a).unwrap().src().unwrap();
    assert!(matches!(bound, SockAddr::V4 { addr: [0, 0, 0, 0], port } if port >= 32768));
    assert_eq!(
        work,
        AddrWork::ResolveIp {
            src: bound,
            dst,
            timeout_ms: 2000
        }
    );
    assert_eq!(state(cm, a), IdState::AddrQuery);
    assert_eq!(cm.get(a).unwrap().dst(), Some(dst));
    assert_eq!(
        cm.resolve_addr(a, None, dst, 2000, &cx()),
        Err(RdmaCmError::Invalid),
        "already resolving"
    );
    // the route fails: back to ADDR_BOUND, port kept
    assert!(cm.addr_resolved(&mut h, a, Err(-110)));
    assert_eq!(
        last_event(&mut h),
        Some((a, EventKind::AddrError, EventStatus::Errno(-110)))
    );
    assert_eq!(state(cm, a), IdState::AddrBound);
    assert!(!cm.addr_resolved(&mut h, a, Err(-110)), "nothing pending");
    assert_eq!(last_event(&mut h), None);
    // a result that names no device for an id on none: ADDR_ERROR
    cm.resolve_addr(a, None, dst, 2000, &cx()).unwrap();
    let nowhere = AddrResolution {
        src: v4(1, 0),
        device: None,
    };
    assert!(cm.addr_resolved(&mut h, a, Ok(nowhere)));
    assert_eq!(
        last_event(&mut h),
        Some((a, EventKind::AddrError, EventStatus::Errno(-19)))
    );
    assert_eq!(state(cm, a), IdState::AddrBound);
    // again, from ADDR_BOUND: the route picks 10.0.0.1 on device 3
    cm.resolve_addr(a, None, dst, 2000, &cx()).unwrap();
    let found = AddrResolution {
        src: v4(1, 0),
        device: Some(DeviceId(3)),
    };
    assert!(cm.addr_resolved(&mut h, a, Ok(found)));
    assert_eq!(
        last_event(&mut h),
        Some((a, EventKind::AddrResolved, EventStatus::Ok))
    );
    let id = cm.get(a).unwrap();
    assert_eq!(id.state(), IdState::AddrResolved);
    assert_eq!(id.src(), Some(v4(1, bound.port())));
    assert_eq!(id.device(), Some(DeviceId(3)));
    // an id bound to a device's address keeps that device when the
    // result names none (the embedding saw it bound)
    let c = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    cm.resolve_addr(c, Some(v4(1, 0)), dst, 2000, &cx())
        .unwrap();
    assert_eq!(cm.get(c).unwrap().device(), Some(DeviceId(3)));
    assert!(cm.addr_resolved(&mut h, c, Ok(nowhere)));
    assert_eq!(
        last_event(&mut h),
        Some((c, EventKind::AddrResolved, EventStatus::Ok))
    );
    assert_eq!(cm.get(c).unwrap().device(), Some(DeviceId(3)));
    // a destroyed id's late result is dropped
    let b = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    cm.resolve_addr(b, None, dst, 2000, &cx()).unwrap();
    cm.destroy(&mut h, b).unwrap();
    assert!(!cm.addr_resolved(&mut h, b, Ok(found)));
    assert_eq!(last_event(&mut h), None);
}

#[test]
fn resolution_kinds_and_family_checks() {
    let mut f = RdmaFabric::new(1, 0, Faults::default());
    let (cm, mut h) = f.split(0);
    let _ = &mut h;
    // a wildcard destination resolves to a local device
    let l = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    assert_eq!(
        cm.resolve_addr(l, None, v4(0, 7174), 100, &cx()),
        Ok(AddrWork::Loopback)
    );
    // bound to IPv4, resolving IPv6: refused, still bound
    let m = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    cm.bind_addr(m, v4(1, 0), &cx()).unwrap();
    let mut six = [0u8; 16];
    six[0] = 0x20;
    let dst6 = SockAddr::V6 {
        addr: six,
        port: 7174,
        flowinfo: 0,
        scope_id: 0,
    };
    assert_eq!(
        cm.resolve_addr(m, None, dst6, 100, &cx()),
        Err(RdmaCmError::Invalid)
    );
    assert_eq!(state(cm, m), IdState::AddrBound);
    // an explicit source is bound as given
    let n = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    let work = cm
        .resolve_addr(n, Some(v4(1, 9000)), v4(2, 7174), 100, &cx())
        .unwrap();
    assert!(matches!(work, AddrWork::ResolveIp { src, .. } if src == v4(1, 9000)));
    // a listener cannot resolve
    let o = cm
        .create_id(NET, PortSpace::Tcp, RdmaQpType::Rc, 0)
        .unwrap();
    cm.listen(&mut h, o, 1, &cx()).unwrap();
    assert_eq!(
        cm.resolve_addr(o, None, v4(2, 7174), 100, &cx()),
        Err(RdmaCmError::Invalid)
    );
}
