// SPDX-License-Identifier: GPL-2.0

//! Multicast groups of rdma_cm's UD ids on RoCE: the checks and IPv4
//! group memberships (IGMP) of `rdma_join_multicast`, and the
//! MULTICAST_JOIN event with the group's address handle. The group's
//! MGID, hop limit and need of IGMP are the core's ([`RoceGroup`]).
//!
//! Joining and leaving an IPv4 group take rtnl, a global lock anyone with
//! a network namespace can keep busy, so rdma_cm prepares a change under
//! its own lock (no rtnl) and applies it once that lock is released.

use crate::bindings;
use crate::proto::rdma_cm::multicast::{RoceGroup, MULTICAST_QPN};
use crate::proto::rdma_cm::route::{roce_mtu, IB_RATE_PORT_CURRENT};
use crate::proto::rdma_cm::SockAddr;
use crate::rdma::cm_id::{call_handler, CmIdPrivate};
use crate::rdma::netdev::NetDevice;
use kernel::ffi::{c_int, c_void};
use kernel::prelude::*;

/// The kernel's "operation not supported" of 6.12's RoCE v2 joins of
/// non-IPv4 groups (`ENOTSUPP`, include/linux/errno.h).
const ENOTSUPP: c_int = 524;

/// A prepared join or leave of an IPv4 group on a network device.
pub(crate) struct IgmpChange {
    ndev: NetDevice,
    /// The group's address, in network order.
    group: [u8; 4],
    join: bool,
}

impl IgmpChange {
    /// Applies the change (takes rtnl: call it holding no lock that
    /// other users' calls need).
    pub(crate) fn apply(self) {
        let (ndev, group) = (self.ndev.as_raw(), u32::from_ne_bytes(self.group));
        // SAFETY: rtnl is taken and released here; the device is held by
        // `self.ndev`; its IPv4 configuration is read and changed under
        // rtnl, which its own changes take (`__in_dev_get_rtnl`).
        unsafe {
            bindings::rtnl_lock();
            let in_dev = core::ptr::addr_of!((*ndev).ip_ptr).read();
            if !in_dev.is_null() {
                if self.join {
                    bindings::ip_mc_inc_group(in_dev, group);
                } else {
                    bindings::__ip_mc_dec_group(in_dev, group, kernel::bindings::GFP_KERNEL);
                }
            }
            bindings::rtnl_unlock();
        }
    }
}

impl CmIdPrivate {
    /// The id's RoCE port and its view of `group`: the device, port and
    /// whether its GIDs are RoCE v2.
    fn roce_port(&self) -> Option<(crate::rdma::device::Device<'_>, u32, bool)> {
        let (device, port) = self.device()?;
        let v2 = device.prefers_roce_v2(port);
        Some((device, port, v2))
    }

    /// Checks that the id may join `group` (a negative errno if not, as
    /// 6.12: -ENOSYS on iWARP, -EOPNOTSUPP on IB, whose SA joins rcm does
    /// not make) and prepares the IGMP join its membership needs, if any.
    /// In the id's own call.
    pub(crate) fn prepare_join(
        &self,
        group: &SockAddr,
        send_only: bool,
    ) -> Result<Option<IgmpChange>, c_int> {
        let (device, port, v2) = self.roce_port().ok_or(ENODEV.to_errno())?;
        if !device.is_roce(port) {
            return Err(if device.is_iwarp(port) {
                -(kernel::bindings::ENOSYS as c_int)
            } else {
                -(kernel::bindings::EOPNOTSUPP as c_int)
            });
        }
        let roce = RoceGroup::of(group, v2, send_only).ok_or(-ENOTSUPP)?;
        let ndev = self.net_device().ok_or(ENODEV.to_errno())?;
        if roce_mtu(ndev.mtu()) == 0 {
            return Err(EINVAL.to_errno());
        }
        let Some(group) = roce.igmp else {
            return Ok(None);
        };
        if !ndev.has_inet() {
            return Err(ENODEV.to_errno());
        }
        Ok(Some(IgmpChange {
            ndev,
            group,
            join: true,
        }))
    }

    /// The leave of what [`Self::prepare_join`] prepared for the same
    /// arguments.
    pub(crate) fn prepare_leave(&self, group: &SockAddr, send_only: bool) -> Option<IgmpChange> {
        let (device, port, v2) = self.roce_port()?;
        if !device.is_roce(port) {
            return None;
        }
        let group = RoceGroup::of(group, v2, send_only)?.igmp?;
        Some(IgmpChange {
            ndev: self.net_device()?,
            group,
            join: false,
        })
    }

    /// Calls the id's handler with MULTICAST_JOIN for `group`, with the
    /// group's address handle and `qkey`, or MULTICAST_ERROR if no address
    /// handle can be made; `context` is the consumer's for the group. The
    /// handler's return. The caller holds the id's handler lock.
    pub(crate) fn deliver_group_join(
        &self,
        context: *mut c_void,
        group: &SockAddr,
        qkey: u32,
    ) -> c_int {
        let mut ev = bindings::rdma_cm_event {
            event: bindings::rdma_cm_event_type_RDMA_CM_EVENT_MULTICAST_ERROR,
            ..Default::default()
        };
        let mut ud = bindings::rdma_ud_param {
            private_data: context,
            ..Default::default()
        };
        if let Some(ah_attr) = self.group_ah(group) {
            ev.event = bindings::rdma_cm_event_type_RDMA_CM_EVENT_MULTICAST_JOIN;
            ud.ah_attr = ah_attr;
            ud.qp_num = MULTICAST_QPN;
            ud.qkey = qkey;
        }
        ev.param.ud = ud;
        // SAFETY: the id lives with `self`; its handler is the consumer's,
        // called as rdma_cm's contract says (process context, its handler
        // lock held by the caller).
        let ret = unsafe { call_handler(self.as_id(), &mut ev) };
        // SAFETY: `param.ud` is the member set above; its attributes (and
        // the GID reference they may hold) are released once.
        unsafe { bindings::rdma_destroy_ah_attr(&mut ev.param.ud.ah_attr) };
        ret
    }

    /// The address handle of `group` on the id's RoCE port
    /// (`ib_init_ah_from_mcmember`), or `None`.
    fn group_ah(&self, group: &SockAddr) -> Option<bindings::rdma_ah_attr> {
        let (device, port) = self.device()?;
        let gid_type = device.roce_gid_type(port);
        let v2 = gid_type == bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP;
        let roce = RoceGroup::of(group, v2, true)?;
        let ndev = self.net_device()?;
        let mut rec = bindings::ib_sa_mcmember_rec {
            pkey: 0xffffu16.to_be(),
            rate: IB_RATE_PORT_CURRENT,
            hop_limit: roce.hop_limit,
            mtu: roce_mtu(ndev.mtu()),
            ..Default::default()
        };
        rec.mgid.raw = roce.mgid;
        rec.port_gid.raw = self.addrs().0.map(|a| a.gid()).unwrap_or_default();
        let mut ah_attr = bindings::rdma_ah_attr::default();
        // SAFETY: the device is registered while the id is on it; the
        // network device is held; the record and attributes are ours (on
        // failure ib_core holds nothing in them).
        let ret = unsafe {
            bindings::ib_init_ah_from_mcmember(
                device.as_raw(),
                port,
                &mut rec,
                ndev.as_raw(),
                gid_type,
                &mut ah_attr,
            )
        };
        (ret == 0).then_some(ah_attr)
    }
}
