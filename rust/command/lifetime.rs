// SPDX-License-Identifier: GPL-2.0

//! How an rhist trigger's state goes when the tracing core frees the
//! trigger under `trace_types_lock` (its `free()`): dropped later.

use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::workqueue::{self, Work, WorkItem};
use kernel::{impl_has_work, new_work};

use super::state::Trigger;
use crate::kernel_ext::workqueue::flush_work;
use crate::tracefs::{EventMutexCell, EventMutexGuard, EventMutexHeld, EventMutexScope};
use crate::tracing::Unlisted;

/// `free()`: the tracing core drops its reference on a trigger as it
/// removes an instance (`clear_event_triggers()`), the only place it
/// calls this. It holds `event_mutex` and `trace_types_lock` there, which
/// dropping a trigger may take (through [`InstanceRef`], or a hidden
/// histogram's removal): the trigger's state is dropped later, by
/// [`Deferred::release()`].
///
/// [`InstanceRef`]: crate::tracing::InstanceRef
pub(super) fn free(held: EventMutexHeld<'_>, unlisted: Unlisted<Trigger>) {
    if let Some(state) = unlisted.release(held) {
        DEFERRED.push(held, state);
    }
}

/// Trigger states the tracing core freed while holding `trace_types_lock`,
/// to be dropped without it: a list through [`Trigger::deferred_next`].
/// A work item drops them soon after; so does the next command written,
/// and the module's unloading, whichever comes first. A state here is
/// only dropped, never read: its instance may have been freed since (see
/// `EventPin`'s invariants).
pub(super) struct Deferred {
    list: EventMutexCell<Option<KBox<Trigger>>>,
    /// The work item that drops the list, while the module is loaded
    /// ([`DeferredWork`]).
    work: EventMutexCell<Option<Arc<DeferredDrop>>>,
}

pub(super) static DEFERRED: Deferred = Deferred {
    list: EventMutexCell::new(None),
    work: EventMutexCell::new(None),
};

impl Deferred {
    /// Keeps `trigger` until [`release()`](Self::release), which the work
    /// item queued here runs.
    fn push(&self, held: EventMutexHeld<'_>, mut trigger: KBox<Trigger>) {
        trigger.deferred_next = self.list.take(held);
        self.list.set(held, Some(trigger));
        let work = self.work.take(held);
        if let Some(work) = &work {
            // Already queued, it drops this state too: the clone back is
            // then dropped, never the last reference (`self` keeps one).
            let _ = workqueue::system().enqueue(work.clone());
        }
        self.work.set(held, work);
    }

    /// Drops every trigger state on the list; their hidden histograms'
    /// triggers go with them, hence the hold borrowed `mut`. A caller
    /// holding `trace_types_lock` would deadlock: dropping a state may
    /// take it (see [`free()`]).
    pub(super) fn release(&self, scope: &mut EventMutexScope<'_>) {
        let mut next = self.list.take(scope.held());
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
        // A work item of the system workqueue holds no lock but the
        // guard's, so not `trace_types_lock`.
        let mut guard = EventMutexGuard::lock();
        DEFERRED.release(&mut guard.scope());
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
