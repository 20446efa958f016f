// SPDX-License-Identifier: GPL-2.0

//! The `rhist_json` file: every histogram of an event as one JSON
//! document (RFC 8259), rhist's extension beyond hist. The schema is in
//! Documentation/trace/rhist.rst ("JSON output"); [`VERSION`] numbers it.
//!
//! Written by hand, in pieces, to a [`fmt::Write`]: the document's start
//! ([`write_doc_start`]), each histogram's head
//! ([`Histogram::write_json_head`]), its entries one by one
//! ([`Histogram::write_json_entry`]) and its tail
//! ([`Histogram::write_json_tail`]), the document's end
//! ([`write_doc_end`]). The entries are those of the `hist` file, in its
//! order ([`Histogram::sort_entries`]).
//!
//! Strings are bytes: every JSON string holds characters U+0000 to
//! U+00FF only, one per byte (a consumer gets the bytes back by encoding
//! the string as Latin-1). Bytes from 0x20 to 0x7e are written as they
//! are but `"` and `\`; the others are escaped, so that any byte a key
//! string, a comm or a filter holds is written exactly, valid UTF-8 or
//! not. Numbers are JSON integers, written in full: a `u64` beyond 2^53
//! is exact in the text (a parser that reads numbers as doubles rounds
//! it), a signed statistic is negative.

use core::fmt::{self, Write};

use super::hist_data::Tracking;
use super::histogram::{Histogram, Snapshot, KEY_SIZE_MAX};
use super::map;
use super::output::{
    read_u64, KeyDisplay, KeyPart, Resolver, ValDisplay, ValStat, STACKTRACE_DEPTH,
};
use super::sketch::{self, Quantile, PERCENTILES, PERCENTILE_NAMES};
use super::stats::SlotOp;
use super::vars;

/// The schema's version, the document's `"version"`.
pub const VERSION: u32 = 1;

/// Writes `bytes` escaped as the inside of a JSON string (see the module
/// documentation).
pub fn write_escaped(out: &mut dyn Write, bytes: &[u8]) -> fmt::Result {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut rest = bytes;
    while !rest.is_empty() {
        let plain = rest
            .iter()
            .position(|&b| !(0x20..0x7f).contains(&b) || b == b'"' || b == b'\\')
            .unwrap_or(rest.len());
        let (run, tail) = rest.split_at(plain);
        // Printable ASCII: one `str`, which cannot fail to convert.
        out.write_str(core::str::from_utf8(run).unwrap_or(""))?;
        let Some((&b, tail)) = tail.split_first() else {
            break;
        };
        match b {
            b'"' => out.write_str("\\\"")?,
            b'\\' => out.write_str("\\\\")?,
            b'\n' => out.write_str("\\n")?,
            b'\t' => out.write_str("\\t")?,
            b'\r' => out.write_str("\\r")?,
            0x08 => out.write_str("\\b")?,
            0x0c => out.write_str("\\f")?,
            _ => {
                let esc = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 0xf)],
                ];
                out.write_str(core::str::from_utf8(&esc).unwrap_or(""))?;
            }
        }
        rest = tail;
    }
    Ok(())
}

/// Writes `bytes` as a JSON string, quotes included.
pub fn write_string(out: &mut dyn Write, bytes: &[u8]) -> fmt::Result {
    out.write_char('"')?;
    write_escaped(out, bytes)?;
    out.write_char('"')
}

/// A writer that escapes what goes through it for the inside of a JSON
/// string: for text only known as [`fmt::Display`].
pub struct Escaping<'o> {
    out: &'o mut dyn Write,
}

impl<'o> Escaping<'o> {
    /// Escapes into `out`.
    pub fn new(out: &'o mut dyn Write) -> Self {
        Self { out }
    }
}

impl Write for Escaping<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        write_escaped(self.out, s.as_bytes())
    }
}

/// Writes `text` as a JSON string, quotes included.
fn write_display(out: &mut dyn Write, text: impl fmt::Display) -> fmt::Result {
    out.write_char('"')?;
    write!(Escaping::new(out), "{text}")?;
    out.write_char('"')
}

/// Writes what starts the document: its version and the histograms'
/// array.
pub fn write_doc_start(out: &mut dyn Write) -> fmt::Result {
    write!(out, "{{\"version\":{VERSION},\"histograms\":[")
}

/// Writes what ends the document (and a newline).
pub fn write_doc_end(out: &mut dyn Write) -> fmt::Result {
    out.write_str("]}\n")
}

/// The name of a key's modifier in the schema ("" for none).
pub fn key_modifier(display: KeyDisplay) -> &'static str {
    match display {
        KeyDisplay::Plain | KeyDisplay::Str => "",
        KeyDisplay::Hex => "hex",
        KeyDisplay::Sym => "sym",
        KeyDisplay::SymOffset => "sym-offset",
        KeyDisplay::Execname => "execname",
        KeyDisplay::Syscall => "syscall",
        KeyDisplay::Log2 => "log2",
        KeyDisplay::Buckets(_) => "buckets",
        KeyDisplay::Stacktrace => "stacktrace",
    }
}

/// The name of a value's modifier in the schema ("" for none).
pub fn val_modifier(display: ValDisplay) -> &'static str {
    match display {
        ValDisplay::Plain | ValDisplay::Signed => "",
        ValDisplay::Hex => "hex",
        ValDisplay::Percent => "percent",
        ValDisplay::Graph => "graph",
    }
}

/// Writes one key of an entry: `{"value":..}` and, for the modifiers
/// that decode it, `"text"` as hist shows it (a stack trace's frames,
/// one string each). `comm` is the entry's saved command name.
pub fn write_key(
    out: &mut dyn Write,
    key: &KeyPart<'_>,
    comm: &[u8],
    resolver: &dyn Resolver,
) -> fmt::Result {
    let v = read_u64(key.bytes);
    match key.display {
        KeyDisplay::Str => {
            out.write_str("{\"value\":")?;
            write_string(out, c_str(key.bytes))?;
            return out.write_char('}');
        }
        KeyDisplay::Stacktrace => {
            out.write_str("{\"value\":[")?;
            let frames = || {
                key.bytes
                    .chunks_exact(8)
                    .take(STACKTRACE_DEPTH)
                    .map(read_u64)
                    .take_while(|&a| a != 0)
            };
            for (i, addr) in frames().enumerate() {
                write!(out, "{}{addr}", if i > 0 { "," } else { "" })?;
            }
            out.write_str("],\"text\":[")?;
            for (i, addr) in frames().enumerate() {
                out.write_str(if i > 0 { ",\"" } else { "\"" })?;
                resolver.symbol(addr, true, &mut Escaping::new(out))?;
                out.write_char('"')?;
            }
            return out.write_str("]}");
        }
        _ => {}
    }
    write!(out, "{{\"value\":{v}")?;
    match key.display {
        KeyDisplay::Sym | KeyDisplay::SymOffset => {
            out.write_str(",\"text\":\"")?;
            let with_offset = key.display == KeyDisplay::SymOffset;
            resolver.symbol(v, with_offset, &mut Escaping::new(out))?;
            out.write_char('"')?;
        }
        KeyDisplay::Execname => {
            out.write_str(",\"text\":")?;
            write_string(out, c_str(comm))?;
        }
        KeyDisplay::Syscall => {
            let name = resolver.syscall_name(v).unwrap_or("unknown_syscall");
            out.write_str(",\"text\":")?;
            write_string(out, name.as_bytes())?;
        }
        KeyDisplay::Log2 => write!(out, ",\"text\":\"~ 2^{v}\"")?,
        KeyDisplay::Buckets(size) => {
            let last = v.wrapping_add(size).wrapping_sub(1);
            write!(out, ",\"text\":\"~ {v}-{last}\"")?;
        }
        _ => {}
    }
    out.write_char('}')
}

/// The text of a NUL-terminated (or full) string.
fn c_str(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

/// Writes a value as its display shows it: signed or not.
fn write_number(out: &mut dyn Write, display: ValDisplay, v: u64) -> fmt::Result {
    match display {
        ValDisplay::Signed => write!(out, "{}", v as i64),
        _ => write!(out, "{v}"),
    }
}

/// Writes a `.quantiles` value's buckets: `{"name":..,"unplaced":N,
/// "counts":[[low,high,count],..]}` (no name in the totals, whose object
/// has one), every bucket of `src` that counts something, in order
/// ([`sketch::try_for_each_bucket`]).
fn write_buckets(
    out: &mut dyn Write,
    name: Option<&dyn fmt::Display>,
    src: &impl sketch::Counts,
) -> fmt::Result {
    out.write_char('{')?;
    if let Some(name) = name {
        out.write_str("\"name\":")?;
        write_display(out, name)?;
        out.write_char(',')?;
    }
    write!(out, "\"unplaced\":{},\"counts\":[", src.unplaced())?;
    let mut first = true;
    sketch::try_for_each_bucket(src, |low, high, n| {
        if !core::mem::take(&mut first) {
            out.write_char(',')?;
        }
        write!(out, "[{low},{high},{n}]")
    })?;
    out.write_str("]}")
}

/// Writes a `.quantiles` value: `{"p50":..,"p90":..,"p99":..,"p999":..}`,
/// each a number (0 without values, as the text) or `[low,high]`.
fn write_quantiles(out: &mut dyn Write, p: &[Quantile; 4]) -> fmt::Result {
    out.write_char('{')?;
    for (k, (q, label)) in p.iter().zip(PERCENTILE_NAMES).enumerate() {
        if k > 0 {
            out.write_char(',')?;
        }
        write!(out, "\"{label}\":")?;
        match *q {
            Quantile::Empty => out.write_char('0')?,
            Quantile::Value(v) => write!(out, "{v}")?,
            Quantile::Within { low, high } => write!(out, "[{low},{high}]")?,
        }
    }
    out.write_char('}')
}

impl Histogram<'_> {
    /// The printed `.quantiles` columns, in order: (value index, name,
    /// sketch index).
    fn quantile_columns(
        &self,
    ) -> impl Iterator<Item = (usize, impl fmt::Display + '_, usize)> + '_ {
        let data = self.data();
        data.printed_vals()
            .filter_map(move |(i, name, _)| Some((i, name, data.sketch_index(i)?)))
    }

    /// Writes a histogram's head: `{"trigger":..,"keys":[..],"values":[..],`
    /// and the start of its entries' array. `info` is the trigger info
    /// line's pieces (without its newline), `n` numbers the histograms
    /// of the document from 0, and `stats` are the columns'
    /// ([`Histogram::column_stats`]).
    pub fn write_json_head(
        &self,
        out: &mut dyn Write,
        n: usize,
        info: &[&[u8]],
        stats: &[ValStat; map::SUMS_MAX],
    ) -> fmt::Result {
        let data = self.data();
        if n > 0 {
            out.write_char(',')?;
        }
        out.write_str("{\"trigger\":\"")?;
        for part in info {
            write_escaped(out, part)?;
        }
        out.write_str("\",\"keys\":[")?;
        let zeros = [0u8; KEY_SIZE_MAX];
        let parts = data.key_parts(&zeros[..data.key_size().min(KEY_SIZE_MAX)]);
        for (k, part) in parts.enumerate() {
            if k > 0 {
                out.write_char(',')?;
            }
            out.write_str("{\"name\":")?;
            write_display(out, part.name)?;
            out.write_str(",\"type\":")?;
            write_string(out, data.key_type(k).as_bytes())?;
            write!(out, ",\"modifier\":\"{}\"", key_modifier(part.display))?;
            if let KeyDisplay::Buckets(size) = part.display {
                write!(out, ",\"bucket_size\":{size}")?;
            }
            out.write_char('}')?;
        }
        out.write_str("],\"values\":[")?;
        for (k, (i, name, display)) in data.printed_vals().enumerate() {
            if k > 0 {
                out.write_char(',')?;
            }
            out.write_str("{\"name\":")?;
            write_display(out, name)?;
            out.write_str(",\"field\":")?;
            write_display(out, Stem(self, i))?;
            out.write_str(",\"type\":")?;
            write_string(out, data.val_type(i).as_bytes())?;
            write!(out, ",\"modifier\":\"{}\"", val_modifier(display))?;
            if let Some(stat) = data.val_stat(i) {
                write!(out, ",\"statistic\":\"{}\"", stat.name())?;
            }
            write!(out, ",\"signed\":{}", display == ValDisplay::Signed)?;
            if matches!(display, ValDisplay::Percent | ValDisplay::Graph) {
                let s = stats.get(i).copied().unwrap_or_default();
                write!(out, ",\"total\":{},\"max\":{}", s.total, s.max)?;
            }
            out.write_char('}')?;
        }
        out.write_str("],\"entries\":[")
    }

    /// Writes entry `idx` of the map (from [`Histogram::sort_entries`]),
    /// after a comma unless it is the `first` written (which it then
    /// clears):
    /// `{"key":[..],"values":[..]}`, and `"handlers"` when the trigger
    /// has `onmax()` or `onchange()` actions that print.
    pub fn write_json_entry(
        &self,
        out: &mut dyn Write,
        idx: u32,
        first: &mut bool,
        resolver: &dyn Resolver,
    ) -> fmt::Result {
        let Some(elt) = self.map().elt(idx) else {
            return Ok(());
        };
        let data = self.data();
        if !core::mem::take(first) {
            out.write_char(',')?;
        }
        let mut key_buf = [0u8; KEY_SIZE_MAX];
        let size = elt.copy_key(&mut key_buf).min(KEY_SIZE_MAX);
        out.write_str("{\"key\":")?;
        self.write_json_keys(out, &key_buf[..size], &self.entry_comm(&elt), resolver)?;
        out.write_str(",\"values\":[")?;
        for (k, (i, _, display)) in data.printed_vals().enumerate() {
            if k > 0 {
                out.write_char(',')?;
            }
            if let Some(j) = data.sketch_index(i) {
                let sketch = self.sketches().and_then(|s| s.sketch(idx, j));
                let p = sketch.map_or([Quantile::Empty; 4], |s| s.percentiles().p);
                write_quantiles(out, &p)?;
                continue;
            }
            let slot = match data.slot_op(i) {
                SlotOp::Add | SlotOp::Sketch => elt.read_sum(i),
                SlotOp::Max { .. } => elt.read_max(i),
            };
            write_number(out, display, data.val_value(i, slot, || elt.read_sum(0)))?;
        }
        out.write_char(']')?;
        if let Some(s) = self.sketches() {
            out.write_str(",\"buckets\":[")?;
            for (k, (_, name, j)) in self.quantile_columns().enumerate() {
                if k > 0 {
                    out.write_char(',')?;
                }
                match s.sketch(idx, j) {
                    Some(sk) => write_buckets(out, Some(&name), &sk)?,
                    None => {
                        let none = sketch::Union(core::iter::empty::<sketch::Sketch<'_>>());
                        write_buckets(out, Some(&name), &none)?
                    }
                }
            }
            out.write_char(']')?;
        }
        self.write_json_handlers(out, &elt)?;
        out.write_char('}')
    }

    /// Writes a key: `[..]`, one object per key field.
    fn write_json_keys(
        &self,
        out: &mut dyn Write,
        key: &[u8],
        comm: &[u8; 16],
        resolver: &dyn Resolver,
    ) -> fmt::Result {
        out.write_char('[')?;
        for (k, part) in self.data().key_parts(key).enumerate() {
            if k > 0 {
                out.write_char(',')?;
            }
            write_key(out, &part, comm, resolver)?;
        }
        out.write_char(']')
    }

    /// What the text prints after an entry's values for its `onmax()`
    /// and `onchange()` actions: `,"handlers":[{"handler":"max",
    /// "value":..,"saved":[{"name":..,"value":..}]}]`. A string that was
    /// never saved is `null` (the text's `(null)`).
    fn write_json_handlers(&self, out: &mut dyn Write, elt: &map::Elt<'_>) -> fmt::Result {
        let data = self.data();
        let mut n = 0;
        for a in 0..data.n_actions() {
            let Some(t) = data.action_track(a) else {
                continue;
            };
            if data.action_kind(a) == Some(super::grammar::ActionKind::Snapshot) {
                continue;
            }
            out.write_str(if n == 0 { ",\"handlers\":[" } else { "," })?;
            n += 1;
            let label = match t.how {
                Tracking::Max => "max",
                Tracking::Change => "changed",
            };
            let tracked = elt.read_var(t.var_idx);
            write!(
                out,
                "{{\"handler\":\"{label}\",\"value\":{tracked},\"saved\":["
            )?;
            for k in 0..data.n_save_vars() {
                let Some((name, i)) = data.save_var(k) else {
                    break;
                };
                if k > 0 {
                    out.write_char(',')?;
                }
                out.write_str("{\"name\":")?;
                write_string(out, name.as_bytes())?;
                out.write_str(",\"value\":")?;
                let val = elt.read_var(i);
                if data.var_copy(i) != Some(vars::VarCopy::String) {
                    write!(out, "{val}}}")?;
                    continue;
                }
                if !elt.var_is_set(i) {
                    out.write_str("null}")?;
                    continue;
                }
                let mut text = [0u8; vars::STR_VAR_LEN_MAX];
                write_string(out, self.read_copy(elt, val, &mut text))?;
                out.write_char('}')?;
            }
            out.write_str("]}")?;
        }
        if n > 0 {
            out.write_char(']')?;
        }
        Ok(())
    }

    /// Writes a histogram's tail: the end of its entries' array, the
    /// last `snapshot()`'s details when there is one, and the totals
    /// (with the percentiles over all `entries` and the pool's use, for
    /// a trigger with `.quantiles` values).
    pub fn write_json_tail(
        &self,
        out: &mut dyn Write,
        entries: &[u32],
        stats: &[ValStat; map::SUMS_MAX],
        resolver: &dyn Resolver,
        snapshot: Option<&Snapshot<'_>>,
    ) -> fmt::Result {
        let data = self.data();
        out.write_char(']')?;
        if let (Some(snap), Some((how, var))) = (snapshot, data.snapshot_action()) {
            write!(
                out,
                ",\"snapshot\":{{\"handler\":\"{}\",\"var\":",
                how.handler_name()
            )?;
            write_string(out, var.as_bytes())?;
            write!(out, ",\"value\":{},\"key\":", snap.val)?;
            let mut key_buf = [0u8; KEY_SIZE_MAX];
            let size = data.key_size().min(KEY_SIZE_MAX);
            let n = size.min(snap.key.len());
            key_buf[..n].copy_from_slice(&snap.key[..n]);
            self.write_json_keys(out, &key_buf[..size], &snap.comm, resolver)?;
            out.write_char('}')?;
        }
        write!(
            out,
            ",\"totals\":{{\"hits\":{},\"entries\":{},\"dropped\":{}",
            stats[0].total,
            entries.len(),
            self.map().drops()
        )?;
        if let Some(s) = self.sketches() {
            out.write_str(",\"percentiles\":{\"values\":[")?;
            for (k, (i, _, j)) in self.quantile_columns().enumerate() {
                if k > 0 {
                    out.write_char(',')?;
                }
                let mut p = [Quantile::Empty; 4];
                let union = s.union(j, entries.iter().copied());
                sketch::quantiles(&union, &PERCENTILES, &mut p);
                out.write_str("{\"name\":")?;
                write_display(out, Stem(self, i))?;
                out.write_str(",\"quantiles\":")?;
                write_quantiles(out, &p)?;
                out.write_str(",\"buckets\":")?;
                write_buckets(out, None, &union)?;
                out.write_char('}')?;
            }
            let pool = s.pool().stats();
            write!(
                out,
                "],\"pages_used\":{},\"pages\":{},\"unplaced\":{}}}",
                pool.pages_used, pool.pages, pool.unplaced
            )?;
        }
        out.write_str("}}")
    }

    /// The whole of one histogram at once: head, every entry and tail.
    /// `order` is scratch as for [`Histogram::print`].
    #[cfg(not(MODULE))]
    pub fn write_json(
        &self,
        out: &mut dyn Write,
        n: usize,
        info: &[&[u8]],
        resolver: &dyn Resolver,
        order: &mut [u32],
        snapshot: Option<&Snapshot<'_>>,
    ) -> fmt::Result {
        let len = self.sort_entries(order);
        let entries = &order[..len];
        let stats = self.column_stats(entries);
        self.write_json_head(out, n, info, &stats)?;
        let mut first = true;
        for &idx in entries {
            self.write_json_entry(out, idx, &mut first, resolver)?;
        }
        self.write_json_tail(out, entries, &stats, resolver, snapshot)
    }
}

/// The name of value `i` without its statistic (`lat` of `lat.max`).
struct Stem<'h, 'a>(&'h Histogram<'a>, usize);

impl fmt::Display for Stem<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.data().write_val_stem(f, self.1)
    }
}

#[cfg(test)]
mod tests;
