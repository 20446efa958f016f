// SPDX-License-Identifier: GPL-2.0

//! Prometheus's text exposition format (version 0.0.4), written by hand:
//! a family is a `# HELP` and a `# TYPE` line and its samples, a sample
//! is `name{label="value",...} number`. The rules this module keeps:
//!
//! - Metric and label names match `[a-zA-Z_:][a-zA-Z0-9_:]*` (label
//!   names without `:`); anything else in a name becomes `_`, and a name
//!   that would start with a digit gets a leading `_`. Label names that
//!   start with `__` are Prometheus's own: ours never do.
//! - Label values escape `\`, `"` and newline; HELP text escapes `\` and
//!   newline. Any byte sequence is a valid label value once it is UTF-8:
//!   rhist's keys may hold any byte, and bytes that are not UTF-8 are
//!   written as `\xNN` text (a backslash escaped as `\\`), so that two
//!   different keys never print as the same label value.
//! - A family's samples are contiguous and each label set appears once.

use std::fmt::Write;

/// A metric family's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Summary,
    Histogram,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Summary => "summary",
            Kind::Histogram => "histogram",
        }
    }
}

/// `text` as a metric name (or a label name, with `colon` false).
pub fn sanitize(text: &str, colon: bool) -> String {
    let mut out = String::with_capacity(text.len() + 1);
    for (i, c) in text.chars().enumerate() {
        let ok = c.is_ascii_alphabetic() || c == '_' || (colon && c == ':');
        let ok = ok || (i > 0 && c.is_ascii_digit());
        match (ok, i, c.is_ascii_digit()) {
            (true, _, _) => out.push(c),
            (false, 0, true) => {
                out.push('_');
                out.push(c);
            }
            (false, _, _) => out.push('_'),
        }
    }
    if out.is_empty() {
        out.push('_');
    }
    // `__` starts Prometheus's reserved label names.
    if !colon && out.starts_with("__") {
        out.replace_range(..2, "_x");
    }
    out
}

/// Bytes as a label value's text: UTF-8 kept, other bytes as `\xNN`.
pub fn bytes_text(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                // Written out below as `\\`: keeps `\xNN` unambiguous.
                '\\' => out.push_str("\\\\"),
                _ => out.push(c),
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

/// Writes `v` escaped as a label value.
fn escape_label(out: &mut String, v: &str) {
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            _ => out.push(c),
        }
    }
}

/// Writes `v` escaped as HELP text.
fn escape_help(out: &mut String, v: &str) {
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            _ => out.push(c),
        }
    }
}

/// A family being written: its samples follow its header.
pub struct Family<'o> {
    out: &'o mut String,
    name: String,
}

/// Starts a family `name` (sanitized) of `kind` with `help`.
pub fn family<'o>(out: &'o mut String, name: &str, kind: Kind, help: &str) -> Family<'o> {
    let name = sanitize(name, true);
    let _ = write!(out, "# HELP {name} ");
    escape_help(out, help);
    let _ = writeln!(out, "\n# TYPE {name} {}", kind.name());
    Family { out, name }
}

impl Family<'_> {
    /// A sample of the family: `suffix` after its name (`""`, `_sum`,
    /// `_count`), `labels` as (name, value), names already sanitized.
    pub fn sample(&mut self, suffix: &str, labels: &[(&str, &str)], value: f64) {
        let text = match value {
            v if v.is_nan() => "NaN".to_string(),
            v if v.is_infinite() && v > 0.0 => "+Inf".to_string(),
            v if v.is_infinite() => "-Inf".to_string(),
            v => v.to_string(),
        };
        self.write_raw(suffix, labels, &text);
    }

    /// An integer sample, written exactly: Prometheus keeps a float64,
    /// but other readers of the text may keep all 64 bits.
    pub fn sample_u64(&mut self, suffix: &str, labels: &[(&str, &str)], value: u64) {
        self.write_raw(suffix, labels, &value.to_string());
    }

    /// A sample whose number is already text (a JSON number, exact).
    pub fn write_raw(&mut self, suffix: &str, labels: &[(&str, &str)], value: &str) {
        let out = &mut *self.out;
        out.push_str(&self.name);
        out.push_str(suffix);
        if !labels.is_empty() {
            out.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(k);
                out.push_str("=\"");
                escape_label(out, v);
                out.push('"');
            }
            out.push('}');
        }
        out.push(' ');
        out.push_str(value);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(sanitize("sched_switch", true), "sched_switch");
        assert_eq!(
            sanitize("common_pid.execname", false),
            "common_pid_execname"
        );
        assert_eq!(sanitize("9p", true), "_9p");
        assert_eq!(sanitize("a:b", true), "a:b");
        assert_eq!(sanitize("a:b", false), "a_b");
        assert_eq!(sanitize("", false), "_");
        assert_eq!(sanitize("__name", false), "_xname");
        assert_eq!(sanitize("é-x", true), "__x");
    }

    #[test]
    fn label_values_escape() {
        let mut out = String::new();
        let mut f = family(&mut out, "m", Kind::Counter, "a \\ help\nline");
        f.sample("", &[("k", "a\"b\\c\nd")], 1.0);
        assert_eq!(
            out,
            "# HELP m a \\\\ help\\nline\n# TYPE m counter\nm{k=\"a\\\"b\\\\c\\nd\"} 1\n"
        );
    }

    #[test]
    fn bytes_that_are_not_utf8() {
        assert_eq!(bytes_text(b"bash"), "bash");
        assert_eq!(bytes_text(b"a\xffb"), "a\\xffb");
        // A backslash and the text `\xff` differ from the byte 0xff.
        assert_eq!(bytes_text(b"\\xff"), "\\\\xff");
        assert_ne!(bytes_text(b"\\xff"), bytes_text(b"\xff"));
    }

    #[test]
    fn integers_stay_exact() {
        let mut out = String::new();
        let mut f = family(&mut out, "m", Kind::Counter, "h");
        f.sample_u64("_total", &[], u64::MAX);
        f.write_raw("_total", &[("a", "1")], "-5");
        assert!(out.ends_with("m_total 18446744073709551615\nm_total{a=\"1\"} -5\n"));
    }
}
