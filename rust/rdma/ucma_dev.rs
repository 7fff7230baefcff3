// SPDX-License-Identifier: GPL-2.0

//! The rdma_ucm character device's kernel side (`rcm_ucma_helpers.c`):
//! its registration, the file operations, which call the surface that
//! serves the files through [`UcmaFileOps`], and the open file they hand
//! it, which can be woken and waited on.

use crate::bindings;
use core::marker::PhantomData;
use kernel::error::to_result;
use kernel::ffi::{c_char, c_int};
use kernel::prelude::*;
use kernel::uaccess::UserPtr;

/// What the device's files do: implemented by the surface that serves
/// them. Each runs in the file operation's process context.
pub(crate) trait UcmaFileOps {
    /// A file is opened; the surface names it ([`UcmaFile::set_token`]).
    fn open(file: &UcmaFile) -> Result;
    /// The file's last reference is gone: everything it holds goes.
    fn release(file: &UcmaFile);
    /// One `write()` of `len` bytes at user address `buf`: the bytes
    /// consumed.
    fn write(file: &UcmaFile, buf: UserPtr, len: usize) -> Result<usize>;
    /// Whether the file has an event (poll, and GET_EVENT's wait).
    fn has_event(file: &UcmaFile) -> bool;
}

/// The misc device, its attribute, sysctl and netlink client, registered
/// for as long as this value lives, its files served by `T`.
pub(crate) struct UcmaDevice<T: UcmaFileOps>(PhantomData<T>);

impl<T: UcmaFileOps> UcmaDevice<T> {
    /// The table the helper calls through (a constant: it outlives every
    /// file).
    const OPS: bindings::rcm_ucma_file_ops = bindings::rcm_ucma_file_ops {
        open: Some(open_callback::<T>),
        release: Some(release_callback::<T>),
        write: Some(write_callback::<T>),
        has_event: Some(has_event_callback::<T>),
    };

    /// Registers the device if the module parameter `ucma` asks for it.
    pub(crate) fn register() -> Result<Option<Self>> {
        // SAFETY: reads a module parameter.
        if !unsafe { bindings::rcm_h_ucma_enabled() } {
            return Ok(None);
        }
        // SAFETY: the helper's device and client are static; registered
        // once here, unregistered once in `Drop`; the table is static.
        to_result(unsafe { bindings::rcm_h_ucma_register(&Self::OPS) })?;
        Ok(Some(UcmaDevice(PhantomData)))
    }
}

impl<T: UcmaFileOps> Drop for UcmaDevice<T> {
    fn drop(&mut self) {
        // SAFETY: registered by `register`; no file operation runs once
        // it returns.
        unsafe { bindings::rcm_h_ucma_unregister() };
    }
}

/// `open`.
///
/// # Safety
///
/// Called by the helper with the file being opened, not yet visible to
/// any other operation.
unsafe extern "C" fn open_callback<T: UcmaFileOps>(f: *mut bindings::rcm_ucma_file) -> c_int {
    // SAFETY: per this function's contract, `f` is open for the call.
    let file = unsafe { UcmaFile::from_raw(f) };
    match T::open(&file) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `release`.
///
/// # Safety
///
/// Called by the helper with a file whose last reference went, once.
unsafe extern "C" fn release_callback<T: UcmaFileOps>(f: *mut bindings::rcm_ucma_file) {
    // SAFETY: per this function's contract, freed only after the call.
    T::release(&unsafe { UcmaFile::from_raw(f) });
}

/// `write`: the bytes written or a negative errno.
///
/// # Safety
///
/// Called by the helper with an open file; `buf` is a user address.
unsafe extern "C" fn write_callback<T: UcmaFileOps>(
    f: *mut bindings::rcm_ucma_file,
    buf: *const c_char,
    len: usize,
) -> isize {
    // SAFETY: per this function's contract, `f` is open for the call.
    let file = unsafe { UcmaFile::from_raw(f) };
    match T::write(&file, buf as UserPtr, len) {
        Ok(n) => isize::try_from(n).unwrap_or(isize::MAX),
        // A negative errno widens losslessly.
        Err(e) => e.to_errno() as isize,
    }
}

/// poll's and GET_EVENT's test.
///
/// # Safety
///
/// Called by the helper with an open file.
unsafe extern "C" fn has_event_callback<T: UcmaFileOps>(f: *mut bindings::rcm_ucma_file) -> bool {
    // SAFETY: per this function's contract, `f` is open for the call.
    T::has_event(&unsafe { UcmaFile::from_raw(f) })
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

    /// The file's waker, for its keeper (see [`FileWaker`]).
    pub(crate) fn waker(&self) -> FileWaker {
        // INVARIANT: the file is open now; the keeper drops it at release.
        FileWaker(self.ptr)
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
        // queue, evaluating the files' `has_event`.
        to_result(unsafe { bindings::rcm_h_ucma_wait_event(self.ptr) })
    }
}

/// What wakes an open file's readers and pollers, kept by the surface
/// from open until release.
///
/// INVARIANT: points to the helper's `struct rcm_ucma_file` of a file that
/// was open when the waker was made; its keeper drops it at release,
/// before the file is freed.
#[derive(Clone, Copy)]
pub(crate) struct FileWaker(*mut bindings::rcm_ucma_file);

// SAFETY: the pointer is only used to wake the file's wait queue, which
// works from any thread.
unsafe impl Send for FileWaker {}

impl FileWaker {
    /// Wakes the file's readers and pollers (any context).
    pub(crate) fn wake(&self) {
        // SAFETY: the file is open (invariant).
        unsafe { bindings::rcm_h_ucma_wake(self.0) };
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
