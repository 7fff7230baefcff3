// SPDX-License-Identifier: GPL-2.0

//! Network devices rcm holds for a moment: an id's bound interface, whose
//! MTU and IPv4 configuration a RoCE route or group depends on.

use crate::bindings;
use crate::rdma::cm_id::CmIdPrivate;
use core::ptr::NonNull;

/// A network device with a reference of ours, put on drop.
///
/// INVARIANT: `ptr` is a network device on which `self` owns one
/// reference.
pub(crate) struct NetDevice {
    ptr: NonNull<bindings::net_device>,
}

// SAFETY: network devices are reference counted; holding, using and
// putting a reference is allowed from any task.
unsafe impl Send for NetDevice {}

impl NetDevice {
    /// The raw pointer, for ib_core calls that take the device.
    pub(crate) fn as_raw(&self) -> *mut bindings::net_device {
        self.ptr.as_ptr()
    }

    /// The device's MTU now (it may change at any time).
    pub(crate) fn mtu(&self) -> u32 {
        // SAFETY: the device is held (type invariant); the MTU is a plain
        // word the stack rewrites in place, read once.
        unsafe { core::ptr::addr_of!((*self.ptr.as_ptr()).mtu).read_volatile() }
    }

    /// Whether the device has an IPv4 configuration (groups can be joined
    /// on it).
    pub(crate) fn has_inet(&self) -> bool {
        // SAFETY: the device is held (type invariant).
        unsafe { bindings::rcm_h_netdev_has_inet(self.ptr.as_ptr()) }
    }
}

impl Drop for NetDevice {
    fn drop(&mut self) {
        // SAFETY: `self` owns this reference (type invariant).
        unsafe { bindings::rcm_h_netdev_put(self.ptr.as_ptr()) };
    }
}

impl CmIdPrivate {
    /// The network device the id's address is bound to, held; `None` if
    /// it has none (or it went away).
    pub(crate) fn net_device(&self) -> Option<NetDevice> {
        // SAFETY: the id's device address lives with it; the helper takes
        // a reference on the device it returns.
        let ptr = NonNull::new(unsafe { bindings::rcm_h_rdma_id_ndev(self.private()) })?;
        // INVARIANT: the reference is handed to the value.
        Some(NetDevice { ptr })
    }
}
