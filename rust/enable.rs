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

use core::ptr;
use kernel::ffi::c_int;

use kernel::alloc::flags::GFP_KERNEL;
use kernel::error::{code, Error};
use kernel::prelude::*;

use crate::command::is_ours;
use crate::hist::enable::EnableSpec;
use crate::kernel_ext::seq_file::SeqFile;
use crate::tracefs::{EventMutexHeld, EventMutexScope};
use crate::tracing::{
    EventFile, EventPin, ListEnd, Listed, NewTrigger, TraceArray, TriggerData, TriggerId, Unlisted,
};
use crate::trigger_cmd::{
    remove_each, Attached, Command, Fired, Registry, TriggerCommand, TriggerWrite,
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
static ENABLE: TriggerCommand<Enable> = TriggerCommand::new(crate::names::NAMES.enable);
/// `disable_rhist` (`disable_hist` in the drop-in build).
static DISABLE: TriggerCommand<Enable> = TriggerCommand::new(crate::names::NAMES.disable);

/// The enable triggers rhist has attached, guarded by `event_mutex`.
static REGISTRY: Registry<Target> = Registry::new();

/// Whether `data` is an `enable_rhist` or `disable_rhist` trigger.
fn is_enable(data: &TriggerData) -> bool {
    ENABLE.owns(data) || DISABLE.owns(data)
}

/// The target of `data`, if it is an enable trigger past `attach()`,
/// which sets it.
fn target(data: &TriggerData) -> Option<&Target> {
    ENABLE.private_of(data).or_else(|| DISABLE.private_of(data))
}

/// Whether `data` is an enable trigger that acts on `target_file`
/// (compared by address).
fn acts_on(data: &TriggerData, target_file: *const EventFile) -> bool {
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
fn create_or_remove(scope: &mut EventMutexScope<'_>, write: TriggerWrite<'_>) -> Result {
    let TriggerWrite {
        cmd_ops,
        file,
        text,
        remove,
    } = write;
    let held = scope.held();
    let spec = EnableSpec::parse(text).map_err(|e| Error::from_errno(-e))?;
    let target_file =
        find_enable_file(held, file.trace_array(), spec.system, spec.event).ok_or(code::EINVAL)?;
    if remove {
        let target_file = ptr::from_ref(target_file);
        remove_matching(scope, file, target_file);
        return Ok(());
    }
    let count = spec.count().map_err(|e| Error::from_errno(-e))?;
    let mut filter = KVec::new();
    if let Some(text) = spec.filter {
        filter.extend_from_slice(text, GFP_KERNEL)?;
        filter.push(0, GFP_KERNEL)?;
    }
    let enable = cmd_ops == ENABLE.as_ptr();
    let mut data = if enable { &ENABLE } else { &DISABLE }.new_trigger()?;
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
    attach(held, enable, data, file, target_file)
}

/// Pins both events, puts the target in soft mode and attaches `data`,
/// which has its filter set, unless a trigger of either command on `file`
/// acts on the same event (`EEXIST`).
fn attach(
    held: EventMutexHeld<'_>,
    enable: bool,
    mut data: NewTrigger<Target>,
    file: &EventFile,
    target_file: &EventFile,
) -> Result {
    let target = EventPin::new(target_file).map_err(|_| code::EBUSY)?;
    let on = EventPin::new(file).map_err(|_| code::EBUSY)?;
    let owned = KBox::new(Target { enable, target, on }, GFP_KERNEL)?;
    // Undone by `release()`, or below if attaching fails.
    let ret = target_file.soft_mode_get(held);
    if ret < 0 {
        return Err(Error::from_errno(ret));
    }
    data.set_private(owned);
    // As `event_enable_register_trigger()`, after the soft mode.
    if file.triggers(held).any(|d| acts_on(d, target_file)) {
        target_file.soft_mode_put(held);
        return Err(code::EEXIST);
    }
    // SAFETY: `data` is an enable trigger whose filter was parsed for
    // `file`'s event, whose `Target` may be any event, and whose count,
    // if any, these commands' `count()` counts down.
    if let Err((data, ret)) = unsafe { REGISTRY.list(held, file, data, ListEnd::Head) } {
        target_file.soft_mode_put(held);
        // Frees the trigger, its filter and its `Target`.
        drop(data);
        return Err(Error::from_errno(ret));
    }
    Ok(())
}

/// Takes `listed`, an enable trigger out of the registry, off its list,
/// and frees it.
fn remove(scope: &mut EventMutexScope<'_>, listed: Listed<Target>) {
    let unlisted = listed.unlink(scope);
    if let Some(target) = unlisted.private() {
        let held = scope.held();
        // Drops `list()`'s.
        target.on.file().trigger_mode_put(held);
        target.on.file().update_cond_flag(held);
    }
    release(scope.held(), unlisted);
}

/// Removes the enable trigger `id`, if it is attached.
fn unregister_one(scope: &mut EventMutexScope<'_>, id: TriggerId) {
    if let Some(listed) = REGISTRY.take(scope, id) {
        remove(scope, listed);
    }
}

/// Removes the enable trigger of `file` that acts on `target_file`, if
/// any, whichever of the two commands made it.
fn remove_matching(
    scope: &mut EventMutexScope<'_>,
    file: &EventFile,
    target_file: *const EventFile,
) {
    let found = file
        .triggers(scope.held())
        .find(|d| acts_on(d, target_file));
    if let Some(id) = found.map(TriggerData::id) {
        unregister_one(scope, id);
    }
}

/// Drops the reference `unlisted` holds; with the last one it takes the
/// target out of soft mode and frees the trigger, as
/// `event_enable_trigger_free()` does.
fn release(held: EventMutexHeld<'_>, unlisted: Unlisted<Target>) {
    // Frees the trigger, then its `Target`: this unpins both events.
    drop(unlisted.release_with(held, |target| target.target.file().soft_mode_put(held)));
}

/// Both commands, registered with the tracing core; dropping them removes
/// every trigger of theirs.
pub(crate) struct Registration {
    _attached: Attached<Enable>,
}

impl Registration {
    /// Registers `enable_rhist` and `disable_rhist`.
    pub(crate) fn new() -> Result<Self> {
        Ok(Registration {
            _attached: Attached::register(&ENABLE, Some(&DISABLE))?,
        })
    }
}

/// Both commands, as the scaffold they share with `rhist` sees them (one
/// registry for the two).
struct Enable;

// SAFETY: `attach()` lists a trigger only with `REGISTRY.list()`, and
// every trigger taken out of it is removed: by `unregister_one()`, by
// `free()` (the tracing core unlinked it) and by `remove_all()`.
// `trigger()` and `count()` only walk an RCU list and read or write
// flags: no lock, no sleep.
#[vtable]
unsafe impl Command for Enable {
    type Private = Target;
    const REGISTRY: &'static Registry<Target> = &REGISTRY;

    /// Handles `[!](enable|disable)_rhist:<param> [if <filter>]`.
    fn parse(scope: &mut EventMutexScope<'_>, write: TriggerWrite<'_>) -> c_int {
        match create_or_remove(scope, write) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// Removes the trigger of `file` that acts on what `data` acts on.
    fn unreg(scope: &mut EventMutexScope<'_>, data: &TriggerData, file: &EventFile) {
        if let Some(target) = target(data) {
            remove_matching(scope, file, target.target.file());
        }
    }

    /// Removes every enable trigger of `file`.
    fn unreg_all(scope: &mut EventMutexScope<'_>, file: &EventFile) {
        remove_each(scope, file, is_enable, unregister_one);
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

    /// [`release()`], for the tracing core when it clears the triggers
    /// of an instance being removed.
    fn free(scope: &mut EventMutexScope<'_>, unlisted: Unlisted<Target>) {
        release(scope.held(), unlisted);
    }

    fn remove_all(scope: &mut EventMutexScope<'_>, triggers: KVec<Listed<Target>>) {
        for listed in triggers {
            remove(scope, listed);
        }
    }
}
