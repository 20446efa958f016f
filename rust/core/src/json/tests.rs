// SPDX-License-Identifier: GPL-2.0

//! The JSON document against a real parser (serde_json) and against the
//! text: each model histogram's text is written again from its parsed
//! document alone, and must be the `hist` file's, byte for byte.

use super::super::event::{EventDesc, EventField, FieldStorage};
use super::super::hist_data::HistData;
use super::super::histogram::{map_params, Histogram, Snapshot};
use super::super::map::TracingMap;
use super::super::output::{self, ValDisplay, ValStat};
use super::super::sketch::Quantile;
use super::super::trigger;
use super::*;
use crate::testing::{
    build_with_actions, comm, histogram, map_storage, pool_storage, sample_event, NoSink, Task,
    FIELD_A, FIELD_B, FIELD_C, TASK,
};
use serde_json::Value;
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

/// The bytes a JSON string of the document stands for: one per
/// character, every character U+0000 to U+00FF.
fn bytes_of(v: &Value) -> Vec<u8> {
    let s = v.as_str().unwrap_or_else(|| panic!("not a string: {v}"));
    s.chars()
        .map(|c| u8::try_from(u32::from(c)).expect("a character beyond U+00FF"))
        .collect()
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn every_byte_round_trips() {
    let all: Vec<u8> = (0..=255u8).collect();
    let mut s = String::new();
    write_string(&mut s, &all).unwrap();
    assert!(s.is_ascii(), "{s}");
    assert_eq!(bytes_of(&parse(&s)), all);
    // Each byte alone, and among others.
    for b in 0..=255u8 {
        let bytes = [b'x', b, b'"', b, b'\\'];
        s.clear();
        write_string(&mut s, &bytes).unwrap();
        assert_eq!(bytes_of(&parse(&s)), bytes, "{s}");
    }
    s.clear();
    write_string(&mut s, b"a\"b\\c\n\t\x01\x7f\xff").unwrap();
    assert_eq!(s, r#""a\"b\\c\n\t\u0001\u007f\u00ff""#);
}

#[test]
fn invalid_utf8_and_utf8_are_bytes() {
    let mut s = String::new();
    write_string(&mut s, "é".as_bytes()).unwrap();
    assert_eq!(s, r#""\u00c3\u00a9""#);
    s.clear();
    write_string(&mut s, &[0xc3, 0x28, 0xe2, 0x82]).unwrap();
    assert_eq!(bytes_of(&parse(&s)), [0xc3, 0x28, 0xe2, 0x82]);
}

#[test]
fn escaping_writer_escapes() {
    let mut s = String::from("\"");
    let (q, y) = ("q\"", 'ÿ');
    write!(Escaping::new(&mut s), "{q}{y}").unwrap();
    s.push('"');
    assert_eq!(bytes_of(&parse(&s)), "q\"ÿ".as_bytes());
}

// --- model histograms -----------------------------------------------------

const FIELDS: [EventField<'static>; 6] = [
    FIELD_A,
    FIELD_B,
    FIELD_C,
    EventField::new("s", "char[16]", 24, 16, true, FieldStorage::StaticString),
    EventField::new("ss", "char[8]", 40, 8, false, FieldStorage::StaticString),
    EventField::new("aa", "u64", 48, 8, false, FieldStorage::Other),
];

const EVENT: EventDesc<'static> = sample_event(&FIELDS);

/// One event: its fields, its task and its stack.
#[derive(Clone, Copy)]
struct Ev {
    a: u64,
    b: u32,
    c: i32,
    s: &'static [u8],
    pid: i32,
    comm: &'static [u8],
    stack: [u64; 3],
}

const EV: Ev = Ev {
    a: 1,
    b: 1,
    c: 1,
    s: b"x",
    pid: 42,
    comm: b"bash",
    stack: [0x10, 0x20, 0],
};

impl Ev {
    fn record(&self) -> [u8; 56] {
        let mut r = [0u8; 56];
        r[4..8].copy_from_slice(&self.pid.to_ne_bytes());
        r[8..16].copy_from_slice(&self.a.to_ne_bytes());
        r[16..20].copy_from_slice(&self.b.to_ne_bytes());
        r[20..24].copy_from_slice(&self.c.to_ne_bytes());
        let n = self.s.len().min(16);
        r[24..24 + n].copy_from_slice(&self.s[..n]);
        let n = self.s.len().min(8);
        r[40..40 + n].copy_from_slice(&self.s[..n]);
        r[48..56].copy_from_slice(&self.a.to_ne_bytes());
        r
    }

    /// The task that fires it, on CPU 0 at 1 us.
    fn task(&self) -> Task {
        Task {
            pid: self.pid,
            ts: 1000,
            comm: comm(self.comm),
            stack: self.stack,
            ..TASK
        }
    }
}

/// Symbols `f_<hex>` (with `+0x1/0x10` for `%pS`), except at 0xbad;
/// syscalls up to 9 are `sys<n>`.
struct Symbols;

impl Resolver for Symbols {
    fn symbol(&self, addr: u64, with_offset: bool, out: &mut dyn Write) -> fmt::Result {
        match (addr, with_offset) {
            (0xbad, _) => write!(out, "0x{addr:x}"),
            (_, false) => write!(out, "f_{addr:x}"),
            (_, true) => write!(out, "f_{addr:x}+0x1/0x10"),
        }
    }
    fn syscall_name(&self, nr: u64) -> Option<&str> {
        const NAMES: [&str; 10] = [
            "sys0", "sys1", "sys2", "sys3", "sys4", "sys5", "sys6", "sys7", "sys8", "sys9",
        ];
        NAMES.get(nr as usize).copied()
    }
}

/// The text (entries and Totals) and the JSON document of `text` over
/// `events`, with `snapshot` for a `snapshot()` action.
fn both(text: &str, events: &[Ev], snapshot: Option<&Snapshot<'_>>) -> (String, String) {
    let data = build_with_actions(text, &EVENT);
    let map = map_storage(&map_params(&data, 1));
    let pool = pool_storage(&data);
    let hist = histogram(&data, 1, &map, &pool);
    for ev in events {
        hist.update_with_refs(&ev.record(), &ev.task(), &[], &NoSink);
    }
    let mut order = std::vec![0u32; hist.map().max_elts()];
    let mut txt = String::new();
    hist.print_with_snapshot(&mut txt, &Symbols, &mut order, snapshot)
        .unwrap();
    let mut json = String::new();
    write_doc_start(&mut json).unwrap();
    let info = format!("rhist:{text} [active]");
    hist.write_json(
        &mut json,
        0,
        &[info.as_bytes()],
        &Symbols,
        &mut order,
        snapshot,
    )
    .unwrap();
    write_doc_end(&mut json).unwrap();
    (txt, json)
}

/// `bytes` as the text writes them (`write_c_str()`).
fn c_text(bytes: &[u8]) -> String {
    match core::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes
            .iter()
            .map(|&b| if b.is_ascii() { b as char } else { '?' })
            .collect(),
    }
}

/// `bytes` in `width` columns, as `write_padded()` pads them.
fn padded(bytes: &[u8], width: usize) -> String {
    let mut s = c_text(bytes);
    for _ in bytes.len()..width {
        s.push(' ');
    }
    s
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a u64: {v}"))
}

fn text_str(v: &Value) -> String {
    c_text(&bytes_of(v))
}

/// A key written as the text writes it, from its descriptor `d` and
/// its object `k` in an entry.
fn render_key(d: &Value, k: &Value) -> (String, bool) {
    let name = text_str(&d["name"]);
    let value = &k["value"];
    let text = &k["text"];
    let s = match d["modifier"].as_str().unwrap() {
        "" if value.is_string() => format!("{name}: {}", padded(&bytes_of(value), 50)),
        "" => format!("{name}: {:10}", u(value)),
        "hex" => format!("{name}: {:x}", u(value)),
        m @ ("sym" | "sym-offset") => {
            let w = if m == "sym" { 45 } else { 55 };
            format!("{name}: [{:x}] {}", u(value), padded(&bytes_of(text), w))
        }
        "execname" => format!("{name}: {}[{:10}]", padded(&bytes_of(text), 16), u(value)),
        "syscall" => format!("{name}: {}[{:3}]", padded(&bytes_of(text), 30), u(value)),
        "log2" => {
            assert_eq!(text_str(text), format!("~ 2^{}", u(value)));
            format!("{name}: ~ 2^{:<2}", u(value))
        }
        "buckets" => {
            let size = u(&d["bucket_size"]);
            let v = u(value);
            assert_eq!(text_str(text), format!("~ {v}-{}", v + size - 1));
            format!("{name}: {}", text_str(text))
        }
        "stacktrace" => {
            let mut s = match name.as_str() {
                "common_stacktrace" => "common_stacktrace:\n".to_string(),
                _ => format!("{name}.stacktrace"),
            };
            let frames = text.as_array().unwrap();
            assert_eq!(frames.len(), value.as_array().unwrap().len());
            for f in frames {
                s += &format!("         {}\n", text_str(f));
            }
            return (s, true);
        }
        m => panic!("modifier {m}"),
    };
    (s, false)
}

fn render_keys(descs: &Value, key: &Value) -> String {
    let descs = descs.as_array().unwrap();
    let key = key.as_array().unwrap();
    assert_eq!(descs.len(), key.len());
    let mut multiline = false;
    let parts: Vec<String> = descs
        .iter()
        .zip(key)
        .map(|(d, k)| {
            let (s, m) = render_key(d, k);
            multiline |= m;
            s
        })
        .collect();
    let end = if multiline { "}" } else { " }" };
    format!("{{ {}{end}", parts.join(", "))
}

fn quantile(v: &Value) -> Quantile {
    match v {
        Value::Array(r) => Quantile::Within {
            low: u(&r[0]),
            high: u(&r[1]),
        },
        v => Quantile::Value(u(v)),
    }
}

fn write_quantile_cols(out: &mut String, stem: &str, q: &Value, display: ValDisplay) {
    for (k, label) in PERCENTILE_NAMES.iter().enumerate() {
        if k > 0 {
            out.push(' ');
        }
        output::write_quantile(out, stem, label, display, quantile(&q[label])).unwrap();
    }
}

/// How the text shows a value of descriptor `d`.
fn display_of(d: &Value) -> ValDisplay {
    match (
        d["modifier"].as_str().unwrap(),
        d["signed"].as_bool().unwrap(),
    ) {
        ("hex", _) => ValDisplay::Hex,
        ("percent", _) => ValDisplay::Percent,
        ("graph", _) => ValDisplay::Graph,
        (_, true) => ValDisplay::Signed,
        _ => ValDisplay::Plain,
    }
}

/// The text of a histogram (entries, snapshot, Totals) written from its
/// JSON object alone.
fn render(h: &Value) -> String {
    let mut out = String::new();
    let vals = h["values"].as_array().unwrap();
    for e in h["entries"].as_array().unwrap() {
        out += &render_keys(&h["keys"], &e["key"]);
        let values = e["values"].as_array().unwrap();
        assert_eq!(values.len(), vals.len());
        for (d, v) in vals.iter().zip(values) {
            let name = text_str(&d["name"]);
            if name != "hitcount" {
                out.push(' ');
            }
            let display = display_of(d);
            if d["statistic"] == "quantiles" {
                write_quantile_cols(&mut out, &text_str(&d["field"]), v, display);
                continue;
            }
            let stat = ValStat {
                total: d["total"].as_u64().unwrap_or(0),
                max: d["max"].as_u64().unwrap_or(0),
            };
            // A signed value is its 64 bits, as the text takes it.
            let bits = v.as_u64().unwrap_or_else(|| v.as_i64().unwrap() as u64);
            output::write_val(&mut out, &name, display, bits, stat).unwrap();
        }
        for hd in e["handlers"].as_array().into_iter().flatten() {
            out += &format!(
                "\n\t{}: {:10}",
                hd["handler"].as_str().unwrap(),
                u(&hd["value"])
            );
            for sv in hd["saved"].as_array().unwrap() {
                let name = text_str(&sv["name"]);
                match &sv["value"] {
                    Value::Null => out += &format!("  {name}: {}", padded(b"(null)", 32)),
                    s @ Value::String(_) => {
                        out += &format!("  {name}: {}", padded(&bytes_of(s), 32))
                    }
                    v => out += &format!("  {name}: {:10}", u(v)),
                }
            }
        }
        out.push('\n');
    }
    if let Some(s) = h.get("snapshot") {
        out += "\nSnapshot taken (see tracing/snapshot).  Details:\n";
        out += &format!(
            "\ttriggering value {{ {}({}) }}: {:10}",
            s["handler"].as_str().unwrap(),
            text_str(&s["var"]),
            u(&s["value"])
        );
        out += "\ttriggered by event with key: ";
        out += &render_keys(&h["keys"], &s["key"]);
        out.push('\n');
    }
    let t = &h["totals"];
    let n = h["entries"].as_array().unwrap().len();
    assert_eq!(u(&t["entries"]), n as u64);
    output::write_totals(&mut out, u(&t["hits"]), n as u32, u(&t["dropped"])).unwrap();
    if let Some(p) = t.get("percentiles") {
        out += "    Percentiles:";
        for v in p["values"].as_array().unwrap() {
            out.push(' ');
            let d = vals.iter().find(|d| d["field"] == v["name"]).unwrap();
            write_quantile_cols(
                &mut out,
                &text_str(&v["name"]),
                &v["quantiles"],
                display_of(d),
            );
        }
        out += &format!(
            "  pages: {}/{}  unplaced: {}\n",
            u(&p["pages_used"]),
            u(&p["pages"]),
            u(&p["unplaced"])
        );
    }
    out
}

/// The document of `text` over `events` parses, has the schema's
/// frame, and says what the text says.
fn agrees(text: &str, events: &[Ev]) -> Value {
    agrees_with(text, events, None)
}

fn agrees_with(text: &str, events: &[Ev], snapshot: Option<&Snapshot<'_>>) -> Value {
    let (txt, json) = both(text, events, snapshot);
    assert!(json.ends_with("]}\n"));
    let doc = parse(&json);
    assert_eq!(doc["version"], 1);
    let hists = doc["histograms"].as_array().unwrap();
    assert_eq!(hists.len(), 1);
    let h = &hists[0];
    assert_eq!(text_str(&h["trigger"]), format!("rhist:{text} [active]"));
    assert_eq!(render(h), txt, "{text}\n{json}");
    h.clone()
}

fn evs(f: impl Fn(u64) -> Ev, n: u64) -> Vec<Ev> {
    (0..n).map(f).collect()
}

#[test]
fn plain_keys_and_sums() {
    let events = evs(
        |i| Ev {
            a: i % 5,
            b: i as u32,
            ..EV
        },
        23,
    );
    let h = agrees("keys=a:vals=hitcount,b", &events);
    assert_eq!(h["entries"].as_array().unwrap().len(), 5);
    assert_eq!(h["totals"]["hits"], 23);
    assert_eq!(h["keys"][0]["type"], "u64");
    assert_eq!(h["values"][1]["type"], "u32");
    agrees("keys=a,b:vals=c:sort=b.descending,a", &events);
    agrees("keys=a:vals=b:nohitcount", &events);
    agrees("keys=a", &[]);
}

#[test]
fn big_numbers_are_exact() {
    let big = Ev {
        a: u64::MAX - 1,
        ..EV
    };
    let h = agrees("keys=a:vals=hitcount", &[big]);
    assert_eq!(
        h["entries"][0]["key"][0]["value"].as_u64(),
        Some(u64::MAX - 1)
    );
    let h = agrees(
        "keys=a.hex:vals=hitcount",
        &[Ev {
            a: (1 << 53) + 1,
            ..EV
        }],
    );
    assert_eq!(
        h["entries"][0]["key"][0]["value"].as_u64(),
        Some((1 << 53) + 1)
    );
}

#[test]
fn hex_percent_graph() {
    let events = evs(
        |i| Ev {
            a: i % 4,
            b: (i * 7) as u32,
            ..EV
        },
        30,
    );
    let h = agrees("keys=a.hex:vals=b.percent,c.graph", &events);
    agrees("keys=a:vals=b.hex,c.graph", &events);
    assert_eq!(h["keys"][0]["modifier"], "hex");
    assert_eq!(h["values"][1]["modifier"], "percent");
    agrees("keys=a:vals=b.percent", &[Ev { b: 0, ..EV }]);
}

#[test]
fn symbols_and_syscalls() {
    let events = evs(
        |i| Ev {
            a: [0x1000, 0xbad, 0xffff_ffff_8100_0000][i as usize % 3],
            b: (i % 12) as u32,
            ..EV
        },
        12,
    );
    agrees("keys=a.sym", &events);
    agrees("keys=a.sym-offset", &events);
    let h = agrees("keys=b.syscall", &events);
    assert_eq!(h["keys"][0]["modifier"], "syscall");
}

#[test]
fn execnames_with_odd_bytes() {
    let comms: [&[u8]; 4] = [
        b"bash",
        b"a\"b\\c\n\x01",
        b"\xff\xfe\x80 ok",
        "né".as_bytes(),
    ];
    let events = evs(
        |i| Ev {
            pid: i as i32 + 1,
            comm: comms[i as usize],
            ..EV
        },
        4,
    );
    let h = agrees("keys=common_pid.execname", &events);
    let got: Vec<Vec<u8>> = h["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| bytes_of(&e["key"][0]["text"]))
        .collect();
    for c in comms {
        assert!(got.contains(&c.to_vec()), "{c:?} not in {got:?}");
    }
}

#[test]
fn log2_and_buckets() {
    let events = evs(
        |i| Ev {
            a: i * i * 37,
            ..EV
        },
        40,
    );
    agrees("keys=a.log2", &events);
    agrees("keys=a.buckets=100:vals=b", &events);
}

#[test]
fn string_keys_with_odd_bytes() {
    let strs: [&'static [u8]; 5] = [
        b"plain",
        b"q\"u\\o",
        b"\x01\x1f\x7f\t\r\n",
        b"\xff\xc3\x28\xe2",
        "日本".as_bytes(),
    ];
    let events = evs(
        |i| Ev {
            s: strs[i as usize % 5],
            ..EV
        },
        10,
    );
    let h = agrees("keys=s:vals=hitcount", &events);
    let got: Vec<Vec<u8>> = h["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| bytes_of(&e["key"][0]["value"]))
        .collect();
    for s in strs {
        assert!(got.contains(&s.to_vec()), "{s:?}");
    }
    agrees("keys=s,a:sort=s", &events);
}

#[test]
fn every_byte_in_a_string_key() {
    // The 255 bytes that a NUL-terminated key can hold, 15 to a key.
    let keys: Vec<&'static [u8]> = (0..17u8)
        .map(|k| {
            let v: Vec<u8> = (1 + k * 15..=15 + k * 15).collect();
            &*std::vec::Vec::leak(v)
        })
        .collect();
    let events: Vec<Ev> = keys.iter().map(|&s| Ev { s, ..EV }).collect();
    let h = agrees("keys=s", &events);
    let mut seen: Vec<u8> = h["entries"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| bytes_of(&e["key"][0]["value"]))
        .collect();
    seen.sort();
    assert_eq!(seen, (1..=255u8).collect::<Vec<_>>());
}

#[test]
fn stack_traces() {
    let events = [
        EV,
        Ev {
            stack: [0x30, 0xbad, 0x40],
            ..EV
        },
        EV,
    ];
    let h = agrees("keys=common_stacktrace", &events);
    // The entry of two hits is the last (hitcount ascending).
    let e = &h["entries"][1]["key"][0];
    assert_eq!(e["value"], serde_json::json!([0x10, 0x20]));
    assert_eq!(e["text"][0], "f_10+0x1/0x10");
    agrees("keys=a,common_stacktrace:vals=b", &events);
}

#[test]
fn statistics_signed_and_quantiles() {
    let events = evs(
        |i| Ev {
            a: i % 3,
            b: (i * 13 % 17) as u32,
            c: 5 - i as i32,
            ..EV
        },
        30,
    );
    let h = agrees("keys=a:vals=c.min,c.max,c.avg,b.max", &events);
    let v = &h["values"];
    assert_eq!(v[1]["statistic"], "min");
    assert_eq!(v[1]["field"], "c");
    assert_eq!(v[1]["signed"], true);
    let mins: Vec<i64> = h["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["values"][1].as_i64().unwrap())
        .collect();
    assert!(mins.iter().all(|&m| m < 0), "{mins:?}");
    let h = agrees("keys=a:vals=b.quantiles,b.max", &events);
    assert_eq!(h["values"][1]["statistic"], "quantiles");
    assert!(h["totals"]["percentiles"]["values"][0]["quantiles"]["p99"].is_u64());
    agrees("keys=a:vals=b.quantiles", &[]);
}

/// A `.quantiles` value's buckets as the reader gets them: (low, high,
/// count) triples.
fn triples(b: &Value) -> Vec<(u64, u64, u64)> {
    b["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (u(&t[0]), u(&t[1]), u(&t[2])))
        .collect()
}

#[test]
fn quantile_buckets_rebuild_the_distribution() {
    // Values from 0 to about 2^31: exact buckets below 128, wide above.
    let value = |i: u64| ((i * i * 7919 + i * 31) % (1 << 31)) as u32;
    let events = evs(
        |i| Ev {
            a: i % 3,
            b: value(i),
            ..EV
        },
        600,
    );
    let h = agrees("keys=a:vals=b.quantiles", &events);
    let mut union = std::collections::BTreeMap::new();
    for e in h["entries"].as_array().unwrap() {
        let a = u(&e["key"][0]["value"]);
        let mine: Vec<u64> = (0..600)
            .filter(|i| i % 3 == a)
            .map(|i| u64::from(value(i)))
            .collect();
        let b = &e["buckets"][0];
        assert_eq!(b["name"], "b.quantiles");
        assert_eq!(u(&b["unplaced"]), 0);
        let t = triples(b);
        // Every bucket is one of the sketch's, exactly; in order, apart;
        // each holds as many of the entry's values as it counts.
        let mut prev: Option<u64> = None;
        for &(lo, hi, n) in &t {
            let k = sketch::bucket_of(lo);
            assert_eq!((sketch::bucket_low(k), sketch::bucket_high(k)), (lo, hi));
            assert!(prev.is_none_or(|p| p < lo), "{t:?}");
            prev = Some(hi);
            let held = mine.iter().filter(|&&v| lo <= v && v <= hi).count() as u64;
            assert_eq!(held, n, "[{lo}, {hi}]");
            *union.entry((lo, hi)).or_insert(0u64) += n;
        }
        let total: u64 = t.iter().map(|x| x.2).sum();
        assert_eq!(
            total,
            u(&e["values"][0]),
            "the counts add up to the hitcount"
        );
        // Merged to powers of two, as a reader picks a coarser
        // resolution: nothing is lost, and each power holds its values.
        let mut powers = std::collections::BTreeMap::new();
        for &(lo, hi, n) in &t {
            let p = 64 - lo.leading_zeros();
            assert_eq!(p, 64 - hi.leading_zeros(), "a bucket within a power of two");
            *powers.entry(p).or_insert(0u64) += n;
        }
        for (&p, &n) in &powers {
            let held = mine
                .iter()
                .filter(|&&v| 64 - v.leading_zeros() == p)
                .count() as u64;
            assert_eq!(held, n, "power {p}");
        }
        assert_eq!(powers.values().sum::<u64>(), mine.len() as u64);
    }
    // The totals' buckets: every entry's, added.
    let tb = &h["totals"]["percentiles"]["values"][0]["buckets"];
    assert!(tb["name"].is_null());
    let t: Vec<_> = triples(tb)
        .into_iter()
        .map(|(lo, hi, n)| ((lo, hi), n))
        .collect();
    assert_eq!(t, union.into_iter().collect::<Vec<_>>());
    // No values: no buckets.
    let h = agrees("keys=a:vals=b.quantiles", &[]);
    assert!(triples(&h["totals"]["percentiles"]["values"][0]["buckets"]).is_empty());
}

#[test]
fn handlers_and_snapshots() {
    let events = evs(
        |i| Ev {
            a: i * 7 % 11,
            b: (i % 2) as u32,
            s: [b"one\"1" as &[u8], b"\xfftwo"][i as usize % 2],
            ..EV
        },
        9,
    );
    let h = agrees("keys=b:v=a:onmax($v).save(ss,aa)", &events);
    let hd = &h["entries"][0]["handlers"][0];
    assert_eq!(hd["handler"], "max");
    assert_eq!(hd["saved"][0]["name"], "ss");
    // A string never saved: null.
    let zero = [Ev { a: 0, ..EV }];
    let h = agrees("keys=b:v=a:onmax($v).save(ss)", &zero);
    assert!(h["entries"][0]["handlers"][0]["saved"][0]["value"].is_null());
    agrees("keys=b:v=a:onchange($v).save(aa,ss)", &events);
    let key = 1u64.to_ne_bytes();
    let snap = Snapshot {
        val: 70,
        key: &key,
        comm: *b"sh\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
    };
    let h = agrees_with("keys=b:v=a:onmax($v).snapshot()", &events, Some(&snap));
    assert_eq!(h["snapshot"]["handler"], "onmax");
    assert_eq!(h["snapshot"]["var"], "$v");
}

#[test]
fn histograms_are_separated() {
    let mut s = String::new();
    write_doc_start(&mut s).unwrap();
    let (_, one) = both("keys=a", &[EV], None);
    let inner = &one[one.find('[').unwrap() + 1..one.len() - 3];
    s += inner;
    s.push(',');
    s += inner;
    write_doc_end(&mut s).unwrap();
    let doc = parse(&s);
    assert_eq!(doc["histograms"].as_array().unwrap().len(), 2);
}

/// The pieces, written one by one as the shell's records write them
/// (each entry on its own, two histograms), make the document
/// `write_json()` makes at once.
#[test]
fn pieces_make_the_document() {
    let spec = trigger::parse("keys=a:vals=b.percent").unwrap();
    let data = HistData::build(&spec, &EVENT).unwrap();
    let st = map_storage(&map_params(&data, 1));
    let hist = Histogram::new(&data, TracingMap::new(map_params(&data, 1), &st).unwrap()).unwrap();
    for i in 0..20u64 {
        let ev = Ev {
            a: i % 7,
            b: i as u32,
            ..EV
        };
        hist.update_with_refs(&ev.record(), &ev.task(), &[], &NoSink);
    }
    let info: [&[u8]; 4] = [b"rhist:keys=a", b" if ", b"a < \"7\"", b" [active]"];
    let mut order = std::vec![0u32; hist.map().max_elts()];
    let mut whole = String::new();
    write_doc_start(&mut whole).unwrap();
    for n in 0..2 {
        hist.write_json(&mut whole, n, &info, &Symbols, &mut order, None)
            .unwrap();
    }
    write_doc_end(&mut whole).unwrap();

    let mut pieces = String::new();
    write_doc_start(&mut pieces).unwrap();
    for n in 0..2 {
        let len = hist.sort_entries(&mut order);
        let stats = hist.column_stats(&order[..len]);
        hist.write_json_head(&mut pieces, n, &info, &stats).unwrap();
        for (at, &idx) in order[..len].iter().enumerate() {
            let mut first = at == 0;
            hist.write_json_entry(&mut pieces, idx, &mut first, &Symbols)
                .unwrap();
        }
        hist.write_json_tail(&mut pieces, &order[..len], &stats, &Symbols, None)
            .unwrap();
    }
    write_doc_end(&mut pieces).unwrap();
    assert_eq!(pieces, whole);
    let doc = parse(&whole);
    assert_eq!(
        text_str(&doc["histograms"][1]["trigger"]),
        "rhist:keys=a if a < \"7\" [active]"
    );
    assert_eq!(doc["histograms"][0]["entries"].as_array().unwrap().len(), 7);
    assert_eq!(doc["histograms"][0]["values"][1]["total"], 190);
}
