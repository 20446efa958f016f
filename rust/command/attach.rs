// SPDX-License-Identifier: GPL-2.0

//! Attaching an rhist trigger to its event file, and detaching it: its
//! filter, the trace clock, the file's trigger list and the registry.

use core::ptr;
use kernel::ffi::c_void;

use kernel::alloc::flags::GFP_KERNEL;
use kernel::bindings;
use kernel::error::{code, Error};
use kernel::prelude::*;

use super::lifetime::put;
use super::state::{BuildError, Trigger};
use super::{state, Rhist, REGISTRY};
use crate::hist::error::{HistError, HistErrorKind};
use crate::hist::grammar::TriggerSpec;
use crate::tracefs::{self, EventMutexHeld};
use crate::trigger_cmd::{get_ref, Command};

/// What attaching a trigger needs of its text, in buffers of its own.
pub(super) struct AttachSetup {
    /// The filter, NUL-terminated; empty for none.
    filter: KVec<u8>,
    /// The trace clock (`clock=`, or the instance's), NUL-terminated.
    clock: KVec<u8>,
    /// Where an unknown clock's error points.
    clock_pos: usize,
    paused: bool,
}

impl AttachSetup {
    pub(super) fn new(spec: &TriggerSpec<'_>) -> Result<Self, BuildError> {
        let mut filter = KVec::new();
        if let Some(text) = spec.filter() {
            filter.extend_from_slice(text.as_bytes(), GFP_KERNEL)?;
            filter.push(0, GFP_KERNEL)?;
        }
        let mut clock = KVec::new();
        clock.extend_from_slice(spec.clock().as_bytes(), GFP_KERNEL)?;
        clock.push(0, GFP_KERNEL)?;
        Ok(AttachSetup {
            filter,
            clock,
            clock_pos: spec.errpos(spec.clock()),
            paused: spec.pause(),
        })
    }
}

/// Filters and attaches a new trigger. When its histogram reads
/// timestamps, sets the instance's trace clock and has events written
/// straight to the ring buffer while the trigger lives, as hist does; a
/// clock the instance does not know fails with hist's `SET_CLOCK_FAIL`.
///
/// # Safety
///
/// Called from `parse()` with its arguments.
pub(super) unsafe fn attach(
    held: EventMutexHeld<'_>,
    cmd_ops: *mut bindings::event_command,
    file: *mut bindings::trace_event_file,
    trigger: KBox<Trigger>,
    mut setup: AttachSetup,
) -> Result<(), BuildError> {
    let uses_timestamps = trigger.data().uses_timestamps();
    // Room in the registry first: after attaching, nothing may fail.
    REGISTRY.reserve(held, 1)?;

    // SAFETY: `cmd_ops` is our command; no count parameter.
    let data = unsafe {
        bindings::trigger_data_alloc(cmd_ops, ptr::null_mut(), ptr::null_mut(), ptr::null_mut())
    };
    if data.is_null() {
        return Err(code::ENOMEM.into());
    }
    // SAFETY: `data` is ours until attached; it owns the trigger from here.
    unsafe {
        (*data).private_data = KBox::into_raw(trigger).cast::<c_void>();
        (*data).paused = setup.paused;
    }
    // Hold a reference while setting up, so a failure frees exactly once.
    // SAFETY: `data` is a valid trigger of ours.
    unsafe { get_ref(held, data) };

    // SAFETY: the filter is a NUL-terminated copy of our own, which
    // `set_trigger_filter()` may cut up; `data` and `file` are live.
    let ret = unsafe {
        if setup.filter.is_empty() {
            0
        } else {
            bindings::set_trigger_filter(setup.filter.as_mut_ptr().cast(), data, file)
        }
    };
    let mut result = if ret < 0 {
        Err(BuildError::Kernel(Error::from_errno(ret)))
    } else {
        Ok(())
    };
    if result.is_ok() && uses_timestamps {
        // SAFETY: `file` is live; the clock name is NUL-terminated.
        let ret = unsafe { bindings::tracing_set_clock((*file).tr, setup.clock.as_ptr().cast()) };
        if ret < 0 {
            let err = HistError::with_errno(HistErrorKind::SetClockFail, setup.clock_pos, -ret);
            result = Err(BuildError::Hist(err));
        } else {
            // SAFETY: `file` is live; `detach()` (or the failure below)
            // drops this reference.
            unsafe { bindings::tracing_set_filter_buffering((*file).tr, true) };
        }
    }
    if result.is_ok() {
        // SAFETY: `data` is set up for the live `file`.
        let ret = unsafe { Rhist::register(held, data, file) };
        if ret < 0 {
            if uses_timestamps {
                // SAFETY: taken above.
                unsafe { bindings::tracing_set_filter_buffering((*file).tr, false) };
            }
            result = Err(BuildError::Kernel(Error::from_errno(ret)));
        }
    }
    // SAFETY: drops the setup reference; on failure this frees everything.
    unsafe { put(held, data) };
    result
}

/// Unlinks `data` from its event file, as the tracing core's own
/// unregistration does.
///
/// # Safety
///
/// `data` must be a live rhist trigger on its file's list.
pub(super) unsafe fn detach(held: EventMutexHeld<'_>, data: *mut bindings::event_trigger_data) {
    // SAFETY: `data` is a live rhist trigger (the caller's contract).
    let trigger = unsafe { state(held, data) };
    // The trigger references its file, so the file is live throughout.
    let file = trigger.file;
    // SAFETY: `data` is on the list of its live file.
    unsafe { tracefs::del_trigger(held, data) };
    // SAFETY: `file` is live; this drops the soft enable `reg()` took.
    unsafe { tracefs::trigger_mode_put(held, file) };
    // SAFETY: `file` is live.
    unsafe { tracefs::update_cond_flag(held, file) };
    if trigger.data().uses_timestamps() {
        // SAFETY: `file` is live, so is its trace array; this drops the
        // reference `attach()` took for this trigger.
        unsafe { bindings::tracing_set_filter_buffering((*file).tr, false) };
    }
}

/// Detaches and drops one trigger.
///
/// # Safety
///
/// `data` must be a live rhist trigger on its file.
pub(super) unsafe fn unregister_one(
    held: EventMutexHeld<'_>,
    data: *mut bindings::event_trigger_data,
) {
    // SAFETY: `data` is a live rhist trigger on its file (the caller's
    // contract, which is `detach()`'s).
    unsafe { detach(held, data) };
    // SAFETY: `data` is detached and still holds the reference its
    // file's list held.
    unsafe { put(held, data) };
}
