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

use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use kernel::alloc::flags::GFP_KERNEL;
use kernel::error::Error;
use kernel::prelude::*;

use super::map_memory::MapMemory;
use super::{state, REGISTRY};
use crate::hist::grow::{fold_into, next_bits, GrowStats, GrowTrigger};
use crate::hist::hist_data::HistData;
use crate::hist::histogram::{map_params_sized, Histogram};
use crate::hist::map::TracingMap;
use crate::shim;
use crate::tracefs::{EventMutexGuard, EventMutexHeld};

/// One generation of a growing histogram: its map and when it asks.
///
/// # Invariants
///
/// `hist` borrows `_memory` (never touched through its owner after the
/// map is built, freed after `hist`: declaration order) and the hist
/// data of the [`Growing`] that owns the generation, which outlives it.
pub(super) struct Generation {
    hist: Histogram<'static>,
    trigger: GrowTrigger,
    bits: u32,
    _memory: MapMemory,
}

impl Generation {
    /// A generation of `1 << bits` entries of `data`'s histogram.
    ///
    /// # Safety
    ///
    /// `data` must outlive the result (it is the hist data of the
    /// [`Hist`](super::state::Hist) that will own it).
    #[inline(never)]
    unsafe fn new(data: &HistData<'_>, bits: u32) -> Result<KBox<Self>> {
        let params = map_params_sized(data, bits, crate::event::nr_cpu_ids());
        let bytes = params
            .storage_bytes()
            .map_err(|e| Error::from_errno(-e.errno()))?;
        let mut memory = MapMemory::new(bytes)?;
        // SAFETY: the memory is never touched through `memory` again; it
        // moves into the result with the map, freed after it (invariants
        // of `Self`).
        let spare = unsafe { core::slice::from_raw_parts_mut(memory.as_mut_ptr(), memory.len()) };
        let map =
            TracingMap::new_uninit(params, spare).map_err(|e| Error::from_errno(-e.errno()))?;
        // SAFETY: `data` outlives the result (our contract).
        let data: &'static HistData<'static> =
            unsafe { &*ptr::from_ref(data).cast::<HistData<'static>>() };
        let hist = Histogram::new(data, map).map_err(|e| Error::from_errno(-e.errno()))?;
        Ok(KBox::new(
            Generation {
                hist,
                trigger: GrowTrigger::new(bits),
                bits,
                _memory: memory,
            },
            GFP_KERNEL,
        )?)
    }

    /// The histogram of this generation.
    pub(super) fn histogram(&self) -> &Histogram<'_> {
        &self.hist
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
    /// The event path asked for the grow and the work has not yet taken
    /// the request.
    pending: AtomicBool,
    stats: GrowStats,
}

impl Growing {
    /// Makes generation 0, of `size=`'s entries.
    ///
    /// # Safety
    ///
    /// `data` must outlive the result.
    pub(super) unsafe fn new(data: &HistData<'_>) -> Result<KBox<Self>> {
        // SAFETY: our contract.
        let first = unsafe { Generation::new(data, data.map_bits()) }?;
        Ok(KBox::new(
            Growing {
                // INVARIANT: from `KBox::into_raw()`.
                current: AtomicPtr::new(KBox::into_raw(first)),
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
        if gen.trigger.check(gen.hist.map().len()) {
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
        let max_elts = self.current(held).hist.map().max_elts();
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
        // SAFETY: the data of the generations outlives `self`, which
        // will own the new one (our owner's invariant).
        let new = match unsafe { Generation::new(old.hist.data(), bits) } {
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
        if fold_into(&old.hist, &self.current(held).hist).is_err() {
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
