// SPDX-License-Identifier: GPL-2.0

//! The text of `enable_rhist` and `disable_rhist` triggers:
//! `<system>:<event>[:<count>] [if <filter>]`, split as the tracing core's
//! `event_enable_trigger_parse()` splits the text of `enable_hist` and
//! `disable_hist`, with the same errors.

use super::error::errno::EINVAL;
use super::grammar::kstrtoull;

/// A parsed `enable_rhist`/`disable_rhist` parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnableSpec<'a> {
    /// The system of the event whose histograms are paused or continued.
    pub system: &'a [u8],
    /// That event's name.
    pub event: &'a [u8],
    /// What follows the event name, unparsed: its presence makes the
    /// trigger a counted one, its first `:` part is the count
    /// (see [`EnableSpec::count`]).
    pub count_text: Option<&'a [u8]>,
    /// The filter after `if`, if not empty.
    pub filter: Option<&'a [u8]>,
}

impl<'a> EnableSpec<'a> {
    /// Splits `text`, everything after the command's `:`, as
    /// `event_trigger_separate_filter()` and the `strsep()` calls of
    /// `event_enable_trigger_parse()` do. `None` is what C gets when
    /// nothing follows the command. Fails with `EINVAL` where C does
    /// before it looks the event up.
    pub fn parse(text: Option<&'a [u8]>) -> Result<Self, i32> {
        let text = text.ok_or(EINVAL)?;
        let (param, filter) = match text.iter().position(|&b| b == b' ' || b == b'\t') {
            Some(at) => {
                let rest = &text[at + 1..];
                let start = rest
                    .iter()
                    .position(|&b| !is_c_space(b))
                    .unwrap_or(rest.len());
                let filter = &rest[start..];
                (&text[..at], (!filter.is_empty()).then_some(filter))
            }
            None => (text, None),
        };
        let (system, rest) = split_colon(param);
        let rest = rest.ok_or(EINVAL)?;
        let (event, count_text) = split_colon(rest);
        Ok(EnableSpec {
            system,
            event,
            count_text,
            filter,
        })
    }

    /// The count, as `event_trigger_parse_num()` reads it: `None` for an
    /// unlimited trigger, else the first `:` part of
    /// [`EnableSpec::count_text`] by `kstrtoul()`, stored in C's `long`.
    pub fn count(&self) -> Result<Option<i64>, i32> {
        let Some(text) = self.count_text else {
            return Ok(None);
        };
        let (number, _) = split_colon(text);
        if number.is_empty() {
            return Err(EINVAL);
        }
        let number = core::str::from_utf8(number).map_err(|_| EINVAL)?;
        // C keeps the unsigned value in a `long`: ULONG_MAX becomes -1,
        // "unlimited", as it does there.
        Ok(Some(kstrtoull(number)? as i64))
    }
}

/// C's `isspace()`, which `skip_spaces()` uses.
fn is_c_space(b: u8) -> bool {
    b.is_ascii_whitespace() || b == 0x0b
}

/// `strsep(&s, ":")`: the part before the first `:` and, if there was
/// one, the rest after it.
fn split_colon(s: &[u8]) -> (&[u8], Option<&[u8]>) {
    match s.iter().position(|&b| b == b':') {
        Some(at) => (&s[..at], Some(&s[at + 1..])),
        None => (s, None),
    }
}

#[cfg(test)]
mod tests {
    use super::super::error::errno::ERANGE;
    use super::*;

    fn parse(s: &str) -> Result<EnableSpec<'_>, i32> {
        EnableSpec::parse(Some(s.as_bytes()))
    }

    #[test]
    fn splits_like_c() {
        let s = parse("sched:sched_switch").unwrap();
        assert_eq!((s.system, s.event), (&b"sched"[..], &b"sched_switch"[..]));
        assert_eq!((s.count_text, s.filter), (None, None));
        assert_eq!(s.count(), Ok(None));

        let s = parse("sched:sched_switch:5 if prev_pid == 1").unwrap();
        assert_eq!(s.count_text, Some(&b"5"[..]));
        assert_eq!(s.filter, Some(&b"if prev_pid == 1"[..]));
        assert_eq!(s.count(), Ok(Some(5)));

        // Only the first space or tab separates; an empty rest is no filter.
        let s = parse("a:b\t  ").unwrap();
        assert_eq!(s.filter, None);
        let s = parse("a:b:7:junk").unwrap();
        assert_eq!(s.count(), Ok(Some(7)));
        // An empty event name is C's lookup's business, not the parser's.
        assert_eq!(parse("a:").unwrap().event, b"");
    }

    #[test]
    fn errors_like_c() {
        assert_eq!(EnableSpec::parse(None), Err(EINVAL));
        assert_eq!(parse("sched"), Err(EINVAL));
        assert_eq!(parse("sched if a == 1"), Err(EINVAL));
        assert_eq!(parse("a:b:").unwrap().count(), Err(EINVAL));
        assert_eq!(parse("a:b::3").unwrap().count(), Err(EINVAL));
        assert_eq!(parse("a:b:x").unwrap().count(), Err(EINVAL));
        assert_eq!(parse("a:b:-1").unwrap().count(), Err(EINVAL));
        assert_eq!(parse("a:b:0x10").unwrap().count(), Ok(Some(16)));
        assert_eq!(parse("a:b:+3").unwrap().count(), Ok(Some(3)));
        assert_eq!(
            parse("a:b:18446744073709551615").unwrap().count(),
            Ok(Some(-1))
        );
        assert_eq!(
            parse("a:b:18446744073709551616").unwrap().count(),
            Err(ERANGE)
        );
    }
}
