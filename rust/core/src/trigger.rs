// SPDX-License-Identifier: GPL-2.0

//! The `rhist` command as the trigger framework sees it: its name, the
//! prefix its commands and error_log entries carry, and the first check of
//! a command's text.

use super::error::{HistError, C_ERR_TEXT_NUL, HIST_ERROR_KINDS};
use super::grammar::{parse_trigger_in, TriggerSpec};

/// The prefix of rhist commands, where hist has `hist:`.
pub const PREFIX: &str = "rhist:";

/// Number of entries of the error_log message table.
pub const ERROR_COUNT: usize = HIST_ERROR_KINDS + 1;

/// The error_log message table, NUL-terminated, indexed as C's `err_text[]`.
pub const C_MESSAGES: [&str; ERROR_COUNT] = C_ERR_TEXT_NUL;

/// Parses what follows `rhist:` (filter included), as hist parses what
/// follows `hist:`: the steps C takes before its first look-up (the
/// filter split, `parse_hist_trigger_attrs()`, the handlers up to an
/// `onmatch()` event and `parse_var_defs()`).  The rest of the syntax is
/// checked by the build, in C's order, mixed with the look-ups (C stops at
/// the first error, so an unknown field comes before a bad modifier
/// further on).  Error positions count from the start of `rhist:`.
pub fn parse(text: &str) -> Result<TriggerSpec<'_>, HistError> {
    parse_trigger_in(PREFIX, text)
}

#[cfg(test)]
mod tests {
    use super::super::error::HistErrorKind;
    use super::*;

    #[test]
    fn messages_are_nul_terminated_c_texts() {
        for kind in HistErrorKind::ALL {
            let text = C_MESSAGES[kind.c_index() as usize];
            assert_eq!(text.strip_suffix('\0'), Some(kind.message()));
        }
        assert_eq!(C_MESSAGES[0], "No error\0");
    }

    #[test]
    fn positions_count_from_the_rhist_prefix() {
        let err = parse("keys=a:x=b,zz").unwrap_err();
        assert_eq!(err.kind(), Some(HistErrorKind::MalformedAssignment));
        // "rhist:keys=a:x=b," is 17 bytes: the caret is at "zz".
        assert_eq!(err.pos(), 17);
        assert!(parse("keys=pid if pid > 1").is_ok());
        assert!(parse("vals=b").is_err());
    }

    #[test]
    fn field_syntax_is_left_to_the_build() {
        // C looks `a` up before it parses the modifier of the next key:
        // the parse must not report the modifier first.
        assert!(parse("keys=a,b.bogus").is_ok());
        assert!(parse("keys=a:vals=b/0").is_ok());
        assert!(parse("keys=a:sort=b.foo").is_ok());
    }
}
