// SPDX-License-Identifier: GPL-2.0

//! rdma_ucm commands as librdmacm 44 writes them (`librdmacm/cma.c`,
//! built here from the uapi struct layouts with their own offsets), read
//! by the core's parser; and the errors 6.12's ucma.c gives for misuse.

use rcm_core::rdma_cm::{PortSpace, RdmaQpType, SockAddr};
use rcm_core::ucma::command::{parse_body, QueryKind};
use rcm_core::ucma::{Command, Ece, Header, JoinMode, UcmaError, UserAddr};

const AF_INET: u16 = 2;
const AF_INET6: u16 = 10;
const AF_IB: u16 = 27;

/// A command being written: header, then the body at its C offsets.
struct Write {
    buf: Vec<u8>,
}

impl Write {
    fn new(cmd: u32, body_len: usize, out: u16) -> Self {
        let mut buf = vec![0u8; 8 + body_len];
        buf[..4].copy_from_slice(&cmd.to_ne_bytes());
        buf[4..6].copy_from_slice(&(body_len as u16).to_ne_bytes());
        buf[6..8].copy_from_slice(&out.to_ne_bytes());
        Write { buf }
    }
    fn put(mut self, at: usize, bytes: &[u8]) -> Self {
        self.buf[8 + at..8 + at + bytes.len()].copy_from_slice(bytes);
        self
    }
    fn u8(self, at: usize, v: u8) -> Self {
        self.put(at, &[v])
    }
    fn u16(self, at: usize, v: u16) -> Self {
        self.put(at, &v.to_ne_bytes())
    }
    fn u32(self, at: usize, v: u32) -> Self {
        self.put(at, &v.to_ne_bytes())
    }
    fn u64(self, at: usize, v: u64) -> Self {
        self.put(at, &v.to_ne_bytes())
    }
    /// `struct sockaddr_in` at `at`.
    fn sin(self, at: usize, ip: [u8; 4], port: u16) -> Self {
        self.u16(at, AF_INET)
            .put(at + 2, &port.to_be_bytes())
            .put(at + 4, &ip)
    }
    /// `struct sockaddr_in6` at `at`.
    fn sin6(self, at: usize, ip: [u8; 16], port: u16, scope: u32) -> Self {
        self.u16(at, AF_INET6)
            .put(at + 2, &port.to_be_bytes())
            .put(at + 8, &ip)
            .u32(at + 24, scope)
    }
    /// `struct sockaddr_ib` at `at`.
    fn sib(self, at: usize, gid: [u8; 16], sid: u64, mask: u64) -> Self {
        self.u16(at, AF_IB)
            .put(at + 2, &0xffffu16.to_be_bytes())
            .put(at + 8, &gid)
            .put(at + 24, &sid.to_be_bytes())
            .put(at + 32, &mask.to_be_bytes())
    }
    /// Sets the header's `in` (a caller that states less than it sends).
    fn in_len(mut self, v: u16) -> Self {
        self.buf[4..6].copy_from_slice(&v.to_ne_bytes());
        self
    }
    fn parse(&self) -> Result<Command, UcmaError> {
        let raw: [u8; 8] = self.buf[..8].try_into().unwrap();
        let h = Header::parse(self.buf.len(), &raw)?;
        parse_body(&h, &self.buf[8..])
    }
}

const V4: [u8; 4] = [10, 0, 0, 2];
const LL6: [u8; 16] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7];

#[test]
fn create_id_maps_port_spaces_to_qp_types() {
    let create = |ps: u16, qpt: u8| {
        Write::new(0, 24, 4)
            .u64(0, 0xfeed)
            .u64(8, 0x1000)
            .u16(16, ps)
            .u8(18, qpt)
    };
    let cases = [
        (0x106, 0, PortSpace::Tcp, RdmaQpType::Rc),
        (0x111, 0, PortSpace::Udp, RdmaQpType::Ud),
        (0x002, 0, PortSpace::Ipoib, RdmaQpType::Ud),
        (0x13F, 2, PortSpace::Ib, RdmaQpType::Rc),
        (0x13F, 3, PortSpace::Ib, RdmaQpType::Uc),
        (0x13F, 4, PortSpace::Ib, RdmaQpType::Ud),
    ];
    for (ps, qpt, port_space, qp_type) in cases {
        assert_eq!(
            create(ps, qpt).parse(),
            Ok(Command::CreateId {
                uid: 0xfeed,
                response: 0x1000,
                port_space,
                qp_type
            })
        );
    }
    assert_eq!(create(0x107, 0).parse(), Err(UcmaError::Invalid));
    // QP types rcm's rdma_cm does not connect (XRC initiator and target,
    // raw packet) are refused, as its rdma_create_user_id refuses them to
    // the in-tree rdma_ucm, not taken as RC.
    for qpt in [0, 1, 8, 9, 10] {
        assert_eq!(create(0x13F, qpt).parse(), Err(UcmaError::Invalid), "{qpt}");
    }
    // The response is checked before the input is read.
    let short = Write::new(0, 24, 3).u16(16, 0x107);
    assert_eq!(short.parse(), Err(UcmaError::NoSpace));
}

#[test]
fn legacy_bind_takes_ip_families_only() {
    let bind4 = Write::new(2, 40, 0).sin(8, V4, 7471).u32(36, 5);
    assert_eq!(
        bind4.parse(),
        Ok(Command::Bind {
            id: 5,
            addr: SockAddr::V4 {
                addr: V4,
                port: 7471
            }
        })
    );
    let bind6 = Write::new(2, 40, 0).sin6(8, LL6, 1, 3).u32(36, 5);
    assert!(matches!(
        bind6.parse(),
        Ok(Command::Bind {
            addr: SockAddr::V6 { scope_id: 3, .. },
            ..
        })
    ));
    // AF_IB does not fit the legacy struct's sockaddr_in6; 0 and unknown
    // families are refused too.
    for family in [AF_IB, 0, 1] {
        let w = Write::new(2, 40, 0).u16(8, family);
        assert_eq!(w.parse(), Err(UcmaError::Invalid), "family {family}");
    }
}

#[test]
fn bind_checks_the_stated_size_and_reserved() {
    let gid = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 1];
    let bind = |size: u16| {
        Write::new(20, 136, 0).u32(0, 9).u16(4, size).sib(
            8,
            gid,
            0x0000_0000_0106_0000,
            0xFFFF_FFFF_FFFF_0000,
        )
    };
    // The AF_IB probe librdmacm makes at start-up.
    assert!(matches!(
        bind(48).parse(),
        Ok(Command::Bind {
            id: 9,
            addr: SockAddr::Ib {
                sid: 0x0106_0000,
                ..
            }
        })
    ));
    for size in [0, 28, 47, 49, 128] {
        assert_eq!(bind(size).parse(), Err(UcmaError::Invalid), "size {size}");
    }
    assert_eq!(bind(48).u16(6, 1).parse(), Err(UcmaError::Invalid));
}

#[test]
fn resolve_sources_unspecified_checked_or_passed_on() {
    let ip = Write::new(3, 64, 0)
        .sin(28, V4, 7471)
        .u32(56, 4)
        .u32(60, 2000);
    assert_eq!(
        ip.parse(),
        Ok(Command::ResolveAddr {
            id: 4,
            src: UserAddr::Unspecified,
            dst: SockAddr::V4 {
                addr: V4,
                port: 7471
            },
            timeout_ms: 2000
        })
    );
    // A legacy source of an unknown family is refused, as is a missing
    // destination.
    assert_eq!(ip_with_src_family(9).parse(), Err(UcmaError::Invalid));
    assert_eq!(Write::new(3, 64, 0).parse(), Err(UcmaError::Invalid));

    let addr = |src_size: u16, dst_size: u16| {
        Write::new(21, 272, 0)
            .u32(0, 4)
            .u32(4, 100)
            .u16(8, src_size)
            .u16(10, dst_size)
            .sin(16, [10, 0, 0, 1], 0)
            .sin6(144, LL6, 20049, 2)
    };
    assert!(matches!(
        addr(16, 28).parse(),
        Ok(Command::ResolveAddr {
            src: UserAddr::Addr(SockAddr::V4 { .. }),
            dst: SockAddr::V6 { port: 20049, .. },
            ..
        })
    ));
    // A zero source size leaves the source unchecked: passed on as written.
    assert!(matches!(
        addr(0, 28).parse(),
        Ok(Command::ResolveAddr {
            src: UserAddr::Addr(SockAddr::V4 { .. }),
            ..
        })
    ));
    assert_eq!(
        addr(0, 28).u16(16, 77).parse().map(|c| match c {
            Command::ResolveAddr { src, .. } => src,
            _ => unreachable!(),
        }),
        Ok(UserAddr::Unsupported(77))
    );
    for (s, d) in [(28, 28), (16, 0), (16, 16), (16, 128)] {
        assert_eq!(addr(s, d).parse(), Err(UcmaError::Invalid), "{s} {d}");
    }
    assert_eq!(addr(16, 28).u32(12, 1).parse(), Err(UcmaError::Invalid));
}

fn ip_with_src_family(f: u16) -> Write {
    Write::new(3, 64, 0).u16(0, f).sin(28, V4, 1).u32(56, 4)
}

/// A CONNECT or ACCEPT conn_param at `at`.
fn conn_param(w: Write, at: usize, valid: u8) -> Write {
    w.u32(at, 0xAB_123456)
        .u32(at + 4, 0x11)
        .put(at + 8, &[0x5A; 56])
        .u8(at + 264, 56)
        .u8(at + 265, 1)
        .u8(at + 266, 4)
        .u8(at + 267, 3)
        .u8(at + 268, 1)
        .u8(at + 269, 7)
        .u8(at + 270, 6)
        .u8(at + 271, valid)
}

#[test]
fn connect_and_accept_read_ece_only_when_sent() {
    let connect = |len: usize| conn_param(Write::new(6, len, 0), 0, 1).u32(272, 3);
    let Ok(Command::Connect { id, param, ece }) = connect(280).parse() else {
        panic!("CONNECT without ECE refused");
    };
    assert_eq!((id, ece), (3, Ece::default()));
    assert_eq!(param.qp_num, 0x123456, "qp_num keeps 24 bits");
    assert_eq!(param.private_data.as_slice(), &[0x5A; 56]);
    assert!(param.srq && param.flow_control);
    assert_eq!(
        (
            param.responder_resources,
            param.initiator_depth,
            param.retry_count,
            param.rnr_retry_count
        ),
        (4, 3, 7, 6)
    );
    let with_ece = connect(288).u32(280, 0x15b3).u32(284, 9);
    assert!(matches!(
        with_ece.parse(),
        Ok(Command::Connect {
            ece: Ece {
                vendor_id: 0x15b3,
                attr_mod: 9
            },
            ..
        })
    ));
    // Shorter than the struct before ECE, or not marked valid: EINVAL.
    assert_eq!(connect(288).in_len(279).parse(), Err(UcmaError::Invalid));
    let invalid = conn_param(Write::new(6, 288, 0), 0, 0);
    assert_eq!(invalid.parse(), Err(UcmaError::Invalid));

    // ACCEPT without parameters confirms a reply (the active side's RTU).
    let accept = conn_param(Write::new(8, 296, 0), 8, 0)
        .u64(0, 77)
        .u32(280, 3);
    assert!(matches!(
        accept.parse(),
        Ok(Command::Accept {
            uid: 77,
            id: 3,
            param: None,
            ..
        })
    ));
    let accept = conn_param(Write::new(8, 288, 0), 8, 1).u32(280, 3);
    assert!(matches!(
        accept.parse(),
        Ok(Command::Accept { param: Some(_), .. })
    ));
    assert_eq!(
        conn_param(Write::new(8, 287, 0), 8, 1).parse(),
        Err(UcmaError::Invalid)
    );
}

#[test]
fn reject_allows_consumer_and_vendor_reasons_only() {
    let reject = |reason: u8| {
        Write::new(9, 264, 0)
            .u32(0, 1)
            .u8(4, 3)
            .u8(5, reason)
            .put(8, b"abc")
    };
    for (given, taken) in [(0, 28), (28, 28), (35, 35)] {
        let Ok(Command::Reject {
            reason,
            private_data,
            ..
        }) = reject(given).parse()
        else {
            panic!("reason {given} refused");
        };
        assert_eq!((reason, private_data.as_slice()), (taken, &b"abc"[..]));
    }
    for r in [1, 8, 27, 29, 255] {
        assert_eq!(reject(r).parse(), Err(UcmaError::Invalid), "reason {r}");
    }
}

#[test]
fn init_qp_attr_takes_states_up_to_err() {
    let w = |state: u32, out: u16| {
        Write::new(11, 16, out)
            .u64(0, 0x2000)
            .u32(8, 1)
            .u32(12, state)
    };
    for s in 0..=6 {
        assert!(
            matches!(w(s, 144).parse(), Ok(Command::InitQpAttr { qp_state, .. }) if u32::from(qp_state) == s)
        );
    }
    assert_eq!(w(7, 144).parse(), Err(UcmaError::Invalid));
    assert_eq!(w(2, 143).parse(), Err(UcmaError::NoSpace));
}

#[test]
fn joins_check_address_response_and_flags_in_order() {
    let ip = Write::new(16, 48, 4)
        .u64(0, 0x10)
        .u64(8, 0x20)
        .sin(16, [239, 1, 2, 3], 0)
        .u32(44, 2);
    assert_eq!(
        ip.parse(),
        Ok(Command::Join {
            response: 0x10,
            uid: 0x20,
            id: 2,
            addr: SockAddr::V4 {
                addr: [239, 1, 2, 3],
                port: 0
            },
            mode: JoinMode::FullMember
        })
    );
    assert_eq!(Write::new(16, 48, 0).parse(), Err(UcmaError::Invalid));
    let no_room = Write::new(16, 48, 3).sin(16, [239, 1, 2, 3], 0);
    assert_eq!(no_room.parse(), Err(UcmaError::NoSpace));

    let join = |size: u16, flags: u16, out: u16| {
        Write::new(22, 152, out)
            .u32(16, 2)
            .u16(20, size)
            .u16(22, flags)
            .sin6(24, LL6, 0, 0)
    };
    assert!(matches!(
        join(28, 1, 4).parse(),
        Ok(Command::Join {
            mode: JoinMode::SendOnlyFullMember,
            ..
        })
    ));
    assert_eq!(join(28, 2, 4).parse(), Err(UcmaError::Invalid));
    assert_eq!(join(16, 0, 4).parse(), Err(UcmaError::Invalid));
    // No room for the answer is found before a wrong size.
    assert_eq!(join(16, 0, 0).parse(), Err(UcmaError::NoSpace));
    assert_eq!(Write::new(22, 152, 0).parse(), Err(UcmaError::Invalid));
}

#[test]
fn the_rest_read_their_fields() {
    let q = Write::new(19, 16, 280)
        .u64(0, 0x30)
        .u32(8, 6)
        .u32(12, 2)
        .parse();
    assert!(matches!(
        q,
        Ok(Command::Query {
            kind: QueryKind::Gid,
            id: 6,
            ..
        })
    ));
    let q = Write::new(19, 16, 0).u32(12, 9).parse();
    assert!(matches!(
        q,
        Ok(Command::Query {
            kind: QueryKind::Unknown,
            ..
        })
    ));
    let so = Write::new(14, 24, 0)
        .u64(0, 0x40)
        .u32(8, 1)
        .u32(12, 0)
        .u32(16, 1)
        .u32(20, 4);
    assert!(matches!(so.parse(), Ok(Command::SetOption(o)) if o.optlen == 4 && o.optval == 0x40));
    let huge = Write::new(14, 24, 0).u32(20, (4 << 20) + 1);
    assert_eq!(huge.parse(), Err(UcmaError::Invalid));
    let m = Write::new(18, 16, 4)
        .u64(0, 0x50)
        .u32(8, 3)
        .u32(12, 17)
        .parse();
    assert_eq!(
        m,
        Ok(Command::MigrateId {
            response: 0x50,
            id: 3,
            fd: 17
        })
    );
    let l = Write::new(7, 8, 0).u32(0, 3).u32(4, 0).parse();
    assert_eq!(l, Ok(Command::Listen { id: 3, backlog: 0 }));
    assert_eq!(Write::new(13, 0, 0).parse(), Err(UcmaError::NotImplemented));
    assert_eq!(
        Write::new(17, 16, 4).u32(8, 12).parse(),
        Ok(Command::Leave {
            response: 0,
            membership: 12
        })
    );
}

/// Every command, every header length, every body cut: an answer, never a
/// panic; and a command that parses keeps its addresses exactly.
#[test]
fn any_bytes_give_an_answer() {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut parsed = 0;
    for round in 0..20_000 {
        let op = (round % 24) as u32;
        let len = 8 + (next() % 320) as usize;
        let mut w = Write::new(op, len - 8, (next() % 400) as u16);
        for b in w.buf[8..].iter_mut() {
            // Mostly small values so that families and flags hit.
            *b = if next() % 4 == 0 {
                next() as u8
            } else {
                (next() % 3) as u8
            };
        }
        if len >= 10 && next() % 3 == 0 {
            w = w.u16(0, [AF_INET, AF_INET6, AF_IB][(next() % 3) as usize]);
        }
        if let Ok(cmd) = w.parse() {
            parsed += 1;
            if let Command::Bind { addr, .. } | Command::Join { addr, .. } = cmd {
                let mut out = [0u8; 128];
                let n = rcm_core::rdma_cm::sockaddr::write(&addr, &mut out).unwrap();
                assert_eq!(rcm_core::rdma_cm::sockaddr::read(&out[..n]), Some(addr));
            }
        }
    }
    assert!(
        parsed > 1000,
        "the generator reaches the parsers ({parsed})"
    );
}
