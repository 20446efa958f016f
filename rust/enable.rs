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
use kernel::ffi::{c_char, c_int, c_void};

use kernel::alloc::flags::GFP_KERNEL;
use kernel::bindings;
use kernel::error::{code, Error};
use kernel::prelude::*;

use crate::command::is_ours;
use crate::hist::enable::EnableSpec;
use crate::tracefs::{self, EventMutexHeld, ListEnd, SeqWriter};
use crate::trigger_cmd::{
    c_bytes, list_and_enable, parse, reg, remove_each, Attached, Command, EventPin, Registered,
    Registry, TriggerCommand, TriggerWrite,
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

/// `enable_rhist` (`enable`) or `disable_rhist` (`disable`).
const fn enable_command(name: &'static core::ffi::CStr) -> TriggerCommand {
    TriggerCommand::new(bindings::event_command {
        parse: Some(parse::<Enable>),
        reg: Some(reg::<Enable>),
        unreg: Some(unreg),
        unreg_all: Some(unreg_all),
        trigger: Some(on_event),
        count_func: Some(count),
        free: Some(free),
        print: Some(print),
        ..TriggerCommand::common(name)
    })
}

static ENABLE: TriggerCommand = enable_command(crate::names::NAMES.enable);
static DISABLE: TriggerCommand = enable_command(crate::names::NAMES.disable);

/// The enable triggers rhist has attached, guarded by `event_mutex`.
static REGISTRY: Registry = Registry::new();

/// Whether `data` is an `enable_rhist` or `disable_rhist` trigger.
///
/// # Safety
///
/// `data` must be a live trigger.
unsafe fn is_enable(data: *mut bindings::event_trigger_data) -> bool {
    // SAFETY: `data` is live.
    unsafe { ENABLE.owns(data) || DISABLE.owns(data) }
}

/// The target of an enable trigger.
///
/// # Safety
///
/// `data` must be a live enable trigger (see [`is_enable`]) past
/// `parse()`, which sets its private data.
unsafe fn target<'a>(data: *mut bindings::event_trigger_data) -> &'a Target {
    // SAFETY: an attached enable trigger owns a `Target` in
    // `private_data` until it is freed.
    unsafe { &*(*data).private_data.cast::<Target>() }
}

/// C's `find_event_file()`: the instance's event `system`.`event` if it
/// can be enabled.
///
/// # Safety
///
/// `tr` must be live.
unsafe fn find_enable_file(
    held: EventMutexHeld<'_>,
    tr: *mut bindings::trace_array,
    system: &[u8],
    event: &[u8],
) -> Option<*mut bindings::trace_event_file> {
    let (Ok(system), Ok(event)) = (core::str::from_utf8(system), core::str::from_utf8(event))
    else {
        return None;
    };
    // SAFETY: the caller's contract is the callee's.
    let file = unsafe { tracefs::find_event_file(held, tr, system, event) };
    if file.is_null() {
        return None;
    }
    // SAFETY: a listed file points at its live event and class.
    let usable = unsafe {
        let call = (*file).event_call;
        (*(*call).class).reg.is_some()
            && (*call).flags & bindings::TRACE_EVENT_FL_IGNORE_ENABLE as c_int == 0
    };
    usable.then_some(file)
}

/// Carries out the command `cmd_ops` with `text` on `file`, in the order
/// of C's `event_enable_trigger_parse()`, so that each error is its.
///
/// # Safety
///
/// `write.file` must be live and `write.cmd_ops` one of our commands.
unsafe fn create_or_remove(held: EventMutexHeld<'_>, write: TriggerWrite<'_>) -> Result {
    let TriggerWrite {
        cmd_ops,
        file,
        text,
        remove,
    } = write;
    let spec = EnableSpec::parse(text).map_err(|e| Error::from_errno(-e))?;
    // SAFETY: `file` is live, so is its instance.
    let target_file = unsafe { find_enable_file(held, (*file).tr, spec.system, spec.event) }
        .ok_or(code::EINVAL)?;
    if remove {
        // SAFETY: `file` is live.
        unsafe { remove_matching(held, file, target_file) };
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

    // SAFETY: `cmd_ops` is one of our commands; no private data yet.
    let data = unsafe {
        bindings::trigger_data_alloc(cmd_ops, ptr::null_mut(), ptr::null_mut(), ptr::null_mut())
    };
    if data.is_null() {
        return Err(code::ENOMEM);
    }
    // SAFETY: `data` is ours alone until registered.
    unsafe {
        if let Some(count) = count {
            (*data).count = count as _;
            (*data).flags |= bindings::EVENT_TRIGGER_FL_COUNT as c_int;
        }
        // The reference of this function, dropped before it returns.
        (*data).ref_ = 1;
    }
    // SAFETY: `data` is ours and `file` live; the filter is a
    // NUL-terminated copy that `set_trigger_filter()` may cut up.
    let ret = unsafe {
        match spec.filter {
            Some(_) => bindings::set_trigger_filter(filter.as_mut_ptr().cast(), data, file),
            None => 0,
        }
    };
    let attached = if ret < 0 {
        Err(Error::from_errno(ret))
    } else {
        // SAFETY: `data` is ours, with its filter set; both files are
        // live.
        unsafe { attach(held, cmd_ops == ENABLE.as_ptr(), data, file, target_file) }
    };
    // SAFETY: drops this function's reference: frees `data`, filter
    // included, unless it was attached, and its `Target` if it has one.
    unsafe { put(held, data) };
    attached
}

/// Pins both events, puts the target in soft mode and registers `data`.
///
/// # Safety
///
/// `data` must be an unregistered enable trigger without private data,
/// holding a reference of the caller; both files live.
unsafe fn attach(
    held: EventMutexHeld<'_>,
    enable: bool,
    data: *mut bindings::event_trigger_data,
    file: *mut bindings::trace_event_file,
    target_file: *mut bindings::trace_event_file,
) -> Result {
    // SAFETY: `target_file` is live.
    let target = unsafe { EventPin::new(target_file) }.map_err(|_| code::EBUSY)?;
    // SAFETY: `file` is live.
    let on = unsafe { EventPin::new(file) }.map_err(|_| code::EBUSY)?;
    let owned = KBox::new(Target { enable, target, on }, GFP_KERNEL)?;
    // SAFETY: `target_file` is live; undone by `put()`, which the private
    // data set just below makes do it.
    let ret = unsafe { tracefs::soft_mode_get(held, target_file) };
    if ret < 0 {
        return Err(Error::from_errno(ret));
    }
    // SAFETY: `data` is ours; `put()` turns this back into the box.
    unsafe { (*data).private_data = KBox::into_raw(owned).cast::<c_void>() };
    // SAFETY: the caller's contract; `data` is fully set up.
    let ret = unsafe { Enable::register(held, data, file) };
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
/// `data` must be an enable trigger on the list of the live `file`.
unsafe fn unregister_one(
    held: EventMutexHeld<'_>,
    file: *mut bindings::trace_event_file,
    data: *mut bindings::event_trigger_data,
) {
    // SAFETY: `data` is on the list of the live `file`; `put()` waits
    // for the probes that may still see it.
    unsafe { tracefs::del_trigger(held, data) };
    // SAFETY: `file` is live; drops `reg()`'s.
    unsafe { tracefs::trigger_mode_put(held, file) };
    // SAFETY: as above.
    unsafe { tracefs::update_cond_flag(held, file) };
    // SAFETY: drops the reference of the list `data` was just taken off.
    unsafe { put(held, data) };
}

/// Removes the enable trigger of `file` that acts on `target_file`, if
/// any, whichever of the two commands made it.
///
/// # Safety
///
/// `file` must be live.
unsafe fn remove_matching(
    held: EventMutexHeld<'_>,
    file: *mut bindings::trace_event_file,
    target_file: *mut bindings::trace_event_file,
) {
    // SAFETY: `file` is live; attached enable triggers have their
    // `Target`.
    let found = unsafe {
        tracefs::triggers(held, file)
            .find(|&d| is_enable(d) && target(d).target.file() == target_file)
    };
    if let Some(data) = found {
        // SAFETY: `data` is an enable trigger on `file`.
        unsafe { unregister_one(held, file, data) };
    }
}

/// `unreg()`: removes the trigger of `file` that acts on what `data`
/// acts on.
///
/// # Safety
///
/// Called by the tracing core only: `data` describes a trigger of one of
/// this module's enable or disable commands and `file` is live, with
/// `event_mutex` held.
unsafe extern "C" fn unreg(
    _glob: *mut c_char,
    data: *mut bindings::event_trigger_data,
    file: *mut bindings::trace_event_file,
) {
    // SAFETY: the lock is held for the whole call (our contract).
    let held = unsafe { EventMutexHeld::assume() };
    // SAFETY: the tracing core passes a set up enable trigger and a live
    // file.
    unsafe { remove_matching(held, file, target(data).target.file()) };
}

/// `unreg_all()`: removes every enable trigger of `file` (the trigger
/// file was opened with O_TRUNC).
///
/// # Safety
///
/// Called by the tracing core only, for the live `file`, with
/// `event_mutex` held.
unsafe extern "C" fn unreg_all(file: *mut bindings::trace_event_file) {
    // SAFETY: the lock is held for the whole call (our contract).
    let held = unsafe { EventMutexHeld::assume() };
    // SAFETY: `file` is live; the triggers on its list are live, and
    // `unregister_one()` takes each enable trigger off it.
    unsafe {
        remove_each(
            held,
            file,
            |d| is_enable(d),
            |d| unregister_one(held, file, d),
        );
    }
}

/// `trigger()`: continues or pauses the target's rhist triggers. Runs on
/// the event path: no allocation, lock or sleep.
///
/// # Safety
///
/// Called by the tracing core only, from a probe, for a live trigger of
/// one of this module's enable or disable commands.
unsafe extern "C" fn on_event(
    data: *mut bindings::event_trigger_data,
    _buffer: *mut bindings::trace_buffer,
    _rec: *mut c_void,
    _rbe: *mut bindings::ring_buffer_event,
) {
    // SAFETY: the tracing core calls this only for attached enable
    // triggers, freed only after the probes that can see them finished.
    let target = unsafe { target(data) };
    let paused = !target.enable;
    // SAFETY: the target file is referenced by the trigger; this is an
    // RCU-sched reader of its list, as every probe is, and rhist triggers
    // are freed only after such readers finish.
    for test in unsafe { tracefs::triggers_rcu(target.target.file()) } {
        // SAFETY: as above; `paused` is a plain flag the tracing core
        // reads on each event, written here as hist's does.
        unsafe {
            if is_ours(test) {
                ptr::write_volatile(ptr::addr_of_mut!((*test).paused), paused);
            }
        }
    }
}

/// `count_func()`: lets a counted trigger fire `count` times.
///
/// # Safety
///
/// Called by the tracing core only, from a probe, for a live trigger of
/// one of this module's enable or disable commands.
unsafe extern "C" fn count(
    data: *mut bindings::event_trigger_data,
    _buffer: *mut bindings::trace_buffer,
    _rec: *mut c_void,
    _rbe: *mut bindings::ring_buffer_event,
) -> bool {
    // SAFETY: `data` is an attached trigger. The count is read and
    // written racily across CPUs, as C's `event_trigger_count()` does; a
    // lost decrement lets the trigger fire once more, as it does there.
    unsafe {
        let count = ptr::addr_of_mut!((*data).count);
        let left = ptr::read_volatile(count);
        if left == 0 {
            return false;
        }
        if left != !0 {
            ptr::write_volatile(count, left - 1);
        }
    }
    true
}

/// `print()`: `enable_rhist:<system>:<event>:unlimited|count=N[ if
/// <filter>]`, as `event_enable_trigger_print()` shows enable_hist's.
///
/// # Safety
///
/// Called by the tracing core only: `m` is the trigger file being shown
/// and `data` a live trigger of one of this module's enable or disable
/// commands on it, with `event_mutex` held.
unsafe extern "C" fn print(
    m: *mut bindings::seq_file,
    data: *mut bindings::event_trigger_data,
) -> c_int {
    // SAFETY: the lock is held for the whole call (our contract).
    let _held = unsafe { EventMutexHeld::assume() };
    // SAFETY: `m` is being shown.
    let mut out = unsafe { SeqWriter::new(m) };
    // SAFETY: `data` is an attached enable trigger; the lock (`_held`)
    // keeps it, its filter string and the target event as they are.
    let (target, count, filter) =
        unsafe { (target(data), (*data).count, c_bytes((*data).filter_str)) };
    // SAFETY: as above; the target is pinned.
    let (system, event) = unsafe { tracefs::event_names(target.target.file()) };
    let name = if target.enable {
        crate::names::NAMES.enable
    } else {
        crate::names::NAMES.disable
    };
    for part in [name.to_bytes(), b":", system, b":", event] {
        out.bytes(part);
    }
    if count == !0 {
        out.bytes(b":unlimited");
    } else {
        let _ = core::fmt::Write::write_fmt(&mut out, format_args!(":count={}", count as i64));
    }
    if let Some(filter) = filter {
        out.bytes(b" if ");
        out.bytes(filter);
    }
    out.bytes(b"\n");
    0
}

/// `free()`: [`put()`], for the tracing core when it clears the triggers
/// of an instance being removed.
///
/// # Safety
///
/// Called by the tracing core only, for a live trigger of one of this
/// module's enable or disable commands that it has unlinked, with
/// `event_mutex` held.
unsafe extern "C" fn free(data: *mut bindings::event_trigger_data) {
    // SAFETY: the lock is held for the whole call (our contract).
    let held = unsafe { EventMutexHeld::assume() };
    // SAFETY: our contract.
    unsafe { put(held, data) };
}

/// Drops a reference on `data`; with the last one it takes the target
/// out of soft mode and frees the trigger.
///
/// # Safety
///
/// `data` must be a live trigger of one of this module's enable or
/// disable commands, off its list if this is its last reference.
unsafe fn put(held: EventMutexHeld<'_>, data: *mut bindings::event_trigger_data) {
    // SAFETY: `data` is live; its count changes only with the lock held
    // (`held`).
    let refs = unsafe { &mut (*data).ref_ };
    if *refs <= 0 {
        pr_warn!("unbalanced enable trigger reference\n");
        return;
    }
    *refs -= 1;
    if *refs > 0 {
        return;
    }
    REGISTRY.remove(held, data);
    // SAFETY: `data` is live; its private data is null or the `Target`
    // that `attach()` leaked into it.
    let owned = unsafe { (*data).private_data.cast::<Target>() };
    if !owned.is_null() {
        // SAFETY: the target is pinned and live; this undoes the soft
        // mode `attach()` set.
        unsafe { tracefs::soft_mode_put(held, (*owned).target.file()) };
    }
    // SAFETY: the last reference is gone and `data` is on no list; this
    // clears its filter, waits for running probes and frees it.
    unsafe { bindings::trigger_data_free(data) };
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
    pub(crate) fn new() -> Result<Self> {
        Ok(Registration {
            _enable: ENABLE.register()?,
            _disable: DISABLE.register()?,
            // SAFETY: dropped after both commands (the fields' order).
            _attached: unsafe { Attached::new() },
        })
    }
}

/// Both commands, as the scaffold they share with `rhist` sees them (one
/// registry for the two).
struct Enable;

impl Command for Enable {
    const REGISTRY: &'static Registry = &REGISTRY;

    /// Handles `[!](enable|disable)_rhist:<param> [if <filter>]`.
    unsafe fn parse(held: EventMutexHeld<'_>, write: TriggerWrite<'_>) -> c_int {
        // SAFETY: `write.file` is live and `write.cmd_ops` one of our
        // commands (our contract).
        match unsafe { create_or_remove(held, write) } {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// Attaches `data` to `file`, unless a trigger of either command
    /// there acts on the same event (`EEXIST`).
    unsafe fn register(
        held: EventMutexHeld<'_>,
        data: *mut bindings::event_trigger_data,
        file: *mut bindings::trace_event_file,
    ) -> c_int {
        // SAFETY: `data` is an enable trigger set up by `attach()`, with its
        // `Target`; `file` is live.
        let taken = unsafe {
            let target_file = target(data).target.file();
            tracefs::triggers(held, file)
                .any(|d| is_enable(d) && target(d).target.file() == target_file)
        };
        if taken {
            return code::EEXIST.to_errno();
        }
        // SAFETY: `data` is a live enable trigger set up for the live `file`,
        // on no list; `create_or_remove()` reserved its slot in `REGISTRY`
        // and holds a reference until it returns; `put()` drops one.
        unsafe { list_and_enable(held, file, data, ListEnd::Head, &REGISTRY, put) }
    }

    unsafe fn remove_all(held: EventMutexHeld<'_>, triggers: &[*mut bindings::event_trigger_data]) {
        for &data in triggers {
            // SAFETY: each trigger is live, on the list of the file it
            // pins (our contract). `put()` finds it gone from the registry
            // already.
            unsafe { unregister_one(held, target(data).on.file(), data) };
        }
    }
}
