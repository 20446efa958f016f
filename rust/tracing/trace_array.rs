// SPDX-License-Identifier: GPL-2.0

//! A trace instance (`struct trace_array`), and [`InstanceRef`], a
//! reference that keeps one.
//!
//! hist takes a reference on a trigger's instance for as long as its
//! histogram defines or references variables (`save_hist_vars()`), so
//! that `rmdir` of the instance fails with `EBUSY` while other triggers,
//! actions or a snapshot may still use it. rhist takes the same, and
//! more: whatever keeps a trace array to use later (a conditional
//! snapshot) holds an [`InstanceRef`] rather than a raw pointer.

use core::mem::offset_of;
use core::ptr::NonNull;
use kernel::ffi::c_int;

use kernel::bindings;
use kernel::error::{code, Result};
use kernel::types::Opaque;

use super::EventFile;
use crate::kernel_ext::field_ptr;
use crate::kernel_ext::list::ListIter;
use crate::tracefs::EventMutexHeld;

/// A trace instance: the top-level one or one made by `mkdir` under
/// `instances/`.
///
/// # Invariants
///
/// For as long as a `&TraceArray` is used, the `trace_array` it wraps is
/// not freed. The tracing core frees an instance only after it has
/// removed the instance's event files, and not while a reference taken by
/// `trace_array_get()` is held; so a live [`EventFile`]'s trace array, or
/// one an [`InstanceRef`] holds, is live.
#[repr(transparent)]
pub(crate) struct TraceArray(Opaque<bindings::trace_array>);

// SAFETY: a trace array is not tied to a CPU or task; the tracing core
// uses it from any CPU, under its locks.
unsafe impl Send for TraceArray {}
// SAFETY: the tracing core shares trace arrays between CPUs; the methods go
// through the tracing core's functions, which take the locks they need, or
// walk the events under `event_mutex` (an `EventMutexHeld`).
unsafe impl Sync for TraceArray {}

impl TraceArray {
    /// The trace array `ptr` points at.
    ///
    /// # Safety
    ///
    /// `ptr` must point at a trace array that is not freed for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::trace_array) -> &'a Self {
        // INVARIANT: the caller's promise for `'a` is the invariant.
        // SAFETY: `TraceArray` is `repr(transparent)` over the C struct
        // (through `Opaque`), which is live for `'a` (the caller's
        // promise).
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The C struct, for the tracing core's functions.
    pub(crate) fn as_ptr(&self) -> *mut bindings::trace_array {
        self.0.get()
    }

    /// Takes a reference on the instance; `ENODEV` if it is being
    /// removed (`trace_array_get()` finds it no more). Sleeps: takes
    /// `trace_types_lock`, which the caller must not hold.
    pub(crate) fn get(&self) -> Result<InstanceRef> {
        // SAFETY: `trace_array_get()` looks the pointer up in the list of
        // trace arrays by address, under its lock, and takes a reference
        // only if it is there; the array is live anyway (invariant).
        let ret = unsafe { bindings::trace_array_get(self.as_ptr()) };
        if ret < 0 {
            return Err(code::ENODEV);
        }
        // INVARIANT: the reference was taken.
        Ok(InstanceRef(NonNull::from(self)))
    }

    /// C's `__find_event_file()`: the file of the event `system`.`event`
    /// in the instance, or `None`. The file is live for `'a`: an event is
    /// removed only with the lock held.
    pub(crate) fn find_event_file<'a>(
        &'a self,
        _held: EventMutexHeld<'a>,
        system: &str,
        event: &str,
    ) -> Option<&'a EventFile> {
        let head = field_ptr!(self.as_ptr(), bindings::trace_array, events);
        // SAFETY: every node on `tr->events` is the `list` member of a
        // `trace_event_file`, which `EventFile` wraps, live (as its
        // invariant says) while it is on the list; events and instances
        // are added and removed only with `event_mutex` held, held for
        // `'a` (`_held`).
        let files: ListIter<'a, EventFile, false> =
            unsafe { ListIter::new(head, offset_of!(bindings::trace_event_file, list)) };
        files.filter(|file| file.has_class()).find(|file| {
            let (s, e) = file.names();
            !e.is_empty() && s == system.as_bytes() && e == event.as_bytes()
        })
    }

    /// Whether the instance has the event `system`.`event`: C's
    /// `__find_event_file()`, which hist's `event_file()` uses.
    pub(crate) fn has_event(&self, held: EventMutexHeld<'_>, system: &str, event: &str) -> bool {
        self.find_event_file(held, system, event).is_some()
    }

    /// Sets the instance's trace clock to `clock`, a NUL-terminated name:
    /// C's `tracing_set_clock()`. Returns 0 or a negative errno
    /// (`EINVAL` for a name without its NUL).
    pub(crate) fn set_clock(&self, clock: &[u8]) -> c_int {
        if !clock.ends_with(&[0]) {
            return code::EINVAL.to_errno();
        }
        // SAFETY: the array is live (invariant) and `clock` NUL-terminated
        // (checked above); the callee takes the locks it needs.
        unsafe { bindings::tracing_set_clock(self.as_ptr(), clock.as_ptr().cast()) }
    }

    /// Whether the instance's trace clock counts nanoseconds
    /// (`trace_clock_in_ns()`).
    pub(crate) fn clock_in_ns(&self) -> bool {
        // SAFETY: the array is live (invariant); the callee reads its clock
        // id, in any context.
        unsafe { bindings::trace_clock_in_ns(self.as_ptr()) }
    }

    /// Has the instance's events written straight to the ring buffer
    /// (`set`), or drops such a request: C's
    /// `tracing_set_filter_buffering()`, a count.
    pub(crate) fn set_filter_buffering(&self, set: bool) {
        // SAFETY: the array is live (invariant); the callee takes the lock
        // it needs.
        unsafe { bindings::tracing_set_filter_buffering(self.as_ptr(), set) };
    }
}

/// One reference on a trace instance: while it lives the trace array is
/// not freed, and removing the instance fails with `EBUSY`.
///
/// It is no `ARef<TraceArray>`: `trace_array_get()` may fail (an instance
/// being removed is no longer found) and sleeps, where
/// `AlwaysRefCounted::inc_ref()` may neither. [`TraceArray::get`] is the
/// fallible constructor.
///
/// Dropping it takes `trace_types_lock`: it must not be dropped where the
/// tracing core holds that lock (see `command::free()`, which defers what
/// the tracing core frees while it removes an instance).
///
/// # Invariants
///
/// `0` is a trace array on which this value holds one reference, taken by
/// `trace_array_get()`.
pub(crate) struct InstanceRef(NonNull<TraceArray>);

// SAFETY: the reference may be dropped on any CPU and the trace array it
// keeps may be used from any CPU (`TraceArray` is `Send`).
unsafe impl Send for InstanceRef {}
// SAFETY: shared use only hands out `&TraceArray`, which is `Sync`.
unsafe impl Sync for InstanceRef {}

impl core::ops::Deref for InstanceRef {
    type Target = TraceArray;

    fn deref(&self) -> &TraceArray {
        // SAFETY: the reference held keeps the trace array from being
        // freed (invariant) for as long as `self` lives.
        unsafe { self.0.as_ref() }
    }
}

impl Drop for InstanceRef {
    fn drop(&mut self) {
        // SAFETY: drops the reference `get()` took (invariant), once.
        unsafe { bindings::trace_array_put(self.as_ptr()) };
    }
}
