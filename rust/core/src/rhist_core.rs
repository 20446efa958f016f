// SPDX-License-Identifier: GPL-2.0

//! The portable hist core: everything of rhist that does not touch the
//! kernel. It is compiled by cargo on the host and by Kbuild into the
//! module, so it depends on `core` only.
//!
//! # The life of a trigger
//!
//! The text is parsed ([`trigger::parse`]), resolved against the event's
//! fields ([`hist_data::HistData::build`]), given a map in memory its
//! owner provides ([`map::TracingMap`]), updated with each record
//! ([`histogram::Histogram`]), and printed as `hist` prints it. The
//! module does the same with the kernel's event and task; here, an event
//! of one `u64` field and a task of pid 42:
//!
//! ```
//! # extern crate std;
//! # use std::{string::String, vec::Vec};
//! use core::sync::atomic::AtomicU64;
//! use rhist_core::hist::event::{
//!     EventContext, EventDesc, EventField, FieldStorage, COMMON_FIELDS,
//! };
//! use rhist_core::hist::hist_data::HistData;
//! use rhist_core::hist::histogram::{map_params, Histogram, TaskContext};
//! use rhist_core::hist::map::TracingMap;
//! use rhist_core::hist::{output, trigger};
//!
//! // The event: common fields, then `u64 bytes` at offset 8.
//! let fields = [EventField::new("bytes", "u64", 8, 8, false, FieldStorage::Other)];
//! let event = EventDesc {
//!     system: "demo",
//!     name: "demo_read",
//!     fields: &fields,
//!     common_fields: &COMMON_FIELDS,
//! };
//!
//! // What the kernel knows of the task and the event.
//! struct Task;
//! impl EventContext for Task {
//!     fn cpu(&self) -> u32 { 0 }
//!     fn timestamp(&self) -> u64 { 0 }
//!     fn clock_in_ns(&self) -> bool { true }
//!     fn stacktrace(&self, out: &mut [u64]) { out.fill(0) }
//!     fn comm(&self) -> [u8; 16] { *b"cat\0\0\0\0\0\0\0\0\0\0\0\0\0" }
//! }
//! impl TaskContext for Task {
//!     fn pid(&self) -> i32 { 42 }
//! }
//!
//! // Parse and build: immutable from here on.
//! let spec = trigger::parse("keys=common_pid:vals=bytes").unwrap();
//! let data = HistData::build(&spec, &event).unwrap();
//!
//! // The map lives in memory the caller owns (vmalloc'd in the module).
//! let params = map_params(&data, 1);
//! let storage: Vec<AtomicU64> =
//!     (0..params.storage_words().unwrap()).map(|_| AtomicU64::new(0)).collect();
//! let hist = Histogram::new(&data, TracingMap::new(params, &storage).unwrap()).unwrap();
//!
//! // Two records of the event: 100 and 20 bytes.
//! for bytes in [100u64, 20] {
//!     let mut rec = [0u8; 16];
//!     rec[4..8].copy_from_slice(&42i32.to_ne_bytes()); // common_pid
//!     rec[8..16].copy_from_slice(&bytes.to_ne_bytes());
//!     hist.update(&rec, &Task);
//! }
//!
//! // Print the entries and totals, as the `hist` file shows them.
//! let mut out = String::new();
//! let mut order = std::vec![0u32; hist.map().max_elts()];
//! hist.print(&mut out, &output::NoSymbols, &mut order).unwrap();
//! assert!(out.contains("{ common_pid:         42 } hitcount:          2  bytes:        120"));
//! assert!(out.contains("    Hits: 2\n    Entries: 1\n    Dropped: 0"));
//! ```

pub mod enable;
pub mod error;
pub mod event;
pub mod grammar;
pub mod grow;
pub mod hist_data;
pub mod histogram;
pub mod json;
pub mod map;
pub mod output;
pub mod program;
mod record;
pub mod sketch;
pub mod stats;
pub mod trigger;
pub mod var_ref;
pub mod vars;
