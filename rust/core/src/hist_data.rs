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
    SORT_KEYS_EXT_MAX, TRACING_MAP_KEYS_MAX, TRACING_MAP_SORT_KEYS_MAX, TRACING_MAP_VALS_MAX,
    TRACING_MAP_VARS_MAX, VAL_FIELDS_EXT_MAX,
};
use super::output::{FieldNames, KeyDisplay, KeyName, KeyPart, ValDisplay, STACKTRACE_DEPTH};
use super::program::{order_base_2, KeyLoad, KeyStr, Load, Num, Program, StrFrom};
use super::record::{address, read_stack, rec_num, rec_u32, rec_u64, strncpy_from};
use super::sketch::{MapSketches, PoolParams, PAGE_WORDS, SKETCH_WORDS};
use super::stats::{SlotOp, Statistic};
use super::var_ref::{Found, RefInfo, RefTable, VarLookup, VarTarget, OWN_SLOT, VAR_REFS_MAX};
use super::vars::{self, VarCopy};

mod actions;
mod build;

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
    /// [`TRACING_MAP_SORT_KEYS_MAX`] fields (rhist.rst, "More keys and
    /// values").
    pub fn fields_beyond_hist(&self) -> bool {
        self.n_keys > TRACING_MAP_KEYS_MAX || self.n_vals > TRACING_MAP_VALS_MAX || self.has_stats()
    }

    /// Whether this trigger is rhist's extension, one hist rejects:
    /// [`fields_beyond_hist`](Self::fields_beyond_hist), or more sort
    /// keys than hist's.
    pub fn beyond_hist(&self) -> bool {
        self.fields_beyond_hist() || self.n_sort_keys > TRACING_MAP_SORT_KEYS_MAX
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

    /// The name of value `i` without its statistic: what a `.quantiles`
    /// value's columns are named after (`lat` of `lat.p99`).
    pub fn write_val_stem(&self, out: &mut dyn Write, i: usize) -> fmt::Result {
        match self.val_ids().get(i).filter(|_| i > 0) {
            Some(&id) => self.write_name(out, id),
            None => out.write_str("hitcount"),
        }
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

    /// What value `i` prints, its slot reading `slot` (the copies
    /// combined: added, or their maximum for a [`SlotOp::Max`]) and its
    /// entry's hitcount being what `hits` reads (for `.avg`): the sum, or
    /// the statistic.
    pub fn val_value(&self, i: usize, slot: u64, hits: impl FnOnce() -> u64) -> u64 {
        match self.val_stat(i) {
            Some(Statistic::Avg) => Statistic::Avg.value(self.val_signed(i), slot, hits()),
            Some(stat) => stat.value(self.val_signed(i), slot, 0),
            None => slot,
        }
    }

    /// The number of variables this trigger defines (C's `n_vars`).
    pub fn n_vars(&self) -> usize {
        self.n_vars
    }

    /// The name of variable `i` (C's `var.name`; `i` is also C's
    /// `var.idx`, its slot in `tracing_map_elt.vars[]`).
    pub fn var_name(&self, i: usize) -> Option<&'a str> {
        self.var_names.get(..self.n_vars)?.get(i).copied()
    }

    /// The variable `name` of this trigger as another trigger's reference
    /// sees it (C's `find_var_field()` and what `init_var_ref()` copies),
    /// for the shell's [`VarLookup`]: `hist` is the identity the shell
    /// gives this histogram, `system` and `event` its event's names.
    pub fn var_target<'s>(
        &'s self,
        name: &str,
        hist: u64,
        system: &'s str,
        event: &'s str,
    ) -> Option<VarTarget<'s>> {
        let i = self
            .var_names
            .get(..self.n_vars)?
            .iter()
            .position(|&n| n == name)?;
        let id = *self.var_ids().get(i)?;
        let f = self.node_ref(id)?;
        Some(VarTarget {
            hist,
            var_idx: i,
            size: f.size,
            signed: f.signed,
            type_name: self.type_name(id),
            flags: f.flags,
            constant: f.constant(),
            copy: self.var_copy(i).is_some(),
            system,
            event,
        })
    }

    /// The number of references to other triggers' variables (C's
    /// `n_var_refs`): when not 0, events go through
    /// [`Histogram::update_with_refs`](super::histogram::Histogram::update_with_refs).
    pub fn n_var_refs(&self) -> usize {
        self.refs.refs().len()
    }

    /// Reference `i` (C's `var_refs[i]`).
    pub fn var_ref(&self, i: usize) -> Option<RefInfo> {
        self.refs.get(i).map(|r| RefInfo {
            slot: usize::from(r.slot),
            var_idx: usize::from(r.var_idx),
            read_once: r.read_once,
            own: r.slot == OWN_SLOT,
            copy: r.copy,
        })
    }

    /// The identities of the histograms the references name, by slot (as
    /// [`VarLookup`] gave them): the shell keeps one handle on each while
    /// this trigger lives, and passes them in this order to the event
    /// path.
    pub fn ref_hists(&self) -> &[u64] {
        self.refs.hists()
    }

    /// The value variable `i` takes for this record (what
    /// `hist_trigger_elt_update()` sets with `tracing_map_set_var()`); 0
    /// for no such variable.  Never panics, allocates or locks.
    pub fn var_value(&self, i: usize, rec: &[u8], ctx: &dyn EventContext) -> u64 {
        self.var_value_refs(i, rec, ctx, &[])
    }

    /// [`var_value`](Self::var_value) with the values resolved for the
    /// references (`var_ref_vals[]`, by reference index; missing ones
    /// read as 0).
    #[inline]
    pub fn var_value_refs(
        &self,
        i: usize,
        rec: &[u8],
        ctx: &dyn EventContext,
        ref_vals: &[u64],
    ) -> u64 {
        self.value_of(self.map_var_node(i).as_ref(), rec, ctx, ref_vals)
    }

    /// The variables of each entry: this trigger's own
    /// ([`n_vars`](Self::n_vars)), its field variables, its save
    /// variables and its tracking variables.  The per-variable accessors
    /// below take indices up to this.
    pub fn n_map_vars(&self) -> usize {
        self.n_event_vars() + self.n_save_vars + self.n_track_vars
    }

    /// The variables every event sets: this trigger's own and its field
    /// variables, the first of the map's.
    pub fn n_event_vars(&self) -> usize {
        self.n_vars + self.n_field_vars
    }

    /// How many variables keep a copy in each entry (C's `n_var_str`).
    pub fn n_var_copies(&self) -> usize {
        (0..self.n_map_vars())
            .filter(|&i| self.var_copy(i).is_some())
            .count()
    }

    /// How many of the variables every event sets keep a copy: the
    /// copies of the save variables come after theirs.
    pub fn n_event_var_copies(&self) -> usize {
        (0..self.n_event_vars())
            .filter(|&i| self.var_copy(i).is_some())
            .count()
    }

    /// What variable `i` keeps a copy of in each entry, C's variables with
    /// a `var_str_idx`; `None` for a number (or an alias, which has its
    /// target's value).
    pub fn var_copy(&self, i: usize) -> Option<VarCopy> {
        let f = self.node_ref(self.map_var_node(i)?)?;
        if f.flags & FL_ALIAS != 0 {
            None
        } else if f.flags & FL_EXECNAME != 0 {
            Some(VarCopy::Execname)
        } else if f.flags & FL_COMM != 0 {
            Some(VarCopy::Comm)
        } else if f.flags & FL_STRING != 0 {
            Some(VarCopy::String)
        } else if f.flags & FL_STACKTRACE != 0 {
            Some(VarCopy::Stack)
        } else {
            None
        }
    }

    /// The string a [`VarCopy::String`] variable `i` copies from `rec`:
    /// the record from the string's start, and the most bytes C's
    /// `strscpy()` takes, the NUL included (`min(size, STR_VAR_LEN_MAX)`).
    /// Empty for any other variable, or an offset past the record.
    pub fn var_string<'r>(&self, i: usize, rec: &'r [u8]) -> (&'r [u8], usize) {
        let Some(f) = self.map_var_node(i).and_then(|id| self.node_ref(id)) else {
            return (&[], 0);
        };
        let start = match f.fetch {
            Fetch::String { at } => at as usize,
            Fetch::DynString { at } => (rec_u32(rec, at as usize) & 0xffff) as usize,
            Fetch::RelDynString { at } => {
                let loc = (rec_u32(rec, at as usize) & 0xffff) as usize;
                at as usize + 4 + loc
            }
            _ => return (&[], 0),
        };
        let size = (f.size as usize).min(vars::STR_VAR_LEN_MAX);
        (rec.get(start..).unwrap_or(&[]), size)
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
        // A word at a time: keys are a few words, and a call to memset()
        // costs more than the stores.
        let mut words = key.chunks_exact_mut(8);
        for word in words.by_ref() {
            word.copy_from_slice(&[0; 8]);
        }
        words.into_remainder().fill(0);
        for &id in self.key_ids() {
            let Some(f) = self.node_ref(id) else {
                continue;
            };
            let start = usize::from(f.offset).min(key.len());
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
            } else if f.fetch == Fetch::Comm {
                // add_to_key() of 6.16: strlen(), at most the slot less one.
                let comm = ctx.comm();
                let n = slot.len().saturating_sub(1);
                strncpy_from(slot, &comm, 0, n);
            } else if f.flags & FL_STRING != 0 {
                let Some(key_str) = key_str(f) else { continue };
                let (src, size) = key_str.locate(rec);
                strncpy_from(slot, rec, src, size);
            } else {
                // A reference in a key reads 0 (C's hist_field_var_ref()
                // without an entry), but keys never hold one.
                let value = self.field_value(f, id, rec, ctx, &[]).to_ne_bytes();
                match <&mut [u8; 8]>::try_from(&mut *slot) {
                    Ok(word) => *word = value,
                    Err(_) => put(slot, &value),
                }
            }
        }
    }

    /// The value added to sum `i` (0 = hitcount, always 1) for this record.
    pub fn sum_value(&self, i: usize, rec: &[u8], ctx: &dyn EventContext) -> u64 {
        self.sum_value_refs(i, rec, ctx, &[])
    }

    /// [`sum_value`](Self::sum_value) with the values resolved for the
    /// references (see [`var_value_refs`](Self::var_value_refs)).
    #[inline]
    pub fn sum_value_refs(
        &self,
        i: usize,
        rec: &[u8],
        ctx: &dyn EventContext,
        ref_vals: &[u64],
    ) -> u64 {
        self.value_of(self.val_ids().get(i), rec, ctx, ref_vals)
    }

    /// The value of hist field `id` for this record; 0 for none.
    #[inline]
    fn value_of(
        &self,
        id: Option<&u8>,
        rec: &[u8],
        ctx: &dyn EventContext,
        ref_vals: &[u64],
    ) -> u64 {
        let Some(&id) = id else {
            return 0;
        };
        match self.node_ref(id) {
            Some(f) => self.field_value(f, id, rec, ctx, ref_vals),
            None => 0,
        }
    }

    /// The value of hist field `f` (number `id`): the common kinds
    /// straight away, the others through [`Self::eval`].
    #[inline]
    fn field_value(
        &self,
        f: &HistField<'a>,
        id: u8,
        rec: &[u8],
        ctx: &dyn EventContext,
        ref_vals: &[u64],
    ) -> u64 {
        match f.fetch {
            Fetch::Counter => 1,
            Fetch::Num { at, size, signed } => rec_num(rec, at, size, signed),
            _ => self.eval(id, rec, ctx, ref_vals, EVAL_DEPTH_MAX),
        }
    }

    /// The compiled event path ([`Program`]) of this trigger, if it has
    /// nothing to do per event beyond its keys and sums (no variables,
    /// references, actions or saved comm) and they have one of the shapes
    /// a program covers; `None` sends its events down the general path.
    /// Its sums' statistics ([`Self::slot_op`]) are compiled with them.
    pub fn program(&self) -> Option<Program> {
        if self.n_event_vars() != 0
            || self.n_var_refs() != 0
            || self.n_actions() != 0
            || self.needs_comm()
        {
            return None;
        }
        let keys = self.key_slots().map(|slot| {
            let (id, offset, size) = slot?;
            Some((self.key_load(id)?, offset, size))
        });
        let sums =
            (self.sum_ids().iter().enumerate()).map(|(i, &id)| (self.load(id), self.slot_op(i)));
        Program::compile(self.key_size(), keys, sums, self.n_sums())
    }

    /// How the compiled program reads hist field `id`
    /// ([`super::program`]): a number of the record, its `.log2` or its
    /// `.buckets`, or hitcount; `None` for anything else.
    fn load(&self, id: u8) -> Option<Load> {
        let f = self.node_ref(id)?;
        let num = |id: Option<u8>| match self.node_ref(id?)?.fetch {
            Fetch::Num { at, size, signed } => Some(Num { at, size, signed }),
            _ => None,
        };
        // Operands come before the fields that use them (see `eval()`).
        let operand = f.operand(0).filter(|&op| op < id);
        match f.fetch {
            Fetch::Counter => Some(Load::One),
            Fetch::Num { .. } => num(Some(id)).map(Load::Num),
            Fetch::Log2 => num(operand).map(Load::Log2),
            Fetch::Bucket => num(operand).map(|n| match f.buckets() {
                0 => Load::Num(n),
                b => Load::Bucket(n, b),
            }),
            _ => None,
        }
    }

    /// How the compiled program builds key `id`: a number as [`load`]
    /// gives it, or a string.
    ///
    /// [`load`]: Self::load
    fn key_load(&self, id: u8) -> Option<KeyLoad> {
        let f = self.node_ref(id)?;
        if f.flags & FL_STACKTRACE != 0 {
            return None;
        }
        match key_str(f) {
            Some(s) => Some(KeyLoad::Str(s)),
            None if f.flags & FL_STRING != 0 => None,
            None => self.load(id).map(KeyLoad::Word),
        }
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

    /// The values to print after the keys: (sum index, name, display), hitcount first unless nohitcount.
    ///
    /// As in `hist_trigger_entry_print()`, C puts one more space before
    /// each value after hitcount than [`super::output::write_val`] writes,
    /// and leaves out expressions. A statistic is printed whatever its
    /// value is, an expression too, as its value's name and its modifier
    /// (`lat.max`), signed if the value is.
    pub fn printed_vals(&self) -> impl Iterator<Item = (usize, ValName<'_, 'a>, ValDisplay)> + '_ {
        let no_hitcount = self.spec.no_hitcount();
        self.val_ids()
            .iter()
            .enumerate()
            .filter(move |&(i, &id)| {
                let flags = self.node(id).flags;
                if i == 0 {
                    !no_hitcount
                } else {
                    flags & (FL_VAR | FL_EXPR) == 0 || self.val_stat(i).is_some()
                }
            })
            .map(move |(i, &id)| {
                let f = self.node(id);
                let display = match (i, self.val_stat(i)) {
                    (0, _) => ValDisplay::Plain,
                    (_, None) => val_display(f),
                    (_, Some(_)) if f.flags & FL_HEX != 0 => ValDisplay::Hex,
                    (_, Some(_)) if f.signed => ValDisplay::Signed,
                    (_, Some(_)) => ValDisplay::Plain,
                };
                (i, ValName { hd: self, i }, display)
            })
    }

    /// rhist's lines for the sketch `j` of a `.quantiles` value: what
    /// an entry's sketch takes, and the pool the map's share.
    fn debug_sketch(&self, out: &mut dyn Write, j: usize, pool: PoolParams) -> fmt::Result {
        let (index, page) = (SKETCH_WORDS * 8, PAGE_WORDS * 8);
        writeln!(out, "      sketch: {j} of {}", self.n_percentiles())?;
        writeln!(
            out,
            "      sketch memory per entry: {index} bytes of index, and {page} bytes per page it takes"
        )?;
        let bytes = pool.storage_bytes().unwrap_or(0);
        writeln!(
            out,
            "      sketch pool: {} sketches, {} pages, {bytes} bytes",
            pool.n_sketches, pool.n_pages
        )
    }

    /// [`ValName`] of value `i`.
    fn write_val_name(&self, out: &mut dyn Write, i: usize) -> fmt::Result {
        let Some(&id) = self.val_ids().get(i).filter(|_| i > 0) else {
            return out.write_str("hitcount");
        };
        match self.val_stat(i) {
            Some(stat) => {
                self.write_name(out, id)?;
                write!(out, ".{}", stat.name())
            }
            None => out.write_str(self.name_str(id, 0).unwrap_or("")),
        }
    }

    /// Whether `text` names statistic `i`, as it prints ([`ValName`],
    /// `cpu.max`) or as the trigger info writes it
    /// ([`write_stat_field`](Self::write_stat_field), `common_cpu.max`),
    /// alone or followed by a `.` and more: what follows, if so.
    fn stat_name_prefix<'t>(&self, i: usize, text: &'t str) -> Option<&'t str> {
        self.val_stat(i)?;
        after_prefix(text, |out| self.write_val_name(out, i))
            .or_else(|| after_prefix(text, |out| self.write_stat_field(out, i)))
    }

    /// When value `i` is a `.quantiles` one and `text` names one of its
    /// quantiles (`lat.p99`, `lat.p99.descending`): which, and what
    /// follows it (`""`, `"descending"`).
    fn quantile_sort_name<'t>(&self, i: usize, text: &'t str) -> Option<(usize, &'t str)> {
        if self.val_stat(i) != Some(Statistic::Percentiles) {
            return None;
        }
        let rest = after_prefix(text, |out| self.write_val_stem(out, i))?;
        let (label, order) = rest.split_once('.').unwrap_or((rest, ""));
        let rank = super::sketch::PERCENTILE_NAMES
            .iter()
            .position(|n| *n == label)?;
        Some((rank, order))
    }

    /// Value `i` as the trigger info writes it: `hist_field_print()`, and
    /// its statistic's modifier (`b.hex.max`, `common_cpu.min`).
    fn write_stat_field(&self, out: &mut dyn Write, i: usize) -> fmt::Result {
        let Some(&id) = self.val_ids().get(i) else {
            return Ok(());
        };
        self.print_field(out, id, None)?;
        match self.val_stat(i) {
            Some(stat) => write!(out, ".{}", stat.name()),
            None => Ok(()),
        }
    }

    /// The sort keys, for the map: at least one (hitcount ascending by default).
    pub fn sort_keys(&self) -> &[SortKey] {
        self.sort_keys.get(..self.n_sort_keys).unwrap_or(&[])
    }

    /// Whether this and `other` are the same histogram, as C's
    /// `hist_trigger_match()` decides it (the filter and the named
    /// trigger checks are the caller's): the same fields in the same
    /// order with the same flags, event field (`compatible_field()`:
    /// name, type, size and sign), place and size, the same variable
    /// names and the same sort keys. As in C, the operands of an
    /// expression are not compared, nor `size=` or `clock=`.
    pub fn matches(&self, other: &HistData<'_>) -> bool {
        fn compatible_field(a: Option<&EventField<'_>>, b: Option<&EventField<'_>>) -> bool {
            match (a, b) {
                (None, None) => true,
                (Some(a), Some(b)) => {
                    a.name == b.name
                        && a.type_name == b.type_name
                        && a.size == b.size
                        && a.signed == b.signed
                }
                _ => false,
            }
        }
        if self.n_vals != other.n_vals
            || self.n_vars != other.n_vars
            || self.n_keys != other.n_keys
            || self.sort_keys() != other.sort_keys()
            || self.val_stats() != other.val_stats()
            || self.spec.grow() != other.spec.grow()
        {
            return false;
        }
        let same_fields = self.field_ids().zip(other.field_ids()).all(|(a, b)| {
            let (f, g) = (self.node(a), other.node(b));
            f.flags == g.flags
                && compatible_field(f.field, g.field)
                && f.offset == g.offset
                && f.size == g.size
                && f.signed == g.signed
        });
        let n = self.n_vars;
        same_fields
            && self.var_names.get(..n) == other.var_names.get(..n)
            && self.actions_match(other)
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

    /// The trigger info line without its filter/state suffix: `hist:keys=...:vals=...[:var=...]:sort=...:size=N[:clock=..][:nohitcount]`
    /// with `prefix` replacing `hist:` (rhist passes "rhist:"), and `name:` after the prefix for named triggers, exactly as event_hist_trigger_print().
    pub fn write_info(&self, out: &mut dyn Write, prefix: &str) -> fmt::Result {
        out.write_str(prefix)?;
        if let Some(name) = self.spec.name_attr() {
            self.spec.write_as_c(out, name)?;
            out.write_char(':')?;
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
                self.print_field(out, id, None)?;
            }
        }
        out.write_str(":vals=")?;
        let mut show_val = false;
        for i in 0..self.val_ids().len() {
            if i == 0 {
                if self.spec.no_hitcount() {
                    continue;
                }
                out.write_str("hitcount")?;
            } else {
                if show_val {
                    out.write_char(',')?;
                }
                self.write_stat_field(out, i)?;
            }
            show_val = true;
        }
        for (i, (&id, &name)) in self.var_ids().iter().zip(self.var_names.iter()).enumerate() {
            out.write_char(if i == 0 { ':' } else { ',' })?;
            self.print_field(out, id, Some(name))?;
        }
        out.write_str(":sort=")?;
        for (i, (key, field)) in self.sort_keys().iter().zip(self.sort_fields).enumerate() {
            if i > 0 {
                out.write_char(',')?;
            }
            match (field, key.field) {
                (None, _) => out.write_str("hitcount")?,
                (_, SortField::Quantile { val, rank }) => {
                    self.write_val_stem(out, val)?;
                    let label = super::sketch::PERCENTILE_NAMES.get(rank).unwrap_or(&"p50");
                    write!(out, ".{label}")?;
                }
                // A statistic as its value is written, which sort= takes.
                (_, SortField::Sum(j)) if self.val_stat(j).is_some() => {
                    self.write_stat_field(out, j)?
                }
                (Some(id), _) => self.print_field(out, id, None)?,
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
        if self.spec.grow() {
            out.write_str(":grow")?;
        }
        self.write_actions_info(out)
    }

    /// What the `hist_debug` file shows for this trigger after its
    /// header, exactly as `hist_trigger_debug_show()`: from
    /// `hist_data: <ptr>` (`hist_data_ptr` shows C's `%p`) to the
    /// actions, a referenced histogram shown as its identity in hex.
    ///
    /// C writes before it `"\n\n"` for every trigger but the event's
    /// first, then `"# event histogram\n#\n# trigger info: "`, the trigger
    /// info line with its suffix and newline, and `"#\n\n"`.
    pub fn write_debug(
        &self,
        out: &mut dyn Write,
        hist_data_ptr: &dyn fmt::Display,
    ) -> fmt::Result {
        self.write_debug_with(out, hist_data_ptr, &|out, hist| match hist {
            Some(hist) => write!(out, "{hist:#x}"),
            None => out.write_str("(null)"),
        })
    }

    /// [`write_debug`](Self::write_debug), then C's `variable reference
    /// fields:` (`var_refs[]`); `var_hist_data` writes C's `%p` of the
    /// histogram a reference names, given its identity
    /// ([`ref_hists`](Self::ref_hists)).
    pub fn write_debug_with(
        &self,
        out: &mut dyn Write,
        hist_data_ptr: &dyn fmt::Display,
        var_hist_data: HistPtr<'_>,
    ) -> fmt::Result {
        let n_vals = self.n_vals + self.n_vars;
        writeln!(out, "hist_data: {hist_data_ptr}\n")?;
        writeln!(out, "  n_vals: {n_vals}")?;
        writeln!(out, "  n_keys: {}", self.n_keys)?;
        writeln!(out, "  n_fields: {}", n_vals + self.n_keys)?;
        out.write_str("\n  val fields:\n\n")?;
        let vals = self.val_ids().iter().chain(self.var_ids());
        for (i, &id) in vals.enumerate() {
            if i == 0 {
                out.write_str("    hist_data->fields[0]:\n")?;
            } else {
                write!(out, "\n    hist_data->fields[{i}]:\n")?;
            }
            self.debug_field(out, id, var_hist_data)?;
            // rhist's own line, for its own modifiers.
            if let Some(stat) = self.val_stat(i) {
                writeln!(out, "      statistic: {}", stat.name())?;
            }
            if let (Some(j), Some(pool)) = (self.sketch_index(i), self.sketch_params()) {
                self.debug_sketch(out, j, pool)?;
            }
        }
        out.write_str("\n  key fields:\n")?;
        for (i, &id) in self.key_ids().iter().enumerate() {
            write!(out, "\n    hist_data->fields[{}]:\n", n_vals + i)?;
            self.debug_field(out, id, var_hist_data)?;
        }
        if !self.refs.refs().is_empty() {
            out.write_str("\n  variable reference fields:\n")?;
        }
        // A reference to this trigger's own variable names this
        // histogram.
        let var_hist_data = |out: &mut dyn Write, hist: Option<u64>| match hist {
            Some(OWN_HIST) => write!(out, "{hist_data_ptr}"),
            other => var_hist_data(out, other),
        };
        for (i, r) in self.refs.refs().iter().enumerate() {
            write!(out, "\n    hist_data->var_refs[{i}]:\n")?;
            self.debug_field(out, r.node, &var_hist_data)?;
        }
        self.write_actions_debug(out, &var_hist_data)
    }

    // --- internals --------------------------------------------------------

    fn node(&self, id: u8) -> HistField<'a> {
        self.node_ref(id).copied().unwrap_or_default()
    }

    #[inline]
    fn node_ref(&self, id: u8) -> Option<&HistField<'a>> {
        self.nodes
            .get(..self.n_nodes)
            .and_then(|nodes| nodes.get(usize::from(id)))
    }

    fn val_ids(&self) -> &[u8] {
        self.vals.get(..self.n_vals).unwrap_or(&[])
    }

    fn var_ids(&self) -> &[u8] {
        self.vars.get(..self.n_vars).unwrap_or(&[])
    }

    /// The variables and then the field variables.
    fn map_var_ids(&self) -> &[u8] {
        self.vars.get(..self.n_event_vars()).unwrap_or(&[])
    }

    /// The hist field map variable `i` takes its value from: a variable's,
    /// a field variable's or a save variable's; `None` for a tracking
    /// variable, which the actions set.
    fn map_var_node(&self, i: usize) -> Option<u8> {
        match i.checked_sub(self.n_event_vars()) {
            None => self.map_var_ids().get(i).copied(),
            Some(k) => self.save_vars.get(..self.n_save_vars)?.get(k).copied(),
        }
    }

    fn key_ids(&self) -> &[u8] {
        self.keys.get(..self.n_keys).unwrap_or(&[])
    }

    /// C's `fields[]`: the values, the variables, the keys.
    fn field_ids(&self) -> impl Iterator<Item = u8> + '_ {
        self.val_ids()
            .iter()
            .chain(self.var_ids())
            .chain(self.key_ids())
            .copied()
    }

    /// `hist_fn_call()`: the value of hist field `id` for this record,
    /// `ref_vals` holding the values resolved for the references.
    fn eval(
        &self,
        id: u8,
        rec: &[u8],
        ctx: &dyn EventContext,
        ref_vals: &[u64],
        depth: u32,
    ) -> u64 {
        let Some(depth) = depth.checked_sub(1) else {
            return 0;
        };
        let f = self.node(id);
        // Operands are made before the fields that use them.
        let operand = |i: usize| match f.operand(i) {
            Some(op) if op < id => self.eval(op, rec, ctx, ref_vals, depth),
            _ => 0,
        };
        match f.fetch {
            Fetch::Counter => 1,
            Fetch::Const => f.constant(),
            Fetch::Log2 => order_base_2(operand(0)),
            Fetch::Bucket => {
                let val = operand(0);
                match f.buckets() {
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
            // Not a number (C's is the address of current->comm): keys
            // and copies read the name itself.
            Fetch::Comm => 0,
            Fetch::Num { at, size, signed } => rec_num(rec, at, size, signed),
            op @ (Fetch::UMinus
            | Fetch::Minus
            | Fetch::Plus
            | Fetch::Div
            | Fetch::Mult
            | Fetch::DivPower2 { .. }
            | Fetch::DivNotPower2
            | Fetch::DivMultShift { .. }) => {
                // A constant divisor is the operand's `constant` (for a
                // reference, the variable's, copied by parse_expr()).
                let divisor = f.operand(1).map_or(0, |op| self.node(op).param);
                apply_op(op, operand(0), || operand(1), divisor)
            }
            Fetch::VarRef { idx } => ref_vals.get(usize::from(idx)).copied().unwrap_or(0),
            // Addresses in the record, as C computes them: every trigger on
            // an event sees the same record, so sums of them come out as
            // C's.
            Fetch::String { at } => address(rec, at as usize),
            Fetch::DynString { at } | Fetch::Stack { at } => {
                address(rec, (rec_u32(rec, at as usize) & 0xffff) as usize)
            }
            Fetch::RelDynString { at } => {
                let loc = (rec_u32(rec, at as usize) & 0xffff) as usize;
                address(rec, (at as usize).wrapping_add(4).wrapping_add(loc))
            }
            Fetch::PString => match f.field {
                Some(field) => rec_u64(rec, field.offset as usize),
                None => 0,
            },
            Fetch::Nop => 0,
        }
    }

    /// `hist_field_name()` when it is text: `None` for an expression,
    /// whose name [`Self::write_name`] writes.
    fn name_str(&self, id: u8, level: u32) -> Option<&'a str> {
        if level > 1 {
            return Some("");
        }
        let f = self.node(id);
        Some(if let Some(field) = f.field {
            field.name
        } else if f.flags & (FL_LOG2 | FL_ALIAS | FL_BUCKET) != 0 {
            match f.operand(0) {
                Some(op) if op < id => return self.name_str(op, level + 1),
                _ => "",
            }
        } else if f.flags & FL_CPU != 0 {
            "common_cpu"
        } else if f.flags & FL_COMM != 0 {
            "common_comm"
        } else if f.flags & FL_VAR_REF != 0 {
            // `system.event.$name` as written, or the variable's name.
            match self.ref_of(&f) {
                Some(r) if r.system().is_some() => r.full,
                Some(r) => r.name(),
                None => "",
            }
        } else if f.flags & FL_EXPR != 0 {
            return None;
        } else if f.flags & FL_TIMESTAMP != 0 {
            "common_timestamp"
        } else if f.flags & FL_STACKTRACE != 0 {
            "common_stacktrace"
        } else if f.flags & FL_HITCOUNT != 0 {
            "hitcount"
        } else {
            ""
        })
    }

    /// The reference a `VAR_REF` (or alias) field reads.
    fn ref_of(&self, f: &HistField<'a>) -> Option<&super::var_ref::VarRef<'a>> {
        match f.fetch {
            Fetch::VarRef { idx } => self.refs.get(usize::from(idx)),
            _ => None,
        }
    }

    /// Whether a reference (or alias) field was written with a system
    /// (C's `system`), which it is printed with instead of `$`.
    fn has_system(&self, f: &HistField<'a>) -> bool {
        self.ref_of(f).is_some_and(|r| r.system().is_some())
    }

    /// `hist_field_name()`.
    fn write_name(&self, out: &mut dyn Write, id: u8) -> fmt::Result {
        match self.name_str(id, 0) {
            Some(name) => out.write_str(name),
            None => self.write_expr_str(out, id, 0),
        }
    }

    /// `expr_str()`: the name of an expression (what C stores in its
    /// `name` when it creates it); [`Builder::check_expr_str`] makes sure
    /// C would not fail here.
    fn write_expr_str(&self, out: &mut dyn Write, id: u8, level: u32) -> fmt::Result {
        let f = self.node(id);
        let op0 = match f.operand(0) {
            Some(op) if op < id && level <= 1 => op,
            _ => return self.write_expr_field_str(out, id),
        };
        if f.fetch == Fetch::UMinus {
            out.write_str("-(")?;
            self.write_expr_str(out, op0, level + 1)?;
            return out.write_char(')');
        }
        self.write_expr_field_str(out, op0)?;
        out.write_char(f.fetch.operator().unwrap_or('?'))?;
        match f.operand(1) {
            Some(op1) if op1 < id => self.write_expr_field_str(out, op1),
            _ => Ok(()),
        }
    }

    /// `expr_field_str()`: an operand in an expression's name.
    fn write_expr_field_str(&self, out: &mut dyn Write, id: u8) -> fmt::Result {
        let f = self.node(id);
        if f.flags & FL_VAR_REF != 0 {
            if !self.has_system(&f) {
                out.write_char('$')?;
            }
        } else if f.flags & FL_CONST != 0 {
            write!(out, "{}", f.constant())?;
        }
        self.write_name(out, id)?;
        if f.flags & FL_VAR_REF == 0 {
            if let Some(flags) = field_flags_str(f.flags) {
                write!(out, ".{flags}")?;
            }
        }
        Ok(())
    }

    /// `hist_field_print()`, with the variable's name.
    fn print_field(&self, out: &mut dyn Write, id: u8, var_name: Option<&str>) -> fmt::Result {
        let f = self.node(id);
        if let Some(name) = var_name {
            self.spec.write_as_c(out, name)?;
            out.write_char('=')?;
        }
        if f.flags & FL_CPU != 0 {
            out.write_str("common_cpu")?;
        } else if f.flags & FL_COMM != 0 {
            out.write_str("common_comm")?;
        } else if f.flags & FL_CONST != 0 {
            write!(out, "{}", f.constant())?;
        } else {
            if f.flags & (FL_VAR_REF | FL_ALIAS) != 0 && !self.has_system(&f) {
                out.write_char('$')?;
            }
            self.write_name(out, id)?;
        }
        if f.flags & (FL_VAR_REF | FL_EXPR | FL_STACKTRACE) == 0 {
            if let Some(flags) = field_flags_str(f.flags) {
                write!(out, ".{flags}")?;
            }
        }
        if f.buckets() != 0 {
            // C prints the unsigned long with %ld.
            write!(out, "={}", f.buckets() as i64)?;
        }
        Ok(())
    }

    /// Whether `hist_field_name()` of `id` is `name`.
    fn name_is(&self, id: u8, name: &str) -> bool {
        let mut m = Prefix {
            rest: name,
            ok: true,
        };
        self.write_name(&mut m, id).is_ok() && m.ok && m.rest.is_empty()
    }

    /// C's `type` string of a field.
    fn type_name(&self, id: u8) -> &str {
        let mut id = id;
        // Each step goes to a lower index.
        for _ in 0..NODES_MAX {
            let f = self.node(id);
            match f.ty {
                TypeName::Field => return f.field.map_or("(null)", |field| field.type_name),
                TypeName::U64 => return "u64",
                TypeName::UnsignedLongArray => return "unsigned long[]",
                TypeName::UnsignedInt => return "unsigned int",
                TypeName::CharArray => return "char[]",
                TypeName::Comm => return "char[16]",
                TypeName::Ref(idx) => {
                    return self
                        .refs
                        .get(usize::from(idx))
                        .map_or("", |r| r.ty.as_str())
                }
                TypeName::Operand => match f.operand(0) {
                    Some(op) if op < id => id = op,
                    _ => break,
                },
            }
        }
        "(null)"
    }

    /// `hist_field_debug_show()` of a field (with C's flags, which never
    /// fail its check); `var_hist_data` writes C's `%p` of a referenced
    /// histogram.
    fn debug_field(&self, out: &mut dyn Write, id: u8, var_hist_data: HistPtr<'_>) -> fmt::Result {
        let f = self.node(id);
        out.write_str("      flags:\n")?;
        out.write_str(if f.flags & FL_KEY != 0 {
            "        HIST_FIELD_FL_KEY\n"
        } else if f.flags & FL_HITCOUNT != 0 {
            "        VAL: HIST_FIELD_FL_HITCOUNT\n"
        } else if f.flags & FL_VAR != 0 {
            "        HIST_FIELD_FL_VAR\n"
        } else if f.flags & FL_VAR_REF != 0 {
            "        HIST_FIELD_FL_VAR_REF\n"
        } else {
            "        VAL: normal u64 value\n"
        })?;
        if f.flags & FL_ALIAS != 0 {
            out.write_str("        HIST_FIELD_FL_ALIAS\n")?;
        } else if f.flags & FL_CONST != 0 {
            out.write_str("        HIST_FIELD_FL_CONST\n")?;
        }
        if let Some(field) = f.field {
            writeln!(out, "      ftrace_event_field name: {}", field.name)?;
        }
        if f.flags & FL_VAR != 0 {
            let idx = self.var_ids().iter().position(|&v| v == id).unwrap_or(0);
            out.write_str("      var.name: ")?;
            self.spec
                .write_as_c(out, self.var_name(idx).unwrap_or(""))?;
            out.write_char('\n')?;
            writeln!(out, "      var.idx (into tracing_map_elt.vars[]): {idx}")?;
        }
        if f.flags & FL_CONST != 0 {
            writeln!(out, "      constant: {}", f.constant())?;
        }
        let var_ref_idx = match f.fetch {
            Fetch::VarRef { idx } => idx,
            _ => 0,
        };
        if f.flags & FL_ALIAS != 0 {
            writeln!(
                out,
                "      var_ref_idx (into hist_data->var_refs[]): {var_ref_idx}"
            )?;
        }
        if f.flags & FL_VAR_REF != 0 {
            if let Some(r) = self.ref_of(&f) {
                writeln!(out, "      name: {}{}", r.name_prefix(), r.name())?;
                let var_idx = match r.slot {
                    OWN_SLOT => self.c_var_idx(usize::from(r.var_idx)),
                    _ => usize::from(r.var_idx),
                };
                writeln!(
                    out,
                    "      var.idx (into tracing_map_elt.vars[]): {var_idx}"
                )?;
                out.write_str("      var.hist_data: ")?;
                let hist = match r.slot {
                    OWN_SLOT => Some(OWN_HIST),
                    slot => self.refs.hists().get(usize::from(slot)).copied(),
                };
                var_hist_data(out, hist)?;
                out.write_char('\n')?;
                writeln!(
                    out,
                    "      var_ref_idx (into hist_data->var_refs[]): {var_ref_idx}"
                )?;
                if let Some((system, event)) = r.system() {
                    writeln!(out, "      system: {system}")?;
                    writeln!(out, "      event_name: {event}")?;
                }
            }
        }
        writeln!(out, "      type: {}", self.type_name(id))?;
        writeln!(out, "      size: {}", f.size)?;
        writeln!(out, "      is_signed: {}", u32::from(f.signed))
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
            // 6.16 compares none: rhist sorts the names.
            _ if f.flags & FL_COMM != 0 => (KeyCmp::String, f.size),
            None => num(f.size, f.signed),
            Some(_) if f.flags & FL_CPU != 0 => num(f.size, f.signed),
            Some(field) if is_string_field(field) => (KeyCmp::String, f.size),
            Some(field) => num(field.size, field.signed),
        };
        SortField::Key {
            offset: u32::from(f.offset),
            size,
            cmp,
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
