// SPDX-License-Identifier: GPL-2.0

//! The tracing core's C types as the shell uses them: the event mutex (a
//! guard, and [`EventMutexHeld`], the proof that it is held), an event
//! file's trigger list and events, seq_file output and tracing/error_log.
//! Most are `unsafe fn`s: their callers must show that the file is live;
//! those that need `event_mutex` take an [`EventMutexHeld`].

use core::fmt;
use core::marker::PhantomData;
use core::ptr;
use kernel::ffi::{c_char, c_int};

use kernel::bindings;
use kernel::str::CStr;

use crate::shim;

/// Holds `event_mutex`, the lock of every event file's trigger list.
///
/// # Invariants
///
/// This task holds `event_mutex` until the guard is dropped.
pub(crate) struct EventMutexGuard {
    _not_send: PhantomData<*mut ()>,
}

impl EventMutexGuard {
    /// Takes `event_mutex`; sleeps.
    pub(crate) fn lock() -> Self {
        // SAFETY: `event_mutex` is a static, initialised mutex of the kernel.
        unsafe { bindings::mutex_lock(ptr::addr_of_mut!(bindings::event_mutex)) };
        // INVARIANT: taken just above; released only by `drop()`.
        Self {
            _not_send: PhantomData,
        }
    }

    /// The proof that the lock is held, for as long as the guard is
    /// borrowed.
    pub(crate) fn held(&self) -> EventMutexHeld<'_> {
        // INVARIANT: the guard holds the lock until it is dropped, which
        // the borrow rules out for `'_` (invariant of `Self`).
        EventMutexHeld(PhantomData)
    }
}

impl Drop for EventMutexGuard {
    fn drop(&mut self) {
        // SAFETY: this task holds `event_mutex` (invariant).
        unsafe { bindings::mutex_unlock(ptr::addr_of_mut!(bindings::event_mutex)) };
    }
}

/// Proof that this task holds `event_mutex` for `'a`: what a function
/// that needs the lock takes, as the kernel crate's locked data takes a
/// guard. From [`EventMutexGuard::held`], or [`EventMutexHeld::assume`]
/// in a callback that the tracing core calls with the lock held.
///
/// # Invariants
///
/// This task holds `event_mutex` for all of `'a`.
#[derive(Clone, Copy)]
pub(crate) struct EventMutexHeld<'a>(PhantomData<(&'a (), *mut ())>);

impl<'a> EventMutexHeld<'a> {
    /// The proof, for a caller that knows the lock is held; checked under
    /// lockdep.
    ///
    /// # Safety
    ///
    /// This task must hold `event_mutex` for all of `'a`.
    pub(crate) unsafe fn assume() -> Self {
        assert_event_mutex_held();
        // INVARIANT: the caller's contract.
        EventMutexHeld(PhantomData)
    }
}

/// Asserts (under lockdep) that `event_mutex` is held.
pub(crate) fn assert_event_mutex_held() {
    // SAFETY: no preconditions; it only checks.
    unsafe { shim::rhist_lockdep_assert_event_mutex_held() };
}

/// C's `event_file_file()`: the event file behind `filp`, an open file of
/// an event directory, or null once the event is being removed. A file
/// it returns is live for `'a`.
///
/// # Safety
///
/// `filp` must be open, or being opened, on a file of an event directory.
pub(crate) unsafe fn event_file<'a>(
    _held: EventMutexHeld<'a>,
    filp: *mut bindings::file,
) -> *mut bindings::trace_event_file {
    // SAFETY: `filp` is such a file (the caller's contract), and the lock
    // the callee needs is held (`_held`).
    unsafe { shim::rhist_event_file_file(filp) }
}

/// Takes one more trigger-mode reference on `file` for a trigger being
/// attached: C's `trace_event_trigger_enable_disable(file, 1)`, undone
/// when it fails.
///
/// When the event's probe cannot be registered (out of memory), the
/// tracing core returns the error with its counts (`tm_ref`, `sm_ref`)
/// taken and the event in soft mode for good, whatever the caller does.
/// No probe was registered, so dropping them again with the matching
/// disable call restores the event exactly.
///
/// # Safety
///
/// `file` must be live.
pub(crate) unsafe fn trigger_mode_get(
    _held: EventMutexHeld<'_>,
    file: *mut bindings::trace_event_file,
) -> c_int {
    // SAFETY: `file` is live (the caller's contract), and the lock the
    // callee needs is held (`_held`).
    let ret = unsafe { bindings::trace_event_trigger_enable_disable(file, 1) };
    if ret < 0 {
        // SAFETY: as above; drops the references the failed call took.
        unsafe { bindings::trace_event_trigger_enable_disable(file, 0) };
    }
    ret
}

/// Holds `file` in soft mode once more: C's
/// `trace_event_enable_disable(file, 1, 1)`, undone when it fails (see
/// [`trigger_mode_get`]).
///
/// # Safety
///
/// `file` must be live.
pub(crate) unsafe fn soft_mode_get(
    _held: EventMutexHeld<'_>,
    file: *mut bindings::trace_event_file,
) -> c_int {
    // SAFETY: `file` is live (the caller's contract), and the lock the
    // callee needs is held (`_held`).
    let ret = unsafe { bindings::trace_event_enable_disable(file, 1, 1) };
    if ret < 0 {
        // SAFETY: as above; drops the reference the failed call took.
        unsafe { bindings::trace_event_enable_disable(file, 0, 1) };
    }
    ret
}

/// Drops the reference [`soft_mode_get`] took: C's
/// `trace_event_enable_disable(file, 0, 1)`.
///
/// # Safety
///
/// `file` must be live, and held in soft mode by the caller.
pub(crate) unsafe fn soft_mode_put(
    _held: EventMutexHeld<'_>,
    file: *mut bindings::trace_event_file,
) {
    // SAFETY: `file` is live (the caller's contract), and the lock the
    // callee needs is held (`_held`).
    unsafe { bindings::trace_event_enable_disable(file, 0, 1) };
}

/// Drops the reference [`trigger_mode_get`] took: C's
/// `trace_event_trigger_enable_disable(file, 0)`.
///
/// # Safety
///
/// `file` must be live, with a trigger-mode reference of the caller.
pub(crate) unsafe fn trigger_mode_put(
    _held: EventMutexHeld<'_>,
    file: *mut bindings::trace_event_file,
) {
    // SAFETY: `file` is live (the caller's contract), and the lock the
    // callee needs is held (`_held`).
    unsafe { bindings::trace_event_trigger_enable_disable(file, 0) };
}

/// C's `update_cond_flag()`: whether `file`'s triggers need the record.
///
/// # Safety
///
/// `file` must be live.
pub(crate) unsafe fn update_cond_flag(
    _held: EventMutexHeld<'_>,
    file: *mut bindings::trace_event_file,
) {
    // SAFETY: `file` is live (the caller's contract), and the lock the
    // callee needs is held (`_held`).
    unsafe { bindings::update_cond_flag(file) };
}

/// Where [`add_trigger()`] puts a trigger on its file's list.
pub(crate) enum ListEnd {
    /// First, as the tracing core's enable commands add theirs.
    Head,
    /// Last, as hist adds its triggers: the files list them in that order.
    Tail,
}

/// Adds `data` to `file`'s trigger list at `end`, where the probe path
/// sees it: `list_add_rcu()` or `list_add_tail_rcu()`.
///
/// # Safety
///
/// `file` must be live, and `data` a live trigger set up for it, on no
/// list.
pub(crate) unsafe fn add_trigger(
    _held: EventMutexHeld<'_>,
    file: *mut bindings::trace_event_file,
    data: *mut bindings::event_trigger_data,
    end: ListEnd,
) {
    // SAFETY: `data` and `file` are live (the caller's contract), and
    // `data` on no list; the list's lock is held (`_held`).
    unsafe {
        let (entry, head) = (
            ptr::addr_of_mut!((*data).list),
            ptr::addr_of_mut!((*file).triggers),
        );
        match end {
            ListEnd::Head => shim::rhist_list_add_rcu(entry, head),
            ListEnd::Tail => shim::rhist_list_add_tail_rcu(entry, head),
        }
    };
}

/// Takes `data` off its file's trigger list: `list_del_rcu()`. Probes
/// that saw it may still run it: the tracing core's `trigger_data_free()`
/// waits for them.
///
/// # Safety
///
/// `data` must be on the trigger list of a live event file.
pub(crate) unsafe fn del_trigger(
    _held: EventMutexHeld<'_>,
    data: *mut bindings::event_trigger_data,
) {
    // SAFETY: `data` is on a list (the caller's contract) whose lock is
    // held (`_held`); the event path reads it as an RCU-sched reader.
    unsafe { shim::rhist_list_del_rcu(ptr::addr_of_mut!((*data).list)) };
}

/// The triggers attached to `file`, in list order. Each is live while it
/// is on the list: for `'a`, unless this task unlinks it.
///
/// # Safety
///
/// `file` must be a live event file, and the caller must not unlink the
/// entry it is looking at before advancing.
pub(crate) unsafe fn triggers<'a>(
    _held: EventMutexHeld<'a>,
    file: *mut bindings::trace_event_file,
) -> impl Iterator<Item = *mut bindings::event_trigger_data> + 'a {
    // SAFETY: `file` is live (the caller's contract).
    let head = unsafe { ptr::addr_of_mut!((*file).triggers) };
    // SAFETY: `head` is an initialised list head.
    let mut node = unsafe { (*head).next };
    core::iter::from_fn(move || {
        if node == head {
            return None;
        }
        // SAFETY: every node on `file->triggers` is the `list` member of an
        // `event_trigger_data`, kept on it by the lock held for `'a`
        // (`_held`), unless the caller unlinks it: not before advancing.
        let data =
            unsafe { kernel::container_of!(node, bindings::event_trigger_data, list).cast_mut() };
        // SAFETY: `node` is not `head`, so it is the `list` of that entry,
        // still linked (the caller unlinks it only after this read) under
        // the lock held for `'a`: its `next` is an initialised pointer.
        node = unsafe { (*node).next };
        Some(data)
    })
}

/// Whether the instance `tr` has the event `system`.`event`: C's
/// `__find_event_file()`, which hist's `event_file()` uses.
///
/// # Safety
///
/// `tr` must be a live trace array.
pub(crate) unsafe fn has_event(
    held: EventMutexHeld<'_>,
    tr: *mut bindings::trace_array,
    system: &str,
    event: &str,
) -> bool {
    // SAFETY: the caller's contract is ours.
    !unsafe { find_event_file(held, tr, system, event) }.is_null()
}

/// C's `__find_event_file()`: the file of the event `system`.`event` in
/// the instance `tr`, or null. The file is live for `'a`: an event is
/// removed only with the lock held.
///
/// # Safety
///
/// `tr` must be a live trace array.
pub(crate) unsafe fn find_event_file<'a>(
    _held: EventMutexHeld<'a>,
    tr: *mut bindings::trace_array,
    system: &str,
    event: &str,
) -> *mut bindings::trace_event_file {
    // SAFETY: `tr` is live (the caller's contract).
    let head = unsafe { ptr::addr_of_mut!((*tr).events) };
    // SAFETY: `head` is an initialised list head.
    let mut node = unsafe { (*head).next };
    while node != head {
        // SAFETY: every node on `tr->events` is the `list` member of an
        // event file, kept on the list by the lock held (`_held`).
        let file =
            unsafe { kernel::container_of!(node, bindings::trace_event_file, list).cast_mut() };
        // SAFETY: as above; a listed file points at its live event call.
        let has_class = unsafe { !(*(*file).event_call).class.is_null() };
        if has_class {
            // SAFETY: the file is live with its event while the lock is
            // held, and the names are only compared here.
            let (s, e) = unsafe { event_names(file) };
            if !e.is_empty() && s == system.as_bytes() && e == event.as_bytes() {
                return file;
            }
        }
        // SAFETY: `node` is not `head`, so it is the `list` of that file,
        // kept linked by the lock held (`_held`): its `next` is an
        // initialised pointer.
        node = unsafe { (*node).next };
    }
    ptr::null_mut()
}

/// The triggers attached to `file`, for an RCU-sched reader: C's
/// `list_for_each_entry_rcu()`.
///
/// # Safety
///
/// `file` must be live, and the caller an RCU-sched reader (a probe) for
/// as long as the iterator and the pointers it yields are used.
pub(crate) unsafe fn triggers_rcu(
    file: *mut bindings::trace_event_file,
) -> impl Iterator<Item = *mut bindings::event_trigger_data> {
    // SAFETY: `file` is live (the caller's contract).
    let head = unsafe { ptr::addr_of_mut!((*file).triggers) };
    // SAFETY: `head` is an initialised list head; writers publish nodes
    // with `list_add_rcu()`, so a node read here is initialised.
    let mut node = unsafe { ptr::read_volatile(ptr::addr_of!((*head).next)) };
    core::iter::from_fn(move || {
        if node == head {
            return None;
        }
        // SAFETY: every node on `file->triggers` is the `list` member of an
        // `event_trigger_data`, freed only after RCU-sched readers finish.
        let data =
            unsafe { kernel::container_of!(node, bindings::event_trigger_data, list).cast_mut() };
        // SAFETY: `node` is a listed entry's `list`, not freed before this
        // RCU-sched reader ends (the caller's read section); its `next` is
        // read once, as `rcu_dereference()` does.
        node = unsafe { ptr::read_volatile(ptr::addr_of!((*node).next)) };
        Some(data)
    })
}

/// `"system:event"` parts of an event file's name.
///
/// # Safety
///
/// `file` must be a live event file whose event stays registered for
/// `'a`: the names belong to it.
pub(crate) unsafe fn event_names<'a>(
    file: *mut bindings::trace_event_file,
) -> (&'a [u8], &'a [u8]) {
    // SAFETY: a live event file points at its live event call and class.
    let (system, name) = unsafe {
        let call = (*file).event_call;
        ((*(*call).class).system, shim::rhist_trace_event_name(call))
    };
    let text = |p: *const c_char| -> &'a [u8] {
        if p.is_null() {
            return b"";
        }
        // SAFETY: event names are NUL-terminated strings that live as long
        // as the event, which lives for `'a` (the caller's contract).
        unsafe { CStr::from_char_ptr(p) }.as_bytes()
    };
    (text(system), text(name))
}

/// Formatted output into a `seq_file`.
///
/// # Invariants
///
/// `m` is a seq_file being shown for as long as the writer is used.
pub(crate) struct SeqWriter {
    m: *mut bindings::seq_file,
}

impl SeqWriter {
    /// Wraps `m`.
    ///
    /// # Safety
    ///
    /// `m` must be a seq_file being shown for as long as the writer is used.
    pub(crate) unsafe fn new(m: *mut bindings::seq_file) -> Self {
        // INVARIANT: the caller's contract.
        Self { m }
    }

    /// Writes raw bytes.
    pub(crate) fn bytes(&mut self, bytes: &[u8]) {
        // SAFETY: `self.m` is a seq_file being shown (type invariant); the
        // buffer is valid for `bytes.len()` bytes. Overflow is recorded in
        // the seq_file, which then retries with a larger buffer.
        unsafe { bindings::seq_write(self.m, bytes.as_ptr().cast(), bytes.len()) };
    }

    /// Whether the seq_file's buffer was too small for what was written
    /// (`seq_has_overflowed()`): seq_file then shows the record again
    /// with a buffer twice as large, and what is written after it is lost.
    pub(crate) fn overflowed(&self) -> bool {
        // SAFETY: `self.m` is a seq_file being shown (type invariant):
        // seq_read_iter() holds its lock for the show, so no one else
        // changes its count or size meanwhile.
        unsafe { (*self.m).count == (*self.m).size }
    }

    /// When the seq_file's buffer is smaller than `need` bytes, marks it
    /// overflowed, as a write past its end does (seq_file's own
    /// `seq_set_overflow()`), without writing: the show is retried with
    /// a buffer twice as large. Returns whether it did.
    pub(crate) fn overflow_below(&mut self, need: usize) -> bool {
        // SAFETY: `self.m` is a seq_file being shown (type invariant):
        // seq_read_iter() holds its lock for the show, which may set the
        // count; count == size is how seq_file records an overflow, and
        // seq_read_iter() then frees the buffer and shows again.
        unsafe {
            if (*self.m).size >= need {
                return false;
            }
            (*self.m).count = (*self.m).size;
        }
        true
    }
}

impl fmt::Write for SeqWriter {
    /// Fails once the buffer has overflowed: what follows would be lost,
    /// so the writer's caller may stop.
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.bytes(s.as_bytes());
        if self.overflowed() {
            return Err(fmt::Error);
        }
        Ok(())
    }
}

/// Appends an entry to tracing/error_log, as the built-in commands do.
///
/// `errs` is a table of messages and `kind` the index of this one; the
/// log copies the message (patch 0001), so nothing of ours is kept.
///
/// # Safety
///
/// `file` must be a live event file; `loc` and `cmd` NUL-terminated.
pub(crate) unsafe fn log_error(
    file: *mut bindings::trace_event_file,
    loc: &[u8],
    cmd: &[u8],
    errs: &[ErrText],
    kind: usize,
    pos: usize,
) {
    debug_assert!(loc.ends_with(&[0]) && cmd.ends_with(&[0]));
    // SAFETY: `file` is live, and so is its trace array; `loc` and `cmd`
    // are NUL-terminated; the callee copies them and `errs[kind]`, which
    // is a NUL-terminated message (see `ErrText`).
    unsafe {
        bindings::tracing_log_err(
            (*file).tr,
            loc.as_ptr().cast(),
            cmd.as_ptr().cast(),
            errs.as_ptr().cast_mut().cast(),
            kind as u8,
            pos.min(u16::MAX as usize) as u16,
        )
    };
}

/// A pointer to a static NUL-terminated message, as error_log tables hold.
#[repr(transparent)]
pub(crate) struct ErrText(pub(crate) *const c_char);

// SAFETY: the pointers refer to immutable static strings.
unsafe impl Sync for ErrText {}
