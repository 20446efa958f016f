// SPDX-License-Identifier: GPL-2.0

//! The entries a rejected `rhist` command leaves in tracing/error_log, as
//! hist's `hist_err()` makes them: its messages, and where the caret goes.

use core::ptr;
use kernel::ffi::c_int;

use kernel::alloc::flags::GFP_KERNEL;
use kernel::bindings;
use kernel::prelude::*;

use crate::hist;
use crate::hist::error::{HistError, HistErrorKind};
use crate::tracefs::{self, ErrText, EventMutexHeld};

/// error_log messages of the trigger command, NUL-terminated, indexed as
/// C's `err_text[]`.
static ERRORS: [ErrText; hist::trigger::ERROR_COUNT] = {
    let mut table = [const { ErrText(ptr::null()) }; hist::trigger::ERROR_COUNT];
    let mut i = 0;
    while i < table.len() {
        table[i] = ErrText(hist::trigger::C_MESSAGES[i].as_ptr().cast());
        i += 1;
    }
    table
};

/// Logs `err` for the command `rhist:<text>` to tracing/error_log, if C
/// would log one, and returns its negative errno.
///
/// # Safety
///
/// `file` must be a live event file.
pub(super) unsafe fn reject(
    held: EventMutexHeld<'_>,
    file: *mut bindings::trace_event_file,
    text: &[u8],
    err: &HistError,
) -> c_int {
    if let Some(kind) = err.kind() {
        let entries = Iterator::chain(err.logged_before(), [(kind, err.pos())]);
        // SAFETY: `file` is live.
        unsafe { log_entries(held, file, text, entries) };
    }
    -err.errno()
}

/// Logs `entries` (kind and caret) for the command `rhist:<text>` on
/// `file`'s event to tracing/error_log, as hist's `hist_err()` does.
///
/// # Safety
///
/// `file` must be a live event file.
pub(super) unsafe fn log_entries(
    _held: EventMutexHeld<'_>,
    file: *mut bindings::trace_event_file,
    text: &[u8],
    entries: impl Iterator<Item = (HistErrorKind, usize)>,
) {
    let prefix = crate::names::NAMES.prefix.as_bytes();
    // SAFETY: `file` is live, and its event registered while the lock is
    // held (`_held`): throughout this call, which uses the names.
    let (system, event) = unsafe { tracefs::event_names(file) };
    let mut loc = KVec::new();
    let mut cmd = KVec::new();
    let built = (|| -> Result<(), kernel::alloc::AllocError> {
        for part in [prefix, system, b":", event, b"\0"] {
            loc.extend_from_slice(part, GFP_KERNEL)?;
        }
        for part in [prefix, text, b"\0"] {
            cmd.extend_from_slice(part, GFP_KERNEL)?;
        }
        Ok(())
    })();
    if built.is_ok() {
        for (kind, pos) in entries {
            // SAFETY: `file` is live; both strings are NUL-terminated.
            unsafe { tracefs::log_error(file, &loc, &cmd, &ERRORS, kind.c_index().into(), pos) };
        }
    }
}
