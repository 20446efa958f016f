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
//! - [`lifetime`]: how a trigger and its state go;
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
use kernel::ffi::{c_char, c_int};

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
use crate::instance::InstanceRef;
use crate::shim;
use crate::snapshot::SnapshotCond;
use crate::synth::Synths;
use crate::tracefs::{self, EventMutexHeld, ListEnd, SeqWriter};
use attach::detach;
use attach::{attach, unregister_one, AttachSetup};
use errors::reject;
use lifetime::{free, put, DeferredFlush, DEFERRED};
use state::{BuildError, Hist, Resolved};
pub(crate) use state::{Detached, Trigger};

use crate::trigger_cmd::{
    c_bytes, list_and_enable, parse, reg, remove_each, Attached, Command, Registered, Registry,
    TriggerCommand, TriggerWrite,
};

/// The `rhist` command (`hist` in the drop-in build).
static COMMAND: TriggerCommand = TriggerCommand::new(bindings::event_command {
    flags: bindings::event_command_flags_EVENT_CMD_FL_NEEDS_REC as c_int,
    parse: Some(parse::<Rhist>),
    reg: Some(reg::<Rhist>),
    unreg: Some(unreg),
    unreg_all: Some(unreg_all),
    trigger: Some(probe::on_event),
    free: Some(free),
    print: Some(print),
    ..TriggerCommand::common(crate::names::NAMES.command)
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

/// The rhist state of an rhist trigger, borrowed while the lock is held.
///
/// # Safety
///
/// `data` must be a live rhist trigger (see [`is_ours`]), not freed for
/// `'a`.
pub(crate) unsafe fn state<'a>(
    _held: EventMutexHeld<'a>,
    data: *mut bindings::event_trigger_data,
) -> &'a Trigger {
    // SAFETY: the caller's contract.
    unsafe { state_rcu(data) }
}

/// [`state()`] for the probe, which runs without the lock.
///
/// # Safety
///
/// `data` must be a live rhist trigger, not freed for `'a`.
unsafe fn state_rcu<'a>(data: *mut bindings::event_trigger_data) -> &'a Trigger {
    // SAFETY: rhist triggers own a `Trigger` in `private_data` until freed.
    unsafe { &*(*data).private_data.cast::<Trigger>() }
}

/// The rhist triggers attached: each is live, until `release()` takes it
/// out and frees it.
static REGISTRY: Registry = Registry::new();

/// The `rhist` command, as the scaffold it shares with `enable_rhist`
/// sees it.
pub(super) struct Rhist;

/// The command, registered with the tracing core; dropping it removes
/// every trigger of it.
pub(crate) struct Registration {
    // Dropped in this order: no trigger can be added, then those attached
    // go, then the work item that freed states goes, then the grow's.
    _command: Registered,
    _attached: Attached<Rhist>,
    _deferred: DeferredFlush,
    _grow: grow::GrowWorker,
}

impl Registration {
    /// Registers the `rhist` trigger command.
    pub(crate) fn new() -> Result<Self> {
        // Before any trigger can ask it to grow; stopped after the last.
        let grow = grow::GrowWorker::new()?;
        Ok(Registration {
            _grow: grow,
            _command: COMMAND.register()?,
            // SAFETY: dropped after `_command` (the fields' order).
            _attached: unsafe { Attached::new() },
            _deferred: DeferredFlush,
        })
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
/// `file` must be live.
unsafe fn find(
    held: EventMutexHeld<'_>,
    file: *mut bindings::trace_event_file,
    data: &HistData<'_>,
    filter: Option<&str>,
    named: Option<&Trigger>,
) -> Option<*mut bindings::event_trigger_data> {
    let filter = filter.map(str::as_bytes);
    // SAFETY: `file` is live; we only look.
    unsafe { tracefs::triggers(held, file) }.find(|&d| {
        // SAFETY: the triggers on the list are live.
        if !unsafe { is_ours(d) } {
            return false;
        }
        // SAFETY: as above; `d` is an rhist trigger.
        let test = unsafe { state(held, d) };
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
/// The trigger found must not be freed while the result is used.
unsafe fn find_named<'a>(held: EventMutexHeld<'a>, name: &str) -> Option<&'a Trigger> {
    REGISTRY
        .iter(held)
        // SAFETY: registered triggers are live; the one returned is not
        // freed while used (the caller's contract), the others not while
        // looked at.
        .map(|d| unsafe { state(held, d) })
        .find(|t| t.name() == Some(name))
}

impl Command for Rhist {
    const REGISTRY: &'static Registry = &REGISTRY;

    /// Handles `[!]rhist:<param> [if <filter>]`, as hist's parse does.
    unsafe fn parse(held: EventMutexHeld<'_>, write: TriggerWrite<'_>) -> c_int {
        let (file, remove) = (write.file, write.remove);
        let Some(text) = write.text else {
            return code::EINVAL.to_errno();
        };
        // What an instance's removal left is dropped before a command looks
        // at the triggers, as it would have been in hist.
        // SAFETY: `trace_types_lock` is not held: no caller of the tracing
        // core's `trigger_process_regex()` takes it.
        unsafe { DEFERRED.release(held) };
        // SAFETY: `file` is live and `cmd_ops` this command (our contract).
        match unsafe { run_command(held, write.cmd_ops, file, text, remove) } {
            Ok(()) => 0,
            // SAFETY: `file` is live.
            Err(BuildError::Hist(err)) => unsafe { reject(held, file, text, &err) },
            // SAFETY: `file` is live.
            Err(BuildError::NoMapMemory) => unsafe { errors::no_map_memory(held, file, text) },
            Err(BuildError::Kernel(e)) => e.to_errno(),
        }
    }

    /// Attaches `data` to `file`, at the tail of its trigger list.
    unsafe fn register(
        held: EventMutexHeld<'_>,
        data: *mut bindings::event_trigger_data,
        file: *mut bindings::trace_event_file,
    ) -> c_int {
        // SAFETY: `data` is a live rhist trigger set up by `attach()`, which
        // reserved its slot in `REGISTRY` and holds a reference until it
        // returns; `put()` drops one, as `free()` does.
        unsafe { list_and_enable(held, file, data, ListEnd::Tail, &REGISTRY, put) }
    }

    unsafe fn remove_all(held: EventMutexHeld<'_>, triggers: &[*mut bindings::event_trigger_data]) {
        for &data in triggers {
            // SAFETY: each trigger is live and on its file's list (our
            // contract).
            unsafe { detach(held, data) };
        }
        for &data in triggers {
            // SAFETY: `data` is detached and holds the list's reference;
            // `put()` waits for running probes before it frees. This task
            // holds no lock but `event_mutex` (our contract).
            unsafe { put(held, data) };
        }
        // SAFETY: as above.
        unsafe { DEFERRED.release(held) };
    }
}

/// Carries out `[!]rhist:<text>` on `file`: creates, removes, pauses,
/// continues or clears a trigger.
///
/// # Safety
///
/// Called from `parse()` with its arguments.
unsafe fn run_command(
    held: EventMutexHeld<'_>,
    cmd_ops: *mut bindings::event_command,
    file: *mut bindings::trace_event_file,
    text: &[u8],
    remove: bool,
) -> Result<(), BuildError> {
    // SAFETY: `file` is live.
    let mut resolved = unsafe { Resolved::new(held, file, text, remove) }?;
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
            // SAFETY: the tracing core's arguments.
            unsafe { check_filter(held, cmd_ops, file, filter) }?;
        }
    }

    // A named trigger shares the histogram of the first trigger of that
    // name, on whichever event, if they match (checked as the trigger is
    // registered, below).
    // SAFETY: the trigger found is freed, if at all, by the removal below,
    // after which `named` is not used.
    let named = spec
        .name_attr()
        .and_then(|name| unsafe { find_named(held, name) });
    if remove {
        // SAFETY: `file` is live.
        let existing = unsafe { find(held, file, resolved.data(), spec.filter_expr(), named) };
        // Like hist, removing a trigger that is not there is no error.
        if let Some(data) = existing {
            // A trigger whose variables another references stays, with
            // nothing logged, as in hist.
            // SAFETY: `data` is a live rhist trigger.
            if unsafe { state(held, data) }.referenced(held) {
                return Err(BuildError::Kernel(code::EBUSY));
            }
            // SAFETY: `data` is a live rhist trigger on `file`.
            unsafe { unregister_one(held, data) };
        }
        return Ok(());
    }
    // A name no trigger has yet makes a new histogram, as in hist.
    let existing = if spec.name_attr().is_some() && named.is_none() {
        None
    } else {
        // SAFETY: `file` is live.
        unsafe { find(held, file, resolved.data(), spec.filter_expr(), named) }
    };
    let (pause, cont, clearing) = (spec.pause(), spec.cont(), spec.clear());
    if let Some(data) = existing {
        if pause || cont || clearing {
            // SAFETY: `data` is a live rhist trigger, whose `paused` is
            // written only with the lock held (`held`).
            unsafe {
                if pause {
                    (*data).paused = true;
                } else if cont {
                    (*data).paused = false;
                } else {
                    clear(held, data);
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
        let found = Synths::find(held, resolved.data().spec())?;
        let key_size = resolved.data().key_size();
        snapshot = match snapshot_tracking(resolved.data().spec()) {
            // SAFETY: `file` is live.
            Some(how) => {
                let instance = InstanceRef::get(unsafe { (*file).tr })?;
                Some(SnapshotCond::new(instance, how, key_size)?)
            }
            None => None,
        };
        // SAFETY: `file` is the live file `resolved` was made for.
        unsafe { resolved.create_actions(held, file, &found, snapshot.as_ref()) }?;
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
                // SAFETY: `file` is live.
                Some(InstanceRef::get(unsafe { (*file).tr })?)
            } else {
                None
            };
            let hist = Hist::new(held, resolved, synths, snapshot, instance)?;
            (hist, record_span)
        }
    };
    // SAFETY: `file` is live.
    let trigger = unsafe { Trigger::new(held, file, hist, record_span) }?;
    // SAFETY: the tracing core's arguments.
    unsafe { attach(held, cmd_ops, file, trigger, setup) }
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
/// Called from `parse()` with its `cmd_ops` and `file`.
unsafe fn check_filter(
    _held: EventMutexHeld<'_>,
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

/// Empties a trigger's histogram as hist's `clear` does: with the trigger
/// paused and running probes waited for.
///
/// # Safety
///
/// `data` must be a live rhist trigger.
unsafe fn clear(held: EventMutexHeld<'_>, data: *mut bindings::event_trigger_data) {
    // SAFETY: `data` is a live rhist trigger.
    let trigger = unsafe { state(held, data) };
    // Every trigger that feeds the histogram holds still meanwhile: with
    // a name, all that share it, as hist's pause_named_trigger() does.
    let feeds = |d: *mut bindings::event_trigger_data| {
        // SAFETY: registered triggers are live.
        d == data
            || (trigger.name().is_some()
                && Arc::ptr_eq(&unsafe { state(held, d) }.hist, &trigger.hist))
    };
    for d in REGISTRY.iter(held).filter(|&d| feeds(d)) {
        // SAFETY: `d` is live; `paused` and `paused_tmp` are written only
        // with the lock held, as it is (`held`), and `paused` is read
        // racily by the event path, hence the volatile accesses.
        unsafe {
            let paused = ptr::read_volatile(ptr::addr_of!((*d).paused));
            (*d).paused_tmp = paused;
            ptr::write_volatile(ptr::addr_of_mut!((*d).paused), true);
        }
    }
    // SAFETY: no precondition; it sleeps, which `parse()` may.
    unsafe { shim::rhist_tracepoint_synchronize_unregister() };
    trigger.hist(held).clear();
    if let Some(growing) = trigger.growing() {
        growing.cleared(held);
    }
    trigger.contents_changed(held);
    for d in REGISTRY.iter(held).filter(|&d| feeds(d)) {
        // SAFETY: as above.
        unsafe { ptr::write_volatile(ptr::addr_of_mut!((*d).paused), (*d).paused_tmp) };
    }
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
    // SAFETY: the lock is held for the whole call (our contract).
    let held = unsafe { EventMutexHeld::assume() };
    // SAFETY: the tracing core passes a live rhist trigger and its live
    // file; the lock held keeps the filter string.
    let found = unsafe {
        let filter = c_bytes((*data).filter_str).and_then(|f| core::str::from_utf8(f).ok());
        let trigger = state(held, data);
        let named = trigger.name().is_some().then_some(trigger);
        find(held, file, trigger.data(), filter, named)
    };
    if let Some(found) = found {
        // SAFETY: `find()` returns a live rhist trigger on `file`.
        unsafe { unregister_one(held, found) };
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
    // SAFETY: the lock is held for the whole call (our contract).
    let held = unsafe { EventMutexHeld::assume() };
    // As hist_file_check_refs(): none goes while another trigger
    // references a variable of one of them.
    // SAFETY: `file` is live; the triggers on its list are live.
    let referenced = unsafe { tracefs::triggers(held, file) }
        // SAFETY: as above.
        .any(|d| unsafe { is_ours(d) && state(held, d).referenced(held) });
    if referenced {
        return;
    }
    // SAFETY: `file` is live; the triggers on its list are live, and
    // `unregister_one()` takes each off it.
    unsafe {
        remove_each(held, file, |d| is_ours(d), |d| unregister_one(held, d));
    }
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
    // SAFETY: the lock is held for the whole call (our contract).
    let held = unsafe { EventMutexHeld::assume() };
    // SAFETY: `m` is being shown; `data` is a live rhist trigger.
    unsafe { write_info(held, &mut SeqWriter::new(m), data) };
    0
}

/// Writes the trigger info line as hist does, `rhist:` for `hist:`:
/// `rhist:keys=...:size=N[ if <filter>] [active]`.
///
/// # Safety
///
/// `data` must be a live rhist trigger.
pub(crate) unsafe fn write_info(
    held: EventMutexHeld<'_>,
    out: &mut SeqWriter,
    data: *mut bindings::event_trigger_data,
) {
    // SAFETY: the caller's contract.
    for part in unsafe { info_parts(held, data) } {
        out.bytes(part);
    }
    out.bytes(b"\n");
}

/// The pieces of the trigger info line (without its newline): the info,
/// ` if ` and the filter (or nothing), and ` [active]` or ` [paused]`.
///
/// # Safety
///
/// `data` must be a live rhist trigger.
pub(crate) unsafe fn info_parts<'a>(
    held: EventMutexHeld<'a>,
    data: *mut bindings::event_trigger_data,
) -> [&'a [u8]; 4] {
    // SAFETY: `data` is a live rhist trigger, whose filter string and
    // state the lock held for `'a` keeps as they are.
    let (state, filter, paused) = unsafe {
        (
            state(held, data),
            c_bytes((*data).filter_str),
            (*data).paused,
        )
    };
    let (sep, filter) = match filter {
        Some(filter) => (&b" if "[..], filter),
        None => (&b""[..], &b""[..]),
    };
    let status: &[u8] = if paused { b" [paused]" } else { b" [active]" };
    [state.info(), sep, filter, status]
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
