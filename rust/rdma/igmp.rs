// SPDX-License-Identifier: GPL-2.0

//! IPv4 group memberships (IGMP) that RoCE v2 multicast ids hold on their
//! network device. Joining and leaving take rtnl, a global lock anyone
//! with a network namespace can keep busy, so rdma_cm prepares a change
//! under its own lock (no rtnl) and applies it once that lock is released.

use crate::bindings;
use crate::proto::rdma_cm::SockAddr;
use crate::rdma::sockaddr::StoredSockAddr;
use core::ptr::NonNull;

/// A prepared join or leave of an IPv4 group on a network device.
///
/// INVARIANT: `ndev` is a network device on which `self` owns one
/// reference (put on drop).
pub(crate) struct IgmpChange {
    ndev: NonNull<bindings::net_device>,
    /// The group's address, in network order.
    group: u32,
    join: bool,
}

// SAFETY: network devices are reference counted; holding, using and
// putting a reference is allowed from any task.
unsafe impl Send for IgmpChange {}

impl IgmpChange {
    /// Checks that the id may join `group` (a negative errno if not) and
    /// prepares the IGMP join its RoCE v2 membership needs, if any.
    ///
    /// # Safety
    ///
    /// `id` is a live rdma_cm id whose device and address fields do not
    /// change during the call.
    pub(crate) unsafe fn join(
        id: *mut bindings::rdma_id_private,
        group: &SockAddr,
        send_only: bool,
    ) -> Result<Option<Self>, i32> {
        let (mut ndev, mut addr) = (core::ptr::null_mut(), 0);
        let group = StoredSockAddr::new(group);
        // SAFETY: per this function's contract; the outputs are ours.
        match unsafe {
            bindings::rcm_h_rdma_mc_join(id, group.as_ptr(), send_only, &mut ndev, &mut addr)
        } {
            // INVARIANT: a device handed out comes with a reference.
            0 => Ok(NonNull::new(ndev).map(|ndev| IgmpChange {
                ndev,
                group: addr,
                join: true,
            })),
            e => Err(e),
        }
    }

    /// The leave of what [`Self::join`] prepared for the same arguments.
    ///
    /// # Safety
    ///
    /// As for [`Self::join`].
    pub(crate) unsafe fn leave(
        id: *mut bindings::rdma_id_private,
        group: &SockAddr,
        send_only: bool,
    ) -> Option<Self> {
        let (mut ndev, mut addr) = (core::ptr::null_mut(), 0);
        let group = StoredSockAddr::new(group);
        // SAFETY: per this function's contract; the outputs are ours.
        unsafe {
            bindings::rcm_h_rdma_mc_leave(id, group.as_ptr(), send_only, &mut ndev, &mut addr)
        };
        // INVARIANT: a device handed out comes with a reference.
        NonNull::new(ndev).map(|ndev| IgmpChange {
            ndev,
            group: addr,
            join: false,
        })
    }

    /// Applies the change (takes rtnl: call it holding no lock that
    /// other users' calls need).
    pub(crate) fn apply(self) {
        // SAFETY: `self` holds a reference on the device (invariant).
        unsafe { bindings::rcm_h_igmp_change(self.ndev.as_ptr(), self.group, self.join) };
    }
}

impl Drop for IgmpChange {
    fn drop(&mut self) {
        // SAFETY: `self` owns this reference (invariant).
        unsafe { bindings::rcm_h_netdev_put(self.ndev.as_ptr()) };
    }
}
