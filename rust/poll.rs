// SPDX-License-Identifier: GPL-2.0

//! Waking the pollers of `rhist` files from the event path, as hist's
//! `hist_poll_wakeup()` does: one wait queue for every file (the shim's),
//! woken through an irq_work, and only while some open file was polled.

use core::sync::atomic::{AtomicUsize, Ordering};

use kernel::bindings;

use crate::event_work::{queue_where_it_runs, Asked};
use crate::kernel_ext::barrier::{smp_mb, smp_mb_after_atomic};
use crate::kernel_ext::irq_work::{IrqWork, IrqWorkItem};
use crate::shim;
use crate::tracefs::{EventMutexCell, EventMutexHeld};

/// How many open `rhist` files have been polled: while there are none,
/// the event path does not look at the pollers' wait queue.
static POLLED_FILES: AtomicUsize = AtomicUsize::new(0);

/// Wakes the pollers of `rhist` files: the event path calls it after it
/// updated a histogram.
#[inline(always)]
pub(crate) fn wake_pollers() {
    // A poller counts itself, waits on the queue, then reads the hits
    // (`Poller::wait()`); the event path has added its hit (an atomic
    // `fetch_add()` to the entry's hitcount), then reads the count. With a
    // full barrier between the two on each side, at least one of them
    // sees the other: the poller the new hit, or the event path the
    // poller, which it then wakes. Here the barrier is the hit's atomic
    // add made one by `smp_mb__after_atomic()` (whatever the updater ran
    // since, other adds to the sums, stays before the barrier); it pairs
    // with the `smp_mb()` in `Poller::wait()`.
    smp_mb_after_atomic();
    if POLLED_FILES.load(Ordering::Relaxed) != 0 {
        wake_polled();
    }
}

/// [`wake_pollers()`] once some file was polled: queues the wakeup if a
/// poller waits (from NMI on a dying CPU, at their timeout, as hist's).
#[inline(never)]
#[cold]
fn wake_polled() {
    // `wq_has_sleeper()` takes the full barrier a waker takes before it
    // looks.
    if shim::rhist_poll_has_sleeper() {
        queue_where_it_runs(&WAKEUP, Asked::Poll);
    }
}

/// The pollers' wakeup, run through [`WAKEUP`].
struct Wakeup;

impl IrqWorkItem for Wakeup {
    fn run() {
        wake_all_now();
    }
}

/// The irq_work of the pollers' wakeup, waited for by [`PollWakeups`].
static WAKEUP: IrqWork<Wakeup> = IrqWork::new();

/// Wakes every poller now (`wake_up_all()`): in interrupt or process
/// context, not from the event path.
pub(crate) fn wake_all_now() {
    // It takes the queue's lock with interrupts disabled: any context
    // but NMI.
    shim::rhist_poll_wake_all();
}

/// An open file's part in [`POLLED_FILES`]: counted from its first
/// `poll()` until it is dropped with the file.
pub(crate) struct Poller {
    counted: EventMutexCell<bool>,
}

impl Poller {
    /// A file not polled yet.
    pub(crate) const fn new() -> Self {
        Poller {
            counted: EventMutexCell::new(false),
        }
    }

    /// Adds the file of `filp` to the wait queue of `wait`, counts it
    /// once, and returns after a full barrier: the caller then reads the
    /// hits (see [`wake_pollers()`]).
    ///
    /// # Safety
    ///
    /// `filp` and `wait` must be what the VFS passed to the `poll()` being
    /// carried out.
    pub(crate) unsafe fn wait(
        &self,
        held: EventMutexHeld<'_>,
        filp: *mut bindings::file,
        wait: *mut bindings::poll_table_struct,
    ) {
        if !self.counted.replace(held, true) {
            POLLED_FILES.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: `filp` and `wait` are the VFS's for the `poll()` under
        // way (the caller's contract): `poll_wait()` adds the file to
        // that poll table, which the VFS removes it from once it is done.
        unsafe { shim::rhist_poll_wait(filp, wait) };
        // The count (and the queue) before the caller reads the hits:
        // pairs with the `smp_mb_after_atomic()` in `wake_pollers()`.
        smp_mb();
    }
}

impl Drop for Poller {
    fn drop(&mut self) {
        if *self.counted.get_mut() {
            POLLED_FILES.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Waits until no wakeup of pollers is queued or running: the module's
/// last step before it goes.
pub(crate) struct PollWakeups(());

impl PollWakeups {
    pub(crate) fn new() -> Self {
        Self(())
    }
}

impl Drop for PollWakeups {
    fn drop(&mut self) {
        // No probe of ours runs any more, and the hotplug callbacks are
        // gone: nothing queues it again.
        WAKEUP.sync();
    }
}
