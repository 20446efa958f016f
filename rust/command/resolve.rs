// SPDX-License-Identifier: GPL-2.0

//! What building a trigger looks at beyond its text, as hist finds it:
//! the variables of the event's and the instance's other triggers, the
//! histograms a trigger references, and the hidden histograms that an
//! action's field variables make on other events.

use core::ptr;

use kernel::alloc::flags::GFP_KERNEL;
use kernel::error::code;
use kernel::prelude::*;
use kernel::sync::Arc;

use super::state::{BuildError, Hist, Trigger, VecWriter};
use super::{remove_command, run_command, state, REGISTRY};
use crate::hist;
use crate::hist::error::{HistError, HistErrorKind};
use crate::hist::hist_data::{BuildOptions, HistData};
use crate::hist::var_ref::{Found, VarLookup};
use crate::synth::Synths;
use crate::tracefs::{EventMutexHeld, EventMutexScope};
use crate::tracing::{EventFile, EventPin, TraceArray};

/// Runs `f` with what building a trigger on `file` looks at beyond its
/// text: the variables of the event's other triggers (C's `find_var()`),
/// of the instance's registered triggers (`parse_var_ref()`), the
/// instance's events (`event_file()`) and the synthetic events.
pub(super) fn with_options<R>(
    held: EventMutexHeld<'_>,
    file: &EventFile,
    remove: bool,
    synths: Option<&Synths>,
    f: impl FnOnce(BuildOptions<'_>) -> R,
) -> R {
    let defined_elsewhere = |name: &str| {
        file.triggers(held).filter_map(|d| state(held, d)).any(|t| {
            let other = t.data();
            (0..other.n_vars()).any(|i| other.var_name(i) == Some(name))
        })
    };
    let vars = InstanceVars::new(held, file);
    let tr = file.trace_array();
    let event_exists = |system: &str, event: &str| tr.has_event(held, system, event);
    f(BuildOptions {
        remove,
        defined_elsewhere: Some(&defined_elsewhere),
        vars: Some(&vars),
        synths: synths.map(|s| s as _),
        event_exists: Some(&event_exists),
        enable_snapshot: None,
        field_var_hist: None,
        log: None,
    })
}

/// A hidden histogram (C's `struct field_var_hist`): an rhist trigger
/// made on another event for a field variable of a trigger's action, and
/// removed with its text when that trigger goes.
pub(super) struct FieldVarHist {
    cmd: KVec<u8>,
    /// The hidden histogram's event file.
    pin: EventPin,
}

impl Drop for FieldVarHist {
    fn drop(&mut self) {
        // SAFETY: the owner, a trigger's resolved data, is dropped only with
        // `event_mutex` held for the whole drop: with its trigger's state,
        // released with the hold borrowed `mut` up the stack (removal,
        // `Deferred::release()`), or as a build that made it fails. The
        // hidden trigger this removes is known to its owner alone: no
        // frame up the stack uses a borrow of it after this.
        let mut scope = unsafe { EventMutexScope::assume() };
        // The file is live: the pin keeps it and its event, and its
        // instance, the owner's, is kept too: a command being carried out
        // there holds the lock, or the owner's histogram holds it (an
        // `InstanceRef`, dropped after this: the owner references the
        // hidden histogram's variable). `trace_types_lock` is not held:
        // the owner is dropped only so.
        // hist warns when this fails (the histogram's variable has
        // another user); rhist leaves the trigger, as hist does.
        let _ = remove_command(&mut scope, self.pin.file(), &self.cmd);
    }
}

/// C's `create_field_var_hist()` for the trigger `target` being made on
/// `file`, for the field `field` of `system`.`event`: see
/// `hist::hist_data::FieldVarHist`. A trigger it makes is pushed on
/// `made`.
pub(super) fn field_var_hist(
    held: EventMutexHeld<'_>,
    file: &EventFile,
    made: &core::cell::RefCell<KVec<FieldVarHist>>,
    target: &HistData<'_>,
    (system, event, field): (&str, &str, &str),
    log: &dyn Fn(HistErrorKind, usize),
) -> Result<bool, HistError> {
    let pos = target.spec().errpos(field);
    let Some(other) = file.trace_array().find_event_file(held, system, event) else {
        return Err(HistError::new(HistErrorKind::EventFileNotFound, pos));
    };
    // find_compatible_hist(): the first rhist trigger there whose keys
    // match.
    let compatible = other.triggers(held).find_map(|d| {
        let t = state(held, d)?;
        target.keys_compatible(t.data()).then_some((d, t))
    });
    let Some((found, found_state)) = compatible else {
        return Err(HistError::new(HistErrorKind::HistNotFound, pos));
    };
    // One there already has the variable (find_synthetic_field_var()).
    let mut name = KVec::new();
    let mut w = VecWriter(&mut name, false);
    let _ = core::fmt::Write::write_fmt(&mut w, format_args!("synthetic_{field}"));
    let oom = HistError::silent(-code::ENOMEM.to_errno());
    if w.1 {
        return Err(oom);
    }
    let vars = InstanceVars::new(held, file);
    let name = core::str::from_utf8(&name).unwrap_or("");
    if let Found::One(_) = vars.find_var(Some((system, event)), name) {
        return Ok(false);
    }
    // Its keys, the variable, and its filter.
    let mut cmd = KVec::new();
    let mut w = VecWriter(&mut cmd, false);
    let _ = found_state.data().write_field_var_hist_cmd(&mut w, field);
    if let Some(filter) = found.filter(held) {
        w.1 |= w.0.extend_from_slice(b" if ", GFP_KERNEL).is_err();
        w.1 |= w.0.extend_from_slice(filter, GFP_KERNEL).is_err();
    }
    // A failed allocation is ENOMEM; only a command too long is E2BIG.
    if w.1 {
        return Err(oom);
    }
    if cmd.len() >= hist::hist_data::MAX_FILTER_STR_VAL as usize {
        return Err(HistError::silent(-code::E2BIG.to_errno()));
    }
    let pin = EventPin::new(other).map_err(|e| HistError::silent(-e.to_errno()))?;
    if let Err(e) = run_command(held, other, &cmd) {
        let errno = match e {
            BuildError::Hist(h) => {
                // hist logs the hidden command's errors as its own
                // (`last_cmd` stays this trigger's text).
                if let Some(kind) = h.kind() {
                    let entries = Iterator::chain(h.logged_before(), [(kind, h.pos())]);
                    for (kind, pos) in entries {
                        log(kind, nested_errpos(target, &cmd, pos));
                    }
                }
                h.errno()
            }
            BuildError::Kernel(k) => -k.to_errno(),
            BuildError::NoMapMemory => -code::ENOMEM.to_errno(),
        };
        return Err(HistError::with_errno(
            HistErrorKind::HistCreateFail,
            pos,
            errno,
        ));
    }
    let hidden = FieldVarHist { cmd, pin };
    // On failure `hidden` goes: the trigger is removed again.
    made.borrow_mut()
        .push(hidden, GFP_KERNEL)
        .map_err(|_| oom)?;
    Ok(true)
}

/// Where hist's caret for an error of the hidden command `cmd` at `pos`
/// lands: hist looks the offending piece up (`errpos()`) in the command
/// being written, `data`'s, not in the hidden one. The piece is taken to
/// run from `pos` to the next separator of the hidden command.
fn nested_errpos(data: &HistData<'_>, cmd: &[u8], pos: usize) -> usize {
    let prefix = crate::names::NAMES.prefix.len();
    let Some(rest) = pos.checked_sub(prefix).and_then(|at| cmd.get(at..)) else {
        return 0;
    };
    let end = rest
        .iter()
        .position(|b| b":=, ()".contains(b))
        .unwrap_or(rest.len());
    match core::str::from_utf8(&rest[..end]) {
        Ok(piece) if !piece.is_empty() => data.spec().errpos(piece),
        _ => 0,
    }
}

/// The identity of a histogram for references (`VarTarget::hist`): the
/// address of its hist data, which C's `hist_debug` shows as a
/// reference's `var.hist_data`.
pub(super) fn hist_identity(data: &HistData<'_>) -> u64 {
    ptr::from_ref(data) as u64
}

/// The variables of the registered rhist triggers of one trace instance,
/// as `parse_var_ref()` finds them. The registry, its triggers and their
/// events stay as they are while the lock is held, for `'a`, so every
/// borrow handed out, which lives no longer than `&self`, stays valid.
struct InstanceVars<'a> {
    tr: &'a TraceArray,
    held: EventMutexHeld<'a>,
}

impl<'a> InstanceVars<'a> {
    /// The variables of the instance of `file`.
    fn new(held: EventMutexHeld<'a>, file: &'a EventFile) -> Self {
        InstanceVars {
            tr: file.trace_array(),
            held,
        }
    }

    /// The registered triggers of the instance with a variable `name`,
    /// with their event's names.
    fn defining<'n>(
        &self,
        name: &'n str,
    ) -> impl Iterator<Item = (&'a Trigger, &'a str, &'a str)> + 'n
    where
        'a: 'n,
    {
        let (tr, held) = (self.tr, self.held);
        REGISTRY
            .iter(held)
            // Registered triggers stay while borrowed: the lock held for
            // `'a` (`held`) keeps other tasks from removing them, and a
            // build removes none it looked up.
            .filter_map(move |d| state(held, d))
            .filter(move |t| ptr::eq(t.file().trace_array(), tr))
            .filter(move |t| {
                let data = t.data();
                (0..data.n_vars()).any(|i| data.var_name(i) == Some(name))
            })
            .map(|t| {
                let (system, event) = t.file().names();
                let text = |b| core::str::from_utf8(b).unwrap_or("");
                (t, text(system), text(event))
            })
    }
}

impl VarLookup for InstanceVars<'_> {
    fn find_var(&self, event: Option<(&str, &str)>, name: &str) -> Found<'_> {
        let mut found = self.defining(name);
        let first = match event {
            Some((sys, ev)) => found.find(|&(_, s, e)| s == sys && e == ev),
            None => {
                let first = found.next();
                if let Some((t, ..)) = first {
                    // Triggers on two events define it: C's VAR_NOT_UNIQUE.
                    if found.any(|(other, ..)| !ptr::eq(other.file(), t.file())) {
                        return Found::NotUnique;
                    }
                }
                first
            }
        };
        let Some((t, system, event)) = first else {
            return Found::None;
        };
        let data = t.data();
        match data.var_target(name, hist_identity(data), system, event) {
            Some(target) => Found::One(target),
            None => Found::None,
        }
    }
}

/// The histograms `data` references, one per slot of
/// `HistData::ref_hists()`, from the registered triggers.
pub(super) fn referenced_hists(
    held: EventMutexHeld<'_>,
    data: &HistData<'_>,
) -> Result<KVec<Arc<Hist>>, BuildError> {
    let mut refs = KVec::with_capacity(data.ref_hists().len(), GFP_KERNEL)?;
    for &id in data.ref_hists() {
        let hist = REGISTRY
            .iter(held)
            .filter_map(|d| state(held, d))
            .find(|t| hist_identity(t.data()) == id)
            .map(|t| t.hist.clone())
            // Found by the build under the same lock: always there.
            .ok_or(BuildError::Kernel(code::EINVAL))?;
        refs.push(hist, GFP_KERNEL)?;
    }
    Ok(refs)
}
