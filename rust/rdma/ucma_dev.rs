// SPDX-License-Identifier: GPL-2.0

//! The rdma_ucm character device's kernel side (`rcm_ucma_helpers.c`):
//! its registration, and the open file the file operations hand to the
//! ABI surface, which can be woken and waited on.

use crate::bindings;
use kernel::error::to_result;
use kernel::prelude::*;

/// The misc device, its attribute, sysctl and netlink client, registered
/// for as long as this value lives.
pub(crate) struct UcmaDevice(());

impl UcmaDevice {
    /// Registers the device if the module parameter `ucma` asks for it.
    pub(crate) fn register() -> Result<Option<Self>> {
        // SAFETY: reads a module parameter.
        if !unsafe { bindings::rcm_h_ucma_enabled() } {
            return Ok(None);
        }
        // SAFETY: the helper's device and client are static; registered
        // once here, unregistered once in `Drop`.
        to_result(unsafe { bindings::rcm_h_ucma_register() })?;
        Ok(Some(UcmaDevice(())))
    }
}

impl Drop for UcmaDevice {
    fn drop(&mut self) {
        // SAFETY: registered by `register`.
        unsafe { bindings::rcm_h_ucma_unregister() };
    }
}

/// An open file of the device.
///
/// INVARIANT: `ptr` points to the helper's `struct rcm_ucma_file` of a file
/// that stays open while this value is used (the file operations hold it
/// for their duration; `release` is the last).
pub(crate) struct UcmaFile {
    ptr: *mut bindings::rcm_ucma_file,
}

impl UcmaFile {
    /// # Safety
    ///
    /// `ptr` is the file a file operation was called with, open for as
    /// long as the returned value is used.
    pub(crate) unsafe fn from_raw(ptr: *mut bindings::rcm_ucma_file) -> Self {
        // INVARIANT: the caller's guarantee.
        UcmaFile { ptr }
    }

    /// The surface's name of the file, set once at open.
    pub(crate) fn token(&self) -> u64 {
        // SAFETY: valid (invariant); `token` is written only by
        // `set_token` during open, before any other operation can run.
        unsafe { (*self.ptr).token }
    }

    /// Names the file (open only).
    pub(crate) fn set_token(&self, token: u64) {
        // SAFETY: valid (invariant); called from open, before the file is
        // visible to any other operation.
        unsafe { (*self.ptr).token = token };
    }

    /// Takes the file's reader lock: its GET_EVENTs run one at a time,
    /// and a copy out that faults holds up no other file (`-EINTR` if
    /// the task is killed while waiting).
    pub(crate) fn lock_reader(&self) -> Result<ReaderGuard<'_>> {
        // SAFETY: valid (invariant); the mutex was set up at open.
        to_result(unsafe { bindings::rcm_h_ucma_reader_lock(self.ptr) })?;
        Ok(ReaderGuard { file: self })
    }

    /// Waits for an event (`-EAGAIN` if the file is non-blocking,
    /// `-ERESTARTSYS` on a signal); takes no lock of the surface.
    pub(crate) fn wait_event(&self) -> Result {
        // SAFETY: valid (invariant); the helper sleeps on the file's wait
        // queue, evaluating `rcm_ucma_file_has_event`.
        to_result(unsafe { bindings::rcm_h_ucma_wait_event(self.ptr) })
    }
}

/// The reader lock of a file, held until dropped.
pub(crate) struct ReaderGuard<'a> {
    file: &'a UcmaFile,
}

impl Drop for ReaderGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: the file is valid (its invariant) and this guard holds
        // its reader lock.
        unsafe { bindings::rcm_h_ucma_reader_unlock(self.file.ptr) };
    }
}
