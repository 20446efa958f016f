// SPDX-License-Identifier: GPL-2.0

//! The `hist` file's text, byte for byte as C's trace_events_hist.c writes
//! it: the header, one line per entry (keys in braces, then values), and
//! the Totals block. Symbols and syscall names come from a [`Resolver`]
//! that the kernel shell implements with kallsyms and the syscall table.

use core::fmt::{self, Write};

use super::sketch::Quantile;

/// How a key is shown: C's key display flags, at most one of which applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyDisplay {
    /// `%10llu`
    Plain,
    /// `.hex`: `%llx`
    Hex,
    /// `.sym`: `[%llx] %-45ps`
    Sym,
    /// `.sym-offset`: `[%llx] %-55pS`
    SymOffset,
    /// `.execname`: `%-16s[%10llu]`, the comm saved with the entry
    Execname,
    /// `.syscall`: `%-30s[%3llu]`
    Syscall,
    /// `.log2`: `~ 2^%-2llu`
    Log2,
    /// `.buckets=N`: `~ %llu-%llu`
    Buckets(u64),
    /// A string key: `%-50s`
    Str,
    /// A stack trace, one frame per line.
    Stacktrace,
}

/// How a value is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValDisplay {
    /// `%10llu`
    Plain,
    /// `.hex`: `%10llx`
    Hex,
    /// `.percent`: the share of the column's total, `%3u.%02u`
    Percent,
    /// `.graph`: a 20-character bar scaled to the column's maximum
    Graph,
    /// A statistic of a signed value (rhist's, see [`super::stats`]):
    /// `%10lld`
    Signed,
}

/// What the shell knows that the core does not: symbols and syscalls.
pub trait Resolver {
    /// Writes the symbol at `addr` as `%ps` does (`name`), or as `%pS`
    /// does (`name+0xoff/0xsize`) when `with_offset` is set; an address
    /// without a symbol is written as `0x` and lowercase hex.
    fn symbol(&self, addr: u64, with_offset: bool, out: &mut dyn Write) -> fmt::Result;
    /// The name of syscall `nr`, if there is one.
    fn syscall_name(&self, nr: u64) -> Option<&str>;
    /// Called now and then by a long write (every
    /// [`PAUSE_EVERY`] entries): the kernel's may reschedule there.
    fn pause(&self) {}
}

/// How many entries a long write writes between two
/// [`Resolver::pause`] calls.
pub const PAUSE_EVERY: usize = 256;

/// A resolver that knows nothing: every address is shown as hex and every
/// syscall as unknown. Used by host tests.
#[cfg(not(MODULE))]
pub struct NoSymbols;

#[cfg(not(MODULE))]
impl Resolver for NoSymbols {
    fn symbol(&self, addr: u64, _with_offset: bool, out: &mut dyn Write) -> fmt::Result {
        write!(out, "0x{addr:x}")
    }
    fn syscall_name(&self, _nr: u64) -> Option<&str> {
        None
    }
}

/// Depth of the stack traces hist keeps (`HIST_STACKTRACE_DEPTH`).
pub const STACKTRACE_DEPTH: usize = 16;

/// A small stack buffer that text can be formatted into, for padding.
struct Buf<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> Buf<N> {
    fn new() -> Self {
        Buf {
            bytes: [0; N],
            len: 0,
        }
    }
    fn as_str(&self) -> &str {
        // Only whole `str`s are ever appended, so this cannot fail; fall
        // back to "" rather than panic.
        core::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl<const N: usize> Write for Buf<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // Truncate like snprintf rather than fail, on a char boundary.
        let mut take = s.len().min(N - self.len);
        while !s.is_char_boundary(take) {
            take -= 1;
        }
        self.bytes[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take;
        Ok(())
    }
}

/// Passes text on to `out`, counting its bytes.
struct Counting<'o> {
    out: &'o mut dyn Write,
    len: usize,
}

impl Write for Counting<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.len += s.len();
        self.out.write_str(s)
    }
}

/// Reads the u64 at the start of `bytes` (native endian, as C stores it);
/// missing bytes read as zero.
pub fn read_u64(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    let n = bytes.len().min(8);
    word[..n].copy_from_slice(&bytes[..n]);
    u64::from_ne_bytes(word)
}

/// The text of a NUL-terminated (or full) string key.
fn key_str(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

/// Writes bytes as C's `%s` would. `fmt::Write` takes only UTF-8, so a
/// string that is not valid UTF-8 has its non-ASCII bytes written as `?`.
fn write_c_str(out: &mut dyn Write, bytes: &[u8]) -> fmt::Result {
    match core::str::from_utf8(bytes) {
        Ok(s) => out.write_str(s),
        Err(_) => {
            for &b in bytes {
                out.write_char(if b.is_ascii() { b as char } else { '?' })?;
            }
            Ok(())
        }
    }
}

/// Writes `bytes` left-justified in `width` columns (`%-Ns`).
pub(crate) fn write_padded(out: &mut dyn Write, bytes: &[u8], width: usize) -> fmt::Result {
    write_c_str(out, bytes)?;
    for _ in bytes.len()..width {
        out.write_char(' ')?;
    }
    Ok(())
}

/// What writes the names of hist fields that are not stored as text (an
/// expression's name is its text as `expr_str()` rebuilds it).
pub trait FieldNames {
    /// Writes the name of field `id`, as C's `hist_field_name()` gives it.
    fn write_field_name(&self, id: u8, out: &mut dyn Write) -> fmt::Result;
}

/// The name of a key: text, or a field whose name is written on demand.
#[derive(Clone, Copy)]
pub enum KeyName<'a> {
    /// The name itself.
    Text(&'a str),
    /// Field `id` of a [`FieldNames`].
    Field(&'a dyn FieldNames, u8),
}

impl KeyName<'_> {
    /// The name, if it is text.
    pub fn as_text(&self) -> Option<&str> {
        match *self {
            KeyName::Text(s) => Some(s),
            KeyName::Field(..) => None,
        }
    }
}

impl fmt::Display for KeyName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            KeyName::Text(s) => f.write_str(s),
            KeyName::Field(names, id) => names.write_field_name(id, f),
        }
    }
}

impl fmt::Debug for KeyName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", format_args!("{self}"))
    }
}

impl<'a> From<&'a str> for KeyName<'a> {
    fn from(s: &'a str) -> Self {
        KeyName::Text(s)
    }
}

/// One key of an entry: its name, how it is shown, and its bytes in the
/// entry's key. `comm` is the command name saved with the entry, for
/// `.execname`.
#[derive(Debug, Clone, Copy)]
pub struct KeyPart<'a> {
    /// The name C prints (`hist_field_name()`).
    pub name: KeyName<'a>,
    /// How it is shown.
    pub display: KeyDisplay,
    /// The key's bytes.
    pub bytes: &'a [u8],
}

/// Writes an entry's keys: `{ name: value, name: value }`.
#[cfg(not(MODULE))]
pub fn write_keys(
    out: &mut dyn Write,
    keys: &[KeyPart<'_>],
    comm: &[u8],
    resolver: &dyn Resolver,
) -> fmt::Result {
    write_key_parts(out, keys.iter().copied(), comm, resolver)
}

/// [`write_keys`] of the parts `keys` gives, one after the other (no
/// array of them on the stack: a trigger has up to eight).
pub fn write_key_parts<'k>(
    out: &mut dyn Write,
    keys: impl Iterator<Item = KeyPart<'k>>,
    comm: &[u8],
    resolver: &dyn Resolver,
) -> fmt::Result {
    let mut multiline = false;
    out.write_str("{ ")?;
    for (i, key) in keys.enumerate() {
        if i > 0 {
            out.write_str(", ")?;
        }
        let v = read_u64(key.bytes);
        let name = key.name;
        match key.display {
            KeyDisplay::Plain => write!(out, "{name}: {v:10}")?,
            KeyDisplay::Hex => write!(out, "{name}: {v:x}")?,
            KeyDisplay::Sym | KeyDisplay::SymOffset => {
                let with_offset = key.display == KeyDisplay::SymOffset;
                write!(out, "{name}: [{v:x}] ")?;
                // Written straight out, however long (a buffer here once
                // cut long names short), then padded.
                let mut sym = Counting { out, len: 0 };
                resolver.symbol(v, with_offset, &mut sym)?;
                let len = sym.len;
                for _ in len..if with_offset { 55 } else { 45 } {
                    out.write_char(' ')?;
                }
            }
            KeyDisplay::Execname => {
                write!(out, "{name}: ")?;
                write_padded(out, key_str(comm), 16)?;
                write!(out, "[{v:10}]")?;
            }
            KeyDisplay::Syscall => {
                let sc = resolver.syscall_name(v).unwrap_or("unknown_syscall");
                write!(out, "{name}: ")?;
                write_padded(out, sc.as_bytes(), 30)?;
                write!(out, "[{v:3}]")?;
            }
            KeyDisplay::Log2 => {
                write!(out, "{name}: ~ 2^")?;
                let mut n = Buf::<24>::new();
                write!(n, "{v}")?;
                write_padded(out, n.as_str().as_bytes(), 2)?;
            }
            KeyDisplay::Buckets(size) => write!(
                out,
                "{name}: ~ {v}-{}",
                v.wrapping_add(size).wrapping_sub(1)
            )?,
            KeyDisplay::Str => {
                write!(out, "{name}: ")?;
                write_padded(out, key_str(key.bytes), 50)?;
            }
            KeyDisplay::Stacktrace => {
                let text = name.as_text();
                if text == Some("common_stacktrace") || text == Some("") {
                    out.write_str("common_stacktrace:\n")?;
                } else {
                    write!(out, "{name}.stacktrace")?;
                }
                write_stacktrace(out, key.bytes, resolver)?;
                multiline = true;
            }
        }
    }
    if !multiline {
        out.write_char(' ')?;
    }
    out.write_char('}')
}

/// Writes a stack trace key: one line per frame (nine spaces, then `%pS`),
/// up to the first zero entry.
fn write_stacktrace(out: &mut dyn Write, bytes: &[u8], resolver: &dyn Resolver) -> fmt::Result {
    for frame in bytes.chunks_exact(8).take(STACKTRACE_DEPTH) {
        let addr = read_u64(frame);
        if addr == 0 {
            break;
        }
        out.write_str("         ")?;
        resolver.symbol(addr, true, out)?;
        out.write_char('\n')?;
    }
    Ok(())
}

/// The column statistics `.percent` and `.graph` need.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ValStat {
    /// Sum of the column over all entries.
    pub total: u64,
    /// Largest value in the column.
    pub max: u64,
}

/// C's `__get_percentage()`: 100 times the percentage of `val` in
/// `total`, or `u32::MAX` when it cannot be computed.
pub fn percentage(val: u64, total: u64) -> u32 {
    if total == 0 {
        return if val != 0 { u32::MAX } else { 0 };
    }
    if val < u64::MAX / 10000 {
        return (val * 10000 / total) as u32;
    }
    let total = total / 10000;
    if total == 0 {
        return if val != 0 { u32::MAX } else { 0 };
    }
    (val / total) as u32
}

/// Writes one value: ` name: %10llu` and its variants.
pub fn write_val(
    out: &mut dyn Write,
    name: impl fmt::Display,
    display: ValDisplay,
    val: u64,
    stat: ValStat,
) -> fmt::Result {
    match display {
        ValDisplay::Percent => match percentage(val, stat.total) {
            u32::MAX => write!(out, " {name} (%):[ERROR]"),
            pc => write!(out, " {name} (%): {:3}.{:02}", pc / 100, pc % 100),
        },
        ValDisplay::Graph => {
            write!(out, " {name}: ")?;
            write_bar(out, val, stat.max)
        }
        ValDisplay::Hex => write!(out, " {name}: {val:10x}"),
        ValDisplay::Plain => write!(out, " {name}: {val:10}"),
        ValDisplay::Signed => write!(out, " {name}: {:10}", val as i64),
    }
}

/// C's `__fill_bar_str()` with a 20-character bar, right-aligned in 20
/// columns as `%20s` prints it.
fn write_bar(out: &mut dyn Write, val: u64, max: u64) -> fmt::Result {
    const WIDTH: u64 = 20;
    let pc = percentage(val, max);
    if pc == u32::MAX {
        return write!(out, "{:>20}", "[ERROR]");
    }
    let len = u64::from(pc) * WIDTH / 10000;
    for i in 0..WIDTH {
        out.write_char(if i < len { '#' } else { ' ' })?;
    }
    Ok(())
}

/// Writes the lines that start each histogram in the file; `info` writes
/// the trigger info line (with its newline). `n` numbers the histograms of
/// the file from 0.
#[cfg(not(MODULE))]
pub fn write_header(
    out: &mut dyn Write,
    n: usize,
    info: impl FnOnce(&mut dyn Write) -> fmt::Result,
) -> fmt::Result {
    if n > 0 {
        out.write_str("\n\n")?;
    }
    out.write_str("# event histogram\n#\n# trigger info: ")?;
    info(out)?;
    out.write_str("#\n\n")
}

/// Writes one quantile of a `.quantiles` value as [`write_val`] writes
/// a value (` lat.p99: %10llu`, `%10llx` for `.hex`), `stem` being the
/// value's name (`lat`) and `label` the quantile's (`p99`). A quantile
/// the sketch knows only as a range (its pool ran dry) is written
/// `[low,high]`, both included, right-aligned in the same ten columns: a
/// text no tool reads as a number (`[` is not a digit). One with no
/// values (a sketch read before its first record) is 0.
pub fn write_quantile(
    out: &mut dyn Write,
    stem: impl fmt::Display,
    label: &str,
    display: ValDisplay,
    q: Quantile,
) -> fmt::Result {
    let name = format_args!("{stem}.{label}");
    let (low, high) = match q {
        Quantile::Empty => return write_val(out, name, display, 0, ValStat::default()),
        Quantile::Value(v) => return write_val(out, name, display, v, ValStat::default()),
        Quantile::Within { low, high } => (low, high),
    };
    let hex = display == ValDisplay::Hex;
    let width = digits(low, hex) + digits(high, hex) + 3;
    write!(out, " {name}: ")?;
    for _ in width..10 {
        out.write_char(' ')?;
    }
    match hex {
        true => write!(out, "[{low:x},{high:x}]"),
        false => write!(out, "[{low},{high}]"),
    }
}

/// The digits of `v` in decimal, or in hex.
fn digits(mut v: u64, hex: bool) -> usize {
    let base = if hex { 16 } else { 10 };
    let mut n = 1;
    while v >= base {
        v /= base;
        n += 1;
    }
    n
}

/// Writes the Totals block that ends each histogram.
pub fn write_totals(out: &mut dyn Write, hits: u64, entries: u32, dropped: u64) -> fmt::Result {
    write!(
        out,
        "\nTotals:\n    Hits: {hits}\n    Entries: {entries}\n    Dropped: {dropped}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;
    use std::string::String;

    fn key<'a>(name: &'a str, display: KeyDisplay, bytes: &'a [u8]) -> KeyPart<'a> {
        KeyPart {
            name: name.into(),
            display,
            bytes,
        }
    }

    fn keys(parts: &[KeyPart<'_>]) -> String {
        let mut s = String::new();
        write_keys(&mut s, parts, b"bash\0", &NoSymbols).unwrap();
        s
    }

    const N42: &[u8] = &42u64.to_ne_bytes();
    const NEG1: &[u8] = &u64::MAX.to_ne_bytes();

    #[test]
    fn plain_and_hex_keys() {
        assert_eq!(
            keys(&[key("pid", KeyDisplay::Plain, N42)]),
            "{ pid:         42 }"
        );
        assert_eq!(
            keys(&[key("a", KeyDisplay::Plain, NEG1)]),
            "{ a: 18446744073709551615 }"
        );
        assert_eq!(keys(&[key("a", KeyDisplay::Hex, N42)]), "{ a: 2a }");
    }

    #[test]
    fn compound_keys_are_comma_separated() {
        assert_eq!(
            keys(&[
                key("a", KeyDisplay::Plain, N42),
                key("b", KeyDisplay::Hex, N42)
            ]),
            "{ a:         42, b: 2a }"
        );
    }

    #[test]
    fn log2_and_buckets() {
        assert_eq!(keys(&[key("a", KeyDisplay::Log2, N42)]), "{ a: ~ 2^42 }");
        assert_eq!(
            keys(&[key("a", KeyDisplay::Log2, &3u64.to_ne_bytes())]),
            "{ a: ~ 2^3  }"
        );
        assert_eq!(
            keys(&[key("a", KeyDisplay::Buckets(100), &200u64.to_ne_bytes())]),
            "{ a: ~ 200-299 }"
        );
    }

    #[test]
    fn string_execname_syscall_sym() {
        let s = keys(&[key("comm", KeyDisplay::Str, b"sshd\0\0\0\0")]);
        assert_eq!(s, format!("{{ comm: {:<50} }}", "sshd"));
        let s = keys(&[key("common_pid", KeyDisplay::Execname, N42)]);
        assert_eq!(s, "{ common_pid: bash            [        42] }");
        let s = keys(&[key("id", KeyDisplay::Syscall, N42)]);
        assert_eq!(s, format!("{{ id: {:<30}[ 42] }}", "unknown_syscall"));
        let s = keys(&[key("ip", KeyDisplay::Sym, N42)]);
        assert_eq!(s, format!("{{ ip: [2a] {:<45} }}", "0x2a"));
        let s = keys(&[key("ip", KeyDisplay::SymOffset, N42)]);
        assert_eq!(s, format!("{{ ip: [2a] {:<55} }}", "0x2a"));
    }

    /// Symbols as long as the kernel's (KSYM_SYMBOL_LEN is about 666).
    struct LongSymbols;

    impl Resolver for LongSymbols {
        fn symbol(&self, _addr: u64, _with_offset: bool, out: &mut dyn Write) -> fmt::Result {
            for _ in 0..60 {
                out.write_str("long_name_")?;
            }
            Ok(())
        }
        fn syscall_name(&self, _nr: u64) -> Option<&str> {
            None
        }
    }

    #[test]
    fn long_symbols_are_written_whole() {
        let mut s = String::new();
        write_keys(
            &mut s,
            &[key("ip", KeyDisplay::SymOffset, N42)],
            &[],
            &LongSymbols,
        )
        .unwrap();
        assert_eq!(s, format!("{{ ip: [2a] {} }}", "long_name_".repeat(60)));
    }

    #[test]
    fn stacktrace_key_is_multiline() {
        let mut frames = [0u8; 16 * 8];
        frames[..8].copy_from_slice(&0x10u64.to_ne_bytes());
        frames[8..16].copy_from_slice(&0x20u64.to_ne_bytes());
        let s = keys(&[key("common_stacktrace", KeyDisplay::Stacktrace, &frames)]);
        assert_eq!(s, "{ common_stacktrace:\n         0x10\n         0x20\n}");
    }

    #[test]
    fn values() {
        let mut s = String::new();
        write_val(&mut s, "hitcount", ValDisplay::Plain, 7, ValStat::default()).unwrap();
        write_val(&mut s, "b", ValDisplay::Hex, 255, ValStat::default()).unwrap();
        assert_eq!(s, " hitcount:          7 b:         ff");
        s.clear();
        let neg = -12i64 as u64;
        write_val(&mut s, "c.min", ValDisplay::Signed, neg, ValStat::default()).unwrap();
        write_val(&mut s, "c.max", ValDisplay::Plain, neg, ValStat::default()).unwrap();
        assert_eq!(s, " c.min:        -12 c.max: 18446744073709551604");
    }

    #[test]
    fn percent_and_graph() {
        let stat = ValStat { total: 3, max: 2 };
        let mut s = String::new();
        write_val(&mut s, "v", ValDisplay::Percent, 1, stat).unwrap();
        assert_eq!(s, " v (%):  33.33");
        s.clear();
        write_val(
            &mut s,
            "v",
            ValDisplay::Percent,
            1,
            ValStat { total: 0, max: 0 },
        )
        .unwrap();
        assert_eq!(s, " v (%):[ERROR]");
        s.clear();
        write_val(&mut s, "v", ValDisplay::Graph, 1, stat).unwrap();
        assert_eq!(s, " v: ##########          ");
        s.clear();
        write_val(&mut s, "v", ValDisplay::Graph, 2, stat).unwrap();
        assert_eq!(s, " v: ####################");
        assert_eq!(percentage(0, 0), 0);
        assert_eq!(percentage(u64::MAX, u64::MAX), 10000);
    }

    #[test]
    fn header_and_totals() {
        let mut s = String::new();
        write_header(&mut s, 1, |o| o.write_str("hist:keys=a [active]\n")).unwrap();
        write_totals(&mut s, 10, 2, 0).unwrap();
        assert_eq!(
            s,
            "\n\n# event histogram\n#\n# trigger info: hist:keys=a [active]\n#\n\n\
             \nTotals:\n    Hits: 10\n    Entries: 2\n    Dropped: 0\n"
        );
    }
}
