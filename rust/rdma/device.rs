// SPDX-License-Identifier: GPL-2.0

//! Borrowed view of a `struct ib_device`.

use crate::bindings;
use core::ptr::NonNull;
use kernel::str::CStr;

/// A borrowed RDMA device, valid for the lifetime `'a`.
///
/// INVARIANT: `ptr` points to a registered `struct ib_device` that stays
/// alive for `'a` (ib_core guarantees this for the duration of a client
/// callback, and until the client's `remove` callback returns).
pub(crate) struct Device<'a> {
    ptr: *mut bindings::ib_device,
    _lifetime: core::marker::PhantomData<&'a bindings::ib_device>,
}

impl<'a> Device<'a> {
    /// Wraps a device pointer handed to us by ib_core.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a registered `struct ib_device` that stays valid
    /// for `'a`.
    pub(crate) unsafe fn from_raw(ptr: *mut bindings::ib_device) -> Self {
        // INVARIANT: guaranteed by the caller.
        Self {
            ptr,
            _lifetime: core::marker::PhantomData,
        }
    }

    /// The raw pointer, for the binding layer's calls into ib_core.
    pub(crate) fn as_raw(&self) -> *mut bindings::ib_device {
        self.ptr
    }

    /// An identity for the device, stable while it is registered (its
    /// address; never dereferenced through this value).
    pub(crate) fn identity(&self) -> usize {
        self.ptr as usize
    }

    /// The node (CA) GUID, as the CM puts it on the wire.
    pub(crate) fn node_guid(&self) -> u64 {
        // SAFETY: `self.ptr` is a live device (type invariant); the node
        // GUID is set before registration and not changed while the device
        // is registered.
        u64::from_be(unsafe { (*self.ptr).node_guid })
    }

    /// The device's name, e.g. `rxe0`.
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: `self.ptr` is a live device (type invariant); dev_name()
        // returns a NUL-terminated string owned by the device that lives at
        // least as long as the device.
        unsafe { CStr::from_char_ptr(bindings::rcm_h_ib_device_name(self.ptr)) }
    }

    /// The device's port numbers (ports are numbered from 1 on IB/RoCE).
    pub(crate) fn ports(&self) -> core::ops::RangeInclusive<u32> {
        // SAFETY: `self.ptr` is a live device (type invariant).
        let (first, last) = unsafe {
            (
                bindings::rcm_h_rdma_start_port(self.ptr),
                bindings::rcm_h_rdma_end_port(self.ptr),
            )
        };
        first..=last
    }

    /// The core capability flags of `port` (`RDMA_CORE_CAP_*`): 0 for a
    /// port the device does not have.
    fn port_caps(&self, port: u32) -> u32 {
        if !self.ports().contains(&port) {
            return 0;
        }
        // SAFETY: `self.ptr` is a live device (type invariant); its port
        // data has an entry for every port up to its last, whose immutable
        // part is set before registration and not changed after.
        unsafe {
            (*(*self.ptr).port_data.add(port as usize))
                .immutable
                .core_cap_flags
        }
    }

    /// Whether `port` speaks RoCE (as rxe does) rather than native IB.
    pub(crate) fn is_roce(&self, port: u32) -> bool {
        self.port_caps(port)
            & (bindings::RDMA_CORE_CAP_PROT_ROCE | bindings::RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP)
            != 0
    }

    /// Whether `port` carries RoCE v2 (over UDP): its paths get flow
    /// labels.
    pub(crate) fn carries_roce_v2(&self, port: u32) -> bool {
        self.port_caps(port) & bindings::RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP != 0
    }

    /// Whether `port` speaks iWARP (as siw does): connections through
    /// iw_cm, not CM MADs.
    pub(crate) fn is_iwarp(&self, port: u32) -> bool {
        self.port_caps(port) & bindings::RDMA_CORE_CAP_PROT_IWARP != 0
    }

    /// Whether `port` supports the InfiniBand CM (IB and RoCE, not iWARP).
    pub(crate) fn has_ib_cm(&self, port: u32) -> bool {
        self.port_caps(port) & bindings::RDMA_CORE_CAP_IB_CM != 0
    }

    /// Whether `port` has a subnet administrator to ask for paths (IB).
    pub(crate) fn has_ib_sa(&self, port: u32) -> bool {
        self.port_caps(port) & bindings::RDMA_CORE_CAP_IB_SA != 0
    }

    /// Whether `port`'s address handles carry Ethernet addresses (RoCE):
    /// its QPs take the default P_Key.
    pub(crate) fn has_eth_ah(&self, port: u32) -> bool {
        self.port_caps(port) & bindings::RDMA_CORE_CAP_ETH_AH != 0
    }

    /// The GID type rdma_cm uses on RoCE `port`: v2 where the port has
    /// it, else v1.
    pub(crate) fn roce_gid_type(&self, port: u32) -> bindings::ib_gid_type {
        // SAFETY: `self.ptr` is a live device (type invariant); ib_core
        // checks the port.
        let supported = unsafe { bindings::roce_gid_type_mask_support(self.ptr, port) };
        if supported & (1 << bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP) != 0 {
            bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP
        } else {
            bindings::ib_gid_type_IB_GID_TYPE_ROCE
        }
    }

    /// Whether rdma_cm uses RoCE v2 GIDs on `port` ([`Self::roce_gid_type`]).
    pub(crate) fn prefers_roce_v2(&self, port: u32) -> bool {
        self.roce_gid_type(port) == bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP
    }

    /// The device's index in ib_core (`ibdev_index` of the uAPI).
    pub(crate) fn index(&self) -> u32 {
        // SAFETY: `self.ptr` is a live device (type invariant); its index
        // is set before registration.
        unsafe { (*self.ptr).index }
    }

    /// The CA's local ACK delay (IBA time exponent), which REQs, REPs and
    /// LAPs fold into the ACK timeout they announce.
    pub(crate) fn ack_delay(&self) -> u8 {
        // SAFETY: `self.ptr` is a live device (type invariant); its
        // attributes are fixed while it is registered.
        unsafe { bindings::rcm_h_ack_delay(self.ptr) }
    }

    /// The `IB_ACCESS_FLUSH_*` flags a QP on this device may grant with
    /// RDMA read and atomic access (0 without flush support).
    pub(crate) fn flush_access(&self) -> u32 {
        const FLUSH: u64 = bindings::ib_device_cap_flags_IB_DEVICE_FLUSH_GLOBAL as u64
            | bindings::ib_device_cap_flags_IB_DEVICE_FLUSH_PERSISTENT as u64;
        // SAFETY: as for `ack_delay`.
        let caps = unsafe { (*self.ptr).attrs.device_cap_flags };
        if caps & FLUSH == 0 {
            return 0;
        }
        bindings::ib_access_flags_IB_ACCESS_FLUSH_GLOBAL
            | bindings::ib_access_flags_IB_ACCESS_FLUSH_PERSISTENT
    }
}

/// A counted reference on a device (`ib_device_try_get`): until it is
/// dropped, ib_core's unregistration of the device waits (after its
/// clients are removed) and the device is not freed.
///
/// INVARIANT: `ptr` is a device this value holds one reference on.
pub(crate) struct DeviceRef {
    ptr: NonNull<bindings::ib_device>,
}

impl DeviceRef {
    /// Takes a reference on the device at `ptr`; `None` if it is going
    /// away (its references already dropped to zero).
    ///
    /// # Safety
    ///
    /// `ptr` must point to a device that is alive for the call.
    pub(crate) unsafe fn try_get(ptr: *mut bindings::ib_device) -> Option<Self> {
        let ptr = NonNull::new(ptr)?;
        // SAFETY: alive per this function's contract.
        let held = unsafe { bindings::rcm_h_device_try_get(ptr.as_ptr()) };
        // INVARIANT: the reference was taken.
        held.then_some(DeviceRef { ptr })
    }

    /// The raw pointer, for the binding layer's calls into ib_core.
    pub(crate) fn as_raw(&self) -> *mut bindings::ib_device {
        self.ptr.as_ptr()
    }
}

impl Drop for DeviceRef {
    fn drop(&mut self) {
        // SAFETY: this value holds one reference (type invariant).
        unsafe { bindings::ib_device_put(self.ptr.as_ptr()) };
    }
}
