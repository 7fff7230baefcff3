// SPDX-License-Identifier: GPL-2.0

//! The ports rdma_cm ids hold, per network namespace and port space, and
//! the rules 6.12's cma.c binds by: a given port is shared only as
//! REUSEADDR, AFONLY and the addresses allow (`cma_check_port`); port 0
//! takes the first usable port from a random start in the namespace's
//! local port range (`cma_alloc_any_port`), never the one taken last.
//!
//! Each port's holders form a list threaded through their records (as the
//! C code's `hlist`), so a holder costs one record and a port one head.
//! The records sit in the slots of the holders' rdma_cm ids (as the ids
//! do, `id_slots.rs`): binding and unbinding walk one tree, the ports'.

use super::addr::SockAddr;
use super::endpoint::RdmaId;
use super::port_space::PortSpace;
use crate::cm::store::{Collections, OrderedMap, SlotVec};

/// Identifies a network namespace (chosen by the embedding).
pub type NetId = u64;

/// Identifies a holder: an rdma_cm id's number ([`RdmaId`]), whose slot
/// keeps its record.
pub type HolderId = u64;

/// Ports below this need `CAP_NET_BIND_SERVICE` (`PROT_SOCK`).
pub const PRIVILEGED_PORTS: u16 = 1024;

/// A port of one port space in one namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PortKey {
    /// The namespace.
    pub net: NetId,
    /// The port space.
    pub ps: PortSpace,
    /// The port.
    pub port: u16,
}

/// What a holder asks to bind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BindRequest {
    /// The namespace.
    pub net: NetId,
    /// The port space.
    pub ps: PortSpace,
    /// The source address; port 0 asks for any port.
    pub src: SockAddr,
    /// The destination, if resolving one (ephemeral ports are unique per
    /// destination).
    pub dst: Option<SockAddr>,
    /// `RDMA_OPTION_ID_REUSEADDR`.
    pub reuseaddr: bool,
    /// `RDMA_OPTION_ID_AFONLY`.
    pub afonly: bool,
    /// The caller may bind ports below [`PRIVILEGED_PORTS`].
    pub privileged: bool,
}

/// Why a bind failed (6.12's errnos).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindError {
    /// The address is taken (`-EADDRINUSE`).
    InUse,
    /// No port can be had, or a wildcard conflicts (`-EADDRNOTAVAIL`).
    NotAvailable,
    /// A privileged port without the capability (`-EACCES`).
    NoPermission,
    /// The holder already holds a port (`-EINVAL`).
    AlreadyBound,
    /// No memory for the records (`-ENOMEM`).
    NoMemory,
}

/// A holder's record.
#[derive(Clone, Copy, Debug)]
struct Holder {
    /// Whose record it is (its slot may be another id's later).
    id: HolderId,
    port: PortKey,
    src: SockAddr,
    dst: Option<SockAddr>,
    reuseaddr: bool,
    afonly: bool,
    /// The next holder of the same port.
    next: Option<HolderId>,
}

/// Every bound port, per namespace and port space.
pub struct PortTable<C: Collections> {
    /// Each port's first holder.
    heads: C::Map<PortKey, HolderId>,
    /// By the slot of the holder's id.
    holders: C::Vec<Option<Holder>>,
    /// The port an ephemeral bind took last (6.12 keeps one for all).
    last_ephemeral: Option<u16>,
}

impl<C: Collections> Default for PortTable<C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Collections> PortTable<C> {
    /// No port bound.
    pub fn new() -> Self {
        PortTable {
            heads: OrderedMap::new_empty(),
            holders: SlotVec::new_empty(),
            last_ephemeral: None,
        }
    }

    /// Binds `holder` as `req` asks; returns the port it got. For port 0
    /// the search starts at `random` folded into `local_ports` (an
    /// inclusive range, the namespace's `ip_local_port_range`).
    pub fn bind(
        &mut self,
        holder: HolderId,
        req: &BindRequest,
        local_ports: (u16, u16),
        random: u32,
    ) -> Result<u16, BindError> {
        if self.holder(holder).is_some() {
            return Err(BindError::AlreadyBound);
        }
        if !req.src.is_any_port() {
            let port = req.src.port();
            if port < PRIVILEGED_PORTS && !req.privileged {
                return Err(BindError::NoPermission);
            }
            let key = PortKey {
                net: req.net,
                ps: req.ps,
                port,
            };
            self.check_shared(key, holder, req, req.reuseaddr)?;
            return self.add(holder, key, req).map(|()| port);
        }
        let (low, high) = (
            local_ports.0.min(local_ports.1),
            local_ports.0.max(local_ports.1),
        );
        let count = u32::from(high - low) + 1;
        let start = u32::from(low) + random % count;
        for step in 0..count {
            let port = low + ((start - u32::from(low) + step) % count) as u16;
            if self.last_ephemeral == Some(port) {
                continue;
            }
            let key = PortKey {
                net: req.net,
                ps: req.ps,
                port,
            };
            // One look at the port: its holders, if any, are checked from
            // the head it found and the new holder goes before it.
            let head = self.heads.get(&key).copied();
            if head.is_some_and(|h| !self.unique(h, holder, req)) {
                continue;
            }
            self.add_before(head, holder, key, req)?;
            self.last_ephemeral = Some(port);
            return Ok(port);
        }
        Err(BindError::NotAvailable)
    }

    /// Whether `holder` may listen on the port it holds: as a bind without
    /// REUSEADDR (6.12 checks the port again when an id listens).
    pub fn check_listen(&self, holder: HolderId) -> Result<(), BindError> {
        let Some(h) = self.holder(holder) else {
            return Ok(());
        };
        let req = BindRequest {
            net: h.port.net,
            ps: h.port.ps,
            src: h.src,
            dst: h.dst,
            reuseaddr: false,
            afonly: h.afonly,
            privileged: true,
        };
        self.check_shared(h.port, holder, &req, false)
    }

    /// Releases the holder's port (the port goes when its last holder
    /// does); `None` if it held none.
    pub fn unbind(&mut self, holder: HolderId) -> Option<PortKey> {
        let h = self.take_holder(holder)?;
        // One walk of the ports: the head is this holder (most ports have
        // one) and goes, or gives way to the next, or stays.
        let head = self.heads.update_with(&h.port, |head| {
            let was = *head;
            match (was == holder, h.next) {
                (true, Some(next)) => {
                    *head = next;
                    (was, false)
                }
                (true, None) => (was, true),
                (false, _) => (was, false),
            }
        });
        if head.is_some_and(|head| head != holder) {
            let mut cur = head;
            while let Some(id) = cur {
                let Some(prev) = self.holder_mut(id) else {
                    break;
                };
                if prev.next == Some(holder) {
                    prev.next = h.next;
                    break;
                }
                cur = prev.next;
            }
        }
        Some(h.port)
    }

    /// The port a holder holds.
    pub fn port_of(&self, holder: HolderId) -> Option<PortKey> {
        self.holder(holder).map(|h| h.port)
    }

    /// Holders of `port`, first bound last.
    pub fn holders_of(&self, port: PortKey) -> impl Iterator<Item = HolderId> + '_ {
        self.holders_from(self.heads.get(&port).copied())
    }

    /// The holders of a port from its first holder `head` on.
    fn holders_from(&self, head: Option<HolderId>) -> impl Iterator<Item = HolderId> + '_ {
        let mut cur = head;
        core::iter::from_fn(move || {
            let id = cur?;
            cur = self.holder(id).and_then(|h| h.next);
            Some(id)
        })
    }

    /// Number of bound ports.
    pub fn ports(&self) -> usize {
        self.heads.len()
    }

    /// `cma_check_port`: may `req` share `key` with its holders?
    fn check_shared(
        &self,
        key: PortKey,
        holder: HolderId,
        req: &BindRequest,
        reuseaddr: bool,
    ) -> Result<(), BindError> {
        for id in self.holders_of(key).filter(|id| *id != holder) {
            let Some(cur) = self.holder(id) else {
                continue;
            };
            if reuseaddr && cur.reuseaddr {
                continue;
            }
            if req.afonly && cur.afonly && req.src.family() != cur.src.family() {
                continue;
            }
            if req.src.is_any() || cur.src.is_any() {
                return Err(BindError::NotAvailable);
            }
            if req.src.same_addr(&cur.src) {
                return Err(BindError::InUse);
            }
        }
        Ok(())
    }

    /// `cma_port_is_unique`: does `req` differ from every holder of the
    /// port whose first holder is `head` in destination port, source
    /// address or destination address? An unset destination is a wildcard
    /// (6.12 zeroes it when it binds), so it differs from nothing.
    fn unique(&self, head: HolderId, holder: HolderId, req: &BindRequest) -> bool {
        let addrs_differ = |a: Option<SockAddr>, b: Option<SockAddr>| match (a, b) {
            (Some(a), Some(b)) => !a.is_any() && !b.is_any() && !a.same_addr(&b),
            _ => false,
        };
        let port = |a: Option<SockAddr>| a.map_or(0, |a| a.port());
        self.holders_from(Some(head))
            .filter(|id| *id != holder)
            .filter_map(|id| self.holder(id))
            .all(|cur| {
                let (p, q) = (port(req.dst), port(cur.dst));
                (p != 0 && q != 0 && p != q)
                    || addrs_differ(Some(req.src), Some(cur.src))
                    || addrs_differ(req.dst, cur.dst)
            })
    }

    /// Records `holder` at the head of `key`'s list.
    fn add(&mut self, holder: HolderId, key: PortKey, req: &BindRequest) -> Result<(), BindError> {
        let head = self.heads.get(&key).copied();
        self.add_before(head, holder, key, req)
    }

    /// Records `holder` at the head of `key`'s list, whose head is `next`.
    fn add_before(
        &mut self,
        next: Option<HolderId>,
        holder: HolderId,
        key: PortKey,
        req: &BindRequest,
    ) -> Result<(), BindError> {
        let record = Holder {
            id: holder,
            port: key,
            src: req.src.with_port(key.port),
            dst: req.dst,
            reuseaddr: req.reuseaddr,
            afonly: req.afonly,
            next,
        };
        let entry = self
            .holders
            .get_mut_growing(RdmaId(holder).slot(), || None)
            .map_err(|_| BindError::NoMemory)?;
        if entry.is_some() {
            // Another live id in the slot cannot be: ids own their slots.
            return Err(BindError::AlreadyBound);
        }
        *entry = Some(record);
        match next {
            Some(_) => {
                if let Some(head) = self.heads.get_mut(&key) {
                    *head = holder;
                }
                Ok(())
            }
            None => match self.heads.try_insert(key, holder) {
                Ok(()) => Ok(()),
                Err(_) => {
                    self.take_holder(holder);
                    Err(BindError::NoMemory)
                }
            },
        }
    }

    /// The record of `holder`.
    fn holder(&self, holder: HolderId) -> Option<&Holder> {
        self.holders
            .get(RdmaId(holder).slot())?
            .as_ref()
            .filter(|h| h.id == holder)
    }

    /// The record of `holder`, mutably.
    fn holder_mut(&mut self, holder: HolderId) -> Option<&mut Holder> {
        self.holders
            .get_mut(RdmaId(holder).slot())?
            .as_mut()
            .filter(|h| h.id == holder)
    }

    /// Takes the record of `holder` out.
    fn take_holder(&mut self, holder: HolderId) -> Option<Holder> {
        let entry = self.holders.get_mut(RdmaId(holder).slot())?;
        if entry.as_ref().is_some_and(|h| h.id == holder) {
            entry.take()
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::cm::store::btree::Std;
    use std::{vec, vec::Vec};

    const RANGE: (u16, u16) = (32768, 32770);

    fn v4(last: u8, port: u16) -> SockAddr {
        SockAddr::V4 {
            addr: if last == 0 { [0; 4] } else { [10, 0, 0, last] },
            port,
        }
    }

    fn req(src: SockAddr) -> BindRequest {
        BindRequest {
            net: 1,
            ps: PortSpace::Tcp,
            src,
            dst: None,
            reuseaddr: false,
            afonly: false,
            privileged: false,
        }
    }

    #[test]
    fn a_port_is_shared_as_6_12_allows() {
        let mut t = PortTable::<Std>::new();
        assert_eq!(t.bind(1, &req(v4(1, 7174)), RANGE, 0), Ok(7174));
        // same address: in use; a wildcard beside it: not available
        assert_eq!(
            t.bind(2, &req(v4(1, 7174)), RANGE, 0),
            Err(BindError::InUse)
        );
        assert_eq!(
            t.bind(2, &req(v4(0, 7174)), RANGE, 0),
            Err(BindError::NotAvailable)
        );
        // another address: fine
        assert_eq!(t.bind(2, &req(v4(2, 7174)), RANGE, 0), Ok(7174));
        // both REUSEADDR: fine; one of them only: not
        let mut t = PortTable::<Std>::new();
        let reuse = BindRequest {
            reuseaddr: true,
            ..req(v4(1, 7174))
        };
        assert_eq!(t.bind(1, &reuse, RANGE, 0), Ok(7174));
        assert_eq!(t.bind(2, &reuse, RANGE, 0), Ok(7174));
        assert_eq!(
            t.bind(3, &req(v4(1, 7174)), RANGE, 0),
            Err(BindError::InUse)
        );
        // but a listener must hold it alone
        assert_eq!(t.check_listen(1), Err(BindError::InUse));
        // another namespace or port space is another table
        assert_eq!(
            t.bind(
                4,
                &BindRequest {
                    net: 2,
                    ..req(v4(1, 7174))
                },
                RANGE,
                0
            ),
            Ok(7174)
        );
        let udp = BindRequest {
            ps: PortSpace::Udp,
            ..req(v4(1, 7174))
        };
        assert_eq!(t.bind(5, &udp, RANGE, 0), Ok(7174));
        // AFONLY on both, families differ: no conflict even on wildcards
        let mut t = PortTable::<Std>::new();
        let only4 = BindRequest {
            afonly: true,
            ..req(v4(0, 9000))
        };
        let only6 = BindRequest {
            afonly: true,
            src: SockAddr::V6 {
                addr: [0; 16],
                port: 9000,
                flowinfo: 0,
                scope_id: 0,
            },
            ..req(v4(0, 9000))
        };
        assert_eq!(t.bind(1, &only4, RANGE, 0), Ok(9000));
        assert_eq!(t.bind(2, &only6, RANGE, 0), Ok(9000));
        assert_eq!(t.check_listen(1), Ok(()));
    }

    #[test]
    fn privileged_ports_and_rebinding() {
        let mut t = PortTable::<Std>::new();
        assert_eq!(
            t.bind(1, &req(v4(1, 80)), RANGE, 0),
            Err(BindError::NoPermission)
        );
        let root = BindRequest {
            privileged: true,
            ..req(v4(1, 80))
        };
        assert_eq!(t.bind(1, &root, RANGE, 0), Ok(80));
        assert_eq!(
            t.bind(1, &req(v4(1, 9000)), RANGE, 0),
            Err(BindError::AlreadyBound)
        );
    }

    #[test]
    fn ephemeral_ports_from_a_random_start_never_the_last_one() {
        let mut t = PortTable::<Std>::new();
        // random 1 starts at 32769; a port just given up is not reused
        assert_eq!(t.bind(1, &req(v4(1, 0)), RANGE, 1), Ok(32769));
        t.unbind(1);
        assert_eq!(t.bind(1, &req(v4(1, 0)), RANGE, 1), Ok(32770));
        t.unbind(1);
        assert_eq!(t.bind(1, &req(v4(1, 0)), RANGE, 1), Ok(32769));
        // the same start again: 32769 is held, so 32770, then 32768
        assert_eq!(t.bind(2, &req(v4(1, 0)), RANGE, 1), Ok(32770));
        assert_eq!(t.bind(3, &req(v4(1, 0)), RANGE, 1), Ok(32768));
        // all three taken by the same source and no destination
        assert_eq!(
            t.bind(4, &req(v4(1, 0)), RANGE, 1),
            Err(BindError::NotAvailable)
        );
        // another source address may share one
        assert_eq!(t.bind(4, &req(v4(2, 0)), RANGE, 1), Ok(32769));
    }

    /// Ids that resolve a destination share an ephemeral port when their
    /// destination ports, source or destination addresses differ.
    #[test]
    fn connecting_ids_share_ephemeral_ports_by_destination() {
        let mut t = PortTable::<Std>::new();
        let range = (40000, 40001);
        let to = |src: u8, port: u16| BindRequest {
            dst: Some(v4(9, port)),
            ..req(v4(src, 0))
        };
        assert_eq!(t.bind(1, &to(1, 7174), range, 0), Ok(40000));
        // 40000 was taken last: the next one
        assert_eq!(t.bind(2, &to(1, 7174), range, 0), Ok(40001));
        // another destination port shares 40000
        assert_eq!(t.bind(3, &to(1, 7175), range, 0), Ok(40000));
        // the same destination again: nothing left (40000 was taken last)
        assert_eq!(
            t.bind(4, &to(1, 7174), range, 0),
            Err(BindError::NotAvailable)
        );
        // no destination is a wildcard: it differs from nothing
        assert_eq!(
            t.bind(4, &req(v4(1, 0)), range, 0),
            Err(BindError::NotAvailable)
        );
        // another source address
        assert_eq!(t.bind(4, &to(2, 7174), range, 1), Ok(40001));
    }

    #[test]
    fn unbinding_keeps_the_other_holders() {
        let mut t = PortTable::<Std>::new();
        let key = PortKey {
            net: 1,
            ps: PortSpace::Tcp,
            port: 7174,
        };
        for (id, last) in [(1, 1), (2, 2), (3, 3)] {
            assert_eq!(t.bind(id, &req(v4(last, 7174)), RANGE, 0), Ok(7174));
        }
        assert_eq!(t.holders_of(key).collect::<Vec<_>>(), vec![3, 2, 1]);
        assert_eq!(t.unbind(2), Some(key));
        assert_eq!(t.holders_of(key).collect::<Vec<_>>(), vec![3, 1]);
        assert_eq!(t.unbind(3), Some(key));
        assert_eq!(t.holders_of(key).collect::<Vec<_>>(), vec![1]);
        assert_eq!(t.unbind(3), None);
        assert_eq!(t.unbind(1), Some(key));
        assert_eq!(t.ports(), 0);
        // the port is free again
        assert_eq!(t.bind(4, &req(v4(0, 7174)), RANGE, 0), Ok(7174));
    }

    #[test]
    fn a_slot_serves_the_next_generation_of_its_id() {
        // Two ids of one slot (the table reuses a destroyed id's slot
        // with the next generation): the record is the live one's.
        let (old, new) = (5, (1 << 32) | 5);
        assert_eq!(RdmaId(old).slot(), RdmaId(new).slot());
        let mut t = PortTable::<Std>::new();
        assert_eq!(t.bind(old, &req(v4(1, 7174)), RANGE, 0), Ok(7174));
        assert_eq!(t.port_of(new), None, "another generation holds nothing");
        assert_eq!(t.unbind(new), None);
        // While the old one holds the slot, the new one cannot bind there
        // (the core unbinds an id before its slot is reused).
        assert_eq!(
            t.bind(new, &req(v4(2, 7175)), RANGE, 0),
            Err(BindError::AlreadyBound)
        );
        assert!(t.unbind(old).is_some());
        assert_eq!(t.bind(new, &req(v4(2, 7175)), RANGE, 0), Ok(7175));
        assert_eq!(t.port_of(old), None);
        assert!(t.port_of(new).is_some());
    }
}
