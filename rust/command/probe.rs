// SPDX-License-Identifier: GPL-2.0

//! The probe: what runs for every event an rhist trigger sees, in the
//! tracing core's event path (`event_triggers_call()`). It must not
//! allocate, sleep or take a sleeping lock (a `snapshot()` action takes
//! the spinning `max_lock`, as hist's does). A compiled trigger's program runs first, in
//! few instructions; the others take the general path, which sets up the
//! context (the task, the ring buffer, the histograms referenced) and
//! counts how deeply it nests.

use core::marker::PhantomData;
use core::ptr::NonNull;

use kernel::bindings;
use kernel::ffi::c_void;
use kernel::page::PAGE_SIZE;

use super::state::{ProbePath, Trigger};
use super::{state_rcu, Rhist};
use crate::event::{OnThisCpu, ProbeContext, RingEvent};
use crate::hist::histogram::Histogram;
use crate::poll;
use crate::shim;
use crate::trigger_cmd::Fired;

/// The bytes the event path may read of a record at `rec` for which
/// `ring_buffer_event_length()` says `reported`.
///
/// That is 4 bytes short for a record over 116 bytes built in the CPU's
/// `trace_buffered_event` page (the usual case for an event that only has
/// triggers): its length word, unlike a ring buffer's, does not count
/// itself, yet the same 4 are taken off. hist reads what the record's
/// `__data_loc` words say, so rhist must not cut those 4 bytes off the
/// end of a string. They are read only while in the page where the
/// reported bytes end: a buffered record ends in its page, 4 bytes after
/// the reported end; in the ring buffer they are the next record's bytes
/// or unused space of the same sub-buffer, never a page that could be
/// unmapped or another owner's.
fn record_len(rec: *const c_void, reported: usize) -> usize {
    /// What `ring_buffer_event_length()` may take off a buffered record.
    const SHORTFALL: usize = core::mem::size_of::<u32>();
    let end = (rec as usize).wrapping_add(reported);
    let left_in_page = (PAGE_SIZE - end % PAGE_SIZE) % PAGE_SIZE;
    reported + SHORTFALL.min(left_in_page)
}

/// `trigger()`: the probe path, run for every event the trigger sees.
/// It must not allocate, sleep or take a sleeping lock. rhist's own
/// ([`Command::OWN_TRIGGER`]), not [`Command::trigger`] in the generic
/// adapter: inlined there, its body would make the functions it calls out
/// of line callable from other crates, each then starting with an
/// `endbr64`.
///
/// [`Command::OWN_TRIGGER`]: crate::trigger_cmd::Command::OWN_TRIGGER
/// [`Command::trigger`]: crate::trigger_cmd::Command::trigger
///
/// # Safety
///
/// Called by the tracing core only, as rhist's `trigger()`.
// In the page of the shapes of one or two numbers: see
// `Histogram::update_compiled()`.
#[link_section = ".text.rhist_event"]
pub(super) unsafe extern "C" fn on_event(
    data: *mut bindings::event_trigger_data,
    buffer: *mut bindings::trace_buffer,
    rec: *mut c_void,
    rbe: *mut bindings::ring_buffer_event,
) {
    // SAFETY: this is the `trigger()` of rhist's command
    // (`Rhist::OWN_TRIGGER`), which only the tracing core calls, from
    // `data_ops_trigger()`: what `Fired::from_raw()` requires, for this
    // call.
    let fired = unsafe { Fired::<Rhist>::from_raw(data, buffer, rec, rbe) };
    // The tracing core passes a record and its ring buffer event, or
    // neither; only the paths that read the event test it.
    let Some(traced) = Traced::of(&fired) else {
        return;
    };
    let (trigger, event) = (traced.trigger, fired.ring_event());
    match trigger.path() {
        ProbePath::Fixed(_) => account(trigger, trigger.hist_probe(), traced.fixed(), event),
        ProbePath::GrowFixed(_, growing) => {
            let rec = traced.fixed();
            // The generation, loaded once, and a compare: near its
            // threshold, the event goes out of line, to ask after it.
            let probe = InProbe::of(&fired);
            let gen = growing.current_rcu(probe);
            if gen.near() {
                return on_event_grow(probe, traced, event);
            }
            // The generation runs the same program as a plain map (a
            // `:grow` trigger's path is `GrowFixed` only when its
            // generations have one).
            account(trigger, gen.histogram(), rec, event)
        }
        ProbePath::Sized => {
            let Some(event) = event else {
                return;
            };
            on_event_sized(InProbe::of(&fired), traced, event)
        }
    }
}

/// The record of the event being traced, and the rhist trigger firing
/// for it: what the probe's paths read the record's bytes through.
/// Passed in two registers, as the two addresses were.
///
/// # Invariants
///
/// For `'a`, `rec` is the record, not null, of the event being traced,
/// an event of `trigger`'s file, and `trigger` is the trigger firing:
/// the [`Fired`] of a probe of `'a`, and its trigger.
#[derive(Clone, Copy)]
struct Traced<'a> {
    rec: NonNull<u8>,
    trigger: &'a Trigger,
}

impl<'a> Traced<'a> {
    /// The record and trigger of `fired`; `None` if it has no record.
    #[inline(always)]
    fn of(fired: &Fired<'a, Rhist>) -> Option<Self> {
        let rec = NonNull::new(fired.rec().cast::<u8>())?;
        // INVARIANT: `fired`'s record, not null, live for `'a`, and its
        // trigger (invariant of `Fired`).
        Some(Traced {
            rec,
            trigger: state_rcu(fired),
        })
    }

    /// The fixed part of the record the trigger reads: [`ProbePath::Fixed`]'s
    /// or [`ProbePath::GrowFixed`]'s length; empty on the
    /// [`ProbePath::Sized`] path (which never asks).
    #[inline(always)]
    fn fixed(self) -> &'a [u8] {
        let len = match self.trigger.path() {
            ProbePath::Fixed(len) | ProbePath::GrowFixed(len, _) => len,
            ProbePath::Sized => 0,
        };
        // SAFETY: `rec` is a record of the event of the trigger's file,
        // live for `'a` (invariant). A fixed path is set only for a
        // histogram resolved against that event (not a named one joined),
        // its length the span of the fields it reads, all in the event's
        // fixed part (`HistData::record_span()`), which every record of
        // the event holds.
        unsafe { core::slice::from_raw_parts(self.rec.as_ptr(), len) }
    }

    /// The record as `event` says it is long ([`record_len()`]), for
    /// what reads past its fixed part.
    #[inline(always)]
    fn sized(self, event: RingEvent<'a>) -> &'a [u8] {
        let len = record_len(self.rec.as_ptr().cast(), event.length());
        // SAFETY: `rec` is the record of the event being traced, live for
        // `'a` (invariant), and `event` its ring buffer event (invariant
        // of `RingEvent`), which holds at least `len` bytes of it: what
        // `record_len()` allows.
        unsafe { core::slice::from_raw_parts(self.rec.as_ptr(), len) }
    }
}

/// The end of [`on_event()`] of a trigger that reads the fixed part of
/// its event, `rec`: `hist` updated by its compiled program, or by the
/// general path. Inlined in each of `on_event()`'s paths, so that
/// neither makes room for the other's values.
#[inline(always)]
fn account(trigger: &Trigger, hist: &Histogram<'_>, rec: &[u8], event: Option<RingEvent<'_>>) {
    // A compiled trigger has no references, actions or context to read:
    // not even the ring buffer event. The compiled program wakes the
    // pollers itself, last. Every call here is the last thing done, a
    // jump: the code saves no registers.
    if !hist.update_compiled(rec, OnThisCpu, poll::wake_pollers) {
        if let Some(event) = event {
            on_event_general(hist, trigger, rec, event);
        }
    }
}

/// [`on_event()`] of a `:grow` trigger whose generation is near its
/// threshold, or of one that reads past its event's fixed part (then
/// with its ring buffer event): accounted in the current generation,
/// which is then asked whether it must grow ([`Growing::after_update`]).
/// Out of line, so that `on_event()` saves no registers for the call.
#[cold]
#[inline(never)]
fn on_event_grow<'a>(probe: InProbe<'a>, traced: Traced<'a>, event: Option<RingEvent<'a>>) {
    let trigger = traced.trigger;
    let (rec, growing) = match (trigger.path(), trigger.growing(), event) {
        (ProbePath::GrowFixed(_, growing), _, _) => (traced.fixed(), growing),
        (ProbePath::Sized, Some(growing), Some(event)) => (traced.sized(event), growing),
        _ => return,
    };
    let gen = growing.current_rcu(probe);
    let hist = gen.histogram();
    if trigger.on_synthetic() || !hist.update_compiled(rec, OnThisCpu, poll::wake_pollers) {
        let Some(event) = event else {
            return;
        };
        let Some(_level) = Nesting::enter() else {
            return;
        };
        // A `:grow` trigger has no actions or references.
        hist.update_general(rec, &probe_context(trigger, event));
        poll::wake_pollers();
    }
    growing.after_update(gen);
}

/// [`on_event()`] of a trigger that reads past its event's fixed part (a
/// `__data_loc` string): the record's length is asked of the ring buffer.
/// Out of line, so that `on_event()` saves no registers for the call; in
/// the page of the string shape.
#[inline(never)]
#[link_section = ".text.rhist_event.string"]
fn on_event_sized<'a>(probe: InProbe<'a>, traced: Traced<'a>, event: RingEvent<'a>) {
    let trigger = traced.trigger;
    if trigger.growing().is_some() {
        return on_event_grow(probe, traced, Some(event));
    }
    let rec = traced.sized(event);
    let hist = trigger.hist_probe();
    if trigger.on_synthetic() || !hist.update_compiled(rec, OnThisCpu, poll::wake_pollers) {
        on_event_general(hist, trigger, rec, event);
    }
}

/// [`on_event()`] of a trigger the compiled program does not cover, or
/// on a synthetic event: out of line, so that the compiled ones' path
/// sets up no context. `hist` is the trigger's histogram
/// ([`Trigger::hist_probe`]), first, where the program's code takes it
/// too: the probe moves nothing between the two. Wakes the pollers last.
///
/// An action may emit a synthetic event, whose triggers then run inside
/// this one: like hist (its per-CPU `hist_pad`), rhist counts on each CPU
/// how deeply this path is nested, and at the fourth level accounts
/// nothing. That stops a synthetic event that emits itself, directly or
/// through others, where hist stops it, and bounds the stack it takes.
/// A compiled trigger emits nothing, and runs on no synthetic event.
#[inline(never)]
fn on_event_general(hist: &Histogram<'_>, trigger: &Trigger, rec: &[u8], event: RingEvent<'_>) {
    let Some(_level) = Nesting::enter() else {
        return;
    };
    trigger.update(hist, rec, &probe_context(trigger, event));
    poll::wake_pollers();
}

/// The context the general path reads: the event's ring buffer event,
/// and the trace array of the trigger's file. The trigger, borrowed for
/// this call, pins its file (`Trigger::file()`), whose trace array is
/// live while it is.
#[inline(always)]
fn probe_context<'a>(trigger: &'a Trigger, event: RingEvent<'a>) -> ProbeContext<'a> {
    ProbeContext::new(event, trigger.file().trace_array())
}

/// That this task runs rhist's probe, for `'a`: of no size, it costs the
/// probe nothing to pass.
///
/// # Invariants
///
/// Made only from a [`Fired`] of `'a`: for `'a` this task is an RCU
/// reader that `synchronize_rcu()` waits for (invariant of `Fired`).
#[derive(Clone, Copy)]
pub(super) struct InProbe<'a>(PhantomData<&'a ()>);

impl<'a> InProbe<'a> {
    /// The probe `fired` runs.
    #[inline(always)]
    fn of(_fired: &Fired<'a, Rhist>) -> Self {
        // INVARIANT: from a `Fired` of `'a`.
        InProbe(PhantomData)
    }
}

/// One level of the event path's nesting on this CPU, left when dropped.
struct Nesting(());

impl Nesting {
    /// Enters a level; `None` at hist's limit.
    #[inline]
    fn enter() -> Option<Self> {
        // On the event path, with preemption disabled: the level is left
        // on this CPU. (Not `then_some()`: a value built and dropped
        // would leave a level not entered.)
        shim::rhist_nesting_enter().then(|| Nesting(()))
    }
}

impl Drop for Nesting {
    #[inline]
    fn drop(&mut self) {
        // Leaves the level `enter()` entered, on the same CPU (preemption
        // is disabled on the event path).
        shim::rhist_nesting_exit();
    }
}
