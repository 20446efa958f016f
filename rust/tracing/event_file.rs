// SPDX-License-Identifier: GPL-2.0

//! An event of one trace instance (`struct trace_event_file`), its
//! trigger list, and [`EventPin`], which keeps one.

use core::ptr::NonNull;
use kernel::ffi::c_int;

use kernel::bindings;
use kernel::error::{code, Result};
use kernel::types::Opaque;

use super::{TraceArray, TriggerData};
use crate::kernel_ext::list::ListIter;
use crate::kernel_ext::{c_bytes, field_ptr};
use crate::shim;
use crate::tracefs::{ErrText, EventMutexHeld};

/// Where an `event_trigger_data` has its `list`, the node of its file's
/// trigger list.
const TRIGGER_LIST: usize = core::mem::offset_of!(bindings::event_trigger_data, list);

/// An event file: one event of one trace instance, with the triggers
/// attached to it there.
///
/// # Invariants
///
/// For as long as a `&EventFile` is used, the `trace_event_file` it wraps
/// is live: allocated, its event (`event_call`, with its class and names)
/// registered, and its trace array (`tr`) not freed. The tracing core
/// guarantees that to a callback for the file it passes, and, while
/// `event_mutex` is held, to every file on an instance's list of events
/// (an event or an instance is removed only with the lock held); an
/// [`EventPin`] guarantees it to its owner.
#[repr(transparent)]
pub(crate) struct EventFile(Opaque<bindings::trace_event_file>);

// SAFETY: an event file is not tied to a CPU or task: the tracing core
// uses it from any CPU, changing its lists and counts under its locks or
// with atomics, as the methods below do.
unsafe impl Send for EventFile {}
// SAFETY: the tracing core shares event files between CPUs; shared access
// only reads fields fixed while the file is live, or goes through the
// tracing core's functions and lists, under `event_mutex` (the methods that
// take an `EventMutexHeld`) or as an RCU-sched reader.
unsafe impl Sync for EventFile {}

impl EventFile {
    /// The event file `ptr` points at.
    ///
    /// # Safety
    ///
    /// `ptr` must point at a `trace_event_file` that is live, as the type
    /// invariant says, for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::trace_event_file) -> &'a Self {
        // INVARIANT: the caller's promise for `'a` is the invariant.
        // SAFETY: `EventFile` is `repr(transparent)` over the C struct
        // (through `Opaque`), which is live for `'a` (the caller's
        // promise).
        unsafe { &*ptr.cast::<Self>() }
    }

    /// C's `event_file_file()`: the event file behind `filp`, an open
    /// file of an event directory, or `None` once the event is being
    /// removed. A file it returns is live for `'a`: an event is removed
    /// only with the lock held.
    ///
    /// # Safety
    ///
    /// `filp` must be open, or being opened, on a file of an event
    /// directory.
    pub(crate) unsafe fn of_open_file<'a>(
        _held: EventMutexHeld<'a>,
        filp: *mut bindings::file,
    ) -> Option<&'a Self> {
        // SAFETY: `filp` is such a file (the caller's promise), and the
        // lock the callee needs is held (`_held`).
        let file = unsafe { shim::rhist_event_file_file(filp) };
        // SAFETY: a file the callee returns is on its instance's list of
        // events, not marked freed: live while the lock is held, for `'a`.
        (!file.is_null()).then(|| unsafe { Self::from_raw(file) })
    }

    /// The C struct, for the tracing core's functions.
    pub(crate) fn as_ptr(&self) -> *mut bindings::trace_event_file {
        self.0.get()
    }

    /// The event's `trace_event_call`, registered while the file is
    /// borrowed.
    pub(crate) fn call(&self) -> *mut bindings::trace_event_call {
        // SAFETY: the file is live (invariant); `event_call` is set when
        // the file is made and never changed.
        unsafe { (*self.as_ptr()).event_call }
    }

    /// The instance the file belongs to.
    pub(crate) fn trace_array(&self) -> &TraceArray {
        // SAFETY: the file is live, so its trace array is not freed for as
        // long as `self` is borrowed (invariant); `tr` is set when the
        // file is made and never changed.
        unsafe { TraceArray::from_raw((*self.as_ptr()).tr) }
    }

    /// The system and the event's name: the parts of `system:event`.
    /// Empty where the event has none.
    pub(crate) fn names(&self) -> (&[u8], &[u8]) {
        let call = self.call();
        // SAFETY: the event is registered while `self` is borrowed
        // (invariant), so its call and class are live, and its names,
        // null or NUL-terminated strings it owns, are kept for as long.
        let (system, name) = unsafe {
            (
                c_bytes((*(*call).class).system),
                c_bytes(shim::rhist_trace_event_name(call)),
            )
        };
        (system.unwrap_or(b""), name.unwrap_or(b""))
    }

    /// Whether the event has a class: C's `__find_event_file()` skips
    /// those without.
    pub(super) fn has_class(&self) -> bool {
        // SAFETY: the event is registered while `self` is borrowed
        // (invariant), so its call is live.
        unsafe { !(*self.call()).class.is_null() }
    }

    /// Whether the event can be enabled: it has a `reg()` and is not
    /// marked `TRACE_EVENT_FL_IGNORE_ENABLE` (C's `find_event_file()`).
    pub(crate) fn can_enable(&self) -> bool {
        let call = self.call();
        // SAFETY: the event is registered while `self` is borrowed
        // (invariant), so its call and class are live.
        unsafe {
            (*(*call).class).reg.is_some()
                && (*call).flags & bindings::TRACE_EVENT_FL_IGNORE_ENABLE as c_int == 0
        }
    }

    /// The head of the file's trigger list.
    fn triggers_head(&self) -> *mut bindings::list_head {
        field_ptr!(self.as_ptr(), bindings::trace_event_file, triggers)
    }

    /// The triggers attached to the file, in list order. Each is live
    /// while it is on the list, which only a task holding the lock
    /// changes, and this task takes one off only with the lock's hold
    /// borrowed `mut` (`Listed::unlink()`), which `_held`, borrowed for
    /// `'a`, rules out: each is live for `'a`.
    pub(crate) fn triggers<'a>(
        &'a self,
        _held: EventMutexHeld<'a>,
    ) -> impl Iterator<Item = &'a TriggerData> + 'a {
        // SAFETY: every node on `file->triggers` is the `list` member of an
        // `event_trigger_data`, which `TriggerData` wraps, live while it is
        // on the list; the list changes only with `event_mutex` held, held
        // for `'a` (`_held`) by this task, which takes none off for `'a`
        // (see above).
        unsafe { ListIter::new(self.triggers_head(), TRIGGER_LIST) }
    }

    /// The triggers attached to the file, for an RCU reader: C's
    /// `list_for_each_entry_rcu()`.
    ///
    /// # Safety
    ///
    /// The caller must be an RCU reader that `synchronize_rcu()` waits
    /// for (a probe) for as long as the iterator and the triggers it
    /// yields are used.
    pub(crate) unsafe fn triggers_rcu(&self) -> impl Iterator<Item = &TriggerData> {
        // SAFETY: every node on `file->triggers` is the `list` member of an
        // `event_trigger_data`, which `TriggerData` wraps; writers add them
        // with `list_add_rcu()`/`list_add_tail_rcu()` (`add_trigger()`),
        // remove them with `list_del_rcu()` and free them only after the
        // RCU readers that may have seen them finish
        // (`trigger_data_free()`), and the caller is one for as long as the
        // iterator is used (the caller's promise).
        unsafe { ListIter::new_rcu(self.triggers_head(), TRIGGER_LIST) }
    }

    /// Adds `data` to the file's trigger list at `end`, where the probe
    /// path sees it: `list_add_rcu()` or `list_add_tail_rcu()`.
    ///
    /// # Safety
    ///
    /// `data` must be set up for this file (its command, private data and
    /// filter), on no list, and stay live until it is taken off again.
    /// Its command must have a `trigger()`, and a `count_func()` if
    /// `data` was given a count (`NewTrigger::set_count()`): the probe
    /// path calls them unchecked (`data_ops_trigger()`).
    pub(crate) unsafe fn add_trigger(
        &self,
        _held: EventMutexHeld<'_>,
        data: &TriggerData,
        end: ListEnd,
    ) {
        let (entry, head) = (data.list_entry(), self.triggers_head());
        // SAFETY: `entry` is on no list and `head` the file's list, whose
        // lock is held (`_held`); the probe path reads it as an RCU-sched
        // reader, which the `_rcu` variants publish to. `data` stays live
        // while listed (the caller's promise).
        unsafe {
            match end {
                ListEnd::Head => shim::rhist_list_add_rcu(entry, head),
                ListEnd::Tail => shim::rhist_list_add_tail_rcu(entry, head),
            }
        };
    }

    /// Takes one more trigger-mode reference on the file for a trigger
    /// being attached: C's `trace_event_trigger_enable_disable(file, 1)`,
    /// undone when it fails. Returns 0 or a negative errno.
    ///
    /// When the event's probe cannot be registered (out of memory), the
    /// tracing core returns the error with its counts (`tm_ref`, `sm_ref`)
    /// taken and the event in soft mode for good, whatever the caller
    /// does. No probe was registered, so dropping them again with the
    /// matching disable call restores the event exactly.
    pub(crate) fn trigger_mode_get(&self, held: EventMutexHeld<'_>) -> c_int {
        let ret = self.trigger_mode(held, true);
        if ret < 0 {
            // Drops the references the failed call took.
            self.trigger_mode(held, false);
        }
        ret
    }

    /// Drops a reference [`trigger_mode_get`](Self::trigger_mode_get)
    /// took: C's `trace_event_trigger_enable_disable(file, 0)`.
    pub(crate) fn trigger_mode_put(&self, held: EventMutexHeld<'_>) {
        self.trigger_mode(held, false);
    }

    /// C's `trace_event_trigger_enable_disable(file, enable)`.
    fn trigger_mode(&self, _held: EventMutexHeld<'_>, enable: bool) -> c_int {
        // SAFETY: the file is live while `self` is borrowed (invariant),
        // and the callee needs `event_mutex`, held (`_held`). It reads and
        // writes only the file and its event; a call that does not match
        // an earlier one miscounts (`tm_ref`) but frees nothing.
        unsafe { bindings::trace_event_trigger_enable_disable(self.as_ptr(), enable.into()) }
    }

    /// Holds the file in soft mode once more: C's
    /// `trace_event_enable_disable(file, 1, 1)`, undone when it fails (see
    /// [`trigger_mode_get`](Self::trigger_mode_get)).
    pub(crate) fn soft_mode_get(&self, held: EventMutexHeld<'_>) -> c_int {
        let ret = self.soft_mode(held, true);
        if ret < 0 {
            // Drops the reference the failed call took.
            self.soft_mode(held, false);
        }
        ret
    }

    /// Drops a reference [`soft_mode_get`](Self::soft_mode_get) took: C's
    /// `trace_event_enable_disable(file, 0, 1)`.
    pub(crate) fn soft_mode_put(&self, held: EventMutexHeld<'_>) {
        self.soft_mode(held, false);
    }

    /// C's `trace_event_enable_disable(file, enable, 1)`.
    fn soft_mode(&self, _held: EventMutexHeld<'_>, enable: bool) -> c_int {
        // SAFETY: the file is live while `self` is borrowed (invariant),
        // and the callee needs `event_mutex`, held (`_held`). It reads and
        // writes only the file and its event; a call that does not match
        // an earlier one miscounts (`sm_ref`) but frees nothing.
        unsafe { bindings::trace_event_enable_disable(self.as_ptr(), enable.into(), 1) }
    }

    /// C's `update_cond_flag()`: whether the file's triggers need the
    /// record.
    pub(crate) fn update_cond_flag(&self, _held: EventMutexHeld<'_>) {
        // SAFETY: the file is live (invariant), and the lock the callee
        // needs is held (`_held`).
        unsafe { bindings::update_cond_flag(self.as_ptr()) };
    }

    /// Appends an entry to tracing/error_log of the file's instance, as
    /// the built-in commands do.
    ///
    /// `errs` is a table of messages and `kind` the index of this one;
    /// the log copies the message (patch 0001), so nothing of ours is
    /// kept. `loc` and `cmd` must end with a NUL; nothing is logged if
    /// either does not, or if `kind` is out of `errs`.
    pub(crate) fn log_error(
        &self,
        loc: &[u8],
        cmd: &[u8],
        errs: &[ErrText],
        kind: usize,
        pos: usize,
    ) {
        if !loc.ends_with(&[0]) || !cmd.ends_with(&[0]) || kind >= errs.len() {
            debug_assert!(false, "log_error() without NUL or with a bad kind");
            return;
        }
        // SAFETY: the file's trace array is live (`trace_array()`); `loc`
        // and `cmd` are NUL-terminated (checked above), and `errs[kind]`
        // is a NUL-terminated static message (see `ErrText`); the callee
        // copies all three.
        unsafe {
            bindings::tracing_log_err(
                self.trace_array().as_ptr(),
                loc.as_ptr().cast(),
                cmd.as_ptr().cast(),
                errs.as_ptr().cast_mut().cast(),
                kind as u8,
                pos.min(u16::MAX as usize) as u16,
            )
        };
    }
}

/// Where [`EventFile::add_trigger()`] puts a trigger on its file's list.
pub(crate) enum ListEnd {
    /// First, as the tracing core's enable commands add theirs.
    Head,
    /// Last, as hist adds its triggers: the files list them in that order.
    Tail,
}

/// A pinned and referenced event file: the file's count
/// (`event_file_get()`) keeps its memory, and the event's pin
/// (`trace_event_try_get_ref()`) keeps the event registered, so the
/// event's call and names stay too. Releases both when dropped.
///
/// A reference on the file alone is not an [`EventFile`]'s invariant (the
/// event may go, and with it the names the file points at): that is why
/// the file's count is not an `ARef<EventFile>`, but taken and dropped
/// only here, with the pin.
///
/// # Invariants
///
/// `0` points at an event file on which the value holds one reference,
/// whose event it has pinned. The file's trace array is not freed while
/// the pin's owner is in use: the tracing core removes, and frees, the
/// triggers of an instance, which own the pins, before the instance. A
/// trigger's state whose drop is deferred past that (`command::lifetime`'s
/// `Deferred`, which drops what the tracing core freed while holding
/// `trace_types_lock`) may outlive the trace array: it is only dropped,
/// and `EventPin::drop()` does not touch the trace array.
pub(crate) struct EventPin(NonNull<EventFile>);

// SAFETY: the reference and the pin may be dropped on any CPU, and the
// file they keep may be used from any CPU (`EventFile` is `Send`).
unsafe impl Send for EventPin {}
// SAFETY: shared use only hands out `&EventFile`, which is `Sync`.
unsafe impl Sync for EventPin {}

impl EventPin {
    /// Pins the event behind `file` and takes a reference on `file`;
    /// `ENODEV` if the event is going away.
    pub(crate) fn new(file: &EventFile) -> Result<Self> {
        // SAFETY: the event is registered while `file` is borrowed
        // (invariant of `EventFile`), so its call is live.
        if !unsafe { shim::rhist_pin_event(file.call()) } {
            return Err(code::ENODEV);
        }
        // SAFETY: the file is live (invariant of `EventFile`); the
        // reference is dropped in `drop()`.
        unsafe { bindings::event_file_get(file.as_ptr()) };
        // INVARIANT: the event is pinned and the file referenced, both
        // until `drop()`.
        Ok(EventPin(NonNull::from(file)))
    }

    /// The file, live for as long as the pin is borrowed.
    pub(crate) fn file(&self) -> &EventFile {
        // SAFETY: the pin keeps the file's memory and its event, and its
        // owner, which can reach it, keeps its trace array (invariant):
        // the file is live while `self` is borrowed.
        unsafe { &*self.0.as_ptr() }
    }
}

impl Drop for EventPin {
    fn drop(&mut self) {
        let file = self.0.as_ptr().cast::<bindings::trace_event_file>();
        // SAFETY: `new()` pinned the event, which is released once, here;
        // the file, referenced until the call below, points at that
        // event's call (invariant).
        unsafe { shim::rhist_unpin_event((*file).event_call) };
        // SAFETY: drops the reference `new()` took on the file
        // (invariant), once.
        unsafe { bindings::event_file_put(file) };
    }
}
