// SPDX-License-Identifier: GPL-2.0

//! rdma_cm on the simulated fabric: each node runs an [`RdmaCm`] over its
//! CM endpoint, with a fake resolver (node `n` has address 10.0.0.`n+1`
//! and GID `fe80::n+1` on device 0) and fake QPs that can be told to fail.

extern crate std;

use super::{Fabric, Faults, Outbox};
use crate::cm::store::btree::Std;
use crate::cm::{CommId, DeviceId, Endpoint, Event, Millis, QpTarget};
use crate::rdma_cm::{
    AddrResolution, Arrival, CmEventOutcome, DeviceInfo, Host, PathKind, QpLimits, RdmaCm,
    RdmaEvent, RdmaId, Route, RoutePath, SockAddr,
};
use crate::timer::IbaTime;
use std::collections::BTreeMap;
use std::vec::Vec;

/// The one namespace of the simulation.
pub const SIM_NET: u64 = 0;

/// The device every node has.
pub const SIM_DEVICE: DeviceId = DeviceId(0);

/// A fake QP's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimQp {
    /// Created (INIT).
    Init,
    /// Ready to send, receiving from `rq_psn` and sending from `sq_psn`.
    Rts {
        /// The first PSN it expects.
        rq_psn: u32,
        /// The first PSN it sends.
        sq_psn: u32,
    },
    /// Flushed.
    Error,
}

/// What a node's environment keeps besides its rdma_cm.
#[derive(Default)]
pub struct Side {
    /// Events not yet taken by the consumer, in order.
    pub events: Vec<(RdmaId, RdmaEvent)>,
    /// The ids' fake QPs.
    pub qps: BTreeMap<RdmaId, SimQp>,
    /// Make the next QP transitions fail with this errno.
    pub fail_qp: Option<i32>,
    /// A counter for starting PSNs.
    pub psn: u32,
}

/// One node's environment, as rdma_cm sees it.
pub struct NodeHost<'a> {
    fabric: &'a mut Fabric,
    node: u32,
    side: &'a mut Side,
}

impl NodeHost<'_> {
    /// Takes the node's events queued so far.
    pub fn take_events(&mut self) -> Vec<(RdmaId, RdmaEvent)> {
        core::mem::take(&mut self.side.events)
    }
}

impl Host<u32> for NodeHost<'_> {
    type Maps = Std;
    type Out = Outbox;

    fn cm<R>(&mut self, f: impl FnOnce(&mut Endpoint<u32, Std>, Millis, &mut Outbox) -> R) -> R {
        self.fabric.call(self.node, f)
    }

    fn qp_ready(
        &mut self,
        id: RdmaId,
        comm: CommId,
        _: Option<QpLimits>,
        rq_psn: u32,
    ) -> Result<(), i32> {
        if let Some(errno) = self.side.fail_qp {
            return Err(errno);
        }
        // The send PSN from the CM's RTS attributes, as the kernel's QP
        // gets it.
        let rts = self.fabric.nodes[self.node as usize]
            .ep
            .get(comm)
            .map(|c| c.qp_attrs(QpTarget::Rts, |_| false));
        let Some(Ok(rts)) = rts else {
            return Err(-22);
        };
        match self.side.qps.get_mut(&id) {
            Some(qp) => {
                *qp = SimQp::Rts {
                    rq_psn,
                    sq_psn: rts.sq_psn.unwrap_or(0),
                };
                Ok(())
            }
            None => Err(-22),
        }
    }

    fn qp_error(&mut self, id: RdmaId) {
        if let Some(qp) = self.side.qps.get_mut(&id) {
            *qp = SimQp::Error;
        }
    }

    fn device(&self, _device: DeviceId) -> DeviceInfo {
        DeviceInfo {
            guid: 0x1000 + u64::from(self.node),
            ack_delay: IbaTime::new(15),
            path_kind: PathKind::RoceV2,
        }
    }

    fn event(&mut self, id: RdmaId, event: RdmaEvent) {
        self.side.events.push((id, event));
    }
}

/// A node: its rdma_cm and its environment.
pub struct RdmaNode {
    /// The rdma_cm.
    pub rdma: RdmaCm<Std, u32>,
    /// The rest.
    pub side: Side,
}

/// Nodes running rdma_cm over a simulated fabric.
pub struct RdmaFabric {
    /// The fabric with the nodes' CM endpoints.
    pub fabric: Fabric,
    /// The nodes' rdma_cm.
    pub nodes: Vec<RdmaNode>,
    /// CM events of ids that are not rdma_cm's: (node, id, event).
    pub unclaimed: Vec<(u32, CommId, Event)>,
}

/// Node `n`'s IPv4 address with `port`.
pub fn node_addr(n: u32, port: u16) -> SockAddr {
    SockAddr::V4 {
        addr: [10, 0, 0, (n + 1) as u8],
        port,
    }
}

/// Node `n`'s GID.
pub fn node_gid(n: u32) -> [u8; 16] {
    let mut gid = [0u8; 16];
    gid[0] = 0xfe;
    gid[1] = 0x80;
    gid[15] = (n + 1) as u8;
    gid
}

/// The node an IPv4 address of the simulation belongs to.
pub fn node_of(addr: &SockAddr) -> Option<u32> {
    match *addr {
        SockAddr::V4 {
            addr: [10, 0, 0, last],
            ..
        } if last > 0 => Some(u32::from(last) - 1),
        _ => None,
    }
}

impl RdmaFabric {
    /// `n` nodes, seeded.
    pub fn new(n: u32, seed: u64, faults: Faults) -> Self {
        RdmaFabric {
            fabric: Fabric::new(n, seed, faults),
            nodes: (0..n)
                .map(|_| RdmaNode {
                    rdma: RdmaCm::new(),
                    side: Side::default(),
                })
                .collect(),
            unclaimed: Vec::new(),
        }
    }

    /// Node `n`'s rdma_cm and its environment, for an API call.
    pub fn split(&mut self, n: u32) -> (&mut RdmaCm<Std, u32>, NodeHost<'_>) {
        let node = &mut self.nodes[n as usize];
        (
            &mut node.rdma,
            NodeHost {
                fabric: &mut self.fabric,
                node: n,
                side: &mut node.side,
            },
        )
    }

    /// Runs an API call on node `n`, then hands the CM events it caused
    /// to rdma_cm.
    pub fn call<R>(
        &mut self,
        n: u32,
        f: impl FnOnce(&mut RdmaCm<Std, u32>, &mut NodeHost<'_>) -> R,
    ) -> R {
        let (rdma, mut host) = self.split(n);
        let r = f(rdma, &mut host);
        self.dispatch();
        r
    }

    /// What the fake resolver finds for node `n` resolving `dst`.
    pub fn resolve_addr(&self, n: u32, dst: &SockAddr) -> Result<AddrResolution, i32> {
        match node_of(dst) {
            Some(d) if (d as usize) < self.nodes.len() => Ok(AddrResolution {
                src: node_addr(n, 0),
                device: SIM_DEVICE,
            }),
            // No neighbour answers.
            _ => Err(-113),
        }
    }

    /// The fake route from node `n` to `dst`.
    pub fn route(&self, n: u32, dst: &SockAddr) -> Result<Route<u32>, i32> {
        let d = node_of(dst).ok_or(-113)?;
        Ok(Route {
            path: RoutePath {
                kind: PathKind::RoceV2,
                sgid: node_gid(n),
                dgid: node_gid(d),
                slid: 0,
                dlid: 0,
                flow_label: 0,
                traffic_class: 0,
                hop_limit: 64,
                sl: 0,
                rate: 3,
                mtu: 3,
                pkey: 0xFFFF,
                packet_life_time: 14,
            },
            peer: Some(d),
            ack_delay: IbaTime::new(15),
        })
    }

    /// Hands every pending CM event to its node's rdma_cm (events that
    /// handling causes included). Events of CM ids that are not
    /// rdma_cm's stay with the fabric's node.
    pub fn dispatch(&mut self) {
        loop {
            let mut any = false;
            for n in 0..self.nodes.len() as u32 {
                let events = self.fabric.take_events(n);
                for (comm, ev) in events {
                    any = true;
                    self.cm_event(n, comm, &ev);
                }
            }
            if !any {
                break;
            }
        }
    }

    fn cm_event(&mut self, n: u32, comm: CommId, ev: &Event) {
        let side = &mut self.nodes[n as usize].side;
        side.psn = side.psn.wrapping_add(0x1234);
        let at = Arrival {
            net: SIM_NET,
            device: SIM_DEVICE,
            psn: side.psn,
        };
        let (rdma, mut host) = self.split(n);
        match rdma.cm_event(&mut host, at, comm, ev) {
            CmEventOutcome::Refused => {
                let _ = self
                    .fabric
                    .call(n, |ep, now, out| ep.destroy(now, comm, true, out));
            }
            CmEventOutcome::NotOurs => self.unclaimed.push((n, comm, ev.clone())),
            CmEventOutcome::Handled(_) => {}
        }
    }

    /// Advances the fabric by one step and dispatches its CM events.
    pub fn step(&mut self) -> bool {
        let more = self.fabric.step();
        self.dispatch();
        more
    }

    /// Steps until quiet or `limit` steps; false on hitting the limit.
    pub fn run_until_quiet(&mut self, limit: usize) -> bool {
        for _ in 0..limit {
            if !self.step() {
                return true;
            }
        }
        self.fabric.quiet()
    }

    /// Steps through the next `ms` milliseconds of simulated time.
    pub fn run_for(&mut self, ms: Millis) {
        let end = self.fabric.now.saturating_add(ms);
        while self.fabric.next_time().is_some_and(|t| t <= end) {
            self.step();
        }
        self.fabric.now = self.fabric.now.max(end);
    }

    /// Takes node `n`'s rdma_cm events.
    pub fn take_events(&mut self, n: u32) -> Vec<(RdmaId, RdmaEvent)> {
        core::mem::take(&mut self.nodes[n as usize].side.events)
    }

    /// Creates a fake QP for `id` on node `n` and tells rdma_cm.
    pub fn create_qp(&mut self, n: u32, id: RdmaId, qp_num: u32) {
        self.nodes[n as usize].side.qps.insert(id, SimQp::Init);
        let _ = self.nodes[n as usize].rdma.set_qp(id, qp_num, false);
    }
}
