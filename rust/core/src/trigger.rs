// SPDX-License-Identifier: GPL-2.0

//! The `rhist` command as the trigger framework sees it: the names it
//! registers under, the prefix its commands and error_log entries carry,
//! and the first check of a command's text.

use core::ffi::CStr;

use super::error::{HistError, C_ERR_TEXT_NUL, HIST_ERROR_KINDS};
use super::grammar::{parse_trigger_ext, parse_trigger_in, TriggerSpec};

/// The names of rhist's trigger commands and per-event files.
#[derive(Debug)]
pub struct Names {
    /// The trigger command, also the name of the per-event file that
    /// shows its histograms.
    pub command: &'static CStr,
    /// What its commands and error_log entries start with: the command
    /// and a colon.
    pub prefix: &'static str,
    /// The per-event debug file.
    pub debug_file: &'static CStr,
    /// The per-event file that shows the histograms as JSON (rhist's
    /// extension).
    pub json_file: &'static CStr,
    /// The command that continues another event's histograms.
    pub enable: &'static CStr,
    /// The command that pauses them.
    pub disable: &'static CStr,
}

/// Beside C's hist: `rhist`, `rhist_debug`, `rhist_json`, `enable_rhist`
/// and `disable_rhist`.
pub const RHIST: Names = Names {
    command: c"rhist",
    prefix: "rhist:",
    debug_file: c"rhist_debug",
    json_file: c"rhist_json",
    enable: c"enable_rhist",
    disable: c"disable_rhist",
};

/// In place of C's hist, on a kernel built without it: hist's own names.
pub const HIST: Names = Names {
    command: c"hist",
    prefix: "hist:",
    debug_file: c"hist_debug",
    json_file: c"hist_json",
    enable: c"enable_hist",
    disable: c"disable_hist",
};

/// The prefix of rhist commands under its own names, where hist has `hist:`.
#[cfg(not(MODULE))]
pub const PREFIX: &str = RHIST.prefix;

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
#[cfg(not(MODULE))]
pub fn parse(text: &str) -> Result<TriggerSpec<'_>, HistError> {
    parse_as(&RHIST, text)
}

/// [`parse`] for the command registered under `names`.
pub fn parse_as<'a>(names: &Names, text: &'a str) -> Result<TriggerSpec<'a>, HistError> {
    parse_trigger_in(names.prefix, text)
}

/// [`parse_as`] with rhist's `grow` flag: see
/// [`super::grammar::parse_trigger_ext`].
pub fn parse_ext_as<'a>(names: &Names, text: &'a str) -> Result<TriggerSpec<'a>, HistError> {
    parse_trigger_ext(names.prefix, text)
}

#[cfg(test)]
mod tests {
    use super::super::error::HistErrorKind;
    use super::*;
    use std::format;

    #[test]
    fn messages_are_nul_terminated_c_texts() {
        for kind in HistErrorKind::ALL {
            let text = C_MESSAGES[kind.c_index() as usize];
            assert_eq!(text.strip_suffix('\0'), Some(kind.message()));
        }
        assert_eq!(C_MESSAGES[0], "No error\0");
    }

    #[test]
    fn names_agree_with_their_prefix() {
        for names in [&RHIST, &HIST] {
            let command = names.command.to_str().unwrap();
            assert_eq!(names.prefix, format!("{command}:"));
            assert_eq!(names.debug_file.to_str(), Ok(&*format!("{command}_debug")));
            assert_eq!(names.json_file.to_str(), Ok(&*format!("{command}_json")));
            assert_eq!(names.enable.to_str(), Ok(&*format!("enable_{command}")));
            assert_eq!(names.disable.to_str(), Ok(&*format!("disable_{command}")));
        }
        assert_eq!(HIST.prefix, super::super::grammar::HIST_PREFIX);
    }

    #[test]
    fn positions_count_from_the_prefix_of_the_names() {
        let text = "keys=a:x=b,zz";
        let pos = |names: &Names| parse_as(names, text).unwrap_err().pos();
        assert_eq!(pos(&RHIST), "rhist:keys=a:x=b,".len());
        assert_eq!(pos(&HIST), "hist:keys=a:x=b,".len());
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
