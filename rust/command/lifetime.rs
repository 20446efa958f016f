// SPDX-License-Identifier: GPL-2.0

//! How an rhist trigger's `event_trigger_data` and state go: references
//! taken by the list and the command, the tracing core's `free()`, and
//! the states it frees under `trace_types_lock`, dropped later.

use core::cell::UnsafeCell;

use kernel::bindings;
use kernel::prelude::*;

use super::state::Trigger;
use super::REGISTRY;
use crate::shim;
use crate::tracefs::{EventMutexGuard, EventMutexHeld};

/// `free()`: the tracing core drops its reference on `data` as it
/// removes an instance (`clear_event_triggers()`), the only place it
/// calls this. It holds `event_mutex` and `trace_types_lock` there, which
/// dropping a trigger may take (through [`InstanceRef`], or a hidden
/// histogram's removal): the trigger's state is dropped later, by
/// [`Deferred::release()`].
///
/// [`InstanceRef`]: crate::instance::InstanceRef
///
/// # Safety
///
/// Called by the tracing core only, for a live rhist trigger it has
/// unlinked, with `event_mutex` held.
pub(super) unsafe extern "C" fn free(data: *mut bindings::event_trigger_data) {
    // SAFETY: the lock is held for the whole call (our contract).
    let held = unsafe { EventMutexHeld::assume() };
    // SAFETY: `data` is a live rhist trigger.
    if let Some(state) = unsafe { release(held, data) } {
        DEFERRED.push(held, state);
    }
}

/// Drops a reference on `data`, and the trigger with the last one.
///
/// # Safety
///
/// `data` must be a live rhist trigger, and `trace_types_lock` not held.
pub(super) unsafe fn put(held: EventMutexHeld<'_>, data: *mut bindings::event_trigger_data) {
    // SAFETY: the caller's contract; dropping the state needs nothing
    // more than the lock held (`held`) without `trace_types_lock`.
    drop(unsafe { release(held, data) });
}

/// Drops a reference on `data`; with the last one, frees it and hands
/// its state over.
///
/// # Safety
///
/// `data` must be a live rhist trigger.
unsafe fn release(
    held: EventMutexHeld<'_>,
    data: *mut bindings::event_trigger_data,
) -> Option<KBox<Trigger>> {
    // SAFETY: `data` is live; its count changes only with the lock held
    // (`held`).
    let refs = unsafe { &mut (*data).ref_ };
    if *refs <= 0 {
        pr_warn!("unbalanced trigger reference\n");
        return None;
    }
    *refs -= 1;
    if *refs > 0 {
        return None;
    }
    REGISTRY.remove(held, data);
    // SAFETY: `data` is live; an rhist trigger's private data is null or
    // the `Trigger` that `attach()` leaked into it.
    let state = unsafe { (*data).private_data.cast::<Trigger>() };
    // SAFETY: the last reference is gone and `data` is on no list; this
    // clears its filter, waits for running probes and frees it.
    unsafe { bindings::trigger_data_free(data) };
    // SAFETY: no probe can reach the trigger any more (waited for
    // above), and a non-null `state` came from `KBox::into_raw()`.
    (!state.is_null()).then(|| unsafe { KBox::from_raw(state) })
}

/// Trigger states the tracing core freed while holding `trace_types_lock`,
/// to be dropped without it: a list through [`Trigger::deferred_next`].
/// A work item drops them soon after; so does the next command written,
/// and the module's unloading, whichever comes first.
///
/// # Invariants
///
/// The list is accessed only with `event_mutex` held, and no reference
/// to it outlives the method call that made it.
pub(super) struct Deferred(UnsafeCell<Option<KBox<Trigger>>>);

// SAFETY: every access is serialised by the lock each method is shown
// to be held (invariant).
unsafe impl Sync for Deferred {}

// INVARIANT: accessed only through the methods of `Deferred`.
pub(super) static DEFERRED: Deferred = Deferred(UnsafeCell::new(None));

impl Deferred {
    /// Keeps `trigger` until [`release()`](Self::release), which the work
    /// item queued here runs.
    fn push(&self, _held: EventMutexHeld<'_>, mut trigger: KBox<Trigger>) {
        // SAFETY: the lock is held (`_held`) and no other reference to the
        // list lives (invariant): this one ends before the call does.
        let head = unsafe { &mut *self.0.get() };
        trigger.deferred_next = head.take();
        *head = Some(trigger);
        // SAFETY: no precondition; the work takes `event_mutex` itself.
        unsafe { shim::rhist_deferred_schedule() };
    }

    /// Drops every trigger state on the list.
    ///
    /// # Safety
    ///
    /// `trace_types_lock` must not be held.
    pub(super) unsafe fn release(&self, _held: EventMutexHeld<'_>) {
        // SAFETY: as in `push()`; the reference ends before the states
        // are dropped.
        let mut next = unsafe { (*self.0.get()).take() };
        // A loop, not the boxes' recursive drops: the list may be long.
        while let Some(mut trigger) = next {
            next = trigger.deferred_next.take();
            drop(trigger);
        }
    }
}

/// Waits, when dropped, for [`DEFERRED`]'s work item: the last step of
/// unloading, once no trigger is left for the work to free.
pub(super) struct DeferredFlush;

impl Drop for DeferredFlush {
    fn drop(&mut self) {
        // SAFETY: may sleep, which dropping the command's registration (at
        // module init's failure or exit) may.
        unsafe { shim::rhist_deferred_flush() };
    }
}

/// The work item of [`Deferred`] (`include/rhist_shim.c`).
#[no_mangle]
extern "C" fn rhist_release_deferred() {
    let guard = EventMutexGuard::lock();
    // SAFETY: a work item holds no lock but the guard's.
    unsafe { DEFERRED.release(guard.held()) };
}
