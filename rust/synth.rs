// SPDX-License-Identifier: GPL-2.0

//! Synthetic events as rhist's `trace()` actions use them: found by name
//! when a trigger is created, held while it lives so that they cannot be
//! deleted, and emitted on the event path, as hist does.

use kernel::alloc::flags::GFP_KERNEL;
use kernel::bindings;
use kernel::prelude::*;

use crate::hist::grammar::{ActionKind, TriggerSpec};
use crate::hist::hist_data::{SynthField, SynthLookup};
use crate::kernel_ext::{c_bytes, field_ptr};
use crate::shim;
use crate::tracefs::{self, EventMutexHeld};
use crate::tracing::EventFile;

/// A synthetic event an action emits, held through its reference count
/// (C's `synth_event->ref`, which `synth_event_release()` checks): while
/// the value lives the event cannot be deleted.
///
/// # Invariants
///
/// `0` is a live synthetic event whose `ref_` this value incremented.
/// Every change of `ref_` is made with `event_mutex` held, the decrement
/// in `drop()` included: the owners of a pin (a trigger being built, a
/// histogram) are only dropped with it held.
pub(crate) struct SynthPin(*mut bindings::synth_event);

// SAFETY: the event is live while pinned, and shared use only reads it or
// calls its probes, which any CPU may.
unsafe impl Send for SynthPin {}
// SAFETY: shared use only reads the pinned event or calls its probes
// (`trace_synth()`), which any CPU may, concurrently; its count is
// changed only with `event_mutex` held.
unsafe impl Sync for SynthPin {}

impl SynthPin {
    /// `find_synth_event()`, held; `None` if there is no such event.
    fn find(_held: EventMutexHeld<'_>, name: &str) -> Result<Option<Self>> {
        let mut cname = KVec::with_capacity(name.len() + 1, GFP_KERNEL)?;
        cname.extend_from_slice(name.as_bytes(), GFP_KERNEL)?;
        cname.push(0, GFP_KERNEL)?;
        // SAFETY: the name is NUL-terminated; the dynamic event list the
        // callee walks is locked (`_held`).
        let event = unsafe { bindings::find_synth_event(cname.as_ptr().cast()) };
        if event.is_null() {
            return Ok(None);
        }
        // SAFETY: `event` is on the dynamic event list, from which it is
        // removed only with the lock held, as it is (`_held`); its count
        // changes only with the lock held too.
        unsafe { (*event).ref_ += 1 };
        // INVARIANT: the count was taken just above, with the lock held.
        Ok(Some(SynthPin(event)))
    }

    /// The synthetic event behind `file`, held, if it is one: C's
    /// `find_synth_event_call()`, for the `se->ref` hist takes for each
    /// trigger on a synthetic event.
    pub(crate) fn of_event(held: EventMutexHeld<'_>, file: &EventFile) -> Result<Option<Self>> {
        let (system, name) = file.names();
        if system != b"synthetic" {
            return Ok(None);
        }
        let Ok(name) = core::str::from_utf8(name) else {
            return Ok(None);
        };
        let Some(pin) = Self::find(held, name)? else {
            return Ok(None);
        };
        let its_call = field_ptr!(pin.0, bindings::synth_event, call);
        // Another kind of event in a group of that name is none.
        Ok((its_call == file.call()).then_some(pin))
    }

    /// The event's fields. (The event is read field by field, never as a
    /// `&synth_event`: other pins change its count meanwhile.)
    #[inline(always)]
    fn fields(&self) -> &[&bindings::synth_field] {
        // SAFETY: the event is live while pinned (invariant). Its `fields`
        // and `n_fields`, set when it is made and never changed, are an
        // array (from `kcalloc()`: never null, aligned even when empty)
        // of `n_fields` addresses, each of a field the event owns (never
        // null), changed by no one after it is made: shared references
        // to them are sound for the pin's borrow.
        unsafe {
            core::slice::from_raw_parts(
                (*self.0).fields.cast::<&bindings::synth_field>(),
                (*self.0).n_fields as usize,
            )
        }
    }

    /// The number of the event's fields.
    fn n_fields(&self) -> usize {
        self.fields().len()
    }

    /// Field `pos` of the event.
    fn field(&self, pos: usize) -> Option<SynthField<'_>> {
        let field = *self.fields().get(pos)?;
        // SAFETY: a field's type is a NUL-terminated string the event
        // owns, kept as it is while the event is pinned (invariant).
        let type_name = unsafe { c_bytes(field.type_) }.unwrap_or(b"");
        Some(SynthField {
            type_name: core::str::from_utf8(type_name).unwrap_or(""),
            size: u32::try_from(field.size).unwrap_or(u32::MAX),
            signed: field.is_signed,
            string: field.is_string,
            dynamic: field.is_dynamic,
            stack: field.is_stack,
        })
    }

    /// `trace_synth()`: emits the event, field `i` taking
    /// `vals[var_ref_idx[i]]` (a string or stack field: the address of its
    /// value). Does nothing unless `var_ref_idx` has one index per field,
    /// each within `vals`. Lock-free, no allocation.
    pub(crate) fn trace(&self, vals: &[u64], var_ref_idx: &[u32]) {
        let fits = var_ref_idx.len() == self.n_fields()
            && var_ref_idx.iter().all(|&i| (i as usize) < vals.len());
        if !fits {
            return;
        }
        // SAFETY: the event is live (invariant); its probes read
        // `var_ref_idx[i]` for each of its fields, which it has, and the
        // values these index, which `vals` has, and write neither. A
        // string or stack value is the address of a NUL-terminated or
        // counted copy in an entry of a histogram's map: the emitting
        // trigger's own, or one its trigger references (`Trigger::refs`),
        // or, through an alias (`x=$y`) in one of those, one that the
        // alias's triggers reference. Each holds the next by its `Arc`,
        // and none can be removed while referenced (`referenced()`;
        // an instance with any of them cannot be removed, and the
        // module's unloading detaches every trigger before it frees
        // one): the copy outlives this call, which runs in a probe of
        // the emitting trigger. Only string fields take such a value
        // (`check_synth_field()`).
        unsafe {
            shim::rhist_trace_synth(
                self.0,
                vals.as_ptr().cast_mut(),
                var_ref_idx.as_ptr().cast_mut(),
            )
        };
    }
}

impl Drop for SynthPin {
    fn drop(&mut self) {
        tracefs::assert_event_mutex_held();
        // SAFETY: the event is live while pinned and `event_mutex`, which
        // guards the count, is held (invariant).
        unsafe { (*self.0).ref_ -= 1 };
    }
}

/// The synthetic events of a trigger's handlers, found when it is built:
/// entry `i` is that of handler `i`, `None` when it has no `trace()`
/// action or no such event exists.
pub(crate) struct Synths(KVec<(KVec<u8>, Option<SynthPin>)>);

impl Synths {
    /// Finds and holds the synthetic events `spec`'s actions emit.
    pub(crate) fn find(held: EventMutexHeld<'_>, spec: &TriggerSpec<'_>) -> Result<Self> {
        let mut found = KVec::new();
        for handler in spec.actions() {
            let action = handler.and_then(|h| h.action()).ok();
            let name = match action {
                Some(a) if a.kind() == ActionKind::Trace => a.synth_event().unwrap_or(""),
                _ => "",
            };
            let mut owned = KVec::new();
            owned.extend_from_slice(name.as_bytes(), GFP_KERNEL)?;
            let pin = if name.is_empty() {
                None
            } else {
                SynthPin::find(held, name)?
            };
            found.push((owned, pin), GFP_KERNEL)?;
        }
        Ok(Synths(found))
    }

    /// The pins, by handler: what the histogram keeps.
    pub(crate) fn into_pins(self) -> Result<KVec<Option<SynthPin>>> {
        let mut pins = KVec::with_capacity(self.0.len(), GFP_KERNEL)?;
        for (_, pin) in self.0 {
            pins.push(pin, GFP_KERNEL)?;
        }
        Ok(pins)
    }

    fn pin(&self, name: &str) -> Option<&SynthPin> {
        self.0
            .iter()
            .find(|(n, pin)| pin.is_some() && n.as_slice() == name.as_bytes())
            .and_then(|(_, pin)| pin.as_ref())
    }
}

impl SynthLookup for Synths {
    fn n_fields(&self, name: &str) -> Option<usize> {
        self.pin(name).map(SynthPin::n_fields)
    }

    fn field(&self, name: &str, pos: usize) -> Option<SynthField<'_>> {
        self.pin(name)?.field(pos)
    }
}
