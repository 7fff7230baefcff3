// SPDX-License-Identifier: GPL-2.0

//! Each command's input, read from the bytes the caller wrote into one
//! [`Command`], with the checks 6.12's handlers make before they look the
//! id up (sizes, families, flags, reasons), in their order. The checks
//! that need the id (is it this file's, is it bound) come after, in the
//! device.

use super::frame::{Header, Opcode};
use super::layout::{conn_param, input, response, SOCKADDR_IN6_SIZE};
use super::layout::{ECE_SIZE, SOCKADDR_STORAGE_SIZE};
use super::option::{SetOption, MAX_OPTION_LEN};
use super::UcmaError;
use crate::rdma_cm::sockaddr::{self, read_array};
pub use crate::rdma_cm::PrivateData;
use crate::rdma_cm::{PortSpace, RdmaQpType, SockAddr};

/// `IB_QPT_RC`, `IB_QPT_UC` and `IB_QPT_UD`: the QP types an
/// AF_IB-space id may name.
const IB_QPT_RC: u8 = 2;
const IB_QPT_UC: u8 = 3;
const IB_QPT_UD: u8 = 4;
/// `IB_QPS_ERR`: the last QP state INIT_QP_ATTR takes.
const IB_QPS_ERR: u32 = 6;
/// `IB_CM_REJ_CONSUMER_DEFINED` and `IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED`:
/// the only reasons userspace may reject with (0 means the first).
const REJ_CONSUMER_DEFINED: u8 = 28;
const REJ_VENDOR_OPTION_NOT_SUPPORTED: u8 = 35;

/// `struct rdma_ucm_conn_param` of CONNECT and ACCEPT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnParam {
    /// The caller's QP number (24 bits kept).
    pub qp_num: u32,
    /// The Q_Key (used for AF_IB ids only).
    pub qkey: u32,
    /// Private data for the REQ or REP.
    pub private_data: PrivateData,
    /// The QP uses an SRQ.
    pub srq: bool,
    /// Incoming RDMA reads and atomics.
    pub responder_resources: u8,
    /// Outgoing RDMA reads and atomics.
    pub initiator_depth: u8,
    /// End-to-end flow control.
    pub flow_control: bool,
    /// Transport retries.
    pub retry_count: u8,
    /// RNR retries.
    pub rnr_retry_count: u8,
}

/// Enhanced connection establishment options (`struct rdma_ucm_ece`);
/// zero when the caller's struct predates them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ece {
    /// The vendor.
    pub vendor_id: u32,
    /// The vendor's options.
    pub attr_mod: u32,
}

/// A source address as resolve commands carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserAddr {
    /// None given (family 0): rdma_cm picks one.
    Unspecified,
    /// An address.
    Addr(SockAddr),
    /// A family rdma_cm has no use for, passed on unchecked by
    /// RESOLVE_ADDR when its size field is 0 (rdma_cm refuses it).
    Unsupported(u16),
}

/// How a multicast group is joined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinMode {
    /// A full member: sends and receives.
    FullMember,
    /// Sends only.
    SendOnlyFullMember,
}

/// Which QUERY answer the caller wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryKind {
    /// Addresses, device and port (`RDMA_USER_CM_QUERY_ADDR`).
    Addr,
    /// Path records (`RDMA_USER_CM_QUERY_PATH`).
    Path,
    /// Addresses as AF_IB GIDs (`RDMA_USER_CM_QUERY_GID`).
    Gid,
    /// Another value: refused once the id is found (`-ENOSYS`).
    Unknown,
}

/// A command, its input checked as far as it can be without the id.
/// `response` fields are user pointers the answer is copied to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// CREATE_ID.
    CreateId {
        /// The caller's handle, returned in events.
        uid: u64,
        /// Where the new id goes.
        response: u64,
        /// The port space.
        port_space: PortSpace,
        /// The QP type the space implies (or names, for the IB space).
        qp_type: RdmaQpType,
    },
    /// DESTROY_ID.
    DestroyId {
        /// Where `events_reported` goes.
        response: u64,
        /// The id.
        id: u32,
    },
    /// BIND_IP and BIND.
    Bind {
        /// The id.
        id: u32,
        /// The address.
        addr: SockAddr,
    },
    /// RESOLVE_IP and RESOLVE_ADDR.
    ResolveAddr {
        /// The id.
        id: u32,
        /// The source, if any.
        src: UserAddr,
        /// The destination.
        dst: SockAddr,
        /// Milliseconds to wait.
        timeout_ms: u32,
    },
    /// RESOLVE_ROUTE.
    ResolveRoute {
        /// The id.
        id: u32,
        /// Milliseconds to wait.
        timeout_ms: u32,
    },
    /// QUERY_ROUTE.
    QueryRoute {
        /// Where the answer goes.
        response: u64,
        /// The id.
        id: u32,
    },
    /// QUERY.
    Query {
        /// Where the answer goes.
        response: u64,
        /// The id.
        id: u32,
        /// What is asked.
        kind: QueryKind,
    },
    /// CONNECT.
    Connect {
        /// The id.
        id: u32,
        /// The connection parameters.
        param: ConnParam,
        /// ECE options.
        ece: Ece,
    },
    /// LISTEN.
    Listen {
        /// The id.
        id: u32,
        /// The backlog asked for (0 or too large: the file's maximum).
        backlog: u32,
    },
    /// ACCEPT.
    Accept {
        /// The new handle of the id, taken when the accept succeeds.
        uid: u64,
        /// The id.
        id: u32,
        /// The parameters; `None` confirms a reply (the RTU).
        param: Option<ConnParam>,
        /// ECE options.
        ece: Ece,
    },
    /// REJECT.
    Reject {
        /// The id.
        id: u32,
        /// The reject reason (28 or 35).
        reason: u8,
        /// Private data for the REJ.
        private_data: PrivateData,
    },
    /// DISCONNECT.
    Disconnect {
        /// The id.
        id: u32,
    },
    /// INIT_QP_ATTR.
    InitQpAttr {
        /// Where the attributes go.
        response: u64,
        /// The id.
        id: u32,
        /// The QP state asked for (`enum ib_qp_state`, at most ERR).
        qp_state: u8,
    },
    /// GET_EVENT.
    GetEvent {
        /// Where the event goes.
        response: u64,
    },
    /// SET_OPTION; its value is read in by the device.
    SetOption(SetOption),
    /// NOTIFY.
    Notify {
        /// The id.
        id: u32,
        /// The QP event (`enum ib_event_type`).
        event: u32,
    },
    /// JOIN_IP_MCAST and JOIN_MCAST.
    Join {
        /// Where the new group handle goes.
        response: u64,
        /// The caller's handle of the membership, returned in events.
        uid: u64,
        /// The id.
        id: u32,
        /// The group.
        addr: SockAddr,
        /// Full or send-only member.
        mode: JoinMode,
    },
    /// LEAVE_MCAST.
    Leave {
        /// Where `events_reported` goes.
        response: u64,
        /// The membership handle JOIN answered.
        membership: u32,
    },
    /// MIGRATE_ID, written to the file the id moves to.
    MigrateId {
        /// Where `events_reported` goes.
        response: u64,
        /// The id, as its current file knows it.
        id: u32,
        /// The current file's descriptor.
        fd: u32,
    },
}

/// The body of a command: reads at fixed offsets, each bounds-checked.
struct Body<'a>(&'a [u8]);

impl Body<'_> {
    fn array<const N: usize>(&self, at: usize) -> Result<[u8; N], UcmaError> {
        read_array(self.0, at).ok_or(UcmaError::Invalid)
    }
    fn u8(&self, at: usize) -> Result<u8, UcmaError> {
        self.0.get(at).copied().ok_or(UcmaError::Invalid)
    }
    fn u16(&self, at: usize) -> Result<u16, UcmaError> {
        self.array(at).map(u16::from_ne_bytes)
    }
    fn u32(&self, at: usize) -> Result<u32, UcmaError> {
        self.array(at).map(u32::from_ne_bytes)
    }
    fn u64(&self, at: usize) -> Result<u64, UcmaError> {
        self.array(at).map(u64::from_ne_bytes)
    }
    fn bytes(&self, at: usize, len: usize) -> Result<&[u8], UcmaError> {
        self.0.get(at..at + len).ok_or(UcmaError::Invalid)
    }

    /// The conn_param at `at` and whether it is marked valid.
    fn conn_param(&self, at: usize) -> Result<(ConnParam, bool), UcmaError> {
        let p = ConnParam {
            qp_num: self.u32(at + conn_param::QP_NUM)? & 0x00FF_FFFF,
            qkey: self.u32(at + conn_param::QKEY)?,
            private_data: PrivateData::from_buffer(
                self.array(at + conn_param::PRIVATE_DATA)?,
                self.u8(at + conn_param::PRIVATE_DATA_LEN)?,
            ),
            srq: self.u8(at + conn_param::SRQ)? != 0,
            responder_resources: self.u8(at + conn_param::RESPONDER_RESOURCES)?,
            initiator_depth: self.u8(at + conn_param::INITIATOR_DEPTH)?,
            flow_control: self.u8(at + conn_param::FLOW_CONTROL)? != 0,
            retry_count: self.u8(at + conn_param::RETRY_COUNT)?,
            rnr_retry_count: self.u8(at + conn_param::RNR_RETRY_COUNT)?,
        };
        Ok((p, self.u8(at + conn_param::VALID)? != 0))
    }

    /// The ECE at `at`, if the caller's struct reaches it.
    fn ece(&self, at: usize) -> Result<Ece, UcmaError> {
        if self.0.len() < at + ECE_SIZE {
            return Ok(Ece::default());
        }
        Ok(Ece {
            vendor_id: self.u32(at)?,
            attr_mod: self.u32(at + 4)?,
        })
    }

    /// An address in a `sockaddr_in6` at `at` (IPv4 or IPv6 only).
    fn in6_addr(&self, at: usize) -> Result<SockAddr, UcmaError> {
        let b = self.bytes(at, SOCKADDR_IN6_SIZE)?;
        if sockaddr::size_within(b, SOCKADDR_IN6_SIZE) == 0 {
            return Err(UcmaError::Invalid);
        }
        sockaddr::read(b).ok_or(UcmaError::Invalid)
    }

    /// The storage at `at` and the size the caller states for it.
    fn storage(&self, at: usize) -> Result<&[u8], UcmaError> {
        self.bytes(at, SOCKADDR_STORAGE_SIZE)
    }
}

/// An address in a storage whose stated size must be its family's.
fn sized_addr(storage: &[u8], size: u16) -> Result<SockAddr, UcmaError> {
    let known = sockaddr::size_within(storage, SOCKADDR_STORAGE_SIZE);
    if size == 0 || usize::from(size) != known {
        return Err(UcmaError::Invalid);
    }
    sockaddr::read(storage).ok_or(UcmaError::Invalid)
}

/// Reads `header.op`'s input from `body` (the [`Opcode::input_len`] bytes
/// the caller wrote after the header).
pub fn parse(header: &Header, body: &[u8]) -> Result<Command, UcmaError> {
    let b = Body(body);
    let out_len = usize::from(header.out_len);
    Ok(match header.op {
        Opcode::CreateId => {
            let port_space =
                PortSpace::from_raw(u32::from(b.u16(16)?)).ok_or(UcmaError::Invalid)?;
            let qp_type = match port_space {
                PortSpace::Tcp => RdmaQpType::Rc,
                PortSpace::Udp | PortSpace::Ipoib => RdmaQpType::Ud,
                // The IB space takes the caller's type, one rcm's rdma_cm
                // connects (as its rdma_create_user_id answers the in-tree
                // rdma_ucm: no XRC or raw packet QPs).
                PortSpace::Ib => match b.u8(18)? {
                    IB_QPT_RC => RdmaQpType::Rc,
                    IB_QPT_UD => RdmaQpType::Ud,
                    IB_QPT_UC => RdmaQpType::Uc,
                    _ => return Err(UcmaError::Invalid),
                },
            };
            Command::CreateId {
                uid: b.u64(0)?,
                response: b.u64(8)?,
                port_space,
                qp_type,
            }
        }
        Opcode::DestroyId => Command::DestroyId {
            response: b.u64(0)?,
            id: b.u32(8)?,
        },
        Opcode::LeaveMcast => Command::Leave {
            response: b.u64(0)?,
            membership: b.u32(8)?,
        },
        Opcode::BindIp => Command::Bind {
            addr: b.in6_addr(8)?,
            id: b.u32(8 + SOCKADDR_IN6_SIZE)?,
        },
        Opcode::Bind => {
            let size = b.u16(4)?;
            if b.u16(6)? != 0 {
                return Err(UcmaError::Invalid);
            }
            Command::Bind {
                addr: sized_addr(b.storage(8)?, size)?,
                id: b.u32(0)?,
            }
        }
        Opcode::ResolveIp => {
            let src = b.bytes(0, SOCKADDR_IN6_SIZE)?;
            let src = if sockaddr::family(src) == 0 {
                UserAddr::Unspecified
            } else {
                UserAddr::Addr(b.in6_addr(0)?)
            };
            Command::ResolveAddr {
                src,
                dst: b.in6_addr(SOCKADDR_IN6_SIZE)?,
                id: b.u32(2 * SOCKADDR_IN6_SIZE)?,
                timeout_ms: b.u32(2 * SOCKADDR_IN6_SIZE + 4)?,
            }
        }
        Opcode::ResolveAddr => {
            let (src_size, dst_size) = (b.u16(8)?, b.u16(10)?);
            if b.u32(12)? != 0 {
                return Err(UcmaError::Invalid);
            }
            let src_storage = b.storage(16)?;
            let src = if src_size != 0 {
                UserAddr::Addr(sized_addr(src_storage, src_size)?)
            } else {
                // Not checked, passed on as written.
                match sockaddr::family(src_storage) {
                    0 => UserAddr::Unspecified,
                    f => {
                        sockaddr::read(src_storage).map_or(UserAddr::Unsupported(f), UserAddr::Addr)
                    }
                }
            };
            Command::ResolveAddr {
                id: b.u32(0)?,
                timeout_ms: b.u32(4)?,
                src,
                dst: sized_addr(b.storage(16 + SOCKADDR_STORAGE_SIZE)?, dst_size)?,
            }
        }
        Opcode::ResolveRoute => Command::ResolveRoute {
            id: b.u32(0)?,
            timeout_ms: b.u32(4)?,
        },
        Opcode::QueryRoute => Command::QueryRoute {
            response: b.u64(0)?,
            id: b.u32(8)?,
        },
        Opcode::Query => Command::Query {
            response: b.u64(0)?,
            id: b.u32(8)?,
            kind: match b.u32(12)? {
                0 => QueryKind::Addr,
                1 => QueryKind::Path,
                2 => QueryKind::Gid,
                _ => QueryKind::Unknown,
            },
        },
        Opcode::Connect => {
            let (param, valid) = b.conn_param(0)?;
            if !valid {
                return Err(UcmaError::Invalid);
            }
            Command::Connect {
                id: b.u32(conn_param::SIZE)?,
                param,
                ece: b.ece(conn_param::SIZE + 8)?,
            }
        }
        Opcode::Listen => Command::Listen {
            id: b.u32(0)?,
            backlog: b.u32(4)?,
        },
        Opcode::Accept => {
            let (param, valid) = b.conn_param(8)?;
            Command::Accept {
                uid: b.u64(0)?,
                id: b.u32(8 + conn_param::SIZE)?,
                param: valid.then_some(param),
                ece: b.ece(8 + conn_param::SIZE + 8)?,
            }
        }
        Opcode::Reject => {
            let reason = match b.u8(5)? {
                0 => REJ_CONSUMER_DEFINED,
                r @ (REJ_CONSUMER_DEFINED | REJ_VENDOR_OPTION_NOT_SUPPORTED) => r,
                _ => return Err(UcmaError::Invalid),
            };
            Command::Reject {
                id: b.u32(0)?,
                reason,
                private_data: PrivateData::from_buffer(b.array(8)?, b.u8(4)?),
            }
        }
        Opcode::Disconnect => Command::Disconnect { id: b.u32(0)? },
        Opcode::InitQpAttr => {
            let qp_state = b.u32(12)?;
            if qp_state > IB_QPS_ERR {
                return Err(UcmaError::Invalid);
            }
            Command::InitQpAttr {
                response: b.u64(0)?,
                id: b.u32(8)?,
                qp_state: qp_state as u8,
            }
        }
        Opcode::GetEvent => Command::GetEvent {
            response: b.u64(0)?,
        },
        Opcode::SetOption => {
            let opt = SetOption {
                optval: b.u64(0)?,
                id: b.u32(8)?,
                level: b.u32(12)?,
                optname: b.u32(16)?,
                optlen: b.u32(20)?,
            };
            if opt.optlen > MAX_OPTION_LEN {
                return Err(UcmaError::Invalid);
            }
            Command::SetOption(opt)
        }
        Opcode::Notify => Command::Notify {
            id: b.u32(0)?,
            event: b.u32(4)?,
        },
        Opcode::JoinIpMcast => {
            let addr = b.in6_addr(16)?;
            if out_len < response::CREATE_ID {
                return Err(UcmaError::NoSpace);
            }
            Command::Join {
                response: b.u64(0)?,
                uid: b.u64(8)?,
                id: b.u32(16 + SOCKADDR_IN6_SIZE)?,
                addr,
                mode: JoinMode::FullMember,
            }
        }
        Opcode::JoinMcast => {
            let storage = b.storage(24)?;
            if sockaddr::size_within(storage, SOCKADDR_STORAGE_SIZE) == 0 {
                return Err(UcmaError::Invalid);
            }
            if out_len < response::CREATE_ID {
                return Err(UcmaError::NoSpace);
            }
            let addr = sized_addr(storage, b.u16(20)?)?;
            let mode = match b.u16(22)? {
                0 => JoinMode::FullMember,
                1 => JoinMode::SendOnlyFullMember,
                _ => return Err(UcmaError::Invalid),
            };
            Command::Join {
                response: b.u64(0)?,
                uid: b.u64(8)?,
                id: b.u32(16)?,
                addr,
                mode,
            }
        }
        Opcode::MigrateId => Command::MigrateId {
            response: b.u64(0)?,
            id: b.u32(8)?,
            fd: b.u32(12)?,
        },
        Opcode::GetOption => return Err(UcmaError::NotImplemented),
    })
}

/// The whole path from the bytes after the header: how much to read, then
/// the command (for callers that already hold the body, such as tests and
/// the fuzzer).
pub fn parse_body(header: &Header, body: &[u8]) -> Result<Command, UcmaError> {
    let want = header.op.input_len(header)?;
    let got = body.get(..want).ok_or(UcmaError::Invalid)?;
    parse(header, got)
}

// The offsets above assume these sizes; a layout change must revisit them.
const _: () = assert!(input::CREATE_ID == 24 && input::BIND == 136 && input::JOIN_MCAST == 152);
