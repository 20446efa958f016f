// SPDX-License-Identifier: GPL-2.0

//! The tests of value statistics: the arithmetic, and triggers that use
//! them parsed, built, updated on several CPUs, sorted and printed, with
//! what hist does kept where it takes the text or rejects it.

use super::super::error::{errno, HistError, HistErrorKind};
use super::super::event::{EventDesc, EventField, FieldStorage};
use super::super::hist_data::{BuildOptions, HistData, SortField};
use super::super::histogram::{map_params, Histogram};
use super::super::map::TracingMap;
use super::super::output::ValDisplay;
use super::super::trigger;
use super::super::var_ref::VarLookup;
use super::*;
use crate::testing::{
    self, histogram, map_storage, pool_storage, print_of, sample_event, zeros, NoSink, Task,
    VarsOf, FIELD_A, FIELD_B, FIELD_C, TASK,
};
use core::sync::atomic::AtomicU64;
use std::collections::BTreeMap;
use std::format;
use std::string::String;
use std::vec::Vec;

// ---------------------------------------------------------------------
// The arithmetic.

/// The slot as the map keeps it: the maximum of the encoded values.
fn fold(stat: Statistic, signed: bool, values: &[u64]) -> u64 {
    let SlotOp::Max { xor } = stat.slot_op(signed) else {
        return values.iter().fold(0u64, |s, &v| s.wrapping_add(v));
    };
    values.iter().fold(0, |m, &v| m.max(v ^ xor))
}

#[test]
fn suffixes() {
    assert_eq!(Statistic::split("lat.max"), Some(("lat", Statistic::Max)));
    assert_eq!(
        Statistic::split("common_timestamp.usecs.min"),
        Some(("common_timestamp.usecs", Statistic::Min))
    );
    assert_eq!(Statistic::split("a-b.avg"), Some(("a-b", Statistic::Avg)));
    assert_eq!(Statistic::split(".max"), None);
    assert_eq!(Statistic::split("max"), None);
    assert_eq!(Statistic::split("lat.maximum"), None);
    assert_eq!(Statistic::split("lat.max."), None);
    for s in [Statistic::Min, Statistic::Max, Statistic::Avg] {
        let text = std::format!("x.{}", s.name());
        assert_eq!(Statistic::split(&text), Some(("x", s)));
    }
}

#[test]
fn min_and_max_of_unsigned_and_signed_values() {
    let signed: [i64; 5] = [-5, 3, i64::MIN, 0, i64::MAX];
    let as_u64: std::vec::Vec<u64> = signed.iter().map(|&v| v as u64).collect();
    let get = |stat: Statistic, signed: bool| {
        stat.value(signed, fold(stat, signed, &as_u64), as_u64.len() as u64)
    };
    assert_eq!(get(Statistic::Min, true) as i64, i64::MIN);
    assert_eq!(get(Statistic::Max, true) as i64, i64::MAX);
    assert_eq!(get(Statistic::Min, false), 0);
    assert_eq!(get(Statistic::Max, false), -5i64 as u64);
    let small: [i64; 3] = [-5, 3, -1];
    let small: std::vec::Vec<u64> = small.iter().map(|&v| v as u64).collect();
    let get = |stat: Statistic, signed: bool| stat.value(signed, fold(stat, signed, &small), 3);
    assert_eq!(get(Statistic::Min, true) as i64, -5);
    assert_eq!(get(Statistic::Max, true) as i64, 3);
    assert_eq!(get(Statistic::Min, false), 3);
    assert_eq!(get(Statistic::Max, false), u64::MAX);
}

#[test]
fn the_identity_is_zero() {
    // A slot no event touched reads as the statistic of nothing, and
    // any value replaces it.
    assert_eq!(Statistic::Min.value(false, 0, 0), u64::MAX);
    assert_eq!(Statistic::Min.value(true, 0, 0) as i64, i64::MAX);
    assert_eq!(Statistic::Max.value(true, 0, 0) as i64, i64::MIN);
    assert_eq!(Statistic::Avg.value(true, 0, 0), 0);
}

#[test]
fn averages_divide_as_the_kernel() {
    assert_eq!(per_hit(10, 3, false), 3);
    assert_eq!(per_hit(u64::MAX, 2, false), u64::MAX / 2);
    // -10 / 3 rounds toward zero, as div64_s64().
    assert_eq!(per_hit(-10i64 as u64, 3, true) as i64, -3);
    assert_eq!(per_hit(10, 3, true), 3);
    assert_eq!(per_hit(7, 0, false), 0);
    // Unsigned, the same sum is a large number.
    assert_eq!(per_hit(-10i64 as u64, 3, false), (u64::MAX - 9) / 3);
}

// ---------------------------------------------------------------------
// Triggers.

const FIELDS: [EventField<'static>; 4] = [
    FIELD_A,
    FIELD_B,
    FIELD_C,
    EventField::new("s", "char[16]", 24, 16, false, FieldStorage::StaticString),
];

const EVENT: EventDesc<'static> = sample_event(&FIELDS);

/// A record of [`EVENT`].
fn record(a: u64, b: u32, c: i32) -> [u8; 40] {
    let mut r = [0u8; 40];
    r[..24].copy_from_slice(&testing::record(a, b, c));
    r[24..28].copy_from_slice(b"key\0");
    r
}

/// The task of pid 42 at 2 ms (on CPU 0: [`Task::on`] moves it).
const CTX: Task = Task {
    ts: 2_000_000,
    ..TASK
};

/// Builds `text` (after `rhist:`), with the variables of `other`.
fn try_build_with<'h>(
    text: &'h str,
    other: Option<&'h HistData<'h>>,
) -> Result<HistData<'h>, HistError> {
    let spec = trigger::parse(text)?;
    let mut hd = HistData::empty(&spec);
    let lookup = other.map(VarsOf);
    let options = BuildOptions {
        vars: lookup.as_ref().map(|l| l as &dyn VarLookup),
        ..Default::default()
    };
    HistData::build_into_with(&mut hd, &spec, &EVENT, options)?;
    Ok(hd)
}

fn build(text: &'static str) -> HistData<'static> {
    try_build_with(text, None).unwrap_or_else(|e| panic!("{text}: {e:?}"))
}

fn err(text: &'static str) -> HistError {
    try_build_with(text, None)
        .err()
        .unwrap_or_else(|| panic!("{text} builds"))
}

/// What hist reports for `text`, when every look-up succeeds: C's first
/// error, as the grammar predicts it.
fn hist_err(text: &'static str) -> HistError {
    trigger::parse(text).unwrap().check_syntax().unwrap_err()
}

/// The trigger info line.
fn info(hd: &HistData<'_>) -> String {
    let mut s = String::new();
    hd.write_info(&mut s, trigger::PREFIX).unwrap();
    s
}

/// Feeds `records` (each with the CPU it fires on) to a histogram of
/// `data` whose sums are kept for `cpus` CPUs, and prints it.
fn run_on(data: &HistData<'_>, cpus: usize, records: &[(u32, [u8; 40])]) -> String {
    let params = map_params(data, cpus);
    let storage = map_storage(&params);
    let hist = Histogram::new(data, TracingMap::new(params, &storage).unwrap()).unwrap();
    for (cpu, r) in records {
        hist.update(r, &CTX.on(*cpu));
    }
    print_of(&hist)
}

/// The lines of `out` before the Totals.
fn entries(out: &str) -> Vec<&str> {
    out.lines().take_while(|l| !l.is_empty()).collect()
}

const SIX: &str = "keys=a:vals=b.min,b.max,b.avg,c.min,c.max,c.avg";

#[test]
fn min_max_avg_of_unsigned_and_signed_values() {
    let hd = build(SIX);
    assert!(hd.has_stats());
    assert_eq!(hd.n_sums(), 7);
    // More sums than a program holds: the general path.
    assert!(hd.program().is_none());
    assert_eq!(
        info(&hd),
        "rhist:keys=a:vals=hitcount,b.min,b.max,b.avg,c.min,c.max,c.avg:sort=hitcount:size=2048"
    );
    // c.avg: -8 / 3 rounds toward zero.
    let records = [
        (0, record(1, 10, -7)),
        (1, record(1, 5, 3)),
        (2, record(1, 7, -4)),
        (1, record(2, 5, 3)),
    ];
    let want = "{ a:          2 } hitcount:          1  b.min:          5  b.max:          5  \
                b.avg:          5  c.min:          3  c.max:          3  c.avg:          3\n\
                { a:          1 } hitcount:          3  b.min:          5  b.max:         10  \
                b.avg:          7  c.min:         -7  c.max:          3  c.avg:         -2\n\
                \nTotals:\n    Hits: 4\n    Entries: 2\n    Dropped: 0\n";
    // Kept per CPU (CPU 2 of 2 adds to CPU 0's copy) or shared: the same.
    for cpus in [1, 2, 3, 64] {
        assert_eq!(run_on(&hd, cpus, &records), want, "{cpus} CPUs");
    }
    // Signed: the smallest and largest s32 and u32 values.
    let hd = build("keys=a:vals=b.min,b.max,c.min,c.max");
    let out = run_on(
        &hd,
        2,
        &[
            (0, record(1, u32::MAX, i32::MIN)),
            (1, record(1, 0, i32::MAX)),
        ],
    );
    assert_eq!(
        entries(&out),
        [
            "{ a:          1 } hitcount:          2  b.min:          0  b.max: 4294967295  \
          c.min: -2147483648  c.max: 2147483647"
        ]
    );
}

#[test]
fn statistics_beside_sums_and_displays() {
    let records = [(0, record(1, 10, -7)), (1, record(1, 0x2f, 3))];
    // A sum and the statistics of the same field, and .hex.
    let hd = build("keys=a:vals=b,b.hex.max,c.avg,c");
    assert_eq!(
        info(&hd),
        "rhist:keys=a:vals=hitcount,b,b.hex.max,c.avg,c:sort=hitcount:size=2048"
    );
    assert_eq!(
        entries(&run_on(&hd, 2, &records)),
        [
            "{ a:          1 } hitcount:          2  b:         57  b.max:         2f  \
          c.avg:         -2  c: 18446744073709551612"
        ]
    );
    let vals: Vec<(usize, String, ValDisplay)> = hd
        .printed_vals()
        .map(|(i, name, display)| (i, format!("{name}"), display))
        .collect();
    assert_eq!(
        vals,
        [
            (0, String::from("hitcount"), ValDisplay::Plain),
            (1, String::from("b"), ValDisplay::Plain),
            (2, String::from("b.max"), ValDisplay::Hex),
            (3, String::from("c.avg"), ValDisplay::Signed),
            (4, String::from("c"), ValDisplay::Plain)
        ]
    );
    // nohitcount: the statistics are the values.
    let hd = build("keys=a:vals=b.max:nohitcount");
    assert_eq!(
        info(&hd),
        "rhist:keys=a:vals=b.max:sort=hitcount:size=2048:nohitcount"
    );
    assert_eq!(
        entries(&run_on(&hd, 2, &records)),
        ["{ a:          1 }  b.max:         47"]
    );
}

#[test]
fn statistics_of_expressions_references_and_timestamps() {
    let records = [(0, record(1, 10, -7)), (1, record(1, 5, 3))];
    // An expression is printed, whole, when it has a statistic (hist
    // prints no expression value); a statistic ends it, whatever the last
    // operand: `b-c.max` is the maximum of b-c.
    let hd = build("keys=a:vals=b-c.max,b*2.min,-(c).avg");
    assert_eq!(
        info(&hd),
        "rhist:keys=a:vals=hitcount,b-c.max,b*2.min,-(c).avg:sort=hitcount:size=2048"
    );
    assert_eq!(
        entries(&run_on(&hd, 2, &records)),
        [
            "{ a:          1 } hitcount:          2  b-c.max:         17  b*2.min:         10  \
          -(c).avg:          2"
        ]
    );
    let hd = build("keys=a:vals=common_timestamp.usecs.max,cpu.min");
    assert!(hd.uses_timestamps() && hd.ts_in_usecs());
    assert_eq!(
        entries(&run_on(
            &hd,
            4,
            &[(3, record(1, 0, 0)), (2, record(1, 0, 0))]
        )),
        [
            "{ a:          1 } hitcount:          2  common_timestamp.max:       2000  \
          cpu.min:          2"
        ]
    );
    // As hist names `cpu` in its trigger info.
    assert_eq!(
        info(&hd),
        "rhist:keys=a:vals=hitcount,common_timestamp.usecs.max,common_cpu.min:sort=hitcount:\
         size=2048:clock=global"
    );
    // A variable of this trigger that is a plain field stands for it.
    let hd = build("keys=a:x=c:vals=$x.min");
    assert_eq!(
        info(&hd),
        "rhist:keys=a:vals=hitcount,c.min:x=c:sort=hitcount:size=2048"
    );
}

/// A reference to another trigger's variable, as a statistic: resolved
/// per event, as a sum of it is.
#[test]
fn statistics_of_another_triggers_variable() {
    let owner = build("keys=a:t=c");
    let hd = try_build_with("keys=a:vals=$t.min,$t.max", Some(&owner)).unwrap();
    assert_eq!(hd.n_var_refs(), 1);
    assert_eq!(
        info(&hd),
        "rhist:keys=a:vals=hitcount,$t.min,$t.max:sort=hitcount:size=2048"
    );
    let storage = |d: &HistData<'_>| map_storage(&map_params(d, 2));
    let (s1, s2) = (storage(&owner), storage(&hd));
    let h1 = Histogram::new(&owner, TracingMap::new(map_params(&owner, 2), &s1).unwrap()).unwrap();
    let h2 = Histogram::new(&hd, TracingMap::new(map_params(&hd, 2), &s2).unwrap()).unwrap();
    for (cpu, c) in [(0, -5), (1, 9), (0, 2)] {
        let ctx = CTX.on(cpu);
        h1.update(&record(1, 0, c), &ctx);
        h2.update_with_refs(&record(1, 0, 0), &ctx, &[&h1], &NoSink);
    }
    assert_eq!(
        entries(&print_of(&h2)),
        ["{ a:          1 } hitcount:          3  t.min:         -5  t.max:          9"]
    );
}

/// hist's own meanings come first: a text hist takes is hist's, whatever
/// it ends with.
#[test]
fn what_hist_takes_stays_hists() {
    // C reads `x.y.max` as `system.event.field`, and, for a field, looks
    // its name up in this event, whichever event it names: a field of
    // that name is the value.
    const MAXED: [EventField<'static>; 2] = [
        EventField::new("b", "u32", 16, 4, false, FieldStorage::Other),
        EventField::new("max", "u32", 20, 4, false, FieldStorage::Other),
    ];
    let event = EventDesc {
        fields: &MAXED,
        ..EVENT
    };
    let spec = trigger::parse("keys=b:vals=b.hex.max").unwrap();
    let hd = HistData::build(&spec, &event).unwrap();
    assert!(!hd.has_stats());
    assert_eq!(
        info(&hd),
        "rhist:keys=b:vals=hitcount,max:sort=hitcount:size=2048"
    );
    // `$x.max` of a variable named `x.max` that is a plain field.
    let hd = build("keys=a:x.max=b:vals=$x.max");
    assert!(!hd.has_stats());
    assert_eq!(
        info(&hd),
        "rhist:keys=a:vals=hitcount,b:x.max=b:sort=hitcount:size=2048"
    );
    // ... and of another trigger's variable named `t.max`, beside a
    // statistic of `t`, in a text hist rejects.
    let owner = build("keys=a:t.max=b,t=c");
    let hd = try_build_with("keys=a:vals=$t.max,$t.max", Some(&owner)).unwrap();
    assert!(!hd.has_stats());
    let hd = try_build_with("keys=a:vals=$t.max,$t.min", Some(&owner)).unwrap();
    assert_eq!(hd.val_stat(1), None);
    assert_eq!(hd.val_stat(2), Some(Statistic::Min));
    assert!(!hd.val_signed(1) && hd.val_signed(2));
}

/// A text rhist rejects gets hist's error, the first hist finds, even
/// where the statistics are not what is wrong.
#[test]
fn rejected_texts_keep_hists_errors() {
    let bad_modifier = |text: &str, at: &str| {
        let pos = "rhist:".len() + text.find(at).unwrap();
        HistError::new(HistErrorKind::BadFieldModifier, pos)
    };
    for (text, at) in [
        // Not a number: a string, a stack trace; not an event's value:
        // hitcount (its every statistic would be 1).
        ("keys=a:vals=s.max", "max"),
        ("keys=a:vals=common_stacktrace.max", "max"),
        ("keys=a:vals=hitcount.max", "max"),
        ("keys=a:vals=b,hitcount.avg", "avg"),
        ("keys=a:vals=hitcount.quantiles", "quantiles"),
        // A bad statistic, a bad field, a bad key or sort key later.
        ("keys=a:vals=b.maxi", "maxi"),
        ("keys=a:vals=nosuch.max", "max"),
        ("keys=nosuch:vals=b.max", "max"),
        ("keys=a:vals=b.max:sort=b", "max"),
        ("keys=a:vals=b.max:sort=b.max.up", "max"),
        ("keys=a:vals=b.max:sort=c", "max"),
        // Seventeen statistics.
        (
            "keys=a:vals=b.min,b.max,b.avg,c.min,c.max,c.avg,a.max,a.min,a.avg,\
             b.min,b.max,b.avg,c.min,c.max,c.avg,a.max,a.min",
            "min",
        ),
    ] {
        let e = err(text);
        assert_eq!(e, bad_modifier(text, at), "{text}");
        assert_eq!(e.errno(), errno::EINVAL);
    }
    // Where C looks a field up first, its error: `x.y.max` is the field
    // `max` of a system and event (a saved comm, a modifier hist does not
    // take on values, .percent and .graph, a modifier rhist takes).
    let not_found = |text: &str| {
        let pos = "rhist:".len() + text.rfind('.').unwrap() + 1;
        HistError::new(HistErrorKind::FieldNotFound, pos)
    };
    for text in [
        "keys=a:vals=common_pid.execname.min",
        "keys=a:vals=b.log2.max",
        "keys=a:vals=b.sym.max",
        "keys=a:vals=b.percent.max",
        "keys=a:vals=b.graph.avg",
        "keys=a:vals=nosuch.hex.max",
    ] {
        assert_eq!(err(text), not_found(text), "{text}");
    }
    assert_eq!(
        err("keys=a:vals=nosuch,b.max").kind(),
        Some(HistErrorKind::FieldNotFound)
    );
    // Three sums are taken now (`morefields`); with a bad fifth value,
    // hist's error, which stops at two: silent.
    assert_eq!(build("keys=a:vals=a,b,c,b.max").n_sums(), 5);
    let e = err("keys=a:vals=a,b,c,b.max,nosuch");
    assert_eq!((e.kind(), e.errno()), (None, errno::EINVAL));
    // A reference that resolves nowhere: C's two entries.
    let owner = build("keys=a:t=c");
    let e = try_build_with("keys=a:vals=$u.max", Some(&owner)).unwrap_err();
    assert_eq!(e.kind(), Some(HistErrorKind::BadFieldModifier));
    assert_eq!(
        e.logged_before().next().map(|(k, _)| k),
        Some(HistErrorKind::VarNotFound)
    );
    // The grammar's prediction of hist's error agrees.
    for text in [
        "keys=a:vals=b.max:sort=c",
        "keys=a:vals=s.max",
        "keys=a:vals=a,b,c,b.max,nosuch",
    ] {
        assert_eq!(err(text), hist_err(text), "{text}");
    }
}

/// Statistics and sums count together: up to sixteen values besides
/// hitcount, in any mix (`morefields`).
#[test]
fn how_statistics_count() {
    assert_eq!(build("keys=a:vals=a,b,c.max").n_sums(), 4);
    assert_eq!(build("keys=a:vals=c.max,a,b").n_sums(), 4);
    assert_eq!(build("keys=a:vals=a,b,a.min,b.max,c.avg,c.min").n_sums(), 7);
    assert_eq!(build("keys=a:vals=hitcount,b.max,hitcount").n_sums(), 3);
    assert_eq!(build("keys=a:vals=a,b,hitcount,c.max").n_sums(), 4);
    // A second hitcount is a value, as in hist.
    assert_eq!(build("keys=a:vals=hitcount,a,b,hitcount,c.max").n_sums(), 5);
    assert_eq!(
        build("keys=a:vals=a,b,a.min,b.max,c.avg,c.min,c.max").n_sums(),
        8
    );
    let sixteen = "keys=a:vals=a,b,c,a.min,a.max,a.avg,b.min,b.max,b.avg,\
                   c.min,c.max,c.avg,b.quantiles,a,b,c";
    assert_eq!(build(sixteen).n_sums(), 17);
    let seventeen = "keys=a:vals=a,b,c,a.min,a.max,a.avg,b.min,b.max,b.avg,\
                     c.min,c.max,c.avg,b.quantiles,a,b,c,a";
    // hist's error for what is past the limit: its silent -EINVAL.
    let e = err(seventeen);
    assert_eq!((e.kind(), e.errno()), (None, errno::EINVAL));
}

#[test]
fn sort_on_statistics() {
    let hd = build("keys=a:vals=b,b.max,c.min:sort=b.max.descending,c.min");
    assert_eq!(
        info(&hd),
        "rhist:keys=a:vals=hitcount,b,b.max,c.min:sort=b.max.descending,c.min:size=2048"
    );
    assert_eq!(hd.sort_keys()[0].field, SortField::Sum(2));
    assert!(hd.sort_keys()[0].descending);
    assert_eq!(hd.sort_keys()[1].field, SortField::Sum(3));
    assert!(!hd.sort_keys()[1].descending);
    // `sort=b` is the sum.
    let hd = build("keys=a:vals=b.max,b:sort=b.ascending");
    assert_eq!(hd.sort_keys()[0].field, SortField::Sum(2));
    // An expression, and the written form of a .hex.
    let hd = build("keys=a:vals=b-c.avg,b.hex.max:sort=b-c.avg.descending,b.max");
    assert_eq!(hd.sort_keys()[0].field, SortField::Sum(1));
    assert_eq!(hd.sort_keys()[1].field, SortField::Sum(2));

    let records: Vec<(u32, [u8; 40])> = [
        (1, 50, -1),
        (1, 1, 4),
        (2, 30, -9),
        (3, 40, 6),
        (3, 2, -20),
        (4, 45, 0),
    ]
    .iter()
    .enumerate()
    .map(|(i, &(a, b, c))| (i as u32 % 2, record(a, b, c)))
    .collect();
    let order = |text: &'static str| -> Vec<String> {
        let hd = build(text);
        entries(&run_on(&hd, 2, &records))
            .iter()
            .map(|l| String::from(&l[..16]))
            .collect()
    };
    let keys = |v: &[u64]| -> Vec<String> { v.iter().map(|a| format!("{{ a: {a:10} ")).collect() };
    // b.max: 50, 30, 40, 45.
    assert_eq!(
        order("keys=a:vals=b.max:sort=b.max.descending"),
        keys(&[1, 4, 3, 2])
    );
    assert_eq!(order("keys=a:vals=b.max:sort=b.max"), keys(&[2, 3, 4, 1]));
    // c.min, signed: -1, -9, -20, 0.
    assert_eq!(order("keys=a:vals=c.min:sort=c.min"), keys(&[3, 2, 1, 4]));
    assert_eq!(
        order("keys=a:vals=c.max:sort=c.max.descending"),
        keys(&[3, 1, 4, 2])
    );
    // c.avg, signed: 3/2 = 1, -9, -14/2 = -7, 0.
    assert_eq!(order("keys=a:vals=c.avg:sort=c.avg"), keys(&[2, 3, 4, 1]));
    // b.min, then hitcount: 1, 30, 2, 45.
    assert_eq!(
        order("keys=a:vals=b.min:sort=b.min.descending"),
        keys(&[4, 2, 3, 1])
    );
}

/// Two triggers are one histogram only if their statistics are the same.
#[test]
fn matching_needs_the_same_statistics() {
    let m = |x: &'static str, y: &'static str| build(x).matches(&build(y));
    assert!(m("keys=a:vals=b.max", "keys=a:vals=b.max"));
    assert!(!m("keys=a:vals=b.max", "keys=a:vals=b.min"));
    assert!(!m("keys=a:vals=b.max", "keys=a:vals=b"));
    assert!(!m("keys=a:vals=b.avg", "keys=a:vals=b"));
    assert!(!m("keys=a:vals=b.max,c.min", "keys=a:vals=b.max,c.max"));
    assert!(!m(
        "keys=a:vals=b.max:sort=b.max",
        "keys=a:vals=b.max:sort=hitcount"
    ));
    // The parts of a match C ignores, ignored.
    assert!(m(
        "keys=a:vals=b.max:size=256",
        "keys=a:vals=b.max:size=512"
    ));
}

/// The info line reads back as the same trigger.
#[test]
fn the_info_line_round_trips() {
    let owner = build("keys=a:t=c");
    for text in [
        SIX,
        "keys=a:vals=b,b.hex.max,c.avg,c",
        "keys=a:vals=b-c.max,b*2.min,-(c).avg:sort=b*2.min.descending",
        "keys=a:vals=common_timestamp.usecs.max,cpu.min:sort=cpu.min",
        "keys=a:vals=b.max:nohitcount:sort=b.max.descending,hitcount",
        "keys=a:vals=$t.min,$t.max:sort=t.max",
        "keys=a,c:vals=b.avg:x=c:size=128 if b > 3",
    ] {
        let hd = try_build_with(text, Some(&owner)).unwrap();
        assert!(hd.has_stats(), "{text}");
        let line = info(&hd);
        let again = String::from(line.strip_prefix(trigger::PREFIX).unwrap());
        let again: &'static str = std::boxed::Box::leak(again.into_boxed_str());
        let hd2 = try_build_with(again, Some(&owner)).unwrap();
        assert_eq!(info(&hd2), line, "{text}");
        // As in hist, `cpu` (a generic field) is not `common_cpu`.
        assert!(hd.matches(&hd2) || text.contains("cpu"), "{text}");
    }
}

#[test]
fn debug_shows_the_statistics() {
    let mut out = String::new();
    build("keys=a:vals=b,c.min")
        .write_debug(&mut out, &"ptr")
        .unwrap();
    assert!(
        out.contains(
            "    hist_data->fields[2]:\n      flags:\n        VAL: normal u64 value\n      \
             ftrace_event_field name: c\n      type: s32\n      size: 4\n      is_signed: 1\n      \
             statistic: min\n"
        ),
        "{out}"
    );
    assert_eq!(out.matches("statistic:").count(), 1, "{out}");
}

/// Clearing an entry's statistics goes back to their identity: the next
/// events count afresh.
#[test]
fn clear_starts_afresh() {
    let hd = build("keys=a:vals=b.min,b.max,c.avg");
    let params = map_params(&hd, 2);
    let storage = map_storage(&params);
    let hist = Histogram::new(&hd, TracingMap::new(params, &storage).unwrap()).unwrap();
    hist.update(&record(1, 100, -50), &CTX.on(0));
    hist.update(&record(1, 1, 50), &CTX.on(1));
    hist.clear();
    hist.update(&record(1, 7, 3), &CTX.on(1));
    hist.update(&record(1, 9, 5), &CTX.on(0));
    assert_eq!(
        entries(&print_of(&hist)),
        [
            "{ a:          1 } hitcount:          2  b.min:          7  b.max:          9  \
          c.avg:          4"
        ]
    );
}

/// Per key, the hitcount and the smallest, largest and summed value of
/// `b` (unsigned) and `c` (signed).
#[derive(Clone, Copy)]
struct Model {
    hits: u64,
    b: (u64, u64, u64),
    c: (i64, i64, i64),
}

proptest::proptest! {
    /// Any records on any CPUs give, per key, the statistics of its
    /// values, sums kept per CPU or shared.
    #[test]
    fn statistics_are_those_of_the_records(
        recs in proptest::collection::vec((0u64..6, proptest::num::u32::ANY, proptest::num::i32::ANY, 0u32..5), 1..80),
        cpus in 1usize..5,
    ) {
        let hd = build(SIX);
        let records: Vec<(u32, [u8; 40])> =
            recs.iter().map(|&(a, b, c, cpu)| (cpu, record(a, b, c))).collect();
        let mut model: BTreeMap<u64, Model> = BTreeMap::new();
        for &(a, b, c, _) in &recs {
            let (b, c) = (u64::from(b), i64::from(c));
            let m = model.entry(a).or_insert(Model {
                hits: 0,
                b: (u64::MAX, 0, 0),
                c: (i64::MAX, i64::MIN, 0),
            });
            m.hits += 1;
            m.b = (m.b.0.min(b), m.b.1.max(b), m.b.2 + b);
            m.c = (m.c.0.min(c), m.c.1.max(c), m.c.2 + c);
        }
        let mut want: Vec<String> = model
            .iter()
            .map(|(a, m)| {
                let h = m.hits;
                format!(
                    "{{ a: {a:10} }} hitcount: {h:10}  b.min: {:10}  b.max: {:10}  b.avg: {:10}  \
                     c.min: {:10}  c.max: {:10}  c.avg: {:10}",
                    m.b.0, m.b.1, m.b.2 / h, m.c.0, m.c.1, m.c.2 / h as i64
                )
            })
            .collect();
        want.sort();
        let out = run_on(&hd, cpus, &records);
        let mut got: Vec<String> = entries(&out).iter().map(|l| String::from(*l)).collect();
        got.sort();
        proptest::prop_assert_eq!(got, want);
    }
}

// ---------------------------------------------------------------------
// `.quantiles`: a sketch per entry ([`super::super::sketch`]).

use super::super::sketch::{bucket_high, bucket_of, nearest_rank, PoolParams, SketchPool};

/// The map's and the pool's storage for a histogram of `data` on `cpus`
/// CPUs ([`histogram`]).
fn pct_storage(data: &HistData<'_>, cpus: usize) -> (Vec<AtomicU64>, Vec<AtomicU64>) {
    (map_storage(&map_params(data, cpus)), pool_storage(data))
}

/// The lines of `out` from the Totals on.
fn totals(out: &str) -> &str {
    &out[out.find("Totals:").unwrap()..]
}

#[test]
fn percentiles_build_as_a_statistic() {
    assert_eq!(
        Statistic::split("lat.quantiles"),
        Some(("lat", Statistic::Percentiles))
    );
    assert_eq!(Statistic::split("lat.percentiles"), None);
    // hist takes `.percentiles`: as `.percent`, which it stays.
    let hd = build("keys=a:vals=b.percentiles");
    assert!(!hd.has_stats());
    assert_eq!(hd.sketch_params(), None);
    assert_eq!(
        info(&hd),
        "rhist:keys=a:vals=hitcount,b.percent:sort=hitcount:size=2048"
    );
    let hd = build("keys=a:vals=b.quantiles");
    assert!(hd.has_stats());
    assert_eq!(hd.n_percentiles(), 1);
    assert_eq!((hd.sketch_index(0), hd.sketch_index(1)), (None, Some(0)));
    assert_eq!(hd.sketch_params(), Some(PoolParams::new(2048, 8192)));
    // The compiled program records.
    assert!(hd.program().is_some_and(|p| p.has_stats()));
    let hd = build("keys=a:vals=b.max,a.quantiles,b,b.quantiles:size=128");
    assert_eq!(hd.n_percentiles(), 2);
    assert_eq!(hd.sketch_index(2), Some(0));
    assert_eq!(hd.sketch_index(4), Some(1));
    assert_eq!(hd.sketch_params(), Some(PoolParams::new(256, 1024)));
    // hist's own texts have none.
    assert_eq!(build("keys=a:vals=b").sketch_params(), None);
    assert_eq!(build("keys=a:vals=b.max").sketch_params(), None);
    // A pool is needed, of the trigger's shape, and only then.
    let hd = build("keys=a:vals=b.quantiles");
    let st = map_storage(&map_params(&hd, 1));
    let map = TracingMap::new(map_params(&hd, 1), &st).unwrap();
    assert!(Histogram::new(&hd, map).is_err());
    let small = PoolParams::new(2048, 10);
    let ps = zeros(small.storage_words().unwrap());
    let map = TracingMap::new(map_params(&hd, 1), &st).unwrap();
    let pool = SketchPool::new(small, &ps).unwrap();
    assert!(Histogram::with_sketches(&hd, map, Some(pool)).is_err());
}

#[test]
fn percentiles_print_per_entry_and_in_the_totals() {
    let hd = build("keys=a:vals=b.quantiles,b.max");
    let (m, p) = pct_storage(&hd, 2);
    let hist = histogram(&hd, 2, &m, &p);
    for v in 1..=100u32 {
        hist.update(&record(1, v, 0), &CTX.on(v % 2));
    }
    hist.update(&record(2, 1_000_000, 0), &CTX.on(0));
    let out = print_of(&hist);
    assert_eq!(
        entries(&out),
        [
            "{ a:          2 } hitcount:          1  b.p50:    1003520  b.p90:    1003520  \
             b.p99:    1003520  b.p999:    1003520  b.max:    1000000",
            "{ a:          1 } hitcount:        100  b.p50:         50  b.p90:         90  \
             b.p99:         99  b.p999:        100  b.max:        100",
        ]
    );
    // Totals as hist writes them, then the percentiles of all 101 values
    // and the pool: 2 pages for 1..=100, 1 for 1,000,000.
    assert_eq!(
        totals(&out),
        "Totals:\n    Hits: 101\n    Entries: 2\n    Dropped: 0\n    Percentiles:  \
         b.p50:         51  b.p90:         91  b.p99:        100  b.p999:    1003520  \
         pages: 3/8192  unplaced: 0\n"
    );
    // hist's triggers keep hist's Totals.
    let out = run_on(&build("keys=a:vals=b.max"), 1, &[(0, record(1, 2, 3))]);
    assert!(totals(&out).ends_with("Dropped: 0\n"), "{out}");
}

#[test]
fn percentiles_are_within_one_percent() {
    let hd = build("keys=a:vals=b.quantiles");
    let (m, p) = pct_storage(&hd, 3);
    let hist = histogram(&hd, 3, &m, &p);
    let mut values: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for i in 0..20_000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let a = x % 7;
        // Latencies of 1 µs to some 4 s, spread over the powers of two.
        let b = (x >> 8) as u32 >> ((x >> 40) % 20);
        values.entry(a).or_default().push(u64::from(b));
        hist.update(&record(a, b, 0), &CTX.on(i % 3));
    }
    let out = print_of(&hist);
    let exact = |v: &mut Vec<u64>, q: u32| {
        v.sort_unstable();
        v[nearest_rank(q, v.len() as u64) as usize - 1]
    };
    let within = |got: u64, want: u64| got.abs_diff(want) <= want / 100;
    let parse = |line: &str, name: &str| -> u64 {
        let at = line.find(name).unwrap() + name.len();
        line[at..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    for line in entries(&out) {
        let a = parse(line, "a:");
        let v = values.get_mut(&a).unwrap();
        for (q, name) in [500_000, 900_000, 990_000, 999_000]
            .into_iter()
            .zip(["b.p50:", "b.p90:", "b.p99:", "b.p999:"])
        {
            let (got, want) = (parse(line, name), exact(v, q));
            assert!(within(got, want), "{line}: {name} {got} vs {want}");
        }
    }
    let mut all: Vec<u64> = values.values().flatten().copied().collect();
    let summary = totals(&out).lines().nth(4).unwrap();
    for (q, name) in [500_000, 900_000, 990_000, 999_000]
        .into_iter()
        .zip(["b.p50:", "b.p90:", "b.p99:", "b.p999:"])
    {
        let (got, want) = (parse(summary, name), exact(&mut all, q));
        assert!(within(got, want), "{summary}: {name} {got} vs {want}");
    }
}

/// A pool that ran dry: the quantiles the unplaced values may hide print
/// as a range, `[low,high]`, and the summary counts them.
#[test]
fn a_dry_pool_prints_ranges() {
    // size=128: 128 entries, 512 pages.
    let hd = build("keys=a:vals=b.quantiles:size=128");
    let (m, p) = pct_storage(&hd, 1);
    let hist = histogram(&hd, 1, &m, &p);
    let cpu = CTX;
    for _ in 0..100 {
        hist.update(&record(0, 10, 0), &cpu);
    }
    hist.update(&record(0, 1000, 0), &cpu);
    // Entries of the powers of two 1 to 2^31 (27 pages each: 1 to 32
    // share one) take the 510 pages left: 18 entries, then 24 pages of
    // the 19th, whose last 3 values and all 32 of the 13 next go
    // unplaced.
    for a in 1..=32 {
        for s in 0..32 {
            hist.update(&record(a, 1 << s, 0), &cpu);
        }
    }
    let stats = hist.sketches().unwrap().pool().stats();
    assert_eq!((stats.pages_used, stats.pages), (512, 512));
    // 1,000,000's group has no page in entry 0: unplaced.
    hist.update(&record(0, 1_000_000, 0), &cpu);
    let out = print_of(&hist);
    let line = entries(&out)
        .into_iter()
        .find(|l| l.starts_with("{ a:          0 }"))
        .unwrap();
    // 102 values, one unplaced: p50 and p90 are known; p99 (rank 101)
    // lies between the placed ranks 100 (10) and 101 (1000's bucket);
    // p999 (rank 102) above rank 101: anything from there up.
    assert_eq!(bucket_high(bucket_of(1000)), 1007);
    assert_eq!(
        line,
        "{ a:          0 } hitcount:        102  b.p50:         10  b.p90:         10  \
         b.p99:  [10,1007]  b.p999: [1000,18446744073709551615]"
    );
    let summary = totals(&out).lines().nth(4).unwrap();
    assert!(
        summary.starts_with("    Percentiles:  b.p50: "),
        "{summary}"
    );
    let unplaced = 3 + 13 * 32 + 1;
    assert!(
        summary.ends_with(&format!("  pages: 512/512  unplaced: {unplaced}")),
        "{summary}"
    );
    // Counts stay exact: hitcount is every event's.
    assert!(out.contains("    Hits: 1126\n"), "{out}");
    // An entry none of whose values found a page knows nothing.
    let last = entries(&out)
        .into_iter()
        .find(|l| l.starts_with("{ a:         32 }"))
        .unwrap();
    assert!(last.ends_with("b.p999: [0,18446744073709551615]"), "{last}");
}

#[test]
fn percentiles_in_hex() {
    let hd = build("keys=a:vals=b.hex.quantiles");
    let (m, p) = pct_storage(&hd, 1);
    let hist = histogram(&hd, 1, &m, &p);
    hist.update(&record(1, 100, 0), &CTX.on(0));
    assert_eq!(
        entries(&print_of(&hist)),
        [
            "{ a:          1 } hitcount:          1  b.p50:         64  b.p90:         64  \
          b.p99:         64  b.p999:         64"
        ]
    );
}

#[test]
fn clear_empties_the_sketches() {
    let hd = build("keys=a:vals=b.quantiles");
    let (m, p) = pct_storage(&hd, 1);
    let hist = histogram(&hd, 1, &m, &p);
    for v in [1u32, 1000, 1_000_000] {
        hist.update(&record(1, v, 0), &CTX.on(0));
    }
    assert_eq!(hist.sketches().unwrap().pool().stats().pages_used, 3);
    hist.clear();
    assert_eq!(hist.sketches().unwrap().pool().stats().pages_used, 0);
    hist.update(&record(1, 7, 0), &CTX.on(0));
    let out = print_of(&hist);
    assert_eq!(
        entries(&out),
        [
            "{ a:          1 } hitcount:          1  b.p50:          7  b.p90:          7  \
          b.p99:          7  b.p999:          7"
        ]
    );
    assert!(out.ends_with("  pages: 1/8192  unplaced: 0\n"), "{out}");
    // Nothing at all: 0s.
    hist.clear();
    let out = print_of(&hist);
    assert!(
        out.ends_with(
            "    Percentiles:  b.p50:          0  b.p90:          0  b.p99:          0  \
             b.p999:          0  pages: 0/8192  unplaced: 0\n"
        ),
        "{out}"
    );
}

#[test]
fn percentiles_in_the_info_line_and_matching() {
    for text in [
        "keys=a:vals=b.quantiles",
        "keys=a:vals=b.quantiles,b.max,b:sort=b.max.descending",
        "keys=a:vals=b-a.quantiles,common_timestamp.usecs.quantiles:size=256",
        "keys=a:vals=b.hex.quantiles:nohitcount if b > 3",
        "name=lat:keys=a:vals=b.quantiles",
    ] {
        let hd = build(text);
        let line = info(&hd);
        assert!(line.contains(".quantiles"), "{line}");
        let again = String::from(line.strip_prefix(trigger::PREFIX).unwrap());
        let again: &'static str = std::boxed::Box::leak(again.into_boxed_str());
        let hd2 = build(again);
        assert_eq!(info(&hd2), line, "{text}");
        assert!(hd.matches(&hd2), "{text}");
    }
    assert_eq!(
        info(&build("keys=a:vals=b.quantiles")),
        "rhist:keys=a:vals=hitcount,b.quantiles:sort=hitcount:size=2048"
    );
    // Named triggers share a histogram (and its sketches) only with the
    // same values.
    let named = build("name=lat:keys=a:vals=b.quantiles");
    assert!(!named.matches(&build("name=lat:keys=a:vals=b.max")));
    assert!(!named.matches(&build("name=lat:keys=a:vals=b")));
}

#[test]
fn percentiles_errors_are_hists() {
    let bad_modifier = |text: &str, at: &str| {
        let pos = "rhist:".len() + text.find(at).unwrap();
        HistError::new(HistErrorKind::BadFieldModifier, pos)
    };
    for (text, at) in [
        // A signed value: a sketch counts unsigned ones.
        ("keys=a:vals=c.quantiles", "quantiles"),
        ("keys=a:vals=common_pid.quantiles", "quantiles"),
        // Not a number.
        ("keys=a:vals=s.quantiles", "quantiles"),
        // No sort on a sketch itself (but on its quantiles, `sort=b.p99`:
        // sort_on_a_percentile), nor on a quantile it does not print.
        ("keys=a:vals=b.quantiles:sort=b.quantiles", "quantiles"),
        ("keys=a:vals=b.quantiles:sort=b", "quantiles"),
        ("keys=a:vals=b.quantiles:sort=b.p98", "quantiles"),
        ("keys=a:vals=b.quantiles:sort=b.p99.up", "quantiles"),
        // A misspelt one.
        ("keys=a:vals=b.quantile", "quantile"),
        // Seventeen values.
        (
            "keys=a:vals=b.min,b.max,b.avg,b.quantiles,a.max,a.quantiles,a.min,\
             b.min,b.max,b.avg,b.quantiles,a.max,a.quantiles,a.min,a,b,c",
            "min",
        ),
    ] {
        let e = err(text);
        assert_eq!(e, bad_modifier(text, at), "{text}");
        assert_eq!(e.errno(), errno::EINVAL);
    }
    // Six, of which two sketches, build.
    let hd = build("keys=a:vals=b.min,b.max,b.avg,b.quantiles,a.max,a.quantiles");
    assert_eq!(hd.n_percentiles(), 2);
}

#[test]
fn debug_shows_the_sketches() {
    let mut out = String::new();
    build("keys=a:vals=b.quantiles")
        .write_debug(&mut out, &"ptr")
        .unwrap();
    let pool = PoolParams::new(2048, 8192).storage_bytes().unwrap();
    assert_eq!(pool, 64 + 2048 * 512 + 8192 * 512 + 56);
    assert!(
        out.contains(&format!(
            "      statistic: quantiles\n      sketch: 0 of 1\n      \
             sketch memory per entry: 512 bytes of index, and 512 bytes per page it takes\n      \
             sketch pool: 2048 sketches, 8192 pages, {pool} bytes\n"
        )),
        "{out}"
    );
}

/// Two `.quantiles` values, each its own sketch, and nohitcount: the
/// columns in the order given, and one summary line for both.
#[test]
fn two_quantiles_values_and_nohitcount() {
    let hd = build("keys=a:vals=b.quantiles,a.quantiles:nohitcount");
    let (m, p) = pct_storage(&hd, 1);
    let hist = histogram(&hd, 1, &m, &p);
    for b in [10u32, 20, 30] {
        hist.update(&record(5, b, 0), &CTX.on(0));
    }
    let out = print_of(&hist);
    assert_eq!(
        entries(&out),
        [
            "{ a:          5 }  b.p50:         20  b.p90:         30  b.p99:         30  \
          b.p999:         30  a.p50:          5  a.p90:          5  a.p99:          5  \
          a.p999:          5"
        ]
    );
    assert!(
        out.ends_with(
            "    Percentiles:  b.p50:         20  b.p90:         30  b.p99:         30  \
             b.p999:         30  a.p50:          5  a.p90:          5  a.p99:          5  \
             a.p999:          5  pages: 2/16384  unplaced: 0\n"
        ),
        "{out}"
    );
}

/// `grow` with what the build finds (references, `.quantiles`) is out
/// of its scope; with statistics and plain values it builds, and its
/// info says `:grow`.
#[test]
fn grow_scope_of_the_build() {
    use super::super::grammar::GrowScope;
    let ext = |text| trigger::parse_ext_as(&trigger::RHIST, text).unwrap();
    let spec = ext("keys=a:vals=b.max,b.avg,c:size=128:grow");
    let hd = HistData::build(&spec, &EVENT).unwrap();
    assert_eq!(hd.grow_scope(), Ok(()));
    assert_eq!(
        info(&hd),
        "rhist:keys=a:vals=hitcount,b.max,b.avg,c:sort=hitcount:size=128:grow"
    );
    let spec = ext("keys=a:vals=b.quantiles:grow");
    let hd = HistData::build(&spec, &EVENT).unwrap();
    assert_eq!(hd.grow_scope(), Err(GrowScope::Quantiles));
    let owner = build("keys=a:t=b");
    let spec = ext("keys=a:vals=$t:grow");
    let mut hd = HistData::empty(&spec);
    let lookup = VarsOf(&owner);
    let options = BuildOptions {
        vars: Some(&lookup),
        ..Default::default()
    };
    HistData::build_into_with(&mut hd, &spec, &EVENT, options).unwrap();
    assert_eq!(hd.grow_scope(), Err(GrowScope::References));
    // Without `grow`, nothing to say.
    assert_eq!(build("keys=a:vals=b.quantiles").grow_scope(), Ok(()));
}

/// `sort=b.p99`: the entries by a quantile of each one's sketch, as the
/// column prints it, first or second, either way; the trigger info
/// writes it back; a quantile hist has no name for is refused.
#[test]
fn sort_on_a_percentile() {
    let hd = build("keys=a:vals=b.quantiles:sort=b.p99.descending,a");
    assert_eq!(
        info(&hd),
        "rhist:keys=a:vals=hitcount,b.quantiles:sort=b.p99.descending,a:size=2048"
    );
    assert_eq!(
        hd.sort_keys()[0].field,
        SortField::Quantile { val: 1, rank: 2 }
    );
    assert!(hd.sort_keys()[0].descending);
    let hd = build("keys=a:vals=c,b.quantiles,c.max:sort=c.max,b.p50.ascending");
    assert_eq!(
        hd.sort_keys()[1].field,
        SortField::Quantile { val: 2, rank: 0 }
    );
    assert!(!hd.sort_keys()[1].descending);
    assert_eq!(
        info(&build("keys=a:vals=b.quantiles:sort=b.p999")),
        "rhist:keys=a:vals=hitcount,b.quantiles:sort=b.p999:size=2048"
    );
    // `sort=b` beside b's sketch is b's sum.
    let hd = build("keys=a:vals=b,b.quantiles:sort=b.descending");
    assert_eq!(hd.sort_keys()[0].field, SortField::Sum(1));
    // Not a quantile it prints, or not of a .quantiles value.
    err("keys=a:vals=b.quantiles:sort=b.p98");
    err("keys=a:vals=b.quantiles:sort=b.p99.up");
    err("keys=a:vals=c.quantiles:sort=b.p99");
    // hist's text keeps hist's error: no such modifier.
    assert_eq!(
        err("keys=a:vals=b:sort=b.p99"),
        hist_err("keys=a:vals=b:sort=b.p99")
    );

    // Key 1: 1..=100 (p50 50, p99 99); key 2: 40 values of 1000 and one
    // of 10 (p50 1000, p99 1000); key 3: 200..=209 (p50 204, p99 209);
    // key 4: 5000 once.
    let mut records = Vec::new();
    for v in 1..=100u32 {
        records.push((v % 2, record(1, v, 0)));
    }
    for i in 0..40u32 {
        records.push((i % 2, record(2, 1000, 0)));
    }
    records.push((0, record(2, 10, 0)));
    for v in 200..=209u32 {
        records.push((v % 2, record(3, v, 0)));
    }
    records.push((1, record(4, 5000, 0)));
    let print = |hd: &HistData<'_>| -> String {
        let (m, p) = pct_storage(hd, 2);
        let hist = histogram(hd, 2, &m, &p);
        for (cpu, r) in &records {
            hist.update(r, &CTX.on(*cpu));
        }
        print_of(&hist)
    };
    let order = |text: &'static str| -> Vec<String> {
        entries(&print(&build(text)))
            .iter()
            .map(|l| String::from(&l[..16]))
            .collect()
    };
    let keys = |v: &[u64]| -> Vec<String> { v.iter().map(|a| format!("{{ a: {a:10} ")).collect() };
    // p99: 99, 1000 (within 1%: 1003), 209, 5000 (5024).
    assert_eq!(
        order("keys=a:vals=b.quantiles:sort=b.p99.descending"),
        keys(&[4, 2, 3, 1])
    );
    assert_eq!(
        order("keys=a:vals=b.quantiles:sort=b.p99"),
        keys(&[1, 3, 2, 4])
    );
    // p50: 50, 1000, 204, 5000; hitcount first: 1, 10, 41, 100.
    assert_eq!(
        order("keys=a:vals=b.quantiles:sort=b.p50"),
        keys(&[1, 3, 2, 4])
    );
    assert_eq!(
        order("keys=a:vals=b.quantiles:sort=hitcount,b.p50.descending"),
        keys(&[4, 3, 2, 1])
    );
    // The order of the p99 column as printed.
    let hd = build("keys=a:vals=b.quantiles:sort=b.p99.descending");
    let out = print(&hd);
    let p99: Vec<u64> = entries(&out)
        .iter()
        .map(|l| {
            let at = l.find("b.p99:").unwrap() + "b.p99:".len();
            l[at..].split_whitespace().next().unwrap().parse().unwrap()
        })
        .collect();
    let mut sorted = p99.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(p99, sorted);
}
