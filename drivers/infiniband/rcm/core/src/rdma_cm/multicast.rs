// SPDX-License-Identifier: GPL-2.0

//! Multicast groups of UD ids (`rdma_join_multicast`,
//! `rdma_leave_multicast`), as 6.12 joins them on RoCE: the host joins the
//! IP group (IGMP, unless send-only) and the join is reported at once as
//! MULTICAST_JOIN with the id's Q_Key, for delivery after the call. A
//! group left (or an id destroyed) before its event is delivered is not
//! reported.

use super::addr::SockAddr;
use super::endpoint::{RdmaCm, RdmaCmError, RdmaId, RdmaQpType};
use super::event::{ConnData, EventKind, EventStatus, RdmaEvent};
use super::host::Host;
use super::state::IdState;
use crate::cm::store::{Collections, OrderedMap};

/// A membership of an id in a group (rdma_cm's number for it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupId(pub u32);

/// The QP number of a multicast group's address (`0xFFFFFF`).
pub const MULTICAST_QPN: u32 = 0x00FF_FFFF;

/// One membership.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Membership {
    /// The id that joined.
    pub id: RdmaId,
    /// The group's IP address.
    pub addr: SockAddr,
    /// Joined to send only (no IGMP membership).
    pub send_only: bool,
    /// The consumer's context for the group's events.
    pub context: u64,
}

/// How a RoCE port takes part in an IP group (6.12's
/// `cma_iboe_join_multicast`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoceGroup {
    /// The group's MGID.
    pub mgid: [u8; 16],
    /// The hop limit of the group's address handle.
    pub hop_limit: u8,
    /// The IPv4 group (network order) to join by IGMP, if the membership
    /// needs one.
    pub igmp: Option<[u8; 4]>,
}

/// The hop limit of an IPv4 group's traffic on RoCE v2
/// (`IPV6_DEFAULT_HOPLIMIT`).
const ROCE_V2_HOP_LIMIT: u8 = 64;

impl RoceGroup {
    /// The group at `addr` on a port whose GIDs are RoCE v2 (`v2`) or v1;
    /// `None` where 6.12 refuses it (-ENOTSUPP): an IPv6 or AF_IB group
    /// on RoCE v2. An IPv4 group's MGID is its address mapped
    /// (`::ffff:a.b.c.d` on v2, `ff0e::ffff:a.b.c.d` on v1), and on v2 a
    /// full member joins it by IGMP.
    pub const fn of(addr: &SockAddr, v2: bool, send_only: bool) -> Option<Self> {
        match *addr {
            SockAddr::V4 { addr: a, .. } => {
                let mut mgid = addr.gid();
                if !v2 {
                    mgid[0] = 0xff;
                    mgid[1] = 0x0e;
                }
                Some(RoceGroup {
                    mgid,
                    hop_limit: if v2 { ROCE_V2_HOP_LIMIT } else { 1 },
                    igmp: if v2 && !send_only { Some(a) } else { None },
                })
            }
            _ if v2 => None,
            _ => Some(RoceGroup {
                mgid: addr.gid(),
                hop_limit: 1,
                igmp: None,
            }),
        }
    }
}

impl<C: Collections, A: Copy + Ord> RdmaCm<C, A> {
    /// `rdma_join_multicast`: a UD id without a QP of rdma_cm's, bound or
    /// resolved to a device, joins the group at `addr` (the host joins
    /// the IP group unless `send_only`); MULTICAST_JOIN follows.
    pub fn join_multicast<H: Host<A>>(
        &mut self,
        host: &mut H,
        id: RdmaId,
        addr: SockAddr,
        send_only: bool,
        context: u64,
    ) -> Result<GroupId, RdmaCmError> {
        let rec = self.ids.get(&id).ok_or(RdmaCmError::NoSuchId)?;
        let bound = matches!(rec.state, IdState::AddrBound | IdState::AddrResolved);
        if rec.has_qp || rec.device.is_none() || !bound || rec.qp_type != RdmaQpType::Ud {
            return Err(RdmaCmError::Invalid);
        }
        if addr.is_any() {
            return Err(RdmaCmError::Invalid);
        }
        let qkey = self.ensure_qkey(id)?;
        let group = self.next_group();
        let m = Membership {
            id,
            addr,
            send_only,
            context,
        };
        self.groups
            .try_insert(group, m)
            .map_err(|_| RdmaCmError::NoMemory)?;
        if self.groups_of.try_insert((id, group), ()).is_err() {
            self.groups.remove(&group);
            return Err(RdmaCmError::NoMemory);
        }
        if let Err(e) = host.join_group(id, &addr, send_only) {
            self.groups.remove(&group);
            self.groups_of.remove(&(id, group));
            return Err(RdmaCmError::Qp(e));
        }
        let conn = ConnData {
            qp_num: MULTICAST_QPN,
            qkey,
            ..ConnData::default()
        };
        host.event(
            id,
            RdmaEvent {
                kind: EventKind::MulticastJoin,
                status: EventStatus::Ok,
                listener: None,
                group: Some(group),
                conn,
            },
        );
        Ok(group)
    }

    /// `rdma_leave_multicast`: the id's first membership of the group at
    /// `addr` ends (the host leaves the IP group); nothing if there is
    /// none.
    pub fn leave_multicast<H: Host<A>>(&mut self, host: &mut H, id: RdmaId, addr: &SockAddr) {
        let mut from = GroupId(0);
        while let Some(group) = self.next_group_of(id, from) {
            if self.groups.get(&group).is_some_and(|m| m.addr == *addr) {
                self.drop_group(host, group);
                return;
            }
            match group.0.checked_add(1) {
                Some(next) => from = GroupId(next),
                None => return,
            }
        }
    }

    /// Every membership of `id` ends (it is being destroyed): found by
    /// the id's own index, whatever other ids have joined.
    pub(crate) fn leave_all<H: Host<A>>(&mut self, host: &mut H, id: RdmaId) {
        while let Some(group) = self.next_group_of(id, GroupId(0)) {
            self.drop_group(host, group);
        }
    }

    /// The first membership of `id` numbered `from` or later.
    fn next_group_of(&mut self, id: RdmaId, from: GroupId) -> Option<GroupId> {
        self.groups_of
            .first_key_from(&(id, from))
            .filter(|k| k.0 == id)
            .map(|k| k.1)
    }

    /// A membership, while it lasts (its events are delivered only then).
    pub fn group(&self, group: GroupId) -> Option<&Membership> {
        self.groups.get(&group)
    }

    /// Number of memberships.
    pub fn groups_held(&self) -> usize {
        self.groups.len()
    }

    fn drop_group<H: Host<A>>(&mut self, host: &mut H, group: GroupId) {
        if let Some(m) = self.groups.remove(&group) {
            self.groups_of.remove(&(m.id, group));
            host.leave_group(m.id, &m.addr, m.send_only);
        }
    }

    /// The next free membership number.
    fn next_group(&mut self) -> GroupId {
        while self.groups.get(&GroupId(self.next_group)).is_some() {
            self.next_group = self.next_group.wrapping_add(1);
        }
        let g = GroupId(self.next_group);
        self.next_group = self.next_group.wrapping_add(1);
        g
    }
}
