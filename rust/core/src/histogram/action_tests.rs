// SPDX-License-Identifier: GPL-2.0

//! The event path of actions: references resolved, then the values of
//! each synthetic event's fields handed to the sink.

use super::super::event::{EventDesc, EventField, FieldStorage};
use super::super::hist_data::{BuildOptions, SynthField, SynthLookup};
use super::super::trigger;
use super::*;
use crate::testing::{build_with_actions, comm, map_storage, sample_event, Task, VarsOf, TASK};
use core::cell::RefCell;
use core::sync::atomic::AtomicU64;
use std::format;
use std::string::String;
use std::vec::Vec;

static FIELDS: [EventField<'static>; 3] = [
    EventField::new("a", "u64", 8, 8, false, FieldStorage::Other),
    EventField::new("bb", "u32", 16, 4, false, FieldStorage::Other),
    EventField::new("ss", "char[8]", 20, 8, false, FieldStorage::StaticString),
];

const EVENT: EventDesc<'static> = sample_event(&FIELDS);

/// `sh`, pid 7, at `ts`.
fn at(ts: u64) -> Task {
    Task {
        pid: 7,
        ts,
        comm: comm(b"sh"),
        ..TASK
    }
}

fn record(a: u64, b: u32, s: &[u8]) -> [u8; 28] {
    let mut r = [0u8; 28];
    r[8..16].copy_from_slice(&a.to_ne_bytes());
    r[16..20].copy_from_slice(&b.to_ne_bytes());
    r[20..20 + s.len()].copy_from_slice(s);
    r
}

/// `lat u64 d; u32 bb; char ss[8]; char nm[8]`.
struct Lat;

impl SynthLookup for Lat {
    fn n_fields(&self, name: &str) -> Option<usize> {
        (name == "lat").then_some(4)
    }
    fn field(&self, _: &str, pos: usize) -> Option<SynthField<'_>> {
        let num = |type_name, size| SynthField {
            type_name,
            size,
            signed: false,
            string: false,
            dynamic: false,
            stack: false,
        };
        let string = SynthField {
            type_name: "char[8]",
            size: 8,
            string: true,
            ..num("", 0)
        };
        [num("u64", 8), num("u32", 4), string, string]
            .get(pos)
            .copied()
    }
}

/// What the sink got: each event's action and field values.
#[derive(Default)]
struct Sink(RefCell<Vec<(usize, Vec<u64>)>>);

impl ActionSink for Sink {
    fn trace(&self, action: usize, vals: &[u64], idx: &[u32]) {
        let fields = idx.iter().map(|&i| vals[i as usize]).collect();
        self.0.borrow_mut().push((action, fields));
    }
    fn snapshot(&self, _: u64, _: &[u8], _: &[u8; 16]) {}
}

/// The string whose copy starts at `addr`, a word of one of `maps`.
fn string_at(maps: &[&[AtomicU64]], addr: u64) -> Vec<u8> {
    let (map, at) = maps
        .iter()
        .find_map(|m| {
            let at = m.iter().position(|w| w.as_ptr() as u64 == addr)?;
            Some((m, at))
        })
        .expect("the address of a word of an entry");
    let bytes: Vec<u8> = map[at..at + vars::STR_VAR_WORDS]
        .iter()
        .flat_map(|w| w.load(Ordering::Relaxed).to_ne_bytes())
        .collect();
    bytes.into_iter().take_while(|&c| c != 0).collect()
}

fn storage(data: &HistData<'_>) -> Vec<AtomicU64> {
    map_storage(&map_params(data, 1))
}

#[test]
fn onmatch_traces_resolved_values() {
    let spec = trigger::parse("keys=a:t0=common_timestamp,nm=ss").unwrap();
    let d1 = HistData::build(&spec, &EVENT).unwrap();
    let s1 = storage(&d1);
    let h1 = Histogram::new(&d1, TracingMap::new(map_params(&d1, 1), &s1).unwrap()).unwrap();

    let text = "keys=a:d=common_timestamp-$t0:\
                onmatch(rhist_test.rhist_sample).lat($d,bb,ss,$nm)";
    let spec = trigger::parse(text).unwrap();
    let owner = VarsOf(&d1);
    let exists = |_: &str, _: &str| true;
    let options = BuildOptions {
        vars: Some(&owner),
        synths: Some(&Lat),
        event_exists: Some(&exists),
        ..Default::default()
    };
    let mut d2 = HistData::empty(&spec);
    HistData::build_into_with(&mut d2, &spec, &EVENT, options).unwrap();
    d2.create_actions(&EVENT, options).unwrap();
    let s2 = storage(&d2);
    let h2 = Histogram::new(&d2, TracingMap::new(map_params(&d2, 1), &s2).unwrap()).unwrap();

    let sink = Sink::default();
    // No t0 for key 1 yet: nothing.
    h2.update_with_refs(&record(1, 5, b"x"), &at(100), &[&h1], &sink);
    assert!(sink.0.borrow().is_empty());
    h1.update(&record(1, 0, b"waker"), &at(1000));
    h2.update_with_refs(&record(1, 5, b"wakee"), &at(1250), &[&h1], &sink);
    // t0 was consumed: the next one is dropped.
    h2.update_with_refs(&record(1, 6, b"again"), &at(1300), &[&h1], &sink);
    let got = sink.0.borrow();
    assert_eq!(got.len(), 1);
    let (action, fields) = &got[0];
    assert_eq!((*action, fields[..2].to_vec()), (0, std::vec![250, 5]));
    let maps = [&s1[..], &s2[..]];
    assert_eq!(string_at(&maps, fields[2]), b"wakee");
    assert_eq!(string_at(&maps, fields[3]), b"waker");
}

/// What the snapshot sink got: each snapshot's value and key.
#[derive(Default)]
struct Snaps(RefCell<Vec<(u64, Vec<u8>)>>);

impl ActionSink for Snaps {
    fn trace(&self, _: usize, _: &[u64], _: &[u32]) {}
    fn snapshot(&self, val: u64, key: &[u8], _: &[u8; 16]) {
        self.0.borrow_mut().push((val, key.to_vec()));
    }
}

/// Builds `text` on EVENT with its actions, runs `records` through it
/// and gives the printed entries (without Totals).
fn run_actions(text: &str, records: &[(u64, u32, &[u8])], sink: &dyn ActionSink) -> String {
    let data = build_with_actions(text, &EVENT);
    let st = storage(&data);
    let h = Histogram::new(&data, TracingMap::new(map_params(&data, 1), &st).unwrap()).unwrap();
    for &(a, b, s) in records {
        h.update_with_refs(&record(a, b, s), &at(0), &[], sink);
    }
    let mut order = std::vec![0u32; h.map().max_elts()];
    let mut out = String::new();
    h.print(&mut out, &output::NoSymbols, &mut order).unwrap();
    String::from(&out[..out.find("\nTotals:").unwrap()])
}

/// onmax().save(): the maximum and the fields of the event that set
/// it, printed after the values as C prints them; a string never
/// saved is C's NULL.
#[test]
fn onmax_saves_the_fields_of_the_maximum() {
    let recs: [(u64, u32, &[u8]); 4] = [
        (5, 1, b"five"),
        (3, 1, b"three"),
        (9, 1, b"nine"),
        (0, 2, b"zero"),
    ];
    let out = run_actions(
        "keys=bb:v=a:onmax($v).save(ss,bb)",
        &recs,
        &Snaps::default(),
    );
    let pad = |s: &str| format!("{s:<32}");
    assert_eq!(
        out,
        format!(
            "{{ bb:          2 }} hitcount:          1\n\tmax:          0  ss: {}  bb:          0\n\
             {{ bb:          1 }} hitcount:          3\n\tmax:          9  ss: {}  bb:          1\n",
            pad("(null)"),
            pad("nine")
        )
    );
}

/// onchange(): every change acts, the same value does not; a
/// snapshot() action hands each change to the sink with its key.
#[test]
fn onchange_acts_on_changes() {
    let recs: [(u64, u32, &[u8]); 5] = [
        (4, 1, b"a"),
        (4, 1, b"b"),
        (2, 1, b"c"),
        (0, 1, b"d"),
        (7, 3, b"e"),
    ];
    let snaps = Snaps::default();
    let text = "keys=bb:v=a:onchange($v).save(ss):onchange($v).snapshot()";
    let out = run_actions(text, &recs, &snaps);
    assert!(
        out.contains("hitcount:          4\n\tchanged:          0  ss: d "),
        "{out}"
    );
    assert!(
        out.contains("hitcount:          1\n\tchanged:          7  ss: e "),
        "{out}"
    );
    // The snapshot action prints nothing per entry.
    assert_eq!(out.matches("changed:").count(), 2, "{out}");
    let got: Vec<u64> = snaps.0.borrow().iter().map(|s| s.0).collect();
    assert_eq!(got, [4, 2, 0, 7]);
    assert_eq!(snaps.0.borrow()[3].1[..4], 3u32.to_ne_bytes());
}

/// The details of the last snapshot, before the Totals.
#[test]
fn snapshot_details_are_printed() {
    let data = build_with_actions("keys=bb:v=a:onmax($v).snapshot()", &EVENT);
    let st = storage(&data);
    let h = Histogram::new(&data, TracingMap::new(map_params(&data, 1), &st).unwrap()).unwrap();
    let mut order = std::vec![0u32; h.map().max_elts()];
    let mut out = String::new();
    let key = 12u64.to_ne_bytes();
    let snap = Snapshot {
        val: 42,
        key: &key,
        comm: [0; 16],
    };
    h.print_with_snapshot(&mut out, &output::NoSymbols, &mut order, Some(&snap))
        .unwrap();
    assert_eq!(
        out,
        "\nSnapshot taken (see tracing/snapshot).  Details:\n\
         \ttriggering value { onmax($v) }:         42\t\
         triggered by event with key: { bb:         12 }\n\
         \nTotals:\n    Hits: 0\n    Entries: 0\n    Dropped: 0\n"
    );
    // Without a snapshot action, nothing.
    let mut plain = String::new();
    let spec = trigger::parse("keys=bb").unwrap();
    let d = HistData::build(&spec, &EVENT).unwrap();
    let st = storage(&d);
    let h = Histogram::new(&d, TracingMap::new(map_params(&d, 1), &st).unwrap()).unwrap();
    h.print_with_snapshot(&mut plain, &output::NoSymbols, &mut order, Some(&snap))
        .unwrap();
    assert!(!plain.contains("Snapshot"));
}
