// SPDX-License-Identifier: GPL-2.0

//! Network devices rcm holds for a moment: an id's bound interface, whose
//! MTU and IPv4 configuration a RoCE route or group depends on, and a GID
//! entry's, whose addresses a passive id takes.

use crate::bindings;
use crate::rdma::cm_id::CmIdPrivate;
use crate::rdma::device::Device;
use crate::rdma::gid::GidAttr;
use crate::rdma::sync::RcuReadGuard;
use core::ptr::{addr_of, addr_of_mut, NonNull};
use kernel::error::from_err_ptr;
use kernel::ffi::c_int;

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
    /// Takes a reference on `ptr` (`None` if NULL).
    ///
    /// # Safety
    ///
    /// A non-NULL `ptr` is a network device that stays live for the call
    /// (held, or read under RCU).
    unsafe fn hold(ptr: *mut bindings::net_device) -> Option<Self> {
        let ptr = NonNull::new(ptr)?;
        // SAFETY: live per this function's contract.
        unsafe { bindings::rcm_h_netdev_hold(ptr.as_ptr()) };
        // INVARIANT: the reference taken just now.
        Some(NetDevice { ptr })
    }

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
        let _rcu = RcuReadGuard::new();
        // SAFETY: the device is held (type invariant); its IPv4
        // configuration pointer is published under RCU, read once.
        let in_dev = unsafe { addr_of!((*self.ptr.as_ptr()).ip_ptr).read_volatile() };
        !in_dev.is_null()
    }

    /// The interface of the device a VLAN device `dev` is on (`None` if
    /// `dev` is not a VLAN's).
    ///
    /// # Safety
    ///
    /// `dev` is a live network device (held, or read under RCU).
    pub(crate) unsafe fn vlan_real_ifindex(dev: *mut bindings::net_device) -> Option<c_int> {
        // SAFETY: live per this function's contract; a VLAN device holds
        // the device it is on.
        unsafe {
            if !bindings::rcm_h_is_vlan_dev(dev) {
                return None;
            }
            Some((*bindings::rcm_h_vlan_dev_real_dev(dev)).ifindex)
        }
    }

    /// The device's namespace (live while the device is).
    pub(crate) fn net(&self) -> *mut bindings::net {
        // SAFETY: the device is held (type invariant).
        unsafe { bindings::rcm_h_dev_net(self.ptr.as_ptr()) }
    }

    /// Writes the device's link-layer addresses into `da` as its source
    /// (6.12's `rdma_copy_src_l2_addr`): hardware and broadcast address,
    /// link type and interface.
    ///
    /// # Safety
    ///
    /// `da` is valid for writes and not read concurrently.
    pub(crate) unsafe fn copy_source_l2(&self, da: *mut bindings::rdma_dev_addr) {
        let d = self.ptr.as_ptr();
        // SAFETY: the device is held; its hardware address is allocated
        // MAX_ADDR_LEN long (the stack's `dev_addr_init`), as the C
        // inline reads it; `da` per this function's contract.
        unsafe {
            let ha = addr_of!((*d).dev_addr).read();
            if !ha.is_null() {
                let src = addr_of_mut!((*da).src_dev_addr);
                src.write(ha.cast::<[u8; bindings::MAX_ADDR_LEN as usize]>().read());
            }
            addr_of_mut!((*da).broadcast).write(addr_of!((*d).broadcast).read());
            addr_of_mut!((*da).dev_type).write(addr_of!((*d).type_).read());
            addr_of_mut!((*da).bound_dev_if).write(addr_of!((*d).ifindex).read());
        }
    }
}

impl GidAttr {
    /// The network device of the entry (RoCE and iWARP entries have one),
    /// held.
    pub(crate) fn net_device(&self) -> Option<NetDevice> {
        let _rcu = RcuReadGuard::new();
        // SAFETY: the entry is held; its device pointer is read under RCU.
        let ndev = unsafe { bindings::rdma_read_gid_attr_ndev_rcu(self.as_ptr()) };
        let ndev = from_err_ptr(ndev).ok()?;
        // SAFETY: live under the RCU section.
        unsafe { NetDevice::hold(ndev) }
    }
}

impl Device<'_> {
    /// The namespace of the network device of `port`'s GID entry `index`
    /// (the initial namespace if it has none): where a request that
    /// arrived through that entry is looked for.
    pub(crate) fn gid_net(&self, port: u32, index: u8) -> *mut bindings::net {
        match GidAttr::get(self, port, index).and_then(|g| g.net_device()) {
            Some(ndev) => ndev.net(),
            // The initial namespace is static: only its address is taken.
            None => addr_of_mut!(bindings::init_net),
        }
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
        let (net, ifindex) = (self.net(), self.bound_ifindex());
        if ifindex == 0 {
            return None;
        }
        // SAFETY: a live namespace; the device found is returned held.
        let ptr = NonNull::new(unsafe { bindings::dev_get_by_index(net, ifindex) })?;
        // INVARIANT: the reference is handed to the value.
        Some(NetDevice { ptr })
    }
}
