// SPDX-License-Identifier: GPL-2.0

//! The command frame: every `write()` to the device is a header (`cmd`,
//! `in`, `out`) followed by the command's input struct. What is checked
//! before a handler runs, and how many bytes of input each handler reads,
//! follow 6.12's `ucma_write` and handlers exactly, errors included.

use super::layout::{input, response};
use super::UcmaError;

/// A command number (`RDMA_USER_CM_CMD_*`), in number order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
pub enum Opcode {
    /// Create an id in a port space.
    CreateId,
    /// Destroy an id; answers the events reported on it.
    DestroyId,
    /// Bind to an IPv4/IPv6 address (legacy).
    BindIp,
    /// Resolve IPv4/IPv6 addresses (legacy).
    ResolveIp,
    /// Resolve the route of an address-resolved id.
    ResolveRoute,
    /// The id's addresses, device and paths (legacy).
    QueryRoute,
    /// Connect.
    Connect,
    /// Listen.
    Listen,
    /// Accept a request, or confirm a reply (active side, no parameters).
    Accept,
    /// Reject a request.
    Reject,
    /// Disconnect.
    Disconnect,
    /// The QP attributes for a state transition.
    InitQpAttr,
    /// Take the file's next event.
    GetEvent,
    /// Read an option: no handler in the in-tree module.
    GetOption,
    /// Set an option.
    SetOption,
    /// Tell rdma_cm of a QP event.
    Notify,
    /// Join an IPv4/IPv6 multicast group (legacy).
    JoinIpMcast,
    /// Leave a multicast group.
    LeaveMcast,
    /// Move an id to this file from another.
    MigrateId,
    /// The id's addresses, GIDs or paths (AF_IB mode).
    Query,
    /// Bind to any address family (AF_IB mode).
    Bind,
    /// Resolve addresses of any family (AF_IB mode).
    ResolveAddr,
    /// Join a multicast group, full or send-only member (AF_IB mode).
    JoinMcast,
}

/// Every command, by number.
const OPCODES: [Opcode; 23] = [
    Opcode::CreateId,
    Opcode::DestroyId,
    Opcode::BindIp,
    Opcode::ResolveIp,
    Opcode::ResolveRoute,
    Opcode::QueryRoute,
    Opcode::Connect,
    Opcode::Listen,
    Opcode::Accept,
    Opcode::Reject,
    Opcode::Disconnect,
    Opcode::InitQpAttr,
    Opcode::GetEvent,
    Opcode::GetOption,
    Opcode::SetOption,
    Opcode::Notify,
    Opcode::JoinIpMcast,
    Opcode::LeaveMcast,
    Opcode::MigrateId,
    Opcode::Query,
    Opcode::Bind,
    Opcode::ResolveAddr,
    Opcode::JoinMcast,
];

impl Opcode {
    /// The command with number `raw`.
    pub fn from_raw(raw: u32) -> Option<Self> {
        OPCODES.get(usize::try_from(raw).ok()?).copied()
    }

    /// The command's number.
    pub const fn raw(self) -> u32 {
        self as u32
    }

    /// The size of the command's input struct.
    pub const fn input_size(self) -> usize {
        match self {
            Opcode::CreateId => input::CREATE_ID,
            Opcode::DestroyId | Opcode::LeaveMcast => input::DESTROY_ID,
            Opcode::BindIp => input::BIND_IP,
            Opcode::ResolveIp => input::RESOLVE_IP,
            Opcode::ResolveRoute => input::RESOLVE_ROUTE,
            Opcode::QueryRoute | Opcode::Query => input::QUERY,
            Opcode::Connect => input::CONNECT,
            Opcode::Listen => input::LISTEN,
            Opcode::Accept => input::ACCEPT,
            Opcode::Reject => input::REJECT,
            Opcode::Disconnect => input::DISCONNECT,
            Opcode::InitQpAttr => input::INIT_QP_ATTR,
            Opcode::GetEvent => input::GET_EVENT,
            Opcode::GetOption => 0,
            Opcode::SetOption => input::SET_OPTION,
            Opcode::Notify => input::NOTIFY,
            Opcode::JoinIpMcast => input::JOIN_IP_MCAST,
            Opcode::MigrateId => input::MIGRATE_ID,
            Opcode::Bind => input::BIND,
            Opcode::ResolveAddr => input::RESOLVE_ADDR,
            Opcode::JoinMcast => input::JOIN_MCAST,
        }
    }

    /// The least `out` the handler takes before it reads its input, if
    /// it checks then (the queries and joins check later).
    const fn response_needed_first(self) -> Option<usize> {
        match self {
            Opcode::CreateId => Some(response::CREATE_ID),
            Opcode::DestroyId | Opcode::LeaveMcast => Some(response::EVENTS_REPORTED),
            Opcode::QueryRoute => Some(response::QUERY_ROUTE_MIN),
            Opcode::InitQpAttr => Some(response::QP_ATTR),
            Opcode::GetEvent => Some(response::EVENT_MIN),
            _ => None,
        }
    }

    /// How many bytes of input the handler reads, or the error it gives
    /// before reading. Commands whose struct grew (CONNECT and ACCEPT
    /// gained ECE) read what the caller sent, down to the end of their
    /// older layout; the others read their whole struct whatever `in`
    /// says, as the in-tree module does (a short buffer faults).
    pub fn input_len(self, header: &Header) -> Result<usize, UcmaError> {
        if let Some(need) = self.response_needed_first() {
            if usize::from(header.out_len) < need {
                return Err(UcmaError::NoSpace);
            }
        }
        let full = self.input_size();
        match self {
            Opcode::Connect | Opcode::Accept => {
                let oldest = full - super::layout::ECE_SIZE;
                let sent = usize::from(header.in_len);
                if sent < oldest {
                    return Err(UcmaError::Invalid);
                }
                Ok(sent.min(full))
            }
            _ => Ok(full),
        }
    }
}

/// A parsed command header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The command.
    pub op: Opcode,
    /// The input length the caller states.
    pub in_len: u16,
    /// The response length the caller offers.
    pub out_len: u16,
}

impl Header {
    /// Checks a `write()` of `write_len` bytes whose first
    /// [`input::HEADER`] bytes are `raw`, in `ucma_write`'s order.
    pub fn parse(write_len: usize, raw: &[u8; input::HEADER]) -> Result<Self, UcmaError> {
        let [c0, c1, c2, c3, i0, i1, o0, o1] = *raw;
        let cmd = u32::from_ne_bytes([c0, c1, c2, c3]);
        let in_len = u16::from_ne_bytes([i0, i1]);
        let out_len = u16::from_ne_bytes([o0, o1]);
        let op = Opcode::from_raw(cmd).ok_or(UcmaError::Invalid)?;
        if usize::from(in_len) + input::HEADER > write_len {
            return Err(UcmaError::Invalid);
        }
        if op == Opcode::GetOption {
            return Err(UcmaError::NotImplemented);
        }
        Ok(Header {
            op,
            in_len,
            out_len,
        })
    }

    /// The error for a `write()` too short to hold a header.
    pub const fn too_short(write_len: usize) -> Option<UcmaError> {
        if write_len < input::HEADER {
            Some(UcmaError::Invalid)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(cmd: u32, inl: u16, out: u16) -> [u8; 8] {
        let mut r = [0u8; 8];
        r[..4].copy_from_slice(&cmd.to_ne_bytes());
        r[4..6].copy_from_slice(&inl.to_ne_bytes());
        r[6..].copy_from_slice(&out.to_ne_bytes());
        r
    }

    #[test]
    fn numbers_round_trip() {
        for n in 0..23 {
            assert_eq!(Opcode::from_raw(n).map(Opcode::raw), Some(n));
        }
        assert_eq!(Opcode::from_raw(23), None);
        assert_eq!(Opcode::from_raw(u32::MAX), None);
    }

    #[test]
    fn header_checks_in_ucma_write_order() {
        assert_eq!(Header::too_short(7), Some(UcmaError::Invalid));
        assert_eq!(Header::too_short(8), None);
        assert_eq!(Header::parse(100, &raw(23, 0, 0)), Err(UcmaError::Invalid));
        // `in` larger than the write: EINVAL even for GET_OPTION.
        assert_eq!(Header::parse(8, &raw(13, 1, 0)), Err(UcmaError::Invalid));
        assert_eq!(
            Header::parse(8, &raw(13, 0, 0)),
            Err(UcmaError::NotImplemented)
        );
        let h = Header::parse(32, &raw(0, 24, 4)).unwrap();
        assert_eq!((h.op, h.in_len, h.out_len), (Opcode::CreateId, 24, 4));
    }

    #[test]
    fn grown_structs_read_what_was_sent() {
        let h = |op: Opcode, inl, out| Header {
            op,
            in_len: inl,
            out_len: out,
        };
        assert_eq!(
            Opcode::Connect.input_len(&h(Opcode::Connect, 279, 0)),
            Err(UcmaError::Invalid)
        );
        assert_eq!(
            Opcode::Connect.input_len(&h(Opcode::Connect, 280, 0)),
            Ok(280)
        );
        assert_eq!(
            Opcode::Connect.input_len(&h(Opcode::Connect, 4000, 0)),
            Ok(288)
        );
        assert_eq!(
            Opcode::Accept.input_len(&h(Opcode::Accept, 288, 0)),
            Ok(288)
        );
        assert_eq!(
            Opcode::Accept.input_len(&h(Opcode::Accept, 296, 0)),
            Ok(296)
        );
        // Others read their whole struct whatever `in` says.
        assert_eq!(Opcode::Listen.input_len(&h(Opcode::Listen, 0, 0)), Ok(8));
        // Responses checked before the input is read.
        assert_eq!(
            Opcode::GetEvent.input_len(&h(Opcode::GetEvent, 8, 323)),
            Err(UcmaError::NoSpace)
        );
        assert_eq!(
            Opcode::GetEvent.input_len(&h(Opcode::GetEvent, 8, 324)),
            Ok(8)
        );
        assert_eq!(
            Opcode::QueryRoute.input_len(&h(Opcode::QueryRoute, 16, 199)),
            Err(UcmaError::NoSpace)
        );
        assert_eq!(Opcode::Query.input_len(&h(Opcode::Query, 16, 0)), Ok(16));
    }
}
