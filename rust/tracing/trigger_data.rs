// SPDX-License-Identifier: GPL-2.0

//! A trigger on an event file (`struct event_trigger_data`).

use core::ptr::{self, NonNull};
use kernel::ffi::{c_int, c_void};

use kernel::bindings;
use kernel::error::{code, Result};
use kernel::str::CStr;
use kernel::types::Opaque;

use super::EventFile;
use crate::tracefs::EventMutexHeld;

/// A trigger: what one command attached to one event file, with its
/// filter, its count and the command's private data.
///
/// # Invariants
///
/// For as long as a `&TriggerData` is used, the `event_trigger_data` it
/// wraps is live: allocated by `trigger_data_alloc()` and not yet freed
/// by `trigger_data_free()`. Its reference count (`ref`), `paused_tmp`
/// and filter string change only with `event_mutex` held; `paused` and
/// `count` are also read and written by probes, racily, as C does.
#[repr(transparent)]
pub(crate) struct TriggerData(Opaque<bindings::event_trigger_data>);

// SAFETY: a trigger is not tied to a CPU or task: the tracing core and
// its probes use it from any CPU.
unsafe impl Send for TriggerData {}
// SAFETY: shared access follows the rules of the invariant: what changes
// under `event_mutex` is changed only by methods that take an
// `EventMutexHeld`, and the fields probes race on are accessed once each,
// as `READ_ONCE()`/`WRITE_ONCE()` do.
unsafe impl Sync for TriggerData {}

/// What dropping a reference on a trigger left ([`TriggerData::put_ref`]).
pub(crate) enum Refs {
    /// There was none to drop: nothing changed.
    Unbalanced,
    /// Others are left.
    Left,
    /// That was the last: the trigger is to be freed.
    Last,
}

impl TriggerData {
    /// The trigger `ptr` points at.
    ///
    /// # Safety
    ///
    /// `ptr` must point at a trigger that is live, as the type invariant
    /// says, for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::event_trigger_data) -> &'a Self {
        // INVARIANT: the caller's promise for `'a` is the invariant.
        // SAFETY: `TriggerData` is `repr(transparent)` over the C struct
        // (through `Opaque`), which is live for `'a` (the caller's
        // promise).
        unsafe { &*ptr.cast::<Self>() }
    }

    /// Frees the trigger: clears its filter, waits for the probes that
    /// may still run it and frees it (`trigger_data_free()`). Its private
    /// data is the caller's to drop.
    ///
    /// # Safety
    ///
    /// The trigger must be on no list, with no reference left that anyone
    /// will use: `self` is not used after this, nor any other
    /// `&TriggerData` to it.
    pub(crate) unsafe fn free(&self) {
        // SAFETY: the trigger is live (invariant), on no list and unused
        // after this (the caller's promise).
        unsafe { bindings::trigger_data_free(self.as_ptr()) };
    }

    /// The C struct, for the tracing core's functions.
    pub(crate) fn as_ptr(&self) -> *mut bindings::event_trigger_data {
        self.0.get()
    }

    /// The trigger's `list` entry.
    pub(super) fn list_entry(&self) -> *mut bindings::list_head {
        // SAFETY: the trigger is live (invariant); only the address is
        // taken.
        unsafe { ptr::addr_of_mut!((*self.as_ptr()).list) }
    }

    /// Takes the trigger off its file's trigger list: `list_del_rcu()`.
    /// Probes that saw it may still run it: [`free`](Self::free) waits for
    /// them.
    ///
    /// # Safety
    ///
    /// The trigger must be on an event file's trigger list.
    pub(crate) unsafe fn unlink(&self, _held: EventMutexHeld<'_>) {
        // SAFETY: the entry is on a list (the caller's promise) whose lock
        // is held (`_held`); the event path reads it as an RCU-sched
        // reader, which `list_del_rcu()` leaves able to go on.
        unsafe { crate::shim::rhist_list_del_rcu(self.list_entry()) };
    }

    /// The command the trigger belongs to.
    pub(crate) fn cmd_ops(&self) -> *mut bindings::event_command {
        // SAFETY: the trigger is live (invariant); `cmd_ops` is set when it
        // is made and never changed.
        unsafe { (*self.as_ptr()).cmd_ops }
    }

    /// The command's private data: null until its command set it.
    pub(crate) fn private_data(&self) -> *mut c_void {
        // SAFETY: the trigger is live (invariant); `private_data` is set
        // only while the trigger is a `NewTrigger`, which no one else uses.
        unsafe { (*self.as_ptr()).private_data }
    }

    /// The count left (`!0`: unlimited).
    pub(crate) fn count(&self) -> u64 {
        // SAFETY: the trigger is live (invariant); probes may decrement
        // the count meanwhile (`take_count()`), so it is read once.
        unsafe { ptr::read_volatile(ptr::addr_of!((*self.as_ptr()).count)) as u64 }
    }

    /// Whether the trigger may fire once more, counting it down: C's
    /// `event_trigger_count()`. Racy across CPUs as C's is: a lost
    /// decrement lets the trigger fire once more, as it does there.
    pub(crate) fn take_count(&self) -> bool {
        // SAFETY: the trigger is live (invariant); `count` is read and
        // written once each, as C reads and writes it from every probe.
        unsafe {
            let count = ptr::addr_of_mut!((*self.as_ptr()).count);
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

    /// The filter's text (`<filter>` of `if <filter>`), if there is one,
    /// kept as it is by the lock held for `'a`.
    pub(crate) fn filter<'a>(&'a self, _held: EventMutexHeld<'a>) -> Option<&'a [u8]> {
        // SAFETY: the trigger is live (invariant); its filter string is
        // changed (`set_filter()`) only with the lock held, as it is for
        // `'a` (`_held`).
        let p = unsafe { (*self.as_ptr()).filter_str };
        // SAFETY: a filter string is null or NUL-terminated, and freed
        // only when changed or with the trigger, both with the lock held:
        // by no other task for `'a` (`_held`), and by this one only through
        // `free()`, whose caller promises `self` is not used after it.
        (!p.is_null()).then(|| unsafe { CStr::from_char_ptr(p) }.as_bytes())
    }

    /// Sets the filter `text` (`if <filter>`, NUL-terminated; the callee
    /// may cut it up), parsed for `file`'s event: C's
    /// `set_trigger_filter()`, which logs a bad filter. Returns 0 or a
    /// negative errno (`EINVAL` for a text without its NUL).
    pub(crate) fn set_filter(
        &self,
        _held: EventMutexHeld<'_>,
        file: &EventFile,
        text: &mut [u8],
    ) -> c_int {
        if !text.ends_with(&[0]) {
            return code::EINVAL.to_errno();
        }
        // SAFETY: the trigger and the file are live (invariants), the text
        // is NUL-terminated (checked above) and ours to cut up; the
        // callee replaces the filter for running probes by RCU, and its
        // string under the lock held (`_held`).
        unsafe {
            bindings::set_trigger_filter(text.as_mut_ptr().cast(), self.as_ptr(), file.as_ptr())
        }
    }

    /// Whether the trigger is paused; probes change it (`enable_*`
    /// triggers), so it is read once.
    pub(crate) fn paused(&self) -> bool {
        // SAFETY: the trigger is live (invariant); `paused` is a plain
        // flag written once at a time, as C's `WRITE_ONCE()` would.
        unsafe { ptr::read_volatile(ptr::addr_of!((*self.as_ptr()).paused)) }
    }

    /// Pauses or continues the trigger; the event path reads the flag on
    /// each event, racily, as it reads hist's.
    pub(crate) fn set_paused(&self, paused: bool) {
        // SAFETY: the trigger is live (invariant); `paused` is a plain flag
        // read and written once at a time by the tracing core and probes.
        unsafe { ptr::write_volatile(ptr::addr_of_mut!((*self.as_ptr()).paused), paused) };
    }

    /// Pauses the trigger, keeping whether it was (`paused_tmp`) for
    /// [`restore_paused`](Self::restore_paused), as hist's
    /// `pause_named_trigger()` does.
    pub(crate) fn save_and_pause(&self, _held: EventMutexHeld<'_>) {
        let paused = self.paused();
        // SAFETY: the trigger is live (invariant); `paused_tmp` is written
        // and read only with the lock held (`_held`).
        unsafe { (*self.as_ptr()).paused_tmp = paused };
        self.set_paused(true);
    }

    /// Undoes [`save_and_pause`](Self::save_and_pause).
    pub(crate) fn restore_paused(&self, _held: EventMutexHeld<'_>) {
        // SAFETY: the trigger is live (invariant); `paused_tmp` is written
        // and read only with the lock held (`_held`).
        let paused = unsafe { (*self.as_ptr()).paused_tmp };
        self.set_paused(paused);
    }

    /// The reference count's field, used only with the lock held.
    fn refs(&self, _held: EventMutexHeld<'_>) -> *mut c_int {
        // SAFETY: the trigger is live (invariant); only the address is
        // taken.
        unsafe { ptr::addr_of_mut!((*self.as_ptr()).ref_) }
    }

    /// Takes a reference on the trigger.
    pub(crate) fn get_ref(&self, held: EventMutexHeld<'_>) {
        // SAFETY: the count changes only with the lock held (invariant),
        // as it is (`held`); no reference to it outlives this statement.
        unsafe { *self.refs(held) += 1 };
    }

    /// Drops a reference on the trigger; see [`Refs`]. Freeing it after
    /// the last is the caller's.
    pub(crate) fn put_ref(&self, held: EventMutexHeld<'_>) -> Refs {
        // SAFETY: the count changes only with the lock held (invariant),
        // as it is (`held`); no other reference to it lives meanwhile.
        let refs = unsafe { &mut *self.refs(held) };
        if *refs <= 0 {
            return Refs::Unbalanced;
        }
        *refs -= 1;
        if *refs > 0 {
            Refs::Left
        } else {
            Refs::Last
        }
    }
}

/// A trigger this task has just made: on no list, used by no one else,
/// with no reference counted yet. Dropping it frees it; [`counted`]
/// hands it over to its command's reference count instead.
///
/// [`counted`]: NewTrigger::counted
///
/// # Invariants
///
/// `0` points at a live trigger, allocated by `trigger_data_alloc()`, that
/// is on no list, has no reference counted, and that no one else uses:
/// the value owns it.
pub(crate) struct NewTrigger(NonNull<TriggerData>);

impl NewTrigger {
    /// A new trigger of the command `cmd_ops`, with no count, no filter
    /// and no private data: C's `trigger_data_alloc()`. `ENOMEM` if it
    /// cannot be had.
    pub(crate) fn new(cmd_ops: *mut bindings::event_command) -> Result<Self> {
        // SAFETY: without a parameter, the callee only stores `cmd_ops`,
        // which it never calls: any pointer may be passed.
        let data = unsafe {
            bindings::trigger_data_alloc(cmd_ops, ptr::null_mut(), ptr::null_mut(), ptr::null_mut())
        };
        // INVARIANT: just allocated, on no list, with no reference, and
        // known to no one else.
        Ok(NewTrigger(
            NonNull::new(data.cast::<TriggerData>()).ok_or(code::ENOMEM)?,
        ))
    }

    /// The C struct, which no one else uses (invariant).
    fn raw(&mut self) -> *mut bindings::event_trigger_data {
        self.0.as_ptr().cast()
    }

    /// Sets the command's private data.
    pub(crate) fn set_private_data(&mut self, data: *mut c_void) {
        // SAFETY: the trigger is live and no one else uses it (invariant).
        unsafe { (*self.raw()).private_data = data };
    }

    /// Lets the trigger fire `count` times: `count` and
    /// `EVENT_TRIGGER_FL_COUNT`.
    pub(crate) fn set_count(&mut self, count: u64) {
        let data = self.raw();
        // SAFETY: the trigger is live and no one else uses it (invariant).
        unsafe {
            (*data).count = count as _;
            (*data).flags |= bindings::EVENT_TRIGGER_FL_COUNT as c_int;
        }
    }

    /// Counts the caller's reference on the trigger, and hands the
    /// trigger over to its command: from here it is freed with its last
    /// reference, by the command's `put()`, which the caller must call
    /// for this one.
    pub(crate) fn counted<'a>(mut self, _held: EventMutexHeld<'a>) -> &'a TriggerData {
        let data = self.raw();
        // SAFETY: the trigger is live and no one else uses it (invariant);
        // its count changes only with the lock held (invariant of
        // `TriggerData`), as it is (`_held`).
        unsafe { (*data).ref_ = 1 };
        core::mem::forget(self);
        // SAFETY: the trigger is live until its last reference is dropped,
        // which the caller's is, the only one: not before the caller's
        // `put()`, whose contract rules out any use after.
        unsafe { TriggerData::from_raw(data) }
    }
}

impl core::ops::Deref for NewTrigger {
    type Target = TriggerData;

    fn deref(&self) -> &TriggerData {
        // SAFETY: the trigger is live while the value owns it (invariant).
        unsafe { self.0.as_ref() }
    }
}

impl Drop for NewTrigger {
    fn drop(&mut self) {
        // SAFETY: the trigger is live, on no list and used by no one else
        // (invariant); this frees its filter and it, once.
        unsafe { bindings::trigger_data_free(self.raw()) };
    }
}
