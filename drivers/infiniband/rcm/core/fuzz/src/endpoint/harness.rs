// SPDX-License-Identifier: GPL-2.0

//! The consumer model of the `endpoint` target: the ids it holds, the
//! ops run through the API and the fabric, and the checks after each.

use super::*;
use std::collections::BTreeSet;

/// The consumer's view of the ids.
pub(super) struct Harness {
    pub(super) f: Fabric,
    /// Ids the consumer holds, in the order it got them: (node, id).
    held: Vec<(u32, CommId)>,
    /// Ids the consumer destroyed.
    destroyed: Vec<(u32, CommId)>,
    destroyed_set: BTreeSet<(u32, u32)>,
    /// Every id ever handed out.
    ever: BTreeSet<(u32, u32)>,
    pub(super) ops_done: usize,
    /// Every event delivered: (node, event name).
    pub(super) seen: Vec<(u32, &'static str)>,
}

/// Fails the run: an invariant of rcm-core does not hold.
macro_rules! broken {
    ($h:expr, $($arg:tt)*) => {{
        if !$h.f.trace.is_empty() {
            eprintln!("fabric trace:\n{}", $h.f.trace.join("\n"));
        }
        panic!("invariant broken after op {}: {}", $h.ops_done, format!($($arg)*))
    }};
}

fn data(len: u8, fill: u8) -> Vec<u8> {
    (0..len).map(|i| i ^ fill).collect()
}

impl Harness {
    pub(super) fn new(setup: &Setup) -> Self {
        let faults = Faults {
            loss: u32::from(setup.loss) % 251,
            duplicate: u32::from(setup.duplicate) % 101,
            delay_ms: 1 + u64::from(setup.delay % 4),
            jitter_ms: u64::from(setup.jitter % 16),
            receive_queue: 0,
        };
        let nodes = 2 + u32::from(setup.nodes % 2);
        let mut f = Fabric::new(nodes, u64::from(setup.seed), faults);
        if std::env::var_os("RCM_FUZZ_TRACE").is_some() {
            f.trace_limit = 100_000;
        }
        Harness {
            f,
            held: Vec::new(),
            destroyed: Vec::new(),
            destroyed_set: BTreeSet::new(),
            ever: BTreeSet::new(),
            ops_done: 0,
            seen: Vec::new(),
        }
    }

    fn nodes(&self) -> u32 {
        self.f.nodes.len() as u32
    }

    fn node(&self, b: u8) -> u32 {
        u32::from(b) % self.nodes()
    }

    /// The id an op names, and whether the consumer destroyed it.
    fn pick(&self, sel: Sel) -> ((u32, CommId), bool) {
        if sel < 0xE0 && !self.held.is_empty() {
            return (self.held[usize::from(sel) % self.held.len()], false);
        }
        if (0xE0..0xF0).contains(&sel) && !self.destroyed.is_empty() {
            return (
                self.destroyed[usize::from(sel) % self.destroyed.len()],
                true,
            );
        }
        // An id that was never handed out (ids are XORed with a random
        // operand; a clash with a real one only makes this a normal call).
        let node = self.node(sel);
        let id = CommId(0x0BAD_0000 | u32::from(sel));
        let known = self.ever.contains(&(node, id.0));
        ((node, id), !known)
    }

    fn adopt(&mut self, node: u32, id: CommId, how: &str) {
        if !self.ever.insert((node, id.0)) {
            broken!(self, "node {node}: id {:#x} handed out twice ({how})", id.0);
        }
        self.held.push((node, id));
    }

    /// An API call's result on an id: a destroyed (or never existing) id
    /// must be refused.
    fn api<T>(&self, (node, id): (u32, CommId), gone: bool, r: Result<T, CmError>) {
        if gone && r.is_ok() {
            broken!(
                self,
                "node {node}: API call on destroyed id {:#x} succeeded",
                id.0
            );
        }
    }

    /// Checks after every op.
    pub(super) fn check(&mut self) {
        for n in 0..self.nodes() {
            if let Err(e) = self.f.nodes[n as usize].ep.audit() {
                broken!(self, "node {n}: audit: {e:?}");
            }
        }
        for n in 0..self.nodes() {
            for (id, ev) in self.f.take_events(n) {
                self.seen.push((n, ev.name()));
                if self.destroyed_set.contains(&(n, id.0)) {
                    broken!(self, "node {n}: {} after destroy of {:#x}", ev.name(), id.0);
                }
                match ev {
                    Event::ReqReceived { .. } | Event::SidrReqReceived { .. } => {
                        self.adopt(n, id, ev.name())
                    }
                    _ if !self.ever.contains(&(n, id.0)) => {
                        broken!(self, "node {n}: {} for unknown id {:#x}", ev.name(), id.0)
                    }
                    _ => {}
                }
            }
        }
    }

    fn destroy(&mut self, at: (u32, CommId), gone: bool, reject: bool) {
        let (n, id) = at;
        let r = self.f.call(n, |ep, now, s| ep.destroy(now, id, reject, s));
        match r {
            Ok(true) if !gone => {
                self.held.retain(|&h| h != at);
                self.destroyed.push(at);
                self.destroyed_set.insert((n, id.0));
            }
            // A shared listener others still hold stays.
            Ok(false) if !gone => {}
            Err(e) if !gone => broken!(self, "node {n}: destroy {:#x}: {e:?}", id.0),
            r => self.api(at, gone, r),
        }
    }

    fn step(&mut self) {
        self.f.step();
    }

    pub(super) fn run_op(&mut self, op: &Op) {
        match *op {
            Op::Create { node } => {
                let n = self.node(node);
                let guid = self.f.nodes[n as usize].guid;
                if let Ok(id) = self.f.call(n, |ep, _, _| ep.create_id(DeviceId(0), guid)) {
                    self.adopt(n, id, "create_id");
                }
            }
            Op::Listen {
                id,
                sid,
                mask,
                dev,
                share,
            } => {
                let (at, gone) = self.pick(id);
                let spec = ListenSpec {
                    device: match dev % 3 {
                        0 => None,
                        d => Some(DeviceId(u32::from(d) - 1)),
                    },
                    service_id: match sid % 4 {
                        3 => ASSIGN_SERVICE_ID,
                        s => SERVICES[usize::from(s)],
                    },
                    service_mask: [0, u64::MAX, 0xFFFF_FFFF_FFFF_0000, 0xFF00_0000_0000_0000]
                        [usize::from(mask % 4)],
                    share_tag: (share != 0).then_some(u64::from(share)),
                    join: share != 0,
                };
                let r = self.f.call(at.0, |ep, _, out| ep.listen(at.1, spec, out));
                self.api(at, gone, r);
            }
            Op::SendReq {
                id,
                to,
                sid,
                qpn,
                retries,
                plt,
                flags,
                pd,
            } => {
                let (at, gone) = self.pick(id);
                let to = self.node(to);
                let sid = match sid % 4 {
                    3 => ASSIGN_SERVICE_ID | u64::from(sid),
                    s => SERVICES[usize::from(s)],
                };
                let mut req = sample_req(sid, 0x100 + u32::from(qpn), retries % 16);
                req.transport_service_type = flags & 3;
                req.extended_transport_type = (flags >> 2) & 3;
                if flags & 0x10 != 0 {
                    req.alternate_path = ReqPath {
                        local_port_lid: 7,
                        local_ack_timeout: IbaTime::new(plt),
                        ..req.primary_path
                    };
                }
                req.srq = flags & 0x20 != 0;
                req.end_to_end_flow_control = flags & 0x40 == 0;
                if flags & 0x80 != 0 {
                    req.remote_cm_response_timeout = IbaTime::new(flags);
                    req.local_cm_response_timeout = IbaTime::new(flags.rotate_left(3));
                }
                let n = usize::from(pd).min(req.private_data.len());
                req.private_data[..n].copy_from_slice(&data(pd, 0x5a)[..n]);
                let plt = IbaTime::new(plt);
                let r = self.f.call(at.0, |ep, now, s| {
                    ep.send_req(now, at.1, &req, 0, to, plt, s)
                });
                self.api(at, gone, r);
            }
            Op::SendRep { id, qpn, pd } => {
                let (at, gone) = self.pick(id);
                let mut rep = sample_rep(0x200 + u32::from(qpn));
                let n = usize::from(pd).min(rep.private_data.len());
                rep.private_data[..n].copy_from_slice(&data(pd, 0xa5)[..n]);
                let r = self
                    .f
                    .call(at.0, |ep, now, s| ep.send_rep(now, at.1, &rep, 0, s));
                self.api(at, gone, r);
            }
            Op::SendRtu { id, pd } => {
                let (at, gone) = self.pick(id);
                let pd = data(pd, 1);
                let r = self.f.call(at.0, |ep, _, s| ep.send_rtu(at.1, &pd, s));
                self.api(at, gone, r);
            }
            Op::SendDreq { id, pd } => {
                let (at, gone) = self.pick(id);
                let pd = data(pd, 2);
                let r = self
                    .f
                    .call(at.0, |ep, now, s| ep.send_dreq(now, at.1, &pd, s));
                self.api(at, gone, r);
            }
            Op::SendDrep { id, pd } => {
                let (at, gone) = self.pick(id);
                let pd = data(pd, 3);
                let r = self
                    .f
                    .call(at.0, |ep, now, s| ep.send_drep(now, at.1, &pd, s));
                self.api(at, gone, r);
            }
            Op::SendRej {
                id,
                reason,
                ari,
                pd,
            } => {
                let (at, gone) = self.pick(id);
                let (ari, pd) = (data(ari, 4), data(pd, 5));
                let reason = RejectReason::from_wire(u16::from(reason));
                let r = self.f.call(at.0, |ep, now, s| {
                    ep.send_rej(now, at.1, reason, &ari, &pd, s)
                });
                self.api(at, gone, r);
            }
            Op::SendMra { id, timeout, pd } => {
                let (at, gone) = self.pick(id);
                let pd = data(pd, 6);
                let r = self
                    .f
                    .call(at.0, |ep, _, s| ep.send_mra(at.1, timeout, &pd, s));
                self.api(at, gone, r);
            }
            Op::SendLap { id, flags } => {
                let (at, gone) = self.pick(id);
                let lap = Lap {
                    local_comm_id: 0,
                    remote_comm_id: 0,
                    remote_qpn_eecn: 0,
                    remote_cm_response_timeout: IbaTime::new(8 + (flags & 7)),
                    alternate_local_port_lid: u16::from(flags),
                    alternate_remote_port_lid: 4,
                    alternate_local_port_gid: [flags; 16],
                    alternate_remote_port_gid: [4; 16],
                    alternate_flow_label: 0,
                    alternate_traffic_class: 0,
                    alternate_hop_limit: 1,
                    alternate_packet_rate: 3,
                    alternate_sl: flags >> 4,
                    alternate_subnet_local: flags & 8 != 0,
                    alternate_local_ack_timeout: IbaTime::new(flags >> 3),
                    private_data: [flags; 168],
                };
                let r = self
                    .f
                    .call(at.0, |ep, now, s| ep.send_lap(now, at.1, &lap, s));
                self.api(at, gone, r);
            }
            Op::SendApr {
                id,
                status,
                info,
                pd,
            } => {
                let (at, gone) = self.pick(id);
                let (info, pd) = (data(info, 7), data(pd, 8));
                let status = AprStatus::from_wire(status);
                let r = self
                    .f
                    .call(at.0, |ep, _, s| ep.send_apr(at.1, status, &info, &pd, s));
                self.api(at, gone, r);
            }
            Op::SendSidrReq {
                id,
                to,
                sid,
                timeout,
                retries,
            } => {
                let (at, gone) = self.pick(id);
                let to = self.node(to);
                let req = SidrReq {
                    request_id: 0,
                    partition_key: 0xFFFF,
                    service_id: SERVICES[usize::from(sid % 3)],
                    private_data: [sid; 216],
                };
                let timeout = 1 + u32::from(timeout);
                let retries = retries % 16;
                let r = self.f.call(at.0, |ep, now, s| {
                    ep.send_sidr_req(now, at.1, &req, to, timeout, retries, s)
                });
                self.api(at, gone, r);
            }
            Op::SendSidrRep {
                id,
                status,
                qpn,
                info,
            } => {
                let (at, gone) = self.pick(id);
                let rep = SidrRep {
                    status: SidrStatus::from_wire(status),
                    qpn: 0x300 + u32::from(qpn),
                    qkey: 0x1234,
                    additional_info_length: info,
                    ..SidrRep::zeroed()
                };
                let r = self
                    .f
                    .call(at.0, |ep, _, s| ep.send_sidr_rep(at.1, &rep, s));
                self.api(at, gone, r);
            }
            Op::Notify { id, kind } => {
                let (at, gone) = self.pick(id);
                match kind % 3 {
                    0 => {
                        let r = self.f.call(at.0, |ep, _, s| ep.notify_established(at.1, s));
                        self.api(at, gone, r);
                    }
                    1 => {
                        let r = self.f.call(at.0, |ep, _, _| ep.notify_path_migrated(at.1));
                        self.api(at, gone, r);
                    }
                    _ => {
                        let attr_id = ATTRS[usize::from(kind / 3) % ATTRS.len()];
                        self.f
                            .call(at.0, |ep, now, s| ep.send_failed(now, at.1, attr_id, s))
                    }
                }
            }
            Op::Destroy { id, reject } => {
                let (at, gone) = self.pick(id);
                self.destroy(at, gone, reject);
            }
            Op::Step { n } => {
                for _ in 0..=n % 16 {
                    self.step();
                    self.check();
                }
            }
            Op::Sleep { ms } => {
                let until = self.f.now.saturating_add(u64::from(ms));
                // Each step handles everything due at one time; bounded
                // so that an input's run time stays bounded.
                for _ in 0..10_000 {
                    if self.f.next_time().is_none_or(|t| t > until) {
                        break;
                    }
                    self.step();
                    self.check();
                }
                self.f.now = self.f.now.max(until);
            }
            Op::Raw {
                to,
                from,
                short,
                ref bytes,
            } => {
                let (to, from) = (self.node(to), self.node(from));
                let mut mad: Mad = [0; MAD_SIZE];
                let n = bytes.len().min(MAD_SIZE);
                mad[..n].copy_from_slice(&bytes[..n]);
                if short || bytes.len() > MAD_SIZE {
                    // A wrong length goes straight to the endpoint.
                    let rx = rcm_core::cm::Received {
                        from: Some(from),
                        device: DeviceId(0),
                        local_ca_guid: self.f.nodes[to as usize].guid,
                    };
                    let bytes = bytes.clone();
                    let mut sink = Discard;
                    let now = self.f.now;
                    self.f.nodes[to as usize]
                        .ep
                        .handle_mad(now, &rx, &bytes, &mut sink);
                } else {
                    self.f.deliver(Packet {
                        from,
                        to,
                        mad: Box::new(mad),
                    });
                }
            }
            Op::Forge {
                id,
                attr,
                arg,
                tid,
                at,
                ref patch,
            } => self.forge(id, attr, arg, tid, at, patch),
            Op::Faults {
                loss,
                duplicate,
                jitter,
            } => {
                self.f.faults.loss = u32::from(loss) % 251;
                self.f.faults.duplicate = u32::from(duplicate) % 101;
                self.f.faults.jitter_ms = u64::from(jitter % 16);
            }
            Op::Oom { one_in } => {
                if one_in == 0 {
                    inject_insert_failures(0, 0);
                } else {
                    inject_insert_failures(2 + u64::from(one_in % 30), u64::from(one_in));
                }
            }
        }
    }

    /// Builds a MAD aimed at a held id and delivers it from the id's peer.
    fn forge(&mut self, sel: Sel, attr_ix: u8, arg: u8, tid: u8, at: u8, patch: &[u8]) {
        let ((node, id), _) = self.pick(sel);
        let conn = self.f.nodes[node as usize].ep.get(id);
        let peer = conn.and_then(|c| c.peer().copied()).unwrap_or(node + 1) % self.nodes();
        let remote = conn.map_or(0, |c| c.remote_id());
        let remote = if remote == 0 {
            0x7000_0000 | u32::from(arg)
        } else {
            remote
        };
        let peer_guid = self.f.nodes[peer as usize].guid;
        let attr_id = ATTRS[usize::from(attr_ix) % ATTRS.len()];
        let mut mad: Mad = [0; MAD_SIZE];
        let put32 = |mad: &mut Mad, off: usize, v: u32| {
            mad[off..off + 4].copy_from_slice(&v.to_be_bytes());
        };
        let put64 = |mad: &mut Mad, off: usize, v: u64| {
            mad[off..off + 8].copy_from_slice(&v.to_be_bytes());
        };
        match attr_id {
            attr::REQ => {
                let mut req = sample_req(SERVICES[usize::from(arg % 3)], 0x100 + u32::from(arg), 3);
                req.local_comm_id = remote;
                req.local_ca_guid = peer_guid;
                CmMad::send(0, 0, CmMessage::Req(req)).emit(&mut mad);
            }
            attr::SIDR_REQ => {
                let req = SidrReq {
                    request_id: remote,
                    partition_key: 0xFFFF,
                    service_id: SERVICES[usize::from(arg % 3)],
                    private_data: [arg; 216],
                };
                CmMad::send(0, 0, CmMessage::SidrReq(req)).emit(&mut mad);
            }
            attr::SIDR_REP => {
                let rep = SidrRep {
                    request_id: id.0,
                    status: SidrStatus::from_wire(arg % 8),
                    qpn: 0x300 + u32::from(arg),
                    ..SidrRep::zeroed()
                };
                CmMad::send(0, 0, CmMessage::SidrRep(rep)).emit(&mut mad);
            }
            attr::REP => {
                let mut rep = sample_rep(0x200 + u32::from(arg));
                rep.local_comm_id = remote;
                rep.remote_comm_id = id.0;
                rep.local_ca_guid = peer_guid;
                CmMad::send(0, 0, CmMessage::Rep(rep)).emit(&mut mad);
            }
            _ => {
                mad[..4].copy_from_slice(&[1, 7, 2, 3]);
                if attr_id == attr::CLASS_PORT_INFO {
                    mad[3] = if arg & 1 == 0 { 0x01 } else { 0x81 };
                }
                mad[16..18].copy_from_slice(&attr_id.to_be_bytes());
                put32(&mut mad, 24, remote);
                put32(&mut mad, 28, id.0);
                match attr_id {
                    // REJ: message rejected and reason.
                    attr::REJ => {
                        mad[32] = (arg % 3) << 6;
                        mad[35] = arg >> 2;
                    }
                    // MRA: message MRAed and service timeout.
                    attr::MRA => {
                        mad[32] = (arg % 3) << 6;
                        mad[33] = arg << 3;
                    }
                    // DREQ, LAP: our QPN.
                    attr::DREQ | attr::LAP => {
                        let qpn = conn.map_or(0, |c| c.qp_params().local_qpn);
                        put32(&mut mad, 32, qpn << 8);
                        mad[39] = arg << 3;
                    }
                    attr::APR => mad[33] = arg % 16,
                    _ => {}
                }
            }
        }
        let tid = match tid {
            0 => 0,
            t => (u64::from(peer) << 32) | u64::from(t),
        };
        put64(&mut mad, 8, tid);
        let start = 24 + usize::from(at) % (MAD_SIZE - 24);
        for (d, s) in mad[start..].iter_mut().zip(patch) {
            *d = *s;
        }
        self.f.deliver(Packet {
            from: peer,
            to: node,
            mad: Box::new(mad),
        });
    }

    /// Destroys everything; the fabric must go quiet with every endpoint
    /// empty.
    pub(super) fn teardown(&mut self) {
        inject_insert_failures(0, 0);
        let mut quiet = false;
        for _ in 0..100_000 {
            // Ids created meanwhile (REQs still in flight) go too; a
            // shared listener takes one destroy per share.
            for _ in 0..100_000 {
                let Some(&at) = self.held.first() else {
                    break;
                };
                self.destroy(at, false, true);
                self.check();
            }
            if self.f.quiet() {
                quiet = true;
                break;
            }
            self.step();
            self.check();
        }
        if !quiet {
            broken!(
                self,
                "the fabric never went quiet after destroying everything"
            );
        }
        for (n, node) in self.f.nodes.iter().enumerate() {
            if !node.ep.is_empty() || node.ep.table_sizes() != [0; 5] {
                broken!(
                    self,
                    "node {n}: {} ids and tables {:?} left after destroying everything",
                    node.ep.len(),
                    node.ep.table_sizes()
                );
            }
        }
    }
}

/// A sink that drops everything (for MADs of a wrong length, which the
/// fabric cannot carry).
struct Discard;

impl rcm_core::cm::Sink<u32> for Discard {
    fn transmit(&mut self, _tx: rcm_core::cm::Transmit<'_, u32>) {}
    fn event(&mut self, _id: CommId, _owner: rcm_core::cm::Owner, _event: Event) {}
}
