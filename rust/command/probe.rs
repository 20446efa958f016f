// SPDX-License-Identifier: GPL-2.0

//! The probe: what runs for every event an rhist trigger sees, in the
//! tracing core's event path (`event_triggers_call()`). It must not
//! allocate, sleep or take a sleeping lock (a `snapshot()` action takes
//! the spinning `max_lock`, as hist's does). A compiled trigger's program runs first, in
//! few instructions; the others take the general path, which sets up the
//! context (the task, the ring buffer, the histograms referenced) and
//! counts how deeply it nests.

use core::marker::PhantomData;

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
    let (rec, event) = (fired.rec(), fired.ring_event());
    // The tracing core passes a record and its ring buffer event, or
    // neither; only the paths that read the event test it.
    if rec.is_null() {
        return;
    }
    let trigger = state_rcu(&fired);
    match trigger.path() {
        // SAFETY: `rec` is `fired`'s record (the event being traced: its
        // invariant), not null; `len` is the trigger's fixed part.
        ProbePath::Fixed(len) => unsafe { account(trigger, trigger.hist_probe(), len, rec, event) },
        ProbePath::GrowFixed(len, growing) => {
            // The generation, loaded once, and a compare: near its
            // threshold, the event goes out of line, to ask after it.
            let probe = InProbe::of(&fired);
            let gen = growing.current_rcu(probe);
            if gen.near() {
                // SAFETY: `rec` is `fired`'s record (the event being
                // traced: its invariant), not null.
                return unsafe { on_event_grow(probe, trigger, rec, event) };
            }
            // SAFETY: `rec` is `fired`'s record (the event being traced:
            // its invariant), not null; `len` is the trigger's fixed part.
            // The generation runs the same program as a plain map (a
            // `:grow` trigger's path is `GrowFixed` only when its
            // generations have one).
            unsafe { account(trigger, gen.histogram(), len, rec, event) }
        }
        ProbePath::Sized => {
            let Some(event) = event else {
                return;
            };
            // SAFETY: `rec` is `fired`'s record, not null, and `event` its
            // ring buffer event (invariant of `Fired`): what
            // `on_event_sized()` requires.
            unsafe { on_event_sized(InProbe::of(&fired), trigger, rec, event) }
        }
    }
}

/// The end of [`on_event()`] of a trigger that reads the fixed part of
/// its event, `len` bytes: `hist` updated by its compiled program, or by
/// the general path. Inlined in each of `on_event()`'s paths, so that
/// neither makes room for the other's values.
///
/// # Safety
///
/// `rec` is the record of `on_event()`'s [`Fired`], not null, and `event`
/// its ring buffer event if it has one; `len` is the trigger's fixed part
/// ([`ProbePath::Fixed`] or [`ProbePath::GrowFixed`]).
#[inline(always)]
unsafe fn account(
    trigger: &Trigger,
    hist: &Histogram<'_>,
    len: usize,
    rec: *mut c_void,
    event: Option<RingEvent<'_>>,
) {
    // A record holds at least the fixed part of its event, which holds
    // every field (a fixed path is only set for the trigger's own event).
    // SAFETY: `rec` is the data of an event of the trigger's own event,
    // whose records hold at least its fixed part: `len` bytes.
    let rec = unsafe { core::slice::from_raw_parts(rec.cast::<u8>(), len) };
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
/// threshold, or of one that reads past its event's fixed part (`rec`
/// then `len` bytes long): accounted in the current generation, which
/// is then asked whether it must grow ([`Growing::after_update`]).
/// Out of line, so that `on_event()` saves no registers for the call.
///
/// # Safety
///
/// `rec` is the record of `on_event()`'s [`Fired`], not null, and `event`
/// its ring buffer event if it has one.
#[cold]
#[inline(never)]
unsafe fn on_event_grow<'a>(
    probe: InProbe<'a>,
    trigger: &'a Trigger,
    rec: *mut c_void,
    event: Option<RingEvent<'_>>,
) {
    let (len, growing) = match (trigger.path(), trigger.growing(), event) {
        (ProbePath::GrowFixed(len, growing), _, _) => (len, growing),
        (ProbePath::Sized, Some(growing), Some(event)) => {
            (record_len(rec, event.length()), growing)
        }
        _ => return,
    };
    // SAFETY: `rec` is the data of an event of the trigger's own event,
    // whose records hold at least its fixed part, `len` bytes; or of
    // `event`, which holds at least `len` bytes: what `record_len()`
    // allows.
    let rec = unsafe { core::slice::from_raw_parts(rec.cast::<u8>(), len) };
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
///
/// # Safety
///
/// `rec` is the record of `on_event()`'s [`Fired`], not null, and `event`
/// its ring buffer event.
#[inline(never)]
#[link_section = ".text.rhist_event.string"]
unsafe fn on_event_sized<'a>(
    probe: InProbe<'a>,
    trigger: &'a Trigger,
    rec: *mut c_void,
    event: RingEvent<'_>,
) {
    if trigger.growing().is_some() {
        // SAFETY: `rec` and `event` are those of `on_event()`'s `Fired`,
        // `rec` not null (this function's contract): what
        // `on_event_grow()` requires.
        return unsafe { on_event_grow(probe, trigger, rec, Some(event)) };
    }
    let len = record_len(rec, event.length());
    // SAFETY: `rec` is the data of `event`, which holds at least `len`
    // bytes: what `record_len()` allows.
    let rec = unsafe { core::slice::from_raw_parts(rec.cast::<u8>(), len) };
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
