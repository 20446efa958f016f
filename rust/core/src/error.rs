// SPDX-License-Identifier: GPL-2.0

//! Hist trigger errors, as `kernel/trace/trace_events_hist.c` reports them.
//!
//! C keeps one table of error texts (`HIST_ERR_*`, built by the `ERRORS`
//! macro) and logs an error with `hist_err(tr, HIST_ERR_x, pos)`, which puts
//! the text into `tracing/error_log` together with the command and a caret
//! at byte `pos` of the command.  The caller then returns a negative errno.
//! Some failures return an errno without logging anything.
//!
//! [`HistErrorKind`] has one variant per entry of C's table, in C's order
//! (C's placeholder `HIST_ERR_NONE` is not a variant; it is only the first
//! entry of [`C_ERR_TEXT`]).  [`HistError`] is one failure: the logged kind
//! (if C logs one), the caret position, and the errno C returns.

use core::fmt;

/// The (positive) errno values the hist code returns; C returns them negated.
pub mod errno {
    /// No such file or directory.
    pub const ENOENT: i32 = 2;
    /// File exists.
    pub const EEXIST: i32 = 17;
    /// No such device: no snapshot buffer.
    pub const ENODEV: i32 = 19;
    /// Invalid argument: what almost every hist parse error returns.
    pub const EINVAL: i32 = 22;
    /// Math argument out of domain of function: division by zero.
    pub const EDOM: i32 = 33;
    /// Math result not representable: a number too large for `kstrtoul()`.
    pub const ERANGE: i32 = 34;
}

macro_rules! hist_errors {
    ($($(#[$attr:meta])* $variant:ident = $cname:literal, $text:literal;)*) => {
        /// One entry of C's `HIST_ERR_*` list, in C's order.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum HistErrorKind {
            $(
                #[doc = concat!("`HIST_ERR_", $cname, "`: \"", $text, "\"")]
                $(#[$attr])*
                $variant,
            )*
        }

        impl HistErrorKind {
            /// Every kind, in C's order (`ALL[i].c_index() == i + 1`).
            #[cfg(not(MODULE))]
            pub const ALL: [HistErrorKind; HIST_ERROR_KINDS] = [$(HistErrorKind::$variant),*];

            /// The error text, exactly as C logs it.
            pub const fn message(self) -> &'static str {
                match self {
                    $(HistErrorKind::$variant => $text,)*
                }
            }

            /// The C name without its `HIST_ERR_` prefix, e.g. `"DUPLICATE_VAR"`.
            #[cfg(not(MODULE))]
            pub const fn c_name(self) -> &'static str {
                match self {
                    $(HistErrorKind::$variant => $cname,)*
                }
            }
        }

        /// C's `err_text[]`: `"No error"` (for `HIST_ERR_NONE`) followed by
        /// the text of every [`HistErrorKind`], so that
        /// `C_ERR_TEXT[kind.c_index()] == kind.message()`.  This is the
        /// table C hands to `tracing_log_err()`.
        #[cfg(not(MODULE))]
        pub const C_ERR_TEXT: [&str; HIST_ERROR_KINDS + 1] = ["No error", $($text),*];

        /// [`C_ERR_TEXT`] with each text NUL-terminated, for the kernel's
        /// `tracing_log_err()`, which keeps pointers to them.
        pub const C_ERR_TEXT_NUL: [&str; HIST_ERROR_KINDS + 1] =
            ["No error\0", $(concat!($text, "\0")),*];
    };
}

/// How many kinds C's list has (not counting `HIST_ERR_NONE`).
pub const HIST_ERROR_KINDS: usize = 48;

hist_errors! {
    DuplicateVar = "DUPLICATE_VAR", "Variable already defined";
    VarNotUnique = "VAR_NOT_UNIQUE", "Variable name not unique, need to use fully qualified name (subsys.event.var) for variable";
    TooManyVars = "TOO_MANY_VARS", "Too many variables defined";
    MalformedAssignment = "MALFORMED_ASSIGNMENT", "Malformed assignment";
    NamedMismatch = "NAMED_MISMATCH", "Named hist trigger doesn't match existing named trigger (includes variables)";
    TriggerEexist = "TRIGGER_EEXIST", "Hist trigger already exists";
    TriggerEnoentClear = "TRIGGER_ENOENT_CLEAR", "Can't clear or continue a nonexistent hist trigger";
    SetClockFail = "SET_CLOCK_FAIL", "Couldn't set trace_clock";
    BadFieldModifier = "BAD_FIELD_MODIFIER", "Invalid field modifier";
    TooManySubexpr = "TOO_MANY_SUBEXPR", "Too many subexpressions (3 max)";
    TimestampMismatch = "TIMESTAMP_MISMATCH", "Timestamp units in expression don't match";
    TooManyFieldVars = "TOO_MANY_FIELD_VARS", "Too many field variables defined";
    EventFileNotFound = "EVENT_FILE_NOT_FOUND", "Event file not found";
    HistNotFound = "HIST_NOT_FOUND", "Matching event histogram not found";
    HistCreateFail = "HIST_CREATE_FAIL", "Couldn't create histogram for field";
    SynthVarNotFound = "SYNTH_VAR_NOT_FOUND", "Couldn't find synthetic variable";
    SynthEventNotFound = "SYNTH_EVENT_NOT_FOUND", "Couldn't find synthetic event";
    SynthTypeMismatch = "SYNTH_TYPE_MISMATCH", "Param type doesn't match synthetic event field type";
    SynthCountMismatch = "SYNTH_COUNT_MISMATCH", "Param count doesn't match synthetic event field count";
    FieldVarParseFail = "FIELD_VAR_PARSE_FAIL", "Couldn't parse field variable";
    VarCreateFindFail = "VAR_CREATE_FIND_FAIL", "Couldn't create or find variable";
    OnxNotVar = "ONX_NOT_VAR", "For onmax(x) or onchange(x), x must be a variable";
    OnxVarNotFound = "ONX_VAR_NOT_FOUND", "Couldn't find onmax or onchange variable";
    OnxVarCreateFail = "ONX_VAR_CREATE_FAIL", "Couldn't create onmax or onchange variable";
    FieldVarCreateFail = "FIELD_VAR_CREATE_FAIL", "Couldn't create field variable";
    TooManyParams = "TOO_MANY_PARAMS", "Too many action params";
    ParamNotFound = "PARAM_NOT_FOUND", "Couldn't find param";
    InvalidParam = "INVALID_PARAM", "Invalid action param";
    ActionNotFound = "ACTION_NOT_FOUND", "No action found";
    // C cannot log it either: its `strsep()` never returns NULL there.
    #[allow(dead_code, reason = "C's table has it, and C's index counts it")]
    NoSaveParams = "NO_SAVE_PARAMS", "No params found for save()";
    TooManySaveActions = "TOO_MANY_SAVE_ACTIONS", "Can't have more than one save() action per hist";
    ActionMismatch = "ACTION_MISMATCH", "Handler doesn't support action";
    NoClosingParen = "NO_CLOSING_PAREN", "No closing paren found";
    SubsysNotFound = "SUBSYS_NOT_FOUND", "Missing subsystem";
    InvalidSubsysEvent = "INVALID_SUBSYS_EVENT", "Invalid subsystem or event name";
    InvalidRefKey = "INVALID_REF_KEY", "Using variable references in keys not supported";
    VarNotFound = "VAR_NOT_FOUND", "Couldn't find variable";
    FieldNotFound = "FIELD_NOT_FOUND", "Couldn't find field";
    EmptyAssignment = "EMPTY_ASSIGNMENT", "Empty assignment";
    InvalidSortModifier = "INVALID_SORT_MODIFIER", "Invalid sort modifier";
    EmptySortField = "EMPTY_SORT_FIELD", "Empty sort field";
    TooManySortFields = "TOO_MANY_SORT_FIELDS", "Too many sort fields (Max = 2)";
    InvalidSortField = "INVALID_SORT_FIELD", "Sort field must be a key or a val";
    InvalidStrOperand = "INVALID_STR_OPERAND", "String type can not be an operand in expression";
    ExpectNumber = "EXPECT_NUMBER", "Expecting numeric literal";
    UnaryMinusSubexpr = "UNARY_MINUS_SUBEXPR", "Unary minus not supported in sub-expressions";
    DivisionByZero = "DIVISION_BY_ZERO", "Division by zero";
    NeedNohcVal = "NEED_NOHC_VAL", "Non-hitcount value is required for 'nohitcount'";
}

impl HistErrorKind {
    /// C's enum value `HIST_ERR_x` (1-based: `HIST_ERR_NONE` is 0), i.e.
    /// the index into [`C_ERR_TEXT`] that C passes to `tracing_log_err()`.
    pub const fn c_index(self) -> u8 {
        self as u8 + 1
    }

    /// The errno C returns together with this error on the path(s) that
    /// log it.
    ///
    /// Most paths return `-EINVAL`.  A few kinds are logged on paths that
    /// pass on an errno from a callee instead (`SET_CLOCK_FAIL`,
    /// `EVENT_FILE_NOT_FOUND`, `HIST_CREATE_FAIL`, `FIELD_VAR_PARSE_FAIL`,
    /// `VAR_CREATE_FIND_FAIL`, `ONX_VAR_CREATE_FAIL`,
    /// `FIELD_VAR_CREATE_FAIL`); for those this is the usual value
    /// (`EINVAL`) and [`HistError::with_errno`] carries another one.
    pub const fn errno(self) -> i32 {
        match self {
            HistErrorKind::TriggerEexist | HistErrorKind::TooManySaveActions => errno::EEXIST,
            HistErrorKind::TriggerEnoentClear | HistErrorKind::NeedNohcVal => errno::ENOENT,
            HistErrorKind::DivisionByZero => errno::EDOM,
            _ => errno::EINVAL,
        }
    }
}

impl fmt::Display for HistErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

/// One failure of a hist trigger command.
///
/// `kind` is what C logs (`None` when C fails without logging, e.g. for an
/// unknown attribute or a missing `keys=`), `pos` is the caret position C
/// logs with it, and `errno` is what C returns (positive; C returns it
/// negated).
///
/// A few paths of C log two entries before they fail: `parse_atom()` logs
/// `VAR_NOT_FOUND` for a `$var` it cannot resolve, then parses the text as
/// a field, which logs again (and before them `VAR_NOT_UNIQUE` when
/// several events define it).  [`HistError::logged_before`] gives those
/// logged before `kind`, [`HistError::earlier`] the last of them.
///
/// `pos` is the byte offset in C's `last_cmd`: the command prefix (`hist:`
/// for C's hist command) followed by the trigger text.  C computes it with
/// `strstr()` of the offending substring in that string (see
/// [`super::grammar::TriggerSpec::errpos`]), so it is 0 when C passes 0 or
/// when the substring isn't found; subtract the prefix length to get an
/// offset in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HistError {
    kind: Option<HistErrorKind>,
    pos: usize,
    errno: i32,
    earlier: Option<(HistErrorKind, usize)>,
    earliest: Option<(HistErrorKind, usize)>,
}

impl HistError {
    /// A logged error with C's usual errno for `kind`.
    pub const fn new(kind: HistErrorKind, pos: usize) -> Self {
        HistError {
            kind: Some(kind),
            pos,
            errno: kind.errno(),
            earlier: None,
            earliest: None,
        }
    }

    /// A logged error whose path returns another errno than the usual one.
    pub const fn with_errno(kind: HistErrorKind, pos: usize, errno: i32) -> Self {
        HistError {
            kind: Some(kind),
            pos,
            errno,
            earlier: None,
            earliest: None,
        }
    }

    /// A failure C returns without logging anything.
    pub const fn silent(errno: i32) -> Self {
        HistError {
            kind: None,
            pos: 0,
            errno,
            earlier: None,
            earliest: None,
        }
    }

    /// This error, with an entry C logs before it (`kind` at `pos`) and
    /// before those given so far: at most two are kept.
    pub const fn after(self, kind: HistErrorKind, pos: usize) -> Self {
        match self.earlier {
            None => HistError {
                earlier: Some((kind, pos)),
                ..self
            },
            Some(_) => HistError {
                earliest: Some((kind, pos)),
                ..self
            },
        }
    }

    /// The entry C logs just before this one, if any: its kind and caret.
    pub const fn earlier(&self) -> Option<(HistErrorKind, usize)> {
        self.earlier
    }

    /// Every entry C logs before this one, in C's order: for a `$var`
    /// several events define, `VAR_NOT_UNIQUE` then `VAR_NOT_FOUND`.
    pub fn logged_before(&self) -> impl Iterator<Item = (HistErrorKind, usize)> {
        self.earliest.into_iter().chain(self.earlier)
    }

    /// What C logs, if anything.
    pub const fn kind(&self) -> Option<HistErrorKind> {
        self.kind
    }

    /// The logged text, if C logs one.
    #[cfg(not(MODULE))]
    pub const fn message(&self) -> Option<&'static str> {
        match self.kind {
            Some(kind) => Some(kind.message()),
            None => None,
        }
    }

    /// The caret position: a byte offset in prefix + text (see the type's
    /// documentation).  0 for silent errors.
    pub const fn pos(&self) -> usize {
        self.pos
    }

    /// The caret position as an offset in the text that followed a prefix
    /// of `prefix_len` bytes, if the caret is inside the text.
    #[cfg(not(MODULE))]
    pub const fn pos_in_text(&self, prefix_len: usize) -> Option<usize> {
        self.pos.checked_sub(prefix_len)
    }

    /// The positive errno; C returns `-errno()`.
    pub const fn errno(&self) -> i32 {
        self.errno
    }
}

impl fmt::Display for HistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Some(kind) => write!(
                f,
                "{} (at {}, errno {})",
                kind.message(),
                self.pos,
                self.errno
            ),
            None => write!(f, "errno {}", self.errno),
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::format;

    /// C's list, in C's order, as it appears in trace_events_hist.c.
    const C_LIST: [(&str, &str); HIST_ERROR_KINDS] = [
        ("DUPLICATE_VAR", "Variable already defined"),
        ("VAR_NOT_UNIQUE", "Variable name not unique, need to use fully qualified name (subsys.event.var) for variable"),
        ("TOO_MANY_VARS", "Too many variables defined"),
        ("MALFORMED_ASSIGNMENT", "Malformed assignment"),
        ("NAMED_MISMATCH", "Named hist trigger doesn't match existing named trigger (includes variables)"),
        ("TRIGGER_EEXIST", "Hist trigger already exists"),
        ("TRIGGER_ENOENT_CLEAR", "Can't clear or continue a nonexistent hist trigger"),
        ("SET_CLOCK_FAIL", "Couldn't set trace_clock"),
        ("BAD_FIELD_MODIFIER", "Invalid field modifier"),
        ("TOO_MANY_SUBEXPR", "Too many subexpressions (3 max)"),
        ("TIMESTAMP_MISMATCH", "Timestamp units in expression don't match"),
        ("TOO_MANY_FIELD_VARS", "Too many field variables defined"),
        ("EVENT_FILE_NOT_FOUND", "Event file not found"),
        ("HIST_NOT_FOUND", "Matching event histogram not found"),
        ("HIST_CREATE_FAIL", "Couldn't create histogram for field"),
        ("SYNTH_VAR_NOT_FOUND", "Couldn't find synthetic variable"),
        ("SYNTH_EVENT_NOT_FOUND", "Couldn't find synthetic event"),
        ("SYNTH_TYPE_MISMATCH", "Param type doesn't match synthetic event field type"),
        ("SYNTH_COUNT_MISMATCH", "Param count doesn't match synthetic event field count"),
        ("FIELD_VAR_PARSE_FAIL", "Couldn't parse field variable"),
        ("VAR_CREATE_FIND_FAIL", "Couldn't create or find variable"),
        ("ONX_NOT_VAR", "For onmax(x) or onchange(x), x must be a variable"),
        ("ONX_VAR_NOT_FOUND", "Couldn't find onmax or onchange variable"),
        ("ONX_VAR_CREATE_FAIL", "Couldn't create onmax or onchange variable"),
        ("FIELD_VAR_CREATE_FAIL", "Couldn't create field variable"),
        ("TOO_MANY_PARAMS", "Too many action params"),
        ("PARAM_NOT_FOUND", "Couldn't find param"),
        ("INVALID_PARAM", "Invalid action param"),
        ("ACTION_NOT_FOUND", "No action found"),
        ("NO_SAVE_PARAMS", "No params found for save()"),
        ("TOO_MANY_SAVE_ACTIONS", "Can't have more than one save() action per hist"),
        ("ACTION_MISMATCH", "Handler doesn't support action"),
        ("NO_CLOSING_PAREN", "No closing paren found"),
        ("SUBSYS_NOT_FOUND", "Missing subsystem"),
        ("INVALID_SUBSYS_EVENT", "Invalid subsystem or event name"),
        ("INVALID_REF_KEY", "Using variable references in keys not supported"),
        ("VAR_NOT_FOUND", "Couldn't find variable"),
        ("FIELD_NOT_FOUND", "Couldn't find field"),
        ("EMPTY_ASSIGNMENT", "Empty assignment"),
        ("INVALID_SORT_MODIFIER", "Invalid sort modifier"),
        ("EMPTY_SORT_FIELD", "Empty sort field"),
        ("TOO_MANY_SORT_FIELDS", "Too many sort fields (Max = 2)"),
        ("INVALID_SORT_FIELD", "Sort field must be a key or a val"),
        ("INVALID_STR_OPERAND", "String type can not be an operand in expression"),
        ("EXPECT_NUMBER", "Expecting numeric literal"),
        ("UNARY_MINUS_SUBEXPR", "Unary minus not supported in sub-expressions"),
        ("DIVISION_BY_ZERO", "Division by zero"),
        ("NEED_NOHC_VAL", "Non-hitcount value is required for 'nohitcount'"),
    ];

    #[test]
    fn kinds_follow_c_list_in_order() {
        for (i, kind) in HistErrorKind::ALL.iter().enumerate() {
            assert_eq!(kind.c_name(), C_LIST[i].0);
            assert_eq!(kind.message(), C_LIST[i].1);
            assert_eq!(usize::from(kind.c_index()), i + 1);
            assert_eq!(C_ERR_TEXT[i + 1], kind.message());
        }
        assert_eq!(C_ERR_TEXT[0], "No error");
    }

    #[test]
    fn errno_of_kinds() {
        assert_eq!(HistErrorKind::DivisionByZero.errno(), errno::EDOM);
        assert_eq!(HistErrorKind::NeedNohcVal.errno(), errno::ENOENT);
        assert_eq!(HistErrorKind::TriggerEnoentClear.errno(), errno::ENOENT);
        assert_eq!(HistErrorKind::TriggerEexist.errno(), errno::EEXIST);
        assert_eq!(HistErrorKind::TooManySaveActions.errno(), errno::EEXIST);
        let einval = HistErrorKind::ALL
            .iter()
            .filter(|k| k.errno() == errno::EINVAL)
            .count();
        assert_eq!(einval, HIST_ERROR_KINDS - 5);
    }

    #[test]
    fn hist_error_accessors() {
        let e = HistError::new(HistErrorKind::EmptyAssignment, 37);
        assert_eq!(e.kind(), Some(HistErrorKind::EmptyAssignment));
        assert_eq!(e.message(), Some("Empty assignment"));
        assert_eq!(e.pos(), 37);
        assert_eq!(e.pos_in_text(5), Some(32));
        assert_eq!(e.errno(), errno::EINVAL);
        assert_eq!(format!("{e}"), "Empty assignment (at 37, errno 22)");

        let e = HistError::with_errno(HistErrorKind::SetClockFail, 3, 12);
        assert_eq!(e.errno(), 12);
        assert_eq!(e.earlier(), None);

        let e =
            HistError::new(HistErrorKind::FieldNotFound, 9).after(HistErrorKind::VarNotFound, 10);
        assert_eq!(e.kind(), Some(HistErrorKind::FieldNotFound));
        assert_eq!(e.earlier(), Some((HistErrorKind::VarNotFound, 10)));
        assert_eq!(e.pos(), 9);
        let e = e.after(HistErrorKind::VarNotUnique, 10);
        assert_eq!(e.earlier(), Some((HistErrorKind::VarNotFound, 10)));
        let logged: std::vec::Vec<_> = e.logged_before().collect();
        assert_eq!(
            logged,
            [
                (HistErrorKind::VarNotUnique, 10),
                (HistErrorKind::VarNotFound, 10)
            ]
        );

        let e = HistError::silent(errno::ERANGE);
        assert_eq!(e.kind(), None);
        assert_eq!(e.message(), None);
        assert_eq!(e.pos(), 0);
        assert_eq!(e.pos_in_text(5), None);
        assert_eq!(format!("{e}"), "errno 34");
        assert_eq!(
            format!("{}", HistErrorKind::DivisionByZero),
            "Division by zero"
        );
    }
}
