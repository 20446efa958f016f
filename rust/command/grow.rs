// SPDX-License-Identifier: GPL-2.0

//! `:grow` in the kernel (the protocol is the core's, `grow.rs`): the
//! histogram of a `:grow` trigger's current generation, behind one
//! pointer that the event path loads once per event, and the work that
//! moves it to a larger map.
//!
//! The event path ([`Growing::after_update`]) asks through the shim's
//! irq_work, which queues [`rhist_grow_run`] on rhist's kthread worker.
//! The work takes `event_mutex`, as the readers of the histogram and
//! every command do, and grows each trigger in [`REGISTRY`] that asked:
//! a trigger freed before the work runs is no longer there, so no
//! trigger waits for the work as it goes.
//!
//! Locks: the work takes `event_mutex` alone (never `trace_types_lock`),
//! and waits for the probes (`tracepoint_synchronize_unregister()`)
//! while it holds it, as `clear` does. Only the module's unloading waits
//! for the work ([`GrowWorker`]'s drop), after every trigger is gone and
//! with no lock held, so the wait cannot close a cycle.

use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use kernel::alloc::flags::GFP_KERNEL;
use kernel::error::Error;
use kernel::prelude::*;
use kernel::sync::Arc;

use super::map_memory::MapMemory;
use super::state::{HistSource, HistogramOf, Resolved};
use super::{state, REGISTRY};
use crate::hist::grow::{fold_into, next_bits, GrowStats, GrowTrigger};
use crate::hist::histogram::{map_params_sized, Histogram};
use crate::hist::map::{MapError, TracingMap};
use crate::shim;
use crate::tied::Tied;
use crate::tracefs::{EventMutexGuard, EventMutexHeld};

/// One generation of a growing histogram: its map and when it asks.
pub(super) struct Generation {
    hist: Tied<HistSource, HistogramOf>,
    trigger: GrowTrigger,
    bits: u32,
}

impl Generation {
    /// A generation of `1 << bits` entries of `resolved`'s histogram.
    #[inline(never)]
    fn new(resolved: &Arc<Resolved>, bits: u32) -> Result<KBox<Self>> {
        let map_error = |e: MapError| Error::from_errno(-e.errno());
        let params = map_params_sized(resolved.data(), bits, crate::event::nr_cpu_ids());
        let bytes = params.storage_bytes().map_err(map_error)?;
        let source = HistSource {
            resolved: resolved.clone(),
            memory: MapMemory::new(bytes)?,
        };
        let hist = Tied::try_new(source, |source| {
            let HistSource { resolved, memory } = source;
            let map = TracingMap::new_uninit(params, memory.as_uninit_mut()).map_err(map_error)?;
            Histogram::new(resolved.data(), map).map_err(map_error)
        })?;
        Ok(KBox::new(
            Generation {
                hist,
                trigger: GrowTrigger::new(bits),
                bits,
            },
            GFP_KERNEL,
        )?)
    }

    /// The histogram of this generation.
    #[inline(always)]
    pub(super) fn histogram(&self) -> &Histogram<'_> {
        self.hist.get()
    }
}

/// What a `:grow` histogram adds to its [`Hist`](super::state::Hist):
/// the current generation and the grow's counts.
///
/// # Invariants
///
/// `current` is never null: it owns a generation made by
/// [`KBox::into_raw`], replaced only by [`grow`](Self::grow) with
/// `event_mutex` held, and freed with `self` or by that grow once no
/// probe can still see it.
pub(super) struct Growing {
    current: AtomicPtr<Generation>,
    /// The resolved trigger whose histogram grows: each generation reads
    /// its data.
    resolved: Arc<Resolved>,
    /// The event path asked for the grow and the work has not yet taken
    /// the request.
    pending: AtomicBool,
    stats: GrowStats,
}

impl Growing {
    /// Makes generation 0 of `resolved`'s histogram, of `size=`'s
    /// entries.
    pub(super) fn new(resolved: &Arc<Resolved>) -> Result<KBox<Self>> {
        let first = Generation::new(resolved, resolved.data().map_bits())?;
        Ok(KBox::new(
            Growing {
                // INVARIANT: from `KBox::into_raw()`.
                current: AtomicPtr::new(KBox::into_raw(first)),
                resolved: resolved.clone(),
                pending: AtomicBool::new(false),
                stats: GrowStats::default(),
            },
            GFP_KERNEL,
        )?)
    }

    /// The current generation, for the event path: it may be replaced
    /// meanwhile, but is freed only once the probe has returned.
    ///
    /// # Safety
    ///
    /// Only from a probe of the trigger (preemption disabled, inside the
    /// tracepoint's protection), and the result not used after it
    /// returns.
    #[inline(always)]
    pub(super) unsafe fn current_rcu(&self) -> &Generation {
        // Acquire: the generation's map was built before it was
        // published (`grow()`'s release store).
        let gen = self.current.load(Ordering::Acquire);
        // SAFETY: never null (invariant); a replaced one is freed only
        // after the grace period `grow()` waits for, which this probe is
        // inside of (our contract).
        unsafe { &*gen }
    }

    /// The current generation, which no grow replaces while the lock is
    /// held.
    pub(super) fn current<'a>(&'a self, _held: EventMutexHeld<'a>) -> &'a Generation {
        // SAFETY: never null (invariant); replaced and freed only with the
        // lock held, which `_held` says this task holds for `'a`.
        unsafe { &*self.current.load(Ordering::Acquire) }
    }

    /// After the event path accounted an event in `gen`: asks for the
    /// grow once the generation fills (no allocation, no lock).
    #[inline(always)]
    pub(super) fn after_update(&self, gen: &Generation) {
        if gen.trigger.check(gen.histogram().map().len()) {
            self.pending.store(true, Ordering::Relaxed);
            // SAFETY: callable in any context; it queues irq_work. Its
            // queueing orders the store above before the work's swap.
            unsafe { shim::rhist_grow_request() };
        }
    }

    /// After `clear`: the current generation, empty, asks again as a new
    /// one.
    pub(super) fn cleared(&self, held: EventMutexHeld<'_>) {
        self.current(held).trigger.reset();
    }

    /// `rhist_debug`'s line.
    pub(super) fn write_debug(
        &self,
        held: EventMutexHeld<'_>,
        out: &mut dyn core::fmt::Write,
    ) -> core::fmt::Result {
        let max_elts = self.current(held).histogram().map().max_elts();
        self.stats.write_debug(out, max_elts)
    }

    /// The grow, if the event path asked: the map of the next size made,
    /// published, waited on, the old one folded into it and freed. An
    /// allocation that fails keeps the old one and asks again later.
    /// Whether the generation was replaced.
    fn grow(&self, held: EventMutexHeld<'_>) -> bool {
        if !self.pending.swap(false, Ordering::Relaxed) {
            return false;
        }
        let old_ptr = self.current.load(Ordering::Relaxed);
        let old = self.current(held);
        let Some(bits) = next_bits(old.bits) else {
            return false;
        };
        let new = match Generation::new(&self.resolved, bits) {
            Ok(new) => new,
            Err(_) => {
                self.stats.failed();
                old.trigger.retry();
                return false;
            }
        };
        // INVARIANT: from `KBox::into_raw()`, replaced with the lock held.
        // Release: the map is built before a probe can see it.
        self.current.store(KBox::into_raw(new), Ordering::Release);
        self.stats.grew();
        // Every probe that may have loaded the old pointer returns.
        // SAFETY: no precondition; it sleeps, which the work may.
        unsafe { shim::rhist_grow_synchronize() };
        // SAFETY: `old_ptr` came from `KBox::into_raw()` (invariant); no
        // probe can reach it any more (waited for above), and no reader
        // (they hold the lock, as this task does).
        let old = unsafe { KBox::from_raw(old_ptr) };
        if fold_into(old.histogram(), self.current(held).histogram()).is_err() {
            pr_warn!("grow: a generation could not be folded\n");
        }
        drop(old);
        true
    }
}

impl Drop for Growing {
    fn drop(&mut self) {
        // SAFETY: never null, from `KBox::into_raw()` (invariant); no probe
        // or reader sees `self` any more.
        drop(unsafe { KBox::from_raw(*self.current.get_mut()) });
    }
}

/// The grow work, on rhist's kthread worker (`include/rhist_shim.c`):
/// grows every registered `:grow` trigger that asked.
#[no_mangle]
extern "C" fn rhist_grow_run() {
    let guard = EventMutexGuard::lock();
    let held = guard.held();
    for data in REGISTRY.iter(held) {
        // SAFETY: registered triggers are live, and none is freed while
        // the lock is held.
        // SAFETY: as above.
        let trigger = unsafe { state(held, data) };
        if trigger.growing().is_some_and(|g| g.grow(held)) {
            trigger.contents_changed(held);
        }
    }
}

/// rhist's kthread worker for the grow work: made at load, stopped at
/// unload once every trigger is gone (the last request waited for).
pub(super) struct GrowWorker(());

impl GrowWorker {
    pub(super) fn new() -> Result<Self> {
        // SAFETY: no precondition; called once, at load.
        let ret = unsafe { shim::rhist_grow_init() };
        if ret < 0 {
            return Err(Error::from_errno(ret));
        }
        Ok(GrowWorker(()))
    }
}

impl Drop for GrowWorker {
    fn drop(&mut self) {
        // SAFETY: after `rhist_grow_init()` succeeded; dropped after the
        // triggers are gone, with no lock held (it sleeps).
        unsafe { shim::rhist_grow_exit() };
    }
}
