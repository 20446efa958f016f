// SPDX-License-Identifier: GPL-2.0

//! Attaching an rhist trigger to its event file, and detaching it: its
//! filter, the trace clock, the file's trigger list and the registry.

use kernel::ffi::c_void;

use kernel::alloc::flags::GFP_KERNEL;
use kernel::bindings;
use kernel::error::Error;
use kernel::prelude::*;

use super::lifetime::put;
use super::state::{BuildError, Trigger};
use super::{state, Rhist, REGISTRY};
use crate::hist::error::{HistError, HistErrorKind};
use crate::hist::grammar::TriggerSpec;
use crate::tracefs::EventMutexHeld;
use crate::tracing::{EventFile, NewTrigger, TriggerData};
use crate::trigger_cmd::Command;

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

/// Filters and attaches a new trigger of `cmd_ops` (this command). When
/// its histogram reads timestamps, sets the instance's trace clock and
/// has events written straight to the ring buffer while the trigger
/// lives, as hist does; a clock the instance does not know fails with
/// hist's `SET_CLOCK_FAIL`.
pub(super) fn attach(
    held: EventMutexHeld<'_>,
    cmd_ops: *mut bindings::event_command,
    file: &EventFile,
    trigger: KBox<Trigger>,
    mut setup: AttachSetup,
) -> Result<(), BuildError> {
    let uses_timestamps = trigger.data().uses_timestamps();
    // Room in the registry first: after attaching, nothing may fail.
    REGISTRY.reserve(held, 1)?;

    let mut data = NewTrigger::new(cmd_ops)?;
    // It owns the trigger from here: `release()` takes it back.
    data.set_private_data(KBox::into_raw(trigger).cast::<c_void>());
    data.set_paused(setup.paused);
    // Hold a reference while setting up, so a failure frees exactly once.
    let data = data.counted(held);

    let ret = if setup.filter.is_empty() {
        0
    } else {
        data.set_filter(held, file, &mut setup.filter)
    };
    let mut result = if ret < 0 {
        Err(BuildError::Kernel(Error::from_errno(ret)))
    } else {
        Ok(())
    };
    let tr = file.trace_array();
    if result.is_ok() && uses_timestamps {
        let ret = tr.set_clock(&setup.clock);
        if ret < 0 {
            let err = HistError::with_errno(HistErrorKind::SetClockFail, setup.clock_pos, -ret);
            result = Err(BuildError::Hist(err));
        } else {
            // `detach()` (or the failure below) drops this reference.
            tr.set_filter_buffering(true);
        }
    }
    if result.is_ok() {
        // SAFETY: `data` is an rhist trigger set up for `file`, on no list,
        // with this function's reference and a slot reserved above.
        let ret = unsafe { Rhist::register(held, data, file) };
        if ret < 0 {
            if uses_timestamps {
                // Taken above.
                tr.set_filter_buffering(false);
            }
            result = Err(BuildError::Kernel(Error::from_errno(ret)));
        }
    }
    // SAFETY: drops the setup reference, after which `data` is not used;
    // on failure this frees everything.
    unsafe { put(held, data) };
    result
}

/// Unlinks `data` from its event file, as the tracing core's own
/// unregistration does.
///
/// # Safety
///
/// `data` must be an rhist trigger on its file's list.
pub(super) unsafe fn detach(held: EventMutexHeld<'_>, data: &TriggerData) {
    let Some(trigger) = state(held, data) else {
        return;
    };
    // The trigger pins its file, so the file is live throughout.
    let file = trigger.file();
    // SAFETY: `data` is on its file's list (the caller's promise).
    unsafe { data.unlink(held) };
    // Drops the soft enable `reg()` took.
    file.trigger_mode_put(held);
    file.update_cond_flag(held);
    if trigger.data().uses_timestamps() {
        // Drops the reference `attach()` took for this trigger.
        file.trace_array().set_filter_buffering(false);
    }
}

/// Detaches and drops one trigger.
///
/// # Safety
///
/// `data` must be an rhist trigger on its file, not used after this.
pub(super) unsafe fn unregister_one(held: EventMutexHeld<'_>, data: &TriggerData) {
    // SAFETY: `data` is an rhist trigger on its file (the caller's
    // promise, which is `detach()`'s).
    unsafe { detach(held, data) };
    // SAFETY: `data` is detached, still holds the reference its file's
    // list held, and is not used after this (the caller's promise).
    unsafe { put(held, data) };
}
