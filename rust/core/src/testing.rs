// SPDX-License-Identifier: GPL-2.0

//! The fixtures the core's tests, benches and examples share: a task that
//! fires events, the test event `rhist_test:rhist_sample` and its
//! records, triggers built with variables of another or with actions, a
//! histogram's storage and its table.
//!
//! Host only: `lib.rs` declares it, Kbuild never compiles it. One copy
//! serves all: the unit tests see it under `cfg(test)`; the benches and
//! examples, which link the crate built without `cfg(test)`, under the
//! feature `testing`, which the crate's dev-dependency on itself turns on
//! (`Cargo.toml`), so that `cargo bench` needs no flag. (A file the
//! benches include by `#[path]`, as `benches/common` was, could not also
//! serve the unit tests: inside the crate its paths are other.)

use crate::hist::event::{EventContext, EventDesc, EventField, FieldStorage, COMMON_FIELDS};
use crate::hist::hist_data::{ActionSink, BuildOptions, HistData};
use crate::hist::histogram::{map_params, Histogram, TaskContext};
use crate::hist::map::{MapParams, TracingMap};
use crate::hist::output::NoSymbols;
use crate::hist::sketch::SketchPool;
use crate::hist::trigger;
use crate::hist::var_ref::{Found, VarLookup};
use core::sync::atomic::AtomicU64;
use std::string::String;
use std::vec::Vec;

/// What the kernel would tell of the task and the event: each test sets
/// the fields it looks at and takes the rest from [`TASK`].
#[derive(Clone, Copy, Debug)]
pub struct Task {
    pub pid: i32,
    pub cpu: u32,
    /// The timestamp, raw.
    pub ts: u64,
    /// Whether the clock counts nanoseconds.
    pub ns: bool,
    pub comm: [u8; 16],
    /// The stack's top frames (the rest reads as zeros).
    pub stack: [u64; 3],
}

/// `bash`, pid 42, on CPU 0 at 1 ms, with no stack.
pub const TASK: Task = Task {
    pid: 42,
    cpu: 0,
    ts: 1_000_000,
    ns: true,
    comm: comm(b"bash"),
    stack: [0; 3],
};

/// A comm of `name`, cut to 16 bytes, zero-padded.
pub const fn comm(name: &[u8]) -> [u8; 16] {
    let mut c = [0u8; 16];
    let mut i = 0;
    while i < name.len() && i < c.len() {
        c[i] = name[i];
        i += 1;
    }
    c
}

impl Task {
    /// The same task on CPU `cpu`.
    pub const fn on(self, cpu: u32) -> Task {
        Task { cpu, ..self }
    }
}

impl EventContext for Task {
    fn cpu(&self) -> u32 {
        self.cpu
    }
    fn timestamp(&self) -> u64 {
        self.ts
    }
    fn clock_in_ns(&self) -> bool {
        self.ns
    }
    fn stacktrace(&self, out: &mut [u64]) {
        out.fill(0);
        for (o, f) in out.iter_mut().zip(self.stack) {
            *o = f;
        }
    }
    fn comm(&self) -> [u8; 16] {
        self.comm
    }
}

impl TaskContext for Task {
    fn pid(&self) -> i32 {
        self.pid
    }
}

/// The numbers of `rhist_sample` (tools/testing/rhist_test_events): `u64
/// a`, `u32 b`, `s32 c`, after the common fields.
pub const FIELD_A: EventField<'static> =
    EventField::new("a", "u64", 8, 8, false, FieldStorage::Other);
pub const FIELD_B: EventField<'static> =
    EventField::new("b", "u32", 16, 4, false, FieldStorage::Other);
pub const FIELD_C: EventField<'static> =
    EventField::new("c", "s32", 20, 4, true, FieldStorage::Other);

/// The event `system:name` of the common fields, then `fields`.
pub const fn event(
    system: &'static str,
    name: &'static str,
    fields: &'static [EventField<'static>],
) -> EventDesc<'static> {
    EventDesc {
        system,
        name,
        fields,
        common_fields: &COMMON_FIELDS,
    }
}

/// `rhist_test:rhist_sample` with `fields`.
pub const fn sample_event(fields: &'static [EventField<'static>]) -> EventDesc<'static> {
    event("rhist_test", "rhist_sample", fields)
}

/// The test event of the numbers alone.
pub const EVENT: EventDesc<'static> = sample_event(&[FIELD_A, FIELD_B, FIELD_C]);

/// A record of [`EVENT`] fired by pid 42.
pub fn record(a: u64, b: u32, c: i32) -> [u8; 24] {
    let mut r = [0u8; 24];
    r[4..8].copy_from_slice(&42i32.to_ne_bytes());
    r[8..16].copy_from_slice(&a.to_ne_bytes());
    r[16..20].copy_from_slice(&b.to_ne_bytes());
    r[20..24].copy_from_slice(&c.to_ne_bytes());
    r
}

/// The variables of one other trigger on the test event, of identity 1.
pub struct VarsOf<'h>(pub &'h HistData<'h>);

impl VarLookup for VarsOf<'_> {
    fn find_var(&self, _: Option<(&str, &str)>, name: &str) -> Found<'_> {
        self.0
            .var_target(name, 1, EVENT.system, EVENT.name)
            .map_or(Found::None, Found::One)
    }
}

/// The actions of a trigger that has none.
pub struct NoSink;

impl ActionSink for NoSink {
    fn trace(&self, _: usize, _: &[u64], _: &[u32]) {}
    fn snapshot(&self, _: u64, _: &[u8], _: &[u8; 16]) {}
}

/// `text` built on `event` with its actions, where a `snapshot()` may be.
pub fn build_with_actions<'a>(text: &'a str, event: &EventDesc<'a>) -> HistData<'a> {
    let spec = trigger::parse(text).unwrap();
    let enable = || Ok(());
    let options = BuildOptions {
        enable_snapshot: Some(&enable),
        ..Default::default()
    };
    let mut data = HistData::empty(&spec);
    HistData::build_into_with(&mut data, &spec, event, options).unwrap();
    data.create_actions(event, options).unwrap();
    data
}

/// `n` zeroed words: the memory a map or a sketch pool lives in.
pub fn zeros(n: usize) -> Vec<AtomicU64> {
    (0..n).map(|_| AtomicU64::new(0)).collect()
}

/// The zeroed storage of a map of `params`.
pub fn map_storage(params: &MapParams) -> Vec<AtomicU64> {
    zeros(params.storage_words().unwrap())
}

/// The zeroed storage of the sketch pool of `data`'s `.quantiles`
/// values (none without them).
pub fn pool_storage(data: &HistData<'_>) -> Vec<AtomicU64> {
    zeros(
        data.sketch_params()
            .map_or(0, |p| p.storage_words().unwrap()),
    )
}

/// A histogram of `data` whose sums are kept for `cpus` CPUs, in `map`
/// ([`map_storage`]) and `pool` ([`pool_storage`]).
pub fn histogram<'a>(
    data: &'a HistData<'a>,
    cpus: usize,
    map: &'a [AtomicU64],
    pool: &'a [AtomicU64],
) -> Histogram<'a> {
    let sketches = data
        .sketch_params()
        .map(|p| SketchPool::new(p, pool).unwrap());
    let map = TracingMap::new(map_params(data, cpus), map).unwrap();
    Histogram::with_sketches(data, map, sketches).unwrap()
}

/// The histogram's table, as its `hist` file shows it (no symbols).
pub fn print_of(hist: &Histogram<'_>) -> String {
    let mut order = std::vec![0u32; hist.map().max_elts()];
    let mut out = String::new();
    hist.print(&mut out, &NoSymbols, &mut order).unwrap();
    out
}
