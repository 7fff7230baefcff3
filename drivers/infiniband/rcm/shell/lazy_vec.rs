// SPDX-License-Identifier: GPL-2.0

//! A vector that costs nothing until its first element.
//!
//! The kernel's `KVec` hands its buffer to `krealloc` when dropped even if
//! it never allocated one (6.12's allocator frees through
//! `krealloc(NULL, 0)`): a call chain per vector. A call into the core
//! collects what it leaves in several vectors that most calls leave empty,
//! so each of its holds paid that chain once per vector (in a profile
//! under TCG, 0.6 us of rdma_cm's 8.4 us destroy of an id).

use kernel::alloc::allocator::Kmalloc;
use kernel::alloc::{AllocError, Flags, IntoIter};
use kernel::prelude::*;

/// A `KVec` made on the first push; nothing to free before that.
pub(crate) struct LazyVec<T>(Option<KVec<T>>);

impl<T> LazyVec<T> {
    /// Empty, with nothing allocated.
    pub(crate) const fn new() -> Self {
        LazyVec(None)
    }

    /// Appends `value`, allocating as `flags` allow.
    pub(crate) fn push(&mut self, value: T, flags: Flags) -> Result<(), AllocError> {
        self.0.get_or_insert_with(KVec::new).push(value, flags)
    }

    /// Makes room for `additional` more elements.
    pub(crate) fn reserve(&mut self, additional: usize, flags: Flags) -> Result<(), AllocError> {
        self.0
            .get_or_insert_with(KVec::new)
            .reserve(additional, flags)
    }

    /// The number of elements.
    pub(crate) fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |v| v.len())
    }

    /// No element.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|v| v.is_empty())
    }

    /// The elements, in order.
    pub(crate) fn iter(&self) -> core::slice::Iter<'_, T> {
        self.0.as_deref().unwrap_or(&[]).iter()
    }

    /// Takes the elements out, leaving it empty with nothing allocated.
    pub(crate) fn take(&mut self) -> Self {
        LazyVec(self.0.take())
    }

    /// The vector, if one was made (by a push or a reservation, even one
    /// that failed): it may be empty.
    pub(crate) fn into_vec(self) -> Option<KVec<T>> {
        self.0
    }
}

impl<T> Default for LazyVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> IntoIterator for LazyVec<T> {
    type Item = T;
    type IntoIter = LazyIntoIter<T>;

    /// The elements, in order, by value.
    fn into_iter(self) -> Self::IntoIter {
        LazyIntoIter(self.0.map(|v| v.into_iter()))
    }
}

/// A [`LazyVec`]'s elements by value: the vector's own iterator, if it
/// was made (a plain one, not a flattening adapter's three, as these run
/// in frames with a limit: `scripts/check-stack.py`).
pub(crate) struct LazyIntoIter<T>(Option<IntoIter<T, Kmalloc>>);

impl<T> Iterator for LazyIntoIter<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.0.as_mut()?.next()
    }
}
