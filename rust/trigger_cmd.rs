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

use kernel::alloc::flags::GFP_KERNEL;
use kernel::bindings;
use kernel::build_error;
use kernel::error::{Error, VTABLE_DEFAULT_ERROR};
use kernel::prelude::*;

use crate::event::RingEvent;
use crate::kernel_ext::c_bytes;
use crate::kernel_ext::seq_file::SeqFile;
use crate::tracefs::{EventMutexGuard, EventMutexHeld, EventMutexScope};
use crate::tracing::{EventFile, ListEnd, Listed, NewTrigger, TriggerData, TriggerId, Unlisted};

/// A trigger command of this module, whose callbacks are `C`'s, linked
/// into the tracing core's list of commands while [`Attached`] holds it.
pub(crate) struct TriggerCommand<C> {
    command: UnsafeCell<bindings::event_command>,
    /// The name `command` points at, for this module's messages.
    name: &'static core::ffi::CStr,
    _callbacks: PhantomData<C>,
}

// SAFETY: this module never reads or writes the command's C struct after
// it is made, but through the tracing core, which writes its `list` node
// only under its `trigger_cmd_mutex`, and reads the rest; `name` is a
// shared static string.
unsafe impl<C> Sync for TriggerCommand<C> {}

impl<C> TriggerCommand<C> {
    /// The command, as the tracing core knows it.
    pub(crate) fn as_ptr(&self) -> *mut bindings::event_command {
        self.command.get()
    }
}

impl<C: Command> TriggerCommand<C> {
    /// The command `name`, whose callbacks are those of `C`: each an
    /// adapter below that calls `C`'s method; `count_func()` only if `C`
    /// has one, and `trigger()` [`Command::OWN_TRIGGER`] if `C` has no
    /// [`Command::trigger`]. A filter is set by the tracing core's
    /// `set_trigger_filter()`; `reg()` and `init()`, which only the
    /// tracing core's own commands use, fail. No trigger type: those of
    /// the tracing core's own commands are theirs alone.
    pub(crate) const fn new(name: &'static core::ffi::CStr) -> Self {
        // `data_ops_trigger()` calls `trigger()` without a check.
        assert!(
            C::HAS_TRIGGER || C::OWN_TRIGGER.is_some(),
            "a command needs a trigger()"
        );
        TriggerCommand {
            command: UnsafeCell::new(bindings::event_command {
                list: bindings::list_head {
                    next: ptr::null_mut(),
                    prev: ptr::null_mut(),
                },
                name: name.as_ptr().cast::<c_char>().cast_mut(),
                trigger_type: bindings::event_trigger_type_ETT_NONE,
                flags: C::FLAGS,
                parse: Some(parse::<C>),
                reg: Some(reg),
                unreg: Some(unreg::<C>),
                unreg_all: Some(unreg_all::<C>),
                set_filter: Some(bindings::set_trigger_filter),
                trigger: if C::HAS_TRIGGER {
                    Some(trigger::<C>)
                } else {
                    C::OWN_TRIGGER
                },
                count_func: if C::HAS_COUNT { Some(count::<C>) } else { None },
                init: Some(init),
                free: Some(free::<C>),
                print: Some(print::<C>),
            }),
            name,
            _callbacks: PhantomData,
        }
    }

    /// Whether `data` is a trigger of this command.
    pub(crate) fn owns(&self, data: &TriggerData) -> bool {
        data.cmd_ops() == self.as_ptr()
    }

    /// A new trigger of this command, whose private data, once set, is a
    /// `C::Private`: C's `trigger_data_alloc()`.
    pub(crate) fn new_trigger(&self) -> Result<NewTrigger<C::Private>> {
        // SAFETY: every trigger of this command is made here, so every one
        // has private data of type `C::Private`, or none.
        unsafe { NewTrigger::new(self.as_ptr()) }
    }

    /// The private data of `data`, if it is a trigger of this command that
    /// has some.
    pub(crate) fn private_of<'a>(&self, data: &'a TriggerData) -> Option<&'a C::Private> {
        if !self.owns(data) {
            return None;
        }
        let private = data.private_data().cast::<C::Private>();
        // SAFETY: a trigger of this command was made by `new_trigger()`, so
        // its private data is null or a `KBox<C::Private>` it owns, freed
        // with it (`NewTrigger`'s and `Unlisted`'s drop of it), not while
        // `data` is borrowed (invariant of `TriggerData`), and replaced
        // only through a `NewTrigger` borrowed `mut`.
        (!private.is_null()).then(|| unsafe { &*private })
    }

    /// Links the command into the tracing core's list, until the result
    /// is dropped.
    fn register(&'static self) -> Result<Registered<C>> {
        // SAFETY: the command is static and fully initialised.
        let ret = unsafe { bindings::register_event_command(self.as_ptr()) };
        if ret != 0 {
            pr_err!(
                "cannot register the trigger command '{}' (error {ret}): is another one loaded?\n",
                self.name.to_str().unwrap_or("?")
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
struct Registered<C: 'static>(&'static TriggerCommand<C>);

impl<C: 'static> Drop for Registered<C> {
    fn drop(&mut self) {
        // SAFETY: linked by `register()`, once.
        unsafe { bindings::unregister_event_command(self.0.as_ptr()) };
    }
}

/// A trigger command of this module: the callbacks of its
/// `event_command` ([`TriggerCommand::new`]), and the removal of its
/// triggers at unload ([`Attached`]). Each callback but
/// [`Command::OWN_TRIGGER`] is an adapter of this file, which takes the
/// tracing core's pointers to the typed arguments of the method it calls.
/// The callbacks that may remove triggers get the lock's hold
/// ([`EventMutexScope`]), which removing takes `mut`; the others a proof
/// that the lock is held.
///
/// # Safety
///
/// The module's unloading ([`Attached`]) removes what an implementation
/// leaves attached only through [`Command::REGISTRY`], so an
/// implementation must keep it exact: it lists its triggers only with
/// [`Registry::list`], and removes every [`Listed`] trigger it takes out
/// of it ([`Listed::unlink`], [`Unlisted::release`]), those given to
/// [`Command::remove_all`] included. [`Command::trigger`] and
/// [`Command::count`] run as the event path does: they must not sleep,
/// which would end the RCU read-side critical section that keeps their
/// [`Fired`] live (nothing in the types stops a call of a sleeping safe
/// function there).
#[vtable]
pub(crate) unsafe trait Command: Sized + 'static {
    /// What the command's triggers own: their private data.
    type Private: Send + 'static;

    /// The triggers the command attached.
    const REGISTRY: &'static Registry<Self::Private>;

    /// The command's `EVENT_CMD_FL_*` flags.
    const FLAGS: c_int = 0;

    /// Carries out `write`, a write of this command. Returns 0 or a
    /// negative errno.
    fn parse(scope: &mut EventMutexScope<'_>, write: TriggerWrite<'_>) -> c_int;

    /// `unreg()`: removes the trigger of `file` that `data`, a trigger
    /// that `parse()` set up, describes.
    fn unreg(scope: &mut EventMutexScope<'_>, data: &TriggerData, file: &EventFile);

    /// `unreg_all()`: removes every trigger of this command from `file`
    /// (its trigger file was opened with O_TRUNC).
    fn unreg_all(scope: &mut EventMutexScope<'_>, file: &EventFile);

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

    /// `free()`: releases a trigger the tracing core took off its list,
    /// with the list's reference, which it hands over.
    fn free(scope: &mut EventMutexScope<'_>, unlisted: Unlisted<Self::Private>);

    /// Removes `triggers`, every trigger taken out of
    /// [`Command::REGISTRY`] as the module unloads: each off its list,
    /// the list's reference released. The task holds no lock but
    /// `event_mutex`.
    fn remove_all(scope: &mut EventMutexScope<'_>, triggers: KVec<Listed<Self::Private>>);
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
    // or null, that live for the call. The scope is the call's only hold:
    // nothing a command's method calls makes the tracing core call one of
    // this module's callbacks back, and the lock is not dropped meanwhile.
    let (mut scope, file, glob, text) = unsafe {
        (
            EventMutexScope::assume(),
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
    C::parse(&mut scope, write)
}

/// `reg()` of every command. The 6.12 tracing core calls `cmd_ops->reg()`
/// only from `event_trigger_register()`, which only its own commands'
/// `parse()`s use: this module's attach their triggers themselves
/// ([`Registry::list`]), so this is never called. It is installed, as an
/// error, so that a core helper handed one of these commands would fail
/// rather than call a null function.
extern "C" fn reg(
    _glob: *mut c_char,
    _data: *mut bindings::event_trigger_data,
    _file: *mut bindings::trace_event_file,
) -> c_int {
    kernel::error::code::EINVAL.to_errno()
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
    // the lock and not marked freed: both live for the call. The scope is
    // the call's only hold (see `parse()`).
    let (mut scope, data, file) = unsafe {
        (
            EventMutexScope::assume(),
            TriggerData::from_raw(data),
            EventFile::from_raw(file),
        )
    };
    C::unreg(&mut scope, data, file);
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
    // freed, so live while the lock is held. The scope is the call's only
    // hold (see `parse()`).
    let (mut scope, file) = unsafe { (EventMutexScope::assume(), EventFile::from_raw(file)) };
    C::unreg_all(&mut scope, file);
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
    // `data->cmd_ops`, so for a trigger of `C`'s command, which it just
    // took off its list with `list_del_rcu()`, handing over the list's
    // reference, and does not use after. The scope is the call's only hold
    // (see `parse()`).
    let mut scope = unsafe { EventMutexScope::assume() };
    let Some(listed) = C::REGISTRY.take(&mut scope, TriggerId::of_raw(data)) else {
        pr_warn!("free() of a trigger not attached\n");
        return;
    };
    // SAFETY: the tracing core took the trigger off its list and handed
    // the list's reference over, as argued above.
    let unlisted = unsafe { listed.unlinked_by_core(&mut scope) };
    C::free(&mut scope, unlisted);
}

/// One or two commands whose callbacks are `C`'s, registered, and the
/// triggers they attached, all kept in `C`'s registry. Dropping it
/// unregisters the commands, after which none of their triggers can be
/// attached, then removes those attached. Only this type registers a
/// command, so no command of `C` is left registered once it is dropped.
pub(crate) struct Attached<C: Command> {
    commands: [Option<Registered<C>>; 2],
}

impl<C: Command> Attached<C> {
    /// Registers `first`, then `second` if given. If one fails, the
    /// commands registered are unregistered again, and whatever they
    /// attached meanwhile removed.
    pub(crate) fn register(
        first: &'static TriggerCommand<C>,
        second: Option<&'static TriggerCommand<C>>,
    ) -> Result<Self> {
        let mut attached = Attached {
            commands: [Some(first.register()?), None],
        };
        if let Some(second) = second {
            attached.commands[1] = Some(second.register()?);
        }
        Ok(attached)
    }
}

impl<C: Command> Drop for Attached<C> {
    /// Unregisters the commands, then removes every trigger they
    /// attached. A drop holds no lock of its caller's (module exit, or
    /// init's failure), only the guard.
    fn drop(&mut self) {
        for command in &mut self.commands {
            drop(command.take());
        }
        let mut guard = EventMutexGuard::lock();
        let mut scope = guard.scope();
        let triggers = C::REGISTRY.take_all(&mut scope);
        C::remove_all(&mut scope, triggers);
    }
}

/// `init()` of every command. The 6.12 tracing core calls
/// `cmd_ops->init()` only from its own commands' registration
/// (`register_trigger()`, `event_enable_register_trigger()`, hist's),
/// never for this module's, whose triggers hold the one reference of
/// their list ([`Registry::list`]); installed, as an error, as [`reg`] is.
extern "C" fn init(_data: *mut bindings::event_trigger_data) -> c_int {
    kernel::error::code::EINVAL.to_errno()
}

/// `unreg_all()`'s loop: removes with `remove` each trigger of `file`
/// that `ours` picks, until none is left. The next is looked up afresh
/// once `remove` has returned: it may remove other triggers. `remove` must
/// take the trigger it is given off `file`'s list, or this never ends.
pub(crate) fn remove_each(
    scope: &mut EventMutexScope<'_>,
    file: &EventFile,
    ours: impl Fn(&TriggerData) -> bool,
    mut remove: impl FnMut(&mut EventMutexScope<'_>, TriggerId),
) {
    loop {
        let found = file.triggers(scope.held()).find(|d| ours(d));
        let Some(id) = found.map(TriggerData::id) else {
            return;
        };
        remove(scope, id);
    }
}

/// The triggers a command attached, each [`Listed`] with the list's
/// reference, guarded by `event_mutex`: each method takes an
/// [`EventMutexHeld`], or the hold borrowed `mut` where it hands a
/// trigger out to be removed.
///
/// # Invariants
///
/// The vector is accessed only with `event_mutex` held, and no reference
/// to it outlives the method call that made it.
pub(crate) struct Registry<P>(UnsafeCell<KVec<Listed<P>>>);

// SAFETY: every access is serialised by the lock each method is shown
// to be held (invariant); the triggers, and the private data they own,
// may be used and removed from any task (`Listed<P>: Send`).
unsafe impl<P: Send> Sync for Registry<P> {}

impl<P> Registry<P> {
    /// An empty registry.
    pub(crate) const fn new() -> Self {
        // INVARIANT: accessed only through the methods below.
        Registry(UnsafeCell::new(KVec::new()))
    }

    /// Runs `f` on the vector. `f` must not use the registry: the
    /// methods below pass closures that only use the vector.
    fn with<R>(&self, _held: EventMutexHeld<'_>, f: impl FnOnce(&mut KVec<Listed<P>>) -> R) -> R {
        // SAFETY: the lock is held (`_held`), so no other task uses the
        // vector; no other reference to it lives in this task (invariant),
        // as `f` does not use the registry, and this one ends when `f`
        // returns.
        f(unsafe { &mut *self.0.get() })
    }

    /// Attaches `data` to `file`, at `end` of its trigger list
    /// ([`NewTrigger::list`]), and keeps it. When it cannot (no memory,
    /// or the file refuses), hands the trigger back, never listed, with
    /// the error (a negative errno).
    ///
    /// # Safety
    ///
    /// As for [`NewTrigger::list`]: `data` is set up for `file`, and its
    /// command calls what its count needs.
    pub(crate) unsafe fn list(
        &self,
        held: EventMutexHeld<'_>,
        file: &EventFile,
        data: NewTrigger<P>,
        end: ListEnd,
    ) -> Result<(), (NewTrigger<P>, c_int)> {
        // Room first: once listed, keeping it cannot fail.
        if self.with(held, |list| list.reserve(1, GFP_KERNEL)).is_err() {
            return Err((data, kernel::error::code::ENOMEM.to_errno()));
        }
        // SAFETY: the caller's contract is the callee's.
        let listed = unsafe { data.list(held, file, end) }?;
        self.with(held, |list| {
            let at = list.len();
            // Reserved above, and nothing was added since: the lock is held.
            let kept = list.push(listed, GFP_KERNEL).is_ok();
            debug_assert!(kept && list.len() == at + 1);
        });
        Ok(())
    }

    /// Takes the trigger `id` out, if it is there, to be removed: the
    /// hold is borrowed `mut`, so no borrow of it from a walk lives on.
    pub(crate) fn take(&self, scope: &mut EventMutexScope<'_>, id: TriggerId) -> Option<Listed<P>> {
        self.with(scope.held(), |list| {
            let at = list.iter().position(|d| d.id() == id)?;
            // To the front, the others keeping their order; 6.12's `KVec`
            // has no `remove()`, but its iterator's `collect()` keeps the
            // rest in place (and may shrink the buffer, never fail).
            list.as_mut_slice()[..=at].rotate_right(1);
            let mut rest = core::mem::take(list).into_iter();
            let taken = rest.next();
            *list = rest.collect(GFP_KERNEL);
            taken
        })
    }

    /// Every trigger, taken out of the registry: the last step of a
    /// command, once it is unregistered.
    pub(crate) fn take_all(&self, scope: &mut EventMutexScope<'_>) -> KVec<Listed<P>> {
        self.with(scope.held(), core::mem::take)
    }

    /// The trigger at `at`, if there is one.
    fn get<'a>(&'a self, held: EventMutexHeld<'a>, at: usize) -> Option<&'a TriggerData> {
        let data = self.with(held, |list| list.get(at).map(|d| NonNull::from(&**d)))?;
        // SAFETY: a trigger in the registry holds a reference, which only
        // its removal drops, after `take()` took it out with the hold
        // borrowed `mut`, which `held`, borrowed for `'a`, rules out.
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
