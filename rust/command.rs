// SPDX-License-Identifier: GPL-2.0

//! The `rhist` trigger command: parsing what users write to an event's
//! `trigger` file, attaching and removing rhist triggers, and the callback
//! the tracing core runs on every event.
//!
//! Every trigger this module attaches is also kept in [`REGISTRY`], so that
//! unloading the module can remove them all (the tracing core does not know
//! that a command can go away).

use core::cell::UnsafeCell;
use core::ptr;
use kernel::ffi::{c_char, c_int, c_void};

use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::VVec;
use kernel::bindings;
use kernel::error::{code, Error};
use kernel::prelude::*;
use kernel::sync::Arc;

use crate::event::{self, ProbeContext};
use crate::hist;
use crate::hist::error::{
    errno::{EEXIST, ENOENT},
    HistError, HistErrorKind,
};
use crate::hist::event::{EventDesc, EventField, COMMON_FIELDS};
use crate::hist::grammar::ActionKind;
use crate::hist::grammar::TriggerSpec;
use crate::hist::hist_data::{ActionSink, BuildOptions, HistData, Tracking};
use crate::hist::histogram::{self, Histogram, Snapshot, KEY_SIZE_MAX};
use crate::hist::map::TracingMap;
use crate::hist::var_ref::{Found, VarLookup, VAR_REFS_MAX};
use crate::instance::InstanceRef;
use crate::probe;
use crate::shim;
use crate::snapshot::SnapshotCond;
use crate::synth::{SynthPin, Synths};
use crate::tracefs::{self, ErrText, EventMutexGuard, SeqWriter};
use crate::trigger_cmd::{
    c_bytes, remove_each, take_ref, EventPin, Registered, Registry, TriggerCommand,
};

/// A trigger's text resolved against its event: the hist data, what it
/// borrows, and the canonical trigger info. It is all a removal needs; a
/// new trigger becomes a [`Hist`] by adding the map.
///
/// # Invariants
///
/// `data` borrows `_text` and `_fields`, and `_fields` borrows the
/// strings of the event that `_origin` pins. Both are heap buffers
/// that are never changed after `data` is built and are freed only when
/// the value is dropped, after `data` (fields drop in declaration
/// order); moving the value does not move them. The `'static` in the
/// types stands for "as long as this value": no accessor hands it out,
/// each ties its borrow to `&self`.
struct Resolved {
    data: KBox<HistData<'static>>,
    info: KVec<u8>,
    /// The hidden histograms the actions made on other events.
    _field_var_hists: KVec<FieldVarHist>,
    _text: KVec<u8>,
    _fields: KVec<EventField<'static>>,
    _origin: EventPin,
}

/// A histogram and everything it borrows. Named triggers on several
/// events share one (as hist's named triggers share their hist data).
///
/// # Invariants
///
/// `hist` borrows `resolved.data` and `_map_memory`: heap memory that is
/// never changed through its owner after `hist` is built and is freed
/// only after `hist` is dropped (declaration order). As in [`Resolved`],
/// the `'static` never leaves the value.
pub(crate) struct Hist {
    hist: Histogram<'static>,
    /// The synthetic events the actions emit, by action (`None`: not a
    /// `trace()` action).
    synths: KVec<Option<SynthPin>>,
    /// The condition of a `snapshot()` action.
    snapshot: Option<SnapshotCond>,
    _map_memory: VVec<u8>,
    resolved: Resolved,
    /// hist's `save_hist_vars()` reference: a histogram that defines or
    /// references variables keeps its instance from being removed.
    _instance: Option<InstanceRef>,
}

// SAFETY: the raw pointers inside point to memory the value owns (the
// map, the resolved data, the text) or keeps by a count it holds (the
// event file and its call by `EventPin`, synthetic events by `SynthPin`,
// the instance by `InstanceRef`), which may be dropped on any CPU; the
// histogram itself is lock-free and made for concurrent use from any CPU.
unsafe impl Send for Hist {}
// SAFETY: as above; shared access only reads or updates atomics, or
// calls the tracing core's event and snapshot functions, which any CPU
// may.
unsafe impl Sync for Hist {}

/// The state of one rhist trigger, owned by its `event_trigger_data`
/// through `private_data`. The event behind `file` is pinned and `file`
/// referenced for as long as the trigger lives.
pub(crate) struct Trigger {
    hist: Arc<Hist>,
    /// The histograms whose variables this one references, by slot
    /// (`HistData::ref_hists()`): each outlives this trigger, whose
    /// probe reads their maps.
    refs: KVec<Arc<Hist>>,
    file: *mut bindings::trace_event_file,
    /// How many bytes of this event's records the histogram reads, when
    /// it reads only the fixed part (see `HistData::record_span()`);
    /// `None`: the event path asks the ring buffer for each record's
    /// length. Always `None` on a synthetic event.
    record_span: Option<usize>,
    /// On a synthetic event: the event, held as hist holds it for each
    /// of its triggers (C's `se->ref`), so that it cannot be deleted.
    /// Its records may be emitted by an action, inside another trigger:
    /// they take the general path, which counts how deeply it nests.
    synthetic: Option<SynthPin>,
    _pin: EventPin,
    /// The next trigger dropped later (see [`Deferred`]).
    deferred_next: Option<KBox<Trigger>>,
}

/// Why a trigger could not be built.
enum BuildError {
    /// Rejected as hist would reject it.
    Hist(HistError),
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

impl Trigger {
    /// A trigger on `file` that updates `hist`.
    ///
    /// # Safety
    ///
    /// `file` must be a live event file; `event_mutex` held.
    unsafe fn new(
        file: *mut bindings::trace_event_file,
        hist: Arc<Hist>,
        record_span: Option<usize>,
    ) -> Result<KBox<Self>, BuildError> {
        // SAFETY: `file` is live.
        let pin = unsafe { EventPin::new(file) }?;
        // SAFETY: the caller holds `event_mutex` (our contract).
        let refs = unsafe { referenced_hists(hist.histogram().data()) }?;
        // SAFETY: `file` is live and its event pinned by `pin`;
        // `event_mutex` is held.
        let synthetic = unsafe { SynthPin::of_event(file) }?;
        let record_span = if synthetic.is_some() {
            None
        } else {
            record_span
        };
        Ok(KBox::new(
            Trigger {
                hist,
                refs,
                file,
                record_span,
                synthetic,
                _pin: pin,
                deferred_next: None,
            },
            GFP_KERNEL,
        )?)
    }

    /// The histogram.
    pub(crate) fn hist(&self) -> &Histogram<'_> {
        self.hist.histogram()
    }

    /// The event file the trigger is attached to, referenced for as long
    /// as the trigger lives.
    pub(crate) fn file(&self) -> *mut bindings::trace_event_file {
        self.file
    }

    /// How many bytes of each record the histogram reads, if only the
    /// event's fixed part (see the field).
    pub(crate) fn record_span(&self) -> Option<usize> {
        self.record_span
    }

    /// Whether the trigger is on a synthetic event, whose records an
    /// action of another trigger may emit (nested).
    pub(crate) fn on_synthetic(&self) -> bool {
        self.synthetic.is_some()
    }

    /// Accounts one event record by the general path (that of a trigger
    /// with no compiled program), resolving the references to other
    /// histograms' variables first if there are any.
    #[inline]
    pub(crate) fn update(&self, rec: &[u8], ctx: &ProbeContext) {
        let hist = self.hist();
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
    ///
    /// # Safety
    ///
    /// `event_mutex` must be held.
    unsafe fn referenced(&self) -> bool {
        // SAFETY: the caller holds `event_mutex`; registered triggers are
        // live.
        unsafe { REGISTRY.get() }.iter().any(|&d| {
            // SAFETY: as above.
            let other = unsafe { state(d) };
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
    fn name(&self) -> Option<&str> {
        self.data().spec().name_attr()
    }
}

impl Resolved {
    /// Parses `rhist:<text>` and resolves it against the event behind
    /// `file`, as `create_hist_data()` does; `remove` for `!rhist:...`.
    ///
    /// # Safety
    ///
    /// `file` must be a live event file; `event_mutex` held.
    // Not inlined: its frame would add to `parse()`'s, on a small stack.
    #[inline(never)]
    unsafe fn new(
        file: *mut bindings::trace_event_file,
        text: &[u8],
        remove: bool,
    ) -> Result<Self, BuildError> {
        // SAFETY: `file` is live.
        let origin = unsafe { EventPin::new(file) }?;

        let mut owned_text = KVec::new();
        owned_text.extend_from_slice(text, GFP_KERNEL)?;
        // SAFETY: the buffer is moved into the result with `data` and
        // never changed; `data` is dropped first (invariants of `Self`).
        let text_str = core::str::from_utf8(unsafe { forever(&owned_text) })
            .map_err(|_| BuildError::Kernel(code::EINVAL))?;
        let spec = hist::trigger::parse_as(crate::NAMES, text_str)?;

        // SAFETY: `file` is live and its event pinned by `origin`, which
        // the result keeps and drops last (invariants of `Self`).
        let fields = unsafe { event::fields(file) }?;
        // SAFETY: as above.
        let (system, name) = unsafe { tracefs::event_names(file) };
        let desc = EventDesc {
            system: core::str::from_utf8(system).unwrap_or(""),
            name: core::str::from_utf8(name).unwrap_or(""),
            // SAFETY: as for the text: moved into the result, never
            // changed, dropped after `data`.
            fields: unsafe { forever(&fields) },
            common_fields: &COMMON_FIELDS,
        };

        // Built where it lives: it is large, and the stack is small.
        let mut slot = KBox::<HistData<'static>>::new_uninit(GFP_KERNEL)?;
        HistData::empty_in(&mut slot, &spec);
        // SAFETY: `empty_in()` wrote a whole value into the slot.
        let mut data = unsafe { slot.assume_init() };
        // SAFETY: `file` is live and `event_mutex` held (our contract).
        unsafe {
            with_options(file, remove, None, |options| {
                HistData::build_into_with(&mut data, &spec, &desc, options)
            })
        }?;

        let info = info_of(&data)?;
        Ok(Resolved {
            data,
            info,
            _field_var_hists: KVec::new(),
            _text: owned_text,
            _fields: fields,
            _origin: origin,
        })
    }

    /// The resolved trigger.
    fn data(&self) -> &HistData<'_> {
        &self.data
    }

    /// `create_actions()`, with the synthetic events `synths` found.
    ///
    /// # Safety
    ///
    /// `file` must be the live event file this was resolved against;
    /// `event_mutex` held.
    unsafe fn create_actions(
        &mut self,
        file: *mut bindings::trace_event_file,
        synths: &Synths,
        snapshot: Option<&SnapshotCond>,
    ) -> Result<(), BuildError> {
        let data = &mut self.data;
        // SAFETY: the event is pinned by `_origin`: its names live on.
        let (system, name) = unsafe { tracefs::event_names(file) };
        let desc = EventDesc {
            system: core::str::from_utf8(system).unwrap_or(""),
            name: core::str::from_utf8(name).unwrap_or(""),
            // SAFETY: the buffer is never changed and is dropped after
            // `data` (invariants of `Self`).
            fields: unsafe { forever(&self._fields) },
            common_fields: &COMMON_FIELDS,
        };
        let enable = || match snapshot {
            // SAFETY: the condition is for `file`'s instance, live, and
            // `event_mutex` held, for the trigger being created (our
            // contract).
            Some(cond) => unsafe { cond.enable() },
            None => Err(-code::ENODEV.to_errno()),
        };
        let text = &self._text;
        // SAFETY: `file` is live (our contract).
        let log = |kind, pos| unsafe { log_entries(file, text, [(kind, pos)].into_iter()) };
        let made = core::cell::RefCell::new(KVec::new());
        let hidden = |target: &HistData<'_>, system: &str, event: &str, field: &str| {
            // SAFETY: `file` is live and `event_mutex` held (our
            // contract).
            unsafe { field_var_hist(file, &made, target, (system, event, field), &log) }
        };
        // SAFETY: `file` is live and `event_mutex` held (our contract).
        let created = unsafe {
            with_options(file, false, Some(synths), |options| {
                let options = BuildOptions {
                    enable_snapshot: Some(&enable),
                    field_var_hist: Some(&hidden),
                    log: Some(&log),
                    ..options
                };
                data.create_actions(&desc, options)
            })
        };
        // On failure they go again here, as in hist.
        self._field_var_hists = made.into_inner();
        created?;
        // The info shows the save variables made.
        self.info = info_of(&self.data)?;
        Ok(())
    }

    /// The canonical trigger info, without filter and state: what hist
    /// compares to tell triggers apart.
    fn info(&self) -> &[u8] {
        &self.info
    }
}

/// The canonical trigger info of `data`.
fn info_of(data: &HistData<'_>) -> Result<KVec<u8>, BuildError> {
    let mut info = KVec::new();
    let mut w = VecWriter(&mut info, false);
    let _ = data.write_info(&mut w, crate::NAMES.prefix);
    if w.1 {
        return Err(code::ENOMEM.into());
    }
    Ok(info)
}

/// Runs `f` with what building a trigger on `file` looks at beyond its
/// text: the variables of the event's other triggers (C's `find_var()`),
/// of the instance's registered triggers (`parse_var_ref()`), the
/// instance's events (`event_file()`) and the synthetic events.
///
/// # Safety
///
/// `file` must be live and `event_mutex` held.
unsafe fn with_options<R>(
    file: *mut bindings::trace_event_file,
    remove: bool,
    synths: Option<&Synths>,
    f: impl FnOnce(BuildOptions<'_>) -> R,
) -> R {
    let defined_elsewhere = |name: &str| {
        // SAFETY: `file` is live and `event_mutex` held: its trigger
        // list and our triggers on it stay as they are meanwhile.
        unsafe { tracefs::triggers(file) }
            // SAFETY: as above.
            .filter(|&d| unsafe { is_ours(d) })
            .any(|d| {
                // SAFETY: `d` is a live rhist trigger.
                let other = unsafe { state(d) }.data();
                (0..other.n_vars()).any(|i| other.var_name(i) == Some(name))
            })
    };
    // SAFETY: `file` is live, and `event_mutex` stays held until `vars`
    // is dropped at the end of this function (our contract).
    let vars = unsafe { InstanceVars::new(file) };
    // SAFETY: `file` is live, so is its trace array; `event_mutex` is
    // held.
    let event_exists =
        |system: &str, event: &str| unsafe { tracefs::has_event((*file).tr, system, event) };
    f(BuildOptions {
        remove,
        defined_elsewhere: Some(&defined_elsewhere),
        vars: Some(&vars),
        synths: synths.map(|s| s as _),
        event_exists: Some(&event_exists),
        enable_snapshot: None,
        field_var_hist: None,
        log: None,
    })
}

/// A hidden histogram (C's `struct field_var_hist`): an rhist trigger
/// made on another event for a field variable of a trigger's action, and
/// removed with its text when that trigger goes.
struct FieldVarHist {
    file: *mut bindings::trace_event_file,
    cmd: KVec<u8>,
    _pin: EventPin,
}

impl Drop for FieldVarHist {
    fn drop(&mut self) {
        tracefs::assert_event_mutex_held();
        // SAFETY: the file is live: its event is pinned by `_pin`, so it
        // cannot be removed, and so is its instance, the owner's: a
        // command being carried out there holds `event_mutex`, or the
        // owner's histogram holds it (an `InstanceRef`, dropped after
        // this: the owner references the hidden histogram's variable).
        // `event_mutex` is held and `trace_types_lock` is not: the owner,
        // a trigger's resolved data, is dropped only so (`put()`,
        // `Deferred::release()`). hist warns when this fails (the
        // histogram's variable has another user); rhist leaves the
        // trigger, as hist does.
        let _ = unsafe { run_command(command(), self.file, &self.cmd, true) };
    }
}

/// C's `create_field_var_hist()` for the trigger `target` being made on
/// `file`, for the field `field` of `system`.`event`: see
/// `hist::hist_data::FieldVarHist`. A trigger it makes is pushed on
/// `made`.
///
/// # Safety
///
/// `file` must be live and `event_mutex` held.
unsafe fn field_var_hist(
    file: *mut bindings::trace_event_file,
    made: &core::cell::RefCell<KVec<FieldVarHist>>,
    target: &HistData<'_>,
    (system, event, field): (&str, &str, &str),
    log: &dyn Fn(HistErrorKind, usize),
) -> Result<bool, HistError> {
    let pos = target.spec().errpos(field);
    // SAFETY: `file` is live, so is its instance; `event_mutex` is held.
    let other = unsafe { tracefs::find_event_file((*file).tr, system, event) };
    if other.is_null() {
        return Err(HistError::new(HistErrorKind::EventFileNotFound, pos));
    }
    // find_compatible_hist(): the first rhist trigger there whose keys
    // match.
    // SAFETY: `other` is live and `event_mutex` held: its trigger list
    // and our triggers on it stay as they are meanwhile.
    let compatible = unsafe { tracefs::triggers(other) }
        // SAFETY: as above.
        .filter(|&d| unsafe { is_ours(d) })
        // SAFETY: `d` is a live rhist trigger.
        .find(|&d| target.keys_compatible(unsafe { state(d) }.data()));
    let Some(found) = compatible else {
        return Err(HistError::new(HistErrorKind::HistNotFound, pos));
    };
    // One there already has the variable (find_synthetic_field_var()).
    let mut name = KVec::new();
    let mut w = VecWriter(&mut name, false);
    let _ = core::fmt::Write::write_fmt(&mut w, format_args!("synthetic_{field}"));
    let oom = HistError::silent(-code::ENOMEM.to_errno());
    if w.1 {
        return Err(oom);
    }
    // SAFETY: `file` is live and `event_mutex` held until `vars` goes.
    let vars = unsafe { InstanceVars::new(file) };
    let name = core::str::from_utf8(&name).unwrap_or("");
    if let Found::One(_) = vars.find_var(Some((system, event)), name) {
        return Ok(false);
    }
    // Its keys, the variable, and its filter.
    let mut cmd = KVec::new();
    let mut w = VecWriter(&mut cmd, false);
    // SAFETY: `found` is a live rhist trigger.
    let _ = unsafe { state(found) }
        .data()
        .write_field_var_hist_cmd(&mut w, field);
    // SAFETY: as above; `event_mutex` keeps its filter string.
    if let Some(filter) = unsafe { c_bytes((*found).filter_str) } {
        w.1 |= w.0.extend_from_slice(b" if ", GFP_KERNEL).is_err();
        w.1 |= w.0.extend_from_slice(filter, GFP_KERNEL).is_err();
    }
    // A failed allocation is ENOMEM; only a command too long is E2BIG.
    if w.1 {
        return Err(oom);
    }
    if cmd.len() >= hist::hist_data::MAX_FILTER_STR_VAL as usize {
        return Err(HistError::silent(-code::E2BIG.to_errno()));
    }
    // SAFETY: `other` is live.
    let pin = unsafe { EventPin::new(other) }.map_err(|e| HistError::silent(-e.to_errno()))?;
    // SAFETY: `other` is live and `event_mutex` held.
    if let Err(e) = unsafe { run_command(command(), other, &cmd, false) } {
        let errno = match e {
            BuildError::Hist(h) => {
                // hist logs the hidden command's errors as its own
                // (`last_cmd` stays this trigger's text).
                if let Some(kind) = h.kind() {
                    let entries = Iterator::chain(h.logged_before(), [(kind, h.pos())]);
                    for (kind, pos) in entries {
                        log(kind, nested_errpos(target, &cmd, pos));
                    }
                }
                h.errno()
            }
            BuildError::Kernel(k) => -k.to_errno(),
        };
        return Err(HistError::with_errno(
            HistErrorKind::HistCreateFail,
            pos,
            errno,
        ));
    }
    let hidden = FieldVarHist {
        file: other,
        cmd,
        _pin: pin,
    };
    // On failure `hidden` goes: the trigger is removed again.
    made.borrow_mut()
        .push(hidden, GFP_KERNEL)
        .map_err(|_| oom)?;
    Ok(true)
}

/// Where hist's caret for an error of the hidden command `cmd` at `pos`
/// lands: hist looks the offending piece up (`errpos()`) in the command
/// being written, `data`'s, not in the hidden one. The piece is taken to
/// run from `pos` to the next separator of the hidden command.
fn nested_errpos(data: &HistData<'_>, cmd: &[u8], pos: usize) -> usize {
    let prefix = crate::NAMES.prefix.len();
    let Some(rest) = pos.checked_sub(prefix).and_then(|at| cmd.get(at..)) else {
        return 0;
    };
    let end = rest
        .iter()
        .position(|b| b":=, ()".contains(b))
        .unwrap_or(rest.len());
    match core::str::from_utf8(&rest[..end]) {
        Ok(piece) if !piece.is_empty() => data.spec().errpos(piece),
        _ => 0,
    }
}

/// The identity of a histogram for references (`VarTarget::hist`): the
/// address of its hist data, which C's `hist_debug` shows as a
/// reference's `var.hist_data`.
fn hist_identity(data: &HistData<'_>) -> u64 {
    ptr::from_ref(data) as u64
}

/// The variables of the registered rhist triggers of one trace instance,
/// as `parse_var_ref()` finds them.
///
/// # Invariants
///
/// `event_mutex` is held for as long as the value lives: the registry,
/// its triggers and their events stay as they are meanwhile, so every
/// borrow handed out, which lives no longer than `&self`, stays valid.
struct InstanceVars {
    tr: *mut bindings::trace_array,
}

impl InstanceVars {
    /// The variables of the instance of `file`.
    ///
    /// # Safety
    ///
    /// `file` must be live, and `event_mutex` held until the result is
    /// dropped.
    unsafe fn new(file: *mut bindings::trace_event_file) -> Self {
        InstanceVars {
            // SAFETY: `file` is live.
            tr: unsafe { (*file).tr },
        }
    }

    /// The registered triggers of the instance with a variable `name`,
    /// with their event's names.
    fn defining<'a>(&self, name: &'a str) -> impl Iterator<Item = (&Trigger, &str, &str)> + 'a
    where
        Self: 'a,
    {
        let tr = self.tr;
        // SAFETY: `event_mutex` is held while `self` lives (invariant).
        unsafe { REGISTRY.get() }
            .iter()
            // SAFETY: registered triggers are live while `event_mutex`
            // is held, which it is for as long as `self` (invariant).
            .map(|&d| unsafe { state(d) })
            // SAFETY: a trigger keeps a reference on its file.
            .filter(move |t| unsafe { (*t.file).tr } == tr)
            .filter(move |t| {
                let data = t.data();
                (0..data.n_vars()).any(|i| data.var_name(i) == Some(name))
            })
            .map(|t| {
                // SAFETY: the trigger pins its event, whose names live
                // while it is registered; it stays registered while
                // `self`, which the borrows do not outlive, lives
                // (invariant).
                let (system, event) = unsafe { tracefs::event_names(t.file) };
                let text = |b| core::str::from_utf8(b).unwrap_or("");
                (t, text(system), text(event))
            })
    }
}

impl VarLookup for InstanceVars {
    fn find_var(&self, event: Option<(&str, &str)>, name: &str) -> Found<'_> {
        let mut found = self.defining(name);
        let first = match event {
            Some((sys, ev)) => found.find(|&(_, s, e)| s == sys && e == ev),
            None => {
                let first = found.next();
                if let Some((t, ..)) = first {
                    // Triggers on two events define it: C's VAR_NOT_UNIQUE.
                    if found.any(|(other, ..)| other.file != t.file) {
                        return Found::NotUnique;
                    }
                }
                first
            }
        };
        let Some((t, system, event)) = first else {
            return Found::None;
        };
        let data = t.data();
        match data.var_target(name, hist_identity(data), system, event) {
            Some(target) => Found::One(target),
            None => Found::None,
        }
    }
}

/// The histograms `data` references, one per slot of
/// `HistData::ref_hists()`, from the registered triggers.
///
/// # Safety
///
/// `event_mutex` must be held.
unsafe fn referenced_hists(data: &HistData<'_>) -> Result<KVec<Arc<Hist>>, BuildError> {
    let mut refs = KVec::with_capacity(data.ref_hists().len(), GFP_KERNEL)?;
    for &id in data.ref_hists() {
        // SAFETY: the caller holds `event_mutex`; registered triggers are
        // live.
        let hist = unsafe { REGISTRY.get() }
            .iter()
            // SAFETY: as above.
            .map(|&d| unsafe { state(d) })
            .find(|t| hist_identity(t.data()) == id)
            .map(|t| t.hist.clone())
            // Found by the build under the same lock: always there.
            .ok_or(BuildError::Kernel(code::EINVAL))?;
        refs.push(hist, GFP_KERNEL)?;
    }
    Ok(refs)
}

impl Hist {
    /// Sets up the map of `resolved`.
    // Not inlined: its frame would add to `parse()`'s, on a small stack.
    #[inline(never)]
    fn new(
        resolved: Resolved,
        synths: KVec<Option<SynthPin>>,
        snapshot: Option<SnapshotCond>,
        instance: Option<InstanceRef>,
    ) -> Result<Arc<Self>, BuildError> {
        let params = histogram::map_params(resolved.data());
        let bytes = params.storage_bytes()?;
        // vmalloc(): kvmalloc() would try kmalloc() first, which rounds
        // maps of up to a few MB up to a power of two of pages.
        let mut map_memory = VVec::<u8>::new();
        map_memory.reserve(bytes, GFP_KERNEL)?;
        // SAFETY: the spare capacity is never touched through the vector
        // again; its buffer is moved into the result with the map and
        // freed after it (invariants of `Self`).
        let memory = unsafe {
            let spare = map_memory.spare_capacity_mut();
            core::slice::from_raw_parts_mut(spare.as_mut_ptr(), spare.len())
        };
        let map = TracingMap::new_uninit(params, memory)?;
        // SAFETY: the box's contents are moved into the result with the
        // histogram and freed after it (invariants of `Self`).
        let data: &'static HistData<'static> =
            unsafe { &*ptr::from_ref::<HistData<'static>>(&resolved.data) };
        let hist = Histogram::new(data, map)?;
        Ok(Arc::new(
            Hist {
                hist,
                synths,
                snapshot,
                _map_memory: map_memory,
                resolved,
                _instance: instance,
            },
            GFP_KERNEL,
        )?)
    }

    /// The histogram, borrowed no longer than `self`.
    fn histogram(&self) -> &Histogram<'_> {
        &self.hist
    }
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

/// Views a vector's contents as `'static`.
///
/// # Safety
///
/// The vector's buffer must not be changed or freed while the result is
/// used.
unsafe fn forever<T>(v: &[T]) -> &'static [T] {
    // SAFETY: the caller's contract: the heap buffer stays put and
    // unchanged for as long as the result is used.
    unsafe { core::slice::from_raw_parts(v.as_ptr(), v.len()) }
}

/// `core::fmt::Write` into a vector; remembers an allocation failure.
struct VecWriter<'a>(&'a mut KVec<u8>, bool);

impl core::fmt::Write for VecWriter<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        if self.0.extend_from_slice(s.as_bytes(), GFP_KERNEL).is_err() {
            self.1 = true;
            return Err(core::fmt::Error);
        }
        Ok(())
    }
}

/// The `rhist` command (`hist` in the drop-in build).
static COMMAND: TriggerCommand = TriggerCommand::new(bindings::event_command {
    flags: bindings::event_command_flags_EVENT_CMD_FL_NEEDS_REC as c_int,
    parse: Some(parse),
    reg: Some(reg),
    unreg: Some(unreg),
    unreg_all: Some(unreg_all),
    trigger: Some(probe::on_event),
    free: Some(free),
    print: Some(print),
    ..TriggerCommand::common(crate::NAMES.command)
});

fn command() -> *mut bindings::event_command {
    COMMAND.as_ptr()
}

/// Whether `data` is an rhist trigger.
///
/// # Safety
///
/// `data` must be a live trigger.
pub(crate) unsafe fn is_ours(data: *mut bindings::event_trigger_data) -> bool {
    // SAFETY: `data` is live.
    unsafe { COMMAND.owns(data) }
}

/// The rhist state of an rhist trigger.
///
/// # Safety
///
/// `data` must be a live rhist trigger (see [`is_ours`]).
pub(crate) unsafe fn state<'a>(data: *mut bindings::event_trigger_data) -> &'a Trigger {
    // SAFETY: rhist triggers own a `Trigger` in `private_data` until freed.
    unsafe { &*(*data).private_data.cast::<Trigger>() }
}

/// The rhist triggers attached.
static REGISTRY: Registry = Registry::new();

/// The command, registered with the tracing core; dropping it removes
/// every trigger of it.
pub(crate) struct Registration {
    // Dropped in this order: no trigger can be added, then those attached
    // go.
    _command: Registered,
    _attached: Attached,
}

impl Registration {
    /// Registers the `rhist` trigger command.
    pub(crate) fn new() -> Result<Self> {
        Ok(Registration {
            _command: COMMAND.register()?,
            _attached: Attached(()),
        })
    }
}

/// The triggers the command attached: removed when dropped.
struct Attached(());

impl Drop for Attached {
    fn drop(&mut self) {
        let guard = EventMutexGuard::lock();
        let detached = REGISTRY.take_all(&guard);
        for &data in detached.iter() {
            // SAFETY: registered triggers are live and on their file's list;
            // `event_mutex` is held.
            unsafe { detach(data) };
        }
        for &data in detached.iter() {
            // SAFETY: `data` is detached and holds the list's reference;
            // `put()` waits for running probes before it frees. Only
            // `event_mutex` is held.
            unsafe { put(data) };
        }
        // SAFETY: as above.
        unsafe { DEFERRED.release() };
        drop(guard);
        // No trigger of ours is left for the tracing core to free: the
        // work item, if queued, finds the list empty. Wait for it.
        // SAFETY: may sleep, which a module's exit may.
        unsafe { shim::rhist_deferred_flush() };
    }
}

/// Unlinks `data` from its event file, as the tracing core's own
/// unregistration does.
///
/// # Safety
///
/// `data` must be a live rhist trigger on its file's list, with
/// `event_mutex` held.
unsafe fn detach(data: *mut bindings::event_trigger_data) {
    // SAFETY: `data` is a live rhist trigger (the caller's contract).
    let trigger = unsafe { state(data) };
    // The trigger references its file, so the file is live throughout.
    let file = trigger.file;
    // SAFETY: `data` is on its file's list and `event_mutex`, the lock
    // of that list, is held; readers on the event path are RCU-sched
    // readers, and `free()` waits for them before freeing `data`.
    unsafe { shim::rhist_list_del_rcu(ptr::addr_of_mut!((*data).list)) };
    // SAFETY: `file` is live, `event_mutex` held; this drops the soft
    // enable `reg()` took.
    unsafe { bindings::trace_event_trigger_enable_disable(file, 0) };
    // SAFETY: `file` is live, `event_mutex` held.
    unsafe { bindings::update_cond_flag(file) };
    if trigger.data().uses_timestamps() {
        // SAFETY: `file` is live, so is its trace array; this drops the
        // reference `attach()` took for this trigger.
        unsafe { bindings::tracing_set_filter_buffering((*file).tr, false) };
    }
}

/// error_log messages of the trigger command, NUL-terminated, indexed as
/// C's `err_text[]`.
static ERRORS: [ErrText; hist::trigger::ERROR_COUNT] = {
    let mut table = [const { ErrText(ptr::null()) }; hist::trigger::ERROR_COUNT];
    let mut i = 0;
    while i < table.len() {
        table[i] = ErrText(hist::trigger::C_MESSAGES[i].as_ptr().cast());
        i += 1;
    }
    table
};

/// Logs `err` for the command `rhist:<text>` to tracing/error_log, if C
/// would log one, and returns its negative errno.
///
/// # Safety
///
/// `file` must be a live event file.
unsafe fn reject(file: *mut bindings::trace_event_file, text: &[u8], err: &HistError) -> c_int {
    if let Some(kind) = err.kind() {
        let entries = Iterator::chain(err.logged_before(), [(kind, err.pos())]);
        // SAFETY: `file` is live.
        unsafe { log_entries(file, text, entries) };
    }
    -err.errno()
}

/// Logs `entries` (kind and caret) for the command `rhist:<text>` on
/// `file`'s event to tracing/error_log, as hist's `hist_err()` does.
///
/// # Safety
///
/// `file` must be a live event file.
unsafe fn log_entries(
    file: *mut bindings::trace_event_file,
    text: &[u8],
    entries: impl Iterator<Item = (HistErrorKind, usize)>,
) {
    let prefix = crate::NAMES.prefix.as_bytes();
    // SAFETY: `file` is live, and its event registered until `parse()`,
    // which holds `event_mutex`, returns; the names are used before that.
    let (system, event) = unsafe { tracefs::event_names(file) };
    let mut loc = KVec::new();
    let mut cmd = KVec::new();
    let built = (|| -> Result<(), kernel::alloc::AllocError> {
        for part in [prefix, system, b":", event, b"\0"] {
            loc.extend_from_slice(part, GFP_KERNEL)?;
        }
        for part in [prefix, text, b"\0"] {
            cmd.extend_from_slice(part, GFP_KERNEL)?;
        }
        Ok(())
    })();
    if built.is_ok() {
        for (kind, pos) in entries {
            // SAFETY: `file` is live; both strings are NUL-terminated.
            unsafe { tracefs::log_error(file, &loc, &cmd, &ERRORS, kind.c_index().into(), pos) };
        }
    }
}

/// Finds the rhist trigger on `file` that hist would take for the one
/// resolved as `data` with `filter` (`hist_trigger_match()`): with a
/// `named` histogram, one of the triggers sharing it, else one that
/// shares none; the same histogram ([`HistData::matches`]) and the same
/// filter, or none on both.
///
/// # Safety
///
/// `file` must be live and `event_mutex` held.
unsafe fn find(
    file: *mut bindings::trace_event_file,
    data: &HistData<'_>,
    filter: Option<&str>,
    named: Option<&Trigger>,
) -> Option<*mut bindings::event_trigger_data> {
    let filter = filter.map(str::as_bytes);
    // SAFETY: the caller's contract; we only look.
    unsafe { tracefs::triggers(file) }.find(|&d| {
        // SAFETY: the triggers are live under `event_mutex`.
        if !unsafe { is_ours(d) } {
            return false;
        }
        // SAFETY: as above; `d` is an rhist trigger.
        let test = unsafe { state(d) };
        let same_name = match named {
            Some(named) => Arc::ptr_eq(&named.hist, &test.hist),
            None => test.name().is_none(),
        };
        // SAFETY: as above; the filter string is the trigger's own.
        same_name && test.data().matches(data) && unsafe { c_bytes((*d).filter_str) } == filter
    })
}

/// The first rhist trigger named `name` (`name=...`), on any event.
///
/// # Safety
///
/// `event_mutex` must be held.
unsafe fn find_named<'a>(name: &str) -> Option<&'a Trigger> {
    // SAFETY: the caller holds `event_mutex`; registered triggers are live.
    unsafe { REGISTRY.get() }
        .iter()
        // SAFETY: as above.
        .map(|&d| unsafe { state(d) })
        .find(|t| t.name() == Some(name))
}

/// `parse()`: handles `[!]rhist:<param> [if <filter>]` written to `file`'s
/// trigger file, as hist's parse does. Called with `event_mutex` held.
///
/// # Safety
///
/// Called by the tracing core only, for a write to the live `file`'s
/// trigger file, with `event_mutex` held: `cmd_ops` is this command,
/// `glob` and `param_and_filter` NUL-terminated strings or null.
unsafe extern "C" fn parse(
    cmd_ops: *mut bindings::event_command,
    file: *mut bindings::trace_event_file,
    glob: *mut c_char,
    _cmd: *mut c_char,
    param_and_filter: *mut c_char,
) -> c_int {
    // SAFETY: the tracing core passes valid strings and a live file.
    let (glob, text) = unsafe { (c_bytes(glob).unwrap_or(b""), c_bytes(param_and_filter)) };
    let remove = glob.first() == Some(&b'!');
    let Some(text) = text else {
        return code::EINVAL.to_errno();
    };
    // What an instance's removal left is dropped before a command looks
    // at the triggers, as it would have been in hist.
    // SAFETY: `event_mutex` is held, `trace_types_lock` not (the tracing
    // core's `trigger_process_regex()` takes only the former).
    unsafe { DEFERRED.release() };
    // SAFETY: the tracing core's arguments; `event_mutex` is held.
    match unsafe { run_command(cmd_ops, file, text, remove) } {
        Ok(()) => 0,
        // SAFETY: `file` is live.
        Err(BuildError::Hist(err)) => unsafe { reject(file, text, &err) },
        Err(BuildError::Kernel(e)) => e.to_errno(),
    }
}

/// Carries out `[!]rhist:<text>` on `file`: creates, removes, pauses,
/// continues or clears a trigger.
///
/// # Safety
///
/// Called from `parse()` with its arguments; `event_mutex` held.
unsafe fn run_command(
    cmd_ops: *mut bindings::event_command,
    file: *mut bindings::trace_event_file,
    text: &[u8],
    remove: bool,
) -> Result<(), BuildError> {
    // SAFETY: `file` is live and `event_mutex` held.
    let mut resolved = unsafe { Resolved::new(file, text, remove) }?;
    let spec = resolved.data().spec();
    let has_actions = !spec.action_strs().is_empty();
    // hist sets the filter right after building, before it looks for the
    // trigger to remove, pause, continue or clear, before the named
    // histogram and before it makes the actions: a bad filter is the
    // error there. A plain new trigger's filter is set when it is
    // attached: an existing trigger matches only with the same filter,
    // which parsed, so a bad one gets there too.
    let early = remove
        || spec.pause()
        || spec.cont()
        || spec.clear()
        || spec.name_attr().is_some()
        || has_actions;
    if early {
        if let Some(filter) = spec.filter() {
            // SAFETY: the tracing core's arguments; `event_mutex` is held.
            unsafe { check_filter(cmd_ops, file, filter) }?;
        }
    }

    // A named trigger shares the histogram of the first trigger of that
    // name, on whichever event, if they match (checked as the trigger is
    // registered, below).
    // SAFETY: `event_mutex` is held.
    let named = spec
        .name_attr()
        .and_then(|name| unsafe { find_named(name) });
    if remove {
        // SAFETY: `event_mutex` is held by the tracing core.
        let existing = unsafe { find(file, resolved.data(), spec.filter_expr(), named) };
        // Like hist, removing a trigger that is not there is no error.
        if let Some(data) = existing {
            // A trigger whose variables another references stays, with
            // nothing logged, as in hist.
            // SAFETY: `data` is a live rhist trigger; `event_mutex` is held.
            if unsafe { state(data).referenced() } {
                return Err(BuildError::Kernel(code::EBUSY));
            }
            // SAFETY: `data` is a live rhist trigger on `file`.
            unsafe { unregister_one(data) };
        }
        return Ok(());
    }
    // A name no trigger has yet makes a new histogram, as in hist.
    let existing = if spec.name_attr().is_some() && named.is_none() {
        None
    } else {
        // SAFETY: `event_mutex` is held by the tracing core.
        unsafe { find(file, resolved.data(), spec.filter_expr(), named) }
    };
    let (pause, cont, clearing) = (spec.pause(), spec.cont(), spec.clear());
    if let Some(data) = existing {
        if pause || cont || clearing {
            // SAFETY: `data` is a live rhist trigger; `event_mutex` is held.
            unsafe {
                if pause {
                    (*data).paused = true;
                } else if cont {
                    (*data).paused = false;
                } else {
                    clear(data);
                }
            }
            return Ok(());
        }
    }

    // From here hist makes a new trigger: the actions first, then the
    // registration, which refuses a histogram that does not match the
    // one named, a duplicate or a cont/clear of nothing. hist makes the
    // actions of a trigger that joins a named histogram too, and fails
    // as they fail (a second `snapshot()` in an instance), before it
    // looks at the name; then it drops them, as here.
    let mut synths = KVec::new();
    let mut snapshot = None;
    if has_actions {
        // SAFETY: `event_mutex` is held.
        let found = unsafe { Synths::find(resolved.data().spec()) }?;
        let key_size = resolved.data().key_size();
        snapshot = match snapshot_tracking(resolved.data().spec()) {
            // SAFETY: `file` is live.
            Some(how) => {
                let instance = InstanceRef::get(unsafe { (*file).tr })?;
                Some(SnapshotCond::new(instance, how, key_size)?)
            }
            None => None,
        };
        // SAFETY: `file` is the live file `resolved` was made for;
        // `event_mutex` is held.
        unsafe { resolved.create_actions(file, &found, snapshot.as_ref()) }?;
        synths = found.into_pins()?;
    }
    if let Some(named) = named {
        if !named.data().matches(resolved.data()) {
            let spec = resolved.data().spec();
            let name = spec.name_attr().unwrap_or("");
            return Err(HistError::new(HistErrorKind::NamedMismatch, spec.errpos(name)).into());
        }
    }
    if existing.is_some() {
        return Err(HistError::with_errno(HistErrorKind::TriggerEexist, 0, EEXIST).into());
    }
    if cont || clearing {
        return Err(HistError::with_errno(HistErrorKind::TriggerEnoentClear, 0, ENOENT).into());
    }

    // What attaching needs of the text, copied: a trigger that joins a
    // named histogram drops its own text before it is attached.
    let setup = AttachSetup::new(resolved.data().spec())?;
    let (hist, record_span) = match named {
        Some(named) => {
            // Resolved against another event, maybe: its offsets say
            // nothing of this event's records.
            (named.hist.clone(), None)
        }
        None => {
            let record_span = resolved.data().record_span();
            let data = resolved.data();
            let instance = if data.n_vars() > 0 || data.n_var_refs() > 0 {
                // SAFETY: `file` is live.
                Some(InstanceRef::get(unsafe { (*file).tr })?)
            } else {
                None
            };
            let hist = Hist::new(resolved, synths, snapshot, instance)?;
            (hist, record_span)
        }
    };
    // SAFETY: `file` is live; `event_mutex` is held (our contract).
    let trigger = unsafe { Trigger::new(file, hist, record_span) }?;
    // SAFETY: the tracing core's arguments; `event_mutex` is held.
    unsafe { attach(cmd_ops, file, trigger, setup) }
}

/// What the first `snapshot()` action of `spec` tracks, if it has one.
fn snapshot_tracking(spec: &TriggerSpec<'_>) -> Option<Tracking> {
    spec.actions().flatten().find_map(|h| {
        if h.action().ok()?.kind() != ActionKind::Snapshot {
            return None;
        }
        match h.handler() {
            hist::grammar::Handler::OnMax { .. } => Some(Tracking::Max),
            hist::grammar::Handler::OnChange { .. } => Some(Tracking::Change),
            hist::grammar::Handler::OnMatch { .. } => None,
        }
    })
}

/// Sets `filter` (`if ...`) on a trigger that is never attached, as hist
/// sets it before looking for the trigger a command acts on: a bad filter
/// fails (and is logged by the filter parser) as it does there.
///
/// # Safety
///
/// Called from `parse()` with its `cmd_ops` and `file`; `event_mutex` held.
unsafe fn check_filter(
    cmd_ops: *mut bindings::event_command,
    file: *mut bindings::trace_event_file,
    filter: &str,
) -> Result<(), BuildError> {
    let mut text = KVec::new();
    text.extend_from_slice(filter.as_bytes(), GFP_KERNEL)?;
    text.push(0, GFP_KERNEL)?;
    // SAFETY: `cmd_ops` is our command; no count parameter.
    let data = unsafe {
        bindings::trigger_data_alloc(cmd_ops, ptr::null_mut(), ptr::null_mut(), ptr::null_mut())
    };
    if data.is_null() {
        return Err(code::ENOMEM.into());
    }
    // SAFETY: the filter is a NUL-terminated copy, which
    // `set_trigger_filter()` may cut up; `data` is ours and `file` live.
    let ret = unsafe { bindings::set_trigger_filter(text.as_mut_ptr().cast(), data, file) };
    // SAFETY: `data` was never registered and has no private data; this
    // frees its filter and it.
    unsafe { bindings::trigger_data_free(data) };
    if ret < 0 {
        return Err(BuildError::Kernel(Error::from_errno(ret)));
    }
    Ok(())
}

/// What attaching a trigger needs of its text, in buffers of its own.
struct AttachSetup {
    /// The filter, NUL-terminated; empty for none.
    filter: KVec<u8>,
    /// The trace clock (`clock=`, or the instance's), NUL-terminated.
    clock: KVec<u8>,
    /// Where an unknown clock's error points.
    clock_pos: usize,
    paused: bool,
}

impl AttachSetup {
    fn new(spec: &TriggerSpec<'_>) -> Result<Self, BuildError> {
        let mut filter = KVec::new();
        if let Some(text) = spec.filter() {
            filter.extend_from_slice(text.as_bytes(), GFP_KERNEL)?;
            filter.push(0, GFP_KERNEL)?;
        }
        let mut clock = KVec::new();
        clock.extend_from_slice(spec.clock().as_bytes(), GFP_KERNEL)?;
        clock.push(0, GFP_KERNEL)?;
        Ok(AttachSetup {
            filter,
            clock,
            clock_pos: spec.errpos(spec.clock()),
            paused: spec.pause(),
        })
    }
}

/// Empties a trigger's histogram as hist's `clear` does: with the trigger
/// paused and running probes waited for.
///
/// # Safety
///
/// `data` must be a live rhist trigger, `event_mutex` held.
unsafe fn clear(data: *mut bindings::event_trigger_data) {
    // SAFETY: `data` is a live rhist trigger.
    let trigger = unsafe { state(data) };
    // Every trigger that feeds the histogram holds still meanwhile: with
    // a name, all that share it, as hist's pause_named_trigger() does.
    let feeds = |d: *mut bindings::event_trigger_data| {
        // SAFETY: registered triggers are live under `event_mutex`.
        d == data
            || (trigger.name().is_some() && Arc::ptr_eq(&unsafe { state(d) }.hist, &trigger.hist))
    };
    // SAFETY: `event_mutex` is held.
    let registry = unsafe { REGISTRY.get() };
    for &d in registry.iter().filter(|&&d| feeds(d)) {
        // SAFETY: `d` is live; `paused` and `paused_tmp` are written only
        // under `event_mutex`, which is held, and `paused` is read racily
        // by the event path, hence the volatile accesses.
        unsafe {
            let paused = ptr::read_volatile(ptr::addr_of!((*d).paused));
            (*d).paused_tmp = paused;
            ptr::write_volatile(ptr::addr_of_mut!((*d).paused), true);
        }
    }
    // SAFETY: no precondition; it sleeps, which `parse()` may.
    unsafe { shim::rhist_tracepoint_synchronize_unregister() };
    trigger.hist().clear();
    for &d in registry.iter().filter(|&&d| feeds(d)) {
        // SAFETY: as above.
        unsafe { ptr::write_volatile(ptr::addr_of_mut!((*d).paused), (*d).paused_tmp) };
    }
}

/// Filters and attaches a new trigger. When its histogram reads
/// timestamps, sets the instance's trace clock and has events written
/// straight to the ring buffer while the trigger lives, as hist does; a
/// clock the instance does not know fails with hist's `SET_CLOCK_FAIL`.
///
/// # Safety
///
/// Called from `parse()` with its arguments and `event_mutex` held.
unsafe fn attach(
    cmd_ops: *mut bindings::event_command,
    file: *mut bindings::trace_event_file,
    trigger: KBox<Trigger>,
    mut setup: AttachSetup,
) -> Result<(), BuildError> {
    let uses_timestamps = trigger.data().uses_timestamps();
    // Room in the registry first: after attaching, nothing may fail.
    // SAFETY: `event_mutex` is held.
    let registry = unsafe { REGISTRY.get() };
    registry.push(ptr::null_mut(), GFP_KERNEL)?;
    // SAFETY: shrinking by one: the slot is only reserved.
    unsafe { registry.set_len(registry.len() - 1) };

    // SAFETY: `cmd_ops` is our command; no count parameter.
    let data = unsafe {
        bindings::trigger_data_alloc(cmd_ops, ptr::null_mut(), ptr::null_mut(), ptr::null_mut())
    };
    if data.is_null() {
        return Err(code::ENOMEM.into());
    }
    // SAFETY: `data` is ours until attached; it owns the trigger from here.
    unsafe {
        (*data).private_data = KBox::into_raw(trigger).cast::<c_void>();
        (*data).paused = setup.paused;
    }
    // Hold a reference while setting up, so a failure frees exactly once.
    // SAFETY: `data` is a valid trigger.
    unsafe { take_ref(data) };

    // SAFETY: the filter is a NUL-terminated copy of our own, which
    // `set_trigger_filter()` may cut up; `data` and `file` are live.
    let ret = unsafe {
        if setup.filter.is_empty() {
            0
        } else {
            bindings::set_trigger_filter(setup.filter.as_mut_ptr().cast(), data, file)
        }
    };
    let mut result = if ret < 0 {
        Err(BuildError::Kernel(Error::from_errno(ret)))
    } else {
        Ok(())
    };
    if result.is_ok() && uses_timestamps {
        // SAFETY: `file` is live; the clock name is NUL-terminated.
        let ret = unsafe { bindings::tracing_set_clock((*file).tr, setup.clock.as_ptr().cast()) };
        if ret < 0 {
            let err = HistError::with_errno(HistErrorKind::SetClockFail, setup.clock_pos, -ret);
            result = Err(BuildError::Hist(err));
        } else {
            // SAFETY: `file` is live; `detach()` (or the failure below)
            // drops this reference.
            unsafe { bindings::tracing_set_filter_buffering((*file).tr, true) };
        }
    }
    if result.is_ok() {
        // SAFETY: `data` is set up; `event_mutex` is held.
        let ret = unsafe { reg(ptr::null_mut(), data, file) };
        if ret < 0 {
            if uses_timestamps {
                // SAFETY: taken above.
                unsafe { bindings::tracing_set_filter_buffering((*file).tr, false) };
            }
            result = Err(BuildError::Kernel(Error::from_errno(ret)));
        }
    }
    // SAFETY: drops the setup reference; on failure this frees everything.
    unsafe { put(data) };
    result
}

/// Detaches and drops one trigger.
///
/// # Safety
///
/// `data` must be a live rhist trigger on its file, `event_mutex` held.
unsafe fn unregister_one(data: *mut bindings::event_trigger_data) {
    // SAFETY: `data` is a live rhist trigger on its file, `event_mutex`
    // held (the caller's contract, which is `detach()`'s).
    unsafe { detach(data) };
    // SAFETY: `data` is detached and still holds the reference its
    // file's list held; `event_mutex` is held.
    unsafe { put(data) };
}

/// `reg()`: attaches `data` to `file`.
///
/// # Safety
///
/// `data` must be a trigger set up by `attach()` for the live `file`,
/// with `event_mutex` held.
unsafe extern "C" fn reg(
    _glob: *mut c_char,
    data: *mut bindings::event_trigger_data,
    file: *mut bindings::trace_event_file,
) -> c_int {
    tracefs::assert_event_mutex_held();
    // SAFETY: `data` is a live trigger set up by `attach()`, the only
    // caller; the list's reference is dropped by `free()` on removal.
    unsafe { take_ref(data) };
    // At the tail, as hist does: the files list triggers in that order.
    // SAFETY: `file` is live and `event_mutex`, the lock of its trigger
    // list, is held; `data` is on no list.
    unsafe {
        shim::rhist_list_add_tail_rcu(
            ptr::addr_of_mut!((*data).list),
            ptr::addr_of_mut!((*file).triggers),
        )
    };
    // SAFETY: `file` is live, `event_mutex` held.
    unsafe { bindings::update_cond_flag(file) };
    // SAFETY: as above.
    let ret = unsafe { tracefs::trigger_mode_get(file) };
    if ret < 0 {
        // SAFETY: `data` was put on the list above, under the lock held.
        unsafe { shim::rhist_list_del_rcu(ptr::addr_of_mut!((*data).list)) };
        // SAFETY: `file` is live, `event_mutex` held.
        unsafe { bindings::update_cond_flag(file) };
        // SAFETY: drops the list's reference taken above; `attach()`
        // still holds its own, so `data` stays live.
        unsafe { put(data) };
        return ret;
    }
    // SAFETY: `event_mutex` is held.
    let registry = unsafe { REGISTRY.get() };
    // Cannot fail: `attach()` reserved the slot.
    let _ = registry.push(data, GFP_KERNEL);
    0
}

/// `unreg()`: removes the rhist trigger of `file` with `data`'s text.
///
/// # Safety
///
/// Called by the tracing core only: `data` is a live rhist trigger
/// and `file` its live event file, with `event_mutex` held.
unsafe extern "C" fn unreg(
    _glob: *mut c_char,
    data: *mut bindings::event_trigger_data,
    file: *mut bindings::trace_event_file,
) {
    // SAFETY: the tracing core passes a live rhist trigger, its live file
    // and holds `event_mutex`, which keeps the filter string.
    let found = unsafe {
        let filter = c_bytes((*data).filter_str).and_then(|f| core::str::from_utf8(f).ok());
        let trigger = state(data);
        let named = trigger.name().is_some().then_some(trigger);
        find(file, trigger.data(), filter, named)
    };
    if let Some(found) = found {
        // SAFETY: `find()` returns a live rhist trigger on `file`;
        // `event_mutex` is held.
        unsafe { unregister_one(found) };
    }
}

/// `unreg_all()`: removes every rhist trigger of `file` (the trigger file
/// was opened with O_TRUNC).
///
/// # Safety
///
/// Called by the tracing core only, for the live `file`, with
/// `event_mutex` held.
unsafe extern "C" fn unreg_all(file: *mut bindings::trace_event_file) {
    // As hist_file_check_refs(): none goes while another trigger
    // references a variable of one of them.
    // SAFETY: `event_mutex` is held by the caller; the triggers are live.
    let referenced = unsafe { tracefs::triggers(file) }
        // SAFETY: as above.
        .any(|d| unsafe { is_ours(d) && state(d).referenced() });
    if referenced {
        return;
    }
    // SAFETY: `event_mutex` is held by the caller and `file` live; the
    // triggers on its list are live, and `unregister_one()` takes each
    // off it.
    unsafe {
        remove_each(file, |d| is_ours(d), |d| unregister_one(d));
    }
}

/// `free()`: the tracing core drops its reference on `data` as it
/// removes an instance (`clear_event_triggers()`), the only place it
/// calls this. It holds `event_mutex` and `trace_types_lock` there, which
/// dropping a trigger may take (through [`InstanceRef`], or a hidden
/// histogram's removal): the trigger's state is dropped later, by
/// [`Deferred::release()`].
///
/// # Safety
///
/// Called by the tracing core only, for a live rhist trigger it has
/// unlinked, with `event_mutex` held.
unsafe extern "C" fn free(data: *mut bindings::event_trigger_data) {
    // SAFETY: `data` is a live rhist trigger; `event_mutex` is held.
    if let Some(state) = unsafe { release(data) } {
        // SAFETY: `event_mutex` is held.
        unsafe { DEFERRED.push(state) };
    }
}

/// Drops a reference on `data`, and the trigger with the last one.
///
/// # Safety
///
/// `data` must be a live rhist trigger, `event_mutex` held, and
/// `trace_types_lock` not held.
unsafe fn put(data: *mut bindings::event_trigger_data) {
    // SAFETY: the caller's contract; dropping the state needs nothing
    // more than `event_mutex` without `trace_types_lock`.
    drop(unsafe { release(data) });
}

/// Drops a reference on `data`; with the last one, frees it and hands
/// its state over.
///
/// # Safety
///
/// `data` must be a live rhist trigger, `event_mutex` held.
unsafe fn release(data: *mut bindings::event_trigger_data) -> Option<KBox<Trigger>> {
    // SAFETY: `data` is live; its count is changed only under
    // `event_mutex`, which every caller holds.
    let refs = unsafe { &mut (*data).ref_ };
    if *refs <= 0 {
        pr_warn!("unbalanced trigger reference\n");
        return None;
    }
    *refs -= 1;
    if *refs > 0 {
        return None;
    }
    // SAFETY: `event_mutex` is held.
    unsafe { REGISTRY.remove(data) };
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
/// The list is only touched with `event_mutex` held.
struct Deferred(UnsafeCell<Option<KBox<Trigger>>>);

// SAFETY: the list is only touched with `event_mutex` held (invariant).
unsafe impl Sync for Deferred {}

static DEFERRED: Deferred = Deferred(UnsafeCell::new(None));

impl Deferred {
    /// Keeps `trigger` until [`release()`](Self::release), which the work
    /// item queued here runs.
    ///
    /// # Safety
    ///
    /// `event_mutex` must be held.
    unsafe fn push(&self, mut trigger: KBox<Trigger>) {
        // SAFETY: `event_mutex` is held (our contract), which guards the
        // list (invariant).
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
    /// `event_mutex` must be held, and `trace_types_lock` not.
    unsafe fn release(&self) {
        // SAFETY: `event_mutex` is held (our contract).
        let mut next = unsafe { (*self.0.get()).take() };
        // A loop, not the boxes' recursive drops: the list may be long.
        while let Some(mut trigger) = next {
            next = trigger.deferred_next.take();
            drop(trigger);
        }
    }
}

/// The work item of [`Deferred`] (`include/rhist_shim.c`).
#[no_mangle]
extern "C" fn rhist_release_deferred() {
    let _guard = EventMutexGuard::lock();
    // SAFETY: `event_mutex` is held; a work item holds no other lock.
    unsafe { DEFERRED.release() };
}

/// `print()`: shows the trigger in the event's trigger file.
///
/// # Safety
///
/// Called by the tracing core only: `m` is the trigger file being shown
/// and `data` a live rhist trigger on it, with `event_mutex` held.
unsafe extern "C" fn print(
    m: *mut bindings::seq_file,
    data: *mut bindings::event_trigger_data,
) -> c_int {
    // SAFETY: `m` is being shown; `data` is a live rhist trigger.
    unsafe { write_info(&mut SeqWriter::new(m), data) };
    0
}

/// Writes the trigger info line as hist does, `rhist:` for `hist:`:
/// `rhist:keys=...:size=N[ if <filter>] [active]`.
///
/// # Safety
///
/// `data` must be a live rhist trigger, with `event_mutex` held.
pub(crate) unsafe fn write_info(out: &mut SeqWriter, data: *mut bindings::event_trigger_data) {
    // SAFETY: `data` is a live rhist trigger; `event_mutex`, held, keeps
    // its filter string and state as they are.
    let (state, filter, paused) =
        unsafe { (state(data), c_bytes((*data).filter_str), (*data).paused) };
    out.bytes(state.info());
    if let Some(filter) = filter {
        out.bytes(b" if ");
        out.bytes(filter);
    }
    out.bytes(if paused {
        b" [paused]\n"
    } else {
        b" [active]\n"
    });
}

#[cfg(CONFIG_KUNIT)]
pub(crate) mod test_support {
    //! Hooks the KUnit suite uses to probe the registration.

    /// Tries to register the command a second time.
    pub(crate) fn register_again() -> kernel::ffi::c_int {
        // SAFETY: registering an already registered command only compares
        // names and fails; the command is not modified.
        unsafe { kernel::bindings::register_event_command(super::command()) }
    }
}
