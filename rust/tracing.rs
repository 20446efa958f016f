// SPDX-License-Identifier: GPL-2.0

//! Handles on the tracing core's objects, as the kernel crate wraps C
//! objects (`Task`, `File`): each a `#[repr(transparent)]` wrapper over
//! [`Opaque`](kernel::types::Opaque) of the C struct, borrowed as `&T` for
//! as long as the C side keeps the object, with safe methods for what the
//! shell reads and changes of it. The owning types say in their doc why
//! they are not `ARef`s: a reference on an event file does not keep its
//! event, and one on a trace array can fail to be taken.
//!
//! - [`EventFile`]: an event of one instance (`struct trace_event_file`),
//!   with its trigger list; [`EventPin`] owns a reference on one and pins
//!   its event.
//! - [`TraceArray`]: an instance (`struct trace_array`); [`InstanceRef`]
//!   owns a reference on one.
//! - [`TriggerData`]: a trigger on an event file (`struct
//!   event_trigger_data`); [`NewTrigger`] owns one being set up,
//!   [`Listed`] the list's reference on one attached, and [`Unlisted`]
//!   that reference once the trigger is off its list, to be released.
//!
//! A C callback turns the raw pointers it is given into these once, at its
//! entry, arguing from the tracing core's contract for that callback;
//! below it, functions take references and are safe where they were
//! `unsafe` only because a pointer had to be live.

mod event_file;
mod trace_array;
mod trigger_data;

pub(crate) use event_file::{EventFile, EventPin, ListEnd};
pub(crate) use trace_array::{InstanceRef, TraceArray};
pub(crate) use trigger_data::{Listed, NewTrigger, Refs, TriggerData, TriggerId, Unlisted};
