// SPDX-License-Identifier: GPL-2.0

//! The entries a rejected `rhist` command leaves in tracing/error_log, as
//! hist's `hist_err()` makes them: its messages, and where the caret goes.

use core::ptr;
use kernel::ffi::c_int;

use kernel::alloc::flags::GFP_KERNEL;
use kernel::error::code;
use kernel::prelude::*;

use crate::hist;
use crate::hist::error::{HistError, HistErrorKind};
use crate::tracefs::{ErrText, EventMutexHeld};
use crate::tracing::EventFile;

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

/// rhist's own error_log messages, for what hist cannot fail at: a map
/// (or its sketches) of the size the text asks for, which rhist allocates
/// in one piece when the trigger is made.
static RHIST_ERRORS: [ErrText; 2] = [
    ErrText(c"No error".as_ptr().cast()),
    ErrText(c"Couldn't allocate the histogram's memory".as_ptr().cast()),
];

/// Logs that the memory of the histogram `rhist:<text>` asks for could
/// not be had, the caret at the command's start, and returns `-ENOMEM`.
pub(super) fn no_map_memory(held: EventMutexHeld<'_>, file: &EventFile, text: &[u8]) -> c_int {
    log_with(held, file, text, &RHIST_ERRORS, [(1, 0)].into_iter());
    code::ENOMEM.to_errno()
}

/// Logs `err` for the command `rhist:<text>` to tracing/error_log, if C
/// would log one, and returns its negative errno.
pub(super) fn reject(
    held: EventMutexHeld<'_>,
    file: &EventFile,
    text: &[u8],
    err: &HistError,
) -> c_int {
    if let Some(kind) = err.kind() {
        let entries = Iterator::chain(err.logged_before(), [(kind, err.pos())]);
        log_entries(held, file, text, entries);
    }
    -err.errno()
}

/// Logs `entries` (kind and caret) for the command `rhist:<text>` on
/// `file`'s event to tracing/error_log, as hist's `hist_err()` does.
pub(super) fn log_entries(
    held: EventMutexHeld<'_>,
    file: &EventFile,
    text: &[u8],
    entries: impl Iterator<Item = (HistErrorKind, usize)>,
) {
    let entries = entries.map(|(kind, pos)| (usize::from(kind.c_index()), pos));
    log_with(held, file, text, &ERRORS, entries);
}

/// Logs `entries` (index into `errs` and caret) for the command
/// `rhist:<text>` on `file`'s event to tracing/error_log.
fn log_with(
    _held: EventMutexHeld<'_>,
    file: &EventFile,
    text: &[u8],
    errs: &[ErrText],
    entries: impl Iterator<Item = (usize, usize)>,
) {
    let prefix = crate::names::NAMES.prefix.as_bytes();
    let (system, event) = file.names();
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
            file.log_error(&loc, &cmd, errs, kind, pos);
        }
    }
}
