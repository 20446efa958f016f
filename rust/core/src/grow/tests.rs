// SPDX-License-Identifier: GPL-2.0

//! The tests of `grow.rs`: when a map asks to grow, and a histogram
//! grown generation by generation against one large map.

extern crate std;

use super::*;
use crate::hist::hist_data::HistData;
use crate::hist::histogram::map_params_sized;
use crate::hist::map::TracingMap;
use crate::hist::program::At;
use crate::hist::trigger;
use crate::testing::{comm, map_storage, print_of, record, Task, EVENT, TASK};
use core::sync::atomic::AtomicU64;
use std::string::String;
use std::vec::Vec;

#[test]
fn sizes_grow_by_four_up_to_the_cap() {
    assert_eq!(next_bits(7), Some(9));
    assert_eq!(next_bits(15), Some(17));
    assert_eq!(next_bits(16), Some(17));
    assert_eq!(next_bits(17), None);
    let mut bits = 7;
    let mut n = 0;
    while let Some(b) = next_bits(bits) {
        bits = b;
        n += 1;
    }
    assert_eq!((bits, n), (17, 5));
}

#[test]
fn a_generation_asks_once_then_again_after_a_failure() {
    let t = GrowTrigger::new(7, 0);
    assert_eq!(t.threshold(), Some(64));
    assert!(!t.check(63));
    assert!(t.check(64));
    assert!(!t.check(64) && !t.check(100));
    // Failed: at 96, at 112, ... at 128 (full), then never.
    let mut asked = Vec::new();
    for _ in 0..10 {
        t.retry();
        let Some(at) = t.threshold() else { break };
        assert!(!t.check(at - 1));
        assert!(t.check(at));
        asked.push(at);
    }
    assert_eq!(asked, [96, 112, 120, 124, 126, 127, 128]);
    assert!(!t.check(128));
    // At the cap, never.
    assert_eq!(GrowTrigger::new(17, 0).threshold(), None);
    assert!(!GrowTrigger::new(17, 0).check(usize::MAX - 1));
}

#[test]
fn a_cleared_map_asks_again_as_a_new_one() {
    let t = GrowTrigger::new(9, 0);
    assert!(t.check(256));
    t.retry();
    t.retry();
    assert_eq!(t.threshold(), Some(448));
    t.reset();
    assert_eq!(t.threshold(), Some(256));
    assert!(!t.check(255) && t.check(256) && !t.check(300));
    let cap = GrowTrigger::new(17, 0);
    cap.reset();
    assert_eq!(cap.threshold(), None);
}

/// The shell's histogram of a `:grow` trigger takes no compiled path:
/// its events go to the general part, which takes the generation's.
#[test]
fn an_interpreted_histogram_has_no_compiled_path() {
    let spec = trigger::parse_ext_as(&trigger::RHIST, "keys=a:size=128:grow").unwrap();
    let data = HistData::build(&spec, &EVENT).unwrap();
    let s = storage(&data, 3);
    let h = Histogram::new(
        &data,
        TracingMap::new(map_params_sized(&data, 3, 3), &s).unwrap(),
    )
    .unwrap();
    assert!(h.program().is_some());
    let h = h.interpreted();
    assert!(h.program().is_none());
    let (r, _) = events(1, 10)[0];
    let here = At {
        cpu: 0,
        comm: comm(b"x"),
    };
    assert!(!h.update_compiled(&r, here, || {}));
    assert_eq!(h.hits(), 0);
}

/// What the event path asks before every event of a `:grow` map,
/// [`GrowTrigger::near`] (no clamp to the map's size), is whether the
/// entry count is within the slack of the first threshold, as the map
/// fills and past its room (the inserts that fail count on), after
/// failures (whose thresholds are higher), after a reset and at the
/// cap; and [`GrowTrigger::check`] is true once per threshold, past it.
#[test]
fn near_is_within_the_slack_of_the_threshold() {
    let spec = trigger::parse_ext_as(&trigger::RHIST, "keys=a:size=128:grow").unwrap();
    let data = HistData::build(&spec, &EVENT).unwrap();
    for (bits, slack) in [(7, 0), (7, 8), (7, 100), (17, 8)] {
        let s = storage(&data, bits);
        let h = Histogram::new(
            &data,
            TracingMap::new(map_params_sized(&data, bits, 3), &s).unwrap(),
        )
        .unwrap();
        let t = GrowTrigger::new(bits, slack);
        let (mut fails, mut asked) = (0, 0);
        for a in 0..300u64 {
            if matches!(a, 150 | 200 | 260) {
                t.retry();
            }
            let at = t.threshold().unwrap_or(usize::MAX);
            let len = h.map().len();
            // The first threshold's, after failures too.
            let near = match bits {
                7 => 64usize.saturating_sub(slack),
                _ => usize::MAX,
            };
            assert!(at == usize::MAX || near <= at.saturating_sub(slack));
            assert_eq!(
                t.near(h.map()),
                len >= near,
                "bits {bits} len {len} at {at}"
            );
            h.update(&record(a, 1, 2), &Task { cpu: 0, ..TASK });
            fails += usize::from(h.map().len() == len);
            asked += usize::from(t.check(h.map().len()));
        }
        // The small map filled, then failed inserts: still `len` on;
        // it asked at 64, 96, 112 and 120.
        assert_eq!(fails > 0, bits == 7);
        assert_eq!(asked, if bits == 7 { 4 } else { 0 }, "bits {bits}");
        t.reset();
        assert_eq!(t.near(h.map()), bits == 7);
    }
}

#[test]
fn stats_show_in_the_debug_line() {
    let s = GrowStats::default();
    s.grew();
    s.grew();
    s.failed();
    let mut out = String::new();
    s.write_debug(&mut out, 2048).unwrap();
    assert_eq!(out, "  grow: generation 2 size 2048 grows 2 failed 1\n");
}

fn storage(data: &HistData<'_>, bits: u32) -> Vec<AtomicU64> {
    map_storage(&map_params_sized(data, bits, 3))
}

/// `n` events of about `keys` distinct keys, from 4 CPUs and 7 tasks.
fn events(n: usize, keys: u64) -> Vec<([u8; 24], Task)> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let a = x % keys;
            let pid = (x >> 40) as i32 % 7;
            // `task0` to `task6`.
            let mut name = comm(b"task");
            name[4] = b'0' + (pid % 10) as u8;
            let ctx = Task {
                pid,
                cpu: i as u32 % 4,
                comm: name,
                ..TASK
            };
            (
                record(a, (x >> 20) as u32 % 5000, (x >> 33) as i32 % 300 - 150),
                ctx,
            )
        })
        .collect()
}

/// A `:grow` histogram that starts at 128 entries and grows as the
/// shell would make it (events go to the new map between its
/// publication and the fold; the first grow fails and is retried)
/// prints what one map of 131072 entries prints: every entry, sum,
/// statistic and saved comm, the Totals, `Dropped: 0`.
#[test]
fn a_grown_histogram_prints_as_one_large_map() {
    for text in [
        "keys=a:vals=b.max,c.min,b.avg,c:size=128:grow",
        "keys=a,c:vals=b:sort=b.descending,a:size=128:grow",
        "keys=common_pid.execname,a:vals=b.min:size=128:grow",
        "keys=a.hex:vals=c.max:nohitcount:size=128:grow",
    ] {
        let spec = trigger::parse_ext_as(&trigger::RHIST, text).unwrap();
        let data = HistData::build(&spec, &EVENT).unwrap();
        assert_eq!(data.grow_scope(), Ok(()), "{text}");
        let evs = events(6000, 2500);

        let big = storage(&data, 17);
        let map = TracingMap::new(map_params_sized(&data, 17, 3), &big).unwrap();
        let want = Histogram::new(&data, map).unwrap();
        for (r, ctx) in &evs {
            want.update(r, ctx);
        }

        let stores: Vec<(u32, Vec<AtomicU64>)> = [7, 9, 11, 13, 15]
            .iter()
            .map(|&b| (b, storage(&data, b)))
            .collect();
        let hist_of = |g: usize| {
            let (bits, s) = &stores[g];
            let map = TracingMap::new(map_params_sized(&data, *bits, 3), s).unwrap();
            Histogram::new(&data, map).unwrap()
        };
        let stats = GrowStats::default();
        let mut g = 0;
        let mut cur = hist_of(0);
        let mut trig = GrowTrigger::new(7, 0);
        let mut failed_once = false;
        // The old generation and how many events went to the new one
        // since its publication.
        let mut pending: Option<(Histogram<'_>, usize)> = None;
        for (r, ctx) in &evs {
            cur.update(r, ctx);
            if let Some((old, n)) = pending.as_mut() {
                *n += 1;
                if *n == 40 {
                    fold_into(old, &cur).unwrap();
                    pending = None;
                }
            }
            if trig.check(cur.map().len()) {
                if !failed_once {
                    failed_once = true;
                    stats.failed();
                    trig.retry();
                    continue;
                }
                assert!(pending.is_none(), "{text}: asked before the fold");
                g += 1;
                let old = core::mem::replace(&mut cur, hist_of(g));
                trig = GrowTrigger::new(stores[g].0, 0);
                stats.grew();
                pending = Some((old, 0));
            }
        }
        if let Some((old, _)) = pending {
            fold_into(&old, &cur).unwrap();
        }
        let gens = stats.generation();
        assert!(gens >= 3, "{text}");
        assert_eq!(stats.counts(), (gens, 1), "{text}");
        assert_eq!(cur.map().drops(), 0, "{text}");
        let got = print_of(&cur);
        assert!(got.contains("Dropped: 0"), "{text}");
        assert_eq!(got, print_of(&want), "{text}");
    }
}

/// The fold refuses a histogram of other data, or with sketches.
#[test]
fn fold_needs_the_same_data() {
    let one = |text| {
        let spec = trigger::parse_ext_as(&trigger::RHIST, text).unwrap();
        HistData::build(&spec, &EVENT).unwrap()
    };
    let (d1, d2) = (one("keys=a:size=128:grow"), one("keys=a:size=128:grow"));
    let (s1, s2) = (storage(&d1, 7), storage(&d2, 9));
    let h1 = Histogram::new(
        &d1,
        TracingMap::new(map_params_sized(&d1, 7, 3), &s1).unwrap(),
    )
    .unwrap();
    let h2 = Histogram::new(
        &d2,
        TracingMap::new(map_params_sized(&d2, 9, 3), &s2).unwrap(),
    )
    .unwrap();
    assert!(fold_into(&h1, &h2).is_err());
    // Without :grow, a map of another size is refused.
    let d3 = one("keys=a:size=128");
    assert!(Histogram::new(
        &d3,
        TracingMap::new(map_params_sized(&d3, 9, 3), &s2).unwrap()
    )
    .is_err());
}

#[test]
fn spare_is_the_next_size_and_at_least_the_floor() {
    assert_eq!(spare_bits(7), Some(SPARE_BITS_MIN));
    assert_eq!(spare_bits(11), Some(13));
    assert_eq!(spare_bits(13), Some(15));
    assert_eq!(spare_bits(16), Some(17));
    assert_eq!(spare_bits(17), None);
}
