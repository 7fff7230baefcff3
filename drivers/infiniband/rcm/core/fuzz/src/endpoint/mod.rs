// SPDX-License-Identifier: GPL-2.0

//! The `endpoint` target: the input is a [`Setup`] followed by [`Op`]s,
//! run on 2-3 `Endpoint<u32, Std>`s through `rcm_core::sim::Fabric`.
//!
//! The consumer model keeps the ids it holds in the order it got them
//! (from `create_id`, or from a REQ_RECEIVED / SIDR_REQ_RECEIVED event),
//! and ops name an id by its position in that list, so a program's meaning
//! does not depend on the random id values. After every op:
//!
//! - every endpoint's `audit()` passes;
//! - no event reaches an id the consumer destroyed, or an id it was never
//!   given; no id is handed out twice;
//! - no API call on a destroyed id succeeds, and `destroy` of a held id
//!   never fails.
//!
//! At the end everything is destroyed and the fabric must go quiet with
//! every endpoint empty (no id, no table entry).

use crate::input::Reader;
use rcm_core::cm::store::btree::inject_insert_failures;
use rcm_core::cm::{CmError, CommId, DeviceId, Event, ListenSpec, ASSIGN_SERVICE_ID};
use rcm_core::reason::{AprStatus, RejectReason, SidrStatus};
use rcm_core::sim::{sample_rep, sample_req, Fabric, Faults, Packet};
use rcm_core::timer::IbaTime;
use rcm_core::wire::field::{Mad, MAD_SIZE};
use rcm_core::wire::lap::Lap;
use rcm_core::wire::mad::attr;
use rcm_core::wire::req::ReqPath;
use rcm_core::wire::sidr::{SidrRep, SidrReq};
use rcm_core::wire::{CmMad, CmMessage};

mod harness;
use harness::Harness;

/// Service ids the programs use (a fourth choice asks for an assigned one).
pub const SERVICES: [u64; 3] = [
    0x0106_0000_0000_0001,
    0x0106_0000_0000_0002,
    0x0111_0000_0000_0003,
];

/// Attribute ids an [`Op::Forge`] can build.
pub const ATTRS: [u16; 12] = [
    attr::CLASS_PORT_INFO,
    attr::REQ,
    attr::MRA,
    attr::REJ,
    attr::REP,
    attr::RTU,
    attr::DREQ,
    attr::DREP,
    attr::SIDR_REQ,
    attr::SIDR_REP,
    attr::LAP,
    attr::APR,
];

/// Most ops one input runs (bounds the time per input).
pub const MAX_OPS: usize = 512;

/// The fabric: node count, fault seed, faults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Setup {
    /// 2 + nodes % 2 endpoints.
    pub nodes: u8,
    /// Seeds the fabric's random source (faults, id operands).
    pub seed: u16,
    /// Loss in per mille, % 251.
    pub loss: u8,
    /// Duplication in per mille, % 101.
    pub duplicate: u8,
    /// Base delay 1 + delay % 4 ms.
    pub delay: u8,
    /// Jitter up to jitter % 16 ms.
    pub jitter: u8,
}

/// An id as an op names it (see [`Endpoint`](rcm_core::cm::Endpoint)):
/// below 0xE0 the held id at that position (mod the count), 0xE0..0xF0 a
/// destroyed id, from 0xF0 an id that never existed.
pub type Sel = u8;

/// One step of a program. Byte counts (`pd`, `ari`, ...) are lengths of
/// private data and the like; lengths past a field's size exercise the
/// API's argument checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `create_id` on node `node % n`.
    Create { node: u8 },
    /// `listen` (service `sid % 4`, 3 = assign; mask `mask % 4`; device
    /// `dev % 3`: any, 0, 1; shared with tag `share` unless 0).
    Listen {
        id: Sel,
        sid: u8,
        mask: u8,
        dev: u8,
        share: u8,
    },
    /// `send_req` to node `to % n`.
    SendReq {
        id: Sel,
        to: u8,
        sid: u8,
        qpn: u8,
        retries: u8,
        plt: u8,
        /// bits 0-1 transport type, 2-3 extended type, 4 alternate path,
        /// 5 SRQ, 6 no flow control; the top bit plus bits 0-4 give the
        /// CM response timeouts instead of the sample's.
        flags: u8,
        pd: u8,
    },
    /// `send_rep` with QPN 0x200 + qpn.
    SendRep { id: Sel, qpn: u8, pd: u8 },
    /// `send_rtu`.
    SendRtu { id: Sel, pd: u8 },
    /// `send_dreq`.
    SendDreq { id: Sel, pd: u8 },
    /// `send_drep`.
    SendDrep { id: Sel, pd: u8 },
    /// `send_rej` with the wire reason `reason`.
    SendRej {
        id: Sel,
        reason: u8,
        ari: u8,
        pd: u8,
    },
    /// `send_mra` with service timeout byte `timeout` (0x80: delay flag).
    SendMra { id: Sel, timeout: u8, pd: u8 },
    /// `send_lap` (path details from `flags`).
    SendLap { id: Sel, flags: u8 },
    /// `send_apr` with wire status `status`.
    SendApr {
        id: Sel,
        status: u8,
        info: u8,
        pd: u8,
    },
    /// `send_sidr_req` to node `to % n`.
    SendSidrReq {
        id: Sel,
        to: u8,
        sid: u8,
        timeout: u8,
        retries: u8,
    },
    /// `send_sidr_rep` with wire status `status`.
    SendSidrRep {
        id: Sel,
        status: u8,
        qpn: u8,
        info: u8,
    },
    /// `kind % 3`: `notify_established`, `notify_path_migrated`,
    /// `send_failed` (of attribute `ATTRS[kind / 3 % 12]`).
    Notify { id: Sel, kind: u8 },
    /// `destroy`.
    Destroy { id: Sel, reject: bool },
    /// Up to `1 + n % 16` fabric steps.
    Step { n: u8 },
    /// Advances the clock by `ms` and handles everything due by then.
    Sleep { ms: u16 },
    /// Delivers `bytes` (padded with zeros to a MAD unless `short`) to node
    /// `to % n` as if sent by `from % n`.
    Raw {
        to: u8,
        from: u8,
        short: bool,
        bytes: Vec<u8>,
    },
    /// Delivers a well-formed MAD of attribute `ATTRS[attr % 12]` aimed at
    /// the held id `id` (its comm ids filled in from the id's state), from
    /// the id's peer, then overwrites body bytes from `at % 232` with
    /// `patch`. `arg` varies the fields the id does not give.
    Forge {
        id: Sel,
        attr: u8,
        arg: u8,
        tid: u8,
        at: u8,
        patch: Vec<u8>,
    },
    /// New fault settings (as in [`Setup`]).
    Faults { loss: u8, duplicate: u8, jitter: u8 },
    /// Make about one table insert in `2 + one_in % 30` fail with NoMemory;
    /// 0 turns that off.
    Oom { one_in: u8 },
}

const OPS: u8 = 22;

impl Setup {
    /// Reads the 7 setup bytes.
    pub fn decode(r: &mut Reader<'_>) -> Self {
        Setup {
            nodes: r.u8(),
            seed: r.u16(),
            loss: r.u8(),
            duplicate: r.u8(),
            delay: r.u8(),
            jitter: r.u8(),
        }
    }

    /// Writes what [`Setup::decode`] reads.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.nodes);
        out.extend_from_slice(&self.seed.to_be_bytes());
        out.extend_from_slice(&[self.loss, self.duplicate, self.delay, self.jitter]);
    }
}

impl Op {
    /// Reads one op.
    pub fn decode(r: &mut Reader<'_>) -> Self {
        match r.u8() % OPS {
            0 => Op::Create { node: r.u8() },
            1 => Op::Listen {
                id: r.u8(),
                sid: r.u8(),
                mask: r.u8(),
                dev: r.u8(),
                share: r.u8(),
            },
            2 => Op::SendReq {
                id: r.u8(),
                to: r.u8(),
                sid: r.u8(),
                qpn: r.u8(),
                retries: r.u8(),
                plt: r.u8(),
                flags: r.u8(),
                pd: r.u8(),
            },
            3 => Op::SendRep {
                id: r.u8(),
                qpn: r.u8(),
                pd: r.u8(),
            },
            4 => Op::SendRtu {
                id: r.u8(),
                pd: r.u8(),
            },
            5 => Op::SendDreq {
                id: r.u8(),
                pd: r.u8(),
            },
            6 => Op::SendDrep {
                id: r.u8(),
                pd: r.u8(),
            },
            7 => Op::SendRej {
                id: r.u8(),
                reason: r.u8(),
                ari: r.u8(),
                pd: r.u8(),
            },
            8 => Op::SendMra {
                id: r.u8(),
                timeout: r.u8(),
                pd: r.u8(),
            },
            9 => Op::SendLap {
                id: r.u8(),
                flags: r.u8(),
            },
            10 => Op::SendApr {
                id: r.u8(),
                status: r.u8(),
                info: r.u8(),
                pd: r.u8(),
            },
            11 => Op::SendSidrReq {
                id: r.u8(),
                to: r.u8(),
                sid: r.u8(),
                timeout: r.u8(),
                retries: r.u8(),
            },
            12 => Op::SendSidrRep {
                id: r.u8(),
                status: r.u8(),
                qpn: r.u8(),
                info: r.u8(),
            },
            13 => Op::Notify {
                id: r.u8(),
                kind: r.u8(),
            },
            14 => Op::Destroy {
                id: r.u8(),
                reject: r.u8() & 1 == 0,
            },
            15 => Op::Step { n: r.u8() },
            16 => Op::Sleep { ms: r.u16() },
            17 => {
                let (to, from) = (r.u8(), r.u8());
                let len = r.u16();
                let short = len & 0x8000 != 0;
                let n = usize::from(len & 0x7fff).min(MAD_SIZE + 8);
                Op::Raw {
                    to,
                    from,
                    short,
                    bytes: r.bytes(n).to_vec(),
                }
            }
            18 => {
                let (id, attr, arg, tid, at) = (r.u8(), r.u8(), r.u8(), r.u8(), r.u8());
                let n = usize::from(r.u8());
                Op::Forge {
                    id,
                    attr,
                    arg,
                    tid,
                    at,
                    patch: r.bytes(n).to_vec(),
                }
            }
            19 => Op::Faults {
                loss: r.u8(),
                duplicate: r.u8(),
                jitter: r.u8(),
            },
            20 => Op::Oom { one_in: r.u8() },
            _ => Op::Step { n: r.u8() },
        }
    }

    /// Writes what [`Op::decode`] reads back as this op.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut put = |code: u8, args: &[u8]| {
            out.push(code);
            out.extend_from_slice(args);
        };
        match self {
            Op::Create { node } => put(0, &[*node]),
            Op::Listen {
                id,
                sid,
                mask,
                dev,
                share,
            } => put(1, &[*id, *sid, *mask, *dev, *share]),
            Op::SendReq {
                id,
                to,
                sid,
                qpn,
                retries,
                plt,
                flags,
                pd,
            } => put(2, &[*id, *to, *sid, *qpn, *retries, *plt, *flags, *pd]),
            Op::SendRep { id, qpn, pd } => put(3, &[*id, *qpn, *pd]),
            Op::SendRtu { id, pd } => put(4, &[*id, *pd]),
            Op::SendDreq { id, pd } => put(5, &[*id, *pd]),
            Op::SendDrep { id, pd } => put(6, &[*id, *pd]),
            Op::SendRej {
                id,
                reason,
                ari,
                pd,
            } => put(7, &[*id, *reason, *ari, *pd]),
            Op::SendMra { id, timeout, pd } => put(8, &[*id, *timeout, *pd]),
            Op::SendLap { id, flags } => put(9, &[*id, *flags]),
            Op::SendApr {
                id,
                status,
                info,
                pd,
            } => put(10, &[*id, *status, *info, *pd]),
            Op::SendSidrReq {
                id,
                to,
                sid,
                timeout,
                retries,
            } => put(11, &[*id, *to, *sid, *timeout, *retries]),
            Op::SendSidrRep {
                id,
                status,
                qpn,
                info,
            } => put(12, &[*id, *status, *qpn, *info]),
            Op::Notify { id, kind } => put(13, &[*id, *kind]),
            Op::Destroy { id, reject } => put(14, &[*id, u8::from(!*reject)]),
            Op::Step { n } => put(15, &[*n]),
            Op::Sleep { ms } => put(16, &ms.to_be_bytes()),
            Op::Raw {
                to,
                from,
                short,
                bytes,
            } => {
                let len = bytes.len().min(0x7fff) as u16 | if *short { 0x8000 } else { 0 };
                let [hi, lo] = len.to_be_bytes();
                put(17, &[*to, *from, hi, lo]);
                out.extend_from_slice(bytes);
            }
            Op::Forge {
                id,
                attr,
                arg,
                tid,
                at,
                patch,
            } => {
                put(
                    18,
                    &[*id, *attr, *arg, *tid, *at, patch.len().min(255) as u8],
                );
                out.extend_from_slice(&patch[..patch.len().min(255)]);
            }
            Op::Faults {
                loss,
                duplicate,
                jitter,
            } => put(19, &[*loss, *duplicate, *jitter]),
            Op::Oom { one_in } => put(20, &[*one_in]),
        }
    }
}

/// Encodes a whole program.
pub fn encode(setup: &Setup, ops: &[Op]) -> Vec<u8> {
    let mut out = Vec::new();
    setup.encode(&mut out);
    for op in ops {
        op.encode(&mut out);
    }
    out
}

/// Decodes a whole program (at most [`MAX_OPS`] ops).
pub fn decode(data: &[u8]) -> (Setup, Vec<Op>) {
    let mut r = Reader::new(data);
    let setup = Setup::decode(&mut r);
    let mut ops = Vec::new();
    while !r.is_empty() && ops.len() < MAX_OPS {
        ops.push(Op::decode(&mut r));
    }
    (setup, ops)
}

/// Runs one input; returns the events delivered, (node, name), in order.
pub fn run(data: &[u8]) -> Vec<(u32, &'static str)> {
    inject_insert_failures(0, 0);
    let (setup, ops) = decode(data);
    let mut h = Harness::new(&setup);
    for op in &ops {
        if h.f.trace_limit > 0 {
            let line = format!("{:>7} op {}: {op:?}", h.f.now, h.ops_done);
            h.f.note(line);
        }
        h.run_op(op);
        h.check();
        h.ops_done += 1;
    }
    h.teardown();
    inject_insert_failures(0, 0);
    if h.f.trace_limit > 0 {
        eprintln!("fabric trace:\n{}", h.f.trace.join("\n"));
    }
    h.seen
}
