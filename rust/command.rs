// SPDX-License-Identifier: GPL-2.0

//! The `rhist` trigger command: parsing what users write to an event's
//! `trigger` file, attaching and removing rhist triggers, showing them
//! there, and the probe the tracing core runs on every event.
//!
//! Every trigger this command attaches is also kept in [`REGISTRY`], so
//! that unloading the module can remove them all. Its parts:
//!
//! - [`state`](mod@state): a trigger's state, and what it is built from;
//! - [`attach`](mod@attach): how a trigger is attached to its event, and detached;
//! - [`resolve`]: what a build looks up beyond the text (other triggers'
//!   variables, referenced histograms, hidden histograms);
//! - [`lifetime`]: the states of triggers the tracing core frees, dropped
//!   later;
//! - [`probe`]: what runs for every event a trigger sees;
//! - [`errors`]: the entries a rejected command leaves in
//!   tracing/error_log.

mod attach;
mod errors;
mod grow;
mod lifetime;
mod map_memory;
mod probe;
mod resolve;
mod state;

use core::ptr;
use kernel::ffi::c_int;

use kernel::alloc::flags::GFP_KERNEL;
use kernel::bindings;
use kernel::error::{code, Error};
use kernel::prelude::*;
use kernel::sync::Arc;

use crate::hist;
use crate::hist::error::{
    errno::{EEXIST, ENOENT},
    HistError, HistErrorKind,
};
use crate::hist::grammar::ActionKind;
use crate::hist::grammar::TriggerSpec;
use crate::hist::hist_data::{HistData, Tracking};
use crate::kernel_ext::seq_file::SeqFile;
use crate::shim;
use crate::snapshot::SnapshotCond;
use crate::synth::Synths;
use crate::tracefs::{EventMutexHeld, EventMutexScope};
use crate::tracing::{EventFile, Listed, TriggerData, Unlisted};
use attach::{attach, detach, unregister_one, AttachSetup};
use errors::reject;
pub(crate) use grow::queue_work as grow_queue_work;
use lifetime::{DeferredWork, DEFERRED};
use state::{BuildError, Hist, Resolved};
pub(crate) use state::{Detached, Trigger};

use crate::trigger_cmd::{
    remove_each, Attached, Command, Fired, Registry, TriggerCommand, TriggerFn, TriggerWrite,
};

/// The `rhist` command (`hist` in the drop-in build).
static COMMAND: TriggerCommand<Rhist> = TriggerCommand::new(crate::names::NAMES.command);

/// Whether `data` is an rhist trigger.
pub(crate) fn is_ours(data: &TriggerData) -> bool {
    COMMAND.owns(data)
}

/// The rhist state of `data`, if it is an rhist trigger with one (one
/// that `attach()` set up), borrowed while the lock is held.
pub(crate) fn state<'a>(_held: EventMutexHeld<'a>, data: &'a TriggerData) -> Option<&'a Trigger> {
    COMMAND.private_of(data)
}

/// [`state()`] for the probe, which runs without the lock, for a trigger
/// on its event's list.
fn state_rcu<'a>(fired: &Fired<'a, Rhist>) -> &'a Trigger {
    // SAFETY: an rhist trigger that fires is on its event's list
    // (invariant of `Fired`), which only `REGISTRY.list()` in `attach()`
    // puts it on, once its private data is the `Trigger` it owns until
    // it is freed (`Unlisted::release()`), after the probes that may run
    // it have finished: not for `'a`, while this probe runs.
    unsafe { &*fired.data().private_data().cast::<Trigger>() }
}

/// The rhist triggers attached, each with its list's reference.
static REGISTRY: Registry<Trigger> = Registry::new();

/// The `rhist` command, as the scaffold it shares with `enable_rhist`
/// sees it.
pub(super) struct Rhist;

/// The command, registered with the tracing core; dropping it removes
/// every trigger of it.
pub(crate) struct Registration {
    // Dropped in this order: the command and its triggers go, then the
    // work item that freed states goes, then the grow's.
    _attached: Attached<Rhist>,
    _deferred: DeferredWork,
    _grow: grow::GrowWorker,
}

impl Registration {
    /// Registers the `rhist` trigger command.
    pub(crate) fn new() -> Result<Self> {
        // Before any trigger can ask it to grow; stopped after the last.
        let grow = grow::GrowWorker::new()?;
        // Before any trigger can be freed; waited for after the last.
        let deferred = DeferredWork::new()?;
        Ok(Registration {
            _grow: grow,
            _deferred: deferred,
            _attached: Attached::register(&COMMAND, None)?,
        })
    }
}

/// Finds the rhist trigger on `file` that hist would take for the one
/// resolved as `data` with `filter` (`hist_trigger_match()`): with a
/// `named` histogram, one of the triggers sharing it, else one that
/// shares none; the same histogram ([`HistData::matches`]) and the same
/// filter, or none on both.
fn find<'a>(
    held: EventMutexHeld<'a>,
    file: &'a EventFile,
    data: &HistData<'_>,
    filter: Option<&str>,
    named: Option<&Trigger>,
) -> Option<&'a TriggerData> {
    let filter = filter.map(str::as_bytes);
    file.triggers(held).find(|&d| {
        let Some(test) = state(held, d) else {
            return false;
        };
        let same_name = match named {
            Some(named) => Arc::ptr_eq(&named.hist, &test.hist),
            None => test.name().is_none(),
        };
        same_name && test.data().matches(data) && d.filter(held) == filter
    })
}

/// The first rhist trigger named `name` (`name=...`), on any event.
fn find_named<'a>(held: EventMutexHeld<'a>, name: &str) -> Option<&'a Trigger> {
    REGISTRY
        .iter(held)
        .filter_map(|d| state(held, d))
        .find(|t| t.name() == Some(name))
}

// SAFETY: `attach()` lists a trigger only with `REGISTRY.list()`, and
// every trigger taken out of it is removed: by `unregister_one()`, by
// `free()` (the tracing core unlinked it) and by `remove_all()`. The
// probe (`probe::on_event()`) does not sleep; the only lock it may take
// is `snapshot()`'s spinning `max_lock`, as hist's.
#[vtable]
unsafe impl Command for Rhist {
    type Private = Trigger;
    const REGISTRY: &'static Registry<Trigger> = &REGISTRY;
    const FLAGS: c_int = bindings::event_command_flags_EVENT_CMD_FL_NEEDS_REC as c_int;
    const OWN_TRIGGER: Option<TriggerFn> = Some(probe::on_event);

    /// Handles `[!]rhist:<param> [if <filter>]`, as hist's parse does.
    fn parse(scope: &mut EventMutexScope<'_>, write: TriggerWrite<'_>) -> c_int {
        let (file, remove) = (write.file, write.remove);
        let Some(text) = write.text else {
            return code::EINVAL.to_errno();
        };
        // What an instance's removal left is dropped before a command looks
        // at the triggers, as it would have been in hist. No caller of the
        // tracing core's `trigger_process_regex()` holds `trace_types_lock`.
        DEFERRED.release(scope);
        let result = if remove {
            remove_command(scope, file, text)
        } else {
            run_command(scope.held(), file, text)
        };
        let held = scope.held();
        match result {
            Ok(()) => 0,
            Err(BuildError::Hist(err)) => reject(held, file, text, &err),
            Err(BuildError::NoMapMemory) => errors::no_map_memory(held, file, text),
            Err(BuildError::Kernel(e)) => e.to_errno(),
        }
    }

    /// Removes the rhist trigger of `file` with `data`'s text.
    fn unreg(scope: &mut EventMutexScope<'_>, data: &TriggerData, file: &EventFile) {
        let held = scope.held();
        let filter = data.filter(held).and_then(|f| core::str::from_utf8(f).ok());
        let Some(trigger) = state(held, data) else {
            return;
        };
        let named = trigger.name().is_some().then_some(trigger);
        let found = find(held, file, trigger.data(), filter, named).map(TriggerData::id);
        if let Some(id) = found {
            unregister_one(scope, id);
        }
    }

    /// Removes every rhist trigger of `file`.
    fn unreg_all(scope: &mut EventMutexScope<'_>, file: &EventFile) {
        let held = scope.held();
        // As hist_file_check_refs(): none goes while another trigger
        // references a variable of one of them.
        let referenced = file
            .triggers(held)
            .any(|d| state(held, d).is_some_and(|t| t.referenced(held)));
        if referenced {
            return;
        }
        remove_each(scope, file, is_ours, unregister_one);
    }

    /// Shows the trigger's info line ([`write_info()`]).
    fn print(held: EventMutexHeld<'_>, out: &mut SeqFile, data: &TriggerData) {
        write_info(held, out, data);
    }

    /// [`lifetime::free()`].
    fn free(scope: &mut EventMutexScope<'_>, unlisted: Unlisted<Trigger>) {
        lifetime::free(scope.held(), unlisted);
    }

    fn remove_all(scope: &mut EventMutexScope<'_>, triggers: KVec<Listed<Trigger>>) {
        // Every trigger off its list first, as `clear_event_triggers()`
        // does, so that no probe still feeds a trigger whose variables
        // the others' states drop; one by one if there is no room to keep
        // them meanwhile.
        let mut off = KVec::new();
        if off.reserve(triggers.len(), GFP_KERNEL).is_ok() {
            for listed in triggers {
                // Cannot fail: reserved above.
                let _ = off.push(detach(scope, listed), GFP_KERNEL);
            }
            for unlisted in off {
                drop(unlisted.release(scope.held()));
            }
        } else {
            for listed in triggers {
                drop(detach(scope, listed).release(scope.held()));
            }
        }
        // No lock but `event_mutex` is held (`remove_all()`'s caller holds
        // none), so not `trace_types_lock`.
        DEFERRED.release(scope);
    }
}

/// Parses and resolves `[!]rhist:<text>` for `file` (`remove` for `!`)
/// and, where hist sets the filter this early, checks it.
fn resolve(
    held: EventMutexHeld<'_>,
    file: &EventFile,
    text: &[u8],
    remove: bool,
) -> Result<Resolved, BuildError> {
    let resolved = Resolved::new(held, file, text, remove)?;
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
            check_filter(held, file, filter)?;
        }
    }
    Ok(resolved)
}

/// Carries out `!rhist:<text>` on `file`: removes the trigger it
/// describes, if there is one.
fn remove_command(
    scope: &mut EventMutexScope<'_>,
    file: &EventFile,
    text: &[u8],
) -> Result<(), BuildError> {
    let held = scope.held();
    let resolved = resolve(held, file, text, true)?;
    let spec = resolved.data().spec();
    // A named trigger is one of those sharing the histogram of the first
    // trigger of that name.
    let named = spec.name_attr().and_then(|name| find_named(held, name));
    // Like hist, removing a trigger that is not there is no error.
    let Some(data) = find(held, file, resolved.data(), spec.filter_expr(), named) else {
        return Ok(());
    };
    // A trigger whose variables another references stays, with nothing
    // logged, as in hist.
    if state(held, data).is_some_and(|t| t.referenced(held)) {
        return Err(BuildError::Kernel(code::EBUSY));
    }
    let id = data.id();
    unregister_one(scope, id);
    Ok(())
}

/// Carries out `rhist:<text>` on `file`: creates, pauses, continues or
/// clears a trigger.
fn run_command(held: EventMutexHeld<'_>, file: &EventFile, text: &[u8]) -> Result<(), BuildError> {
    let mut resolved = resolve(held, file, text, false)?;
    let spec = resolved.data().spec();
    let has_actions = !spec.action_strs().is_empty();
    // A named trigger shares the histogram of the first trigger of that
    // name, on whichever event, if they match (checked as the trigger is
    // registered, below).
    let named = spec.name_attr().and_then(|name| find_named(held, name));
    // A name no trigger has yet makes a new histogram, as in hist.
    let existing = if spec.name_attr().is_some() && named.is_none() {
        None
    } else {
        find(held, file, resolved.data(), spec.filter_expr(), named)
    };
    let (pause, cont, clearing) = (spec.pause(), spec.cont(), spec.clear());
    if let Some(data) = existing {
        if pause || cont || clearing {
            if pause {
                data.set_paused(true);
            } else if cont {
                data.set_paused(false);
            } else if let Some(trigger) = state(held, data) {
                clear(held, data, trigger);
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
        let found = Synths::find(held, resolved.data().spec())?;
        let key_size = resolved.data().key_size();
        snapshot = match snapshot_tracking(resolved.data().spec()) {
            Some(how) => {
                let instance = file.trace_array().get()?;
                Some(SnapshotCond::new(instance, how, key_size)?)
            }
            None => None,
        };
        resolved.create_actions(held, file, &found, snapshot.as_ref())?;
        synths = found.into_pins()?;
    }
    if let Some(named) = named {
        if !named.data().matches(resolved.data()) {
            let spec = resolved.data().spec();
            let name = spec.name_attr().unwrap_or("");
            return Err(HistError::new(HistErrorKind::NamedMismatch, spec.errpos(name)).into());
        }
    }
    // With `grow`, hist stopped at the piece: its error.
    let grow_error = resolved
        .data()
        .spec()
        .grow()
        .then(|| resolved.data().spec().grow_error());
    if existing.is_some() {
        let err = HistError::with_errno(HistErrorKind::TriggerEexist, 0, EEXIST);
        return Err(grow_error.unwrap_or(err).into());
    }
    if cont || clearing {
        let err = HistError::with_errno(HistErrorKind::TriggerEnoentClear, 0, ENOENT);
        return Err(grow_error.unwrap_or(err).into());
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
                Some(file.trace_array().get()?)
            } else {
                None
            };
            let hist = Hist::new(held, resolved, synths, snapshot, instance)?;
            (hist, record_span)
        }
    };
    let trigger = Trigger::new(held, file, hist, record_span)?;
    attach(held, file, trigger, setup)
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

/// Sets `filter` (`if ...`) on a trigger of this command that is never
/// attached, as hist sets it before looking for the trigger a command
/// acts on: a bad filter fails (and is logged by the filter parser) as it
/// does there.
fn check_filter(
    held: EventMutexHeld<'_>,
    file: &EventFile,
    filter: &str,
) -> Result<(), BuildError> {
    let mut text = KVec::new();
    text.extend_from_slice(filter.as_bytes(), GFP_KERNEL)?;
    text.push(0, GFP_KERNEL)?;
    // Never listed, and without private data: freed, its filter with it,
    // when dropped.
    let data = COMMAND.new_trigger()?;
    let ret = data.set_filter(held, file, &mut text);
    drop(data);
    if ret < 0 {
        return Err(BuildError::Kernel(Error::from_errno(ret)));
    }
    Ok(())
}

/// Empties the histogram of `data`, an rhist trigger whose state is
/// `trigger`, as hist's `clear` does: with the trigger paused and running
/// probes waited for.
fn clear(held: EventMutexHeld<'_>, data: &TriggerData, trigger: &Trigger) {
    // Every trigger that feeds the histogram holds still meanwhile: with
    // a name, all that share it, as hist's pause_named_trigger() does.
    let feeds = |d: &TriggerData| {
        ptr::eq(d, data)
            || (trigger.name().is_some()
                && state(held, d).is_some_and(|t| Arc::ptr_eq(&t.hist, &trigger.hist)))
    };
    for d in REGISTRY.iter(held).filter(|d| feeds(d)) {
        d.save_and_pause(held);
    }
    // It sleeps, which `parse()` may.
    shim::rhist_tracepoint_synchronize_unregister();
    trigger.hist(held).clear();
    if let Some(growing) = trigger.growing() {
        growing.cleared(held);
    }
    trigger.contents_changed(held);
    for d in REGISTRY.iter(held).filter(|d| feeds(d)) {
        d.restore_paused(held);
    }
}

/// Writes the trigger info line of `data`, an rhist trigger, as hist
/// does, `rhist:` for `hist:`: `rhist:keys=...:size=N[ if <filter>]
/// [active]`.
pub(crate) fn write_info(held: EventMutexHeld<'_>, out: &mut SeqFile, data: &TriggerData) {
    let Some(trigger) = state(held, data) else {
        return;
    };
    for part in info_parts(held, data, trigger) {
        out.write_bytes(part);
    }
    out.write_bytes(b"\n");
}

/// The pieces of the trigger info line (without its newline) of `data`,
/// whose state is `state`: the info, ` if ` and the filter (or nothing),
/// and ` [active]` or ` [paused]`.
pub(crate) fn info_parts<'a>(
    held: EventMutexHeld<'a>,
    data: &'a TriggerData,
    state: &'a Trigger,
) -> [&'a [u8]; 4] {
    let (sep, filter) = match data.filter(held) {
        Some(filter) => (&b" if "[..], filter),
        None => (&b""[..], &b""[..]),
    };
    let status: &[u8] = if data.paused() {
        b" [paused]"
    } else {
        b" [active]"
    };
    [state.info(), sep, filter, status]
}

#[cfg(CONFIG_KUNIT)]
pub(crate) mod test_support {
    //! Hooks the KUnit suite uses to probe the registration.

    use crate::command::{Trigger, COMMAND};
    use crate::tracing::NewTrigger;

    /// A trigger of the command, never attached.
    pub(crate) fn new_trigger() -> kernel::error::Result<NewTrigger<Trigger>> {
        COMMAND.new_trigger()
    }

    /// Tries to register the command a second time.
    pub(crate) fn register_again() -> kernel::ffi::c_int {
        // SAFETY: registering an already registered command only compares
        // names and fails; the command is not modified.
        unsafe { kernel::bindings::register_event_command(COMMAND.as_ptr()) }
    }
}
