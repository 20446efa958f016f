// SPDX-License-Identifier: GPL-2.0

//! The tracing core's C types as the shell uses them: the event mutex (a
//! guard), an event file's trigger list and events, seq_file output and
//! tracing/error_log. Most are `unsafe fn`s: their callers must show that
//! the file is live and, where a function says so, that `event_mutex` is
//! held.

use core::fmt;
use core::ptr;
use kernel::ffi::{c_char, c_int};

use kernel::bindings;
use kernel::str::CStr;

use crate::shim;

/// Holds `event_mutex`, the lock of every event file's trigger list.
pub(crate) struct EventMutexGuard(());

impl EventMutexGuard {
    /// Takes `event_mutex`; sleeps.
    pub(crate) fn lock() -> Self {
        // SAFETY: `event_mutex` is a static, initialised mutex of the kernel.
        unsafe { bindings::mutex_lock(ptr::addr_of_mut!(bindings::event_mutex)) };
        Self(())
    }
}

impl Drop for EventMutexGuard {
    fn drop(&mut self) {
        // SAFETY: the guard exists only while this task holds `event_mutex`.
        unsafe { bindings::mutex_unlock(ptr::addr_of_mut!(bindings::event_mutex)) };
    }
}

/// Asserts (under lockdep) that `event_mutex` is held.
pub(crate) fn assert_event_mutex_held() {
    // SAFETY: no preconditions; it only checks.
    unsafe { shim::rhist_lockdep_assert_event_mutex_held() };
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
/// `file` must be live and `event_mutex` held.
pub(crate) unsafe fn trigger_mode_get(file: *mut bindings::trace_event_file) -> c_int {
    // SAFETY: the caller's contract.
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
/// `file` must be live and `event_mutex` held.
pub(crate) unsafe fn soft_mode_get(file: *mut bindings::trace_event_file) -> c_int {
    // SAFETY: the caller's contract.
    let ret = unsafe { bindings::trace_event_enable_disable(file, 1, 1) };
    if ret < 0 {
        // SAFETY: as above; drops the reference the failed call took.
        unsafe { bindings::trace_event_enable_disable(file, 0, 1) };
    }
    ret
}

/// The triggers attached to `file`, in list order.
///
/// # Safety
///
/// `file` must be a live event file and `event_mutex` must be held for as
/// long as the iterator and the pointers it yields are used; the caller
/// must not unlink the entry it is looking at before advancing.
pub(crate) unsafe fn triggers(
    file: *mut bindings::trace_event_file,
) -> impl Iterator<Item = *mut bindings::event_trigger_data> {
    // SAFETY: `file` is live (the caller's contract).
    let head = unsafe { ptr::addr_of_mut!((*file).triggers) };
    // SAFETY: `head` is an initialised list head.
    let mut node = unsafe { (*head).next };
    core::iter::from_fn(move || {
        if node == head {
            return None;
        }
        // SAFETY: every node on `file->triggers` is the `list` member of an
        // `event_trigger_data`, kept alive by `event_mutex`.
        let data = unsafe {
            node.cast::<u8>()
                .sub(core::mem::offset_of!(bindings::event_trigger_data, list))
                .cast::<bindings::event_trigger_data>()
        };
        // SAFETY: as above; the node is live.
        node = unsafe { (*node).next };
        Some(data)
    })
}

/// Whether the instance `tr` has the event `system`.`event`: C's
/// `__find_event_file()`, which hist's `event_file()` uses.
///
/// # Safety
///
/// `tr` must be a live trace array, and `event_mutex` held, which keeps
/// its event list as it is.
pub(crate) unsafe fn has_event(tr: *mut bindings::trace_array, system: &str, event: &str) -> bool {
    // SAFETY: the caller's contract is ours.
    !unsafe { find_event_file(tr, system, event) }.is_null()
}

/// C's `__find_event_file()`: the file of the event `system`.`event` in
/// the instance `tr`, or null.
///
/// # Safety
///
/// As for [`has_event`]; the file stays live while `event_mutex` is held.
pub(crate) unsafe fn find_event_file(
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
        // event file, kept on the list by `event_mutex`.
        let file = unsafe {
            node.cast::<u8>()
                .sub(core::mem::offset_of!(bindings::trace_event_file, list))
                .cast::<bindings::trace_event_file>()
        };
        // SAFETY: as above; a listed file points at its live event call.
        let has_class = unsafe { !(*(*file).event_call).class.is_null() };
        if has_class {
            // SAFETY: the file is live with its event while `event_mutex`
            // is held, and the names are only compared here.
            let (s, e) = unsafe { event_names(file) };
            if !e.is_empty() && s == system.as_bytes() && e == event.as_bytes() {
                return file;
            }
        }
        // SAFETY: as above; the node is live.
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
        let data = unsafe {
            node.cast::<u8>()
                .sub(core::mem::offset_of!(bindings::event_trigger_data, list))
                .cast::<bindings::event_trigger_data>()
        };
        // SAFETY: as above; `rcu_dereference()` of the next pointer.
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
pub(crate) struct SeqWriter(*mut bindings::seq_file);

impl SeqWriter {
    /// Wraps `m`.
    ///
    /// # Safety
    ///
    /// `m` must be a seq_file being shown for as long as the writer is used.
    pub(crate) unsafe fn new(m: *mut bindings::seq_file) -> Self {
        Self(m)
    }

    /// Writes raw bytes.
    pub(crate) fn bytes(&mut self, bytes: &[u8]) {
        // SAFETY: `self.0` is a seq_file being shown (type invariant); the
        // buffer is valid for `bytes.len()` bytes. Overflow is recorded in
        // the seq_file, which then retries with a larger buffer.
        unsafe { bindings::seq_write(self.0, bytes.as_ptr().cast(), bytes.len()) };
    }
}

impl fmt::Write for SeqWriter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.bytes(s.as_bytes());
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
