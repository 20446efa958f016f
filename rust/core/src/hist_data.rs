// SPDX-License-Identifier: GPL-2.0

//! A hist trigger bound to its event: C's `struct hist_trigger_data`, as
//! `create_hist_data()` builds it (`kernel/trace/trace_events_hist.c`).
//!
//! [`HistData::build`] takes a [`TriggerSpec`] and the [`EventDesc`] of the
//! event and does what `create_hist_data()` does, in C's order:
//! `parse_actions()`, `parse_var_defs()`, `create_val_fields()`,
//! `create_var_fields()`, `create_key_fields()`, `create_sort_keys()`, so
//! that the first error is C's, with C's caret.  The result knows how to
//! build a key from an event record (`event_hist_trigger()` and
//! `add_to_key()`), what to add to each sum (`hist_trigger_elt_update()`),
//! how to show keys and values, how the map sorts, and how the trigger
//! prints itself (`event_hist_trigger_print()`).
//!
//! # Fields
//!
//! Like C, every key and value is a *hist field*: a set of C's
//! `HIST_FIELD_FL_*` flags, the event field it reads (if any), and what
//! computes its value (`Fetch`, C's `enum hist_field_fn`, evaluated by
//! one `match`).  `.log2` and `.buckets=` fields have an operand, another
//! hist field kept in the same arena, as C keeps `operands[0]`.  Names,
//! displays, key sizes and compare functions all follow from the flags, as
//! in C, so the odd cases come out as C's too (`hitcount.log2` as a key
//! always holds 1 and has an empty name; `cpu` is named `cpu` in the hist
//! file and `common_cpu` in the trigger info).
//!
//! # What is not supported yet
//!
//! Variables, variable references, expressions (operators, unary minus,
//! constants), field variables and handlers/actions.  For those
//! [`HistData::build`] returns the error C gives before it gets to them if
//! there is one, otherwise [`not_supported`] (a silent `-EINVAL`):
//!
//! * `onmatch()`: when `parse_actions()` gets to it (C looks its event up);
//! * `onmax()`/`onchange()`: after everything else is built (C only checks
//!   them in `create_actions()`, after registration);
//! * variable definitions: when `create_var_fields()` would create them;
//! * an expression or a constant key or value: after walking it as
//!   `parse_expr()` does, so its syntax errors, unknown fields, bad
//!   modifiers, string operands (`INVALID_STR_OPERAND`), timestamp unit
//!   mismatches and literal zero divisors are reported as C reports them;
//! * a `$var` reference (other than one standing for a plain field of a
//!   variable of this trigger, which C parses as that field): where C
//!   looks the variable up;
//! * values C computes from kernel addresses (a string field as a value,
//!   `.log2`/`.buckets=` of a string or stack trace field) and strings
//!   behind a pointer (`FILTER_COMM` fields): after everything else.

use core::fmt::{self, Write};

use super::error::{errno, HistError, HistErrorKind};
use super::event::{EventDesc, EventField, FieldStorage};
use super::grammar::{
    FieldContext, FieldModifier, FieldSpec, Handler, KeyField, Node, NodeId, SpecialField,
    TriggerSpec, VarDefs, TRACING_MAP_KEYS_MAX, TRACING_MAP_SORT_KEYS_MAX, TRACING_MAP_VALS_MAX,
};
use super::output::{KeyDisplay, KeyPart, ValDisplay, STACKTRACE_DEPTH};

/// `MAX_FILTER_STR_VAL`: the key size of a dynamic string.
pub const MAX_FILTER_STR_VAL: u32 = 256;
/// `HIST_STACKTRACE_SIZE`: the key size of a stack trace (16 frames).
pub const HIST_STACKTRACE_SIZE: u32 = (STACKTRACE_DEPTH * 8) as u32;
/// `HIST_KEY_SIZE_MAX`: the largest key, all key fields together.
pub const HIST_KEY_SIZE_MAX: u32 = MAX_FILTER_STR_VAL + HIST_STACKTRACE_SIZE;

/// Out of memory: what C returns when `create_hist_field()` fails, e.g.
/// for a numeric field whose size is not 1, 2, 4 or 8.
const ENOMEM: i32 = 12;

/// Hist fields one trigger can make: hitcount, two values, three keys,
/// an operand each, and the atoms of an expression walked before
/// [`not_supported`].
const NODES_MAX: usize = 24;

/// The error for what this module does not support yet (variables,
/// variable references, expressions, field variables, handlers and
/// actions, address-valued fields): a silent `-EINVAL`.
pub const fn not_supported() -> HistError {
    HistError::silent(errno::EINVAL)
}

// C's `enum hist_field_flags`.
const FL_HITCOUNT: u32 = 1 << 0;
const FL_KEY: u32 = 1 << 1;
const FL_STRING: u32 = 1 << 2;
const FL_HEX: u32 = 1 << 3;
const FL_SYM: u32 = 1 << 4;
const FL_SYM_OFFSET: u32 = 1 << 5;
const FL_EXECNAME: u32 = 1 << 6;
const FL_SYSCALL: u32 = 1 << 7;
const FL_STACKTRACE: u32 = 1 << 8;
const FL_LOG2: u32 = 1 << 9;
const FL_TIMESTAMP: u32 = 1 << 10;
const FL_TIMESTAMP_USECS: u32 = 1 << 11;
const FL_VAR: u32 = 1 << 12;
const FL_EXPR: u32 = 1 << 13;
const FL_VAR_REF: u32 = 1 << 14;
const FL_CPU: u32 = 1 << 15;
const FL_ALIAS: u32 = 1 << 16;
const FL_BUCKET: u32 = 1 << 17;
const FL_PERCENT: u32 = 1 << 19;
const FL_GRAPH: u32 = 1 << 20;

/// What the shell knows about the event being traced, for the fields that
/// do not come from the record.
pub trait EventContext {
    /// The CPU the event fires on (`smp_processor_id()`).
    fn cpu(&self) -> u32;
    /// The event's ring-buffer timestamp, raw (ns for ns clocks).
    fn timestamp(&self) -> u64;
    /// Whether the trace clock counts nanoseconds (trace_clock_in_ns()).
    fn clock_in_ns(&self) -> bool;
    /// Fills `out` with the current stack (zero-terminated if shorter).
    fn stacktrace(&self, out: &mut [u64]);
}

/// One sort key of the map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortKey {
    /// What to compare.
    pub field: SortField,
    /// Largest first.
    pub descending: bool,
}

/// What a sort key compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortField {
    /// Sum `i` (0 is hitcount).
    Sum(usize),
    /// A key field: compare the bytes at offset..offset+size of the stored key as C's cmp function for that key does.
    ///
    /// For [`KeyCmp::Unsigned`] and [`KeyCmp::Signed`], C reads the u64 at
    /// `offset` and truncates it to a `size`-byte integer (1, 2, 4 or 8);
    /// for [`KeyCmp::String`] it `strcmp()`s from `offset` (the string is
    /// NUL-terminated within its `size` bytes); [`KeyCmp::None`] compares
    /// equal.
    Key {
        /// Byte offset of the key field in the key.
        offset: u32,
        /// The compared width (see above).
        size: u32,
        /// How to compare.
        cmp: KeyCmp,
    },
}

/// C's `tracing_map_cmp_*` functions for keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyCmp {
    /// `tracing_map_cmp_u{8,16,32,64}`
    Unsigned,
    /// `tracing_map_cmp_s{8,16,32,64}`
    Signed,
    /// `tracing_map_cmp_string`
    String,
    /// `tracing_map_cmp_none`
    None,
}

/// How a hist field gets its value: C's `enum hist_field_fn`.  Record
/// offsets are those of the event field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Fetch {
    /// `HIST_FIELD_FN_NOP`: 0 (and, for a stack trace key, the current
    /// stack).
    #[default]
    Nop,
    /// `hist_field_counter()`: 1.
    Counter,
    /// `hist_field_log2()`: `order_base_2()` of the operand.
    Log2,
    /// `hist_field_bucket()`: the operand rounded down to the bucket size.
    Bucket,
    /// `hist_field_timestamp()`.
    Timestamp,
    /// `hist_field_cpu()`.
    Cpu,
    /// `hist_field_string()`: a `char[N]` in the record.
    String { at: u32 },
    /// `hist_field_dynstring()`: a `__data_loc` string.
    DynString { at: u32 },
    /// `hist_field_reldynstring()`: a `__rel_loc` string.
    RelDynString { at: u32 },
    /// `hist_field_pstring()`: a string behind a pointer (not read here).
    PString,
    /// `hist_field_{s,u}{8,16,32,64}()`.
    Num { at: u32, size: u8, signed: bool },
    /// `hist_field_stack()`: a stack trace field (`__data_loc`: a count,
    /// then the frames).
    Stack { at: u32 },
}

/// One hist field, C's `struct hist_field` (the parts used so far).
#[derive(Clone, Copy, Debug, Default)]
struct HistField<'a> {
    flags: u32,
    field: Option<&'a EventField<'a>>,
    fetch: Fetch,
    operand: Option<u8>,
    size: u32,
    offset: u32,
    signed: bool,
    buckets: u64,
}

/// The fields `trace_find_event_field()` finds between the event's own
/// fields and the common ones (`trace_define_generic_fields()`), all of
/// size 0.
static GENERIC_FIELDS: [EventField<'static>; 7] = [
    generic("CPU", "int", true, FieldStorage::Cpu),
    generic("cpu", "int", true, FieldStorage::Cpu),
    generic("common_cpu", "int", true, FieldStorage::Cpu),
    generic("COMM", "char *", false, FieldStorage::Comm),
    generic("comm", "char *", false, FieldStorage::Comm),
    generic("stacktrace", "char *", false, FieldStorage::Stacktrace),
    generic("STACKTRACE", "char *", false, FieldStorage::Stacktrace),
];

const fn generic(
    name: &'static str,
    type_name: &'static str,
    signed: bool,
    storage: FieldStorage,
) -> EventField<'static> {
    EventField {
        name,
        type_name,
        offset: 0,
        size: 0,
        signed,
        storage,
    }
}

/// `trace_find_event_field()`: the event's fields, the generic ones, the
/// common ones.
fn find_event_field<'a>(event: &EventDesc<'a>, name: &str) -> Option<&'a EventField<'a>> {
    let generic: &'a [EventField<'a>] = &GENERIC_FIELDS;
    event
        .fields
        .iter()
        .chain(generic.iter())
        .chain(event.common_fields.iter())
        .find(|f| f.name == name)
}

/// `is_string_field()` (which, unlike [`FieldStorage::is_string`], also
/// counts `FILTER_COMM`).
fn is_string_field(field: &EventField<'_>) -> bool {
    field.storage.is_string() || field.storage == FieldStorage::Comm
}

/// `ALIGN(n, sizeof(u64))` in C's `unsigned int`.
const fn align8(n: u32) -> u32 {
    n.wrapping_add(7) & !7
}

/// `order_base_2()`: 0 and 1 give 0.
pub const fn order_base_2(n: u64) -> u64 {
    if n > 1 {
        (u64::BITS - (n - 1).leading_zeros()) as u64
    } else {
        0
    }
}

/// `ns2usecs()`: rounded to the nearest microsecond.
pub const fn ns2usecs(ns: u64) -> u64 {
    ns.wrapping_add(500) / 1000
}

/// The `N` bytes at `at` of the record, if they are all there.
fn rec_bytes<const N: usize>(rec: &[u8], at: usize) -> Option<[u8; N]> {
    rec.get(at..at.checked_add(N)?)?.try_into().ok()
}

/// A u32 of the record (0 when out of range).
fn rec_u32(rec: &[u8], at: usize) -> u32 {
    rec_bytes(rec, at).map_or(0, u32::from_ne_bytes)
}

/// A u64 of the record (0 when out of range).
fn rec_u64(rec: &[u8], at: usize) -> u64 {
    rec_bytes(rec, at).map_or(0, u64::from_ne_bytes)
}

/// `(u64)*(type *)(rec + at)`: signed types sign-extend.
fn rec_num(rec: &[u8], at: u32, size: u8, signed: bool) -> u64 {
    let at = at as usize;
    match (size, signed) {
        (1, false) => rec_bytes(rec, at).map_or(0, |b| u64::from(u8::from_ne_bytes(b))),
        (1, true) => rec_bytes(rec, at).map_or(0, |b| i8::from_ne_bytes(b) as u64),
        (2, false) => rec_bytes(rec, at).map_or(0, |b| u64::from(u16::from_ne_bytes(b))),
        (2, true) => rec_bytes(rec, at).map_or(0, |b| i16::from_ne_bytes(b) as u64),
        (4, false) => rec_bytes(rec, at).map_or(0, |b| u64::from(u32::from_ne_bytes(b))),
        (4, true) => rec_bytes(rec, at).map_or(0, |b| i32::from_ne_bytes(b) as u64),
        (8, _) => rec_u64(rec, at),
        _ => 0,
    }
}

/// Copies `src` into the start of `dst`, as far as both go.
fn put(dst: &mut [u8], src: &[u8]) {
    let n = dst.len().min(src.len());
    if let (Some(d), Some(s)) = (dst.get_mut(..n), src.get(..n)) {
        d.copy_from_slice(s);
    }
}

/// `strncpy(dst, rec + src, size)` into a zeroed `dst`: stops at the
/// first NUL, the end of the record or `size` bytes.
fn strncpy_from(dst: &mut [u8], rec: &[u8], src: usize, size: usize) {
    let from = rec.get(src..).unwrap_or(&[]);
    for (d, &b) in dst.iter_mut().zip(from.iter()).take(size) {
        if b == 0 {
            break;
        }
        *d = b;
    }
}

/// What `parse_expr()` knows of an operand when it checks an operator.
#[derive(Clone, Copy)]
struct Operand {
    string: bool,
    usecs: bool,
}

/// A hist trigger bound to an event (C's `struct hist_trigger_data`),
/// for triggers without variables, references, expressions or actions.
///
/// Values are hist fields 0 (hitcount) to `n_sums() - 1`; keys follow in
/// C's order.  Everything is in fixed-size arrays.
#[derive(Clone, Debug)]
pub struct HistData<'a> {
    spec: TriggerSpec<'a>,
    nodes: [HistField<'a>; NODES_MAX],
    n_nodes: usize,
    vals: [u8; TRACING_MAP_VALS_MAX],
    n_vals: usize,
    keys: [u8; TRACING_MAP_KEYS_MAX],
    n_keys: usize,
    key_size: u32,
    sort_keys: [SortKey; TRACING_MAP_SORT_KEYS_MAX],
    /// The hist field each sort key names (`None`: hitcount).
    sort_fields: [Option<u8>; TRACING_MAP_SORT_KEYS_MAX],
    n_sort_keys: usize,
    enable_timestamps: bool,
    ts_in_usecs: bool,
}

/// The state of one [`HistData::build`].
struct Builder<'h, 'e, 'a> {
    hd: &'h mut HistData<'a>,
    event: &'e EventDesc<'a>,
    defs: VarDefs<'a>,
    /// [`not_supported`] for something C accepts but that does not stop
    /// the build (reported if nothing else fails).
    deferred: Option<HistError>,
}

const HITCOUNT_SORT: SortKey = SortKey {
    field: SortField::Sum(0),
    descending: false,
};

impl<'a> HistData<'a> {
    /// Builds the hist data of `spec` on `event`, as `create_hist_data()`
    /// does; the error is the first one C reports (or [`not_supported`]).
    pub fn build(spec: &TriggerSpec<'a>, event: &EventDesc<'a>) -> Result<Self, HistError> {
        let mut hd = Self::empty(spec);
        Self::build_into(&mut hd, spec, event)?;
        Ok(hd)
    }

    /// A histogram of nothing for `spec`: what [`build_into`](Self::build_into)
    /// starts from.
    pub fn empty(spec: &TriggerSpec<'a>) -> Self {
        HistData {
            spec: *spec,
            nodes: [HistField::default(); NODES_MAX],
            n_nodes: 0,
            vals: [0; TRACING_MAP_VALS_MAX],
            n_vals: 0,
            keys: [0; TRACING_MAP_KEYS_MAX],
            n_keys: 0,
            key_size: 0,
            sort_keys: [HITCOUNT_SORT; TRACING_MAP_SORT_KEYS_MAX],
            sort_fields: [None; TRACING_MAP_SORT_KEYS_MAX],
            n_sort_keys: 1,
            enable_timestamps: false,
            ts_in_usecs: false,
        }
    }

    /// [`build`](Self::build) into `hd`, which must be [`empty`](Self::empty)
    /// for `spec`: for callers that keep the (large) result on the heap
    /// and have little stack, like the kernel's.
    pub fn build_into(
        hd: &mut HistData<'a>,
        spec: &TriggerSpec<'a>,
        event: &EventDesc<'a>,
    ) -> Result<(), HistError> {
        let mut deferred = None;
        // parse_actions(): the grammar did what comes before the first
        // onmatch() event look-up.
        for handler in spec.actions() {
            let handler = handler?;
            if let Handler::OnMatch { .. } = handler.handler() {
                return Err(not_supported());
            }
            handler.action()?;
            deferred = Some(not_supported());
        }
        let defs = spec.var_defs()?;
        let mut b = Builder {
            hd,
            event,
            defs,
            deferred,
        };
        b.create_val_fields()?;
        // create_var_fields()
        if !b.defs.is_empty() {
            return Err(not_supported());
        }
        b.create_key_fields()?;
        b.create_sort_keys()?;
        match b.deferred {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The trigger this was built from.
    pub fn spec(&self) -> &TriggerSpec<'a> {
        &self.spec
    }

    /// The key size in bytes (a multiple of 8).
    pub fn key_size(&self) -> usize {
        self.key_size as usize
    }

    /// The number of sums: hitcount and the values.
    pub fn n_sums(&self) -> usize {
        self.n_vals
    }

    /// The map size in bits.
    pub fn map_bits(&self) -> u32 {
        self.spec.hist_bits()
    }

    /// Whether a field has `.execname`: the shell saves `current->comm`
    /// with each new entry (`hist_trigger_elt_data_init()`).
    pub fn needs_comm(&self) -> bool {
        self.field_ids()
            .any(|id| self.node(id).flags & FL_EXECNAME != 0)
    }

    /// Whether a field is `common_timestamp` (C's `enable_timestamps`):
    /// the shell turns ring-buffer timestamps on, and the info line shows
    /// the clock.
    pub fn uses_timestamps(&self) -> bool {
        self.enable_timestamps
    }

    /// Whether timestamps are converted to microseconds (C's
    /// `attrs->ts_in_usecs`: some `common_timestamp` has `.usecs`).
    pub fn ts_in_usecs(&self) -> bool {
        self.ts_in_usecs
    }

    /// Builds the key for one event record into `key` (len == key_size()),
    /// zeroing it first, as event_hist_trigger()/add_to_key() do (strncpy
    /// semantics and the size-1 truncation of strings included). Never
    /// panics: out-of-range record offsets read as zero/empty.
    pub fn write_key(&self, rec: &[u8], ctx: &dyn EventContext, key: &mut [u8]) {
        key.fill(0);
        for &id in self.key_ids() {
            let f = self.node(id);
            let start = (f.offset as usize).min(key.len());
            let end = start.saturating_add(f.size as usize).min(key.len());
            let Some(slot) = key.get_mut(start..end) else {
                continue;
            };
            if f.flags & FL_STACKTRACE != 0 {
                let mut entries = [0u64; STACKTRACE_DEPTH];
                match f.fetch {
                    Fetch::Stack { at } => read_stack(rec, at, &mut entries),
                    _ => ctx.stacktrace(&mut entries),
                }
                for (chunk, e) in slot.chunks_mut(8).zip(entries.iter()) {
                    put(chunk, &e.to_ne_bytes());
                }
            } else if f.flags & FL_STRING != 0 {
                let Some(field) = f.field else { continue };
                // add_to_key(): the string's size, at most the slot less
                // one, so that it stays NUL-terminated.
                let (src, size) = match f.fetch {
                    Fetch::String { at } => (at as usize, field.size as usize),
                    Fetch::DynString { at } => {
                        let item = rec_u32(rec, at as usize);
                        ((item & 0xffff) as usize, (item >> 16) as usize)
                    }
                    Fetch::RelDynString { at } => {
                        let item = rec_u32(rec, at as usize);
                        let base = at as usize + 4;
                        (base + (item & 0xffff) as usize, (item >> 16) as usize)
                    }
                    _ => continue,
                };
                let size = size.min((f.size as usize).saturating_sub(1));
                strncpy_from(slot, rec, src, size);
            } else {
                put(slot, &self.value(id, rec, ctx).to_ne_bytes());
            }
        }
    }

    /// The value added to sum `i` (0 = hitcount, always 1) for this record.
    pub fn sum_value(&self, i: usize, rec: &[u8], ctx: &dyn EventContext) -> u64 {
        match self.vals.get(..self.n_vals).and_then(|v| v.get(i)) {
            Some(&id) => self.value(id, rec, ctx),
            None => 0,
        }
    }

    /// The key parts of a stored key, for output::write_keys.
    pub fn key_parts<'k>(&'k self, key: &'k [u8]) -> impl Iterator<Item = KeyPart<'k>> + 'k {
        self.key_ids().iter().map(move |&id| {
            let f = self.node(id);
            let start = (f.offset as usize).min(key.len());
            let end = start.saturating_add(f.size as usize).min(key.len());
            KeyPart {
                name: self.field_name(id, 0),
                display: key_display(f),
                bytes: key.get(start..end).unwrap_or(&[]),
            }
        })
    }

    /// The values to print after the keys: (sum index, name, display), hitcount first unless nohitcount.
    ///
    /// As in `hist_trigger_entry_print()`, C puts one more space before
    /// each value after hitcount than [`super::output::write_val`] writes.
    pub fn printed_vals(&self) -> impl Iterator<Item = (usize, &'a str, ValDisplay)> + '_ {
        let no_hitcount = self.spec.no_hitcount();
        self.val_ids()
            .iter()
            .enumerate()
            .filter(move |&(i, &id)| {
                let flags = self.node(id).flags;
                if i == 0 {
                    !no_hitcount
                } else {
                    flags & (FL_VAR | FL_EXPR) == 0
                }
            })
            .map(move |(i, &id)| {
                if i == 0 {
                    (0, "hitcount", ValDisplay::Plain)
                } else {
                    let f = self.node(id);
                    (i, self.field_name(id, 0), val_display(f))
                }
            })
    }

    /// The sort keys, for the map: at least one (hitcount ascending by default).
    pub fn sort_keys(&self) -> &[SortKey] {
        self.sort_keys.get(..self.n_sort_keys).unwrap_or(&[])
    }

    /// The trigger info line without its filter/state suffix: `hist:keys=...:vals=...:sort=...:size=N[:clock=..][:nohitcount]`
    /// with `prefix` replacing `hist:` (rhist passes "rhist:"), and `name:` after the prefix for named triggers, exactly as event_hist_trigger_print().
    pub fn write_info(&self, out: &mut dyn Write, prefix: &str) -> fmt::Result {
        out.write_str(prefix)?;
        if let Some(name) = self.spec.name_attr() {
            write!(out, "{name}:")?;
        }
        out.write_str("keys=")?;
        for (i, &id) in self.key_ids().iter().enumerate() {
            if i > 0 {
                out.write_char(',')?;
            }
            let f = self.node(id);
            if f.flags & FL_STACKTRACE != 0 {
                match f.field {
                    Some(field) => write!(out, "{}.stacktrace", field.name)?,
                    None => out.write_str("common_stacktrace")?,
                }
            } else {
                self.print_field(out, id)?;
            }
        }
        out.write_str(":vals=")?;
        let mut show_val = false;
        for (i, &id) in self.val_ids().iter().enumerate() {
            if i == 0 {
                if self.spec.no_hitcount() {
                    continue;
                }
                out.write_str("hitcount")?;
            } else {
                if show_val {
                    out.write_char(',')?;
                }
                self.print_field(out, id)?;
            }
            show_val = true;
        }
        out.write_str(":sort=")?;
        for (i, (key, field)) in self.sort_keys().iter().zip(self.sort_fields).enumerate() {
            if i > 0 {
                out.write_char(',')?;
            }
            match field {
                None => out.write_str("hitcount")?,
                Some(id) => self.print_field(out, id)?,
            }
            if key.descending {
                out.write_str(".descending")?;
            }
        }
        write!(out, ":size={}", 1u32 << self.map_bits())?;
        if self.enable_timestamps {
            write!(out, ":clock={}", self.spec.clock())?;
        }
        if self.spec.no_hitcount() {
            out.write_str(":nohitcount")?;
        }
        Ok(())
    }

    // --- internals --------------------------------------------------------

    fn node(&self, id: u8) -> HistField<'a> {
        self.nodes.get(usize::from(id)).copied().unwrap_or_default()
    }

    fn val_ids(&self) -> &[u8] {
        self.vals.get(..self.n_vals).unwrap_or(&[])
    }

    fn key_ids(&self) -> &[u8] {
        self.keys.get(..self.n_keys).unwrap_or(&[])
    }

    /// The values and keys (C's `fields[]`).
    fn field_ids(&self) -> impl Iterator<Item = u8> + '_ {
        self.val_ids().iter().chain(self.key_ids()).copied()
    }

    /// `hist_fn_call()`: the value of hist field `id` for this record.
    fn value(&self, id: u8, rec: &[u8], ctx: &dyn EventContext) -> u64 {
        let f = self.node(id);
        // Operands are made before the fields that use them.
        let operand = |rec, ctx| match f.operand {
            Some(op) if op < id => self.value(op, rec, ctx),
            _ => 0,
        };
        match f.fetch {
            Fetch::Counter => 1,
            Fetch::Log2 => order_base_2(operand(rec, ctx)),
            Fetch::Bucket => {
                let val = operand(rec, ctx);
                match f.buckets {
                    0 => val,
                    // C divides as unsigned long below LONG_MAX and with
                    // div64_ul() above: the same thing on 64 bits.
                    b => (val / b).wrapping_mul(b),
                }
            }
            Fetch::Timestamp => {
                let ts = ctx.timestamp();
                if self.ts_in_usecs && ctx.clock_in_ns() {
                    ns2usecs(ts)
                } else {
                    ts
                }
            }
            Fetch::Cpu => u64::from(ctx.cpu()),
            Fetch::Num { at, size, signed } => rec_num(rec, at, size, signed),
            // Addresses in C: never used as numbers by what build() accepts.
            Fetch::Nop
            | Fetch::String { .. }
            | Fetch::DynString { .. }
            | Fetch::RelDynString { .. }
            | Fetch::PString
            | Fetch::Stack { .. } => 0,
        }
    }

    /// `hist_field_name()`.
    fn field_name(&self, id: u8, level: u32) -> &'a str {
        if level > 1 {
            return "";
        }
        let f = self.node(id);
        if let Some(field) = f.field {
            field.name
        } else if f.flags & (FL_LOG2 | FL_ALIAS | FL_BUCKET) != 0 {
            match f.operand {
                Some(op) if op < id => self.field_name(op, level + 1),
                _ => "",
            }
        } else if f.flags & FL_CPU != 0 {
            "common_cpu"
        } else if f.flags & FL_TIMESTAMP != 0 {
            "common_timestamp"
        } else if f.flags & FL_STACKTRACE != 0 {
            "common_stacktrace"
        } else if f.flags & FL_HITCOUNT != 0 {
            "hitcount"
        } else {
            ""
        }
    }

    /// `hist_field_print()`.
    fn print_field(&self, out: &mut dyn Write, id: u8) -> fmt::Result {
        let f = self.node(id);
        if f.flags & FL_CPU != 0 {
            out.write_str("common_cpu")?;
        } else {
            out.write_str(self.field_name(id, 0))?;
        }
        if f.flags & (FL_VAR_REF | FL_EXPR | FL_STACKTRACE) == 0 {
            if let Some(flags) = field_flags_str(f.flags) {
                write!(out, ".{flags}")?;
            }
        }
        if f.buckets != 0 {
            // C prints the unsigned long with %ld.
            write!(out, "={}", f.buckets as i64)?;
        }
        Ok(())
    }

    /// The compare function `create_tracing_map_fields()` gives a key.
    fn key_sort_field(&self, f: &HistField<'a>) -> SortField {
        let num = |size: u32, signed: bool| match (size, signed) {
            (1 | 2 | 4 | 8, false) => (KeyCmp::Unsigned, size),
            (1 | 2 | 4 | 8, true) => (KeyCmp::Signed, size),
            _ => (KeyCmp::None, f.size),
        };
        let (cmp, size) = match f.field {
            _ if f.flags & FL_STACKTRACE != 0 => (KeyCmp::None, f.size),
            None => num(f.size, f.signed),
            Some(_) if f.flags & FL_CPU != 0 => num(f.size, f.signed),
            Some(field) if is_string_field(field) => (KeyCmp::String, f.size),
            Some(field) => num(field.size, field.signed),
        };
        SortField::Key {
            offset: f.offset,
            size,
            cmp,
        }
    }
}

/// `get_hist_field_flags()`.
fn field_flags_str(flags: u32) -> Option<&'static str> {
    const NAMES: [(u32, &str); 11] = [
        (FL_HEX, "hex"),
        (FL_SYM, "sym"),
        (FL_SYM_OFFSET, "sym-offset"),
        (FL_EXECNAME, "execname"),
        (FL_SYSCALL, "syscall"),
        (FL_LOG2, "log2"),
        (FL_BUCKET, "buckets"),
        (FL_TIMESTAMP_USECS, "usecs"),
        (FL_PERCENT, "percent"),
        (FL_GRAPH, "graph"),
        (FL_STACKTRACE, "stacktrace"),
    ];
    NAMES
        .iter()
        .find(|(flag, _)| flags & flag != 0)
        .map(|&(_, name)| name)
}

/// How `hist_trigger_print_key()` shows a key field.
fn key_display(f: HistField<'_>) -> KeyDisplay {
    let has = |flag: u32| f.flags & flag != 0;
    if has(FL_HEX) {
        KeyDisplay::Hex
    } else if has(FL_SYM) {
        KeyDisplay::Sym
    } else if has(FL_SYM_OFFSET) {
        KeyDisplay::SymOffset
    } else if has(FL_EXECNAME) {
        KeyDisplay::Execname
    } else if has(FL_SYSCALL) {
        KeyDisplay::Syscall
    } else if has(FL_STACKTRACE) {
        KeyDisplay::Stacktrace
    } else if has(FL_LOG2) {
        KeyDisplay::Log2
    } else if has(FL_BUCKET) {
        KeyDisplay::Buckets(f.buckets)
    } else if has(FL_STRING) {
        KeyDisplay::Str
    } else {
        KeyDisplay::Plain
    }
}

/// How `hist_trigger_print_val()` shows a value.
fn val_display(f: HistField<'_>) -> ValDisplay {
    if f.flags & FL_PERCENT != 0 {
        ValDisplay::Percent
    } else if f.flags & FL_GRAPH != 0 {
        ValDisplay::Graph
    } else if f.flags & FL_HEX != 0 {
        ValDisplay::Hex
    } else {
        ValDisplay::Plain
    }
}

/// `hist_field_stack()` and the copy of `event_hist_trigger()`: at the
/// `__data_loc` of the field, a count and the frames.  C copies as many
/// frames as the count says; here at most [`STACKTRACE_DEPTH`], and frames
/// beyond the record read as 0.
fn read_stack(rec: &[u8], at: u32, entries: &mut [u64; STACKTRACE_DEPTH]) {
    let loc = (rec_u32(rec, at as usize) & 0xffff) as usize;
    let n = rec_u64(rec, loc).min(STACKTRACE_DEPTH as u64) as usize;
    for (i, e) in entries.iter_mut().enumerate().take(n) {
        *e = rec_u64(rec, loc + 8 + 8 * i);
    }
}

impl<'a> Builder<'_, '_, 'a> {
    fn spec(&self) -> &TriggerSpec<'a> {
        &self.hd.spec
    }

    fn error(&self, kind: HistErrorKind, at: &str) -> HistError {
        HistError::new(kind, self.spec().errpos(at))
    }

    fn defer(&mut self) {
        self.deferred.get_or_insert(not_supported());
    }

    fn push(&mut self, f: HistField<'a>) -> Result<u8, HistError> {
        let id = self.hd.n_nodes;
        let slot = self.hd.nodes.get_mut(id).ok_or(not_supported())?;
        *slot = f;
        self.hd.n_nodes += 1;
        // NODES_MAX < 256.
        Ok(id as u8)
    }

    fn node(&self, id: u8) -> HistField<'a> {
        self.hd.node(id)
    }

    /// `create_val_fields()`.
    fn create_val_fields(&mut self) -> Result<(), HistError> {
        // create_hitcount_val()
        let hitcount = self.push(HistField {
            flags: FL_HITCOUNT,
            fetch: Fetch::Counter,
            size: 8,
            ..HistField::default()
        })?;
        self.hd.vals[0] = hitcount;
        self.hd.n_vals = 1;
        let vals = self.spec().vals();
        for &text in vals.fields() {
            self.create_val_field(text)?;
        }
        if let Some(e) = vals.too_many_error() {
            return Err(e);
        }
        if let Some(e) = vals.nohitcount_error() {
            return Err(e);
        }
        Ok(())
    }

    /// `create_val_field()` / `__create_val_field()` of a value.
    fn create_val_field(&mut self, text: &'a str) -> Result<(), HistError> {
        let id = self.parse_expr(text, FieldContext::Val)?;
        let f = self.node(id);
        let forbidden = FL_BUCKET | FL_LOG2 | FL_SYM | FL_SYM_OFFSET | FL_SYSCALL | FL_STACKTRACE;
        if f.flags & forbidden != 0 {
            return Err(self.error(HistErrorKind::BadFieldModifier, text));
        }
        if f.flags & FL_STRING != 0 {
            // C sums the string's address.
            self.defer();
        }
        let slot = self
            .hd
            .vals
            .get_mut(self.hd.n_vals)
            .ok_or(not_supported())?;
        *slot = id;
        self.hd.n_vals += 1;
        Ok(())
    }

    /// `create_key_fields()`.
    fn create_key_fields(&mut self) -> Result<(), HistError> {
        let keys = self.spec().keys();
        for &key in keys.fields() {
            self.create_key_field(key)?;
        }
        match keys.too_many_error() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// `create_key_field()`.
    fn create_key_field(&mut self, key: KeyField<'a>) -> Result<(), HistError> {
        let (id, size) = match key {
            KeyField::Stacktrace => {
                let id = self.push(HistField {
                    flags: FL_KEY | FL_STACKTRACE,
                    size: HIST_STACKTRACE_SIZE,
                    ..HistField::default()
                })?;
                (id, HIST_STACKTRACE_SIZE)
            }
            KeyField::Expr(text) => {
                let id = self.parse_expr(text, FieldContext::Key)?;
                (id, self.node(id).size)
            }
        };
        let size = align8(size);
        let offset = self.hd.key_size;
        if let Some(f) = self.hd.nodes.get_mut(usize::from(id)) {
            f.size = size;
            f.offset = offset;
        }
        self.hd.key_size = offset.wrapping_add(size);
        if self.hd.key_size > HIST_KEY_SIZE_MAX {
            return Err(HistError::silent(errno::EINVAL));
        }
        let slot = self
            .hd
            .keys
            .get_mut(self.hd.n_keys)
            .ok_or(not_supported())?;
        *slot = id;
        self.hd.n_keys += 1;
        Ok(())
    }

    /// `create_sort_keys()`.
    fn create_sort_keys(&mut self) -> Result<(), HistError> {
        let Some(sort) = self.spec().sort_keys() else {
            return Ok(());
        };
        let mut n = 0;
        for (i, key) in sort.keys().iter().enumerate() {
            let (field, node) = if key.name() == "hitcount" {
                (SortField::Sum(0), None)
            } else {
                let vals = self.hd.val_ids().iter().enumerate().skip(1);
                let vals = vals.map(|(j, &id)| (SortField::Sum(j), id));
                let keys = self.hd.key_ids().iter();
                let keys = keys.map(|&id| (self.hd.key_sort_field(&self.node(id)), id));
                let found = vals
                    .chain(keys)
                    .find(|&(_, id)| self.hd.field_name(id, 0) == key.name());
                match found {
                    Some((field, id)) => (field, Some(id)),
                    None => return Err(self.error(HistErrorKind::InvalidSortField, key.name())),
                }
            };
            let descending = key.descending()?;
            if let (Some(k), Some(f)) =
                (self.hd.sort_keys.get_mut(i), self.hd.sort_fields.get_mut(i))
            {
                *k = SortKey { field, descending };
                *f = node;
            }
            n = i + 1;
        }
        if let Some(e) = sort.error() {
            return Err(e);
        }
        self.hd.n_sort_keys = n;
        Ok(())
    }

    /// `parse_expr()` of a key or value: its hist field, the error C
    /// reports, or [`not_supported`] for an expression.
    fn parse_expr(&mut self, text: &'a str, ctx: FieldContext) -> Result<u8, HistError> {
        let expr = self.spec().parse_expr(text, ctx);
        let root = expr.root();
        match *expr.node(root) {
            Node::Atom(atom) => self.parse_atom(&atom),
            _ => {
                self.walk_expr(&expr, root)?;
                Err(not_supported())
            }
        }
    }

    /// Walks an expression as `parse_expr()` and `parse_unary()` do, up to
    /// what needs the values: gives the first error C reports.
    fn walk_expr(
        &mut self,
        expr: &super::grammar::Expr<'a>,
        id: NodeId,
    ) -> Result<Operand, HistError> {
        match *expr.node(id) {
            Node::Error(e) => Err(e),
            Node::Const { .. } => Ok(Operand {
                string: false,
                usecs: false,
            }),
            Node::Atom(atom) => {
                let id = self.parse_atom(&atom)?;
                let f = self.node(id);
                Ok(Operand {
                    string: f.flags & FL_STRING != 0,
                    usecs: f.flags & FL_TIMESTAMP_USECS != 0,
                })
            }
            Node::Neg { text, operand } => {
                let o = self.walk_expr(expr, operand)?;
                if o.string {
                    return Err(self.error(HistErrorKind::InvalidStrOperand, text));
                }
                Ok(Operand {
                    string: false,
                    usecs: o.usecs,
                })
            }
            Node::Binary {
                op,
                lhs_text,
                rhs_text,
                lhs,
                rhs,
            } => {
                let l = self.walk_expr(expr, lhs)?;
                if l.string {
                    return Err(self.error(HistErrorKind::InvalidStrOperand, lhs_text));
                }
                let r = self.walk_expr(expr, rhs)?;
                if r.string {
                    return Err(self.error(HistErrorKind::InvalidStrOperand, rhs_text));
                }
                if l.usecs != r.usecs {
                    return Err(HistError::new(HistErrorKind::TimestampMismatch, 0));
                }
                if op == super::grammar::BinaryOp::Div {
                    if let Node::Const { value: 0, .. } = expr.node(rhs) {
                        return Err(self.error(HistErrorKind::DivisionByZero, rhs_text));
                    }
                }
                Ok(Operand {
                    string: false,
                    usecs: l.usecs,
                })
            }
        }
    }

    /// `parse_atom()` of a field (constants are walked by
    /// [`Self::walk_expr`]).
    fn parse_atom(&mut self, atom: &super::grammar::Atom<'a>) -> Result<u8, HistError> {
        let text = match atom.var_ref() {
            None => atom.name(),
            Some(var) => {
                // local_field_var_ref(): a variable of this trigger that
                // is a plain field stands for that field.
                let here = match (atom.system(), atom.event()) {
                    (Some(s), Some(e)) => s == self.event.system && e == self.event.name,
                    (None, None) => true,
                    _ => false,
                };
                let local = if here {
                    self.spec().field_name_from_var(&self.defs, var)
                } else {
                    None
                };
                // Otherwise C looks the variable up.
                local.ok_or(not_supported())?
            }
        };
        let field = self.spec().parse_field(text, atom.context());
        self.parse_field(field, atom.context())
    }

    /// `parse_field()` and `create_hist_field()`.
    fn parse_field(&mut self, spec: FieldSpec<'a>, ctx: FieldContext) -> Result<u8, HistError> {
        let modifier = spec.modifier()?;
        let mut flags = match ctx {
            FieldContext::Key => FL_KEY,
            FieldContext::Var => FL_VAR,
            FieldContext::Val | FieldContext::Operand => 0,
        };
        let mut buckets = 0;
        flags |= match modifier {
            None => 0,
            Some(FieldModifier::Hex) => FL_HEX,
            Some(FieldModifier::Sym) => FL_SYM,
            Some(FieldModifier::SymOffset) => FL_SYM_OFFSET,
            Some(FieldModifier::Execname) => FL_EXECNAME,
            Some(FieldModifier::Syscall) => FL_SYSCALL,
            Some(FieldModifier::Stacktrace) => FL_STACKTRACE,
            Some(FieldModifier::Log2) => FL_LOG2,
            Some(FieldModifier::Usecs) => FL_TIMESTAMP_USECS,
            Some(FieldModifier::Buckets(n)) => {
                buckets = n;
                FL_BUCKET
            }
            Some(FieldModifier::Percent) => FL_PERCENT,
            Some(FieldModifier::Graph) => FL_GRAPH,
        };
        let mut field = None;
        match spec.special() {
            Some(SpecialField::CommonTimestamp) => {
                flags |= FL_TIMESTAMP;
                self.hd.enable_timestamps = true;
                if flags & FL_TIMESTAMP_USECS != 0 {
                    self.hd.ts_in_usecs = true;
                }
            }
            Some(SpecialField::CommonStacktrace) => flags |= FL_STACKTRACE,
            Some(SpecialField::CommonCpu) => flags |= FL_CPU,
            Some(SpecialField::Hitcount) => flags |= FL_HITCOUNT,
            None => match find_event_field(self.event, spec.name()) {
                Some(f) if f.size != 0 => field = Some(f),
                // "cpu"/"CPU" mean common_cpu (the generic field stays).
                Some(f) if f.storage == FieldStorage::Cpu => {
                    flags |= FL_CPU;
                    field = Some(f);
                }
                // "stacktrace"/"STACKTRACE" mean common_stacktrace.
                Some(f) if f.storage == FieldStorage::Stacktrace => flags |= FL_STACKTRACE,
                _ => return Err(self.error(HistErrorKind::FieldNotFound, spec.name())),
            },
        }
        if modifier == Some(FieldModifier::Stacktrace)
            && !matches!(field, Some(f) if f.storage == FieldStorage::Stacktrace)
        {
            return Err(self.error(HistErrorKind::BadFieldModifier, spec.text()));
        }
        let id = self.create_hist_field(field, flags)?;
        if let Some(f) = self.hd.nodes.get_mut(usize::from(id)) {
            f.buckets = buckets;
        }
        Ok(id)
    }

    /// `create_hist_field()`.
    fn create_hist_field(
        &mut self,
        field: Option<&'a EventField<'a>>,
        flags: u32,
    ) -> Result<u8, HistError> {
        let mut f = HistField {
            flags,
            field,
            ..HistField::default()
        };
        if flags & FL_HITCOUNT != 0 {
            f.fetch = Fetch::Counter;
            f.size = 8;
        } else if flags & FL_STACKTRACE != 0 {
            f.fetch = match field {
                Some(field) => Fetch::Stack { at: field.offset },
                None => Fetch::Nop,
            };
            f.size = HIST_STACKTRACE_SIZE;
        } else if flags & (FL_LOG2 | FL_BUCKET) != 0 {
            let op = self.create_hist_field(field, flags & !(FL_LOG2 | FL_BUCKET))?;
            let o = self.node(op);
            if o.flags & (FL_STRING | FL_STACKTRACE) != 0 {
                // C takes the log2 or bucket of an address.
                self.defer();
            }
            f.fetch = if flags & FL_LOG2 != 0 {
                Fetch::Log2
            } else {
                Fetch::Bucket
            };
            f.operand = Some(op);
            f.size = o.size;
        } else if flags & FL_TIMESTAMP != 0 {
            f.fetch = Fetch::Timestamp;
            f.size = 8;
        } else if flags & FL_CPU != 0 {
            f.fetch = Fetch::Cpu;
            f.size = 4;
        } else if let Some(field) = field {
            if is_string_field(field) && field.storage != FieldStorage::PtrString {
                f.flags |= FL_STRING;
                f.size = MAX_FILTER_STR_VAL;
                f.fetch = match field.storage {
                    FieldStorage::StaticString => {
                        f.size = field.size;
                        Fetch::String { at: field.offset }
                    }
                    FieldStorage::DynString => Fetch::DynString { at: field.offset },
                    FieldStorage::RelString => Fetch::RelDynString { at: field.offset },
                    _ => {
                        // A string behind a pointer.
                        self.defer();
                        Fetch::PString
                    }
                };
            } else if field.storage == FieldStorage::Stacktrace {
                f.flags |= FL_STACKTRACE;
                f.size = MAX_FILTER_STR_VAL;
                f.fetch = Fetch::Stack { at: field.offset };
            } else {
                f.size = field.size;
                f.signed = field.signed;
                f.fetch = match field.size {
                    1 | 2 | 4 | 8 => Fetch::Num {
                        at: field.offset,
                        size: field.size as u8,
                        signed: field.signed,
                    },
                    _ => return Err(HistError::silent(ENOMEM)),
                };
            }
        }
        self.push(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;
    use std::string::String;
    use std::vec::Vec;
    use support::*;

    use super::super::error::errno::{EDOM, EINVAL, ENOENT};
    use super::super::grammar::{parse_trigger, parse_trigger_in};
    use super::super::output::{write_keys, write_val, NoSymbols, Resolver, ValStat};

    /// Event descriptions and records for the tests.
    mod support {
        use super::super::super::event::COMMON_FIELDS;
        use super::super::super::event::{EventDesc, EventField, FieldStorage};
        use std::vec;
        use std::vec::Vec;

        pub static COMMON: [EventField<'static>; 4] = COMMON_FIELDS;

        pub const fn fld(
            name: &'static str,
            type_name: &'static str,
            offset: u32,
            size: u32,
            signed: bool,
            storage: FieldStorage,
        ) -> EventField<'static> {
            EventField {
                name,
                type_name,
                offset,
                size,
                signed,
                storage,
            }
        }

        use FieldStorage::{DynString, Other, RelString, Stacktrace, StaticString};

        pub static SAMPLE: [EventField<'static>; 6] = [
            fld("a", "u64", 8, 8, false, Other),
            fld("b", "u32", 16, 4, false, Other),
            fld("c", "s32", 20, 4, true, Other),
            fld("s", "char[16]", 24, 16, false, StaticString),
            fld("d", "__data_loc char[]", 40, 4, false, DynString),
            fld("ip", "unsigned long", 48, 8, false, Other),
        ];

        pub fn sample() -> EventDesc<'static> {
            event("rhist_test", "rhist_sample", &SAMPLE)
        }

        pub static WAKING: [EventField<'static>; 4] = [
            fld("comm", "char[16]", 8, 16, false, StaticString),
            fld("pid", "pid_t", 24, 4, true, Other),
            fld("prio", "int", 28, 4, true, Other),
            fld("target_cpu", "int", 32, 4, true, Other),
        ];

        pub fn waking() -> EventDesc<'static> {
            event("sched", "sched_waking", &WAKING)
        }

        /// Odd fields: signed small numbers, a `__rel_loc` string, a
        /// 3-byte array, a pointer string, an own `cpu` field, a
        /// synthetic stack trace.
        pub static ODD: [EventField<'static>; 8] = [
            fld("s8", "s8", 8, 1, true, Other),
            fld("s16", "s16", 10, 2, true, Other),
            fld("rel", "__rel_loc char[]", 12, 4, false, RelString),
            fld("arr", "u8[3]", 16, 3, false, Other),
            fld("cpu", "u32", 20, 4, false, Other),
            fld("p", "const char *", 24, 8, false, FieldStorage::PtrString),
            fld(
                "stack",
                "__data_loc unsigned long[]",
                32,
                8,
                false,
                Stacktrace,
            ),
            fld("name", "char[20]", 40, 20, false, StaticString),
        ];

        pub fn odd() -> EventDesc<'static> {
            event("rhist_test", "odd", &ODD)
        }

        pub fn event(
            system: &'static str,
            name: &'static str,
            fields: &'static [EventField<'static>],
        ) -> EventDesc<'static> {
            EventDesc {
                system,
                name,
                fields,
                common_fields: &COMMON,
            }
        }

        /// A record of rhist_sample; `d` goes after the fixed part.
        pub fn sample_rec(pid: i32, a: u64, b: u32, c: i32, s: &[u8], d: &str, ip: u64) -> Vec<u8> {
            let mut r = vec![0u8; 56];
            r[0..2].copy_from_slice(&7u16.to_ne_bytes());
            r[4..8].copy_from_slice(&pid.to_ne_bytes());
            r[8..16].copy_from_slice(&a.to_ne_bytes());
            r[16..20].copy_from_slice(&b.to_ne_bytes());
            r[20..24].copy_from_slice(&c.to_ne_bytes());
            r[24..24 + s.len()].copy_from_slice(s);
            let loc = (((d.len() + 1) as u32) << 16) | 56;
            r[40..44].copy_from_slice(&loc.to_ne_bytes());
            r[48..56].copy_from_slice(&ip.to_ne_bytes());
            r.extend_from_slice(d.as_bytes());
            r.push(0);
            r
        }

        /// A record with `(offset, bytes)` pieces.
        pub fn rec(len: usize, pieces: &[(usize, &[u8])]) -> Vec<u8> {
            let mut r = vec![0u8; len];
            for &(at, bytes) in pieces {
                if r.len() < at + bytes.len() {
                    r.resize(at + bytes.len(), 0);
                }
                r[at..at + bytes.len()].copy_from_slice(bytes);
            }
            r
        }
    }

    struct Ctx {
        cpu: u32,
        ts: u64,
        ns: bool,
        stack: [u64; 3],
    }

    impl EventContext for Ctx {
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
            for (o, s) in out.iter_mut().zip(self.stack) {
                *o = s;
            }
        }
    }

    const CTX: Ctx = Ctx {
        cpu: 3,
        ts: 1_234_567,
        ns: true,
        stack: [0x10, 0x20, 0],
    };

    /// A resolver that knows one syscall.
    struct Sys;

    impl Resolver for Sys {
        fn symbol(&self, addr: u64, with_offset: bool, out: &mut dyn Write) -> fmt::Result {
            NoSymbols.symbol(addr, with_offset, out)
        }
        fn syscall_name(&self, nr: u64) -> Option<&str> {
            (nr == 16).then_some("sys_ioctl")
        }
    }

    fn build<'a>(text: &'a str, event: &EventDesc<'a>) -> HistData<'a> {
        let spec = parse_trigger(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        HistData::build(&spec, event).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn build_err(text: &str, event: &EventDesc<'_>) -> HistError {
        let spec = parse_trigger(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        match HistData::build(&spec, event) {
            Ok(_) => panic!("{text}: built"),
            Err(e) => e,
        }
    }

    /// The caret C puts on the first occurrence of `s` in `hist:` + text.
    fn at(text: &str, s: &str) -> usize {
        format!("hist:{text}").find(s).unwrap()
    }

    fn key_of(hd: &HistData<'_>, rec: &[u8], ctx: &dyn EventContext) -> Vec<u8> {
        let mut key = std::vec![0xffu8; hd.key_size()];
        hd.write_key(rec, ctx, &mut key);
        key
    }

    fn keys_text(hd: &HistData<'_>, key: &[u8], resolver: &dyn Resolver) -> String {
        let parts: Vec<_> = hd.key_parts(key).collect();
        let mut s = String::new();
        write_keys(&mut s, &parts, b"bash\0", resolver).unwrap();
        s
    }

    /// The `{ ... }` of one record with the trigger `text`.
    fn show(text: &str, event: &EventDesc<'_>, rec: &[u8]) -> String {
        let hd = build(text, event);
        keys_text(&hd, &key_of(&hd, rec, &CTX), &NoSymbols)
    }

    fn info(text: &str, event: &EventDesc<'_>) -> String {
        let hd = build(text, event);
        let mut s = String::new();
        hd.write_info(&mut s, "hist:").unwrap();
        s
    }

    fn u64s(key: &[u8]) -> Vec<u64> {
        key.chunks(8).map(super::super::output::read_u64).collect()
    }

    fn sample_default() -> Vec<u8> {
        sample_rec(1234, 42, 1000, -5, b"hi", "hello", 0xffff_ffff_8100_0000)
    }

    // --- keys ---------------------------------------------------------------

    #[test]
    fn numeric_keys() {
        let ev = sample();
        let r = sample_default();
        assert_eq!(show("keys=a", &ev, &r), "{ a:         42 }");
        assert_eq!(show("keys=b", &ev, &r), "{ b:       1000 }");
        // Signed fields sign-extend to u64.
        assert_eq!(show("keys=c", &ev, &r), "{ c: 18446744073709551611 }");
        assert_eq!(
            show("keys=common_pid", &ev, &r),
            "{ common_pid:       1234 }"
        );
        assert_eq!(
            show("keys=common_type", &ev, &r),
            "{ common_type:          7 }"
        );
        assert_eq!(
            show("keys=common_flags", &ev, &r),
            "{ common_flags:          0 }"
        );
        let hd = build("keys=b,c,a", &ev);
        assert_eq!(hd.key_size(), 24);
        let key = key_of(&hd, &r, &CTX);
        assert_eq!(u64s(&key), [1000, (-5i64) as u64, 42]);
        assert_eq!(
            keys_text(&hd, &key, &NoSymbols),
            "{ b:       1000, c: 18446744073709551611, a:         42 }"
        );
        // Small signed fields.
        let ev = odd();
        let r = rec(
            64,
            &[(8, &(-2i8).to_ne_bytes()), (10, &(-300i16).to_ne_bytes())],
        );
        let hd = build("keys=s8,s16", &ev);
        assert_eq!(
            u64s(&key_of(&hd, &r, &CTX)),
            [(-2i64) as u64, (-300i64) as u64]
        );
    }

    #[test]
    fn key_modifiers() {
        let ev = sample();
        let r = sample_default();
        assert_eq!(show("keys=a.hex", &ev, &r), "{ a: 2a }");
        assert_eq!(
            show("keys=ip.sym", &ev, &r),
            format!("{{ ip: [ffffffff81000000] {:<45} }}", "0xffffffff81000000")
        );
        assert_eq!(
            show("keys=ip.sym-offset", &ev, &r),
            format!("{{ ip: [ffffffff81000000] {:<55} }}", "0xffffffff81000000")
        );
        assert_eq!(
            show("keys=common_pid.execname", &ev, &r),
            "{ common_pid: bash            [      1234] }"
        );
        assert_eq!(
            show("keys=b.syscall", &ev, &r),
            format!("{{ b: {:<30}[1000] }}", "unknown_syscall")
        );
        // order_base_2(1000) = 10.
        assert_eq!(show("keys=b.log2", &ev, &r), "{ b: ~ 2^10 }");
        assert_eq!(
            show("keys=a.log2", &ev, &r),
            "{ b: ~ 2^6  }".replace('b', "a")
        );
        assert_eq!(show("keys=b.buckets=100", &ev, &r), "{ b: ~ 1000-1099 }");
        assert_eq!(show("keys=a.bucket=0x10", &ev, &r), "{ a: ~ 32-47 }");
        // .usecs on another field only shows in the trigger info.
        assert_eq!(show("keys=b.usecs", &ev, &r), "{ b:       1000 }");
        assert!(build("keys=common_pid.execname", &ev).needs_comm());
        assert!(build("keys=b:vals=common_pid.execname", &ev).needs_comm());
        assert!(!build("keys=common_pid", &ev).needs_comm());
        // Key slots keep the value as a u64, whatever the field size.
        let hd = build("keys=b.log2,c.hex", &ev);
        assert_eq!(u64s(&key_of(&hd, &r, &CTX)), [10, (-5i64) as u64]);
        assert_eq!(
            keys_text(&hd, &key_of(&hd, &r, &CTX), &NoSymbols),
            "{ b: ~ 2^10, c: fffffffffffffffb }"
        );
    }

    #[test]
    fn doc_key_lines() {
        // histogram.rst: raw_syscalls:sys_enter and sys_enter_recvfrom.
        static SYS_ENTER: [EventField<'static>; 2] = [
            fld("id", "long", 8, 8, true, FieldStorage::Other),
            fld(
                "args",
                "unsigned long[6]",
                16,
                48,
                false,
                FieldStorage::Other,
            ),
        ];
        let ev = event("raw_syscalls", "sys_enter", &SYS_ENTER);
        let hd = build(
            "key=id.syscall,common_pid.execname:val=hitcount:sort=id,hitcount",
            &ev,
        );
        let r = rec(
            64,
            &[(4, &2781i32.to_ne_bytes()), (8, &16i64.to_ne_bytes())],
        );
        let key = key_of(&hd, &r, &CTX);
        let parts: Vec<_> = hd.key_parts(&key).collect();
        let mut s = String::new();
        write_keys(&mut s, &parts, b"gmain\0", &Sys).unwrap();
        assert_eq!(
            s,
            "{ id: sys_ioctl                     [ 16], common_pid: gmain           [      2781] }"
        );

        static RECVFROM: [EventField<'static>; 2] = [
            fld("__syscall_nr", "int", 8, 4, true, FieldStorage::Other),
            fld("size", "size_t", 32, 8, false, FieldStorage::Other),
        ];
        let ev = event("syscalls", "sys_enter_recvfrom", &RECVFROM);
        let hd = build(
            "key=common_pid.execname,size:val=hitcount:sort=common_pid,size",
            &ev,
        );
        let r = rec(
            64,
            &[(4, &8822i32.to_ne_bytes()), (32, &160u64.to_ne_bytes())],
        );
        let key = key_of(&hd, &r, &CTX);
        let parts: Vec<_> = hd.key_parts(&key).collect();
        let mut s = String::new();
        write_keys(&mut s, &parts, b"firefox\0", &Sys).unwrap();
        assert_eq!(
            s,
            "{ common_pid: firefox         [      8822], size:        160 }"
        );

        // net:netif_receive_skb with a value.
        let ev = event("net", "netif_receive_skb", &NETIF);
        let hd = build("keys=len:vals=common_preempt_count", &ev);
        let r = rec(64, &[(3, &[0u8]), (16, &46u32.to_ne_bytes())]);
        let key = key_of(&hd, &r, &CTX);
        let mut line = keys_text(&hd, &key, &NoSymbols);
        let sums = [221u64, 0];
        for (i, name, display) in hd.printed_vals() {
            if i > 0 {
                line.push(' ');
            }
            write_val(&mut line, name, display, sums[i], ValStat::default()).unwrap();
        }
        assert_eq!(
            line,
            "{ len:         46 } hitcount:        221  common_preempt_count:          0"
        );
        let hd = build("keys=skbaddr.hex:vals=len", &ev);
        let r = rec(64, &[(8, &0xffff_8800_baee_5e00u64.to_ne_bytes())]);
        assert_eq!(
            keys_text(&hd, &key_of(&hd, &r, &CTX), &NoSymbols),
            "{ skbaddr: ffff8800baee5e00 }"
        );
    }

    static NETIF: [EventField<'static>; 3] = [
        fld("skbaddr", "void *", 8, 8, false, FieldStorage::Other),
        fld("len", "unsigned int", 16, 4, false, FieldStorage::Other),
        fld(
            "name",
            "__data_loc char[]",
            20,
            4,
            false,
            FieldStorage::DynString,
        ),
    ];

    #[test]
    fn static_string_keys() {
        let ev = sample();
        // A full 16-byte static string loses its last byte (strncpy of
        // size - 1 into a 16-byte slot).
        let r = sample_rec(1, 0, 0, 0, b"0123456789abcdef", "x", 0);
        let hd = build("keys=s", &ev);
        assert_eq!(hd.key_size(), 16);
        let key = key_of(&hd, &r, &CTX);
        assert_eq!(&key[..], b"0123456789abcde\0");
        assert_eq!(
            keys_text(&hd, &key, &NoSymbols),
            format!("{{ s: {:<50} }}", "0123456789abcde")
        );
        // Shorter strings stop at the NUL; the rest stays zero.
        let r = sample_rec(1, 0, 0, 0, b"hi\0zz", "x", 0);
        assert_eq!(
            &key_of(&hd, &r, &CTX)[..],
            b"hi\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
        );
        // sched_waking's comm.
        let ev = waking();
        let r = rec(40, &[(8, b"kworker/0:1\0")]);
        assert_eq!(
            show("keys=comm", &ev, &r),
            format!("{{ comm: {:<50} }}", "kworker/0:1")
        );
        let r = rec(
            40,
            &[
                (8, b"sshd\0"),
                (24, &(-1i32).to_ne_bytes()),
                (28, &120i32.to_ne_bytes()),
            ],
        );
        let hd = build("keys=comm,pid,prio:vals=target_cpu:sort=pid", &ev);
        assert_eq!(hd.key_size(), 32);
        assert_eq!(
            keys_text(&hd, &key_of(&hd, &r, &CTX), &NoSymbols),
            format!(
                "{{ comm: {:<50}, pid: 18446744073709551615, prio:        120 }}",
                "sshd"
            )
        );
        assert_eq!(
            hd.sort_keys(),
            [SortKey {
                field: SortField::Key {
                    offset: 16,
                    size: 4,
                    cmp: KeyCmp::Signed
                },
                descending: false
            }]
        );
        assert_eq!(
            info("keys=comm,pid,prio:vals=target_cpu:sort=pid", &ev),
            "hist:keys=comm,pid,prio:vals=hitcount,target_cpu:sort=pid:size=2048"
        );
        // A char[20] gets a 24-byte slot and keeps all 20 bytes.
        let ev = odd();
        let r = rec(64, &[(40, b"abcdefghijklmnopqrst")]);
        let hd = build("keys=name", &ev);
        assert_eq!(hd.key_size(), 24);
        assert_eq!(&key_of(&hd, &r, &CTX)[..], b"abcdefghijklmnopqrst\0\0\0\0");
        // .hex on a string shows its first 8 bytes as a number.
        let ev = sample();
        let r = sample_rec(1, 0, 0, 0, b"0123456789abcdef", "x", 0);
        let v = u64::from_ne_bytes(*b"01234567");
        assert_eq!(show("keys=s.hex", &ev, &r), format!("{{ s: {v:x} }}"));
    }

    #[test]
    fn dynamic_string_keys() {
        let ev = sample();
        let hd = build("keys=d", &ev);
        assert_eq!(hd.key_size(), 256);
        let r = sample_rec(1, 0, 0, 0, b"", "hello", 0);
        let key = key_of(&hd, &r, &CTX);
        assert_eq!(&key[..6], b"hello\0");
        assert!(key[6..].iter().all(|&b| b == 0));
        assert_eq!(
            keys_text(&hd, &key, &NoSymbols),
            format!("{{ d: {:<50} }}", "hello")
        );
        // The length in the __data_loc word bounds the copy.
        let mut r = sample_rec(1, 0, 0, 0, b"", "hello world", 0);
        r[40..44].copy_from_slice(&((5u32 << 16) | 56).to_ne_bytes());
        assert_eq!(&key_of(&hd, &r, &CTX)[..6], b"hello\0");
        // At most 255 bytes.
        let long = "x".repeat(300);
        let r = sample_rec(1, 0, 0, 0, b"", &long, 0);
        let key = key_of(&hd, &r, &CTX);
        assert!(key[..255].iter().all(|&b| b == b'x'));
        assert_eq!(key[255], 0);
        // __rel_loc: the offset counts from the end of the u32.
        let ev = odd();
        let hd = build("keys=rel", &ev);
        let loc = (4u32 << 16) | 8; // string at 12 + 4 + 8 = 24
        let r = rec(64, &[(12, &loc.to_ne_bytes()), (24, b"abcdef\0")]);
        let key = key_of(&hd, &r, &CTX);
        // The length in the word (4) bounds the copy.
        assert_eq!(&key[..5], b"abcd\0");
        assert_eq!(hd.key_size(), 256);
    }

    #[test]
    fn cpu_timestamp_and_hitcount_keys() {
        let ev = sample();
        let r = sample_default();
        let hd = build("keys=common_cpu", &ev);
        assert_eq!(hd.key_size(), 8);
        assert_eq!(
            keys_text(&hd, &key_of(&hd, &r, &CTX), &NoSymbols),
            "{ common_cpu:          3 }"
        );
        // "cpu" and "CPU" are common_cpu, but keep their name in the hist.
        assert_eq!(show("keys=cpu", &ev, &r), "{ cpu:          3 }");
        assert_eq!(show("keys=CPU", &ev, &r), "{ CPU:          3 }");
        // An own field named cpu is a field.
        let ev2 = odd();
        let r2 = rec(64, &[(20, &77u32.to_ne_bytes())]);
        assert_eq!(show("keys=cpu", &ev2, &r2), "{ cpu:         77 }");

        assert_eq!(
            show("keys=common_timestamp", &ev, &r),
            "{ common_timestamp:    1234567 }"
        );
        assert_eq!(
            show("keys=common_timestamp.usecs", &ev, &r),
            "{ common_timestamp:       1235 }"
        );
        // Not converted with a clock that does not count ns.
        let hd = build("keys=common_timestamp.usecs", &ev);
        let ctx = Ctx { ns: false, ..CTX };
        assert_eq!(u64s(&key_of(&hd, &r, &ctx)), [1_234_567]);
        // .usecs anywhere converts every timestamp.
        let hd = build("keys=common_timestamp:vals=common_timestamp.usecs", &ev);
        assert!(hd.uses_timestamps() && hd.ts_in_usecs());
        assert_eq!(u64s(&key_of(&hd, &r, &CTX)), [1235]);
        assert_eq!(hd.sum_value(1, &r, &CTX), 1235);
        let hd = build("keys=common_timestamp", &ev);
        assert!(hd.uses_timestamps() && !hd.ts_in_usecs());
        assert!(!build("keys=b.usecs", &ev).uses_timestamps());
        assert!(!build("keys=b.usecs", &ev).ts_in_usecs());

        // hitcount as a key: always 1.  With .log2 C makes no operand, so
        // the key has no name.
        assert_eq!(show("keys=hitcount", &ev, &r), "{ hitcount:          1 }");
        assert_eq!(show("keys=hitcount.log2", &ev, &r), "{ : ~ 2^1  }");
        assert_eq!(
            show("keys=common_cpu.log2", &ev, &r),
            "{ common_cpu: ~ 2^2  }"
        );
        assert_eq!(show("keys=cpu.buckets=2", &ev, &r), "{ cpu: ~ 2-3 }");
    }

    #[test]
    fn stacktrace_keys() {
        let ev = sample();
        let r = sample_default();
        let want = "{ common_stacktrace:\n         0x10\n         0x20\n}";
        for t in [
            "keys=stacktrace",
            "keys=common_stacktrace",
            "keys=STACKTRACE",
        ] {
            let hd = build(t, &ev);
            assert_eq!(hd.key_size(), 128, "{t}");
            let key = key_of(&hd, &r, &CTX);
            assert_eq!(u64s(&key)[..3], [0x10, 0x20, 0], "{t}");
            assert_eq!(keys_text(&hd, &key, &NoSymbols), want, "{t}");
        }
        // With another key.
        let hd = build("keys=b,stacktrace", &ev);
        assert_eq!(hd.key_size(), 136);
        let key = key_of(&hd, &r, &CTX);
        assert_eq!(u64s(&key)[..3], [1000, 0x10, 0x20]);

        // A stack trace field of a synthetic event: a count, then frames.
        let ev = odd();
        let loc = (24u32 << 16) | 64;
        let mut frames = Vec::new();
        for v in [2u64, 0xa, 0xb, 0xc] {
            frames.extend_from_slice(&v.to_ne_bytes());
        }
        let r = rec(64, &[(32, &loc.to_ne_bytes()), (64, &frames)]);
        let hd = build("keys=stack.stacktrace", &ev);
        assert_eq!(hd.key_size(), 128);
        let key = key_of(&hd, &r, &CTX);
        assert_eq!(u64s(&key)[..3], [0xa, 0xb, 0]);
        assert_eq!(
            keys_text(&hd, &key, &NoSymbols),
            "{ stack.stacktrace         0xa\n         0xb\n}"
        );
        // Without the modifier C gives it a MAX_FILTER_STR_VAL slot.
        let hd = build("keys=stack", &ev);
        assert_eq!(hd.key_size(), 256);
        assert_eq!(u64s(&key_of(&hd, &r, &CTX))[..3], [0xa, 0xb, 0]);
        // A count beyond the record or above 16 is bounded.
        let loc = (24u32 << 16) | 56;
        let r = rec(
            72,
            &[
                (32, &loc.to_ne_bytes()),
                (56, &1000u64.to_ne_bytes()),
                (64, &5u64.to_ne_bytes()),
            ],
        );
        let hd = build("keys=stack.stacktrace", &ev);
        assert_eq!(u64s(&key_of(&hd, &r, &CTX))[..3], [5, 0, 0]);
    }

    // --- values -------------------------------------------------------------

    #[test]
    fn values_and_sums() {
        let ev = sample();
        let r = sample_rec(1, 10, 7, -3, b"", "", 0);
        let hd = build("keys=b:vals=a,c", &ev);
        assert_eq!(hd.n_sums(), 3);
        assert_eq!(hd.sum_value(0, &r, &CTX), 1);
        assert_eq!(hd.sum_value(1, &r, &CTX), 10);
        assert_eq!(hd.sum_value(2, &r, &CTX), (-3i64) as u64);
        assert_eq!(hd.sum_value(3, &r, &CTX), 0);
        let vals: Vec<_> = hd.printed_vals().collect();
        assert_eq!(
            vals,
            [
                (0, "hitcount", ValDisplay::Plain),
                (1, "a", ValDisplay::Plain),
                (2, "c", ValDisplay::Plain)
            ]
        );
        // Sums wrap: the map adds these with wrapping arithmetic.
        assert_eq!(10u64.wrapping_add(hd.sum_value(2, &r, &CTX)), 7);

        let hd = build("keys=b:vals=a.hex,hitcount.percent:nohitcount", &ev);
        assert_eq!(hd.sum_value(2, &r, &CTX), 1);
        let vals: Vec<_> = hd.printed_vals().collect();
        assert_eq!(
            vals,
            [
                (1, "a", ValDisplay::Hex),
                (2, "hitcount", ValDisplay::Percent)
            ]
        );
        let hd = build("keys=b:vals=c.graph,common_cpu", &ev);
        let vals: Vec<_> = hd.printed_vals().collect();
        assert_eq!(
            vals,
            [
                (0, "hitcount", ValDisplay::Plain),
                (1, "c", ValDisplay::Graph),
                (2, "common_cpu", ValDisplay::Plain)
            ]
        );
        assert_eq!(hd.sum_value(2, &r, &CTX), 3);
        // A second hitcount is a value.
        let hd = build("keys=b:vals=hitcount,hitcount", &ev);
        assert_eq!(hd.n_sums(), 2);
        assert_eq!(hd.sum_value(1, &r, &CTX), 1);
        // Only hitcount.
        let hd = build("keys=b:vals=hitcount", &ev);
        assert_eq!(hd.n_sums(), 1);
        // .execname and .usecs are fine on values.
        let hd = build("keys=b:vals=common_pid.execname,b.usecs", &ev);
        assert_eq!(hd.sum_value(1, &r, &CTX), 1);
        assert_eq!(hd.sum_value(2, &r, &CTX), 7);
        // Timestamps as values.
        let hd = build("keys=b:vals=common_timestamp", &ev);
        assert_eq!(hd.sum_value(1, &r, &CTX), 1_234_567);
    }

    #[test]
    fn value_functions() {
        for (n, log) in [
            (0, 0),
            (1, 0),
            (2, 1),
            (3, 2),
            (4, 2),
            (5, 3),
            (1 << 63, 63),
        ] {
            assert_eq!(order_base_2(n), log, "{n}");
        }
        assert_eq!(order_base_2((1 << 63) + 1), 64);
        assert_eq!(order_base_2(u64::MAX), 64);
        assert_eq!(ns2usecs(1499), 1);
        assert_eq!(ns2usecs(1500), 2);
        assert_eq!(ns2usecs(u64::MAX), 499 / 1000);
        // .buckets above LONG_MAX.
        let ev = sample();
        let r = sample_rec(1, u64::MAX, 0, 0, b"", "", 0);
        let hd = build("keys=a.buckets=10", &ev);
        assert_eq!(u64s(&key_of(&hd, &r, &CTX)), [u64::MAX / 10 * 10]);
        let hd = build("keys=c.log2", &ev);
        let r = sample_rec(1, 0, 0, -1, b"", "", 0);
        assert_eq!(u64s(&key_of(&hd, &r, &CTX)), [64]);
    }

    // --- sort keys ----------------------------------------------------------

    #[test]
    fn sort_key_resolution() {
        let ev = sample();
        let sort = |t: &str| build(t, &ev).sort_keys().to_vec();
        let key = |offset, size, cmp| SortField::Key { offset, size, cmp };
        let asc = |field| SortKey {
            field,
            descending: false,
        };
        let desc = |field| SortKey {
            field,
            descending: true,
        };
        assert_eq!(sort("keys=b"), [asc(SortField::Sum(0))]);
        assert_eq!(
            sort("keys=b:sort=hitcount.descending"),
            [desc(SortField::Sum(0))]
        );
        assert_eq!(
            sort("keys=b,c,s:vals=a:sort=a.descending,c"),
            [desc(SortField::Sum(1)), asc(key(8, 4, KeyCmp::Signed))]
        );
        assert_eq!(sort("keys=b:sort=b"), [asc(key(0, 4, KeyCmp::Unsigned))]);
        assert_eq!(
            sort("keys=a,s:sort=s.ascending"),
            [asc(key(8, 16, KeyCmp::String))]
        );
        assert_eq!(sort("keys=d:sort=d"), [asc(key(0, 256, KeyCmp::String))]);
        assert_eq!(
            sort("keys=common_stacktrace:sort=common_stacktrace"),
            [asc(key(0, 128, KeyCmp::None))]
        );
        assert_eq!(
            sort("keys=cpu:sort=cpu"),
            [asc(key(0, 8, KeyCmp::Unsigned))]
        );
        assert_eq!(sort("keys=c.log2:sort=c"), [asc(key(0, 4, KeyCmp::Signed))]);
        assert_eq!(
            sort("keys=common_pid.execname:sort=common_pid"),
            [asc(key(0, 4, KeyCmp::Signed))]
        );
        assert_eq!(
            sort("keys=common_flags:sort=common_flags"),
            [asc(key(0, 1, KeyCmp::Unsigned))]
        );
        assert_eq!(
            sort("keys=common_timestamp:sort=common_timestamp"),
            [asc(key(0, 8, KeyCmp::Unsigned))]
        );
        // A value of the same name comes first.
        assert_eq!(sort("keys=b:vals=b:sort=b"), [asc(SortField::Sum(1))]);
        // A pointer string is a number, compared as a string.
        let ev2 = odd();
        let hd = build("keys=p:sort=p", &ev2);
        assert_eq!(hd.sort_keys(), [asc(key(0, 8, KeyCmp::String))]);
        assert_eq!(hd.key_size(), 8);
    }

    #[test]
    fn sort_key_errors() {
        let ev = sample();
        let t = "keys=b:vals=a:sort=b,junk";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::InvalidSortField, at(t, "junk"))
        );
        let t = "keys=b:vals=a:sort=junk.foo";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::InvalidSortField, at(t, "junk"))
        );
        let t = "keys=b:vals=a:sort=a.foo";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::InvalidSortModifier, at(t, "foo"))
        );
        let t = "keys=b:sort=hitcount.up";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::InvalidSortModifier, at(t, "up"))
        );
        let t = "keys=b:vals=a:sort=b,a,";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::TooManySortFields, at(t, "sort="))
        );
        // The first key is matched before the count is checked.
        let t = "keys=b:vals=a:sort=x,a,b";
        assert_eq!(
            build_err(t, &ev).kind(),
            Some(HistErrorKind::InvalidSortField)
        );
        let t = "keys=b:sort=b,";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::EmptySortField, at(t, "sort="))
        );
        // cpu is not named common_cpu, a stack trace key is.
        let t = "keys=cpu:sort=common_cpu";
        assert_eq!(
            build_err(t, &ev).kind(),
            Some(HistErrorKind::InvalidSortField)
        );
        let t = "keys=stacktrace:sort=stacktrace";
        assert_eq!(
            build_err(t, &ev).kind(),
            Some(HistErrorKind::InvalidSortField)
        );
        // From the selftests (trigger-hist-syntax-errors.tc).
        let t = "keys=common_pid:vals=hitcount:sort=common_pid,junk";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::InvalidSortField, at(t, "junk"))
        );
    }

    // --- the trigger info line ---------------------------------------------

    static KMALLOC: [EventField<'static>; 6] = [
        fld(
            "call_site",
            "unsigned long",
            8,
            8,
            false,
            FieldStorage::Other,
        ),
        fld("ptr", "const void *", 16, 8, false, FieldStorage::Other),
        fld("bytes_req", "size_t", 24, 8, false, FieldStorage::Other),
        fld("bytes_alloc", "size_t", 32, 8, false, FieldStorage::Other),
        fld(
            "gfp_flags",
            "unsigned long",
            40,
            8,
            false,
            FieldStorage::Other,
        ),
        fld("node", "int", 48, 4, true, FieldStorage::Other),
    ];
    static SYS_READ: [EventField<'static>; 4] = [
        fld("__syscall_nr", "int", 8, 4, true, FieldStorage::Other),
        fld("fd", "unsigned int", 16, 8, false, FieldStorage::Other),
        fld("buf", "char *", 24, 8, false, FieldStorage::Other),
        fld("count", "size_t", 32, 8, false, FieldStorage::Other),
    ];
    static SYS_ENTER: [EventField<'static>; 2] = [
        fld("id", "long", 8, 8, true, FieldStorage::Other),
        fld(
            "args",
            "unsigned long[6]",
            16,
            48,
            false,
            FieldStorage::Other,
        ),
    ];
    static RECVFROM: [EventField<'static>; 2] = [
        fld("__syscall_nr", "int", 8, 4, true, FieldStorage::Other),
        fld("size", "size_t", 32, 8, false, FieldStorage::Other),
    ];
    static FORK: [EventField<'static>; 4] = [
        fld(
            "parent_comm",
            "char[16]",
            8,
            16,
            false,
            FieldStorage::StaticString,
        ),
        fld("parent_pid", "pid_t", 24, 4, true, FieldStorage::Other),
        fld(
            "child_comm",
            "char[16]",
            28,
            16,
            false,
            FieldStorage::StaticString,
        ),
        fld("child_pid", "pid_t", 44, 4, true, FieldStorage::Other),
    ];
    static WAKEUP_LATENCY: [EventField<'static>; 3] = [
        fld("lat", "u64", 8, 8, false, FieldStorage::Other),
        fld("pid", "pid_t", 16, 4, true, FieldStorage::Other),
        fld("prio", "int", 24, 4, true, FieldStorage::Other),
    ];
    static BLOCK_LAT: [EventField<'static>; 3] = [
        fld("pid", "pid_t", 8, 4, true, FieldStorage::Other),
        fld("delta", "u64", 16, 8, false, FieldStorage::Other),
        fld(
            "stack",
            "__data_loc unsigned long[]",
            24,
            8,
            false,
            FieldStorage::Stacktrace,
        ),
    ];
    static LATENCY: [EventField<'static>; 1] =
        [fld("lat", "u64", 8, 8, false, FieldStorage::Other)];

    /// The "trigger info:" lines of histogram.rst whose events we can
    /// describe, without the " [active]"/filter suffix.
    #[test]
    fn doc_info_lines() {
        let kmalloc = event("kmem", "kmalloc", &KMALLOC);
        let read = event("syscalls", "sys_enter_read", &SYS_READ);
        let sys_enter = event("raw_syscalls", "sys_enter", &SYS_ENTER);
        let recvfrom = event("syscalls", "sys_enter_recvfrom", &RECVFROM);
        let fork = event("sched", "sched_process_fork", &FORK);
        let netif = event("net", "netif_receive_skb", &NETIF);
        let wakeup = event("synthetic", "wakeup_latency", &WAKEUP_LATENCY);
        let block = event("synthetic", "block_lat", &BLOCK_LAT);
        let latency = event("synthetic", "latency", &LATENCY);
        let cases: [(&str, &EventDesc<'_>, &str); 17] = [
            (
                "key=id.syscall:val=hitcount",
                &sys_enter,
                "hist:keys=id.syscall:vals=hitcount:sort=hitcount:size=2048",
            ),
            (
                "key=id.syscall,common_pid.execname:val=hitcount:sort=id,hitcount",
                &sys_enter,
                "hist:keys=id.syscall,common_pid.execname:vals=hitcount:sort=id.syscall,hitcount:size=2048",
            ),
            (
                "key=id.syscall,common_pid.execname:val=hitcount:sort=id,hitcount if id == 16",
                &sys_enter,
                "hist:keys=id.syscall,common_pid.execname:vals=hitcount:sort=id.syscall,hitcount:size=2048",
            ),
            (
                "key=common_pid.execname,size:val=hitcount:sort=common_pid,size",
                &recvfrom,
                "hist:keys=common_pid.execname,size:vals=hitcount:sort=common_pid.execname,size:size=2048",
            ),
            (
                "key=child_comm:val=hitcount:size=256",
                &fork,
                "hist:keys=child_comm:vals=hitcount:sort=hitcount:size=256",
            ),
            (
                "keys=len:vals=common_preempt_count",
                &netif,
                "hist:keys=len:vals=hitcount,common_preempt_count:sort=hitcount:size=2048",
            ),
            (
                "keys=skbaddr.hex:vals=len",
                &netif,
                "hist:keys=skbaddr.hex:vals=hitcount,len:sort=hitcount:size=2048",
            ),
            (
                "keys=skbaddr.hex:vals=len if len == 256",
                &netif,
                "hist:keys=skbaddr.hex:vals=hitcount,len:sort=hitcount:size=2048",
            ),
            (
                "name=foo:keys=skbaddr.hex:vals=len",
                &netif,
                "hist:name=foo:keys=skbaddr.hex:vals=hitcount,len:sort=hitcount:size=2048",
            ),
            (
                "name=bar:key=common_stacktrace:val=hitcount",
                &netif,
                "hist:name=bar:keys=common_stacktrace:vals=hitcount:sort=hitcount:size=2048",
            ),
            (
                "keys=pid,prio,lat.log2:sort=lat",
                &wakeup,
                "hist:keys=pid,prio,lat.log2:vals=hitcount:sort=lat.log2:size=2048",
            ),
            (
                "keys=pid,prio,lat.buckets=10:sort=lat",
                &wakeup,
                "hist:keys=pid,prio,lat.buckets=10:vals=hitcount:sort=lat.buckets=10:size=2048",
            ),
            (
                "keys=delta.buckets=100,stack.stacktrace:sort=delta",
                &block,
                "hist:keys=delta.buckets=100,stack.stacktrace:vals=hitcount:sort=delta.buckets=100:size=2048",
            ),
            (
                "keys=lat,common_pid:sort=lat",
                &latency,
                "hist:keys=lat,common_pid:vals=hitcount:sort=lat:size=2048",
            ),
            // Older examples of histogram.rst predate the hitcount that
            // 6.12 always shows first; these are the 6.12 lines.
            (
                "key=call_site.sym-offset:val=bytes_req:sort=bytes_req.descending",
                &kmalloc,
                "hist:keys=call_site.sym-offset:vals=hitcount,bytes_req:sort=bytes_req.descending:size=2048",
            ),
            (
                "keys=call_site.sym:values=bytes_req,bytes_alloc:sort=bytes_alloc.descending",
                &kmalloc,
                "hist:keys=call_site.sym:vals=hitcount,bytes_req,bytes_alloc:sort=bytes_alloc.descending:size=2048",
            ),
            (
                "key=common_pid.execname:val=count:sort=count.descending",
                &read,
                "hist:keys=common_pid.execname:vals=hitcount,count:sort=count.descending:size=2048",
            ),
        ];
        for (text, ev, want) in cases {
            assert_eq!(info(text, ev), want, "{text}");
        }
        assert_eq!(
            info("keys=common_stacktrace:values=bytes_req,bytes_alloc:sort=bytes_alloc", &kmalloc),
            "hist:keys=common_stacktrace:vals=hitcount,bytes_req,bytes_alloc:sort=bytes_alloc:size=2048"
        );
        assert_eq!(
            info("key=common_stacktrace:vals=len:pause", &netif),
            "hist:keys=common_stacktrace:vals=hitcount,len:sort=hitcount:size=2048"
        );
        assert_eq!(
            info("key=call_site.hex:val=bytes_req", &kmalloc),
            "hist:keys=call_site.hex:vals=hitcount,bytes_req:sort=hitcount:size=2048"
        );
    }

    #[test]
    fn more_info_lines() {
        let ev = sample();
        let cases = [
            ("keys=cpu", "hist:keys=common_cpu:vals=hitcount:sort=hitcount:size=2048"),
            ("keys=cpu.hex:sort=cpu", "hist:keys=common_cpu.hex:vals=hitcount:sort=common_cpu.hex:size=2048"),
            ("keys=stacktrace", "hist:keys=common_stacktrace:vals=hitcount:sort=hitcount:size=2048"),
            (
                "keys=common_timestamp.usecs",
                "hist:keys=common_timestamp.usecs:vals=hitcount:sort=hitcount:size=2048:clock=global",
            ),
            (
                "keys=b:vals=common_timestamp:clock= mono ",
                "hist:keys=b:vals=hitcount,common_timestamp:sort=hitcount:size=2048:clock=mono",
            ),
            ("keys=b:clock=mono", "hist:keys=b:vals=hitcount:sort=hitcount:size=2048"),
            ("keys=b:vals=a:nohitcount", "hist:keys=b:vals=a:sort=hitcount:size=2048:nohitcount"),
            (
                "keys=b:vals=hitcount.percent,a.graph:NOHC:sort=a",
                "hist:keys=b:vals=hitcount.percent,a.graph:sort=a.graph:size=2048:nohitcount",
            ),
            ("keys=b.usecs:size=100", "hist:keys=b.usecs:vals=hitcount:sort=hitcount:size=128"),
            (
                "keys=hitcount.log2,s,d:vals=c.hex:size=0x20000:sort=c.descending,s",
                "hist:keys=.log2,s,d:vals=hitcount,c.hex:sort=c.hex.descending,s:size=131072",
            ),
            (
                "keys=b.buckets=18446744073709551615",
                "hist:keys=b.buckets=-1:vals=hitcount:sort=hitcount:size=2048",
            ),
            (
                "keys=rhist_test.rhist_sample.b:pause:cont:clear",
                "hist:keys=b:vals=hitcount:sort=hitcount:size=2048",
            ),
            (
                "keys=common_pid.execname,ip.sym-offset,c.syscall:vals=a,b:sort=c,hitcount.descending",
                "hist:keys=common_pid.execname,ip.sym-offset,c.syscall:vals=hitcount,a,b:sort=c.syscall,hitcount.descending:size=2048",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(info(text, &ev), want, "{text}");
        }
        // Another prefix.
        let spec = parse_trigger_in("rhist:", "name=x:keys=b").unwrap();
        let hd = HistData::build(&spec, &ev).unwrap();
        let mut s = String::new();
        hd.write_info(&mut s, "rhist:").unwrap();
        assert_eq!(
            s,
            "rhist:name=x:keys=b:vals=hitcount:sort=hitcount:size=2048"
        );
        assert_eq!(hd.spec().name(), Some("x"));
        assert_eq!(hd.map_bits(), 11);
        // A stack trace field without .stacktrace still prints with it.
        let ev = odd();
        assert_eq!(
            info("keys=stack", &ev),
            "hist:keys=stack.stacktrace:vals=hitcount:sort=hitcount:size=2048"
        );
    }

    // --- build errors -------------------------------------------------------

    #[test]
    fn field_errors() {
        let ev = sample();
        let t = "keys=nope";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::FieldNotFound, at(t, "nope"))
        );
        // The generic comm has no size: not found.
        let t = "keys=comm";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::FieldNotFound, at(t, "comm"))
        );
        // Values come before keys.
        let t = "keys=nope:vals=zz";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::FieldNotFound, at(t, "zz"))
        );
        // An empty key: caret 0.
        assert_eq!(
            build_err("keys=b,", &ev),
            HistError::new(HistErrorKind::FieldNotFound, 0)
        );
        // A modifier error comes before the look-up.
        let t = "keys=nope.foo";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::BadFieldModifier, at(t, "foo"))
        );
        // A numeric field of a size other than 1, 2, 4, 8.
        let ev2 = odd();
        assert_eq!(build_err("keys=arr", &ev2), HistError::silent(ENOMEM));
        assert_eq!(build_err("keys=arr.log2", &ev2), HistError::silent(ENOMEM));
    }

    #[test]
    fn modifier_errors() {
        let ev = sample();
        let bad = |t: &str, s: &str| HistError::new(HistErrorKind::BadFieldModifier, at(t, s));
        for (t, s) in [
            ("keys=b:vals=a.log2", "a.log2"),
            ("keys=b:vals=a.buckets=10", "a.buckets=10"),
            ("keys=b:vals=ip.sym", "ip.sym"),
            ("keys=b:vals=b.syscall", "b.syscall"),
            ("keys=b:vals=common_stacktrace", "common_stacktrace"),
            ("keys=b:vals=stacktrace", "stacktrace"),
            ("keys=b:vals=a,STACKTRACE", "STACKTRACE"),
            ("keys=a.stacktrace", "a.stacktrace"),
            ("keys=stacktrace.stacktrace", "stacktrace.stacktrace"),
            (
                "keys=common_stacktrace.stacktrace",
                "common_stacktrace.stacktrace",
            ),
            ("keys=b.percent", "percent"),
            ("keys=b.graph", "graph"),
            ("keys=b.execname", "execname"),
        ] {
            assert_eq!(build_err(t, &ev), bad(t, s), "{t}");
        }
        // With two dots, C takes "b.hex." for a system and an event.
        let t = "keys=b.hex.sym";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::FieldNotFound, at(t, "sym"))
        );
        // C looks for its rewritten "symXoffset": caret 0.
        assert_eq!(
            build_err("keys=b:vals=ip.sym-offset", &ev),
            HistError::new(HistErrorKind::BadFieldModifier, 0)
        );
        // A stack trace field as a value.
        let ev2 = odd();
        let t = "keys=s8:vals=stack";
        assert_eq!(
            build_err(t, &ev2),
            HistError::new(HistErrorKind::BadFieldModifier, at(t, "stack"))
        );
    }

    #[test]
    fn count_and_size_errors() {
        let ev = sample();
        let nohc = HistError::new(HistErrorKind::NeedNohcVal, 0);
        assert_eq!(build_err("keys=b:nohitcount", &ev), nohc);
        assert_eq!(build_err("keys=b:vals=hitcount:nohitcount", &ev), nohc);
        assert_eq!(nohc.errno(), ENOENT);
        let einval = HistError::silent(EINVAL);
        assert_eq!(build_err("keys=a,b,c,common_pid", &ev), einval);
        // The fourth key is never looked at.
        assert_eq!(build_err("keys=a,b,c,nope", &ev), einval);
        assert_eq!(
            build_err("keys=a,b,nope,c", &ev).kind(),
            Some(HistErrorKind::FieldNotFound)
        );
        assert_eq!(build_err("keys=b:vals=a,b,c", &ev), einval);
        assert_eq!(
            build_err("keys=b:vals=nope,b,c", &ev).kind(),
            Some(HistErrorKind::FieldNotFound)
        );
        // HIST_KEY_SIZE_MAX is 384.
        assert_eq!(build_err("keys=d,d", &ev), einval);
        assert_eq!(build("keys=d,stacktrace", &ev).key_size(), 384);
        assert_eq!(build_err("keys=d,stacktrace,a", &ev), einval);
        assert_eq!(build_err("keys=s,d,stacktrace", &ev), einval);
        assert_eq!(build("keys=s,d,a", &ev).key_size(), 16 + 256 + 8);
    }

    #[test]
    fn not_supported_yet() {
        let ev = sample();
        let ns = not_supported();
        for t in [
            "keys=b:vals=a+c",
            "keys=b:vals=-(a)",
            "keys=b:vals=a*2",
            "keys=5",
            "keys=b:vals=10",
            "keys=b:vals=$x",
            "keys=b:vals=sys.ev.$x",
            "keys=b:x=a",
            "keys=b:vals=$x:x=a",
            "keys=b:vals=a:onmax($x).save(comm)",
            "keys=b:vals=nope:onmatch(sched.sched_waking).trace(foo,$x)",
            // C would use kernel addresses.
            "keys=b:vals=s",
            "keys=b:vals=d",
            "keys=s.log2",
            "keys=d.buckets=4",
        ] {
            assert_eq!(build_err(t, &ev), ns, "{t}");
        }
        // A pointer string is just a number, fine.
        assert!(HistData::build(&parse_trigger("keys=p:vals=p").unwrap(), &odd()).is_ok());
        // FILTER_COMM fields with a size hold a pointer.
        static COMMS: [EventField<'static>; 1] =
            [fld("who", "char *", 8, 8, false, FieldStorage::Comm)];
        assert_eq!(build_err("keys=who", &event("x", "y", &COMMS)), ns);

        // Errors C reports before it gets there.
        let t = "keys=b:vals=a.foo+c";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::BadFieldModifier, at(t, "foo"))
        );
        let t = "keys=b:vals=zz+c";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::FieldNotFound, at(t, "zz"))
        );
        let t = "keys=b:vals=c+zz";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::FieldNotFound, at(t, "zz"))
        );
        // "s" first occurs in "hist".
        let t = "keys=b:vals=s+a";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::InvalidStrOperand, 2)
        );
        let t = "keys=b:vals=a-d";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::InvalidStrOperand, at(t, "d"))
        );
        let t = "keys=b:vals=-(d)";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::InvalidStrOperand, at(t, "d)"))
        );
        let t = "keys=b:vals=a-common_timestamp.usecs";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::TimestampMismatch, 0)
        );
        let t = "keys=b:vals=a/0";
        let e = build_err(t, &ev);
        assert_eq!(
            e,
            HistError::with_errno(HistErrorKind::DivisionByZero, at(t, "0"), EDOM)
        );
        let t = "keys=b:vals=a+1e";
        assert_eq!(build_err(t, &ev).kind(), Some(HistErrorKind::ExpectNumber));
        let t = "keys=b:vals=a*b*c*d*a";
        assert_eq!(
            build_err(t, &ev).kind(),
            Some(HistErrorKind::TooManySubexpr)
        );
        // Values before variables.
        let t = "keys=b:x=a:vals=zz";
        assert_eq!(build_err(t, &ev).kind(), Some(HistErrorKind::FieldNotFound));
        // A variable of this trigger standing for a plain field is parsed
        // as that field; the caret is on the value.
        let t = "keys=b:vals=$x:x=a.log2";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::BadFieldModifier, at(t, "$x"))
        );
        let t = "keys=b:vals=rhist_test.rhist_sample.$x:x=zz";
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::FieldNotFound, at(t, "zz"))
        );
        // Handlers without onmatch() do not stop the fields.
        let t = "keys=b:vals=zz:onmax($x).save(comm)";
        assert_eq!(build_err(t, &ev).kind(), Some(HistErrorKind::FieldNotFound));
        let t = "keys=b:vals=s:sort=junk";
        assert_eq!(
            build_err(t, &ev).kind(),
            Some(HistErrorKind::InvalidSortField)
        );
    }

    #[test]
    fn fixed_size() {
        // No allocation: everything is inline (about 2 KiB).
        assert!(core::mem::size_of::<HistData<'_>>() < 4096);
    }

    /// Any record, however short or odd, gives a key without panicking.
    #[test]
    fn write_key_never_panics() {
        let ev = sample();
        let ev2 = odd();
        let triggers: [(&str, &EventDesc<'_>); 8] = [
            ("keys=a,b,c", &ev),
            ("keys=s,d", &ev),
            ("keys=d,stacktrace", &ev),
            ("keys=ip.sym,common_pid.execname,c.log2", &ev),
            ("keys=rel,s16,s8", &ev2),
            ("keys=stack.stacktrace,name", &ev2),
            ("keys=stack", &ev2),
            ("keys=common_timestamp.usecs,cpu,b.buckets=3", &ev),
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for (t, e) in triggers {
            let hd = build(t, e);
            for _ in 0..2000 {
                let len = (next() % 96) as usize;
                let r: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                let mut key = std::vec![0u8; hd.key_size()];
                hd.write_key(&r, &CTX, &mut key);
                let _ = keys_text(&hd, &key, &NoSymbols);
                for i in 0..hd.n_sums() {
                    let _ = hd.sum_value(i, &r, &CTX);
                }
                // A key of the wrong size.
                let mut short = std::vec![0u8; (next() % 40) as usize];
                hd.write_key(&r, &CTX, &mut short);
                let _ = hd.key_parts(&short).count();
            }
        }
    }
}
