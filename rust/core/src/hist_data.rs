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
//! `add_to_key()`), what to add to each sum and what each variable holds
//! (`hist_trigger_elt_update()`), how to show keys and values, how the map
//! sorts, how the trigger prints itself (`event_hist_trigger_print()`) and
//! what its `hist_debug` file shows (`hist_trigger_debug_show()`).
//!
//! # Fields
//!
//! Like C, every key, value and variable is a *hist field*: a set of C's
//! `HIST_FIELD_FL_*` flags, the event field it reads (if any), and what
//! computes its value (`Fetch`, C's `enum hist_field_fn`, evaluated by
//! one `match`).  `.log2` and `.buckets=` fields have an operand, unary
//! minus one and the four operators two, hist fields kept in the same
//! arena as C keeps `operands[]`; an operand is always made before the
//! field that uses it, so evaluation only ever looks at lower indices and
//! its depth is bounded.  Names, displays, key sizes, types and compare
//! functions all follow from the flags, as in C, so the odd cases come out
//! as C's too (`hitcount.log2` as a key always holds 1 and has an empty
//! name; `cpu` is named `cpu` in the hist file and `common_cpu` in the
//! trigger info).
//!
//! # `common_comm`
//!
//! rhist's extension, Linux 6.16's `HIST_FIELD_FL_COMM`: `common_comm`,
//! and the generic `comm` or `COMM` of an event without its own, is the
//! current task's command name ([`EventContext::comm`]), a string of
//! type `char[16]` (6.16's is a `char[]` of `MAX_FILTER_STR_VAL` bytes),
//! for keys and variables.
//! hist 6.12 rejects both (`FIELD_NOT_FOUND`): as for statistics, a text
//! is built as hist builds it first, and with `common_comm` only when
//! that fails; if that fails too, the error is hist's.
//!
//! # Expressions
//!
//! `parse_expr()`, `parse_unary()` and `parse_atom()` are followed node by
//! node over the tree [`TriggerSpec::parse_expr`] gives: operands are
//! parsed with no flags, string operands are refused, timestamp units must
//! agree, and an operator over two constants is evaluated at once and
//! replaced by a constant (`combine_consts`), with C's functions: a
//! division by a constant uses `hist_field_get_div_fn()`'s shift, plain
//! division or multiply-and-shift, so `10/3` folds to 4, as in C.  An
//! expression's name is its text as `expr_str()` rebuilds it (folded
//! constants in decimal, modifiers by their C name, an operand
//! expression's own `.usecs` repeated), longer than `MAX_FILTER_STR_VAL -
//! 1` bytes is C's silent `-E2BIG`.
//!
//! # Variables
//!
//! The variables of this trigger (`name=expr`) are hist fields with
//! `HIST_FIELD_FL_VAR`, made after the values and before the keys, in
//! C's `fields[]` between them (C counts them in `n_vals` and `n_vars`);
//! they are not sums (the map has one sum per value) but are evaluated on
//! every event ([`HistData::var_value`]) and printed in the trigger info
//! after the values.  A second definition of a name is `DUPLICATE_VAR`.
//!
//! # Variable references
//!
//! A `$var` (or `system.event.$var`) that is not a plain field of a
//! variable of this trigger is looked up among the registered triggers
//! through the shell's [`VarLookup`] ([`BuildOptions::vars`]) and becomes
//! a `HIST_FIELD_FL_VAR_REF` field, C's `var_refs[]` ([`super::var_ref`]);
//! in a variable's definition that is just one, an alias.  Its value is
//! what the event path resolved ([`HistData::sum_value_refs`]).
//!
//! # Actions
//!
//! `onmatch(system.event)` handlers with `trace()` actions, and the field
//! variables their parameters make, are built by
//! [`HistData::create_actions`] after the rest, as C does
//! (`hist_data/actions.rs`).
//!
//! # What the caller brings, and what is not supported
//!
//! What only the kernel knows comes in through [`BuildOptions`]: the
//! variables of the event's and the instance's other triggers (C's
//! `find_var()`), the instance's events and synthetic events, enabling a
//! snapshot, and the hidden histograms that an action parameter naming a
//! field of another event makes there. A build that needs one it was not
//! given returns [`not_supported`] (a silent `-EINVAL`); the host tests
//! leave some out.
//!
//! For these [`HistData::build`] returns the error C gives before it gets
//! to them if there is one, otherwise [`not_supported`]:
//!
//! * a `FILTER_COMM` field with a size (none in the kernel), a string
//!   behind a pointer: after everything else;
//! * a trigger needing more than `NODES_MAX` hist fields (C has no such
//!   limit; only possible with many variables of long expressions): when
//!   the arena is full.

use core::fmt::{self, Write};

use super::error::{errno, HistError, HistErrorKind};
use super::event::{EventContext, EventDesc, EventField, FieldStorage};
use super::grammar::{
    Atom, BinaryOp, Expr, FieldContext, FieldModifier, FieldSpec, GrowScope, Handler, KeyField,
    Node, NodeId, SpecialField, TriggerSpec, VarDef, VarDefs, HIST_ACTIONS_MAX, KEYS_EXT_MAX,
    SORT_KEYS_EXT_MAX, TRACING_MAP_KEYS_MAX, TRACING_MAP_VALS_MAX, TRACING_MAP_VARS_MAX,
    VAL_FIELDS_EXT_MAX,
};
use super::output::{FieldNames, KeyDisplay, KeyName, KeyPart, ValDisplay, STACKTRACE_DEPTH};
use super::program::{order_base_2, KeyLoad, KeyStr, Load, Num, Program, StrFrom, COMM_SLOT};
use super::record::{address, read_stack, rec_num, rec_u32, rec_u64, strncpy_from};
use super::sketch::{MapSketches, PoolParams, PAGE_WORDS, SKETCH_WORDS};
use super::stats::{SlotOp, Statistic};
use super::var_ref::{Found, RefInfo, RefTable, VarLookup, VarTarget, OWN_SLOT, VAR_REFS_MAX};
use super::vars::{self, VarCopy};

mod actions;
mod build;
mod debug;
mod eval;
mod info;
mod print;
mod variables;

use actions::ActionData;
pub use actions::{ActionSink, SynthField, SynthLookup, Tracking};

/// `MAX_FILTER_STR_VAL`: the key size of a dynamic string.
pub const MAX_FILTER_STR_VAL: u32 = 256;
/// `HIST_STACKTRACE_SIZE`: the key size of a stack trace (16 frames).
pub const HIST_STACKTRACE_SIZE: u32 = (STACKTRACE_DEPTH * 8) as u32;
/// `HIST_KEY_SIZE_MAX`: the largest key, all key fields together.
pub const HIST_KEY_SIZE_MAX: u32 = MAX_FILTER_STR_VAL + HIST_STACKTRACE_SIZE;
/// `HIST_DIV_SHIFT`: the shift of a division by a constant done as a
/// multiplication.
pub const HIST_DIV_SHIFT: u32 = 20;

/// Most values, hitcount included: hist's three, or hitcount and
/// [`VAL_FIELDS_EXT_MAX`] built as rhist's extension.
pub const VAL_SLOTS_MAX: usize = 1 + VAL_FIELDS_EXT_MAX;

/// Out of memory: what C returns when `create_hist_field()` fails, e.g.
/// for a numeric field whose size is not 1, 2, 4 or 8.
const ENOMEM: i32 = 12;
/// Argument list too long: an expression name that does not fit
/// `expr_str()`'s buffer.
const E2BIG: i32 = 7;

/// The longest expression name `expr_str()` writes (its buffer less the
/// NUL).
const EXPR_STR_MAX: usize = MAX_FILTER_STR_VAL as usize - 1;

/// Hist fields one trigger can make: hitcount, two values, three keys and
/// sixteen variables with their operands (an expression of C's three
/// operators has seven, eleven if its fields have `.log2` or `.buckets=`).
/// C allocates each; here a trigger needing more gets [`not_supported`].
const NODES_MAX: usize = 128;

/// No operand.
const NONE: u8 = u8::MAX;

/// Bounds the evaluation depth (C's expressions nest at most 3 deep, plus
/// a `.log2`/`.buckets=` operand).
const EVAL_DEPTH_MAX: u32 = 8;

/// The error for what this module does not support (see the module
/// doc): a silent `-EINVAL`.
pub const fn not_supported() -> HistError {
    HistError::silent(errno::EINVAL)
}

/// The error for a build that got to something not supported, where C
/// goes on: the first error C would report after it if every look-up
/// succeeded ([`TriggerSpec::check_syntax`]), else [`not_supported`].
/// What comes before was built without error, so that the first error
/// `check_syntax()` finds is at or after that point.
fn unsupported_from(spec: &TriggerSpec<'_>) -> HistError {
    spec.check_syntax().err().unwrap_or(not_supported())
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
const FL_CONST: u32 = 1 << 18;
const FL_PERCENT: u32 = 1 << 19;
const FL_GRAPH: u32 = 1 << 20;
/// Linux 6.16's `HIST_FIELD_FL_COMM`: `common_comm`.
const FL_COMM: u32 = 1 << 21;
/// `TASK_COMM_LEN`: the size of `common_comm`.
const TASK_COMM_LEN: u32 = 16;

/// The identity [`HistPtr`] is given for this trigger's own histogram.
const OWN_HIST: u64 = u64::MAX;

/// Writes C's `%p` of the histogram of an identity (`None`: C's NULL).
pub type HistPtr<'p> = &'p dyn Fn(&mut dyn Write, Option<u64>) -> fmt::Result;

/// Whether the instance has the event `system`.`event`.
pub type EventExists<'o> = dyn Fn(&str, &str) -> bool + 'o;

/// C's `create_field_var_hist()` for the field `field` of the event
/// `system`.`event`, asked by [`HistData::create_actions`] with the
/// trigger being made: the shell finds a histogram there whose keys are
/// compatible ([`HistData::keys_compatible`]), else fails with
/// `HIST_NOT_FOUND`; unless a trigger there already has the variable
/// `synthetic_<field>`, it creates one with the text
/// [`HistData::write_field_var_hist_cmd`] makes, and the found
/// histogram's filter, else fails with `HIST_CREATE_FAIL`.  `Ok(true)`
/// when it created one.
pub type FieldVarHist<'o> = dyn Fn(&HistData<'_>, &str, &str, &str) -> Result<bool, HistError> + 'o;

/// What the build needs to know beyond the trigger and its event.
#[derive(Clone, Copy, Default)]
pub struct BuildOptions<'o> {
    /// The command removes a trigger (`!hist:...`): C's `hist_data->remove`,
    /// which skips the `DUPLICATE_VAR` check.
    pub remove: bool,
    /// Whether another trigger of the event defines a variable of this
    /// name: `find_var()` looks at them too.
    pub defined_elsewhere: Option<&'o dyn Fn(&str) -> bool>,
    /// The variables of the instance's registered triggers, where
    /// `parse_var_ref()` looks a `$name` up ([`VarLookup`]).  `None`:
    /// there are no other triggers.  When none defines the name, C's
    /// `VAR_NOT_FOUND` and then the field error of the `$name` text.
    pub vars: Option<&'o dyn VarLookup>,
    /// The synthetic events, for `trace()` actions
    /// ([`HistData::create_actions`]); `None`: there are none.
    pub synths: Option<&'o dyn SynthLookup>,
    /// Whether the instance has the event `system`.`event` (C's
    /// `event_file()`), for `onmatch()`; `None`: it has none.
    pub event_exists: Option<&'o EventExists<'o>>,
    /// `tracing_snapshot_cond_enable()` for a `snapshot()` action, called
    /// where C calls it; an errno on failure, which C does not log.
    /// `None`: the instance has no snapshot, `-ENODEV`.
    pub enable_snapshot: Option<&'o dyn Fn() -> Result<(), i32>>,
    /// Hidden histograms for the fields of other events ([`FieldVarHist`]);
    /// `None`: not supported ([`not_supported`]).
    pub field_var_hist: Option<&'o FieldVarHist<'o>>,
    /// `hist_err()` where C logs an entry and goes on: the errors of an
    /// unqualified action parameter tried as a field of this event before
    /// it is taken from the matching event, which stay in the log whether
    /// or not the command then fails. `None`: they are not logged.
    pub log: Option<&'o dyn Fn(HistErrorKind, usize)>,
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
    /// A quantile of the `.quantiles` value `val` (rhist's extension,
    /// `sort=lat.p99`): `rank` indexes
    /// [`PERCENTILES`](super::sketch::PERCENTILES), p50 to p999.
    Quantile {
        /// The value.
        val: usize,
        /// Which quantile.
        rank: usize,
    },
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
    /// `hist_field_const()`: the constant.
    Const,
    /// `hist_field_log2()`: `order_base_2()` of the operand.
    Log2,
    /// `hist_field_bucket()`: the operand rounded down to the bucket size.
    Bucket,
    /// `hist_field_timestamp()`.
    Timestamp,
    /// `hist_field_cpu()`.
    Cpu,
    /// 6.16's `hist_field_comm()`: the current task's command name, read
    /// by the key and the variable copy, never as a number.
    Comm,
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
    /// `hist_field_unary_minus()`.
    UMinus,
    /// `hist_field_minus()`.
    Minus,
    /// `hist_field_plus()`.
    Plus,
    /// `hist_field_div()`: any divisor, 0 gives `(u64)-1`.
    Div,
    /// `hist_field_mult()`.
    Mult,
    /// `div_by_power_of_two()`: a constant divisor `1 << shift`.
    DivPower2 { shift: u8 },
    /// `div_by_not_power_of_two()`: a constant divisor above
    /// `1 << HIST_DIV_SHIFT`.
    DivNotPower2,
    /// `div_by_mult_and_shift()`: a constant divisor up to
    /// `1 << HIST_DIV_SHIFT`, `mult` being `(1 << HIST_DIV_SHIFT) /
    /// divisor`.
    DivMultShift { mult: u32 },
    /// `hist_field_var_ref()`: the value resolved for reference `idx`
    /// (`var_ref_vals[var_ref_idx]`).
    VarRef { idx: u8 },
}

impl Fetch {
    /// The operator character of an expression (C's `field_op_id`).
    fn operator(self) -> Option<char> {
        match self {
            Fetch::UMinus | Fetch::Minus => Some('-'),
            Fetch::Plus => Some('+'),
            Fetch::Mult => Some('*'),
            Fetch::Div
            | Fetch::DivPower2 { .. }
            | Fetch::DivNotPower2
            | Fetch::DivMultShift { .. } => Some('/'),
            _ => None,
        }
    }
}

/// `hist_field_div()`: `(u64)-1` for a zero divisor, a shift for a power
/// of two.
pub const fn hist_div(dividend: u64, divisor: u64) -> u64 {
    if divisor == 0 {
        return u64::MAX;
    }
    if divisor & (divisor - 1) == 0 {
        dividend >> divisor.trailing_zeros()
    } else {
        dividend / divisor
    }
}

/// `div_by_mult_and_shift()`: below `1 << HIST_DIV_SHIFT`, C multiplies by
/// `mult` = `(1 << HIST_DIV_SHIFT) / divisor` and shifts, rounding up
/// (which gives the quotient or one more); above, it divides.
pub const fn div_mult_shift(dividend: u64, mult: u32, divisor: u64) -> u64 {
    if dividend < 1 << HIST_DIV_SHIFT {
        // dividend < 2^20 and mult < 2^20: no overflow.
        (dividend * mult as u64 + ((1 << HIST_DIV_SHIFT) - 1)) >> HIST_DIV_SHIFT
    } else {
        match dividend.checked_div(divisor) {
            Some(q) => q,
            None => u64::MAX,
        }
    }
}

/// `hist_field_get_div_fn()`: how C divides by the constant `divisor`
/// (never 0: C refuses that first).
fn div_fetch(divisor: u64) -> Fetch {
    if divisor & divisor.wrapping_sub(1) == 0 {
        Fetch::DivPower2 {
            shift: divisor.trailing_zeros() as u8,
        }
    } else if divisor > 1 << HIST_DIV_SHIFT {
        Fetch::DivNotPower2
    } else {
        // divisor > 2: the multiplier fits in 20 bits.
        Fetch::DivMultShift {
            mult: ((1u64 << HIST_DIV_SHIFT) / divisor) as u32,
        }
    }
}

/// An operator applied to its operands' values: `rhs` is only called for
/// the operators that read the right operand, `divisor` is the constant of
/// a constant divisor.
fn apply_op(op: Fetch, lhs: u64, rhs: impl FnOnce() -> u64, divisor: u64) -> u64 {
    match op {
        Fetch::UMinus => lhs.wrapping_neg(),
        Fetch::Minus => lhs.wrapping_sub(rhs()),
        Fetch::Plus => lhs.wrapping_add(rhs()),
        Fetch::Mult => lhs.wrapping_mul(rhs()),
        Fetch::Div => hist_div(lhs, rhs()),
        Fetch::DivPower2 { shift } => lhs.checked_shr(shift as u32).unwrap_or(0),
        Fetch::DivNotPower2 => lhs.checked_div(divisor).unwrap_or(u64::MAX),
        Fetch::DivMultShift { mult } => div_mult_shift(lhs, mult, divisor),
        _ => 0,
    }
}

/// Where C's `type` string of a hist field comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum TypeName {
    /// The event field's type (`field->type`).
    #[default]
    Field,
    /// The first operand's type.
    Operand,
    /// `u64`
    U64,
    /// `unsigned long[]`
    UnsignedLongArray,
    /// `unsigned int`
    UnsignedInt,
    /// `char[]`: an `.execname` variable (C's `update_var_execname()`).
    CharArray,
    /// `char[16]`: `common_comm` (`TASK_COMM_LEN`).
    Comm,
    /// The referenced variable's, kept with reference `idx`.
    Ref(u8),
}

/// One hist field, C's `struct hist_field` (the parts used so far).
#[derive(Clone, Copy, Debug)]
struct HistField<'a> {
    flags: u32,
    /// Key size (aligned) for keys, the value's size otherwise.
    size: u32,
    /// Key offset (keys are at most `HIST_KEY_SIZE_MAX` bytes).
    offset: u16,
    /// Operand indices (`NONE` for none).
    operands: [u8; 2],
    ty: TypeName,
    signed: bool,
    fetch: Fetch,
    field: Option<&'a EventField<'a>>,
    /// `buckets` of a `.buckets=` field, `constant` of a constant.
    param: u64,
}

impl HistField<'static> {
    /// What [`Default`] gives, as a constant.
    const BLANK: Self = HistField {
        flags: 0,
        size: 0,
        offset: 0,
        operands: [NONE; 2],
        ty: TypeName::Field,
        signed: false,
        fetch: Fetch::Nop,
        field: None,
        param: 0,
    };
}

impl Default for HistField<'_> {
    fn default() -> Self {
        HistField::BLANK
    }
}

impl HistField<'_> {
    /// C's `buckets`.
    fn buckets(&self) -> u64 {
        if self.flags & FL_BUCKET != 0 {
            self.param
        } else {
            0
        }
    }

    /// C's `constant`.
    fn constant(&self) -> u64 {
        if self.flags & FL_CONST != 0 {
            self.param
        } else {
            0
        }
    }

    fn operand(&self, i: usize) -> Option<u8> {
        self.operands.get(i).copied().filter(|&op| op != NONE)
    }
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
    EventField::new(name, type_name, 0, 0, signed, storage)
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

/// `ns2usecs()`: rounded to the nearest microsecond.
pub const fn ns2usecs(ns: u64) -> u64 {
    ns.wrapping_add(500) / 1000
}

/// Copies `src` into the start of `dst`, as far as both go.
fn put(dst: &mut [u8], src: &[u8]) {
    let n = dst.len().min(src.len());
    if let (Some(d), Some(s)) = (dst.get_mut(..n), src.get(..n)) {
        d.copy_from_slice(s);
    }
}

/// Where the string of string key `f` is, if it is one
/// ([`KeyStr`]).
fn key_str(f: &HistField<'_>) -> Option<KeyStr> {
    if f.flags & FL_STRING == 0 {
        return None;
    }
    // add_to_key(): the string's size, at most the slot less one, so that
    // it stays NUL-terminated.
    let max = f.size.saturating_sub(1);
    let from = match f.fetch {
        Fetch::String { at } => StrFrom::Array {
            at,
            size: f.field?.size,
        },
        Fetch::DynString { at } => StrFrom::DataLoc { at },
        Fetch::RelDynString { at } => StrFrom::RelLoc { at },
        _ => return None,
    };
    Some(KeyStr { from, max })
}

/// A [`Write`] that only counts bytes.
struct Count(usize);

impl Write for Count {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0 = self.0.saturating_add(s.len());
        Ok(())
    }
}

/// A [`Write`] that checks that what is written is a prefix of `rest`,
/// and leaves what follows it there: the whole of it was written when
/// `ok` and `rest` is empty.
struct Prefix<'s> {
    rest: &'s str,
    ok: bool,
}

impl Write for Prefix<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        match self.rest.strip_prefix(s) {
            Some(rest) if self.ok => self.rest = rest,
            _ => self.ok = false,
        }
        Ok(())
    }
}

/// What follows in `text` what `write` writes, if `text` starts with it
/// and then ends or goes on with a `.`: `""`, or what follows the `.`.
fn after_prefix(text: &str, write: impl FnOnce(&mut dyn Write) -> fmt::Result) -> Option<&str> {
    let mut m = Prefix {
        rest: text,
        ok: true,
    };
    if write(&mut m).is_err() || !m.ok {
        return None;
    }
    match m.rest {
        "" => Some(""),
        rest => rest.strip_prefix('.'),
    }
}

/// The name a value prints under ([`HistData::printed_vals`]): C's
/// `hist_field_name()`, and a statistic's modifier after it (`lat.max`).
#[derive(Clone, Copy)]
pub struct ValName<'h, 'a> {
    hd: &'h HistData<'a>,
    i: usize,
}

impl fmt::Display for ValName<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.hd.write_val_name(f, self.i)
    }
}

impl fmt::Debug for ValName<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", format_args!("{self}"))
    }
}

/// A hist trigger bound to an event (C's `struct hist_trigger_data`),
/// for triggers without actions.
///
/// Values (sums) are hitcount and up to two fields; variables come after
/// them in C's `fields[]`, keys after the variables.  Everything is in
/// fixed-size arrays.
#[derive(Clone, Debug)]
pub struct HistData<'a> {
    spec: TriggerSpec<'a>,
    nodes: [HistField<'a>; NODES_MAX],
    n_nodes: usize,
    vals: [u8; VAL_SLOTS_MAX],
    /// The statistic of each value (rhist's extension, [`super::stats`]);
    /// `None` for a sum, as hist's values all are.
    stats: [Option<Statistic>; VAL_SLOTS_MAX],
    n_vals: usize,
    vars: [u8; TRACING_MAP_VARS_MAX],
    var_names: [&'a str; TRACING_MAP_VARS_MAX],
    n_vars: usize,
    keys: [u8; KEYS_EXT_MAX],
    n_keys: usize,
    key_size: u32,
    sort_keys: [SortKey; SORT_KEYS_EXT_MAX],
    /// The hist field each sort key names (`None`: hitcount).
    sort_fields: [Option<u8>; SORT_KEYS_EXT_MAX],
    n_sort_keys: usize,
    /// `common_comm` and the generic `comm` are fields (rhist's
    /// extension): hist's build of the text failed.
    comm: bool,
    enable_timestamps: bool,
    ts_in_usecs: bool,
    /// C's `var_refs[]`, and the histograms they name.
    refs: RefTable<'a>,
    /// C's `field_vars[]`, made by [`Self::create_actions`]: map variables
    /// after this trigger's own, in `vars` and `var_names`.
    n_field_vars: usize,
    /// C's `save_vars[]`, the `save()` action's field variables: map
    /// variables after the field variables (nodes and names).
    save_vars: [u8; TRACING_MAP_VARS_MAX],
    save_names: [&'a str; TRACING_MAP_VARS_MAX],
    n_save_vars: usize,
    /// The tracking variables of `onmax()` and `onchange()` (C's
    /// `track_var`): the last map variables, one per such action.
    n_track_vars: usize,
    /// The `var.idx` C gives each field and save variable: C numbers the
    /// variables an action makes in the order it makes them.
    field_var_c_idx: [u8; TRACING_MAP_VARS_MAX],
    save_var_c_idx: [u8; TRACING_MAP_VARS_MAX],
    /// The hidden histograms the actions made (C's `n_field_var_hists`).
    n_field_var_hists: usize,
    /// The handlers' actions, as `create_actions()` made them.
    actions: [ActionData; HIST_ACTIONS_MAX],
    n_actions: usize,
}

const HITCOUNT_SORT: SortKey = SortKey {
    field: SortField::Sum(0),
    descending: false,
};

impl<'a> HistData<'a> {
    /// Builds the hist data of `spec` on `event`, as `create_hist_data()`
    /// does; the error is the first one C reports (or [`not_supported`]).
    /// Not in the kernel, where the value is too large for the stack: it
    /// uses [`empty_in`](Self::empty_in) and [`build_into`](Self::build_into).
    #[cfg(not(MODULE))]
    pub fn build(spec: &TriggerSpec<'a>, event: &EventDesc<'a>) -> Result<Self, HistError> {
        let mut hd = Self::empty(spec);
        Self::build_into(&mut hd, spec, event)?;
        Ok(hd)
    }

    /// [`empty`](Self::empty) written into `slot`, for callers that keep
    /// the (large) value on the heap and have little stack: the slot is
    /// filled from a constant, then given the spec, with no copy of the
    /// value on the stack (`tools/testing/lint/frames.py` checks).
    pub fn empty_in<'s>(
        slot: &'s mut core::mem::MaybeUninit<Self>,
        spec: &TriggerSpec<'a>,
    ) -> &'s mut Self {
        let hd = slot.write(HistData::BLANK);
        hd.spec = *spec;
        hd
    }

    /// A histogram of nothing for `spec`: what [`build_into`](Self::build_into)
    /// starts from.
    #[cfg(not(MODULE))]
    pub fn empty(spec: &TriggerSpec<'a>) -> Self {
        let mut hd = HistData::BLANK;
        hd.spec = *spec;
        hd
    }
}

impl HistData<'static> {
    /// A histogram of nothing, as a constant.
    const BLANK: Self = HistData {
        spec: TriggerSpec::BLANK,
        nodes: [HistField::BLANK; NODES_MAX],
        n_nodes: 0,
        vals: [0; VAL_SLOTS_MAX],
        stats: [None; VAL_SLOTS_MAX],
        n_vals: 0,
        vars: [0; TRACING_MAP_VARS_MAX],
        var_names: [""; TRACING_MAP_VARS_MAX],
        n_vars: 0,
        keys: [0; KEYS_EXT_MAX],
        n_keys: 0,
        key_size: 0,
        sort_keys: [HITCOUNT_SORT; SORT_KEYS_EXT_MAX],
        sort_fields: [None; SORT_KEYS_EXT_MAX],
        n_sort_keys: 1,
        comm: false,
        enable_timestamps: false,
        ts_in_usecs: false,
        refs: RefTable::EMPTY,
        n_field_vars: 0,
        save_vars: [0; TRACING_MAP_VARS_MAX],
        save_names: [""; TRACING_MAP_VARS_MAX],
        n_save_vars: 0,
        n_track_vars: 0,
        field_var_c_idx: [0; TRACING_MAP_VARS_MAX],
        save_var_c_idx: [0; TRACING_MAP_VARS_MAX],
        n_field_var_hists: 0,
        actions: [ActionData::BLANK; HIST_ACTIONS_MAX],
        n_actions: 0,
    };
}

impl<'a> HistData<'a> {
    /// [`build`](Self::build) into `hd`, which must be [`empty`](Self::empty)
    /// for `spec`: for callers that keep the (large) result on the heap
    /// and have little stack, like the kernel's.
    #[cfg(not(MODULE))]
    pub fn build_into(
        hd: &mut HistData<'a>,
        spec: &TriggerSpec<'a>,
        event: &EventDesc<'a>,
    ) -> Result<(), HistError> {
        Self::build_into_with(hd, spec, event, BuildOptions::default())
    }

    /// [`build_into`](Self::build_into) with [`BuildOptions`].
    pub fn build_into_with(
        hd: &mut HistData<'a>,
        spec: &TriggerSpec<'a>,
        event: &EventDesc<'a>,
        options: BuildOptions<'_>,
    ) -> Result<(), HistError> {
        build::build(hd, spec, event, options)
    }

    /// The trigger this was built from.
    pub fn spec(&self) -> &TriggerSpec<'a> {
        &self.spec
    }

    /// The bytes of an event record the fields read: `Some(n)` when they
    /// all lie in the first `n` bytes, the fixed part of the event, and
    /// `None` when some field reads data the record locates itself
    /// (`__data_loc`/`__rel_loc`), whose extent only the whole record's
    /// length bounds.
    pub fn record_span(&self) -> Option<usize> {
        let mut span = 0;
        for f in self.nodes.get(..self.n_nodes).unwrap_or(&[]) {
            match f.fetch {
                Fetch::DynString { .. } | Fetch::RelDynString { .. } | Fetch::Stack { .. } => {
                    return None
                }
                _ => {}
            }
            if let Some(field) = f.field {
                span = span.max(field.offset as usize + field.size as usize);
            }
        }
        Some(span)
    }

    /// The key size in bytes (a multiple of 8).
    pub fn key_size(&self) -> usize {
        self.key_size as usize
    }

    /// The number of sums: hitcount and the values (not the variables),
    /// statistics included (each is a slot of the entry).
    pub fn n_sums(&self) -> usize {
        self.n_vals
    }

    /// Whether a value has a statistic (`.min`, `.max`, `.avg`: rhist's
    /// extension, which hist rejects).
    pub fn has_stats(&self) -> bool {
        self.val_stats().iter().any(Option::is_some)
    }

    /// Whether the keys and values are rhist's extension, beyond what
    /// hist takes: statistics, more than [`TRACING_MAP_KEYS_MAX`] keys or
    /// more than [`TRACING_MAP_VALS_MAX`] values (hitcount included).
    /// Only such a trigger may sort on more than
    /// [`TRACING_MAP_SORT_KEYS_MAX`](super::grammar::TRACING_MAP_SORT_KEYS_MAX) fields (rhist.rst, "More keys and
    /// values").
    pub fn fields_beyond_hist(&self) -> bool {
        self.n_keys > TRACING_MAP_KEYS_MAX || self.n_vals > TRACING_MAP_VALS_MAX || self.has_stats()
    }

    /// Whether this trigger is rhist's extension, one hist rejects:
    /// [`fields_beyond_hist`](Self::fields_beyond_hist), or more sort
    /// keys than hist's.
    #[cfg(not(MODULE))]
    pub fn beyond_hist(&self) -> bool {
        self.fields_beyond_hist() || self.n_sort_keys > super::grammar::TRACING_MAP_SORT_KEYS_MAX
    }

    /// The statistic of value (sum) `i`, if it has one.
    pub fn val_stat(&self, i: usize) -> Option<Statistic> {
        self.val_stats().get(i).copied().flatten()
    }

    fn val_stats(&self) -> &[Option<Statistic>] {
        self.stats.get(..self.n_vals).unwrap_or(&[])
    }

    /// The number of `.quantiles` values: sketches per entry
    /// ([`super::sketch::MapSketches`]).
    pub fn n_percentiles(&self) -> usize {
        self.val_stats()
            .iter()
            .filter(|&&s| s == Some(Statistic::Percentiles))
            .count()
    }

    /// The sketch of value `i` among its entry's, if it is a
    /// `.quantiles` value: how many such values come before it.
    pub fn sketch_index(&self, i: usize) -> Option<usize> {
        let stats = self.val_stats();
        if stats.get(i).copied().flatten() != Some(Statistic::Percentiles) {
            return None;
        }
        let before = stats.get(..i).unwrap_or(&[]).iter();
        Some(
            before
                .filter(|&&s| s == Some(Statistic::Percentiles))
                .count(),
        )
    }

    /// The pool of sketches the map of this trigger gets, if it has
    /// `.quantiles` values ([`super::sketch::PoolParams::for_map`]).
    pub fn sketch_params(&self) -> Option<PoolParams> {
        let n = self.n_percentiles();
        let max_elts = 1usize << self.map_bits();
        (n > 0).then(|| MapSketches::params(max_elts, n))
    }

    /// Whether value `i` is signed (C's `is_signed`), which its statistic
    /// compares and prints it as.
    pub fn val_signed(&self, i: usize) -> bool {
        self.val_ids()
            .get(i)
            .is_some_and(|&id| self.node(id).signed)
    }

    /// How an event updates sum `i`: adds its value, or raises the slot
    /// of a `.min` or `.max` ([`Statistic::slot_op`]).
    #[inline]
    pub fn slot_op(&self, i: usize) -> SlotOp {
        match self.val_stat(i) {
            Some(stat) => stat.slot_op(self.val_signed(i)),
            None => SlotOp::Add,
        }
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
    #[cfg(not(MODULE))]
    pub fn ts_in_usecs(&self) -> bool {
        self.ts_in_usecs
    }

    /// The keys, in order: (hist field, offset in the key, size in the
    /// key); `None` for a key without a field.
    fn key_slots(&self) -> impl Iterator<Item = Option<(u8, usize, usize)>> + '_ {
        self.key_ids().iter().map(|&id| {
            let f = self.node_ref(id)?;
            Some((id, usize::from(f.offset), f.size as usize))
        })
    }

    /// The hist fields of the sums, hitcount first.
    fn sum_ids(&self) -> &[u8] {
        self.val_ids()
    }

    /// The key parts of a stored key, for output::write_keys.
    pub fn key_parts<'k>(&'k self, key: &'k [u8]) -> impl Iterator<Item = KeyPart<'k>> + 'k {
        self.key_ids().iter().map(move |&id| {
            let f = self.node(id);
            let start = usize::from(f.offset).min(key.len());
            let end = start.saturating_add(f.size as usize).min(key.len());
            let name = match self.name_str(id, 0) {
                Some(name) => KeyName::Text(name),
                None => KeyName::Field(self, id),
            };
            KeyPart {
                name,
                display: key_display(f),
                bytes: key.get(start..end).unwrap_or(&[]),
            }
        })
    }

    /// C's `type` string of key `k` (as `hist_debug` shows it).
    pub fn key_type(&self, k: usize) -> &str {
        self.key_ids().get(k).map_or("", |&id| self.type_name(id))
    }

    /// C's `type` string of value (sum) `i`, hitcount's `u64`.
    pub fn val_type(&self, i: usize) -> &str {
        self.val_ids().get(i).map_or("", |&id| self.type_name(id))
    }

    /// The sort keys, for the map: at least one (hitcount ascending by default).
    pub fn sort_keys(&self) -> &[SortKey] {
        self.sort_keys.get(..self.n_sort_keys).unwrap_or(&[])
    }

    /// What the built trigger combines `grow` with that it may not:
    /// the grammar's [`TriggerSpec::grow_scope`], then references to
    /// variables and `.quantiles`. `Ok` for a trigger without `grow`.
    pub fn grow_scope(&self) -> Result<(), GrowScope> {
        if !self.spec.grow() {
            return Ok(());
        }
        self.spec.grow_scope()?;
        if self.n_var_refs() > 0 {
            Err(GrowScope::References)
        } else if self.n_percentiles() > 0 {
            Err(GrowScope::Quantiles)
        } else {
            Ok(())
        }
    }
}

impl FieldNames for HistData<'_> {
    fn write_field_name(&self, id: u8, out: &mut dyn Write) -> fmt::Result {
        self.write_name(out, id)
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
        KeyDisplay::Buckets(f.buckets())
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

#[cfg(test)]
mod tests;

#[cfg(test)]
mod more_fields_tests;
