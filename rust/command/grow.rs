// SPDX-License-Identifier: GPL-2.0

//! `:grow` in the kernel (the protocol is the core's, `grow.rs`): the
//! histogram of a `:grow` trigger's current generation, behind one
//! pointer that the event path loads once per event; the next generation,
//! made ahead of need, which the event path switches to itself; and the
//! work that folds the generations left behind and makes the next one.
//!
//! The event path ([`Growing::after_update`]) switches to the spare
//! generation when the current one reaches its threshold (no allocation,
//! no lock, no wait), and asks through an irq_work, which queues
//! [`GrowRun`] on rhist's kthread worker. The work takes
//! `event_mutex`, as the readers of the histogram and every command do,
//! and for each trigger in [`REGISTRY`] that asked makes the next spare,
//! then waits for the probes and folds the generations left behind into
//! the current one: a trigger freed before the work runs is no longer
//! there, so no trigger waits for the work as it goes. A reader folds
//! them itself before it reads ([`Growing::current`]).
//!
//! So a burst of new keys is dropped only past the room of the current
//! generation and of the spare (four times its size) before the work
//! runs again; what is dropped is counted in `Dropped:`.
//!
//! Locks: the work takes `event_mutex` alone (never `trace_types_lock`),
//! and waits for the probes (`tracepoint_synchronize_unregister()`)
//! while it holds it, as `clear` does. Only the module's unloading waits
//! for the work ([`GrowWorker`]'s drop), after every trigger is gone and
//! with no lock held, so the wait cannot close a cycle.

use core::marker::PhantomData;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use kernel::c_str;

use kernel::alloc::flags::GFP_KERNEL;
use kernel::error::Error;
use kernel::prelude::*;
use kernel::sync::Arc;

use super::map_memory::MapMemory;
use super::probe::InProbe;
use super::state::{histogram_into, HistSource, HistogramOf, Resolved};
use super::{state, REGISTRY};
use crate::event_work::{queue_where_it_runs, Asked};
use crate::hist::grow::{fold_into, spare_bits, GrowStats, GrowTrigger};
use crate::hist::histogram::{map_params_sized, Histogram};
use crate::kernel_ext::irq_work::{IrqWork, IrqWorkItem};
use crate::kernel_ext::kthread::{KthreadWork, KthreadWorkItem, KthreadWorker};
use crate::shim;
use crate::tied::Tied;
use crate::tracefs::{EventMutexGuard, EventMutexHeld};

/// A [`KBox`] behind an atomic pointer, or none: what a task takes out
/// with one swap ([`take`](Self::take)) is its alone. `T: Send`: a value
/// one task puts in, another may take out.
///
/// # Invariants
///
/// The pointer is null or owns a value made by [`KBox::into_raw`].
struct AtomicBox<T: Send>(AtomicPtr<T>, PhantomData<KBox<T>>);

impl<T: Send> AtomicBox<T> {
    /// None.
    const fn empty() -> Self {
        // INVARIANT: null.
        AtomicBox(AtomicPtr::new(ptr::null_mut()), PhantomData)
    }

    /// The value's address, or null: for what only looks at it.
    fn load(&self, order: Ordering) -> *mut T {
        self.0.load(order)
    }

    /// Puts `value` in, for an empty one (a value there is leaked).
    fn put(&self, value: KBox<T>, order: Ordering) {
        // INVARIANT: from `KBox::into_raw()`.
        self.0.store(KBox::into_raw(value), order);
    }

    /// Takes the value out, if there is one.
    #[inline(always)]
    fn take(&self, order: Ordering) -> Option<KBox<T>> {
        let value = self.0.swap(ptr::null_mut(), order);
        if value.is_null() {
            return None;
        }
        // SAFETY: not null, so from `KBox::into_raw()` and owned by
        // `self` (invariant), which the swap left empty: now ours alone.
        Some(unsafe { KBox::from_raw(value) })
    }
}

impl<T: Send> Drop for AtomicBox<T> {
    fn drop(&mut self) {
        drop(self.take(Ordering::Relaxed));
    }
}

/// One generation of a growing histogram: its map and when it asks.
///
/// # Invariants
///
/// `older` is null or owns the generation this one replaced (from
/// [`KBox::into_raw`]), not yet folded, which owns its own older ones.
///
/// `repr(C)`, the histogram first (a [`Tied`] keeps its value first):
/// the event path's histogram is at the generation's address, with
/// nothing added to it.
#[repr(C)]
pub(super) struct Generation {
    hist: Tied<HistSource, HistogramOf>,
    trigger: GrowTrigger,
    bits: u32,
    older: AtomicPtr<Generation>,
}

/// How near its threshold a generation's event path asks after each
/// event whether it reached it: more than the events of a trigger that
/// can be under way at once, one per context (task, softirq, hardirq,
/// NMI) on each CPU.
fn near_slack() -> usize {
    4 * crate::event::nr_cpu_ids()
}

impl Generation {
    /// A generation of `1 << bits` entries of `resolved`'s histogram,
    /// built in its box: a histogram is large, and the stack small.
    #[inline(never)]
    fn new(resolved: &Arc<Resolved>, bits: u32) -> Result<KBox<Self>> {
        let params = map_params_sized(resolved.data(), bits, crate::event::nr_cpu_ids());
        let bytes = params
            .storage_bytes()
            .map_err(|e| Error::from_errno(-e.errno()))?;
        let memory = MapMemory::new(bytes)?;
        let source = HistSource::new(resolved, memory);
        let hist = Tied::try_init(source, move |source, place| {
            histogram_into(source, place, params, bytes, None, false)
        });
        // INVARIANT: no older generation yet.
        let init = try_init!(Generation {
            hist <- hist,
            trigger: GrowTrigger::new(bits, near_slack()),
            bits,
            older: AtomicPtr::new(ptr::null_mut()),
        });
        KBox::try_init(init, GFP_KERNEL)
    }

    /// The histogram of this generation.
    #[inline(always)]
    pub(super) fn histogram(&self) -> &Histogram<'_> {
        self.hist.get()
    }

    /// Whether the generation is near its threshold: what the event
    /// path asks before every event, in two loads and a compare, and
    /// then, only if it is, [`Growing::after_update`] after the event
    /// (out of line).
    #[inline(always)]
    pub(super) fn near(&self) -> bool {
        self.trigger.near(self.histogram().map())
    }
}

/// What a `:grow` histogram adds to its [`Hist`](super::state::Hist):
/// the current generation, the next one and the grow's counts.
///
/// # Invariants
///
/// `current` is never null: it owns a generation made by
/// [`KBox::into_raw`]. `spare` is empty or holds one made by the work
/// with `event_mutex` held and never yet seen by a probe. `current` is
/// replaced only by a switch to the spare ([`switch`](Self::switch)),
/// which takes the spare with one swap and hangs the replaced generation
/// on the new one's `older`. A generation on an `older` chain is freed,
/// with `event_mutex` held, only after a wait for the probes that began
/// before it was replaced; every one is freed with `self`.
pub(super) struct Growing {
    current: AtomicPtr<Generation>,
    spare: AtomicBox<Generation>,
    /// The resolved trigger whose histogram grows: each generation reads
    /// its data.
    resolved: Arc<Resolved>,
    /// The event path asked for the work and the work has not yet taken
    /// the request.
    pending: AtomicBool,
    stats: GrowStats,
}

impl Growing {
    /// Makes generation 0 of `resolved`'s histogram, of `size=`'s
    /// entries, and the spare.
    pub(super) fn new(held: EventMutexHeld<'_>, resolved: &Arc<Resolved>) -> Result<KBox<Self>> {
        let first = Generation::new(resolved, resolved.data().map_bits())?;
        let growing = KBox::new(
            Growing {
                // INVARIANT: from `KBox::into_raw()`.
                current: AtomicPtr::new(KBox::into_raw(first)),
                spare: AtomicBox::empty(),
                resolved: resolved.clone(),
                pending: AtomicBool::new(false),
                stats: GrowStats::default(),
            },
            GFP_KERNEL,
        )?;
        // A spare that cannot be made now is asked for again at the
        // threshold.
        growing.make_spare(held);
        Ok(growing)
    }

    /// The current generation, for the event path: it may be replaced
    /// meanwhile, but is freed only once the probe has returned.
    #[inline(always)]
    pub(super) fn current_rcu<'a>(&'a self, _probe: InProbe<'a>) -> &'a Generation {
        // Acquire: the generation's map was built before it was
        // published (the release store of the spare, then of `current`).
        let gen = self.current.load(Ordering::Acquire);
        // SAFETY: never null (invariant). It was current at the load, so
        // it is freed, if replaced, only after `fold_older()`'s
        // `rhist_grow_synchronize()` (`synchronize_rcu_expedited()`)
        // waits for the RCU readers that began before the replacement:
        // this task is one for `'a`, the probe `_probe` says it runs.
        unsafe { &*gen }
    }

    /// The current generation as readers see it, with every generation
    /// it replaced folded in first: a probe may replace it meanwhile,
    /// but the lock, held for `'a`, keeps it from being freed. Whether
    /// the contents changed (a fold), in `folded`.
    pub(super) fn current<'a>(
        &'a self,
        held: EventMutexHeld<'a>,
        folded: &mut bool,
    ) -> &'a Generation {
        self.catch_up(held);
        *folded |= self.fold_older(held);
        self.current_unfolded(held)
    }

    /// Whether the generations' events take a compiled program: the
    /// same for every generation (their histograms differ in their
    /// maps' sizes only).
    pub(super) fn compiled(&self, held: EventMutexHeld<'_>) -> bool {
        self.current_unfolded(held).histogram().compiled()
    }

    /// The current generation, without folding: for what only reads its
    /// size.
    fn current_unfolded<'a>(&'a self, _held: EventMutexHeld<'a>) -> &'a Generation {
        // SAFETY: never null (invariant); a generation is freed only with
        // the lock held, which `_held` says this task holds for `'a`.
        unsafe { &*self.current.load(Ordering::Acquire) }
    }

    /// After the event path accounted an event in `gen`, which it found
    /// [`near`](Generation::near) its threshold: once the generation
    /// reaches it, switches to the spare and asks the work for the next
    /// one (no allocation, no lock, no wait).
    #[inline(always)]
    pub(super) fn after_update(&self, gen: &Generation) {
        if gen.trigger.check(gen.histogram().map().len()) {
            self.reached(gen);
        }
    }

    /// The switch to the spare of `gen`, which reached its threshold
    /// (once), from the event path or a reader; the work asked for the
    /// next spare.
    fn reached(&self, gen: &Generation) {
        self.switch(gen);
        self.pending.store(true, Ordering::Relaxed);
        // Its queueing orders the stores above before the work's swap.
        queue_where_it_runs(&GROW_REQUEST, Asked::Grow);
    }

    /// What the event path would do, from a reader: an event held up
    /// between [`Generation::near`] and its insert may have left the
    /// generation past its threshold unasked (see
    /// `hist::grow::GrowTrigger`), and the next event, if any, asks. A
    /// reader asks itself, so that a histogram no event comes to any
    /// more grows as it would have.
    fn catch_up(&self, held: EventMutexHeld<'_>) {
        let gen = self.current_unfolded(held);
        if gen.trigger.check(gen.histogram().map().len()) {
            self.reached(gen);
        }
    }

    /// Replaces `gen`, the current generation whose threshold was just
    /// reached, by the spare, if there is one: from the event path, or
    /// from the work when the spare came after the threshold. Whether it
    /// did.
    fn switch(&self, gen: &Generation) -> bool {
        // Acquire: the spare's map was built before it was stored. The
        // swap gives it to one caller only.
        let Some(spare) = self.spare.take(Ordering::Acquire) else {
            return false;
        };
        // `gen` is current: a generation stops being current only by a
        // switch from it, which its threshold asks for once.
        spare
            .older
            .store(ptr::from_ref(gen).cast_mut(), Ordering::Relaxed);
        // INVARIANT: the spare, from `KBox::into_raw()`, replaces
        // `current`, which hangs on its `older`. Release: its map and
        // `older` before a probe sees it.
        self.current.store(KBox::into_raw(spare), Ordering::Release);
        self.stats.grew();
        true
    }

    /// Makes the spare, if there is none and the current generation is
    /// not at the cap. An allocation that fails makes the current
    /// generation ask again later, and what it drops meanwhile is
    /// counted.
    fn make_spare(&self, held: EventMutexHeld<'_>) {
        if !self.spare.load(Ordering::Relaxed).is_null() {
            return;
        }
        let current = self.current_unfolded(held);
        let Some(bits) = spare_bits(current.bits) else {
            return;
        };
        match Generation::new(&self.resolved, bits) {
            // INVARIANT: made with the lock held, seen by no probe yet, in
            // an empty spare (tested above, and only the lock's holder
            // fills it). Release: the map is built before a probe can
            // take it.
            Ok(spare) => self.spare.put(spare, Ordering::Release),
            Err(_) => {
                self.stats.failed();
                current.trigger.retry();
            }
        }
    }

    /// Folds the generations the current one replaced into it, once no
    /// probe can still be in them, and frees them. Whether it did.
    fn fold_older(&self, held: EventMutexHeld<'_>) -> bool {
        let mut folded = false;
        loop {
            let current = self.current_unfolded(held);
            // Acquire: the older chain as the switch stored it.
            let older = current.older.swap(ptr::null_mut(), Ordering::Acquire);
            if older.is_null() {
                return folded;
            }
            // Every probe that may have loaded a generation of the chain
            // (all replaced before `current` was published) returns.
            // It sleeps, which the lock's holder may.
            shim::rhist_grow_synchronize();
            // Into the current generation now (a probe may have replaced
            // `current` meanwhile; it then folds in at the next call).
            let into = self.current_unfolded(held);
            let mut next = older;
            while !next.is_null() {
                // SAFETY: the chain's generations came from
                // `KBox::into_raw()` (invariant), were taken off the chain
                // by the swap above (ours alone), and no probe can reach
                // them any more (waited for above).
                let gen = unsafe { KBox::from_raw(next) };
                next = gen.older.swap(ptr::null_mut(), Ordering::Relaxed);
                if fold_into(gen.histogram(), into.histogram()).is_err() {
                    pr_warn!("grow: a generation could not be folded\n");
                }
            }
            folded = true;
        }
    }

    /// After `clear`: the current generation, empty, asks again as a new
    /// one.
    pub(super) fn cleared(&self, held: EventMutexHeld<'_>) {
        self.current_unfolded(held).trigger.reset();
    }

    /// `rhist_debug`'s lines: the grow's, and the spare's size (0: none
    /// yet, or at the cap).
    pub(super) fn write_debug(
        &self,
        held: EventMutexHeld<'_>,
        out: &mut dyn core::fmt::Write,
    ) -> core::fmt::Result {
        self.catch_up(held);
        let max_elts = self.current_unfolded(held).histogram().map().max_elts();
        self.stats.write_debug(out, max_elts)?;
        let spare = self.spare.load(Ordering::Acquire);
        let spare_elts = if spare.is_null() {
            0
        } else {
            // SAFETY: not null, so a generation from `KBox::into_raw()`
            // (invariant of `AtomicBox`); a probe may take it as the
            // current generation, but only the lock's holder frees one,
            // as this task is (`held`).
            unsafe { &*spare }.histogram().map().max_elts()
        };
        writeln!(out, "  grow spare: {spare_elts}")
    }

    /// The work, if the event path asked: the next spare made (and
    /// switched to, if the current generation reached its threshold
    /// before there was one), the generations left behind folded.
    /// Whether the contents changed.
    fn grow(&self, held: EventMutexHeld<'_>) -> bool {
        if !self.pending.swap(false, Ordering::Relaxed) {
            return false;
        }
        let mut changed = false;
        loop {
            self.make_spare(held);
            let current = self.current_unfolded(held);
            // The threshold was reached while there was no spare.
            if !(current.trigger.asked() && self.switch(current)) {
                break;
            }
            changed = true;
        }
        // The spare first: the event path may need it before the wait.
        changed | self.fold_older(held)
    }
}

impl Drop for Growing {
    fn drop(&mut self) {
        // No probe or reader sees `self` any more.
        let mut next = *self.current.get_mut();
        while !next.is_null() {
            // SAFETY: `current` and each `older` own their generation,
            // from `KBox::into_raw()` (invariants).
            let mut gen = unsafe { KBox::from_raw(next) };
            next = *gen.older.get_mut();
        }
        // The spare goes with `self.spare`.
    }
}

/// The event path's request for the grow work, in hard interrupt
/// context: queues [`GROW_RUN`] on the worker.
struct GrowRequest;

impl IrqWorkItem for GrowRequest {
    fn run() {
        queue_work();
    }
}

/// The irq_work of [`GrowRequest`], waited for by [`GrowWorker`]'s drop.
static GROW_REQUEST: IrqWork<GrowRequest> = IrqWork::new();

/// The grow work, on rhist's kthread worker.
struct GrowRun;

impl KthreadWorkItem for GrowRun {
    fn run() {
        grow_all();
    }
}

/// The kthread work of [`GrowRun`], made ready by [`GrowWorker::new()`].
static GROW_RUN: KthreadWork<GrowRun> = KthreadWork::new();

/// rhist's kthread worker while [`GrowWorker`] lives, else empty: freed
/// by the worker's drop once no caller of [`queue_work()`] is left (the
/// irq_work waited for, the hotplug callbacks removed).
static WORKER: AtomicBox<KthreadWorker> = AtomicBox::empty();

/// Queues the grow work on the worker, if there is one: from the
/// irq_work, or from a hotplug callback asking again for a request made
/// where it could not be queued.
pub(crate) fn queue_work() {
    // Acquire: the worker as `GrowWorker::new()` made it.
    let worker = WORKER.load(Ordering::Acquire);
    if !worker.is_null() {
        // SAFETY: not null, so a worker from `KBox::into_raw()`
        // (invariant of `AtomicBox`), freed only after every caller of
        // this function is gone (see `WORKER`), this one included.
        unsafe { &*worker }.queue(&GROW_RUN);
    }
}

/// The grow work: grows every registered `:grow` trigger that asked.
fn grow_all() {
    let guard = EventMutexGuard::lock();
    let held = guard.held();
    for trigger in REGISTRY.iter(held).filter_map(|d| state(held, d)) {
        if trigger.growing().is_some_and(|g| g.grow(held)) {
            trigger.contents_changed(held);
        }
    }
}

/// rhist's kthread worker for the grow work (`rhist_grow`), with the
/// CPU hotplug callbacks that ask again for the requests the event path
/// could not queue: made at load, stopped at unload once every trigger
/// is gone (the last request waited for).
pub(super) struct GrowWorker(());

impl GrowWorker {
    pub(super) fn new() -> Result<Self> {
        GROW_RUN.init();
        let worker = KthreadWorker::new(c_str!("rhist_grow"))?;
        // The event path switches to the spare generation itself; the work
        // must make the next one before a burst fills that: it runs at the
        // first point where a busy CPU can reschedule.
        worker.set_fifo_low();
        let worker = KBox::new(worker, GFP_KERNEL)?;
        // `WORKER` is empty, as the module's load made it: only this,
        // called once, fills it. Release: the worker made before a
        // request finds it.
        WORKER.put(worker, Ordering::Release);
        let grow = GrowWorker(());
        // SAFETY: called once, undone by `rhist_cpuhp_exit()` in `drop()`
        // when it succeeded; the callbacks call `rhist_ask_missed()`.
        let ret = unsafe { shim::rhist_cpuhp_init() };
        if ret < 0 {
            // The worker alone goes, as `drop()` would after the callbacks.
            grow.stop_worker();
            core::mem::forget(grow);
            return Err(Error::from_errno(ret));
        }
        Ok(grow)
    }

    /// Waits for the last request, then stops the worker (which runs the
    /// work if it is queued).
    fn stop_worker(&self) {
        GROW_REQUEST.sync();
        // No caller of `queue_work()` is left: the event path's requests
        // are waited for, and the hotplug callbacks removed or never
        // added.
        drop(WORKER.take(Ordering::AcqRel));
    }
}

impl Drop for GrowWorker {
    fn drop(&mut self) {
        // SAFETY: `rhist_cpuhp_init()` succeeded (`new()`); dropped after
        // the triggers are gone, with no lock held (it sleeps).
        unsafe { shim::rhist_cpuhp_exit() };
        self.stop_worker();
    }
}
