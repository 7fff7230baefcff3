// SPDX-License-Identifier: GPL-2.0

//! Registration of an `ib_client`: ib_core calls `add` for every RDMA
//! device present at registration and every device registered later, and
//! `remove` when a device goes away or the client unregisters.

use crate::bindings;
use crate::rdma::device::Device;
use core::marker::PhantomData;
use kernel::{alloc::KBox, error::to_result, prelude::*, str::CStr, types::Opaque};

/// What a client does when devices come and go.
pub(crate) trait ClientOps {
    /// A device appeared. An error makes ib_core skip this client for it.
    fn add(device: &Device<'_>) -> Result;
    /// A device for which `add` succeeded is going away.
    fn remove(device: &Device<'_>);
}

/// A registered `ib_client`; unregisters on drop.
///
/// INVARIANT: `client` is registered with ib_core for the lifetime of
/// `self`; the box keeps its address stable while ib_core links to it.
pub(crate) struct Registration<T: ClientOps> {
    client: KBox<Opaque<bindings::ib_client>>,
    _ops: PhantomData<T>,
}

// SAFETY: the registration only holds a pointer to ib_core-owned linkage;
// ib_core serialises client callbacks and unregistration internally.
unsafe impl<T: ClientOps> Send for Registration<T> {}
// SAFETY: `&Registration` exposes no methods that touch the client.
unsafe impl<T: ClientOps> Sync for Registration<T> {}

impl<T: ClientOps> Registration<T> {
    /// Registers a client called `name` (must live forever: ib_core keeps
    /// the pointer and shows it in netlink).
    pub(crate) fn new(name: &'static CStr) -> Result<Self> {
        // bindgen's Default for C structs is all-zero: no callbacks set.
        let client = KBox::new(Opaque::new(bindings::ib_client::default()), GFP_KERNEL)?;
        let raw = client.get();
        // SAFETY: `raw` points to an initialised, exclusively owned
        // ib_client (all-zero is a valid "no callback" state for every field).
        unsafe {
            (*raw).name = name.as_char_ptr();
            (*raw).add = Some(add_callback::<T>);
            (*raw).remove = Some(remove_callback::<T>);
        }
        // SAFETY: `raw` is a fully initialised ib_client at a stable heap
        // address that outlives the registration (dropped only after
        // ib_unregister_client in `Drop`).
        to_result(unsafe { bindings::ib_register_client(raw) })?;
        // INVARIANT: registered above.
        Ok(Self {
            client,
            _ops: PhantomData,
        })
    }
}

impl<T: ClientOps> Drop for Registration<T> {
    fn drop(&mut self) {
        // SAFETY: registered per the type invariant. ib_unregister_client
        // calls `remove` for every device and waits for running callbacks,
        // so nothing references the client after it returns.
        unsafe { bindings::ib_unregister_client(self.client.get()) };
    }
}

/// # Safety
///
/// Called by ib_core with a registered device.
unsafe extern "C" fn add_callback<T: ClientOps>(
    ibdev: *mut bindings::ib_device,
) -> kernel::ffi::c_int {
    // SAFETY: ib_core passes a registered device, valid during the call.
    let device = unsafe { Device::from_raw(ibdev) };
    match T::add(&device) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// # Safety
///
/// Called by ib_core with a device for which `add` succeeded.
unsafe extern "C" fn remove_callback<T: ClientOps>(
    ibdev: *mut bindings::ib_device,
    _client_data: *mut kernel::ffi::c_void,
) {
    // SAFETY: ib_core passes a device that stays valid until we return.
    let device = unsafe { Device::from_raw(ibdev) };
    T::remove(&device);
}
