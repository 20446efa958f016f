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

use core::cell::UnsafeCell;

use kernel::bindings;
use kernel::error::Error;
use kernel::prelude::*;

use json::JsonFile;
use open::{RecordsAdapter, SingleAdapter};
use text::{DebugFile, HistFile};

/// A file's operations and its registration record, filled in at load time
/// with the module's owner pointer.
struct EventFile {
    fops: UnsafeCell<bindings::file_operations>,
    entry: UnsafeCell<bindings::trace_event_extra_file>,
}

// SAFETY: written only in `Registration::new()`, before the tracing core
// can see the file; read-only afterwards.
unsafe impl Sync for EventFile {}

impl EventFile {
    const fn new(name: &'static core::ffi::CStr, fops: bindings::file_operations) -> Self {
        Self {
            fops: UnsafeCell::new(fops),
            entry: UnsafeCell::new(bindings::trace_event_extra_file {
                name: name.as_ptr().cast(),
                mode: 0o440,
                fops: core::ptr::null(),
            }),
        }
    }
}

static HIST_FILE: EventFile = EventFile::new(
    crate::names::NAMES.command,
    SingleAdapter::<HistFile>::POLLED_FOPS,
);
static DEBUG_FILE: EventFile = EventFile::new(
    crate::names::NAMES.debug_file,
    SingleAdapter::<DebugFile>::FOPS,
);
static JSON_FILE: EventFile = EventFile::new(
    crate::names::NAMES.json_file,
    RecordsAdapter::<JsonFile>::FOPS,
);

/// The files, in the order they are added.
static FILES: [&EventFile; 3] = [&HIST_FILE, &DEBUG_FILE, &JSON_FILE];

/// The files, added to every event directory while this lives.
pub(crate) struct Registration(());

impl Registration {
    pub(crate) fn new(module: &'static ThisModule) -> Result<Self> {
        for file in FILES {
            // SAFETY: nothing else accesses the statics before they are added
            // below (see the `Sync` impl).
            unsafe {
                (*file.fops.get()).owner = module.as_ptr();
                (*file.entry.get()).fops = file.fops.get();
            }
        }
        for (i, file) in FILES.iter().enumerate() {
            // SAFETY: `file` is static and initialised.
            let ret = unsafe { bindings::trace_event_add_extra_file(file.entry.get()) };
            if ret == 0 {
                continue;
            }
            // SAFETY: `file` is static and initialised; its `name` is a
            // static C string.
            let name = unsafe { core::ffi::CStr::from_ptr((*file.entry.get()).name.cast()) };
            pr_err!(
                "cannot add the per-event file '{}' (error {ret})\n",
                name.to_str().unwrap_or("?")
            );
            for added in FILES[..i].iter().rev() {
                // SAFETY: added above.
                unsafe { bindings::trace_event_remove_extra_file(added.entry.get()) };
            }
            return Err(Error::from_errno(ret));
        }
        Ok(Self(()))
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        for file in FILES.iter().rev() {
            // SAFETY: all were added by `new()`. Open files pin the module.
            unsafe { bindings::trace_event_remove_extra_file(file.entry.get()) };
        }
    }
}
