// SPDX-License-Identifier: GPL-2.0

//! More keys, values and sort keys than hist takes (rhist's extension,
//! rhist.rst "More keys and values"): the limits, with hist's errors past
//! them; an 8-key, 16-value trigger's entries against a model of its
//! records; sorts of three and four fields; the info line's round trip.

use super::super::error::{errno, HistError, HistErrorKind};
use super::super::event::{EventDesc, EventField, FieldStorage};
use super::super::histogram::map_params;
use super::super::trigger;
use super::*;
use crate::testing::{
    self, histogram, map_storage, pool_storage, print_of, sample_event, Task, FIELD_A, FIELD_B,
    FIELD_C, TASK,
};
use std::collections::BTreeMap;
use std::format;
use std::string::String;
use std::vec::Vec;

/// Record layout of [`EVENT`].
const REC_LEN: usize = 272;

const FIELDS: [EventField<'static>; 9] = [
    FIELD_A,
    FIELD_B,
    FIELD_C,
    EventField::new("s", "char[16]", 24, 16, false, FieldStorage::StaticString),
    EventField::new("e", "u16", 40, 2, false, FieldStorage::Other),
    EventField::new("f", "u8", 42, 1, false, FieldStorage::Other),
    EventField::new("g", "s64", 48, 8, true, FieldStorage::Other),
    EventField::new("h", "u64", 56, 8, false, FieldStorage::Other),
    EventField::new("t", "char[208]", 64, 208, false, FieldStorage::StaticString),
];

const EVENT: EventDesc<'static> = sample_event(&FIELDS);

/// The numbers of one record of [`EVENT`] (and its string `s`).
#[derive(Clone, Copy, Debug)]
struct Rec {
    a: u64,
    b: u32,
    c: i32,
    s: u8,
    e: u16,
    f: u8,
    g: i64,
    h: u64,
}

impl Rec {
    /// A record from a random word: few distinct values per field, so
    /// that entries repeat.
    fn from_seed(x: u64) -> Rec {
        let pick = |shift: u32, n: u64| (x >> shift) % n;
        Rec {
            a: pick(0, 3) * 1_000_000_007,
            b: pick(4, 2) as u32 + 7,
            c: pick(8, 3) as i32 - 1,
            s: b'p' + pick(12, 2) as u8,
            e: pick(16, 2) as u16 * 300,
            f: 0xf0 + pick(20, 2) as u8,
            g: -(pick(24, 2) as i64) * 5,
            h: pick(28, 2) << 40,
        }
    }

    fn bytes(&self) -> [u8; REC_LEN] {
        let mut r = [0u8; REC_LEN];
        r[..24].copy_from_slice(&testing::record(self.a, self.b, self.c));
        r[24..27].copy_from_slice(&[b'k', self.s, 0]);
        r[40..42].copy_from_slice(&self.e.to_ne_bytes());
        r[42] = self.f;
        r[48..56].copy_from_slice(&self.g.to_ne_bytes());
        r[56..64].copy_from_slice(&self.h.to_ne_bytes());
        r[64..67].copy_from_slice(b"tt\0");
        r
    }

    /// A field as a value adds it: sign-extended when signed.
    fn val(&self, name: char) -> u64 {
        match name {
            'a' => self.a,
            'b' => u64::from(self.b),
            'c' => i64::from(self.c) as u64,
            'e' => u64::from(self.e),
            'f' => u64::from(self.f),
            'g' => self.g as u64,
            'h' => self.h,
            _ => unreachable!(),
        }
    }
}

/// The task of pid 42 at 1 us (on CPU 0: [`Task::on`] moves it).
const CTX: Task = Task { ts: 1_000, ..TASK };

fn try_build(text: &str) -> Result<HistData<'_>, HistError> {
    let spec = trigger::parse(text)?;
    let mut hd = HistData::empty(&spec);
    HistData::build_into(&mut hd, &spec, &EVENT)?;
    Ok(hd)
}

fn build(text: &str) -> HistData<'_> {
    try_build(text).unwrap_or_else(|e| panic!("{text}: {e:?}"))
}

fn err(text: &str) -> HistError {
    try_build(text)
        .err()
        .unwrap_or_else(|| panic!("{text} builds"))
}

/// hist's error for `text` when every look-up succeeds, as the grammar
/// predicts it (`check_syntax()`).
fn hist_err(text: &str) -> HistError {
    trigger::parse(text).unwrap().check_syntax().unwrap_err()
}

fn info(hd: &HistData<'_>) -> String {
    let mut s = String::new();
    hd.write_info(&mut s, trigger::PREFIX).unwrap();
    s
}

/// Feeds `records` (each with its CPU) to a histogram of `data` with sums
/// for `cpus` CPUs, and prints it.
fn run_on(data: &HistData<'_>, cpus: usize, records: &[(u32, Rec)]) -> String {
    let map = map_storage(&map_params(data, cpus));
    let pool = pool_storage(data);
    let hist = histogram(data, cpus, &map, &pool);
    for (cpu, r) in records {
        hist.update(&r.bytes(), &CTX.on(*cpu));
    }
    print_of(&hist)
}

fn entries(out: &str) -> Vec<&str> {
    out.lines().take_while(|l| !l.is_empty()).collect()
}

/// `n` random records on `cpus` CPUs.
fn records(seed: u64, n: usize, cpus: u32) -> Vec<(u32, Rec)> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            // xorshift64
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 40) as u32 % cpus, Rec::from_seed(x))
        })
        .collect()
}

const EINVAL: HistError = HistError::silent(errno::EINVAL);

// ---------------------------------------------------------------------
// The limits.

/// 8 keys build, 9 get hist's error (silent -EINVAL: hist stops at the
/// fourth); so does a bad key hist never looks at.
#[test]
fn eight_keys_and_not_nine() {
    let hd = build("keys=a,b,c,s,e,f,g,h");
    assert_eq!(hd.key_ids().len(), 8);
    assert!(hd.beyond_hist());
    assert_eq!(hd.key_size(), 8 * 7 + 16);
    for t in [
        "keys=a,b,c,s,e,f,g,h,a",
        "keys=a,b,c,nosuch",
        "keys=a,b,c,s,e,f,g,nosuch",
        "keys=a,b,c,s.bogus",
    ] {
        assert_eq!(err(t), EINVAL, "{t}");
        assert_eq!(err(t), hist_err(t), "{t}");
    }
    // An error hist finds before the keys is still the first.
    let t = "keys=a,b,c,s:vals=nosuch";
    assert_eq!(err(t).kind(), Some(HistErrorKind::FieldNotFound));
    // Three keys are hist's text, built as hist builds it.
    assert!(!build("keys=a,b,c").beyond_hist());
}

/// The compound key is at most `HIST_KEY_SIZE_MAX` (384) bytes, as in
/// hist: 8 keys that take exactly that build, one byte more does not.
#[test]
fn compound_key_at_the_limit() {
    // 128 + 208 + 6 * 8 = 384.
    let hd = build("keys=stacktrace,t,a,b,c,e,f,g");
    assert_eq!(hd.key_size(), HIST_KEY_SIZE_MAX as usize);
    let out = run_on(&hd, 2, &[(0, Rec::from_seed(3)), (1, Rec::from_seed(3))]);
    assert!(out.contains("hitcount:          2"), "{out}");
    // s (16 bytes) for b (8): 392.
    for t in [
        "keys=stacktrace,t,a,s,c,e,f,g",
        "keys=t,stacktrace,s,a,b,c,e,f",
        "keys=t,t",
    ] {
        assert_eq!(err(t), EINVAL, "{t}");
    }
}

/// 16 values besides hitcount build, sums and statistics in any mix; 17
/// get hist's error.
#[test]
fn sixteen_values_and_not_seventeen() {
    let sums = "keys=a:vals=a,b,c,e,f,g,h,a,b,c,e,f,g,h,a,b";
    let hd = build(sums);
    assert_eq!(hd.n_sums(), 17);
    assert!(!hd.has_stats() && hd.beyond_hist());
    assert!(
        hd.program().is_none(),
        "more than two sums: the general path"
    );
    let mixed = "keys=b:vals=a.min,b.max,c.avg,e,f,g.min,h.max,a,b.avg,c,e.max,f,g,h,a,b.quantiles";
    assert_eq!(build(mixed).n_sums(), 17);
    // The 16th value, a sketch, records (b is below 128: exact).
    let out = run_on(&build(mixed), 2, &records(9, 50, 2));
    for line in entries(&out) {
        let b = line["{ b:".len()..].split_whitespace().next().unwrap();
        assert!(line.contains(&format!("  b.max: {b:>10}")), "{line}");
        assert!(line.contains(&format!("  b.p50: {b:>10}")), "{line}");
        assert!(line.contains(&format!("  b.p999: {b:>10}")), "{line}");
    }
    for t in [
        "keys=a:vals=a,b,c,e,f,g,h,a,b,c,e,f,g,h,a,b,c",
        "keys=a:vals=a,b,c,e,f,g,h,a,b,c,e,f,g,h,a,b,c.max",
        "keys=a:vals=a,b,nosuch",
        "keys=a:vals=a,b,c,e,f,g,h,a,b,c,e,f,g,h,a,nosuch",
    ] {
        assert_eq!(err(t), EINVAL, "{t}");
        assert_eq!(err(t), hist_err(t), "{t}");
    }
    // A last hitcount is not a value, as in hist.
    let t = "keys=a:vals=a,b,c,e,f,g,h,a,b,c,e,f,g,h,a,b,hitcount";
    assert_eq!(build(t).n_sums(), 17);
    // Two sums are hist's text.
    assert!(!build("keys=a:vals=a,b").beyond_hist());
}

/// Up to 4 sort keys in a trigger whose keys or values are an extension;
/// 5 get hist's error for the text, and a third sort key in a text hist
/// could take otherwise keeps hist's TOO_MANY_SORT_FIELDS.
#[test]
fn four_sort_keys_and_not_five() {
    let hd = build("keys=a,b,c,s:sort=b,c.descending,s,hitcount");
    assert_eq!(hd.sort_keys().len(), 4);
    assert_eq!(
        info(&hd),
        "rhist:keys=a,b,c,s:vals=hitcount:sort=b,c.descending,s,hitcount:size=2048"
    );
    assert_eq!(build("keys=a:vals=a,b,c:sort=c,b,a").sort_keys().len(), 3);
    assert_eq!(
        build("keys=a:vals=b.max:sort=b.max,a,hitcount")
            .sort_keys()
            .len(),
        3
    );
    for t in [
        "keys=a,b,c,s:sort=b,c,s,a,hitcount",
        "keys=a:vals=a,b,c:sort=a,b,c,a,b",
        "keys=a:vals=b:sort=a,b,hitcount",
        "keys=a,b,c:sort=a,b,c",
        "keys=a:vals=b.max:sort=b.max,a,hitcount,a,a",
    ] {
        assert_eq!(err(t), hist_err(t), "{t}");
    }
    let t = "keys=a,b,c:sort=a,b,c";
    assert_eq!(
        err(t),
        HistError::new(
            HistErrorKind::TooManySortFields,
            "rhist:".len() + t.find("sort=").unwrap()
        )
    );
    // The fields are matched as hist matches its two.
    let t = "keys=a,b,c,s:sort=b,c,nosuch";
    assert_eq!(err(t), EINVAL, "hist stops at the fourth key");
}

// ---------------------------------------------------------------------
// Output.

const WIDE: &str = "keys=a,b,c,s,e,f.hex,g,h:\
                    vals=a,b,c,e,f,g,h,a.hex,b.max,c.min,e.avg,f,g,h,a,b";

/// How [`WIDE`] prints each value, in order: the field it reads and what
/// it keeps of it.
#[derive(Clone, Copy)]
enum Val {
    Sum(char),
    Hex(char),
    Max(char),
    Min(char),
    Avg(char),
}

const WIDE_VALS: [Val; 16] = [
    Val::Sum('a'),
    Val::Sum('b'),
    Val::Sum('c'),
    Val::Sum('e'),
    Val::Sum('f'),
    Val::Sum('g'),
    Val::Sum('h'),
    Val::Hex('a'),
    Val::Max('b'),
    Val::Min('c'),
    Val::Avg('e'),
    Val::Sum('f'),
    Val::Sum('g'),
    Val::Sum('h'),
    Val::Sum('a'),
    Val::Sum('b'),
];

/// The model of [`WIDE`]'s entries: its lines, as hist prints keys and
/// values, in any order.
fn wide_model(records: &[(u32, Rec)]) -> Vec<String> {
    type Key = (u64, u32, i32, u8, u16, u8, i64, u64);
    let mut map: BTreeMap<Key, (u64, [Vec<u64>; 16])> = BTreeMap::new();
    for (_, r) in records {
        let k = (r.a, r.b, r.c, r.s, r.e, r.f, r.g, r.h);
        let e = map.entry(k).or_default();
        e.0 += 1;
        for (i, v) in WIDE_VALS.iter().enumerate() {
            let field = match *v {
                Val::Sum(f) | Val::Hex(f) | Val::Max(f) | Val::Min(f) | Val::Avg(f) => f,
            };
            e.1[i].push(r.val(field));
        }
    }
    map.iter()
        .map(|((a, b, c, s, ee, f, g, h), (hits, vals))| {
            let mut line = format!(
                "{{ a: {a:10}, b: {b:10}, c: {:10}, s: {:<50}, e: {ee:10}, f: {f:x}, \
                 g: {:10}, h: {h:10} }} hitcount: {hits:10}",
                *c as i64 as u64,
                format!("k{}", *s as char),
                *g as u64,
            );
            for (v, seen) in WIDE_VALS.iter().zip(vals) {
                let sum = seen.iter().fold(0u64, |s, &x| s.wrapping_add(x));
                let signed = seen.iter().map(|&x| x as i64);
                let col = match *v {
                    Val::Sum(n) => format!("{n}: {sum:10}"),
                    Val::Hex(n) => format!("{n}: {sum:10x}"),
                    Val::Max(n) => format!("{n}.max: {:10}", seen.iter().max().unwrap()),
                    Val::Min(n) => format!("{n}.min: {:10}", signed.min().unwrap()),
                    Val::Avg(n) => format!("{n}.avg: {:10}", sum / hits),
                };
                line.push_str("  ");
                line.push_str(&col);
            }
            line
        })
        .collect()
}

/// An 8-key, 16-value trigger prints each entry as the model does, on
/// one CPU and on several, and sorts by hitcount as hist does.
#[test]
fn eight_keys_sixteen_values_against_a_model() {
    let hd = build(WIDE);
    assert_eq!((hd.key_ids().len(), hd.n_sums()), (8, 17));
    for (seed, cpus) in [(1u64, 1u32), (2, 2), (3, 4), (0x5eed, 64)] {
        let recs = records(seed, 300, cpus);
        let out = run_on(&hd, cpus as usize, &recs);
        let mut got: Vec<String> = entries(&out).iter().map(|l| String::from(*l)).collect();
        // Sorted by hitcount, ascending.
        let hits: Vec<u64> = got
            .iter()
            .map(|l| {
                let at = l.find("hitcount:").unwrap() + "hitcount:".len();
                l[at..].split_whitespace().next().unwrap().parse().unwrap()
            })
            .collect();
        assert!(hits.windows(2).all(|w| w[0] <= w[1]), "{out}");
        let mut want = wide_model(&recs);
        got.sort();
        want.sort();
        assert_eq!(got, want, "seed {seed}");
        let totals = format!(
            "\nTotals:\n    Hits: {}\n    Entries: {}\n    Dropped: 0\n",
            recs.len(),
            want.len()
        );
        assert!(out.ends_with(&totals), "{out}");
    }
}

/// Sorting on three and four fields: each run of entries equal on the
/// fields before is sorted on the next, as hist does with its second.
#[test]
fn sorts_of_three_and_four_fields() {
    let recs = records(7, 400, 2);
    for (text, desc) in [
        (
            "keys=b,c,s,e:sort=b,c.descending,s,e",
            [false, true, false, false],
        ),
        (
            "keys=b,c,s,e:sort=e.descending,b,c",
            [true, false, false, false],
        ),
    ] {
        let hd = build(text);
        let out = run_on(&hd, 2, &recs);
        let lines = entries(&out);
        // The keys of each line, in the sort's order.
        let key_of = |l: &str| -> Vec<i64> {
            let field = |name: &str| -> String {
                let at = l.find(&format!(" {name}: ")).unwrap() + name.len() + 3;
                String::from(l[at..].split([',', ' ']).find(|w| !w.is_empty()).unwrap())
            };
            let num = |name: &str| field(name).parse::<u64>().unwrap() as i64;
            let s = i64::from(field("s").as_bytes()[1]);
            match text.contains("sort=b") {
                true => std::vec![num("b"), num("c"), s, num("e")],
                false => std::vec![num("e"), num("b"), num("c")],
            }
        };
        let keys: Vec<Vec<i64>> = lines.iter().map(|l| key_of(l)).collect();
        let mut want = keys.clone();
        want.sort_by(|x, y| {
            x.iter()
                .zip(y)
                .zip(desc)
                .map(|((a, b), d)| if d { b.cmp(a) } else { a.cmp(b) })
                .find(|o| o.is_ne())
                .unwrap_or(core::cmp::Ordering::Equal)
        });
        assert_eq!(keys, want, "{text}:\n{out}");
        assert!(keys.len() > 8, "{out}");
    }
}

/// The info line reads back as the same trigger (`!rhist:`, `clear`
/// find it by that text); its debug output lists every field.
#[test]
fn info_round_trips() {
    for text in [
        WIDE,
        "keys=a,b,c,s:vals=a,b,c:sort=c.descending,b,a",
        "keys=a.hex,b,c,s,e,f,g.hex,h:vals=b.max,a:sort=b.max,h,c,f:size=256",
        "keys=a:vals=a,b,c,e,f,g,h,a,b,c,e,f,g,h,a,b:nohitcount",
    ] {
        let hd = build(text);
        let line = info(&hd);
        let again = build(line.strip_prefix(trigger::PREFIX).unwrap());
        assert_eq!(info(&again), line, "{text}");
        assert!(hd.matches(&again) && again.matches(&hd), "{text}");
    }
    // Differing in a fifth key, or a third sort key, is another trigger.
    let (x, y) = (build("keys=a,b,c,s,e"), build("keys=a,b,c,s,f"));
    assert!(!x.matches(&y));
    let (x, y) = (
        build("keys=a,b,c,s:sort=a,b,c"),
        build("keys=a,b,c,s:sort=a,b,s"),
    );
    assert!(!x.matches(&y));
    let mut dbg = String::new();
    build(WIDE).write_debug(&mut dbg, &"ptr").unwrap();
    assert_eq!(
        dbg.matches("flags:\n        HIST_FIELD_FL_KEY").count(),
        8,
        "{dbg}"
    );
}

// ---------------------------------------------------------------------
// Memory.

/// A part of `words` words takes a power of two up to a line (8 words),
/// whole lines beyond; a part of none, nothing.
fn part(words: usize) -> usize {
    match words {
        0 => 0,
        1..=8 => words.next_power_of_two(),
        _ => words.next_multiple_of(8),
    }
}

/// rhist.rst's formula of a map's bytes: a header of 5 lines, then per
/// entry two words of hash table, its key's part, its data's part (the
/// sums when the CPUs share them) and, per CPU, its sums (packed: no
/// sketch); 63 bytes to align it.
fn formula(max_elts: usize, key_bytes: usize, sums: usize, cpus: usize) -> usize {
    let key = part(key_bytes.div_ceil(8));
    let (data, per_cpu) = match cpus {
        1 => (part(sums), 0),
        n => (part(0), n * sums),
    };
    8 * (40 + max_elts * (2 + key + data + per_cpu)) + 63
}

/// The formula is exact, for hist's shapes and the extension's.
#[test]
fn memory_per_entry() {
    for (text, key_bytes, sums) in [
        ("keys=a", 8, 1),
        ("keys=a,b,c:vals=a,b", 24, 3),
        ("keys=a:vals=a,b,c,e,f", 8, 6),
        (WIDE, 72, 17),
        (
            "keys=stacktrace,t,a,b,c,e,f,g:vals=a,b,c,e,f,g,h,a,b",
            384,
            10,
        ),
        ("keys=a:vals=a,b,c:size=131072", 8, 4),
    ] {
        let hd = build(text);
        let max_elts = 1usize << hd.map_bits();
        for cpus in [1, 2, 8, 64] {
            let params = map_params(&hd, cpus);
            assert_eq!(
                params.storage_bytes().unwrap(),
                formula(max_elts, key_bytes, sums, params.n_cpus),
                "{text} on {cpus} CPUs"
            );
        }
    }
    // 17 sums of 2,048 entries: 17 words, 272 KiB a CPU, per CPU up to
    // 15 CPUs (4 MiB).
    let hd = build(WIDE);
    assert_eq!(map_params(&hd, 15).n_cpus, 15);
    assert_eq!(map_params(&hd, 16).n_cpus, 1);
}
