// SPDX-License-Identifier: GPL-2.0

//! A trigger on an event file (`struct event_trigger_data`).

use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use kernel::ffi::{c_int, c_void};

use kernel::bindings;
use kernel::error::{code, Result};
use kernel::prelude::*;
use kernel::types::Opaque;

use super::{EventFile, ListEnd};
use crate::kernel_ext::{c_bytes, field_ptr};
use crate::tracefs::{EventMutexHeld, EventMutexScope};

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

/// A trigger's identity ([`TriggerData::id`]): its address, compared,
/// never turned back into a reference.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct TriggerId(usize);

impl TriggerId {
    /// The identity of the trigger at `ptr`.
    pub(crate) fn of_raw(ptr: *mut bindings::event_trigger_data) -> Self {
        TriggerId(ptr as usize)
    }
}

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

    /// The trigger's identity: what finds it again in its registry once
    /// a borrow of it has ended.
    pub(crate) fn id(&self) -> TriggerId {
        TriggerId(ptr::from_ref(self) as usize)
    }

    /// The C struct, for the tracing core's functions.
    pub(crate) fn as_ptr(&self) -> *mut bindings::event_trigger_data {
        self.0.get()
    }

    /// The trigger's `list` entry.
    pub(super) fn list_entry(&self) -> *mut bindings::list_head {
        field_ptr!(self.as_ptr(), bindings::event_trigger_data, list)
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

    /// `count`, which probes read and count down racily, as C's
    /// `event_trigger_count()` does with single loads and stores: here as
    /// a relaxed atomic, which compiles to the same plain load and store.
    fn count_word(&self) -> &AtomicUsize {
        let count = field_ptr!(self.as_ptr(), bindings::event_trigger_data, count);
        // SAFETY: the trigger is live while `self` is borrowed (invariant),
        // so `count`, an aligned `c_ulong` (a `usize`), is valid for the
        // borrow; every access to it, C's and this module's, is one load
        // or store of the whole word, which the kernel's memory model
        // treats as these relaxed atomic ones.
        unsafe { AtomicUsize::from_ptr(count) }
    }

    /// The count left (`!0`: unlimited).
    pub(crate) fn count(&self) -> u64 {
        self.count_word().load(Ordering::Relaxed) as u64
    }

    /// Whether the trigger may fire once more, counting it down: C's
    /// `event_trigger_count()`. Racy across CPUs as C's is: a lost
    /// decrement lets the trigger fire once more, as it does there.
    pub(crate) fn take_count(&self) -> bool {
        let count = self.count_word();
        let left = count.load(Ordering::Relaxed);
        if left == 0 {
            return false;
        }
        if left != !0 {
            count.store(left - 1, Ordering::Relaxed);
        }
        true
    }

    /// The filter's text (`<filter>` of `if <filter>`), if there is one,
    /// kept as it is by the lock held for `'a`.
    pub(crate) fn filter<'a>(&'a self, _held: EventMutexHeld<'a>) -> Option<&'a [u8]> {
        // SAFETY: the trigger is live while `self` is borrowed (invariant).
        // Its filter string is null or NUL-terminated, and changed or freed
        // only with the lock held: by no other task for `'a` (`_held`), and
        // by this one only in `set_filter()`, which needs no borrow of the
        // text, or when the trigger is freed, after every borrow of it.
        unsafe { c_bytes((*self.as_ptr()).filter_str) }
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

    /// `paused`, which the tracing core and probes (`enable_*` triggers)
    /// read and write racily, with single loads and stores: here as a
    /// relaxed atomic, which compiles to the same plain load and store.
    fn paused_flag(&self) -> &AtomicBool {
        let paused = field_ptr!(self.as_ptr(), bindings::event_trigger_data, paused);
        // SAFETY: the trigger is live while `self` is borrowed (invariant),
        // so `paused`, a `bool`, is valid for the borrow; every access to
        // it, C's and this module's, is one load or store of the byte,
        // which the kernel's memory model treats as these relaxed atomic
        // ones.
        unsafe { AtomicBool::from_ptr(paused) }
    }

    /// Whether the trigger is paused; probes change it (`enable_*`
    /// triggers), so it is read once.
    pub(crate) fn paused(&self) -> bool {
        self.paused_flag().load(Ordering::Relaxed)
    }

    /// Pauses or continues the trigger; the event path reads the flag on
    /// each event, racily, as it reads hist's.
    pub(crate) fn set_paused(&self, paused: bool) {
        self.paused_flag().store(paused, Ordering::Relaxed);
    }

    /// Runs `f` on the fields that change only with the lock held: the
    /// reference count (`ref`) and the saved pause (`paused_tmp`).
    /// `f` gets them for its call alone.
    fn locked<R>(
        &self,
        _held: EventMutexHeld<'_>,
        f: impl FnOnce(&mut c_int, &mut bool) -> R,
    ) -> R {
        let data = self.as_ptr();
        // SAFETY: the trigger is live (invariant); `ref` and `paused_tmp`
        // are read and written only with the lock held (invariant), as it
        // is (`_held`), and only here, whose borrows of them end when `f`
        // returns; probes and the tracing core's other users touch
        // neither.
        let (refs, paused_tmp) = unsafe { (&mut (*data).ref_, &mut (*data).paused_tmp) };
        f(refs, paused_tmp)
    }

    /// Pauses the trigger, keeping whether it was (`paused_tmp`) for
    /// [`restore_paused`](Self::restore_paused), as hist's
    /// `pause_named_trigger()` does.
    pub(crate) fn save_and_pause(&self, held: EventMutexHeld<'_>) {
        let paused = self.paused();
        self.locked(held, |_, saved| *saved = paused);
        self.set_paused(true);
    }

    /// Undoes [`save_and_pause`](Self::save_and_pause).
    pub(crate) fn restore_paused(&self, held: EventMutexHeld<'_>) {
        let paused = self.locked(held, |_, saved| *saved);
        self.set_paused(paused);
    }

    /// Takes a reference on the trigger.
    pub(crate) fn get_ref(&self, held: EventMutexHeld<'_>) {
        self.locked(held, |refs, _| *refs += 1);
    }

    /// Drops a reference on the trigger; see [`Refs`]. Freeing it after
    /// the last is the caller's.
    pub(crate) fn put_ref(&self, held: EventMutexHeld<'_>) -> Refs {
        self.locked(held, |refs, _| {
            if *refs <= 0 {
                return Refs::Unbalanced;
            }
            *refs -= 1;
            if *refs > 0 {
                Refs::Left
            } else {
                Refs::Last
            }
        })
    }
}

/// Frees `data`, a trigger on no list with no reference anyone will use,
/// and hands back its private data: `trigger_data_free()` clears its
/// filter, waits for the probes that may still run it and frees it.
///
/// # Safety
///
/// `data` must be live, on no list, and not used after this by anyone;
/// its private data must be null or come from `KBox::<P>::into_raw()`,
/// owned by the trigger.
unsafe fn free_trigger<P>(data: NonNull<TriggerData>) -> Option<KBox<P>> {
    let raw = data.as_ptr().cast::<bindings::event_trigger_data>();
    // SAFETY: `data` is live, on no list and unused after this (the
    // caller's contract); the private data, owned by the trigger, is
    // read before the trigger is freed, and taken over once (the
    // caller's contract), after the probes that could read it finished.
    unsafe {
        let private = (*raw).private_data.cast::<P>();
        bindings::trigger_data_free(raw);
        (!private.is_null()).then(|| KBox::from_raw(private))
    }
}

/// A trigger kept live by the value's holder, with its command's private
/// data `P`: what [`NewTrigger`] (owning the trigger outright) and
/// [`TriggerRef`] (owning one reference) are made of.
///
/// # Invariants
///
/// `data` points at a live trigger, which stays live while the value
/// lives. Its private data is null or comes from `KBox::<P>::into_raw()`,
/// owned by the trigger, and is replaced only through a [`NewTrigger`]
/// borrowed `mut`.
struct KeptTrigger<P> {
    data: NonNull<TriggerData>,
    _private: PhantomData<KBox<P>>,
}

impl<P> KeptTrigger<P> {
    /// The private data, if the trigger has any.
    fn private(&self) -> Option<&P> {
        let private = self.private_data().cast::<P>();
        // SAFETY: null or a `KBox<P>` the trigger owns (invariant), freed
        // only with the trigger, which stays live while the value does,
        // and replaced only through a `NewTrigger` borrowed `mut`, which
        // this shared borrow of the value rules out.
        (!private.is_null()).then(|| unsafe { &*private })
    }
}

impl<P> core::ops::Deref for KeptTrigger<P> {
    type Target = TriggerData;

    fn deref(&self) -> &TriggerData {
        // SAFETY: the trigger stays live while the value lives
        // (invariant), which outlives this borrow of it.
        unsafe { self.data.as_ref() }
    }
}

/// A trigger this task has just made, with its command's private data
/// `P` once set: on no list, used by no one else, with no reference
/// counted. Dropping it frees it and its private data; [`list`] puts it
/// on its event file's list.
///
/// [`list`]: NewTrigger::list
///
/// # Invariants
///
/// The trigger, allocated by `trigger_data_alloc()`, is on no list, with
/// no reference counted, and no one else uses it: the value owns it, and
/// frees it when dropped.
pub(crate) struct NewTrigger<P = ()>(KeptTrigger<P>);

impl<P> NewTrigger<P> {
    /// A new trigger of the command `cmd_ops`, with no count, no filter
    /// and no private data: C's `trigger_data_alloc()`. `ENOMEM` if it
    /// cannot be had.
    ///
    /// # Safety
    ///
    /// Every trigger of `cmd_ops` must have private data of type `P`, or
    /// none: what its probe and the walks of the lists read it as.
    pub(crate) unsafe fn new(cmd_ops: *mut bindings::event_command) -> Result<Self> {
        // SAFETY: without a parameter, the callee only stores `cmd_ops`,
        // which it never calls: any pointer may be passed.
        let data = unsafe {
            bindings::trigger_data_alloc(cmd_ops, ptr::null_mut(), ptr::null_mut(), ptr::null_mut())
        };
        let data = NonNull::new(data.cast::<TriggerData>()).ok_or(code::ENOMEM)?;
        // INVARIANT: just allocated, without private data, on no list,
        // with no reference, and known to no one else; the value frees it.
        Ok(NewTrigger(KeptTrigger {
            data,
            _private: PhantomData,
        }))
    }

    /// The C struct, which no one else uses (invariant).
    fn raw(&mut self) -> *mut bindings::event_trigger_data {
        self.0.data.as_ptr().cast()
    }

    /// Gives the trigger its private data, dropping any it had.
    pub(crate) fn set_private(&mut self, private: KBox<P>) {
        let raw = self.raw();
        // SAFETY: the trigger is live and no one else uses it; its
        // private data is null or a `KBox<P>` it owns (invariant), taken
        // back here once, before another replaces it.
        unsafe {
            let old = (*raw).private_data.cast::<P>();
            if !old.is_null() {
                drop(KBox::from_raw(old));
            }
            // INVARIANT: from `KBox::into_raw()`, owned by the trigger.
            (*raw).private_data = KBox::into_raw(private).cast();
        }
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

    /// Puts the trigger on `file`'s trigger list at `end`, where the
    /// probe path sees it, with a reference of the list's own, and takes
    /// a trigger-mode reference on the file for it, as C's
    /// `register_trigger()` does. When the file refuses (its probe cannot
    /// be registered), takes the trigger off again and hands it back with
    /// the error (a negative errno).
    ///
    /// # Safety
    ///
    /// The trigger must be set up for `file` (its filter parsed for the
    /// file's event, its private data made for it): the probe path runs
    /// it on that event's records. Its command must have a `trigger()`,
    /// and a `count_func()` if the trigger was given a count
    /// ([`set_count`](Self::set_count)): the probe path calls them
    /// unchecked (`data_ops_trigger()`).
    pub(crate) unsafe fn list(
        self,
        held: EventMutexHeld<'_>,
        file: &EventFile,
        end: ListEnd,
    ) -> core::result::Result<Listed<P>, (Self, c_int)> {
        // The list's reference, dropped when the trigger is taken off it.
        self.get_ref(held);
        // SAFETY: the trigger is set up for `file` (this function's
        // contract), on no list (invariant), and stays live while listed:
        // the list holds a reference, which only `Unlisted::release()`
        // drops, once it is off the list.
        unsafe { file.add_trigger(held, &self, end) };
        file.update_cond_flag(held);
        let ret = file.trigger_mode_get(held);
        if ret < 0 {
            // SAFETY: put on `file`'s list just above, by this task, which
            // holds the list's lock (`held`).
            unsafe { crate::shim::rhist_list_del_rcu(self.list_entry()) };
            file.update_cond_flag(held);
            let _ = self.put_ref(held);
            // INVARIANT: on no list again (probes that saw it are waited
            // for when it is freed), with no reference counted.
            return Err((self, ret));
        }
        let data = self.0.data;
        core::mem::forget(self);
        // INVARIANT: on `file`'s list, with the list's reference, which
        // the result owns and which keeps the trigger live; the private
        // data is the trigger's still.
        Ok(Listed(TriggerRef(KeptTrigger {
            data,
            _private: PhantomData,
        })))
    }
}

impl<P> core::ops::Deref for NewTrigger<P> {
    type Target = TriggerData;

    fn deref(&self) -> &TriggerData {
        &self.0
    }
}

impl<P> Drop for NewTrigger<P> {
    fn drop(&mut self) {
        // SAFETY: the trigger is live, on no list and used by no one else,
        // its private data null or a `KBox<P>` it owns (invariant): this
        // frees both, once.
        drop(unsafe { free_trigger::<P>(self.0.data) });
    }
}

/// One reference on a trigger, owned, and through it the trigger's
/// private data `P`: what [`Listed`] and [`Unlisted`] hold. A reference
/// dropped instead of released keeps the trigger, on its list or not
/// (warned): releasing takes the lock.
///
/// # Invariants
///
/// The value owns one reference on the trigger, which keeps it live: a
/// trigger is freed only after its last reference is dropped.
struct TriggerRef<P>(KeptTrigger<P>);

// SAFETY: the value is a reference on a trigger, which may be used and
// dropped from any task (`TriggerData` is `Send` and `Sync`), and on its
// private data, as a `KBox<P>` would be.
unsafe impl<P: Send> Send for TriggerRef<P> {}
// SAFETY: shared access hands out `&TriggerData` (`Sync`) and `&P`.
unsafe impl<P: Sync> Sync for TriggerRef<P> {}

impl<P> TriggerRef<P> {
    /// The private data, if the trigger has any.
    fn private(&self) -> Option<&P> {
        self.0.private()
    }

    /// The trigger, the reference handed over to the caller.
    fn into_raw(self) -> NonNull<TriggerData> {
        let data = self.0.data;
        core::mem::forget(self);
        data
    }
}

impl<P> core::ops::Deref for TriggerRef<P> {
    type Target = TriggerData;

    fn deref(&self) -> &TriggerData {
        &self.0
    }
}

impl<P> Drop for TriggerRef<P> {
    fn drop(&mut self) {
        pr_warn!("a trigger reference was dropped, not released; the trigger stays\n");
    }
}

/// A trigger on its event file's list, holding the list's reference:
/// what a command's registry keeps for each trigger it attached, from
/// [`NewTrigger::list`] until it is taken out to be removed.
///
/// # Invariants
///
/// The trigger is on an event file's trigger list, and the reference is
/// the list's.
pub(crate) struct Listed<P>(TriggerRef<P>);

impl<P> Listed<P> {
    /// Takes the trigger off its file's list (`list_del_rcu()`), with the
    /// list's reference. Probes that saw it may still run it:
    /// [`Unlisted::release`] waits for them before it frees.
    ///
    /// The hold is borrowed `mut`: no walk's borrow of the trigger lives
    /// on, and once it is off its list (and out of its registry, where
    /// this value was) no walk finds it again.
    pub(crate) fn unlink(self, scope: &mut EventMutexScope<'_>) -> Unlisted<P> {
        let _held = scope.held();
        // SAFETY: the trigger is on a list (invariant), whose lock is held
        // (`_held`); the event path reads it as an RCU-sched reader, which
        // `list_del_rcu()` leaves able to go on.
        unsafe { crate::shim::rhist_list_del_rcu(self.0.list_entry()) };
        // INVARIANT: off its list just above, with the reference the list
        // held, handed over.
        Unlisted(self.0)
    }

    /// The trigger, once the tracing core took it off its list and handed
    /// its reference over (`clear_event_triggers()` calling `free()`).
    /// The hold is borrowed `mut`, as by [`unlink`](Self::unlink).
    ///
    /// # Safety
    ///
    /// The tracing core must have taken the trigger off its list, and
    /// handed the list's reference over.
    pub(crate) unsafe fn unlinked_by_core(self, _scope: &mut EventMutexScope<'_>) -> Unlisted<P> {
        // INVARIANT: the caller's contract.
        Unlisted(self.0)
    }
}

impl<P> core::ops::Deref for Listed<P> {
    type Target = TriggerData;

    fn deref(&self) -> &TriggerData {
        &self.0
    }
}

/// A trigger taken off its file's list, holding the reference the list
/// held: [`release`](Unlisted::release) drops it.
///
/// # Invariants
///
/// The trigger is on no list (probes that saw it may still run it), and
/// in no registry.
pub(crate) struct Unlisted<P>(TriggerRef<P>);

impl<P> Unlisted<P> {
    /// The private data, if the trigger has any.
    pub(crate) fn private(&self) -> Option<&P> {
        self.0.private()
    }

    /// Drops the reference; with the last one, frees the trigger (see
    /// [`free_trigger`]) and hands its private data back.
    ///
    /// Nothing that refers to the trigger outlives this: the value was
    /// made with the lock's hold borrowed `mut` ([`Listed::unlink`]),
    /// which ended every borrow a walk gave, and the trigger is on no
    /// list and in no registry, where a later walk would find it.
    pub(crate) fn release(self, held: EventMutexHeld<'_>) -> Option<KBox<P>> {
        self.release_with(held, |_| ())
    }

    /// [`release`](Self::release), running `last` on the private data
    /// first if this is the last reference, before the trigger is freed.
    pub(crate) fn release_with(
        self,
        held: EventMutexHeld<'_>,
        last: impl FnOnce(&P),
    ) -> Option<KBox<P>> {
        match self.0.put_ref(held) {
            Refs::Unbalanced => {
                pr_warn!("unbalanced trigger reference\n");
                self.0.into_raw();
                return None;
            }
            Refs::Left => {
                self.0.into_raw();
                return None;
            }
            Refs::Last => {}
        }
        if let Some(private) = self.private() {
            last(private);
        }
        let data = self.0.into_raw();
        // SAFETY: the last reference is gone; the trigger is on no list
        // (invariant), and nothing uses it after this (see `release()`);
        // its private data is its own (invariant of `TriggerRef`).
        unsafe { free_trigger::<P>(data) }
    }
}
