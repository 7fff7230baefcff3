// SPDX-License-Identifier: GPL-2.0

//! Multicast groups of UD ids, as 6.12 joins them on RoCE: the rules for
//! who may join, the IP group joined (unless send-only) and left, the
//! MULTICAST_JOIN event, and memberships ended with their id.

use rcm_core::rdma_cm::multicast::{RoceGroup, MULTICAST_QPN};
use rcm_core::rdma_cm::sidr::UDP_QKEY;
use rcm_core::rdma_cm::{
    BindContext, EventKind, PortSpace, RdmaCmError, RdmaId, RdmaQpType, SockAddr,
};
use rcm_core::sim::rdma::{node_addr, RdmaFabric, SIM_DEVICE, SIM_NET};
use rcm_core::sim::Faults;

const N: u32 = 0;

fn cx() -> BindContext {
    BindContext {
        device: Ok(SIM_DEVICE),
        local_ports: (40000, 40100),
        random: 0,
        privileged: false,
        bindv6only: false,
    }
}

fn group(last: u8) -> SockAddr {
    SockAddr::V4 {
        addr: [239, 1, 2, last],
        port: 0,
    }
}

/// A UD id of port space UDP bound to the node's address.
fn bound_ud(f: &mut RdmaFabric) -> RdmaId {
    f.call(N, |cm, _| {
        let id = cm
            .create_id(SIM_NET, PortSpace::Udp, RdmaQpType::Ud, 1)
            .unwrap();
        cm.bind_addr(id, node_addr(N, 0), &cx()).unwrap();
        id
    })
}

fn igmp(f: &RdmaFabric, g: &SockAddr) -> u32 {
    f.nodes[N as usize].side.igmp.get(g).copied().unwrap_or(0)
}

#[test]
fn a_join_is_reported_with_the_group_and_the_ids_qkey() {
    let mut f = RdmaFabric::new(1, 1, Faults::default());
    let id = bound_ud(&mut f);
    let g = f
        .call(N, |cm, h| cm.join_multicast(h, id, group(1), false, 77))
        .unwrap();
    assert_eq!(igmp(&f, &group(1)), 1);
    let evs = f.take_events(N);
    assert_eq!(evs.len(), 1);
    let (eid, e) = evs[0];
    assert_eq!(
        (eid, e.kind, e.group),
        (id, EventKind::MulticastJoin, Some(g))
    );
    assert_eq!((e.conn.qp_num, e.conn.qkey), (MULTICAST_QPN, UDP_QKEY));
    let m = *f.nodes[N as usize].rdma.group(g).unwrap();
    assert_eq!((m.id, m.addr, m.context), (id, group(1), 77));
    f.call(N, |cm, h| cm.leave_multicast(h, id, &group(1)));
    assert_eq!(igmp(&f, &group(1)), 0);
    assert!(f.nodes[N as usize].rdma.group(g).is_none());
    f.nodes[N as usize].rdma.audit().unwrap();
}

#[test]
fn send_only_joins_no_ip_group_and_leaving_one_of_two_keeps_it() {
    let mut f = RdmaFabric::new(1, 1, Faults::default());
    let id = bound_ud(&mut f);
    f.call(N, |cm, h| {
        cm.join_multicast(h, id, group(2), true, 1).unwrap();
        cm.join_multicast(h, id, group(3), false, 2).unwrap();
        cm.join_multicast(h, id, group(3), false, 3).unwrap();
    });
    assert_eq!(igmp(&f, &group(2)), 0);
    assert_eq!(igmp(&f, &group(3)), 2);
    f.call(N, |cm, h| cm.leave_multicast(h, id, &group(3)));
    assert_eq!(igmp(&f, &group(3)), 1);
    // Leaving a group never joined changes nothing.
    f.call(N, |cm, h| cm.leave_multicast(h, id, &group(9)));
    assert_eq!(f.nodes[N as usize].rdma.groups_held(), 2);
    // Destroying the id ends the rest.
    f.call(N, |cm, h| cm.destroy(h, id).unwrap());
    assert_eq!(igmp(&f, &group(3)), 0);
    assert_eq!(f.nodes[N as usize].rdma.groups_held(), 0);
}

#[test]
fn only_bound_ud_ids_without_a_qp_of_rdma_cm_join() {
    let mut f = RdmaFabric::new(1, 1, Faults::default());
    let errs = f.call(N, |cm, h| {
        let idle = cm
            .create_id(SIM_NET, PortSpace::Udp, RdmaQpType::Ud, 1)
            .unwrap();
        let rc = cm
            .create_id(SIM_NET, PortSpace::Tcp, RdmaQpType::Rc, 1)
            .unwrap();
        cm.bind_addr(rc, node_addr(N, 0), &cx()).unwrap();
        let wild = cm
            .create_id(SIM_NET, PortSpace::Udp, RdmaQpType::Ud, 1)
            .unwrap();
        cm.bind_addr(
            wild,
            SockAddr::V4 {
                addr: [0; 4],
                port: 0,
            },
            &cx(),
        )
        .unwrap();
        let with_qp = cm
            .create_id(SIM_NET, PortSpace::Udp, RdmaQpType::Ud, 1)
            .unwrap();
        cm.bind_addr(with_qp, node_addr(N, 0), &cx()).unwrap();
        cm.set_qp(with_qp, 0x42, false).unwrap();
        [idle, rc, wild, with_qp].map(|id| cm.join_multicast(h, id, group(1), false, 0))
    });
    assert_eq!(errs, [Err(RdmaCmError::Invalid); 4]);
    // Nor the zero address.
    let id = bound_ud(&mut f);
    let r = f.call(N, |cm, h| {
        cm.join_multicast(
            h,
            id,
            SockAddr::V4 {
                addr: [0; 4],
                port: 0,
            },
            false,
            0,
        )
    });
    assert_eq!(r, Err(RdmaCmError::Invalid));
    assert!(f.take_events(N).is_empty());
    assert_eq!(f.nodes[N as usize].side.igmp.len(), 0);
}

/// The group a RoCE port joins: an IPv4 group mapped into the MGID (with
/// v1's ff0e prefix), joined by IGMP on v2 unless send-only, hop limit 64
/// on v2; IPv6 groups as they are on v1 and refused on v2.
#[test]
fn roce_groups_as_6_12_joins_them() {
    let v4 = group(7);
    let v2 = RoceGroup::of(&v4, true, false).unwrap();
    let mapped = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 239, 1, 2, 7];
    assert_eq!(v2.mgid, mapped);
    assert_eq!((v2.hop_limit, v2.igmp), (64, Some([239, 1, 2, 7])));
    assert_eq!(RoceGroup::of(&v4, true, true).unwrap().igmp, None);
    let v1 = RoceGroup::of(&v4, false, false).unwrap();
    assert_eq!(&v1.mgid[..2], &[0xff, 0x0e]);
    assert_eq!(&v1.mgid[2..], &mapped[2..]);
    assert_eq!((v1.hop_limit, v1.igmp), (1, None));
    let v6 = SockAddr::V6 {
        addr: [0xff, 0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        port: 0,
        flowinfo: 0,
        scope_id: 0,
    };
    assert_eq!(RoceGroup::of(&v6, true, false), None);
    let on_v1 = RoceGroup::of(&v6, false, false).unwrap();
    assert_eq!(
        (on_v1.mgid, on_v1.hop_limit, on_v1.igmp),
        (v6.gid(), 1, None)
    );
}
