// SPDX-License-Identifier: GPL-2.0

//! The `enable_rhist` and `disable_rhist` trigger commands: on each event
//! they see, they continue or pause every rhist trigger of another event,
//! as the tracing core's `enable_hist` and `disable_hist` do for hist's.
//!
//! `enable_rhist:<system>:<event>[:<count>] [if <filter>]` written to an
//! event's `trigger` file behaves as `enable_hist` would, errors included:
//! the event acted on is held in soft mode while the trigger exists, a
//! second trigger of either command for the same event is `EEXIST`, and
//! `!enable_rhist:...` removes whichever of the two acts on that event.
//! Every trigger is also kept in [`REGISTRY`], so that unloading the
//! module can remove them.

use core::ptr::{self, NonNull};
use kernel::ffi::{c_int, c_void};

use kernel::alloc::flags::GFP_KERNEL;
use kernel::error::{code, Error};
use kernel::prelude::*;

use crate::command::is_ours;
use crate::hist::enable::EnableSpec;
use crate::kernel_ext::seq_file::SeqFile;
use crate::tracefs::EventMutexHeld;
use crate::tracing::{EventFile, EventPin, ListEnd, NewTrigger, Refs, TraceArray, TriggerData};
use crate::trigger_cmd::{
    list_and_enable, remove_each, Attached, Command, Fired, Registered, Registry, TriggerCommand,
    TriggerWrite, Unlinked,
};

/// What an enable trigger owns, in its `private_data`.
struct Target {
    /// True for `enable_rhist`, false for `disable_rhist`.
    enable: bool,
    /// The event whose rhist triggers it continues or pauses, pinned and
    /// referenced, and held in soft mode while the trigger exists.
    target: EventPin,
    /// The event the trigger sits on, pinned and referenced until the
    /// trigger is freed.
    on: EventPin,
}

/// `enable_rhist` (`enable_hist` in the drop-in build).
static ENABLE: TriggerCommand = TriggerCommand::new::<Enable>(crate::names::NAMES.enable);
/// `disable_rhist` (`disable_hist` in the drop-in build).
static DISABLE: TriggerCommand = TriggerCommand::new::<Enable>(crate::names::NAMES.disable);

/// The enable triggers rhist has attached, guarded by `event_mutex`.
static REGISTRY: Registry = Registry::new();

/// Whether `data` is an `enable_rhist` or `disable_rhist` trigger.
fn is_enable(data: &TriggerData) -> bool {
    ENABLE.owns(data) || DISABLE.owns(data)
}

/// The target of `data`, if it is an enable trigger past `attach()`,
/// which sets it.
fn target(data: &TriggerData) -> Option<&Target> {
    let owned = data.private_data().cast::<Target>();
    // SAFETY: the private data of an enable trigger is null or a `Target`
    // it owns (`attach()`) until it is freed (`put()`): for as long as
    // `data` is borrowed (invariant of `TriggerData`).
    (is_enable(data) && !owned.is_null()).then(|| unsafe { &*owned })
}

/// Whether `data` is an enable trigger that acts on `target_file`.
fn acts_on(data: &TriggerData, target_file: &EventFile) -> bool {
    target(data).is_some_and(|t| ptr::eq(t.target.file(), target_file))
}

/// C's `find_event_file()`: the instance's event `system`.`event` if it
/// can be enabled.
fn find_enable_file<'a>(
    held: EventMutexHeld<'a>,
    tr: &'a TraceArray,
    system: &[u8],
    event: &[u8],
) -> Option<&'a EventFile> {
    let (Ok(system), Ok(event)) = (core::str::from_utf8(system), core::str::from_utf8(event))
    else {
        return None;
    };
    tr.find_event_file(held, system, event)
        .filter(|file| file.can_enable())
}

/// Carries out the command `cmd_ops` with `text` on `file`, in the order
/// of C's `event_enable_trigger_parse()`, so that each error is its.
fn create_or_remove(held: EventMutexHeld<'_>, write: TriggerWrite<'_>) -> Result {
    let TriggerWrite {
        cmd_ops,
        file,
        text,
        remove,
    } = write;
    let spec = EnableSpec::parse(text).map_err(|e| Error::from_errno(-e))?;
    let target_file =
        find_enable_file(held, file.trace_array(), spec.system, spec.event).ok_or(code::EINVAL)?;
    if remove {
        remove_matching(held, file, target_file);
        return Ok(());
    }
    let count = spec.count().map_err(|e| Error::from_errno(-e))?;
    let mut filter = KVec::new();
    if let Some(text) = spec.filter {
        filter.extend_from_slice(text, GFP_KERNEL)?;
        filter.push(0, GFP_KERNEL)?;
    }
    // Made infallible here: `reg()` cannot fail for want of a slot.
    REGISTRY.reserve(held, 1)?;

    let mut data = NewTrigger::new(cmd_ops)?;
    if let Some(count) = count {
        data.set_count(count as u64);
    }
    let ret = match spec.filter {
        Some(_) => data.set_filter(held, file, &mut filter),
        None => 0,
    };
    if ret < 0 {
        return Err(Error::from_errno(ret));
    }
    attach(held, cmd_ops == ENABLE.as_ptr(), data, file, target_file)
}

/// Pins both events, puts the target in soft mode and registers `data`,
/// which has its filter set.
fn attach(
    held: EventMutexHeld<'_>,
    enable: bool,
    mut data: NewTrigger,
    file: &EventFile,
    target_file: &EventFile,
) -> Result {
    let target = EventPin::new(target_file).map_err(|_| code::EBUSY)?;
    let on = EventPin::new(file).map_err(|_| code::EBUSY)?;
    let owned = KBox::new(Target { enable, target, on }, GFP_KERNEL)?;
    // Undone by `put()`, which the private data set just below makes do
    // it.
    let ret = target_file.soft_mode_get(held);
    if ret < 0 {
        return Err(Error::from_errno(ret));
    }
    // `put()` turns this back into the box.
    data.set_private_data(KBox::into_raw(owned).cast::<c_void>());
    // The reference of this function, dropped before it returns.
    let data = data.counted(held);
    // SAFETY: `data` is a trigger of ours, fully set up for `file`, on no
    // list, with this function's reference; `create_or_remove()` reserved
    // its slot in `REGISTRY`.
    let ret = unsafe { Enable::register(held, data, file) };
    // SAFETY: drops this function's reference, after which `data` is not
    // used: frees it, filter included, and its `Target`, unless it was
    // attached.
    unsafe { put(held, data) };
    if ret < 0 {
        return Err(Error::from_errno(ret));
    }
    Ok(())
}

/// Unlinks an attached enable trigger from `file` and drops the list's
/// reference.
///
/// # Safety
///
/// `data` must be an enable trigger on the list of `file`, not used
/// after this.
unsafe fn unregister_one(held: EventMutexHeld<'_>, file: &EventFile, data: &TriggerData) {
    // SAFETY: `data` is on `file`'s list (the caller's promise); `put()`
    // waits for the probes that may still see it.
    unsafe { data.unlink(held) };
    // Drops `reg()`'s.
    file.trigger_mode_put(held);
    file.update_cond_flag(held);
    // SAFETY: drops the reference of the list `data` was just taken off;
    // the caller does not use `data` after this.
    unsafe { put(held, data) };
}

/// Removes the enable trigger of `file` that acts on `target_file`, if
/// any, whichever of the two commands made it.
fn remove_matching(held: EventMutexHeld<'_>, file: &EventFile, target_file: &EventFile) {
    if let Some(data) = file.triggers(held).find(|d| acts_on(d, target_file)) {
        // SAFETY: `data` is an enable trigger on `file`, not used after.
        unsafe { unregister_one(held, file, data) };
    }
}

/// Drops a reference on `data`; with the last one it takes the target
/// out of soft mode and frees the trigger.
///
/// # Safety
///
/// `data` must be a trigger of one of this module's enable or disable
/// commands; if this is its last reference, off its list and not used
/// after this.
unsafe fn put(held: EventMutexHeld<'_>, data: &TriggerData) {
    match data.put_ref(held) {
        Refs::Unbalanced => {
            pr_warn!("unbalanced enable trigger reference\n");
            return;
        }
        Refs::Left => return,
        Refs::Last => {}
    }
    REGISTRY.remove(held, data);
    // An enable trigger's private data is null or the `Target` that
    // `attach()` leaked into it.
    let owned = data.private_data().cast::<Target>();
    if let Some(target) = target(data) {
        // Undoes the soft mode `attach()` set.
        target.target.file().soft_mode_put(held);
    }
    // SAFETY: the last reference is gone, `data` is on no list and not
    // used after this (the caller's promise); this clears its filter,
    // waits for running probes and frees it.
    unsafe { data.free() };
    if !owned.is_null() {
        // SAFETY: no probe can reach the trigger any more (waited for
        // above), and `owned` came from `KBox::into_raw()`; this unpins
        // both events.
        drop(unsafe { KBox::from_raw(owned) });
    }
}

/// Both commands, registered with the tracing core; dropping them removes
/// every trigger of theirs.
pub(crate) struct Registration {
    // Dropped in this order: no trigger can be added, then those attached
    // go.
    _enable: Registered,
    _disable: Registered,
    _attached: Attached<Enable>,
}

impl Registration {
    /// Registers `enable_rhist` and `disable_rhist`.
    ///
    /// The triggers' removal is made first: once `enable_rhist` is
    /// registered a user may attach a trigger, and if `disable_rhist`
    /// then fails to register, that trigger must go before the module
    /// does.
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: `attached` is dropped only after both commands are
        // unregistered: made before them, it is dropped after them if
        // either fails to register (locals drop in reverse order), and
        // otherwise it is the last field of the result (fields drop in
        // order).
        let attached = unsafe { Attached::new() };
        let enable = ENABLE.register()?;
        let disable = DISABLE.register()?;
        Ok(Registration {
            _enable: enable,
            _disable: disable,
            _attached: attached,
        })
    }
}

/// Both commands, as the scaffold they share with `rhist` sees them (one
/// registry for the two).
struct Enable;

// SAFETY: `register()` lists a trigger only through `list_and_enable()`,
// which puts it in `REGISTRY`. `put()` takes a trigger out of the registry
// only with its last reference, which a listed trigger's list holds: so
// only once it is off its list. `free()` drops the one reference handed
// over; `remove_all()` unregisters each trigger (`unregister_one()`:
// unlinked, the list's reference dropped). `trigger()` and `count()` only
// walk an RCU list and read or write flags: no lock, no sleep.
#[vtable]
unsafe impl Command for Enable {
    const REGISTRY: &'static Registry = &REGISTRY;

    /// Handles `[!](enable|disable)_rhist:<param> [if <filter>]`.
    fn parse(held: EventMutexHeld<'_>, write: TriggerWrite<'_>) -> c_int {
        match create_or_remove(held, write) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// Attaches `data` to `file`, unless a trigger of either command
    /// there acts on the same event (`EEXIST`).
    unsafe fn register(held: EventMutexHeld<'_>, data: &TriggerData, file: &EventFile) -> c_int {
        // `data` is an enable trigger set up by `attach()`, with its
        // `Target` (the caller's promise).
        if let Some(target) = target(data) {
            let target_file = target.target.file();
            if file.triggers(held).any(|d| acts_on(d, target_file)) {
                return code::EEXIST.to_errno();
            }
        }
        // SAFETY: `data` is an enable trigger set up for `file`, on no
        // list, its count one these commands' `count()` counts down;
        // `create_or_remove()` reserved its slot in `REGISTRY` and holds a
        // reference until it returns; `put()` drops one.
        unsafe { list_and_enable(held, file, data, ListEnd::Head, &REGISTRY, put) }
    }

    /// Removes the trigger of `file` that acts on what `data` acts on.
    fn unreg(held: EventMutexHeld<'_>, data: &TriggerData, file: &EventFile) {
        if let Some(target) = target(data) {
            remove_matching(held, file, target.target.file());
        }
    }

    /// Removes every enable trigger of `file`.
    fn unreg_all(held: EventMutexHeld<'_>, file: &EventFile) {
        // SAFETY: each trigger `remove_each()` hands out is an enable trigger
        // on `file`'s list, not used after it is removed.
        remove_each(held, file, is_enable, |d| unsafe {
            unregister_one(held, file, d)
        });
    }

    /// Continues or pauses the target's rhist triggers.
    #[inline(always)]
    fn trigger(fired: Fired<'_, Self>) {
        let Some(target) = target(fired.data()) else {
            return;
        };
        let paused = !target.enable;
        for test in fired.triggers_of(target.target.file()) {
            if is_ours(test) {
                test.set_paused(paused);
            }
        }
    }

    /// Lets a counted trigger fire `count` times.
    #[inline(always)]
    fn count(fired: Fired<'_, Self>) -> bool {
        fired.data().take_count()
    }

    /// `enable_rhist:<system>:<event>:unlimited|count=N[ if <filter>]`, as
    /// `event_enable_trigger_print()` shows enable_hist's.
    fn print(held: EventMutexHeld<'_>, out: &mut SeqFile, data: &TriggerData) {
        let Some(target) = target(data) else {
            return;
        };
        let (system, event) = target.target.file().names();
        let name = if target.enable {
            crate::names::NAMES.enable
        } else {
            crate::names::NAMES.disable
        };
        for part in [name.to_bytes(), b":", system, b":", event] {
            out.write_bytes(part);
        }
        let count = data.count();
        if count == !0 {
            out.write_bytes(b":unlimited");
        } else {
            let _ = core::fmt::Write::write_fmt(out, format_args!(":count={}", count as i64));
        }
        if let Some(filter) = data.filter(held) {
            out.write_bytes(b" if ");
            out.write_bytes(filter);
        }
        out.write_bytes(b"\n");
    }

    /// [`put()`], for the tracing core when it clears the triggers of an
    /// instance being removed.
    fn free(held: EventMutexHeld<'_>, unlinked: Unlinked<'_, Self>) {
        // SAFETY: `unlinked` is a trigger of one of these commands, off its
        // list, whose reference is handed over, and that the tracing core
        // does not use after this (invariant of `Unlinked`); nor does this
        // function.
        unsafe { put(held, unlinked.data()) };
    }

    unsafe fn remove_all(held: EventMutexHeld<'_>, triggers: &[NonNull<TriggerData>]) {
        for data in triggers {
            // SAFETY: each trigger is live until its last reference is
            // dropped, which the list holds (the caller's promise).
            let data = unsafe { data.as_ref() };
            if let Some(target) = target(data) {
                // SAFETY: `data` is on the list of the file it pins (the
                // caller's promise), and not used after this. `put()`
                // finds it gone from the registry already.
                unsafe { unregister_one(held, target.on.file(), data) };
            }
        }
    }
}
