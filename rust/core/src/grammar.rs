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
/// Operands of an expression node.
pub const HIST_FIELD_OPERANDS_MAX: usize = 2;
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
    pub fn prefix(&self) -> &'a str {
        self.src.prefix
    }

    /// The whole text that was parsed.
    pub fn text(&self) -> &'a str {
        self.src.text
    }

    /// The trigger part (before the filter, stripped if there is one).
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
    pub fn keys_attr(&self) -> &'a str {
        self.keys
    }

    /// The text of the last `vals=` (or `val=`, `values=`).
    pub fn vals_attr(&self) -> Option<&'a str> {
        self.vals
    }

    /// The text of the last `sort=`.
    pub fn sort_attr(&self) -> Option<&'a str> {
        self.sort
    }

    /// The histogram name of `name=`.
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
    pub fn clock_attr(&self) -> Option<&'a str> {
        self.clock
    }

    /// The map size in bits given by `size=`, if any.
    pub fn map_bits(&self) -> Option<u32> {
        self.map_bits
    }

    /// The map size in bits to use ([`TRACING_MAP_BITS_DEFAULT`] without
    /// `size=`).
    pub fn hist_bits(&self) -> u32 {
        self.map_bits.unwrap_or(TRACING_MAP_BITS_DEFAULT)
    }

    /// The number of map entries (`size=` rounded up to a power of two).
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

    /// The handlers, parsed as `parse_actions()` does, in order.
    pub fn actions(&self) -> impl Iterator<Item = Result<HandlerSpec<'a>, HistError>> + '_ {
        self.actions
            .iter()
            .map(move |piece| self.parse_handler(piece))
    }

    /// `onmatch_parse()` / `track_data_parse()` of one handler piece.
    fn parse_handler(&self, piece: &'a str) -> Result<HandlerSpec<'a>, HistError> {
        if let Some(rest) = piece.strip_prefix("onmatch(") {
            let (target, after) = strsep(rest, ')');
            let after =
                after.ok_or_else(|| self.src.error(HistErrorKind::NoClosingParen, target))?;
            let (system, event) = strsep(target, '.');
            let event =
                event.ok_or_else(|| self.src.error(HistErrorKind::SubsysNotFound, system))?;
            let handler = Handler::OnMatch { system, event };
            return Ok(HandlerSpec {
                text: piece,
                handler,
                action: self.parse_action(after, handler),
            });
        }
        let (rest, handler): (_, fn(&'a str) -> Handler<'a>) = match piece.strip_prefix("onmax(") {
            Some(rest) => (rest, |var| Handler::OnMax { var }),
            None => match piece.strip_prefix("onchange(") {
                Some(rest) => (rest, |var| Handler::OnChange { var }),
                None => return Err(HistError::silent(errno::EINVAL)),
            },
        };
        let (var, after) = strsep(rest, ')');
        let after = after.ok_or(HistError::silent(errno::EINVAL))?;
        let handler = handler(var);
        Ok(HandlerSpec {
            text: piece,
            handler,
            action: self.parse_action(after, handler),
        })
    }

    /// `action_parse()`: `.name(params)` after the handler.
    fn parse_action(&self, s: &'a str, handler: Handler<'a>) -> Result<ActionSpec<'a>, HistError> {
        let not_found = HistError::new(HistErrorKind::ActionNotFound, 0);
        let (_, rest) = strsep(s, '.');
        let (name, rest) = strsep(rest.ok_or(not_found)?, '(');
        let rest = rest.ok_or(not_found)?;
        let onmatch = matches!(handler, Handler::OnMatch { .. });
        let mismatch = || self.src.error(HistErrorKind::ActionMismatch, name);
        let (kind, params) = if name.starts_with("save") {
            let params = self.parse_params(strsep(rest, ')').0, false)?;
            if onmatch {
                return Err(mismatch());
            }
            (ActionKind::Save, params)
        } else if name.starts_with("snapshot") {
            let (inside, after) = strsep(rest, ')');
            if after.is_none() {
                return Err(self.src.error(HistErrorKind::NoClosingParen, inside));
            }
            if onmatch {
                return Err(mismatch());
            }
            let params = Params {
                text: inside,
                trace_keyword: false,
                count: 0,
            };
            (ActionKind::Snapshot, params)
        } else {
            let trace = name.starts_with("trace");
            (
                ActionKind::Trace,
                self.parse_params(strsep(rest, ')').0, trace)?,
            )
        };
        Ok(ActionSpec { kind, name, params })
    }

    /// `parse_action_params()`.
    fn parse_params(&self, text: &'a str, trace_keyword: bool) -> Result<Params<'a>, HistError> {
        let mut count = 0;
        for (i, param) in text.split(',').enumerate() {
            if count >= SYNTH_FIELDS_MAX {
                return Err(HistError::new(HistErrorKind::TooManyParams, 0));
            }
            let param = strip(param);
            if param.len() < 2 {
                return Err(self.src.error(HistErrorKind::InvalidParam, param));
            }
            if !(trace_keyword && i == 0) {
                count += 1;
            }
        }
        Ok(Params {
            text,
            trace_keyword,
            count,
        })
    }

    /// `parse_var_defs()`: the variables of the assignment pieces.
    pub fn var_defs(&self) -> Result<VarDefs<'a>, HistError> {
        let mut defs = VarDefs {
            defs: BoundedVec::new(),
        };
        for piece in self.assignments.iter() {
            let mut rest = Some(*piece);
            // C takes at most TRACING_MAP_VARS_MAX from one piece and drops
            // the rest of it.
            for _ in 0..TRACING_MAP_VARS_MAX {
                let Some(r) = rest else { break };
                let (def, next) = strsep(r, ',');
                rest = next;
                let (name, expr) = strsep(def, '=');
                let expr =
                    expr.ok_or_else(|| self.src.error(HistErrorKind::MalformedAssignment, name))?;
                if defs.defs.push(VarDef { name, expr }).is_err() {
                    return Err(self.src.error(HistErrorKind::TooManyVars, name));
                }
            }
        }
        Ok(defs)
    }

    /// The values, split as `create_val_fields()` does.
    pub fn vals(&self) -> ValFields<'a> {
        self.split_vals(TRACING_MAP_VALS_MAX)
    }

    /// Whether a value of `vals=` ends with a statistic (`.min`, `.max`,
    /// `.avg`), so that the text may be one of rhist's extension
    /// ([`super::stats`]) where hist rejects it.
    pub fn may_have_stats(&self) -> bool {
        self.vals
            .is_some_and(|v| v.split(',').any(|f| Statistic::split(f).is_some()))
    }

    /// Whether the text may be one of rhist's extensions where hist
    /// rejects it: a statistic, or more keys or values than hist takes
    /// (see [`KEYS_EXT_MAX`]; more sort keys only with those).
    pub fn may_be_extension(&self) -> bool {
        let pieces = |s: Option<&str>| s.map_or(0, |s| s.split(',').count());
        self.may_have_stats()
            || pieces(Some(self.keys)) > TRACING_MAP_KEYS_MAX
            || pieces(self.vals) > VALS_MAX
    }

    /// The values as rhist's extensions take them ([`super::stats`]): as
    /// [`Self::vals`] does, but up to [`VAL_FIELDS_EXT_MAX`] fields, sums
    /// or statistics, with no limit on the pieces read.
    pub fn vals_ext(&self) -> ValFields<'a, VAL_FIELDS_EXT_MAX> {
        self.split_vals(usize::MAX)
    }

    /// `vals=` split at commas, the first `hitcount` skipped, reading at
    /// most `tokens_max` pieces and keeping at most `N` fields; the pieces
    /// left over, but for a last `hitcount`, are too many.
    fn split_vals<const N: usize>(&self, tokens_max: usize) -> ValFields<'a, N> {
        let mut vals = ValFields {
            fields: BoundedVec::new(),
            too_many: false,
            need_nohc: false,
        };
        if let Some(text) = self.vals {
            let mut rest = Some(text);
            let mut hitcounts = 0;
            let mut tokens = 0;
            while tokens < tokens_max && vals.fields.len() < N {
                let Some(r) = rest else { break };
                let (field, next) = strsep(r, ',');
                rest = next;
                tokens += 1;
                if field == "hitcount" {
                    hitcounts += 1;
                    if hitcounts == 1 {
                        continue;
                    }
                }
                // Can't fail: the loop stops at `N` fields.
                let _ = vals.fields.push(field);
            }
            vals.too_many = rest.is_some_and(|r| r != "hitcount");
        }
        vals.need_nohc = self.no_hitcount && vals.fields.is_empty();
        vals
    }

    /// The keys, split as `create_key_fields()` does.
    pub fn keys(&self) -> KeyFields<'a> {
        self.split_keys()
    }

    /// The keys as rhist's extensions take them: up to [`KEYS_EXT_MAX`].
    pub fn keys_ext(&self) -> KeyFields<'a, KEYS_EXT_MAX> {
        self.split_keys()
    }

    /// `keys=` split at commas, at most `N` keys; any left over are too
    /// many.
    fn split_keys<const N: usize>(&self) -> KeyFields<'a, N> {
        let mut keys = KeyFields {
            fields: BoundedVec::new(),
            too_many: false,
        };
        let mut rest = Some(self.keys);
        for _ in 0..N {
            let Some(r) = rest else { break };
            let (field, next) = strsep(r, ',');
            rest = next;
            let key = if field == "stacktrace" {
                KeyField::Stacktrace
            } else {
                KeyField::Expr(field)
            };
            // Can't fail: the loop stops at N.
            let _ = keys.fields.push(key);
        }
        keys.too_many = rest.is_some();
        keys
    }

    /// The sort keys, split as `create_sort_keys()` does (`None` without
    /// `sort=`, which sorts on hitcount).
    pub fn sort_keys(&self) -> Option<SortKeys<'a>> {
        self.split_sort_keys()
    }

    /// The sort keys as rhist's extensions take them: up to
    /// [`SORT_KEYS_EXT_MAX`], with hist's errors past them.
    pub fn sort_keys_ext(&self) -> Option<SortKeys<'a, SORT_KEYS_EXT_MAX>> {
        self.split_sort_keys()
    }

    /// `sort=` split as `create_sort_keys()` does with at most `N` keys
    /// (`N` > 0).
    fn split_sort_keys<const N: usize>(&self) -> Option<SortKeys<'a, N>> {
        let max = N.max(1);
        let mut keys = SortKeys {
            keys: BoundedVec::new(),
            error: None,
        };
        let mut rest = Some(self.sort?);
        for i in 0..max {
            let Some(r) = rest else { break };
            let (field, next) = strsep(r, ',');
            rest = next;
            let empty = self.src.error(HistErrorKind::EmptySortField, "sort=");
            if field.is_empty() {
                keys.error = Some(empty);
                break;
            }
            if i == max - 1 && rest.is_some() {
                keys.error = Some(self.src.error(HistErrorKind::TooManySortFields, "sort="));
                break;
            }
            let (name, modifier) = strsep(field, '.');
            if name.is_empty() {
                keys.error = Some(empty);
                break;
            }
            let descending = match modifier {
                None => Ok(false),
                Some(m) if self.src.c_eq(m, "descending") => Ok(true),
                Some(m) if self.src.c_eq(m, "ascending") => Ok(false),
                Some(m) => Err(self.src.error(HistErrorKind::InvalidSortModifier, m)),
            };
            // Can't fail: at most N rounds.
            let _ = keys.keys.push(SortKey {
                text: field,
                name,
                modifier,
                descending,
            });
        }
        Some(keys)
    }

    /// `parse_expr()` of `s` (a piece of the text) as a field of kind `ctx`.
    pub fn parse_expr(&self, s: &'a str, ctx: FieldContext) -> Expr<'a> {
        let mut b = ExprBuilder {
            src: &self.src,
            nodes: BoundedVec::new(),
            subexprs: 0,
            error: None,
            full: false,
        };
        let root = b.expr(s, ctx);
        Expr {
            text: s,
            context: ctx,
            nodes: b.nodes,
            root,
            error: b.error,
            full: b.full,
        }
    }

    /// The syntactic part of `parse_field()`: the name and the modifier of
    /// `s` (the text after any `system.event.`), for a field of kind `ctx`.
    pub fn parse_field(&self, s: &'a str, ctx: FieldContext) -> FieldSpec<'a> {
        let (name, modifier_text) = strsep(s, '.');
        let modifier = match modifier_text {
            None => Ok(None),
            Some(m) => self.parse_modifier(name, m, ctx).map(Some),
        };
        FieldSpec {
            text: s,
            name,
            modifier_text,
            modifier,
            special: SpecialField::from_name(name),
        }
    }

    fn parse_modifier(
        &self,
        name: &str,
        m: &'a str,
        ctx: FieldContext,
    ) -> Result<FieldModifier, HistError> {
        let bad = |at: &str| self.src.error(HistErrorKind::BadFieldModifier, at);
        let key_or_var = matches!(ctx, FieldContext::Key | FieldContext::Var);
        Ok(match m {
            "hex" => FieldModifier::Hex,
            "sym" => FieldModifier::Sym,
            _ if self.src.c_eq(m, "symXoffset") => FieldModifier::SymOffset,
            "execname" if name == "common_pid" => FieldModifier::Execname,
            "syscall" => FieldModifier::Syscall,
            "stacktrace" => FieldModifier::Stacktrace,
            "log2" => FieldModifier::Log2,
            "usecs" => FieldModifier::Usecs,
            _ if m.starts_with("bucket") => {
                let rest = &m["bucket".len()..];
                let rest = rest.strip_prefix('s').unwrap_or(rest);
                let Some(number) = rest.strip_prefix('=') else {
                    return Err(bad(rest));
                };
                match kstrtoull(number) {
                    Ok(n) if n != 0 => FieldModifier::Buckets(n),
                    _ => return Err(bad(number)),
                }
            }
            _ if m.starts_with("percent") && !key_or_var => FieldModifier::Percent,
            _ if m.starts_with("graph") && !key_or_var => FieldModifier::Graph,
            _ => return Err(bad(m)),
        })
    }

    /// `field_name_from_var()`: the expression of the first variable named
    /// `var` (without `$`) that is a plain field (no operator, not a
    /// variable reference).  `parse_atom()` uses it for `$var` when the
    /// atom names no other event: C then parses that expression as the
    /// field instead.
    pub fn field_name_from_var(&self, defs: &VarDefs<'a>, var: &str) -> Option<&'a str> {
        defs.iter()
            .filter(|d| d.name == var)
            .find(|d| self.src.contains_operator(d.expr) == Operator::None && !is_var_ref(d.expr))
            .map(|d| d.expr)
    }

    /// The first error C would report for this command if every look-up
    /// succeeded.
    ///
    /// That is: every `onmatch()` event exists; every `$var` not standing
    /// for a plain local field names an existing variable; every other
    /// field name is a numeric field of the event (a `.stacktrace` one if
    /// it has that modifier); no variable is defined twice; units of
    /// timestamps agree; every sort key names a key or value; the named
    /// trigger, clock, synthetic events and onmax/onchange variables are
    /// fine.  `sys.event.$var` atoms are taken as references to another
    /// event, except that in a key one naming a variable of this trigger
    /// that is a plain field is not taken for a reference (C parses it as
    /// that field when `sys.event` is the trigger's own event, which only
    /// the build step knows).  Within those assumptions the error and
    /// caret are C's.
    pub fn check_syntax(&self) -> Result<(), HistError> {
        for handler in self.actions() {
            handler?.action()?;
        }
        let defs = self.var_defs()?;

        let vals = self.vals();
        for field in vals.fields().iter() {
            self.check_field(&defs, field, FieldContext::Val)?;
        }
        if let Some(e) = vals.too_many_error() {
            return Err(e);
        }
        if let Some(e) = vals.nohitcount_error() {
            return Err(e);
        }
        // C cuts each definition's text in place as it parses it
        // (Expr::c_remains()): later `$x`s see what is left.
        let mut defs = defs;
        for i in 0..defs.len() {
            let Some(&def) = defs.get(i) else { break };
            self.check_field(&defs, def.expr, FieldContext::Var)?;
            let remains = self.parse_expr(def.expr, FieldContext::Var).c_remains();
            defs.set_parsed_expr(i, remains);
        }
        let keys = self.keys();
        for key in keys.fields().iter() {
            if let KeyField::Expr(text) = key {
                self.check_field(&defs, text, FieldContext::Key)?;
            }
        }
        if let Some(e) = keys.too_many_error() {
            return Err(e);
        }
        if let Some(sort) = self.sort_keys() {
            for key in sort.keys().iter() {
                key.descending()?;
            }
            if let Some(e) = sort.error() {
                return Err(e);
            }
        }
        // create_actions()
        let mut saves = 0;
        for handler in self.actions() {
            let handler = handler?;
            if let Handler::OnMax { var } | Handler::OnChange { var } = handler.handler() {
                if !var.starts_with('$') {
                    return Err(self.src.error(HistErrorKind::OnxNotVar, var));
                }
            }
            if handler.action()?.kind() == ActionKind::Save {
                if saves > 0 {
                    return Err(HistError::new(HistErrorKind::TooManySaveActions, 0));
                }
                saves += 1;
            }
        }
        Ok(())
    }

    /// One value, variable or key of [`Self::check_syntax`]: `parse_expr()`
    /// and the checks `__create_val_field()` and `create_key_field()` make
    /// on its result.
    fn check_field(
        &self,
        defs: &VarDefs<'a>,
        text: &'a str,
        ctx: FieldContext,
    ) -> Result<(), HistError> {
        let expr = self.parse_expr(text, ctx);
        let root = self.check_node(defs, &expr, expr.root())?;
        let bad = || Err(self.src.error(HistErrorKind::BadFieldModifier, text));
        match (ctx, root) {
            (FieldContext::Key, _) => {
                // A reference for sure: a `$var` that cannot stand for a
                // plain field of this trigger, whatever the event.
                let var_ref = |n: &Node<'a>| match n {
                    Node::Atom(a) => a
                        .var_ref()
                        .is_some_and(|var| self.field_name_from_var(defs, var).is_none()),
                    _ => false,
                };
                if expr.nodes.iter().any(var_ref) {
                    return Err(self.src.error(HistErrorKind::InvalidRefKey, text));
                }
                Ok(())
            }
            (FieldContext::Var, Some(f)) if f.modifier_forbidden_on_var() => bad(),
            (FieldContext::Val, Some(f)) if f.forbidden_on_val() => bad(),
            _ => Ok(()),
        }
    }

    /// The local field a `$var` atom stands for, as `local_field_var_ref()`.
    fn local_field(&self, defs: &VarDefs<'a>, atom: &Atom<'a>) -> Option<&'a str> {
        if atom.system.is_some() {
            return None;
        }
        self.field_name_from_var(defs, atom.var_ref()?)
    }

    /// Checks a node and what is below it, in C's order; gives the field
    /// of an atom that is one.
    fn check_node(
        &self,
        defs: &VarDefs<'a>,
        expr: &Expr<'a>,
        id: NodeId,
    ) -> Result<Option<FieldSpec<'a>>, HistError> {
        match *expr.node(id) {
            Node::Error(e) => Err(e),
            Node::Const { .. } => Ok(None),
            Node::Atom(atom) => {
                let field = match self.local_field(defs, &atom) {
                    Some(expr) => self.parse_field(expr, atom.context()),
                    None if atom.var_ref().is_some() => return Ok(None),
                    None => self.parse_field(atom.name(), atom.context()),
                };
                let modifier = field.modifier()?;
                if modifier == Some(FieldModifier::Stacktrace) && field.special().is_some() {
                    return Err(self
                        .src
                        .error(HistErrorKind::BadFieldModifier, field.text()));
                }
                Ok(Some(field))
            }
            Node::Neg { operand, .. } => {
                self.check_node(defs, expr, operand)?;
                Ok(None)
            }
            Node::Binary {
                op,
                lhs,
                rhs,
                rhs_text,
                ..
            } => {
                self.check_node(defs, expr, lhs)?;
                self.check_node(defs, expr, rhs)?;
                if op == BinaryOp::Div {
                    if let Node::Const { value: 0, .. } = expr.node(rhs) {
                        return Err(self.src.error(HistErrorKind::DivisionByZero, rhs_text));
                    }
                }
                Ok(None)
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Handlers and actions.

/// What a handler reacts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handler<'a> {
    /// `onmatch(system.event)`: a matching event of another histogram.
    /// `event` is everything after the first `.`.
    OnMatch {
        /// The subsystem.
        system: &'a str,
        /// The event name.
        event: &'a str,
    },
    /// `onmax(var)`: a new maximum of `var` (as written, `$` included;
    /// C checks it is a variable only in `create_actions()`).
    OnMax {
        /// The tracked variable, e.g. `$wakeup_lat`.
        var: &'a str,
    },
    /// `onchange(var)`: a change of `var`.
    OnChange {
        /// The tracked variable, e.g. `$cwnd`.
        var: &'a str,
    },
}

/// One handler piece, as `parse_actions()` parses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HandlerSpec<'a> {
    text: &'a str,
    handler: Handler<'a>,
    action: Result<ActionSpec<'a>, HistError>,
}

impl<'a> HandlerSpec<'a> {
    /// The whole piece, e.g. `onmax($lat).save(comm)`.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The handler and its target.
    pub fn handler(&self) -> Handler<'a> {
        self.handler
    }

    /// The action, or the error `action_parse()` logs.  For `onmatch()`, C
    /// looks the event up first and fails with `INVALID_SUBSYS_EVENT`
    /// (caret on `errpos(event)`) if it doesn't exist.
    pub fn action(&self) -> Result<ActionSpec<'a>, HistError> {
        self.action
    }
}

/// The kind of an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionKind {
    /// `save(field,...)`: only for `onmax()` and `onchange()`.
    Save,
    /// `snapshot()`: only for `onmax()` and `onchange()`.
    Snapshot,
    /// `trace(synth,params...)` or `synth(params...)`: generate a
    /// synthetic event.
    Trace,
}

/// An action: `.name(params)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActionSpec<'a> {
    kind: ActionKind,
    name: &'a str,
    params: Params<'a>,
}

impl<'a> ActionSpec<'a> {
    /// The kind (C goes by the start of the name: `save...`, `snapshot...`,
    /// anything else is a synthetic event).
    pub fn kind(&self) -> ActionKind {
        self.kind
    }

    /// The action name as written (`save`, `snapshot`, `trace`, or the
    /// synthetic event's name).
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The parameters.
    pub fn params(&self) -> Params<'a> {
        self.params
    }

    /// For a [`ActionKind::Trace`] action, the synthetic event: the first
    /// parameter after the `trace` keyword, else the action name.
    pub fn synth_event(&self) -> Option<&'a str> {
        match self.kind {
            ActionKind::Trace => self.params.synth_name().or(Some(self.name)),
            _ => None,
        }
    }
}

/// The parameters of an action, as `parse_action_params()` keeps them:
/// split on `,` and stripped, each at least two bytes long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params<'a> {
    text: &'a str,
    trace_keyword: bool,
    count: usize,
}

impl<'a> Params<'a> {
    /// The text inside the parentheses (up to the first `)`).
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The number of parameters, the `trace` keyword's event not counted.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are no parameters.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The synthetic event named by a `trace` keyword action.
    pub fn synth_name(&self) -> Option<&'a str> {
        self.trace_keyword.then(|| strip(strsep(self.text, ',').0))
    }

    /// The parameters, in order.
    pub fn iter(&self) -> impl Iterator<Item = &'a str> {
        self.text
            .split(',')
            .map(strip)
            .skip(usize::from(self.trace_keyword))
            .take(self.count)
    }
}

// ---------------------------------------------------------------------------
// Variables, values, keys, sort keys.

/// One variable definition, `name=expr`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VarDef<'a> {
    /// The name (may be anything C accepts, even empty).
    pub name: &'a str,
    /// The expression text, for [`TriggerSpec::parse_expr`].
    pub expr: &'a str,
}

/// The variable definitions of a trigger, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VarDefs<'a> {
    defs: BoundedVec<VarDef<'a>, TRACING_MAP_VARS_MAX>,
}

impl<'a> VarDefs<'a> {
    /// Replaces the expression text of definition `i` by what C's buffer
    /// holds after parsing it ([`Expr::c_remains`]).
    pub fn set_parsed_expr(&mut self, i: usize, remains: &'a str) {
        if let Some(def) = self
            .defs
            .items
            .get_mut(..self.defs.len)
            .and_then(|d| d.get_mut(i))
        {
            def.expr = remains;
        }
    }
}

impl<'a> Deref for VarDefs<'a> {
    type Target = [VarDef<'a>];

    fn deref(&self) -> &[VarDef<'a>] {
        &self.defs
    }
}

/// The values of `vals=`, as the loop of `create_val_fields()` takes them.
///
/// C always makes the hitcount value first.  Then it takes at most
/// [`TRACING_MAP_VALS_MAX`] pieces and at most two fields: the first
/// `hitcount` piece is skipped (it is the hitcount value), anything else
/// (a second `hitcount` too) is a field. `N` is the most fields kept:
/// hist's two, or rhist's extension's [`VAL_FIELDS_EXT_MAX`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValFields<'a, const N: usize = VALS_MAX> {
    fields: BoundedVec<&'a str, N>,
    too_many: bool,
    need_nohc: bool,
}

impl<'a, const N: usize> ValFields<'a, N> {
    /// The value expressions to parse, in order, with
    /// [`FieldContext::Val`].
    pub fn fields(&self) -> &[&'a str] {
        &self.fields
    }

    /// The silent `-EINVAL` C returns after the fields when pieces are left
    /// over (anything but a last `hitcount`).
    pub fn too_many_error(&self) -> Option<HistError> {
        self.too_many.then_some(HistError::silent(errno::EINVAL))
    }

    /// `NEED_NOHC_VAL`, which C reports last, when `nohitcount` is given
    /// and there is no other value.
    pub fn nohitcount_error(&self) -> Option<HistError> {
        self.need_nohc
            .then_some(HistError::new(HistErrorKind::NeedNohcVal, 0))
    }
}

/// One key of `keys=`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KeyField<'a> {
    /// Exactly `stacktrace`: the stack trace key, no parsing.
    #[default]
    Stacktrace,
    /// An expression to parse with [`FieldContext::Key`].
    Expr(&'a str),
}

impl<'a> KeyField<'a> {
    /// The key text.
    pub fn text(&self) -> &'a str {
        match self {
            KeyField::Stacktrace => "stacktrace",
            KeyField::Expr(text) => text,
        }
    }
}

/// The keys of `keys=`, as `create_key_fields()` takes them: at most `N`,
/// hist's three or rhist's extension's [`KEYS_EXT_MAX`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyFields<'a, const N: usize = TRACING_MAP_KEYS_MAX> {
    fields: BoundedVec<KeyField<'a>, N>,
    too_many: bool,
}

impl<'a, const N: usize> KeyFields<'a, N> {
    /// The keys, in order.
    pub fn fields(&self) -> &[KeyField<'a>] {
        &self.fields
    }

    /// The silent `-EINVAL` C returns after the keys when there are more
    /// than [`TRACING_MAP_KEYS_MAX`].
    pub fn too_many_error(&self) -> Option<HistError> {
        self.too_many.then_some(HistError::silent(errno::EINVAL))
    }
}

/// One sort key, `name[.ascending|.descending]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortKey<'a> {
    text: &'a str,
    name: &'a str,
    modifier: Option<&'a str>,
    descending: Result<bool, HistError>,
}

impl Default for SortKey<'_> {
    fn default() -> Self {
        SortKey {
            text: "",
            name: "",
            modifier: None,
            descending: Ok(false),
        }
    }
}

impl<'a> SortKey<'a> {
    /// The whole piece.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The name to match: `hitcount`, or a key's or value's name.  C fails
    /// with `INVALID_SORT_FIELD` at `errpos(name)` if none matches.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// What follows the first `.`, if anything.
    pub fn modifier(&self) -> Option<&'a str> {
        self.modifier
    }

    /// The order, or `INVALID_SORT_MODIFIER`, which C reports only once
    /// the name matched.
    pub fn descending(&self) -> Result<bool, HistError> {
        self.descending
    }
}

/// The sort keys of `sort=`, as `create_sort_keys()` takes them: at most
/// `N`, hist's two or rhist's extension's [`SORT_KEYS_EXT_MAX`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortKeys<'a, const N: usize = TRACING_MAP_SORT_KEYS_MAX> {
    keys: BoundedVec<SortKey<'a>, N>,
    error: Option<HistError>,
}

impl<'a, const N: usize> SortKeys<'a, N> {
    /// The keys C takes before stopping.
    pub fn keys(&self) -> &[SortKey<'a>] {
        &self.keys
    }

    /// The error that stopped C after those keys (`EMPTY_SORT_FIELD`,
    /// `TOO_MANY_SORT_FIELDS`).
    pub fn error(&self) -> Option<HistError> {
        self.error
    }
}

// ---------------------------------------------------------------------------
// Fields and expressions.

/// What kind of field an expression is parsed for: C's `flags` argument of
/// `parse_expr()`.  It only matters for a field that is the whole
/// expression (operands are parsed with no flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldContext {
    /// A key (`HIST_FIELD_FL_KEY`).
    Key,
    /// A value (no flags).
    Val,
    /// A variable (`HIST_FIELD_FL_VAR`).
    Var,
    /// An operand of an operator (no flags).
    Operand,
}

/// A field modifier; C allows at most one per field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldModifier {
    /// `.hex`
    Hex,
    /// `.sym`
    Sym,
    /// `.sym-offset`
    SymOffset,
    /// `.execname` (only on `common_pid`)
    Execname,
    /// `.syscall`
    Syscall,
    /// `.stacktrace` (only on stacktrace fields)
    Stacktrace,
    /// `.log2`
    Log2,
    /// `.usecs`
    Usecs,
    /// `.buckets=N` (or `.bucket=N`), N > 0
    Buckets(u64),
    /// `.percent` (anything starting with `percent`), not on keys or
    /// variables
    Percent,
    /// `.graph` (anything starting with `graph`), not on keys or variables
    Graph,
}

impl FieldModifier {
    /// The name C prints (`get_hist_field_flags()`).
    pub const fn name(self) -> &'static str {
        match self {
            FieldModifier::Hex => "hex",
            FieldModifier::Sym => "sym",
            FieldModifier::SymOffset => "sym-offset",
            FieldModifier::Execname => "execname",
            FieldModifier::Syscall => "syscall",
            FieldModifier::Stacktrace => "stacktrace",
            FieldModifier::Log2 => "log2",
            FieldModifier::Usecs => "usecs",
            FieldModifier::Buckets(_) => "buckets",
            FieldModifier::Percent => "percent",
            FieldModifier::Graph => "graph",
        }
    }
}

/// The field names `parse_field()` knows without the event.
///
/// `cpu` and `stacktrace` also mean `common_cpu` and `common_stacktrace`,
/// but only when the event has no field of that name, so they are left to
/// the build step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecialField {
    /// `common_timestamp`
    CommonTimestamp,
    /// `common_stacktrace`
    CommonStacktrace,
    /// `common_cpu`
    CommonCpu,
    /// `common_comm`: rhist's extension (as in Linux 6.16), the current
    /// task's command name.
    CommonComm,
    /// `hitcount`
    Hitcount,
}

impl SpecialField {
    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "common_timestamp" => SpecialField::CommonTimestamp,
            "common_stacktrace" => SpecialField::CommonStacktrace,
            "common_cpu" => SpecialField::CommonCpu,
            "common_comm" => SpecialField::CommonComm,
            "hitcount" => SpecialField::Hitcount,
            _ => return None,
        })
    }

    /// The name.
    pub const fn name(self) -> &'static str {
        match self {
            SpecialField::CommonTimestamp => "common_timestamp",
            SpecialField::CommonStacktrace => "common_stacktrace",
            SpecialField::CommonCpu => "common_cpu",
            SpecialField::CommonComm => "common_comm",
            SpecialField::Hitcount => "hitcount",
        }
    }
}

/// A field name with its modifier, as `parse_field()` reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldSpec<'a> {
    text: &'a str,
    name: &'a str,
    modifier_text: Option<&'a str>,
    modifier: Result<Option<FieldModifier>, HistError>,
    special: Option<SpecialField>,
}

impl<'a> FieldSpec<'a> {
    /// The whole text (C's `field_str`, the caret for some errors).
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The field name (before the first `.`).
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// What follows the first `.`.
    pub fn modifier_text(&self) -> Option<&'a str> {
        self.modifier_text
    }

    /// The modifier, or `BAD_FIELD_MODIFIER`, which C reports before it
    /// looks the name up.
    pub fn modifier(&self) -> Result<Option<FieldModifier>, HistError> {
        self.modifier
    }

    /// The special field this names, if any.  Other names are looked up
    /// in the event (C fails with `FIELD_NOT_FOUND` at `errpos(name)`).
    pub fn special(&self) -> Option<SpecialField> {
        self.special
    }

    /// Whether `__create_val_field()` rejects this on a variable.
    fn modifier_forbidden_on_var(&self) -> bool {
        matches!(
            self.modifier,
            Ok(Some(
                FieldModifier::Graph
                    | FieldModifier::Percent
                    | FieldModifier::Buckets(_)
                    | FieldModifier::Log2
            ))
        )
    }

    /// Whether `__create_val_field()` rejects this on a value.
    fn forbidden_on_val(&self) -> bool {
        self.special == Some(SpecialField::CommonStacktrace)
            || matches!(
                self.modifier,
                Ok(Some(
                    FieldModifier::Buckets(_)
                        | FieldModifier::Log2
                        | FieldModifier::Sym
                        | FieldModifier::SymOffset
                        | FieldModifier::Syscall
                        | FieldModifier::Stacktrace
                ))
            )
    }
}

/// The four operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Mult,
    /// `/`
    Div,
}

impl BinaryOp {
    /// The operator character.
    pub const fn symbol(self) -> char {
        match self {
            BinaryOp::Plus => '+',
            BinaryOp::Minus => '-',
            BinaryOp::Mult => '*',
            BinaryOp::Div => '/',
        }
    }
}

/// The index of a node in an [`Expr`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeId(u8);

/// A non-constant atom: a field, or a variable reference.
///
/// C splits `system.event.rest` (two dots or more) and keeps `rest` as the
/// name; with fewer dots the whole text is the name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Atom<'a> {
    text: &'a str,
    system: Option<&'a str>,
    event: Option<&'a str>,
    name: &'a str,
    context: FieldContext,
}

impl<'a> Atom<'a> {
    /// The whole atom.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The subsystem of `system.event.name`.
    pub fn system(&self) -> Option<&'a str> {
        self.system
    }

    /// The event of `system.event.name`.
    pub fn event(&self) -> Option<&'a str> {
        self.event
    }

    /// The name: a field with its modifier (for
    /// [`TriggerSpec::parse_field`]), or `$var`.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The flags the atom is parsed with.
    pub fn context(&self) -> FieldContext {
        self.context
    }

    /// For a variable reference (`$` and at least one more byte), the
    /// variable name.  C resolves it (`VAR_NOT_FOUND` at `errpos(var)`)
    /// and, if that fails, parses the name as a field anyway.
    pub fn var_ref(&self) -> Option<&'a str> {
        is_var_ref(self.name).then(|| &self.name[1..])
    }
}

/// One node of an expression, in the shape of C's recursion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node<'a> {
    /// A numeric constant (the text starts with a digit).
    Const {
        /// The text.
        text: &'a str,
        /// Its value (`kstrtoull()`, base 0).
        value: u64,
    },
    /// A field or variable reference.
    Atom(Atom<'a>),
    /// `-(operand)`.
    Neg {
        /// The operand text (the caret of `INVALID_STR_OPERAND`).
        text: &'a str,
        /// The operand.
        operand: NodeId,
    },
    /// `lhs op rhs`.  C parses `lhs`, checks it, then parses `rhs`.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// The left text (the caret of `INVALID_STR_OPERAND`).
        lhs_text: &'a str,
        /// The right text (the caret of `INVALID_STR_OPERAND` and
        /// `DIVISION_BY_ZERO`).
        rhs_text: &'a str,
        /// The left operand.
        lhs: NodeId,
        /// The right operand.
        rhs: NodeId,
    },
    /// The syntax error at which C stops.
    Error(HistError),
}

impl Default for Node<'_> {
    fn default() -> Self {
        Node::Error(HistError::silent(errno::EINVAL))
    }
}

/// An expression parsed as `parse_expr()` does.
///
/// The tree keeps what C parses (and resolves) before a syntax error; the
/// error is a [`Node::Error`] where C meets it.  When the left operand of
/// an operator fails, the operator node is left out (C does nothing for it
/// before).  So walking the tree depth first, left to right, visits nodes
/// in C's order and stops at the error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expr<'a> {
    text: &'a str,
    context: FieldContext,
    nodes: BoundedVec<Node<'a>, EXPR_NODES_MAX>,
    root: NodeId,
    error: Option<NodeId>,
    full: bool,
}

const BAD_NODE: Node<'static> = Node::Error(HistError::silent(errno::EINVAL));

impl<'a> Expr<'a> {
    /// The text.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The kind of field this is.
    pub fn context(&self) -> FieldContext {
        self.context
    }

    /// The root node.
    pub fn root(&self) -> NodeId {
        self.root
    }

    /// A node.
    pub fn node(&self, id: NodeId) -> &Node<'a> {
        self.nodes.get(usize::from(id.0)).unwrap_or(&BAD_NODE)
    }

    /// The syntax error in the expression, if any.
    pub fn error(&self) -> Option<HistError> {
        if self.full {
            return Some(HistError::silent(errno::EINVAL));
        }
        match self.node(self.error?) {
            Node::Error(e) => Some(*e),
            _ => None,
        }
    }

    /// What is left of the text in C's buffer after a successful
    /// `parse_expr()`: C splits the text in place, writing a NUL at each
    /// binary operator it splits at, at the `)` closing a unary minus and
    /// at the dots of `system.event.var`, so the buffer ends at the first
    /// of those.  C's variable definitions keep that buffer:
    /// `field_name_from_var()` reads it when a later variable or key names
    /// the variable (`x=b+1` then stands for the field `b`).
    pub fn c_remains(&self) -> &'a str {
        let base = self.text.as_ptr() as usize;
        let end_of = |s: &str| (s.as_ptr() as usize + s.len()).checked_sub(base);
        let cut = self
            .nodes
            .iter()
            .filter_map(|n| match n {
                Node::Binary { lhs_text, .. } => end_of(lhs_text),
                Node::Neg { text, .. } => end_of(text),
                Node::Atom(Atom {
                    system: Some(system),
                    ..
                }) => end_of(system),
                _ => None,
            })
            .min();
        match cut {
            Some(at) => self.text.get(..at).unwrap_or(self.text),
            None => self.text,
        }
    }

    /// The number of operators (C's `n_subexprs` when parsing succeeds).
    pub fn operators(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| matches!(n, Node::Neg { .. } | Node::Binary { .. }))
            .count()
    }
}

struct ExprBuilder<'s, 'a> {
    src: &'s Source<'a>,
    nodes: BoundedVec<Node<'a>, EXPR_NODES_MAX>,
    subexprs: u32,
    error: Option<NodeId>,
    full: bool,
}

impl<'a> ExprBuilder<'_, 'a> {
    fn push(&mut self, node: Node<'a>) -> NodeId {
        match self.nodes.push(node) {
            // EXPR_NODES_MAX < 256.
            Ok(at) => NodeId(at as u8),
            Err(_) => {
                // Not reachable: the subexpression limit bounds the nodes.
                self.full = true;
                NodeId(0)
            }
        }
    }

    fn fail(&mut self, e: HistError) -> NodeId {
        let id = self.push(Node::Error(e));
        self.error = Some(id);
        id
    }

    fn silent(&mut self) -> NodeId {
        self.fail(HistError::silent(errno::EINVAL))
    }

    /// `parse_expr()`.
    fn expr(&mut self, s: &'a str, ctx: FieldContext) -> NodeId {
        if self.subexprs > HIST_SUBEXPRS_MAX {
            return self.fail(self.src.error(HistErrorKind::TooManySubexpr, s));
        }
        match self.src.contains_operator(s) {
            Operator::None => self.atom(s, ctx),
            Operator::UnaryMinus => self.unary(s),
            Operator::Binary(op, at) => {
                self.subexprs += 1;
                let (lhs_text, rhs_text) = (&s[..at], &s[at + 1..]);
                if lhs_text.is_empty() || rhs_text.is_empty() {
                    return self.silent();
                }
                let lhs = self.expr(lhs_text, FieldContext::Operand);
                if self.error.is_some() {
                    return lhs;
                }
                let rhs = self.expr(rhs_text, FieldContext::Operand);
                self.push(Node::Binary {
                    op,
                    lhs_text,
                    rhs_text,
                    lhs,
                    rhs,
                })
            }
        }
    }

    /// `parse_unary()`: only `-(...)` with nothing after the last `)`.
    fn unary(&mut self, s: &'a str) -> NodeId {
        self.subexprs += 1;
        if self.subexprs > HIST_SUBEXPRS_MAX {
            return self.fail(self.src.error(HistErrorKind::TooManySubexpr, s));
        }
        let s = &s[1..];
        if !s.contains('(') {
            return self.silent();
        }
        // C skips one byte, assuming it is the '('.
        let Some(s) = s.get(1..) else {
            return self.silent();
        };
        let Some(close) = s.rfind(')') else {
            return self.silent();
        };
        if close + 1 != s.len() {
            return self.fail(self.src.error(HistErrorKind::UnaryMinusSubexpr, s));
        }
        let text = &s[..close];
        let operand = self.expr(text, FieldContext::Operand);
        if self.error.is_some() {
            return operand;
        }
        self.push(Node::Neg { text, operand })
    }

    /// `parse_atom()` up to the look-ups.
    fn atom(&mut self, s: &'a str, ctx: FieldContext) -> NodeId {
        if s.starts_with(|c: char| c.is_ascii_digit()) {
            return match kstrtoull(s) {
                Ok(value) => self.push(Node::Const { text: s, value }),
                Err(_) => self.fail(self.src.error(HistErrorKind::ExpectNumber, s)),
            };
        }
        let (mut system, mut event, mut name) = (None, None, s);
        if let Some((sys, rest)) = s.split_once('.') {
            if let Some((ev, rest)) = rest.split_once('.') {
                (system, event, name) = (Some(sys), Some(ev), rest);
            }
        }
        self.push(Node::Atom(Atom {
            text: s,
            system,
            event,
            name,
            context: ctx,
        }))
    }
}

#[cfg(test)]
mod tests;
