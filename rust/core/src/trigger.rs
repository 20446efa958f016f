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
/// follows `hist:`, and checks the syntax of every part whose look-ups the
/// build step does. Error positions count from the start of `rhist:`.
pub fn parse(text: &str) -> Result<TriggerSpec<'_>, HistError> {
    let spec = parse_trigger_in(PREFIX, text)?;
    spec.check_syntax()?;
    Ok(spec)
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
        let err = parse("keys=a.bogus").unwrap_err();
        assert_eq!(err.kind(), Some(HistErrorKind::BadFieldModifier));
        // "rhist:keys=a." is 13 bytes: the caret is at "bogus".
        assert_eq!(err.pos(), 13);
        assert!(parse("keys=pid if pid > 1").is_ok());
        assert!(parse("vals=b").is_err());
    }
}
