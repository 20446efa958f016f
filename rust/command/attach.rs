// SPDX-License-Identifier: GPL-2.0

//! Attaching an rhist trigger to its event file, and detaching it: its
//! filter, the trace clock, the file's trigger list and the registry.

use kernel::alloc::flags::GFP_KERNEL;
use kernel::error::Error;
use kernel::prelude::*;

use super::state::{BuildError, Trigger};
use super::{COMMAND, REGISTRY};
use crate::hist::error::{HistError, HistErrorKind};
use crate::hist::grammar::TriggerSpec;
use crate::tracefs::{EventMutexHeld, EventMutexScope};
use crate::tracing::{EventFile, ListEnd, Listed, TriggerId, Unlisted};

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

/// Filters and attaches a new trigger of this command. When
/// its histogram reads timestamps, sets the instance's trace clock and
/// has events written straight to the ring buffer while the trigger
/// lives, as hist does; a clock the instance does not know fails with
/// hist's `SET_CLOCK_FAIL`.
pub(super) fn attach(
    held: EventMutexHeld<'_>,
    file: &EventFile,
    trigger: KBox<Trigger>,
    mut setup: AttachSetup,
) -> Result<(), BuildError> {
    let uses_timestamps = trigger.data().uses_timestamps();
    let mut data = COMMAND.new_trigger()?;
    // It owns the trigger from here: `Unlisted::release()` hands it back.
    data.set_private(trigger);
    data.set_paused(setup.paused);

    if !setup.filter.is_empty() {
        let ret = data.set_filter(held, file, &mut setup.filter);
        if ret < 0 {
            return Err(BuildError::Kernel(Error::from_errno(ret)));
        }
    }
    let tr = file.trace_array();
    if uses_timestamps {
        let ret = tr.set_clock(&setup.clock);
        if ret < 0 {
            let err = HistError::with_errno(HistErrorKind::SetClockFail, setup.clock_pos, -ret);
            return Err(BuildError::Hist(err));
        }
        // `detach()` (or the failure below) drops this reference.
        tr.set_filter_buffering(true);
    }
    // SAFETY: `data` is an rhist trigger whose filter was parsed for
    // `file`'s event and whose state was built for it (`run_command()`);
    // never given a count.
    if let Err((data, ret)) = unsafe { REGISTRY.list(held, file, data, ListEnd::Tail) } {
        if uses_timestamps {
            // Taken above.
            tr.set_filter_buffering(false);
        }
        // Frees the trigger, its filter and its state.
        drop(data);
        return Err(BuildError::Kernel(Error::from_errno(ret)));
    }
    Ok(())
}

/// Takes `listed`, an rhist trigger out of its registry, off its event
/// file's list, as the tracing core's own unregistration does.
pub(super) fn detach(
    scope: &mut EventMutexScope<'_>,
    listed: Listed<Trigger>,
) -> Unlisted<Trigger> {
    let unlisted = listed.unlink(scope);
    let held = scope.held();
    if let Some(trigger) = unlisted.private() {
        // The trigger pins its file, so the file is live throughout.
        let file = trigger.file();
        // Drops the soft enable `list()` took.
        file.trigger_mode_put(held);
        file.update_cond_flag(held);
        if trigger.data().uses_timestamps() {
            // Drops the reference `attach()` took for this trigger.
            file.trace_array().set_filter_buffering(false);
        }
    }
    unlisted
}

/// Detaches and drops the rhist trigger `id`, if it is attached.
pub(super) fn unregister_one(scope: &mut EventMutexScope<'_>, id: TriggerId) {
    let Some(listed) = REGISTRY.take(scope, id) else {
        return;
    };
    let unlisted = detach(scope, listed);
    drop(unlisted.release(scope.held()));
}
