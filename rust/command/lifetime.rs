// SPDX-License-Identifier: GPL-2.0

//! How an rhist trigger's `event_trigger_data` and state go: references
//! taken by the list and the command, the tracing core's `free()`, and
//! the states it frees under `trace_types_lock`, dropped later.

use core::cell::UnsafeCell;

use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::workqueue::{self, Work, WorkItem};
use kernel::{impl_has_work, new_work};

use super::state::Trigger;
use super::{Rhist, REGISTRY};
use crate::kernel_ext::workqueue::flush_work;
use crate::tracefs::{EventMutexCell, EventMutexGuard, EventMutexHeld};
use crate::tracing::{Refs, TriggerData};
use crate::trigger_cmd::Unlinked;

/// `free()`: the tracing core drops its reference on a trigger as it
/// removes an instance (`clear_event_triggers()`), the only place it
/// calls this. It holds `event_mutex` and `trace_types_lock` there, which
/// dropping a trigger may take (through [`InstanceRef`], or a hidden
/// histogram's removal): the trigger's state is dropped later, by
/// [`Deferred::release()`].
///
/// [`InstanceRef`]: crate::tracing::InstanceRef
pub(super) fn free(held: EventMutexHeld<'_>, unlinked: Unlinked<'_, Rhist>) {
    // SAFETY: `unlinked` is an rhist trigger, off its list, whose
    // reference is handed over, and that the tracing core does not use
    // after this (invariant of `Unlinked`); nor does this function.
    if let Some(state) = unsafe { release(held, unlinked.data()) } {
        DEFERRED.push(held, state);
    }
}

/// Drops a reference on `data`, and the trigger with the last one.
///
/// # Safety
///
/// `data` must be an rhist trigger, `trace_types_lock` not held; if this
/// is its last reference, `data` must be off its list and not used after
/// this.
pub(super) unsafe fn put(held: EventMutexHeld<'_>, data: &TriggerData) {
    // SAFETY: the caller's promise is `release()`'s; dropping the state
    // needs nothing more than the lock held (`held`) without
    // `trace_types_lock` (the caller's promise).
    drop(unsafe { release(held, data) });
}

/// Drops a reference on `data`; with the last one, frees it and hands
/// its state over.
///
/// # Safety
///
/// `data` must be an rhist trigger; if this is its last reference, off
/// its list and not used after this.
unsafe fn release(held: EventMutexHeld<'_>, data: &TriggerData) -> Option<KBox<Trigger>> {
    match data.put_ref(held) {
        Refs::Unbalanced => {
            pr_warn!("unbalanced trigger reference\n");
            return None;
        }
        Refs::Left => return None,
        Refs::Last => {}
    }
    REGISTRY.remove(held, data);
    // An rhist trigger's private data is null or the `Trigger` that
    // `attach()` leaked into it.
    let state = data.private_data().cast::<Trigger>();
    // SAFETY: the last reference is gone, `data` is on no list and not
    // used after this (the caller's promise); this clears its filter,
    // waits for running probes and frees it.
    unsafe { data.free() };
    // SAFETY: no probe can reach the trigger any more (waited for
    // above), and a non-null `state` came from `KBox::into_raw()`.
    (!state.is_null()).then(|| unsafe { KBox::from_raw(state) })
}

/// Trigger states the tracing core freed while holding `trace_types_lock`,
/// to be dropped without it: a list through [`Trigger::deferred_next`].
/// A work item drops them soon after; so does the next command written,
/// and the module's unloading, whichever comes first. A state here is
/// only dropped, never read: its instance may have been freed since (see
/// `EventPin`'s invariants).
///
/// # Invariants
///
/// The list is accessed only with `event_mutex` held, and no reference
/// to it outlives the method call that made it.
pub(super) struct Deferred {
    list: UnsafeCell<Option<KBox<Trigger>>>,
    /// The work item that drops the list, while the module is loaded
    /// ([`DeferredWork`]).
    work: EventMutexCell<Option<Arc<DeferredDrop>>>,
}

// SAFETY: every access is serialised by the lock each method is shown
// to be held (invariant).
unsafe impl Sync for Deferred {}

// INVARIANT: accessed only through the methods of `Deferred`.
pub(super) static DEFERRED: Deferred = Deferred {
    list: UnsafeCell::new(None),
    work: EventMutexCell::new(None),
};

impl Deferred {
    /// Keeps `trigger` until [`release()`](Self::release), which the work
    /// item queued here runs.
    fn push(&self, held: EventMutexHeld<'_>, mut trigger: KBox<Trigger>) {
        // SAFETY: the lock is held (`held`) and no other reference to the
        // list lives (invariant): this one ends before the call does.
        let head = unsafe { &mut *self.list.get() };
        trigger.deferred_next = head.take();
        *head = Some(trigger);
        let work = self.work.take(held);
        if let Some(work) = &work {
            // Already queued, it drops this state too: the clone back is
            // then dropped, never the last reference (`self` keeps one).
            let _ = workqueue::system().enqueue(work.clone());
        }
        self.work.set(held, work);
    }

    /// Drops every trigger state on the list.
    ///
    /// # Safety
    ///
    /// `trace_types_lock` must not be held.
    pub(super) unsafe fn release(&self, _held: EventMutexHeld<'_>) {
        // SAFETY: the lock is held (`_held`) and no other reference to the
        // list lives (invariant): this one ends before the states are
        // dropped.
        let mut next = unsafe { (*self.list.get()).take() };
        // A loop, not the boxes' recursive drops: the list may be long.
        while let Some(mut trigger) = next {
            next = trigger.deferred_next.take();
            drop(trigger);
        }
    }
}

/// The work item of [`Deferred`], on the system workqueue: drops the
/// states on the list, with `event_mutex` held and no other lock.
#[pin_data]
pub(super) struct DeferredDrop {
    #[pin]
    work: Work<DeferredDrop>,
}

impl_has_work! {
    impl HasWork<Self> for DeferredDrop { self.work }
}

impl WorkItem for DeferredDrop {
    type Pointer = Arc<DeferredDrop>;

    fn run(_this: Arc<DeferredDrop>) {
        let guard = EventMutexGuard::lock();
        // SAFETY: a work item of the system workqueue holds no lock but
        // the guard's, so not `trace_types_lock`.
        unsafe { DEFERRED.release(guard.held()) };
    }
}

/// [`DEFERRED`]'s work item while the module is loaded: queued by its
/// pushes from the time this is made, and waited for when this is
/// dropped, the last step of unloading, once no trigger is left for the
/// work to free.
pub(super) struct DeferredWork(Arc<DeferredDrop>);

impl DeferredWork {
    /// Makes the work item and hands it to [`DEFERRED`].
    pub(super) fn new() -> Result<Self> {
        let work = Arc::pin_init(
            pin_init!(DeferredDrop {
                work <- new_work!("DeferredDrop::work"),
            }),
            GFP_KERNEL,
        )?;
        let guard = EventMutexGuard::lock();
        DEFERRED.work.set(guard.held(), Some(work.clone()));
        Ok(DeferredWork(work))
    }
}

impl Drop for DeferredWork {
    fn drop(&mut self) {
        // No push queues it from here on; then the last queueing has run.
        let guard = EventMutexGuard::lock();
        let work = DEFERRED.work.take(guard.held());
        drop(guard);
        drop(work);
        flush_work(&*self.0);
    }
}
