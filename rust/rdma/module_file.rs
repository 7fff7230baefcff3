// SPDX-License-Identifier: GPL-2.0

//! A file of the module's own in sysfs (`/sys/module/rcm/<name>`), read
//! and written through a trait: for figures that belong to the module as a
//! whole rather than to a device (ib_core's per-port groups are in
//! `counters`).

use crate::bindings;
use core::fmt::{self, Write};
use core::ptr::addr_of_mut;
use kernel::ffi::c_char;
use kernel::page::PAGE_SIZE;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::ThisModule;

/// What a [`ModuleFile`] shows and takes.
pub(crate) trait FileHandler: Send + Sync {
    /// Writes the file's text (cut at one page).
    fn show(&self, out: &mut dyn Write);
    /// Takes a write of `input`.
    fn store(&self, input: &[u8]) -> Result;
}

/// The attribute first, so that sysfs's pointer to it is the file's.
#[repr(C)]
struct Inner<H: FileHandler> {
    attr: bindings::kobj_attribute,
    handler: H,
}

/// A file in the module's sysfs directory; removed on drop, which waits
/// for reads and writes in progress.
///
/// INVARIANT: `kobj` is the module's kobject, which outlives `self` (the
/// module's sysfs directory goes after its exit function); `inner` is
/// boxed, not moved, and registered as a file of `kobj` while `self`
/// lives.
pub(crate) struct ModuleFile<H: FileHandler> {
    kobj: *mut bindings::kobject,
    inner: KBox<Inner<H>>,
}

// SAFETY: the kobject pointer is only handed to sysfs, which may be called
// from any process context; the handler is `Send + Sync`.
unsafe impl<H: FileHandler> Send for ModuleFile<H> {}
// SAFETY: as above; `&self` gives no access to the attribute.
unsafe impl<H: FileHandler> Sync for ModuleFile<H> {}

impl<H: FileHandler> ModuleFile<H> {
    /// Creates `/sys/module/<module>/<name>`, readable by all and
    /// writable by root.
    pub(crate) fn new(
        module: &'static ThisModule,
        name: &'static CStr,
        handler: H,
    ) -> Result<Self> {
        // SAFETY: all-zero is a valid `kobj_attribute` (no callbacks, no
        // name), filled below before sysfs sees it.
        let attr: bindings::kobj_attribute = unsafe { core::mem::zeroed() };
        let mut inner = KBox::new(Inner { attr, handler }, GFP_KERNEL)?;
        let attr = addr_of_mut!(inner.attr);
        // SAFETY: `attr` is ours, boxed; the name is static; the
        // attribute's lockdep key is set before it is registered.
        unsafe {
            (*attr).attr.name = name.as_char_ptr();
            (*attr).attr.mode = 0o644;
            bindings::rcm_h_sysfs_attr_init(addr_of_mut!((*attr).attr));
            (*attr).show = Some(show::<H>);
            (*attr).store = Some(store::<H>);
        }
        // SAFETY: a loaded module's kobject is set up before its init runs
        // and torn down after its exit.
        let kobj =
            unsafe { addr_of_mut!((*module.as_ptr()).mkobj.kobj) }.cast::<bindings::kobject>();
        // SAFETY: the kobject is live; the attribute is boxed and stays
        // registered until `Drop` removes it.
        kernel::error::to_result(unsafe {
            bindings::sysfs_create_file_ns(kobj, addr_of_mut!((*attr).attr), core::ptr::null())
        })?;
        // INVARIANT: registered just now, boxed.
        Ok(ModuleFile { kobj, inner })
    }
}

impl<H: FileHandler> Drop for ModuleFile<H> {
    fn drop(&mut self) {
        // SAFETY: registered on this kobject (type invariant); the removal
        // drains reads and writes in progress, after which nothing points
        // to `inner`.
        unsafe {
            bindings::sysfs_remove_file_ns(
                self.kobj,
                addr_of_mut!(self.inner.attr.attr),
                core::ptr::null(),
            )
        };
    }
}

/// Text into a sysfs page, cut at its end.
struct PageWriter {
    buf: *mut u8,
    len: usize,
}

impl Write for PageWriter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let n = s.len().min(PAGE_SIZE - 1 - self.len);
        // SAFETY: `buf` is a page (the `show` contract) and `len + n` stays
        // below its last byte.
        unsafe { core::ptr::copy_nonoverlapping(s.as_ptr(), self.buf.add(self.len), n) };
        self.len += n;
        Ok(())
    }
}

/// The file's read.
///
/// # Safety
///
/// Called by sysfs with a registered [`Inner<H>`]'s attribute and a
/// page-sized buffer.
unsafe extern "C" fn show<H: FileHandler>(
    _kobj: *mut bindings::kobject,
    attr: *mut bindings::kobj_attribute,
    buf: *mut c_char,
) -> isize {
    // SAFETY: the attribute is the first field of a live `Inner<H>`
    // (`repr(C)`; registered while its `ModuleFile` lives).
    let inner = unsafe { &*attr.cast::<Inner<H>>() };
    let mut out = PageWriter {
        buf: buf.cast(),
        len: 0,
    };
    inner.handler.show(&mut out);
    out.len as isize
}

/// The file's write.
///
/// # Safety
///
/// Called by sysfs with a registered [`Inner<H>`]'s attribute and `count`
/// bytes at `buf`.
unsafe extern "C" fn store<H: FileHandler>(
    _kobj: *mut bindings::kobject,
    attr: *mut bindings::kobj_attribute,
    buf: *const c_char,
    count: usize,
) -> isize {
    // SAFETY: as in `show`.
    let inner = unsafe { &*attr.cast::<Inner<H>>() };
    // SAFETY: sysfs hands `count` readable bytes.
    let input = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), count) };
    match inner.handler.store(input) {
        Ok(()) => count as isize,
        Err(e) => e.to_errno() as isize,
    }
}
