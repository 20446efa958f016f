// SPDX-License-Identifier: GPL-2.0

//! What the trigger commands of this module share (`rhist`, and
//! `enable_rhist` with `disable_rhist`): the command the tracing core
//! links into its list and calls, the list of the triggers a command
//! attached (so that unloading can remove them: the tracing core does not
//! know that a command can go away), and the events those triggers pin.

use core::cell::UnsafeCell;
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use kernel::ffi::{c_char, c_int, c_void};

use kernel::alloc::{flags::GFP_KERNEL, AllocError};
use kernel::bindings;
use kernel::build_error;
use kernel::error::{Error, VTABLE_DEFAULT_ERROR};
use kernel::prelude::*;
use kernel::str::CStr;

use crate::event::RingEvent;
use crate::kernel_ext::seq_file::SeqFile;
use crate::tracefs::{EventMutexGuard, EventMutexHeld};
use crate::tracing::{EventFile, ListEnd, TriggerData};

/// A trigger command of this module, linked into the tracing core's list
/// of commands while [`Registered`].
pub(crate) struct TriggerCommand(UnsafeCell<bindings::event_command>);

// SAFETY: shared access from Rust only reads `name` (in `register()`),
// which nothing writes after the command is made; the tracing core writes
// the command's `list` node only under its `trigger_cmd_mutex`, and reads
// the rest. This module never writes to it.
unsafe impl Sync for TriggerCommand {}

impl TriggerCommand {
    /// The command `name`, whose callbacks are those of `C`: each an
    /// adapter below that calls `C`'s method; `count_func()` only if `C`
    /// has one, and `trigger()` [`Command::OWN_TRIGGER`] if `C` has no
    /// [`Command::trigger`]. A filter is set by the tracing core's
    /// `set_trigger_filter()`, and `init()` takes a reference
    /// ([`take_ref`]). No trigger type: those of the tracing core's own
    /// commands are theirs alone.
    pub(crate) const fn new<C: Command>(name: &'static core::ffi::CStr) -> Self {
        // `data_ops_trigger()` calls `trigger()` without a check.
        assert!(
            C::HAS_TRIGGER || C::OWN_TRIGGER.is_some(),
            "a command needs a trigger()"
        );
        TriggerCommand(UnsafeCell::new(bindings::event_command {
            list: bindings::list_head {
                next: ptr::null_mut(),
                prev: ptr::null_mut(),
            },
            name: name.as_ptr().cast::<c_char>().cast_mut(),
            trigger_type: bindings::event_trigger_type_ETT_NONE,
            flags: C::FLAGS,
            parse: Some(parse::<C>),
            reg: Some(reg::<C>),
            unreg: Some(unreg::<C>),
            unreg_all: Some(unreg_all::<C>),
            set_filter: Some(bindings::set_trigger_filter),
            trigger: if C::HAS_TRIGGER {
                Some(trigger::<C>)
            } else {
                C::OWN_TRIGGER
            },
            count_func: if C::HAS_COUNT { Some(count::<C>) } else { None },
            init: Some(take_ref),
            free: Some(free::<C>),
            print: Some(print::<C>),
        }))
    }

    /// The command, as the tracing core knows it.
    pub(crate) fn as_ptr(&self) -> *mut bindings::event_command {
        self.0.get()
    }

    /// Whether `data` is a trigger of this command.
    pub(crate) fn owns(&self, data: &TriggerData) -> bool {
        data.cmd_ops() == self.as_ptr()
    }

    /// Links the command into the tracing core's list, until the result
    /// is dropped.
    pub(crate) fn register(&'static self) -> Result<Registered> {
        // SAFETY: the command is static and fully initialised.
        let ret = unsafe { bindings::register_event_command(self.as_ptr()) };
        if ret != 0 {
            // SAFETY: a static, NUL-terminated name.
            let name = unsafe { CStr::from_char_ptr((*self.as_ptr()).name) };
            pr_err!(
                "cannot register the trigger command '{}' (error {ret}): is another one loaded?\n",
                name.to_str().unwrap_or("?")
            );
            return Err(Error::from_errno(ret));
        }
        Ok(Registered(self))
    }
}

/// A command in the tracing core's list; unlinked when dropped. Once it
/// is, no `parse()` or `unreg_all()` of the command runs or can start:
/// the tracing core reaches them only through its list, under the lock
/// that unlinking takes. The command's triggers stay attached.
pub(crate) struct Registered(&'static TriggerCommand);

impl Drop for Registered {
    fn drop(&mut self) {
        // SAFETY: linked by `register()`, once.
        unsafe { bindings::unregister_event_command(self.0.as_ptr()) };
    }
}

/// A trigger command of this module: the callbacks of its
/// `event_command` ([`TriggerCommand::new`]), and the removal of its
/// triggers at unload ([`Attached`]). Each callback but
/// [`Command::OWN_TRIGGER`] is an adapter of this file, which takes the
/// tracing core's pointers to the typed arguments of the method it
/// calls: only [`Command::register`] and [`Command::remove_all`], which
/// this module calls itself, ask more of their caller than their
/// arguments' types show.
///
/// # Safety
///
/// The module's unloading ([`Attached`]) removes what an implementation
/// leaves attached only through [`Command::REGISTRY`], so an
/// implementation must keep it exact:
///
/// - every trigger of the command on an event file's list is in the
///   registry ([`list_and_enable()`] puts it there), and every trigger in
///   the registry is on its file's list, holding the list's reference;
/// - a trigger leaves the registry ([`Registry::remove`]) only as it is
///   taken off its list or freed, never while it is listed;
/// - [`Command::free`] drops exactly the reference handed over with the
///   [`Unlinked`] trigger, and [`Command::remove_all`] takes each trigger
///   it is given off its list and drops the list's reference;
/// - [`Command::trigger`] and [`Command::count`] run as the event path
///   does: they must not sleep, which would end the RCU read-side
///   critical section that keeps their [`Fired`] live (nothing in the
///   types stops a call of a sleeping safe function there).
#[vtable]
pub(crate) unsafe trait Command: Sized {
    /// The triggers the command attached.
    const REGISTRY: &'static Registry;

    /// The command's `EVENT_CMD_FL_*` flags.
    const FLAGS: c_int = 0;

    /// Carries out `write`, a write of this command. Returns 0 or a
    /// negative errno.
    fn parse(held: EventMutexHeld<'_>, write: TriggerWrite<'_>) -> c_int;

    /// Attaches `data` to `file`, or says why not (a negative errno).
    ///
    /// # Safety
    ///
    /// `data` must be a trigger of this command, set up by its `parse()`
    /// for `file`, on no list, with a slot reserved in
    /// [`Command::REGISTRY`]; the caller must hold a reference of its own.
    unsafe fn register(held: EventMutexHeld<'_>, data: &TriggerData, file: &EventFile) -> c_int;

    /// `unreg()`: removes the trigger of `file` that `data`, a trigger
    /// that `parse()` set up, describes.
    fn unreg(held: EventMutexHeld<'_>, data: &TriggerData, file: &EventFile);

    /// `unreg_all()`: removes every trigger of this command from `file`
    /// (its trigger file was opened with O_TRUNC).
    fn unreg_all(held: EventMutexHeld<'_>, file: &EventFile);

    /// The `trigger()` of a command whose probe is its own function, in
    /// place of [`Command::trigger`] in an adapter: rhist's, whose
    /// out-of-line paths that adapter would make callable from other
    /// crates, with an `endbr64` each (see `probe::on_event()`).
    const OWN_TRIGGER: Option<TriggerFn> = None;

    /// `trigger()`: what the trigger does for the event being traced.
    /// Runs on the event path: no allocation, no sleep (see the trait's
    /// `# Safety`), no sleeping lock.
    fn trigger(_fired: Fired<'_, Self>) {
        build_error(VTABLE_DEFAULT_ERROR)
    }

    /// `count_func()`: whether a counted trigger fires this time, counting
    /// it down.
    fn count(_fired: Fired<'_, Self>) -> bool {
        build_error(VTABLE_DEFAULT_ERROR)
    }

    /// `print()`: shows `data`, a trigger of this command, in its event's
    /// trigger file.
    fn print(held: EventMutexHeld<'_>, out: &mut SeqFile, data: &TriggerData);

    /// `free()`: drops the reference the tracing core hands over with a
    /// trigger it took off its list.
    fn free(held: EventMutexHeld<'_>, unlinked: Unlinked<'_, Self>);

    /// Takes `triggers` off their files' lists and drops the lists'
    /// references.
    ///
    /// # Safety
    ///
    /// The command must be unregistered, and `triggers` every trigger
    /// taken out of [`Command::REGISTRY`]: each on the list of its file,
    /// holding the list's reference. The task must hold no lock but
    /// `event_mutex`.
    unsafe fn remove_all(held: EventMutexHeld<'_>, triggers: &[NonNull<TriggerData>]);
}

/// A command's `trigger()` callback, as the tracing core calls it.
pub(crate) type TriggerFn = unsafe extern "C" fn(
    *mut bindings::event_trigger_data,
    *mut bindings::trace_buffer,
    *mut c_void,
    *mut bindings::ring_buffer_event,
);

/// A write of `[!]<command>:<text>` to an event's trigger file.
#[derive(Clone, Copy)]
pub(crate) struct TriggerWrite<'a> {
    /// The command written.
    pub(crate) cmd_ops: *mut bindings::event_command,
    /// The event file whose trigger file was written.
    pub(crate) file: &'a EventFile,
    /// What followed `<command>:`; `None` when nothing did.
    pub(crate) text: Option<&'a [u8]>,
    /// Whether the write started with `!`.
    pub(crate) remove: bool,
}

/// `parse()` of every command: [`Command::parse`].
///
/// # Safety
///
/// Called by the tracing core only, for a write to the live `file`'s
/// trigger file, with `event_mutex` held: `cmd_ops` is command `C`,
/// `glob` and `param_and_filter` NUL-terminated strings or null.
unsafe extern "C" fn parse<C: Command>(
    cmd_ops: *mut bindings::event_command,
    file: *mut bindings::trace_event_file,
    glob: *mut c_char,
    _cmd: *mut c_char,
    param_and_filter: *mut c_char,
) -> c_int {
    // SAFETY: the tracing core calls `parse()` from
    // `trigger_process_regex()` (which holds `trigger_cmd_mutex`), whose
    // caller `event_trigger_regex_write()` holds `event_mutex` throughout;
    // its `file` is the event file whose trigger file is written, found
    // under that lock with `event_file_file()`, not marked freed, so on
    // its instance's list and live for the call. (The boot-time callers,
    // `trace_boot` and the `trace_trigger=` option, run before a module can
    // register a command.) the command's arguments are NUL-terminated strings,
    // or null, that live for the call.
    let (held, file, glob, text) = unsafe {
        (
            EventMutexHeld::assume(),
            EventFile::from_raw(file),
            c_bytes(glob).unwrap_or(b""),
            c_bytes(param_and_filter),
        )
    };
    let write = TriggerWrite {
        cmd_ops,
        file,
        text,
        remove: glob.first() == Some(&b'!'),
    };
    C::parse(held, write)
}

/// `reg()` of every command: [`Command::register`]. The 6.12 tracing core
/// calls `cmd_ops->reg()` only from `event_trigger_register()`, which
/// only its own commands' `parse()`s use: this module's call
/// [`Command::register`] directly, so this is never called today. It is
/// installed so that a core helper handed one of these triggers would
/// attach it as this module does.
///
/// # Safety
///
/// As for [`Command::register`], with `event_mutex` held.
unsafe extern "C" fn reg<C: Command>(
    _glob: *mut c_char,
    data: *mut bindings::event_trigger_data,
    file: *mut bindings::trace_event_file,
) -> c_int {
    // SAFETY: the tracing core calls `reg()` only from
    // `event_trigger_register()`, from a command's `parse()`, under
    // `event_mutex` (see `parse()` above), for a trigger that `parse()` set
    // up for the file it was given, both live for the call, as
    // `Command::register()` needs (this function's contract).
    unsafe {
        C::register(
            EventMutexHeld::assume(),
            TriggerData::from_raw(data),
            EventFile::from_raw(file),
        )
    }
}

/// `unreg()` of every command: [`Command::unreg`].
///
/// # Safety
///
/// Called by the tracing core only, from `event_trigger_unregister()`,
/// for command `C`.
unsafe extern "C" fn unreg<C: Command>(
    _glob: *mut c_char,
    data: *mut bindings::event_trigger_data,
    file: *mut bindings::trace_event_file,
) {
    // SAFETY: the tracing core calls a command's `unreg()` only from
    // `event_trigger_unregister()`, which only that command's `parse()`
    // calls (this module's never do), from `trigger_process_regex()`: with
    // `event_mutex` held for the call, the trigger `parse()` set up, which
    // it holds a reference on, and the event file written, found under
    // the lock and not marked freed: both live for the call.
    let (held, data, file) = unsafe {
        (
            EventMutexHeld::assume(),
            TriggerData::from_raw(data),
            EventFile::from_raw(file),
        )
    };
    C::unreg(held, data, file);
}

/// `unreg_all()` of every command: [`Command::unreg_all`].
///
/// # Safety
///
/// Called by the tracing core only, from `event_trigger_regex_open()`.
unsafe extern "C" fn unreg_all<C: Command>(file: *mut bindings::trace_event_file) {
    // SAFETY: the tracing core calls `unreg_all()` only from
    // `event_trigger_regex_open()`, as it opens a trigger file with
    // O_TRUNC: it holds `event_mutex` for the call, and `file` is the event
    // file it found under the lock with `event_file_file()`, not marked
    // freed, so live while the lock is held.
    let (held, file) = unsafe { (EventMutexHeld::assume(), EventFile::from_raw(file)) };
    C::unreg_all(held, file);
}

/// A trigger of command `C` firing for the event being traced, with what
/// the tracing core passes it: the ring buffer, and the record and its
/// ring buffer event (null when it passes none). What [`Command::trigger`]
/// and [`Command::count`] are given.
///
/// # Invariants
///
/// For `'a` this task is an RCU reader that `synchronize_rcu()` waits
/// for: most often a tracepoint handler under `rcu_read_lock_sched()`;
/// a uprobe event's soft-disabled call runs under `rcu_read_lock()` (and
/// passes no record), a `trace_marker` write with its ring buffer event
/// reserved, preemption disabled. When `rec` is not null, preemption is
/// disabled: the event's ring buffer reservation disables it until the
/// commit, after the triggers. `data` is a trigger of a command whose callbacks are `C`'s,
/// which the tracing core found on the list of the event being traced,
/// live for `'a`; `rec`, if not null, is that event's record, and `rbe`,
/// if not null, its ring buffer event, both live for `'a`.
pub(crate) struct Fired<'a, C> {
    data: &'a TriggerData,
    buffer: *mut bindings::trace_buffer,
    rec: *mut c_void,
    rbe: *mut bindings::ring_buffer_event,
    _command: PhantomData<C>,
}

impl<'a, C> Fired<'a, C> {
    /// The trigger, event and record of a call of `trigger()` or
    /// `count_func()`, for the call.
    ///
    /// # Safety
    ///
    /// The arguments must be those of a call that the tracing core makes
    /// from `data_ops_trigger()` to the `trigger()` or `count_func()` of a
    /// command whose callbacks are `C`'s, and `'a` must end before the call
    /// returns. `data_ops_trigger()` calls them through `data->cmd_ops`, so
    /// for a trigger of that command, which `event_triggers_call()` or
    /// `event_triggers_post_call()` found on the list of the event being
    /// traced, by an RCU reader (see the type's invariants) until the call
    /// returns; it passes the event's record and ring buffer event, or
    /// nulls.
    #[inline(always)]
    pub(crate) unsafe fn from_raw(
        data: *mut bindings::event_trigger_data,
        buffer: *mut bindings::trace_buffer,
        rec: *mut c_void,
        rbe: *mut bindings::ring_buffer_event,
    ) -> Self {
        // SAFETY: a trigger is freed (`trigger_data_free()`) only after
        // `tracepoint_synchronize_unregister()`, whose `synchronize_rcu()`
        // waits for the RCU reader making this call (the caller's
        // promise): `data` is live for `'a`.
        let data = unsafe { TriggerData::from_raw(data) };
        // INVARIANT: the caller's promise, and `data` live for `'a`.
        Fired {
            data,
            buffer,
            rec,
            rbe,
            _command: PhantomData,
        }
    }

    /// The trigger firing.
    #[inline(always)]
    pub(crate) fn data(&self) -> &'a TriggerData {
        self.data
    }

    /// The record of the event being traced, or null: live for `'a`.
    #[inline(always)]
    pub(crate) fn rec(&self) -> *mut c_void {
        self.rec
    }

    /// The ring buffer event of [`rec()`](Self::rec), in its ring buffer,
    /// if the tracing core passed one.
    #[inline(always)]
    pub(crate) fn ring_event(&self) -> Option<RingEvent<'a>> {
        let rbe = NonNull::new(self.rbe)?;
        // SAFETY: a ring buffer event passed is the event being traced's,
        // in `buffer`, both live for `'a` (invariant).
        Some(unsafe { RingEvent::new(self.buffer, rbe) })
    }

    /// The triggers on `file`'s list, as C's `list_for_each_entry_rcu()`
    /// reads them.
    #[inline(always)]
    pub(crate) fn triggers_of<'b>(
        &'b self,
        file: &'b EventFile,
    ) -> impl Iterator<Item = &'b TriggerData> + 'b {
        // SAFETY: this task is an RCU reader for `'a` (invariant),
        // which outlives `'b`, the borrow of the iterator and of the
        // triggers it yields.
        unsafe { file.triggers_rcu() }
    }
}

/// `trigger()` of every command that has [`Command::trigger`].
///
/// # Safety
///
/// Called by the tracing core only, as `C`'s `trigger()`.
unsafe extern "C" fn trigger<C: Command>(
    data: *mut bindings::event_trigger_data,
    buffer: *mut bindings::trace_buffer,
    rec: *mut c_void,
    rbe: *mut bindings::ring_buffer_event,
) {
    // SAFETY: this is the `trigger()` of `C`'s commands
    // (`TriggerCommand::new()`), which only the tracing core calls, from
    // `data_ops_trigger()`: what `Fired::from_raw()` requires, for this
    // call.
    C::trigger(unsafe { Fired::from_raw(data, buffer, rec, rbe) });
}

/// `count_func()` of every command that has [`Command::count`].
///
/// # Safety
///
/// Called by the tracing core only, as `C`'s `count_func()`.
unsafe extern "C" fn count<C: Command>(
    data: *mut bindings::event_trigger_data,
    buffer: *mut bindings::trace_buffer,
    rec: *mut c_void,
    rbe: *mut bindings::ring_buffer_event,
) -> bool {
    // SAFETY: this is the `count_func()` of `C`'s commands
    // (`TriggerCommand::new()`), which only the tracing core calls, from
    // `data_ops_trigger()`: what `Fired::from_raw()` requires, for this
    // call.
    C::count(unsafe { Fired::from_raw(data, buffer, rec, rbe) })
}

/// `print()` of every command: [`Command::print`].
///
/// # Safety
///
/// Called by the tracing core only, from `trigger_show()`.
unsafe extern "C" fn print<C: Command>(
    m: *mut bindings::seq_file,
    data: *mut bindings::event_trigger_data,
) -> c_int {
    // SAFETY: the tracing core calls `print()` only from `trigger_show()`,
    // the show of a trigger file's seq_file, which `seq_read_iter()` calls
    // with the seq_file's lock held, between `trigger_start()`, which takes
    // `event_mutex`, and `trigger_stop()`, which releases it: the lock is
    // held for the call, and keeps `data`, on the list being shown, live;
    // `m` is the seq_file being shown, used by no one else meanwhile.
    let (held, out, data) = unsafe {
        (
            EventMutexHeld::assume(),
            SeqFile::from_raw(m),
            TriggerData::from_raw(data),
        )
    };
    C::print(held, out, data);
    0
}

/// A trigger of command `C` that the tracing core took off its event's
/// list, handed to the command's `free()` with the list's reference.
///
/// # Invariants
///
/// `data` is a trigger of a command whose callbacks are `C`'s, on no list,
/// live for `'a` until the holder drops the list's reference on it, which
/// it owns (that may free it: `data` is not used after); the tracing core
/// does not use the trigger after `free()` returns.
pub(crate) struct Unlinked<'a, C> {
    data: &'a TriggerData,
    _command: PhantomData<C>,
}

impl<'a, C> Unlinked<'a, C> {
    /// The trigger.
    pub(crate) fn data(&self) -> &'a TriggerData {
        self.data
    }
}

/// `free()` of every command: [`Command::free`].
///
/// # Safety
///
/// Called by the tracing core only, from `clear_event_triggers()`.
unsafe extern "C" fn free<C: Command>(data: *mut bindings::event_trigger_data) {
    // SAFETY: the tracing core calls the `free()` of this module's
    // commands only from `clear_event_triggers()` (its other calls are in
    // its own commands' `unreg()`s), which its callers call with
    // `event_mutex` held: held for the call. It calls it through
    // `data->cmd_ops`, so for a trigger of `C`'s command, live until the
    // list's reference, which it hands over, is dropped, and just taken
    // off its list with `list_del_rcu()`; it does not use it after.
    let (held, data) = unsafe { (EventMutexHeld::assume(), TriggerData::from_raw(data)) };
    // INVARIANT: a trigger of `C`'s command (found through `cmd_ops`),
    // off its list, with the list's reference handed over, not used by
    // the tracing core after this call.
    C::free(
        held,
        Unlinked {
            data,
            _command: PhantomData,
        },
    );
}

/// The triggers command `C` attached: removed when dropped, which must
/// be after the command is unregistered.
pub(crate) struct Attached<C: Command>(PhantomData<C>);

impl<C: Command> Attached<C> {
    /// # Safety
    ///
    /// The value must be dropped only once `C` is unregistered, so that
    /// no trigger of it can be attached any more.
    pub(crate) unsafe fn new() -> Self {
        Attached(PhantomData)
    }
}

impl<C: Command> Drop for Attached<C> {
    fn drop(&mut self) {
        let guard = EventMutexGuard::lock();
        let held = guard.held();
        let triggers = C::REGISTRY.take_all(held);
        // SAFETY: the command is unregistered (`new()`'s contract), and
        // registered triggers are live, on their file's list, with the
        // list's reference (`list_and_enable()`). A drop holds no lock of
        // its caller's (module exit, or init's failure), only the guard.
        unsafe { C::remove_all(held, &triggers) };
    }
}

/// `init()` of every command: takes a reference on `data`. The 6.12
/// tracing core calls `cmd_ops->init()` only from its own commands'
/// registration (`register_trigger()`, `event_enable_register_trigger()`,
/// hist's), never for this module's, which count their references
/// themselves ([`list_and_enable()`]); installed as [`reg`] is.
///
/// # Safety
///
/// Called by the tracing core only (`register_trigger()` and the like),
/// for a live trigger of one of this module's commands, with
/// `event_mutex` held.
unsafe extern "C" fn take_ref(data: *mut bindings::event_trigger_data) -> c_int {
    // SAFETY: the tracing core calls `init()` as it registers a trigger,
    // with `event_mutex` held for the call, and the trigger live for it
    // (this function's contract).
    let (held, data) = unsafe { (EventMutexHeld::assume(), TriggerData::from_raw(data)) };
    data.get_ref(held);
    0
}

/// What every command's `reg()` does once it has decided to attach: puts
/// `data` on `file`'s list at `end`, with a reference of the list's own,
/// enables the event for it and keeps it in `registry`. If the event
/// cannot be enabled, it undoes the rest, `put` dropping the list's
/// reference, and returns the error.
///
/// # Safety
///
/// `data` must be a trigger of the command `registry` and `put` belong
/// to, set up for `file`, on no list, with a slot reserved in `registry`;
/// given a count only if the command has [`Command::count`].
/// The caller must hold a reference of its own, and `put` must drop one
/// reference, as the command's `free()` does, freeing the trigger with
/// the last.
pub(crate) unsafe fn list_and_enable(
    held: EventMutexHeld<'_>,
    file: &EventFile,
    data: &TriggerData,
    end: ListEnd,
    registry: &Registry,
    put: unsafe fn(EventMutexHeld<'_>, &TriggerData),
) -> c_int {
    // The list's reference, dropped when the trigger is taken off it.
    data.get_ref(held);
    // SAFETY: `data` is set up for `file`, on no list, counted only if its
    // command has a `count_func()` (the caller's promise; every command
    // has a `trigger()`: `TriggerCommand::new()` asserts it), and stays
    // live while listed: the list holds a reference.
    unsafe { file.add_trigger(held, data, end) };
    file.update_cond_flag(held);
    let ret = file.trigger_mode_get(held);
    if ret < 0 {
        // SAFETY: `data` was put on `file`'s list above.
        unsafe { data.unlink(held) };
        file.update_cond_flag(held);
        // SAFETY: drops the list's reference taken above; the caller
        // holds its own, so `put` does not free `data`.
        unsafe { put(held, data) };
        return ret;
    }
    // Cannot fail: the caller reserved the slot.
    // SAFETY: `data` is on `file`'s list now, with the list's reference,
    // until its command's removal, whose last `put` takes it out of
    // `registry` before freeing it.
    let _ = unsafe { registry.push(held, data) };
    0
}

/// `unreg_all()`'s loop: removes with `remove` each trigger of `file`
/// that `ours` picks, until none is left. The next is looked up afresh
/// once `remove` has returned: it may free other triggers. `remove` must
/// take the trigger it is given off `file`'s list, or this never ends.
pub(crate) fn remove_each<'a>(
    held: EventMutexHeld<'a>,
    file: &'a EventFile,
    ours: impl Fn(&TriggerData) -> bool,
    mut remove: impl FnMut(&'a TriggerData),
) {
    loop {
        let Some(data) = file.triggers(held).find(|d| ours(d)) else {
            return;
        };
        remove(data);
    }
}

/// The triggers a command attached, guarded by `event_mutex`: each method
/// takes an [`EventMutexHeld`].
///
/// # Invariants
///
/// The vector is accessed only with `event_mutex` held, and no reference
/// to it outlives the method call that made it. Each trigger in it is
/// live until it is taken out. With a [`Command`]'s implementation
/// keeping its part (see its `# Safety`), the registry holds every
/// trigger of its command that is on an event file's list, and only
/// those.
pub(crate) struct Registry(UnsafeCell<KVec<NonNull<TriggerData>>>);

// SAFETY: every access is serialised by the lock each method is shown
// to be held (invariant).
unsafe impl Sync for Registry {}

impl Registry {
    /// An empty registry.
    pub(crate) const fn new() -> Self {
        // INVARIANT: accessed only through the methods below.
        Registry(UnsafeCell::new(KVec::new()))
    }

    /// Runs `f` on the vector. `f` must not use the registry: the
    /// methods below pass closures that only use the vector.
    fn with<R>(
        &self,
        _held: EventMutexHeld<'_>,
        f: impl FnOnce(&mut KVec<NonNull<TriggerData>>) -> R,
    ) -> R {
        // SAFETY: the lock is held (`_held`), so no other task uses the
        // vector; no other reference to it lives in this task (invariant),
        // as `f` does not use the registry, and this one ends when `f`
        // returns.
        f(unsafe { &mut *self.0.get() })
    }

    /// Makes room for `additional` more triggers.
    pub(crate) fn reserve(
        &self,
        held: EventMutexHeld<'_>,
        additional: usize,
    ) -> Result<(), AllocError> {
        self.with(held, |list| list.reserve(additional, GFP_KERNEL))
    }

    /// Adds `data`.
    ///
    /// # Safety
    ///
    /// `data` must stay live until it is taken out of the registry again
    /// ([`remove`](Self::remove) or [`take_all`](Self::take_all)).
    pub(crate) unsafe fn push(
        &self,
        held: EventMutexHeld<'_>,
        data: &TriggerData,
    ) -> Result<(), AllocError> {
        // INVARIANT: `data` is live until taken out (the caller's promise).
        self.with(held, |list| list.push(NonNull::from(data), GFP_KERNEL))
    }

    /// Every trigger, taken out of the registry: the last step of a
    /// command, once it is unregistered.
    pub(crate) fn take_all(&self, held: EventMutexHeld<'_>) -> KVec<NonNull<TriggerData>> {
        self.with(held, core::mem::take)
    }

    /// Removes `data`, if it is there.
    pub(crate) fn remove(&self, held: EventMutexHeld<'_>, data: &TriggerData) {
        self.with(held, |list| {
            if let Some(at) = list.iter().position(|&d| ptr::eq(d.as_ptr(), data)) {
                let last = list.len() - 1;
                list.as_mut_slice().swap(at, last);
                // SAFETY: shrinking by one drops nothing (`NonNull`s).
                unsafe { list.set_len(last) };
            }
        });
    }

    /// The trigger at `at`, if there is one.
    fn get<'a>(&'a self, held: EventMutexHeld<'a>, at: usize) -> Option<&'a TriggerData> {
        let data = self.with(held, |list| list.get(at).copied())?;
        // SAFETY: a trigger in the registry is live until taken out
        // (invariant), which only a task holding the lock does: for `'a`,
        // unless this task does it.
        Some(unsafe { &*data.as_ptr() })
    }

    /// The triggers, in the registry's order. The registry is read
    /// afresh at each step: it may change between them.
    pub(crate) fn iter<'a>(
        &'a self,
        held: EventMutexHeld<'a>,
    ) -> impl Iterator<Item = &'a TriggerData> + 'a {
        (0..).map_while(move |at| self.get(held, at))
    }
}

/// Borrows a C string argument.
///
/// # Safety
///
/// `p` must be null or a NUL-terminated string valid for `'a`.
pub(crate) unsafe fn c_bytes<'a>(p: *const c_char) -> Option<&'a [u8]> {
    // SAFETY: `p` is not null, so it is a NUL-terminated string valid for
    // `'a` (the caller's promise).
    (!p.is_null()).then(|| unsafe { CStr::from_char_ptr(p) }.as_bytes())
}
