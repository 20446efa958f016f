// SPDX-License-Identifier: GPL-2.0

//! References on trace instances (`struct trace_array`).
//!
//! hist takes one on a trigger's instance for as long as its histogram
//! defines or references variables (`save_hist_vars()`), so that `rmdir`
//! of the instance fails with `EBUSY` while other triggers, actions or a
//! snapshot may still use it. rhist takes the same, and more: whatever
//! keeps a trace array to use later (a conditional snapshot) holds an
//! [`InstanceRef`] rather than a raw pointer.

use core::ptr::NonNull;

use kernel::bindings;
use kernel::error::{code, Result};

/// One reference on a trace instance: while it lives the trace array is
/// not freed, and removing the instance fails with `EBUSY`.
///
/// Dropping it takes `trace_types_lock`: it must not be dropped where the
/// tracing core holds that lock (see `command::free()`, which defers what
/// the tracing core frees while it removes an instance).
///
/// # Invariants
///
/// `0` is a trace array on which this value holds one reference, taken by
/// `trace_array_get()`.
pub(crate) struct InstanceRef(NonNull<bindings::trace_array>);

// SAFETY: the reference may be dropped on any CPU and the trace array it
// keeps may be used from any CPU.
unsafe impl Send for InstanceRef {}
// SAFETY: shared use only reads the pointer.
unsafe impl Sync for InstanceRef {}

impl InstanceRef {
    /// Takes a reference on `tr`; `ENODEV` if it is no instance of the
    /// tracing core (any more). Sleeps: takes `trace_types_lock`.
    pub(crate) fn get(tr: *mut bindings::trace_array) -> Result<Self> {
        let tr = NonNull::new(tr).ok_or(code::ENODEV)?;
        // SAFETY: `trace_array_get()` looks `tr` up in the list of trace
        // arrays by address, under its lock, and takes a reference only if
        // it is there: any pointer may be passed.
        let ret = unsafe { bindings::trace_array_get(tr.as_ptr()) };
        if ret < 0 {
            return Err(code::ENODEV);
        }
        // INVARIANT: the reference was taken.
        Ok(InstanceRef(tr))
    }

    /// The trace array, live for as long as this value.
    pub(crate) fn as_ptr(&self) -> *mut bindings::trace_array {
        self.0.as_ptr()
    }
}

impl Drop for InstanceRef {
    fn drop(&mut self) {
        // SAFETY: drops the reference `get()` took (invariant), once.
        unsafe { bindings::trace_array_put(self.0.as_ptr()) };
    }
}
