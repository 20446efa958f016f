// SPDX-License-Identifier: GPL-2.0

//! The memory of a histogram's map and of its sketches: one vmalloc() of
//! a size the trigger's text picks (`size=`, `.quantiles`, `:grow`).

use core::mem::MaybeUninit;
use core::ptr::NonNull;

use kernel::error::code;
use kernel::prelude::*;

use crate::shim;

/// `len` bytes of vmalloc() memory, asked with `__GFP_NOWARN |
/// __GFP_RETRY_MAYFAIL`: a size the machine cannot give fails with
/// `ENOMEM`, with no allocation report and without the OOM killer (the
/// pages of vmalloc() are charged to no task, so it would kill another).
///
/// # Invariants
///
/// `ptr` is the start of `len` bytes that `rhist_map_alloc()` returned
/// and that `drop()` alone frees.
pub(super) struct MapMemory {
    ptr: NonNull<MaybeUninit<u8>>,
    len: usize,
}

// SAFETY: the value owns plain memory, which any CPU may use or free.
unsafe impl Send for MapMemory {}
// SAFETY: shared, it gives nothing but its address and length.
unsafe impl Sync for MapMemory {}

impl MapMemory {
    /// At least `len` bytes (one if `len` is 0), uninitialised. May sleep.
    pub(super) fn new(len: usize) -> Result<Self> {
        let len = len.max(1);
        // SAFETY: no precondition; process context, as the trigger's
        // parse and the grow work are.
        let ptr = unsafe { shim::rhist_map_alloc(len) };
        let ptr = NonNull::new(ptr.cast::<MaybeUninit<u8>>()).ok_or(code::ENOMEM)?;
        // INVARIANT: just allocated, `len` bytes.
        Ok(MapMemory { ptr, len })
    }

    /// The start of the memory, valid for [`len`](Self::len) bytes until
    /// `self` is dropped.
    pub(super) fn as_mut_ptr(&mut self) -> *mut MaybeUninit<u8> {
        self.ptr.as_ptr()
    }

    /// Its length in bytes.
    pub(super) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for MapMemory {
    fn drop(&mut self) {
        // SAFETY: from `rhist_map_alloc()`, freed only here (invariant).
        unsafe { shim::rhist_map_free(self.ptr.as_ptr().cast()) };
    }
}
