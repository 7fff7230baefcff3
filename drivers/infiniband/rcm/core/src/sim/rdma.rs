// SPDX-License-Identifier: GPL-2.0

//! rdma_cm on the simulated fabric: each node runs an [`RdmaCm`] over its
//! CM endpoint, with a fake resolver (node `n` has address 10.0.0.`n+1`
//! and GID `fe80::n+1` on device 0) and fake QPs that can be told to fail.

extern crate std;

use super::{Fabric, Faults, Outbox};
use crate::cm::store::btree::Std;
use crate::cm::{CommId, DeviceId, Endpoint, Event, Millis, QpTarget};
use crate::rdma_cm::{
    AddrResolution, Arrival, CmEventOutcome, DeviceInfo, Host, IwCall, PathKind, RdmaCm,
    RdmaCmError, RdmaEvent, RdmaId, ReadyMove, Route, RoutePath, SockAddr,
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
    /// The device is iWARP: connections go through [`Side::iw_ops`], which
    /// a test plays the iWARP CM for.
    pub iwarp: bool,
    /// What rdma_cm asked of the iWARP CM, in order.
    pub iw_ops: Vec<(RdmaId, IwOp)>,
    /// The IP multicast groups joined, with how many memberships each.
    pub igmp: BTreeMap<SockAddr, u32>,
    /// QP moves rdma_cm left to be made once its call is over, in order.
    pub readies: Vec<ReadyMove>,
    /// iWARP CM calls rdma_cm left, made after the QP moves, in order.
    pub iw_calls: Vec<IwCall>,
}

/// A request of rdma_cm to a node's (scripted) iWARP CM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IwOp {
    /// Listen (on the device, or on every iWARP device: `None`).
    Listen(Option<DeviceId>),
    /// Connect, with this private data.
    Connect(Vec<u8>),
    /// Accept the request, with this private data.
    Accept(Vec<u8>),
    /// Refuse it, with this private data.
    Reject(Vec<u8>),
    /// Close the connection.
    Disconnect,
}

/// One node's environment, as rdma_cm sees it.
pub struct NodeHost<'a> {
    fabric: &'a mut Fabric,
    node: u32,
    side: &'a mut Side,
}

impl NodeHost<'_> {
    /// Records an iWARP request that moves the QP, unless QP moves fail.
    fn iw_op(&mut self, id: RdmaId, op: IwOp) -> Result<(), i32> {
        if let Some(errno) = self.side.fail_qp {
            return Err(errno);
        }
        self.side.iw_ops.push((id, op));
        Ok(())
    }

    /// Makes a QP move rdma_cm left, as the kernel's host does: the send
    /// PSN from the CM's RTS attributes, unless QP moves fail.
    fn make_ready(&mut self, mv: &ReadyMove) -> Result<(), i32> {
        if let Some(errno) = self.side.fail_qp {
            return Err(errno);
        }
        let rts = self.fabric.nodes[self.node as usize]
            .ep
            .get(mv.comm)
            .map(|c| c.qp_attrs(QpTarget::Rts, |_| false));
        let Some(Ok(rts)) = rts else {
            return Err(-22);
        };
        match self.side.qps.get_mut(&mv.id) {
            Some(qp) => {
                *qp = SimQp::Rts {
                    rq_psn: mv.rq_psn,
                    sq_psn: rts.sq_psn.unwrap_or(0),
                };
                Ok(())
            }
            None => Err(-22),
        }
    }

    /// Makes an iWARP CM call rdma_cm left: recorded for the test that
    /// plays the iWARP CM; a connect or accept (which move the QP) fails
    /// while QP moves fail.
    fn make_iw(&mut self, call: &IwCall) -> Result<(), i32> {
        let id = call.id();
        match *call {
            IwCall::Listen { device, .. } => {
                if self.side.iwarp {
                    self.side.iw_ops.push((id, IwOp::Listen(device)));
                }
                Ok(())
            }
            IwCall::Connect { params, .. } => {
                self.iw_op(id, IwOp::Connect(params.private_data.as_slice().to_vec()))
            }
            IwCall::Accept { params, .. } => {
                self.iw_op(id, IwOp::Accept(params.private_data.as_slice().to_vec()))
            }
            IwCall::Reject { private_data, .. } => {
                let op = IwOp::Reject(private_data.as_slice().to_vec());
                self.side.iw_ops.push((id, op));
                Ok(())
            }
            IwCall::Disconnect { .. } => {
                self.side.iw_ops.push((id, IwOp::Disconnect));
                Ok(())
            }
        }
    }

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

    fn cm_read<R>(&mut self, f: impl FnOnce(&Endpoint<u32, Std>) -> R) -> R {
        f(&self.fabric.nodes[self.node as usize].ep)
    }

    fn qp_ready(&mut self, mv: &ReadyMove) -> Result<(), RdmaCmError> {
        self.side.readies.push(*mv);
        Ok(())
    }

    fn qp_error(&mut self, id: RdmaId) {
        if let Some(qp) = self.side.qps.get_mut(&id) {
            *qp = SimQp::Error;
        }
    }

    fn iw_call(&mut self, call: &IwCall) -> Result<(), RdmaCmError> {
        self.side.iw_calls.push(*call);
        Ok(())
    }

    fn join_group(&mut self, _id: RdmaId, addr: &SockAddr, send_only: bool) -> Result<(), i32> {
        if !send_only {
            *self.side.igmp.entry(*addr).or_insert(0) += 1;
        }
        Ok(())
    }

    fn leave_group(&mut self, _id: RdmaId, addr: &SockAddr, send_only: bool) {
        if send_only {
            return;
        }
        if let Some(n) = self.side.igmp.get_mut(addr) {
            *n -= 1;
            if *n == 0 {
                self.side.igmp.remove(addr);
            }
        }
    }

    fn device(&self, _device: DeviceId) -> DeviceInfo {
        DeviceInfo {
            guid: 0x1000 + u64::from(self.node),
            ack_delay: IbaTime::new(15),
            path_kind: PathKind::RoceV2,
            iwarp: self.side.iwarp,
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
        let _ = self.settle(n);
        self.dispatch();
        r
    }

    /// As [`Self::call`], for a call whose result a QP move it left
    /// decides (`rdma_accept`): the call's failure, else the move's.
    pub fn call_settled(
        &mut self,
        n: u32,
        f: impl FnOnce(&mut RdmaCm<Std, u32>, &mut NodeHost<'_>) -> Result<(), RdmaCmError>,
    ) -> Result<(), RdmaCmError> {
        let (rdma, mut host) = self.split(n);
        let r = f(rdma, &mut host);
        let settled = self.settle(n);
        self.dispatch();
        r.and(settled)
    }

    /// Makes the QP moves and iWARP CM calls node `n`'s rdma_cm left, each
    /// result handed back before the next, as the kernel does once the
    /// call is over; the first failure they led to.
    fn settle(&mut self, n: u32) -> Result<(), RdmaCmError> {
        let mut settled = Ok(());
        loop {
            let (rdma, mut host) = self.split(n);
            let done = if !host.side.readies.is_empty() {
                let mv = host.side.readies.remove(0);
                let moved = host.make_ready(&mv);
                rdma.qp_ready_done(&mut host, mv, moved)
            } else if !host.side.iw_calls.is_empty() {
                let call = host.side.iw_calls.remove(0);
                match host.make_iw(&call) {
                    Ok(()) => Ok(()),
                    failed => rdma.iw_call_done(&mut host, call, failed),
                }
            } else {
                return settled;
            };
            settled = settled.and(done);
        }
    }

    /// What the fake resolver finds for node `n` resolving `dst`.
    pub fn resolve_addr(&self, n: u32, dst: &SockAddr) -> Result<AddrResolution, i32> {
        match node_of(dst) {
            Some(d) if (d as usize) < self.nodes.len() => Ok(AddrResolution {
                src: node_addr(n, 0),
                device: Some(SIM_DEVICE),
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
        // As the kernel does: only what rdma_cm claims goes to it.
        if !rdma.claims(comm, ev) {
            self.unclaimed.push((n, comm, ev.clone()));
            return;
        }
        match rdma.cm_event(&mut host, at, comm, ev) {
            CmEventOutcome::Refused => {
                let _ = self
                    .fabric
                    .call(n, |ep, now, out| ep.destroy(now, comm, true, out));
            }
            CmEventOutcome::NotOurs => self.unclaimed.push((n, comm, ev.clone())),
            CmEventOutcome::Handled(_) => {
                let _ = self.settle(n);
            }
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
