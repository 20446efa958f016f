// SPDX-License-Identifier: GPL-2.0

//! The per-event files `rhist`, `rhist_debug` and `rhist_json` (`hist`,
//! `hist_debug` and `hist_json` in hist's place, see
//! [`crate::names::NAMES`]): they appear in every event directory while
//! the module is loaded and show the event's rhist triggers, as `hist` and
//! `hist_debug` show its hist triggers, and as one JSON document
//! ([`crate::hist::json`]). The `hist` file can be polled, as hist's:
//! readable once the event's histograms changed since the file was last
//! read, and `EPOLLPRI` once they changed since it was last read or
//! polled.
//!
//! Here, their registration; in [`text`], the text files; in [`json`],
//! the JSON file; in [`open`], what they share. Each imports only the
//! one below it.

mod json;
mod open;
mod text;

use core::ffi::CStr;

use kernel::bindings;
use kernel::error::Error;
use kernel::prelude::*;

use json::JsonFile;
use open::{RecordsAdapter, SingleAdapter};
use text::{DebugFile, HistFile};

/// A file of every event directory, as C's tracing core adds it
/// (`struct trace_event_extra_file`): its name, mode and operations.
///
/// # Invariants
///
/// - It is never written, and it points only at static data that is
///   never written: its name, a C string, and its operations, if any.
/// - Its operations, if any, are those of an adapter of [`open`], whose
///   callbacks expect the files of event directories (the inode's private
///   data the event file, as eventfs leaves it).
pub(crate) struct ExtraFile {
    entry: bindings::trace_event_extra_file,
    name: &'static CStr,
}

// SAFETY: a shared reference only reads it, and what it points at, which
// no one writes (invariant).
unsafe impl Sync for ExtraFile {}

impl ExtraFile {
    /// The file `name`, shown by `fops`, an adapter's operations, if any:
    /// private to this module, whose statics below pass only the
    /// adapters' `FOPS`.
    const fn new(name: &'static CStr, fops: Option<&'static bindings::file_operations>) -> Self {
        // INVARIANT: `name` and `fops` are static and shared, so never
        // written; `fops` is an adapter's (the callers, below), or none.
        Self {
            entry: bindings::trace_event_extra_file {
                name: name.as_ptr().cast(),
                mode: 0o440,
                fops: match fops {
                    Some(fops) => fops,
                    None => core::ptr::null(),
                },
            },
            name,
        }
    }

    /// The file `name` without operations: an open of it fails
    /// (`ENODEV`).
    pub(crate) const fn without_ops(name: &'static CStr) -> Self {
        Self::new(name, None)
    }

    /// Adds the file to every event directory, until the result is
    /// dropped.
    pub(crate) fn add(&'static self) -> Result<Added> {
        // SAFETY: C keeps the entry until it is removed, and `self` is
        // static; its name is a C string and its operations, if any, an
        // adapter's, for the files of event directories (invariant), which
        // are the only files C opens with them.
        let ret = unsafe { bindings::trace_event_add_extra_file(&self.entry) };
        if ret != 0 {
            return Err(Error::from_errno(ret));
        }
        Ok(Added(self))
    }
}

/// An [`ExtraFile`] added to every event directory, removed when dropped.
pub(crate) struct Added(&'static ExtraFile);

impl Drop for Added {
    fn drop(&mut self) {
        // SAFETY: the entry is static (`ExtraFile::add()`); C drops its
        // pointer to it, and only that one. Open files pin the module.
        unsafe { bindings::trace_event_remove_extra_file(&self.0.entry) };
    }
}

static HIST_FILE: ExtraFile = ExtraFile::new(
    crate::names::NAMES.command,
    Some(&SingleAdapter::<HistFile>::POLLED_FOPS),
);
static DEBUG_FILE: ExtraFile = ExtraFile::new(
    crate::names::NAMES.debug_file,
    Some(&SingleAdapter::<DebugFile>::FOPS),
);
static JSON_FILE: ExtraFile = ExtraFile::new(
    crate::names::NAMES.json_file,
    Some(&RecordsAdapter::<JsonFile>::FOPS),
);

/// The files, added to every event directory while this lives; removed
/// in the reverse order (the fields' order).
pub(crate) struct Registration {
    _json: Added,
    _debug: Added,
    _hist: Added,
}

impl Registration {
    pub(crate) fn new() -> Result<Self> {
        let add = |file: &'static ExtraFile| {
            file.add().inspect_err(|e| {
                pr_err!(
                    "cannot add the per-event file '{}' (error {})\n",
                    file.name.to_str().unwrap_or("?"),
                    e.to_errno()
                )
            })
        };
        // A failure drops the files added before, in the reverse order.
        let hist = add(&HIST_FILE)?;
        let debug = add(&DEBUG_FILE)?;
        let json = add(&JSON_FILE)?;
        Ok(Self {
            _json: json,
            _debug: debug,
            _hist: hist,
        })
    }
}
