// SPDX-License-Identifier: GPL-2.0

//! Runs one trigger shape over `N` events, for counting instructions:
//! `valgrind --tool=callgrind target/release/examples/event_cost keys=a 100000 [keys] [stage]`
//! (`keys` distinct keys, 64 by default), on a map that keeps its sums
//! per CPU for two CPUs, as the module does on the bench's guest.
//!
//! `stage` runs only the first stages of a compiled trigger's event path,
//! as the histogram's code for the program's shape does them, so that
//! their differences give each stage's cost: 0 only the loop, 1 reads
//! the record and builds the key, 2 also hashes it, 3 builds it and finds
//! or inserts its entry (hash, probe, compare), 4 also adds the sums, 5
//! (the default) is the whole `Histogram::update()` (whose code the
//! compiler lays out differently: its total is not the sum of the
//! stages); 6 runs `Histogram::update_general()`, the general path,
//! whatever the trigger's program. A trigger with `.quantiles` values
//! gets its sketches' pool.

use std::hint::black_box;
use std::sync::atomic::Ordering;

use rhist_core::hist::event::{EventDesc, EventField, FieldStorage};
use rhist_core::hist::hist_data::HistData;
use rhist_core::hist::histogram::{map_params, Histogram};
use rhist_core::hist::map::{First, Inserter, MapKey};
use rhist_core::hist::program::Program;
use rhist_core::hist::trigger;
use rhist_core::testing::{
    histogram, map_storage, pool_storage, record, sample_event, FIELD_A, FIELD_B, FIELD_C, TASK,
};

/// The bench event's fields (tools/testing/rhist_test_events).
const FIELDS: [EventField<'static>; 5] = [
    FIELD_A,
    FIELD_B,
    FIELD_C,
    EventField::new("s", "char[16]", 24, 16, true, FieldStorage::StaticString),
    EventField::new(
        "d",
        "__data_loc char[]",
        40,
        4,
        true,
        FieldStorage::DynString,
    ),
];

/// A record's size: the fields, then `d`'s string.
const REC: usize = 64;

const EVENT: EventDesc<'static> = sample_event(&FIELDS);

/// One event, out of line so that its code can be read apart.
#[inline(never)]
fn one_event(hist: &Histogram<'_>, rec: &[u8]) {
    hist.update(rec, &TASK);
}

/// One event by the general path, out of line too.
#[inline(never)]
fn one_event_general(hist: &Histogram<'_>, rec: &[u8]) {
    hist.update_general(rec, &TASK);
}

/// The first `stage` stages of one event of a compiled trigger whose key
/// is `N` words, built by `key` (as the histogram's code for the
/// program's shape builds it).
#[inline(never)]
fn stages<const N: usize>(
    hist: &Histogram<'_>,
    p: &Program,
    rec: &[u8],
    stage: u32,
    key: impl Fn(&[u8]) -> Option<[u64; N]>,
) {
    let map = hist.map();
    if stage == 0 {
        black_box(rec);
        return;
    }
    // The bench's records are all whole: no key takes the slow path.
    let Some(key) = key(rec) else {
        return;
    };
    if stage == 1 {
        black_box(key);
        return;
    }
    let h = (&key).hash(N);
    if stage == 2 {
        black_box(h);
        return;
    }
    let first = match map.event_find_at_home(&key, h) {
        First::Further => map.event_find_past_home(&key, h),
        first => first,
    };
    let elt = match first {
        First::Found(i) => Some(i),
        First::Probe => map.event_insert_missing(&key, h, Inserter::on_cpu(0)),
        First::Absent | First::Further => None,
    };
    let sums = black_box(elt).and_then(|i| map.cpu_sums(i, 0));
    let Some((hits, values)) = sums.as_ref().and_then(|s| s.words().split_first()) else {
        return;
    };
    if stage >= 4 {
        hits.fetch_add(1, Ordering::Relaxed);
        // The bench's records are all whole: every value is quick.
        let _ = p.add_values_fast(rec, values);
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let text = args.next().unwrap_or_else(|| "keys=a".into());
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let keys: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(64);
    let stage: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    let spec = trigger::parse(&text).expect("trigger");
    let data = HistData::build(&spec, &EVENT).expect("hist data");
    let storage = map_storage(&map_params(&data, 2));
    let pool = pool_storage(&data);
    let hist = histogram(&data, 2, &storage, &pool);
    let mut recs = vec![[0u8; REC]; 4096];
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    for r in recs.iter_mut() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        r[..24].copy_from_slice(&record(
            s % keys,
            ((s >> 8) % 4) as u32,
            ((s >> 40) % 4) as i32,
        ));
        let name = format!("task-{}", s % keys);
        r[24..24 + name.len()].copy_from_slice(name.as_bytes());
        // d: 16 bytes at 44, NUL included.
        r[40..44].copy_from_slice(&(44u32 | 16 << 16).to_ne_bytes());
        r[44..44 + name.len()].copy_from_slice(name.as_bytes());
    }
    let program = hist.program().filter(|_| stage < 5);
    for i in 0..n {
        let rec = black_box(&recs[i & 4095]);
        if stage == 6 {
            one_event_general(&hist, rec);
            continue;
        }
        match program {
            None => one_event(&hist, rec),
            Some(p) if p.words() => match p.n_keys() {
                1 => stages(&hist, p, rec, stage, |r| p.number_key_fast::<1>(r)),
                2 => stages(&hist, p, rec, stage, |r| p.number_key_fast::<2>(r)),
                _ => stages(&hist, p, rec, stage, |r| p.number_key_fast::<3>(r)),
            },
            Some(p) if p.short() => match p.key_words() {
                1 => stages(&hist, p, rec, stage, |r| p.short_key_fast::<1>(r)),
                2 => stages(&hist, p, rec, stage, |r| p.short_key_fast::<2>(r)),
                3 => stages(&hist, p, rec, stage, |r| p.short_key_fast::<3>(r)),
                _ => stages(&hist, p, rec, stage, |r| p.short_key_fast::<4>(r)),
            },
            // Longer keys with strings: stage 5 only.
            Some(_) => one_event(&hist, rec),
        }
    }
    println!("{} entries", hist.map().len());
}
