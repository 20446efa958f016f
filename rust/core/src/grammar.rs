// SPDX-License-Identifier: GPL-2.0

//! The hist trigger command grammar of Linux 6.12
//! (`kernel/trace/trace_events_hist.c`), without the event.
//!
//! # What C does, and in which order
//!
//! `event_hist_trigger_parse()` gets `param_and_filter`, the text after
//! `hist:` (here: `text`), and:
//!
//! 1. fails with `-EINVAL` if there is none;
//! 2. splits off the filter: the first `if` that has a blank (space or tab)
//!    before and after it starts the filter (an `if` at the very start, or
//!    one too close to the end, is `-EINVAL`); the trigger part and the
//!    filter are then stripped of white space;
//! 3. rewrites every `.sym-offset` of the trigger part to `.symXoffset`, so
//!    that its `-` is not taken for a minus;
//! 4. `parse_hist_trigger_attrs()`: splits the trigger part on every `:`
//!    and handles the pieces in order: `keys=`/`key=`, `vals=`/`val=`/
//!    `values=`, `sort=`, `name=`, `clock=`, `size=` (the last one of a kind
//!    wins), other `x=...` pieces are variable assignments, `nohitcount`/
//!    `NOHC`, `pause`, `cont`/`continue`, `clear`, and pieces starting with
//!    `onmatch(`, `onmax(` or `onchange(` are handlers; anything else fails;
//!    a missing `keys=` fails at the end;
//! 5. `parse_actions()`: parses each handler; `onmatch()` looks its event up
//!    between the target and the action, which needs the tracing instance;
//! 6. `parse_var_defs()`, then the values, variables and keys
//!    (`create_val_fields()`, `create_var_fields()`, `create_key_fields()`),
//!    whose expressions are parsed and resolved against the event at the
//!    same time, then the sort keys (`create_sort_keys()`), which are matched
//!    against the keys and values;
//! 7. later steps (map creation, filter, named triggers, registration,
//!    `create_actions()`) only check things against the event and the other
//!    triggers.
//!
//! # What this module does
//!
//! [`parse_trigger`] does steps 1 to 4 and the part of steps 5 and 6 that
//! comes before C's first look at the event (the handlers up to the first
//! `onmatch()`'s event look-up, and the variable definitions if there is no
//! `onmatch()`).  Every error it returns is therefore the first error C
//! reports, whatever the event.
//!
//! Everything after that is mixed with look-ups in C, so that a syntax error
//! in the third key is only reported if the values and variables resolve.
//! For those steps [`TriggerSpec`] has one *stage parser* per C function,
//! to be called by the build step at the moment C calls it:
//! [`TriggerSpec::actions`] (`onmatch_parse()`/`track_data_parse()`),
//! [`TriggerSpec::var_defs`] (`parse_var_defs()`), [`TriggerSpec::vals`],
//! [`TriggerSpec::keys`] (the loops of `create_val_fields()`/
//! `create_key_fields()`), [`TriggerSpec::parse_expr`] (`parse_expr()`, with
//! `parse_unary()`, `parse_atom()`, `parse_const()`),
//! [`TriggerSpec::parse_field`] (the modifier part of `parse_field()`) and
//! [`TriggerSpec::sort_keys`] (`create_sort_keys()`).  Each gives the syntax
//! error C would log at that point, in a tree or list that keeps what C
//! resolves before it.  [`TriggerSpec::check_syntax`] runs all of them in
//! C's order assuming every look-up succeeds.
//!
//! Field and variable names stay text; nothing here knows the event.
//!
//! # Errors found here (all `-EINVAL` unless noted)
//!
//! * silent `-EINVAL`: empty command, bad `if` placement, unknown piece,
//!   more than [`HIST_ACTIONS_MAX`] handlers, missing `keys=`, bad `size=`
//!   (`-ERANGE` if the number overflows), `onmax(`/`onchange(` without `)`,
//!   an operator without both operands, `-x` without `(`...`)`, more than
//!   [`TRACING_MAP_KEYS_MAX`] keys or too many values;
//! * `EMPTY_ASSIGNMENT`, `TOO_MANY_VARS` (assignment pieces and variables),
//!   `MALFORMED_ASSIGNMENT`;
//! * handlers: `NO_CLOSING_PAREN`, `SUBSYS_NOT_FOUND`, `ACTION_NOT_FOUND`,
//!   `TOO_MANY_PARAMS`, `INVALID_PARAM`, `ACTION_MISMATCH`;
//! * expressions: `TOO_MANY_SUBEXPR`, `UNARY_MINUS_SUBEXPR`,
//!   `EXPECT_NUMBER`, `BAD_FIELD_MODIFIER` (unknown modifier, `.execname`
//!   on another field than `common_pid`, bad `.buckets=`, `.percent` or
//!   `.graph` on a key or variable);
//! * sort keys: `EMPTY_SORT_FIELD`, `TOO_MANY_SORT_FIELDS`,
//!   `INVALID_SORT_MODIFIER`;
//! * values: `NEED_NOHC_VAL` (`-ENOENT`);
//! * only in [`TriggerSpec::check_syntax`], with its assumptions:
//!   `DIVISION_BY_ZERO` (`-EDOM`) for a literal zero divisor,
//!   `BAD_FIELD_MODIFIER` for modifiers C rejects on values and variables
//!   and for `.stacktrace` on `common_*` fields, `INVALID_REF_KEY`,
//!   `ONX_NOT_VAR`, `TOO_MANY_SAVE_ACTIONS` (`-EEXIST`).
//!
//! `PARAM_NOT_FOUND` and `NO_SAVE_PARAMS` are on grammar paths of C that
//! cannot be taken (`strsep()` there never returns NULL).
//!
//! # Errors left for the build step
//!
//! Everything that needs the event, its fields or the other triggers:
//! `INVALID_SUBSYS_EVENT`, `VAR_NOT_FOUND`, `VAR_NOT_UNIQUE`,
//! `FIELD_NOT_FOUND`, `DUPLICATE_VAR`, `INVALID_STR_OPERAND`,
//! `TIMESTAMP_MISMATCH`, `INVALID_SORT_FIELD`, `NAMED_MISMATCH`,
//! `TRIGGER_EEXIST`, `TRIGGER_ENOENT_CLEAR`, `SET_CLOCK_FAIL`, field
//! variables, synthetic events and onmax/onchange variables
//! (`TOO_MANY_FIELD_VARS`, `EVENT_FILE_NOT_FOUND`, `HIST_NOT_FOUND`,
//! `HIST_CREATE_FAIL`, `SYNTH_*`, `FIELD_VAR_*`, `VAR_CREATE_FIND_FAIL`,
//! `ONX_VAR_*`, `PARAM_NOT_FOUND`), the silent failures of key sizes,
//! filters and map creation; and, in general, the checks
//! [`TriggerSpec::check_syntax`] only predicts: `DIVISION_BY_ZERO`
//! (the divisor may be a variable holding a constant), `INVALID_REF_KEY`
//! and the value/variable `BAD_FIELD_MODIFIER` checks (they depend on what
//! `$var` and `cpu`/`stacktrace` resolve to), `.stacktrace` on a
//! non-stacktrace field, `INVALID_SORT_MODIFIER` of a sort key that names
//! a key or value (checked only once the name matched), `ONX_NOT_VAR` and
//! `TOO_MANY_SAVE_ACTIONS` (which come after registration).

//! # Caret positions
//!
//! C logs `errpos(str)`: the offset of the *first occurrence* of the
//! offending string in `last_cmd`, which is `hist:` followed by the whole
//! text (filter included, `.sym-offset` not rewritten), or 0 if it is not
//! found.  [`HistError::pos`] is that offset, in `prefix` + `text`
//! ([`parse_trigger`] uses `hist:`; [`parse_trigger_in`] takes another
//! prefix).  [`TriggerSpec::errpos`] computes it for the build step.
//!
//! # Limits and deviations
//!
//! Nothing allocates: the spec borrows from the text and uses fixed-size
//! arrays sized by C's limits.  C's `isspace()` also counts byte 0xa0 as
//! white space; here it is not stripped (it can't be, in UTF-8 text).  A
//! non-ASCII character right after the `-` of a unary minus gives a silent
//! `-EINVAL` here, where C goes on with half a character.

use core::fmt;
use core::ops::Deref;

use super::error::{errno, HistError, HistErrorKind};
use super::stats::Statistic;

mod actions;
mod check;
mod expr;
mod fields;

pub use actions::{ActionKind, ActionSpec, Handler, HandlerSpec};
pub use expr::{
    Atom, BinaryOp, Expr, FieldContext, FieldModifier, FieldSpec, Node, NodeId, SpecialField,
};
pub use fields::{KeyField, VarDef, VarDefs};
// Named by the host's users only, not the module's shell.
#[allow(unused_imports)]
pub use {
    actions::Params,
    fields::{KeyFields, SortKey, SortKeys, ValFields},
};

/// The prefix of C's `last_cmd`, which error positions count from.
pub const HIST_PREFIX: &str = "hist:";
/// Map size in bits when there is no `size=` (2048 entries).
pub const TRACING_MAP_BITS_DEFAULT: u32 = 11;
/// Smallest `size=` in bits (128 entries).
pub const TRACING_MAP_BITS_MIN: u32 = 7;
/// Largest `size=` in bits (131072 entries).
pub const TRACING_MAP_BITS_MAX: u32 = 17;
/// Most keys a trigger can have.
pub const TRACING_MAP_KEYS_MAX: usize = 3;
/// Most values a trigger can have, hitcount included.
pub const TRACING_MAP_VALS_MAX: usize = 3;
/// Most variables (and assignment pieces) a trigger can have.
pub const TRACING_MAP_VARS_MAX: usize = 16;
/// Most sort keys.
pub const TRACING_MAP_SORT_KEYS_MAX: usize = 2;
/// Most handlers (`onmatch`, `onmax`, `onchange`) a trigger can have.
pub const HIST_ACTIONS_MAX: usize = 8;
/// Most parameters of an action (`trace()`'s event name not counted).
pub const SYNTH_FIELDS_MAX: usize = 64;
/// Most operators in one expression (`"Too many subexpressions (3 max)"`).
pub const HIST_SUBEXPRS_MAX: u32 = 3;
/// Node capacity of an [`Expr`].  At most 7 nodes are ever made: three
/// operators and four operands, or fewer with an error node, because C
/// stops at the fourth operator and at the first error.
pub const EXPR_NODES_MAX: usize = 8;

/// Most values besides hitcount.
pub const VALS_MAX: usize = TRACING_MAP_VALS_MAX - 1;

/// Most values besides hitcount of a trigger built as rhist's extension
/// (more values than hist's, or statistics: `.min`, `.max`, `.avg`,
/// `.quantiles`, [`super::stats`]), sums and statistics in any mix.
pub const VAL_FIELDS_EXT_MAX: usize = 16;

/// Most keys of a trigger built as rhist's extension (their compound key
/// still at most `HIST_KEY_SIZE_MAX` bytes, as in hist).
pub const KEYS_EXT_MAX: usize = 8;

/// Most sort keys of a trigger built as rhist's extension.
pub const SORT_KEYS_EXT_MAX: usize = 4;

// ---------------------------------------------------------------------------
// A fixed-capacity vector.

/// A vector of at most `N` `Copy` items, filled only by the parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoundedVec<T: Copy + Default, const N: usize> {
    items: [T; N],
    len: usize,
}

impl<T: Copy + Default, const N: usize> BoundedVec<T, N> {
    fn new() -> Self {
        Self::filled(T::default())
    }

    /// An empty vector whose unused items are `fill`; usable in constants.
    const fn filled(fill: T) -> Self {
        BoundedVec {
            items: [fill; N],
            len: 0,
        }
    }

    /// Appends `item`, giving its index, or gives it back when full.
    fn push(&mut self, item: T) -> Result<usize, T> {
        match self.items.get_mut(self.len) {
            Some(slot) => {
                *slot = item;
                self.len += 1;
                Ok(self.len - 1)
            }
            None => Err(item),
        }
    }

    /// The items.
    pub fn as_slice(&self) -> &[T] {
        self.items.get(..self.len).unwrap_or(&[])
    }

    /// How many items there can be.
    #[cfg(not(MODULE))]
    pub const fn capacity(&self) -> usize {
        N
    }
}

impl<T: Copy + Default, const N: usize> Deref for BoundedVec<T, N> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

// ---------------------------------------------------------------------------
// C string helpers.

/// C's `isspace()` for ASCII.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// A blank as the filter split sees it.
fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// C's `strstrip()`/`strim()`.
fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// C's `strsep()` with one delimiter: the piece before it, and the rest
/// after it (`None` when there is no delimiter).
fn strsep(s: &str, delim: char) -> (&str, Option<&str>) {
    match s.split_once(delim) {
        Some((head, rest)) => (head, Some(rest)),
        None => (s, None),
    }
}

/// `kstrtoull(s, 0, &res)` (and `kstrtoul()` on 64-bit): an optional `+`,
/// `0x` for hex, a leading `0` for octal, digits, one optional newline.
pub fn kstrtoull(s: &str) -> Result<u64, i32> {
    let mut b = s.as_bytes();
    if let Some((b'+', rest)) = b.split_first() {
        b = rest;
    }
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let (base, mut i) = if at(0) == b'0' {
        if at(1).eq_ignore_ascii_case(&b'x') && at(2).is_ascii_hexdigit() {
            (16u64, 2)
        } else {
            (8, 0)
        }
    } else {
        (10, 0)
    };
    let (mut res, mut digits, mut overflow) = (0u64, 0usize, false);
    while let Some(val) = (at(i) as char).to_digit(16) {
        let val = u64::from(val);
        if val >= base {
            break;
        }
        if res & (!0u64 << 60) != 0 && res > (u64::MAX - val) / base {
            overflow = true;
        }
        res = res.wrapping_mul(base).wrapping_add(val);
        digits += 1;
        i += 1;
    }
    if overflow {
        return Err(errno::ERANGE);
    }
    if digits == 0 {
        return Err(errno::EINVAL);
    }
    if at(i) == b'\n' {
        i += 1;
    }
    if i < b.len() {
        return Err(errno::EINVAL);
    }
    Ok(res)
}

/// `parse_map_size()`: `size=` to map bits, `ilog2(roundup_pow_of_two())`.
fn parse_map_size(s: &str) -> Result<u32, HistError> {
    let size = kstrtoull(s).map_err(HistError::silent)?;
    // roundup_pow_of_two(0) and of anything above 2^63 come out as 1 on
    // x86-64 (the shift by 64 wraps), so they fail like any small size.
    let bits = match size {
        0 => 0,
        _ => u64::BITS - (size - 1).leading_zeros(),
    };
    if size > 1 << 63 || !(TRACING_MAP_BITS_MIN..=TRACING_MAP_BITS_MAX).contains(&bits) {
        return Err(HistError::silent(errno::EINVAL));
    }
    Ok(bits)
}

/// `is_var_ref()`: `$` and at least one more byte.
fn is_var_ref(s: &str) -> bool {
    s.len() >= 2 && s.starts_with('$')
}

// ---------------------------------------------------------------------------
// The command text, as C sees it.

/// The text with C's view of it: where the trigger part is (C rewrote
/// `.sym-offset` there) and what `last_cmd` (prefix + text) is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Source<'a> {
    prefix: &'a str,
    text: &'a str,
    param_start: usize,
    param_end: usize,
}

const SYM_OFFSET: &[u8] = b".sym-offset";
const SYM_OFFSET_DASH: usize = 4;

/// What `contains_operator()` finds: the root operator of an expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Operator {
    None,
    UnaryMinus,
    Binary(BinaryOp, usize),
}

impl<'a> Source<'a> {
    /// Where `s` starts in the text, if it is a piece of it.
    fn offset_of(&self, s: &str) -> Option<usize> {
        let base = self.text.as_ptr() as usize;
        let at = s.as_ptr() as usize;
        (at >= base && at + s.len() <= base + self.text.len()).then(|| at - base)
    }

    /// Whether the byte at `at` of the text is the `-` of a `.sym-offset`
    /// of the trigger part, which C turned into `X`.
    fn rewritten(&self, at: usize) -> bool {
        at >= self.param_start + SYM_OFFSET_DASH
            && at - SYM_OFFSET_DASH + SYM_OFFSET.len() <= self.param_end
            && self
                .text
                .as_bytes()
                .get(at - SYM_OFFSET_DASH..at - SYM_OFFSET_DASH + SYM_OFFSET.len())
                == Some(SYM_OFFSET)
    }

    /// Byte `i` of `s` as C has it in its rewritten copy.
    fn byte(&self, s: &str, offset: Option<usize>, i: usize) -> u8 {
        match offset {
            Some(start) if self.rewritten(start + i) => b'X',
            _ => s.as_bytes().get(i).copied().unwrap_or(0),
        }
    }

    /// Writes `s` as C has it (a `.sym-offset` of the trigger part reads
    /// `.symXoffset` there).
    fn write_c(&self, out: &mut dyn fmt::Write, s: &str) -> fmt::Result {
        let Some(start) = self.offset_of(s) else {
            return out.write_str(s);
        };
        // A rewritten byte is an ASCII '-': cutting there keeps whole chars.
        let mut done = 0;
        for i in (0..s.len()).filter(|&i| self.rewritten(start + i)) {
            out.write_str(&s[done..i])?;
            out.write_char('X')?;
            done = i + 1;
        }
        out.write_str(&s[done..])
    }

    /// Whether `s`, as C has it, is `lit`.
    fn c_eq(&self, s: &str, lit: &str) -> bool {
        let offset = self.offset_of(s);
        s.len() == lit.len()
            && lit
                .bytes()
                .enumerate()
                .all(|(i, c)| self.byte(s, offset, i) == c)
    }

    /// C's `errpos(s)`: where `s` (as C has it) first occurs in the
    /// command (as the user wrote it), or 0.
    ///
    /// The search runs over `hist:` + text, as C's does: a longer prefix
    /// (`rhist:`) would find letters of its own first. A position found
    /// is then moved right by what the prefix adds, to stay under the
    /// same character of the command as logged.
    fn errpos(&self, s: &str) -> usize {
        let (prefix, text) = (HIST_PREFIX.as_bytes(), self.text.as_bytes());
        let hay_len = prefix.len() + text.len();
        let hay = |i: usize| match i.checked_sub(prefix.len()) {
            None => prefix.get(i).copied().unwrap_or(0),
            Some(j) => text.get(j).copied().unwrap_or(0),
        };
        let offset = self.offset_of(s);
        if s.is_empty() || s.len() > hay_len {
            return 0;
        }
        match (0..=hay_len - s.len())
            .find(|&at| (0..s.len()).all(|i| hay(at + i) == self.byte(s, offset, i)))
        {
            None | Some(0) => 0,
            Some(at) => at + self.prefix.len().saturating_sub(HIST_PREFIX.len()),
        }
    }

    /// `strrchr(s, op)` on C's rewritten copy.
    fn rfind(&self, s: &str, op: u8) -> Option<usize> {
        let offset = self.offset_of(s);
        s.bytes()
            .enumerate()
            .rev()
            .find(|&(i, c)| c == op && self.byte(s, offset, i) == op)
            .map(|(i, _)| i)
    }

    /// `contains_operator()`: the last `+` or `-`, else the last `*` or `/`,
    /// so that operators of one precedence group to the left; a `-` that is
    /// the last one and comes first is a unary minus.
    fn contains_operator(&self, s: &str) -> Operator {
        let minus = self.rfind(s, b'-');
        if minus == Some(0) {
            return Operator::UnaryMinus;
        }
        let plus = self.rfind(s, b'+');
        match (plus, minus) {
            (Some(p), _) if plus > minus => return Operator::Binary(BinaryOp::Plus, p),
            (_, Some(m)) => return Operator::Binary(BinaryOp::Minus, m),
            _ => {}
        }
        let div = self.rfind(s, b'/');
        let mult = self.rfind(s, b'*');
        match (mult, div) {
            (Some(m), _) if mult > div => Operator::Binary(BinaryOp::Mult, m),
            (_, Some(d)) => Operator::Binary(BinaryOp::Div, d),
            _ => Operator::None,
        }
    }

    fn error(&self, kind: HistErrorKind, at: &str) -> HistError {
        HistError::new(kind, self.errpos(at))
    }
}

// ---------------------------------------------------------------------------
// The parsed command.

/// A parsed hist trigger command: the attributes of
/// `parse_hist_trigger_attrs()`, and stage parsers for the rest.
///
/// Only [`parse_trigger`] makes one; it never changes afterwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TriggerSpec<'a> {
    src: Source<'a>,
    param: &'a str,
    filter: Option<&'a str>,
    keys: &'a str,
    vals: Option<&'a str>,
    sort: Option<&'a str>,
    name: Option<&'a str>,
    clock: Option<&'a str>,
    map_bits: Option<u32>,
    pause: bool,
    cont: bool,
    clear: bool,
    no_hitcount: bool,
    /// `grow`: rhist's extension, which hist rejects (see
    /// [`parse_trigger_ext`]).
    grow: bool,
    assignments: BoundedVec<&'a str, TRACING_MAP_VARS_MAX>,
    actions: BoundedVec<&'a str, HIST_ACTIONS_MAX>,
}

/// Parses `text`, the part of a hist trigger command after `hist:` (C's
/// `param_and_filter`: the trigger, and maybe ` if <filter>`).
///
/// Error positions count from the start of `hist:` + `text` (C's
/// `last_cmd`); see the module documentation for what is checked here and
/// what is left to the stage parsers.
#[cfg(not(MODULE))]
pub fn parse_trigger(text: &str) -> Result<TriggerSpec<'_>, HistError> {
    parse_trigger_in(HIST_PREFIX, text)
}

impl TriggerSpec<'static> {
    /// A spec of nothing, as a constant: what a value is initialised
    /// with before the real spec is written into it.
    pub(crate) const BLANK: Self = TriggerSpec {
        src: Source {
            prefix: "",
            text: "",
            param_start: 0,
            param_end: 0,
        },
        param: "",
        filter: None,
        keys: "",
        vals: None,
        sort: None,
        name: None,
        clock: None,
        map_bits: None,
        pause: false,
        cont: false,
        clear: false,
        no_hitcount: false,
        grow: false,
        assignments: BoundedVec::filled(""),
        actions: BoundedVec::filled(""),
    };
}

/// [`parse_trigger`] for a command whose logged form is `prefix` + `text`
/// (e.g. `"rhist:"`); error positions count from the start of `prefix`.
pub fn parse_trigger_in<'a>(prefix: &'a str, text: &'a str) -> Result<TriggerSpec<'a>, HistError> {
    parse_pieces(prefix, text, false)
}

/// [`parse_trigger_in`], with rhist's `grow` flag: a text hist rejects
/// at its `grow` piece (an unknown attribute, a silent `-EINVAL`) is
/// parsed again with the flag, and taken if it parses and `grow` may be
/// combined with the rest ([`GrowScope`]); otherwise the error is hist's.
/// A spec with [`TriggerSpec::grow`] that fails later must fail with
/// [`TriggerSpec::grow_error`], hist's error for it.
pub fn parse_trigger_ext<'a>(prefix: &'a str, text: &'a str) -> Result<TriggerSpec<'a>, HistError> {
    match parse_pieces(prefix, text, false) {
        Err(e) if e == HistError::silent(errno::EINVAL) => match parse_pieces(prefix, text, true) {
            Ok(spec) if spec.grow && spec.grow_scope().is_ok() => Ok(spec),
            _ => Err(e),
        },
        parsed => parsed,
    }
}

/// What `grow` may not be combined with: a map that moves to a larger
/// one cannot keep what points into its entries from outside them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrowScope {
    /// Variables (`x=...`): other triggers' references read them in the
    /// map.
    Variables,
    /// Handlers (`onmatch()`, `onmax()`, `onchange()`): their actions
    /// read variables, and `snapshot()` keeps a key of the map.
    Actions,
    /// `name=`: a named histogram is shared by triggers on several
    /// events.
    Named,
    /// References to other triggers' variables (`$x`), found by the
    /// build.
    References,
    /// `.quantiles`: the entries' sketches live in a pool of their own.
    Quantiles,
}

fn parse_pieces<'a>(
    prefix: &'a str,
    text: &'a str,
    allow_grow: bool,
) -> Result<TriggerSpec<'a>, HistError> {
    if text.is_empty() {
        return Err(HistError::silent(errno::EINVAL));
    }
    let (param_start, param_end, filter) = split_filter(text)?;
    let param = text.get(param_start..param_end).unwrap_or("");
    let mut spec = TriggerSpec {
        src: Source {
            prefix,
            text,
            param_start,
            param_end,
        },
        param,
        filter,
        ..TriggerSpec::BLANK
    };
    let mut keys = None;
    for piece in param.split(':') {
        if let Some((_, rhs)) = piece.split_once('=') {
            if rhs.is_empty() {
                return Err(spec.src.error(HistErrorKind::EmptyAssignment, piece));
            }
            spec.parse_assignment(piece, &mut keys)?;
            continue;
        }
        match piece {
            "nohitcount" | "NOHC" => spec.no_hitcount = true,
            "pause" => spec.pause = true,
            "cont" | "continue" => spec.cont = true,
            "clear" => spec.clear = true,
            "grow" if allow_grow => spec.grow = true,
            _ => {
                let handler = ["onmatch(", "onmax(", "onchange("]
                    .iter()
                    .any(|p| piece.starts_with(p));
                if !handler || spec.actions.push(piece).is_err() {
                    return Err(HistError::silent(errno::EINVAL));
                }
            }
        }
    }
    spec.keys = keys.ok_or(HistError::silent(errno::EINVAL))?;

    // parse_actions(), up to the first look-up of an onmatch() event.
    let mut onmatch = false;
    for handler in spec.actions() {
        let handler = handler?;
        if let Handler::OnMatch { .. } = handler.handler() {
            onmatch = true;
            break;
        }
        handler.action()?;
    }
    // parse_var_defs() comes next; only onmatch() looked at anything.
    if !onmatch {
        spec.var_defs()?;
    }
    Ok(spec)
}

/// The filter split of `event_hist_trigger_parse()`: the trigger part's
/// range, and the filter (starting with `if`), both stripped.
fn split_filter(text: &str) -> Result<(usize, usize, Option<&str>), HistError> {
    let b = text.as_bytes();
    let blank = |i: usize| matches!(b.get(i), Some(b' ' | b'\t'));
    let mut from = 0;
    let at = loop {
        let Some(found) = text.get(from..).and_then(|rest| rest.find("if")) else {
            return Ok((0, text.len(), None));
        };
        let p = from + found;
        if p == 0 {
            return Err(HistError::silent(errno::EINVAL));
        }
        if !blank(p - 1) {
            from = p + 1;
            continue;
        }
        if p + 3 >= b.len() {
            return Err(HistError::silent(errno::EINVAL));
        }
        if !blank(p + 2) {
            from = p + 1;
            continue;
        }
        break p;
    };
    let head = text.get(..at - 1).unwrap_or("");
    let start = head.len() - head.trim_start_matches(is_space).len();
    let end = head.trim_end_matches(is_space).len().max(start);
    Ok((start, end, text.get(at..).map(strip)))
}

impl<'a> TriggerSpec<'a> {
    /// `parse_assignment()` of one `x=y` piece.
    fn parse_assignment(
        &mut self,
        piece: &'a str,
        keys: &mut Option<&'a str>,
    ) -> Result<(), HistError> {
        let value = |p: &str| piece.strip_prefix(p);
        if let Some(v) = value("key=").or_else(|| value("keys=")) {
            *keys = Some(v);
        } else if let Some(v) = value("val=")
            .or_else(|| value("vals="))
            .or_else(|| value("values="))
        {
            self.vals = Some(v);
        } else if let Some(v) = value("sort=") {
            self.sort = Some(v);
        } else if piece.starts_with("name=") {
            self.name = Some(piece);
        } else if let Some(v) = value("clock=") {
            self.clock = Some(strip(v));
        } else if let Some(v) = value("size=") {
            self.map_bits = Some(parse_map_size(v)?);
        } else if self.assignments.push(piece).is_err() {
            return Err(self.src.error(HistErrorKind::TooManyVars, piece));
        }
        Ok(())
    }

    /// The prefix error positions count from (`hist:` by default).
    #[cfg(not(MODULE))]
    pub fn prefix(&self) -> &'a str {
        self.src.prefix
    }

    /// The whole text that was parsed.
    #[cfg(not(MODULE))]
    pub fn text(&self) -> &'a str {
        self.src.text
    }

    /// The trigger part (before the filter, stripped if there is one).
    #[cfg(not(MODULE))]
    pub fn param(&self) -> &'a str {
        self.param
    }

    /// Whether the trigger part may name `common_comm`, `comm` or `COMM`
    /// (rhist's extension, read only when hist's build fails).
    pub fn may_have_comm(&self) -> bool {
        self.param.contains("comm") || self.param.contains("COMM")
    }

    /// C's `filter` string, `if ...` stripped, as `event_trigger_set_filter()`
    /// gets it.
    pub fn filter(&self) -> Option<&'a str> {
        self.filter
    }

    /// The filter expression: what follows `if` and one blank, as
    /// `set_trigger_filter()` gives it to `create_event_filter()`.  `None`
    /// with a filter means C fails with `-EINVAL` when setting it (only
    /// possible when the text ends in white space).
    pub fn filter_expr(&self) -> Option<&'a str> {
        let filter = self.filter?;
        let at = filter.find(is_blank)?;
        filter.get(at + 1..)
    }

    /// The text of the last `keys=` (or `key=`).
    #[cfg(not(MODULE))]
    pub fn keys_attr(&self) -> &'a str {
        self.keys
    }

    /// The text of the last `vals=` (or `val=`, `values=`).
    #[cfg(not(MODULE))]
    pub fn vals_attr(&self) -> Option<&'a str> {
        self.vals
    }

    /// The text of the last `sort=`.
    #[cfg(not(MODULE))]
    pub fn sort_attr(&self) -> Option<&'a str> {
        self.sort
    }

    /// The histogram name of `name=`.
    #[cfg(not(MODULE))]
    pub fn name(&self) -> Option<&'a str> {
        self.name.and_then(|n| n.get("name=".len()..))
    }

    /// The whole `name=...` piece, which is what C keeps, compares named
    /// triggers by, prints, and puts the caret on.
    pub fn name_attr(&self) -> Option<&'a str> {
        self.name
    }

    /// The trace clock: the stripped `clock=` value, or `"global"`.
    pub fn clock(&self) -> &'a str {
        self.clock.unwrap_or("global")
    }

    /// The `clock=` value, if there is one.
    #[cfg(not(MODULE))]
    pub fn clock_attr(&self) -> Option<&'a str> {
        self.clock
    }

    /// The map size in bits given by `size=`, if any.
    #[cfg(not(MODULE))]
    pub fn map_bits(&self) -> Option<u32> {
        self.map_bits
    }

    /// The map size in bits to use ([`TRACING_MAP_BITS_DEFAULT`] without
    /// `size=`).
    pub fn hist_bits(&self) -> u32 {
        self.map_bits.unwrap_or(TRACING_MAP_BITS_DEFAULT)
    }

    /// The number of map entries (`size=` rounded up to a power of two).
    #[cfg(not(MODULE))]
    pub fn map_size(&self) -> u32 {
        1 << self.hist_bits()
    }

    /// `pause`.
    pub fn pause(&self) -> bool {
        self.pause
    }

    /// `cont` or `continue`.
    pub fn cont(&self) -> bool {
        self.cont
    }

    /// `clear`.
    pub fn clear(&self) -> bool {
        self.clear
    }

    /// `nohitcount` or `NOHC`.
    pub fn no_hitcount(&self) -> bool {
        self.no_hitcount
    }

    /// `grow` (rhist's extension: only [`parse_trigger_ext`] sets it).
    pub fn grow(&self) -> bool {
        self.grow
    }

    /// What the text combines `grow` with that it may not, of what the
    /// grammar sees (the build sees references and `.quantiles`).
    pub fn grow_scope(&self) -> Result<(), GrowScope> {
        if !self.assignments.is_empty() {
            Err(GrowScope::Variables)
        } else if !self.actions.is_empty() {
            Err(GrowScope::Actions)
        } else if self.name.is_some() {
            Err(GrowScope::Named)
        } else {
            Ok(())
        }
    }

    /// hist's error for a text with `grow`, wherever rhist finds it
    /// wrong: hist stops at the `grow` piece, an unknown attribute, and
    /// logs nothing (every error before it is found by
    /// [`parse_trigger_ext`] first, as hist finds it).
    pub fn grow_error(&self) -> HistError {
        HistError::silent(errno::EINVAL)
    }

    /// The variable assignment pieces (`a=x,b=y`), in order.
    #[cfg(not(MODULE))]
    pub fn assignments(&self) -> &[&'a str] {
        &self.assignments
    }

    /// The handler pieces (`onmatch(...)...`), in order.
    pub fn action_strs(&self) -> &[&'a str] {
        &self.actions
    }

    /// C's `errpos()` for `s`, which is a piece of the text (or a literal
    /// such as `"sort="`): the caret position C logs for it.
    pub fn errpos(&self, s: &str) -> usize {
        self.src.errpos(s)
    }

    /// Writes `s`, a piece of the text, as C keeps it: C rewrote each
    /// `.sym-offset` of the trigger part to `.symXoffset` before taking
    /// names out of it, so a variable or histogram name shows the `X`.
    pub fn write_as_c(&self, out: &mut dyn fmt::Write, s: &str) -> fmt::Result {
        self.src.write_c(out, s)
    }
}

#[cfg(test)]
mod tests;
