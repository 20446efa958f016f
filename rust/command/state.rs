// SPDX-License-Identifier: GPL-2.0

//! The state of an rhist trigger and what it is built from: the text
//! resolved against its event ([`Resolved`]), the histogram that one or
//! more triggers share ([`Hist`]), and the trigger on one event file
//! ([`Trigger`]).

use core::mem::MaybeUninit;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicU64, Ordering};

use kernel::alloc::flags::GFP_KERNEL;
use kernel::error::{code, Error};
use kernel::prelude::*;
use kernel::sync::Arc;

use super::errors::log_entries;
use super::grow::Growing;
use super::map_memory::MapMemory;
use super::resolve::{field_var_hist, hist_identity, referenced_hists, with_options, FieldVarHist};
use super::{state, REGISTRY};
use crate::event::{self, ProbeContext};
use crate::hist;
use crate::hist::error::HistError;
use crate::hist::event::{EventDesc, EventField, COMMON_FIELDS};
use crate::hist::hist_data::{ActionSink, BuildOptions, HistData};
use crate::hist::histogram::{self, map_params_sized, Histogram, Snapshot, KEY_SIZE_MAX};
use crate::hist::map::{MapParams, TracingMap};
use crate::hist::sketch::{PoolParams, SketchPool};
use crate::hist::var_ref::VAR_REFS_MAX;
use crate::snapshot::SnapshotCond;
use crate::synth::{SynthPin, Synths};
use crate::tied::{Family, Tied};
use crate::tracefs::{EventMutexGuard, EventMutexHeld, EventMutexScope};
use crate::tracing::{EventFile, EventPin, InstanceRef};

/// A trigger's text resolved against its event: the hist data, with
/// what it borrows, and the canonical trigger info. It is all a removal
/// needs; a new trigger becomes a [`Hist`] by adding the map.
///
/// # Invariants
///
/// `info` is the canonical info of the hist data as it is.
pub(super) struct Resolved {
    parts: Tied<Source, PartsOf>,
    info: KVec<u8>,
    /// The hidden histograms the actions made on other events.
    _field_var_hists: KVec<FieldVarHist>,
}

/// What a [`Resolved`] borrows: the trigger's text, and its event.
struct Source {
    text: KVec<u8>,
    event: Tied<EventPin, EventOf>,
}

/// The hist data of a [`Resolved`], with what of its [`Source`] making its
/// actions looks at again.
struct Parts<'a> {
    /// Boxed: it is large, and its address is its identity for the
    /// triggers that reference its variables (`hist_identity()`).
    data: KBox<HistData<'a>>,
    text: &'a [u8],
    event: EventDesc<'a>,
}

/// [`Parts`], for every lifetime.
struct PartsOf;

impl Family for PartsOf {
    type Of<'a> = Parts<'a>;

    #[inline(always)]
    fn shorten<'short, 'long: 'short>(long: &'short Parts<'long>) -> &'short Parts<'short> {
        long
    }
}

/// An event as the core describes it (but for the common fields),
/// borrowing the strings of the event an [`EventPin`] pins.
struct Event<'a> {
    system: &'a str,
    name: &'a str,
    fields: KVec<EventField<'a>>,
}

impl Event<'_> {
    /// The event with its common fields.
    fn desc(&self) -> EventDesc<'_> {
        EventDesc {
            system: self.system,
            name: self.name,
            fields: &self.fields,
            common_fields: &COMMON_FIELDS,
        }
    }
}

/// [`Event`], for every lifetime.
struct EventOf;

impl Family for EventOf {
    type Of<'a> = Event<'a>;

    #[inline(always)]
    fn shorten<'short, 'long: 'short>(long: &'short Event<'long>) -> &'short Event<'short> {
        long
    }
}

/// What a histogram borrows: the resolved trigger it is of, and the memory
/// of its map (and of its sketches, after the map's).
pub(super) struct HistSource {
    resolved: Arc<Resolved>,
    memory: MapMemory,
}

/// [`Histogram`], for every lifetime.
pub(super) struct HistogramOf;

impl Family for HistogramOf {
    type Of<'a> = Histogram<'a>;

    #[inline(always)]
    fn shorten<'short, 'long: 'short>(long: &'short Histogram<'long>) -> &'short Histogram<'short> {
        long
    }
}

/// A histogram and everything it borrows. Named triggers on several
/// events share one (as hist's named triggers share their hist data).
///
/// # Invariants
///
/// `hist` (and each generation of `grow`) reads the hist data of
/// `resolved`; `grow` is `Some` if and only if that data asks for
/// `:grow`, and then `hist` is interpreted.
pub(super) struct Hist {
    /// Without `:grow`, the histogram. With it, one of a map of
    /// [`SHAPE_BITS`] that no event updates, interpreted (no compiled
    /// path): the generations are in `grow`.
    hist: Tied<HistSource, HistogramOf>,
    /// A `:grow` histogram's generations.
    grow: Option<KBox<Growing>>,
    /// The synthetic events the actions emit, by action (`None`: not a
    /// `trace()` action).
    synths: KVec<Option<SynthPin>>,
    /// The condition of a `snapshot()` action.
    snapshot: Option<SnapshotCond>,
    /// The last reference on it is this one: `hist` and the generations,
    /// which hold the others, are dropped before.
    resolved: Arc<Resolved>,
    /// hist's `save_hist_vars()` reference: a histogram that defines or
    /// references variables keeps its instance from being removed.
    _instance: Option<InstanceRef>,
    /// Which contents the histogram has: a number no other histogram had,
    /// taken anew by each `clear` and grow (see [`Trigger::version`]).
    /// Changed and read with `event_mutex` held.
    version: AtomicU64,
}

/// The next [`Hist::version`]: never 0, never given twice.
static NEXT_VERSION: AtomicU64 = AtomicU64::new(1);

fn new_version() -> u64 {
    NEXT_VERSION.fetch_add(1, Ordering::Relaxed)
}

// SAFETY: the raw pointers inside point to memory the value owns (the
// map, the resolved data, the text) or keeps by a count it holds (the
// event file and its call by `EventPin`, synthetic events by `SynthPin`,
// the instance by `InstanceRef`), which may be dropped on any CPU; the
// histogram itself is lock-free and made for concurrent use from any CPU.
unsafe impl Send for Hist {}
// SAFETY: a histogram is updated by the probes of every CPU at once; shared
// access only reads or updates atomics, or calls the tracing core's event
// and snapshot functions, which any CPU may.
unsafe impl Sync for Hist {}

/// The state of one rhist trigger, owned by its `event_trigger_data`
/// through `private_data`. The event behind its file is pinned and the
/// file referenced for as long as the trigger lives.
pub(crate) struct Trigger {
    pub(super) hist: Arc<Hist>,
    /// The histograms whose variables this one references, by slot
    /// (`HistData::ref_hists()`): each outlives this trigger, whose
    /// probe reads their maps.
    refs: KVec<Arc<Hist>>,
    /// How the probe reaches the histogram with this event's records:
    /// [`path()`](Self::path)'s, its generations as a pointer.
    path: StoredPath,
    /// On a synthetic event: the event, held as hist holds it for each
    /// of its triggers (C's `se->ref`), so that it cannot be deleted.
    /// Its records may be emitted by an action, inside another trigger:
    /// they take the general path, which counts how deeply it nests.
    synthetic: Option<SynthPin>,
    /// The event file the trigger is attached to.
    pin: EventPin,
    /// The next trigger dropped later (see [`Deferred`]).
    ///
    /// [`Deferred`]: super::lifetime::Deferred
    pub(super) deferred_next: Option<KBox<Trigger>>,
}

/// How the probe ([`super::probe`]) takes a trigger's events: tested
/// first, so that a plain map's and a `:grow` map's compiled paths
/// part after one test.
#[derive(Clone, Copy)]
pub(super) enum ProbePath<'t> {
    /// The histogram reads only the fixed part of the records, this many
    /// bytes (see `HistData::record_span()`).
    Fixed(usize),
    /// The same, of a `:grow` histogram whose generations have a compiled
    /// program: the current generation's, of these generations.
    GrowFixed(usize, &'t Growing),
    /// The event path asks the ring buffer for each record's length:
    /// always on a synthetic event, and for a `:grow` histogram without a
    /// compiled program.
    Sized,
}

/// [`ProbePath`] as a trigger keeps it: a `:grow` histogram's generations
/// by address.
///
/// # Invariants
///
/// The address in `GrowFixed` is that of the generations of the
/// trigger's own `hist`, boxed in it: they stay there, alive, for as long
/// as `hist`, which the trigger keeps.
#[derive(Clone, Copy)]
enum StoredPath {
    Fixed(usize),
    GrowFixed(usize, NonNull<Growing>),
    Sized,
}

// SAFETY: the address is of generations the trigger's own `hist` owns
// (invariant), which any task may use and drop as the trigger moves
// between them: `Hist` is `Send` and `Sync`.
unsafe impl Send for StoredPath {}
// SAFETY: shared use only reads the address, for the probe's
// `&Growing`, which any CPU may hold at once (`Hist` is `Sync`).
unsafe impl Sync for StoredPath {}

/// A histogram without `:grow`, kept by its reference count, to be read
/// with `event_mutex` dropped: its memory lives as long as the value,
/// whatever happens to its triggers. `clear` may empty it meanwhile (its
/// map and sketches are atomics, so a reader sees a mix, never freed or
/// torn words): [`unchanged`](Self::unchanged), under the lock again,
/// says whether what was read is one state of it.
///
/// # Invariants
///
/// `hist` is `Some` until [`release`](Detached::release) or `drop()`
/// takes it, either with `event_mutex` held, as every owner of a
/// [`Hist`] drops it.
pub(crate) struct Detached {
    hist: Option<Arc<Hist>>,
    version: u64,
}

impl Detached {
    /// The histogram, as [`Trigger::hist`] gave it when detached.
    pub(crate) fn histogram(&self) -> Option<&Histogram<'_>> {
        self.hist.as_deref().map(Hist::histogram)
    }

    /// The details of the last snapshot its `snapshot()` action took.
    pub(crate) fn last_snapshot<'k>(
        &self,
        key: &'k mut [u8; KEY_SIZE_MAX],
    ) -> Option<Snapshot<'k>> {
        self.hist.as_ref()?.snapshot.as_ref()?.last(key)
    }

    /// Whether the histogram was neither cleared nor grown since it was
    /// detached: with the lock held, no `clear` is under way, and one
    /// that ran since gave it a new version.
    pub(crate) fn unchanged(&self, _held: EventMutexHeld<'_>) -> bool {
        self.hist
            .as_ref()
            .is_some_and(|h| h.version.load(Ordering::Relaxed) == self.version)
    }
}

impl Detached {
    /// Drops the reference with the lock held, as owners of a [`Hist`]
    /// drop theirs: the last one removes the hidden triggers its actions
    /// made, hence the hold borrowed `mut`.
    pub(crate) fn release(mut self, _scope: &mut EventMutexScope<'_>) {
        drop(self.hist.take());
    }
}

impl Drop for Detached {
    /// Unless [`release`](Detached::release)d: takes `event_mutex`, so that
    /// the histogram, if this was its last reference, is dropped as its
    /// owners drop it. So a value that is not released must not be
    /// dropped with the lock held.
    fn drop(&mut self) {
        if self.hist.is_some() {
            let _guard = EventMutexGuard::lock();
            drop(self.hist.take());
        }
    }
}

/// Why a trigger could not be built.
pub(super) enum BuildError {
    /// Rejected as hist would reject it.
    Hist(HistError),
    /// The memory of the map (and sketches) that the text asks for could
    /// not be had: `ENOMEM`, logged with rhist's own message.
    NoMapMemory,
    /// Out of memory, or the event is going away.
    Kernel(Error),
}

impl From<Error> for BuildError {
    fn from(e: Error) -> Self {
        BuildError::Kernel(e)
    }
}

impl From<kernel::alloc::AllocError> for BuildError {
    fn from(_: kernel::alloc::AllocError) -> Self {
        BuildError::Kernel(code::ENOMEM)
    }
}

impl From<HistError> for BuildError {
    fn from(e: HistError) -> Self {
        BuildError::Hist(e)
    }
}

impl From<hist::map::MapError> for BuildError {
    fn from(e: hist::map::MapError) -> Self {
        BuildError::Kernel(Error::from_errno(-e.errno()))
    }
}

/// A sketch pool's error as the kernel's (`EINVAL`, or `ENOMEM`).
fn sketch_error(e: hist::sketch::SketchError) -> BuildError {
    BuildError::Kernel(Error::from_errno(-e.errno()))
}

impl Trigger {
    /// A trigger on `file` that updates `hist`.
    pub(super) fn new(
        held: EventMutexHeld<'_>,
        file: &EventFile,
        hist: Arc<Hist>,
        record_span: Option<usize>,
    ) -> Result<KBox<Self>, BuildError> {
        let pin = EventPin::new(file)?;
        let refs = referenced_hists(held, hist.histogram().data())?;
        let synthetic = SynthPin::of_event(held, file)?;
        let path = match (record_span, hist.growing()) {
            (Some(_), _) if synthetic.is_some() => StoredPath::Sized,
            (Some(len), Some(growing)) if growing.compiled(held) => {
                // INVARIANT: the generations of `hist`, boxed in it, which
                // the result keeps.
                StoredPath::GrowFixed(len, NonNull::from(growing))
            }
            (Some(len), None) => StoredPath::Fixed(len),
            (_, _) => StoredPath::Sized,
        };
        Ok(KBox::new(
            Trigger {
                hist,
                refs,
                path,
                synthetic,
                pin,
                deferred_next: None,
            },
            GFP_KERNEL,
        )?)
    }

    /// The histogram, as readers see it: with `:grow`, the current
    /// generation's, with the generations it replaced folded in (a new
    /// [`version`](Self::version) if there were any), which no grow frees
    /// while the lock is held.
    pub(crate) fn hist<'a>(&'a self, held: EventMutexHeld<'a>) -> &'a Histogram<'a> {
        match self.hist.growing() {
            Some(g) => {
                let mut folded = false;
                let current = g.current(held, &mut folded);
                if folded {
                    self.contents_changed(held);
                }
                current.histogram()
            }
            None => self.hist.histogram(),
        }
    }

    /// The histogram the probe updates, without `:grow`. A `:grow`
    /// trigger's has no compiled path (`Histogram::interpreted()`) and no
    /// event updates it: its probe takes the current generation's, from
    /// [`growing`](Self::growing).
    #[inline(always)]
    pub(super) fn hist_probe(&self) -> &Histogram<'_> {
        self.hist.histogram()
    }

    /// A `:grow` trigger's generations.
    #[inline(always)]
    pub(super) fn growing(&self) -> Option<&Growing> {
        self.hist.growing()
    }

    /// Which contents [`hist`](Self::hist) has: equal at two moments
    /// (with the lock dropped in between) only if they are those of the
    /// same histogram, neither cleared nor grown in between. A histogram
    /// freed and another made at its address have different versions.
    pub(crate) fn version(&self, _held: EventMutexHeld<'_>) -> u64 {
        self.hist.version.load(Ordering::Relaxed)
    }

    /// After a `clear` or a grow of the histogram: a new
    /// [`version`](Self::version), for every trigger that shares it.
    pub(super) fn contents_changed(&self, _held: EventMutexHeld<'_>) {
        self.hist.version.store(new_version(), Ordering::Relaxed);
    }

    /// The histogram, to be read once the lock is dropped: `None` with
    /// `:grow`, whose generations are freed under the lock.
    pub(crate) fn detach(&self, held: EventMutexHeld<'_>) -> Option<Detached> {
        if self.hist.growing().is_some() {
            return None;
        }
        Some(Detached {
            hist: Some(self.hist.clone()),
            version: self.version(held),
        })
    }

    /// With `:grow`, `rhist_debug`'s line of the grow.
    pub(crate) fn write_grow_debug(
        &self,
        held: EventMutexHeld<'_>,
        out: &mut dyn core::fmt::Write,
    ) -> core::fmt::Result {
        match self.growing() {
            Some(g) => g.write_debug(held, out),
            None => Ok(()),
        }
    }

    /// The event file the trigger is attached to, pinned for as long as
    /// the trigger lives.
    #[inline(always)]
    pub(crate) fn file(&self) -> &EventFile {
        self.pin.file()
    }

    /// How the probe takes the trigger's events.
    #[inline(always)]
    pub(super) fn path(&self) -> ProbePath<'_> {
        match self.path {
            StoredPath::Fixed(len) => ProbePath::Fixed(len),
            StoredPath::GrowFixed(len, growing) => {
                // SAFETY: the generations of `self.hist`, which `self` keeps
                // (invariant of `StoredPath`): alive, and not moved, for as
                // long as `self` is borrowed.
                let growing = unsafe { growing.as_ref() };
                ProbePath::GrowFixed(len, growing)
            }
            StoredPath::Sized => ProbePath::Sized,
        }
    }

    /// Whether the trigger is on a synthetic event, whose records an
    /// action of another trigger may emit (nested).
    pub(crate) fn on_synthetic(&self) -> bool {
        self.synthetic.is_some()
    }

    /// Accounts one event record by the general path (that of a trigger
    /// with no compiled program), resolving the references to other
    /// histograms' variables first if there are any. `hist` is
    /// [`hist_probe`](Self::hist_probe)'s, which the probe has in hand.
    #[inline]
    pub(crate) fn update(&self, hist: &Histogram<'_>, rec: &[u8], ctx: &ProbeContext<'_>) {
        if self.refs.is_empty() && hist.data().n_actions() == 0 {
            return hist.update_general(rec, ctx);
        }
        let mut refs = [hist; VAR_REFS_MAX];
        for (slot, other) in refs.iter_mut().zip(self.refs.iter()) {
            *slot = other.histogram();
        }
        let n = self.refs.len().min(VAR_REFS_MAX);
        hist.update_with_refs(rec, ctx, &refs[..n], &*self.hist);
    }

    /// Whether another trigger references a variable of this one's
    /// histogram: then it cannot be removed (C's `check_var_refs()`).
    pub(super) fn referenced(&self, held: EventMutexHeld<'_>) -> bool {
        REGISTRY
            .iter(held)
            .filter_map(|d| state(held, d))
            .any(|other| {
                !ptr::eq(other, self) && other.refs.iter().any(|h| Arc::ptr_eq(h, &self.hist))
            })
    }

    /// The histogram whose identity (`HistData::ref_hists()`) is `id`,
    /// among those this trigger references.
    pub(crate) fn referenced_data(&self, id: u64) -> Option<&HistData<'_>> {
        self.refs
            .iter()
            .map(|h| h.histogram().data())
            .find(|&d| hist_identity(d) == id)
    }

    /// The resolved trigger.
    pub(crate) fn data(&self) -> &HistData<'_> {
        self.hist.histogram().data()
    }

    /// The details of the last snapshot its `snapshot()` action took, the
    /// key copied into `key`.
    pub(crate) fn last_snapshot<'k>(
        &self,
        key: &'k mut [u8; KEY_SIZE_MAX],
    ) -> Option<Snapshot<'k>> {
        self.hist.snapshot.as_ref()?.last(key)
    }

    /// The canonical trigger info, without filter and state. A named
    /// trigger shows that of the histogram it joined, as hist does
    /// (their texts may differ in `size=` or `clock=`).
    pub(crate) fn info(&self) -> &[u8] {
        self.hist.resolved.info()
    }

    /// The `name=...` piece of a named trigger.
    pub(super) fn name(&self) -> Option<&str> {
        self.data().spec().name_attr()
    }
}

impl Resolved {
    /// Parses `rhist:<text>` and resolves it against the event behind
    /// `file`, as `create_hist_data()` does; `remove` for `!rhist:...`.
    // Not inlined: its frame would add to `parse()`'s, on a small stack.
    #[inline(never)]
    pub(super) fn new(
        held: EventMutexHeld<'_>,
        file: &EventFile,
        text: &[u8],
        remove: bool,
    ) -> Result<Self, BuildError> {
        let origin = EventPin::new(file)?;
        let event = Tied::try_new(origin, |origin| event_of(origin))?;
        let mut owned_text = KVec::new();
        owned_text.extend_from_slice(text, GFP_KERNEL)?;
        let source = Source {
            text: owned_text,
            event,
        };
        let parts: Tied<_, PartsOf> =
            Tied::try_new(source, |source| parts_of(held, file, remove, source))?;
        let info = info_of(&parts.get().data)?;
        // INVARIANT: the info of the data just built.
        Ok(Resolved {
            parts,
            info,
            _field_var_hists: KVec::new(),
        })
    }

    /// The resolved trigger.
    pub(super) fn data(&self) -> &HistData<'_> {
        &self.parts.get().data
    }

    /// `create_actions()`, with the synthetic events `synths` found, for
    /// `file`, the event file this was resolved against.
    pub(super) fn create_actions(
        &mut self,
        held: EventMutexHeld<'_>,
        file: &EventFile,
        synths: &Synths,
        snapshot: Option<&SnapshotCond>,
    ) -> Result<(), BuildError> {
        let enable = || match snapshot {
            Some(cond) => cond.enable(held),
            None => Err(-code::ENODEV.to_errno()),
        };
        let made = core::cell::RefCell::new(KVec::new());
        let created = self.parts.with_mut(|parts| {
            let text = parts.text;
            let log = |kind, pos| log_entries(held, file, text, [(kind, pos)].into_iter());
            let hidden = |target: &HistData<'_>, system: &str, event: &str, field: &str| {
                field_var_hist(held, file, &made, target, (system, event, field), &log)
            };
            with_options(held, file, false, Some(synths), |options| {
                let options = BuildOptions {
                    enable_snapshot: Some(&enable),
                    field_var_hist: Some(&hidden),
                    log: Some(&log),
                    ..options
                };
                parts.data.create_actions(&parts.event, options)
            })
        });
        // On failure they go again here, as in hist.
        self._field_var_hists = made.into_inner();
        created?;
        // INVARIANT: the info shows the save variables made.
        self.info = info_of(self.data())?;
        Ok(())
    }

    /// The canonical trigger info, without filter and state: what hist
    /// compares to tell triggers apart.
    fn info(&self) -> &[u8] {
        &self.info
    }
}

/// The event `origin` pins, as the core describes it.
// Not inlined: its frame would add to those under `Resolved::new()`.
#[inline(never)]
fn event_of(origin: &mut EventPin) -> Result<Event<'_>> {
    let file = origin.file();
    let fields = event::fields(file)?;
    let (system, name) = file.names();
    Ok(Event {
        system: core::str::from_utf8(system).unwrap_or(""),
        name: core::str::from_utf8(name).unwrap_or(""),
        fields,
    })
}

/// The hist data of `source`'s text resolved against its event, that
/// of `file` (the body of [`Resolved::new`]).
// Not inlined: the parse, inlined here, would add its frame to those of
// the boxes `Resolved::new()` makes.
#[inline(never)]
fn parts_of<'a>(
    held: EventMutexHeld<'_>,
    file: &EventFile,
    remove: bool,
    source: &'a mut Source,
) -> Result<Parts<'a>, BuildError> {
    let Source { text, event } = source;
    let text: &'a [u8] = text;
    let text_str = core::str::from_utf8(text).map_err(|_| BuildError::Kernel(code::EINVAL))?;
    let mut data = parsed(text_str)?;
    let spec = *data.spec();
    // With `grow`, every later error is hist's for it (the grammar's
    // `grow_error()`): hist stops at the piece.
    let grow_error = spec.grow().then(|| spec.grow_error());
    let as_grow = |e: BuildError| match (e, grow_error) {
        (BuildError::Hist(_), Some(g)) => BuildError::Hist(g),
        (e, _) => e,
    };
    let desc = event.get().desc();
    with_options(held, file, remove, None, |options| {
        HistData::build_into_with(&mut data, &spec, &desc, options)
    })
    .map_err(|e| as_grow(e.into()))?;
    if let (Err(_), Some(g)) = (data.grow_scope(), grow_error) {
        return Err(BuildError::Hist(g));
    }
    Ok(Parts {
        data,
        text,
        event: desc,
    })
}

/// The hist data of nothing for the trigger `text`, once parsed. Not
/// inlined: the parse's frame is not under the build's.
#[inline(never)]
fn parsed(text: &str) -> Result<KBox<HistData<'_>>, BuildError> {
    let spec = hist::trigger::parse_ext_as(crate::names::NAMES, text)?;
    // Built where it lives: it is large, and the stack is small.
    let mut slot = KBox::<HistData<'_>>::new_uninit(GFP_KERNEL)?;
    HistData::empty_in(&mut slot, &spec);
    // SAFETY: `empty_in()` wrote a whole value into the slot.
    Ok(unsafe { slot.assume_init() })
}

/// The canonical trigger info of `data`.
fn info_of(data: &HistData<'_>) -> Result<KVec<u8>, BuildError> {
    let mut info = KVec::new();
    let mut w = VecWriter(&mut info, false);
    let _ = data.write_info(&mut w, crate::names::NAMES.prefix);
    if w.1 {
        return Err(code::ENOMEM.into());
    }
    Ok(info)
}

impl Hist {
    /// Sets up the map of `resolved`.
    // Not inlined: its frame would add to `parse()`'s, on a small stack.
    #[inline(never)]
    pub(super) fn new(
        held: EventMutexHeld<'_>,
        resolved: Resolved,
        synths: KVec<Option<SynthPin>>,
        snapshot: Option<SnapshotCond>,
        instance: Option<InstanceRef>,
    ) -> Result<Arc<Self>, BuildError> {
        let resolved = Arc::new(resolved, GFP_KERNEL)?;
        let grow = if resolved.data().spec().grow() {
            Some(Growing::new(held, &resolved).map_err(|e| match e {
                e if e == code::ENOMEM => BuildError::NoMapMemory,
                e => BuildError::Kernel(e),
            })?)
        } else {
            None
        };
        let n_cpus = crate::event::nr_cpu_ids();
        let params = match grow {
            Some(_) => map_params_sized(resolved.data(), SHAPE_BITS, n_cpus),
            None => histogram::map_params(resolved.data(), n_cpus),
        };
        let bytes = params.storage_bytes()?;
        // The sketches of `.quantiles` values, in the same memory, after
        // the map's: made, cleared and freed with it.
        let pool = resolved.data().sketch_params();
        let pool_bytes = match pool {
            Some(p) => p.uninit_bytes().map_err(sketch_error)?,
            None => 0,
        };
        let total = bytes.checked_add(pool_bytes).ok_or(code::ENOMEM)?;
        // vmalloc(): kvmalloc() would try kmalloc() first, which rounds
        // maps of up to a few MB up to a power of two of pages.
        let memory = MapMemory::new(total).map_err(|_| BuildError::NoMapMemory)?;
        let interpreted = grow.is_some();
        // Built in the `Arc`'s memory: the histogram is large, and the
        // stack is small (a field variable's hidden histogram is made
        // inside the making of another).
        // INVARIANT: `hist` and the generations of `grow` read the data of
        // `resolved`; `grow` was made, and `hist` is interpreted, if it
        // asks for `:grow`.
        let source = HistSource::new(&resolved, memory);
        let hist = Tied::try_init(source, move |source, place| {
            histogram_into(source, place, params, bytes, pool, interpreted)
        });
        let init = try_init!(Hist {
            hist <- hist,
            grow,
            synths,
            snapshot,
            resolved,
            _instance: instance,
            version: AtomicU64::new(new_version()),
        }? BuildError);
        Arc::try_init(init, GFP_KERNEL)
    }

    /// The histogram, borrowed no longer than `self` (with `:grow`, the
    /// one no event updates).
    #[inline(always)]
    fn histogram(&self) -> &Histogram<'_> {
        self.hist.get()
    }

    /// A `:grow` histogram's generations.
    #[inline(always)]
    pub(super) fn growing(&self) -> Option<&Growing> {
        self.grow.as_deref()
    }
}

impl HistSource {
    /// What the histogram of `resolved` borrows: `resolved`, and `memory`.
    pub(super) fn new(resolved: &Arc<Resolved>, memory: MapMemory) -> Self {
        HistSource {
            resolved: resolved.clone(),
            memory,
        }
    }
}

/// Writes the histogram of `source`'s resolved trigger into `place`,
/// over `source`'s memory: the map of `params` in its first `bytes`, the
/// sketches of `pool` after them; with no compiled path if
/// `interpreted`. Returns `Ok` only once it has written a whole
/// histogram into `place`: the closure a caller gives
/// [`Tied::try_init`] calls it.
///
/// Each caller makes its initialiser itself, in a function that returns
/// no `impl Trait`: rustc takes what a function returns as `impl Trait`,
/// a private one's too, to be reachable from outside the crate, its
/// hidden type with it (here the closure, whose arguments are a
/// `Histogram`'s place). Every `pub` method of the core's `Histogram`
/// then had a global symbol, and no longer knew its callers: the general
/// path's `&dyn` context was not the probe's any more, but a pointer
/// called through on each event.
pub(super) fn histogram_into<'a, 'p>(
    source: &'a mut HistSource,
    place: &'p mut MaybeUninit<Histogram<'a>>,
    params: MapParams,
    bytes: usize,
    pool: Option<PoolParams>,
    interpreted: bool,
) -> Result<&'p mut Histogram<'a>, Error> {
    let map_error = |e: hist::map::MapError| Error::from_errno(-e.errno());
    let HistSource { resolved, memory } = source;
    let memory = memory.as_uninit_mut();
    let (map_part, pool_part) = memory.split_at_mut(bytes.min(memory.len()));
    let map = TracingMap::new_uninit(params, map_part).map_err(map_error)?;
    let sketches = match pool {
        Some(p) => {
            Some(SketchPool::new_uninit(p, pool_part).map_err(|e| Error::from_errno(-e.errno()))?)
        }
        None => None,
    };
    let hist =
        Histogram::with_sketches_in(place, resolved.data(), map, sketches).map_err(map_error)?;
    if interpreted {
        hist.interpret();
    }
    Ok(hist)
}

impl ActionSink for Hist {
    fn trace(&self, action: usize, vals: &[u64], var_ref_idx: &[u32]) {
        if let Some(Some(synth)) = self.synths.get(action) {
            synth.trace(vals, var_ref_idx);
        }
    }

    fn snapshot(&self, val: u64, key: &[u8], comm: &[u8; 16]) {
        if let Some(cond) = &self.snapshot {
            cond.take(val, key, comm);
        }
    }
}

/// The map of a `:grow` histogram's [`Hist::hist`], which no event
/// updates: the smallest the core's tests use.
const SHAPE_BITS: u32 = 3;

/// `core::fmt::Write` into a vector; remembers an allocation failure.
pub(super) struct VecWriter<'a>(pub(super) &'a mut KVec<u8>, pub(super) bool);

impl core::fmt::Write for VecWriter<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        if self.0.extend_from_slice(s.as_bytes(), GFP_KERNEL).is_err() {
            self.1 = true;
            return Err(core::fmt::Error);
        }
        Ok(())
    }
}
