// SPDX-License-Identifier: GPL-2.0

//! The `rhist` trigger command: parsing what users write to an event's
//! `trigger` file, attaching and removing rhist triggers, showing them
//! there, and the probe the tracing core runs on every event.
//!
//! Every trigger this command attaches is also kept in [`REGISTRY`], so
//! that unloading the module can remove them all. Its parts:
//!
//! - [`state`]: a trigger's state, and what it is built from;
//! - [`resolve`]: what a build looks up beyond the text (other triggers'
//!   variables, referenced histograms, hidden histograms);
//! - [`lifetime`]: how a trigger and its state go;
//! - [`probe`]: what runs for every event a trigger sees;
//! - [`errors`]: the entries a rejected command leaves in
//!   tracing/error_log.

mod errors;
mod lifetime;
mod probe;
mod resolve;
mod state;

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
use crate::shim;
use crate::snapshot::SnapshotCond;
use crate::synth::{SynthPin, Synths};
use crate::tracefs::{self, ErrText, EventMutexGuard, SeqWriter};
use errors::*;
use lifetime::*;
use resolve::*;
pub(crate) use state::Trigger;
use state::*;

use crate::trigger_cmd::{
    c_bytes, remove_each, take_ref, EventPin, Registered, Registry, TriggerCommand,
};

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
