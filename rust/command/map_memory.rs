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
        // Process context, as the trigger's parse and the grow work are.
        let ptr = shim::rhist_map_alloc(len);
        let ptr = NonNull::new(ptr.cast::<MaybeUninit<u8>>()).ok_or(code::ENOMEM)?;
        // INVARIANT: just allocated, `len` bytes.
        Ok(MapMemory { ptr, len })
    }

    /// The memory, uninitialised at first, borrowed for as long as `self`
    /// is.
    pub(super) fn as_uninit_mut(&mut self) -> &mut [MaybeUninit<u8>] {
        // SAFETY: `ptr` is the start of `len` bytes that only `drop()`
        // frees (invariant), which any value may fill as `MaybeUninit`;
        // `self` is borrowed mutably for as long as the result.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for MapMemory {
    fn drop(&mut self) {
        // SAFETY: from `rhist_map_alloc()`, freed only here (invariant).
        unsafe { shim::rhist_map_free(self.ptr.as_ptr().cast()) };
    }
}
