// SPDX-License-Identifier: GPL-2.0

//! rdma_cm connection cycles through the simulated fabric, one at a time:
//! create, resolve address and route, connect with a QP, accept,
//! disconnect both ways, TIMEWAIT's end, destroy. Meant for an instruction
//! count (`valgrind --tool=callgrind`), which repeats exactly: what the
//! protocol core costs per connection, on both sides with the simulation
//! around it (the simulation's share is in the same profile, by name).
//!
//!   cargo bench -p rcm-core --features std --bench rdma_cycle --no-run
//!   valgrind --tool=callgrind <the binary> [connections]

use rcm_core::rdma_cm::{BindContext, ConnParams, PortSpace, RdmaQpType, SockAddr};
use rcm_core::sim::rdma::{node_addr, RdmaFabric, SIM_DEVICE, SIM_NET};
use rcm_core::sim::Faults;

const SERVER: u32 = 0;
const CLIENT: u32 = 1;
const PORT: u16 = 7174;

fn cx() -> BindContext {
    BindContext {
        device: Ok(SIM_DEVICE),
        local_ports: (32768, 60999),
        random: 99,
        privileged: false,
        bindv6only: false,
    }
}

fn params(qp_num: u32) -> ConnParams<'static> {
    ConnParams {
        private_data: b"cycle",
        responder_resources: 4,
        initiator_depth: 4,
        flow_control: true,
        retry_count: 7,
        rnr_retry_count: 7,
        srq: false,
        qp_num,
        qkey: 0,
    }
}

/// One connection's whole life; panics if it does not go as it must.
fn cycle(f: &mut RdmaFabric, n: u32) {
    let dst = node_addr(SERVER, PORT);
    let c = f.call(CLIENT, |cm, _| {
        let c = cm
            .create_id(SIM_NET, PortSpace::Tcp, RdmaQpType::Rc, n)
            .expect("create");
        cm.resolve_addr(c, None, dst, 2000, &cx()).expect("resolve");
        c
    });
    let found = f.resolve_addr(CLIENT, &dst);
    assert!(f.call(CLIENT, |cm, h| cm.addr_resolved(h, c, found)));
    f.call(CLIENT, |cm, _| cm.resolve_route(c, 2000).expect("route"));
    let route = f.route(CLIENT, &dst);
    assert!(f.call(CLIENT, |cm, h| cm.route_resolved(h, c, route)));
    f.create_qp(CLIENT, c, 0x1000 + n);
    f.call(CLIENT, |cm, h| {
        cm.connect(h, c, &params(0x1000 + n)).expect("connect")
    });
    f.run_for(5);
    let s = f
        .take_events(SERVER)
        .first()
        .map(|(s, _)| *s)
        .expect("a connect request");
    f.create_qp(SERVER, s, 0x8000 + n);
    f.call_settled(SERVER, |cm, h| cm.accept(h, s, Some(&params(0x8000 + n))))
        .expect("accept");
    f.run_for(5);
    f.call(CLIENT, |cm, h| cm.disconnect(h, c).expect("disconnect"));
    f.run_for(5);
    f.call(SERVER, |cm, h| cm.disconnect(h, s).expect("disconnect"));
    assert!(f.run_until_quiet(1000));
    f.call(CLIENT, |cm, h| cm.destroy(h, c).expect("destroy"));
    f.call(SERVER, |cm, h| cm.destroy(h, s).expect("destroy"));
    f.run_for(5);
    f.take_events(CLIENT);
    f.take_events(SERVER);
}

fn main() {
    let conns: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let mut f = RdmaFabric::new(2, 1, Faults::default());
    let l = f.call(SERVER, |cm, h| {
        let l = cm
            .create_id(SIM_NET, PortSpace::Tcp, RdmaQpType::Rc, 1)
            .expect("listener");
        cm.bind_addr(
            l,
            SockAddr::V4 {
                addr: [0; 4],
                port: PORT,
            },
            &cx(),
        )
        .expect("bind");
        cm.listen(h, l, 128, &cx()).expect("listen");
        l
    });
    for n in 0..conns {
        cycle(&mut f, n);
    }
    f.call(SERVER, |cm, h| cm.destroy(h, l).expect("destroy"));
    for n in [CLIENT, SERVER] {
        assert!(f.nodes[n as usize].rdma.is_empty(), "node {n} ids left");
    }
    println!("{conns} connections");
}
