// SPDX-License-Identifier: GPL-2.0

//! `:grow` under threads, as the kernel shell runs it: updaters account
//! events through a generation index loaded once per event, and the one
//! whose event takes the current map to its threshold (having found it
//! near it first) switches to the spare itself (one swap: one taker), leaving the old generation on the
//! new one's chain of older ones. Another thread, the grow work, makes
//! the next spare (switching to it itself if the threshold came when
//! there was none), waits for every updater that may still be in a
//! generation left behind (a grace period, modelled with a sequence
//! counter per updater, odd while it is in an event), folds those into
//! the current map and "frees" them (clears them and marks them freed:
//! an updater that used one after would fail the test, or lose counts).
//! The totals must come out exact.
//!
//! A grow work that runs late (a loaded machine) may find the current map
//! full when it folds: the entries with no room are lost, and their hits
//! become the map's drops, as `grow::fold_into` does. One round makes
//! that happen whatever the scheduling: the grow work waits after each
//! spare until the current map is full, and the updaters go on until two
//! folds are done.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use rhist_core::hist::grow::{next_bits, GrowTrigger};

/// No generation (an empty `spare` or `older`).
const NONE: usize = usize::MAX;
use rhist_core::hist::map::{Inserter, MapParams, TracingMap};

const UPDATERS: usize = 3;
const EVENTS: usize = 30_000;
const KEYS: u64 = 6_000;
const FIRST_BITS: u32 = 6;

fn params(bits: u32) -> MapParams {
    MapParams::new(bits, 8, 3, 0)
        .with_private_words(1)
        .per_cpu(UPDATERS)
}

fn storage(p: &MapParams) -> Vec<AtomicU64> {
    (0..p.storage_words().unwrap())
        .map(|_| AtomicU64::new(0))
        .collect()
}

/// Per key: hits, sum, max.
type Entries = HashMap<u64, (u64, u64, u64)>;

#[test]
fn grow_under_updaters_loses_and_doubles_nothing() {
    for round in 0..4u64 {
        run(round, false);
    }
}

#[test]
fn grow_that_runs_late_counts_what_it_loses_as_drops() {
    let lost = run(7, true);
    assert!(lost > 0, "the paused grow work found room for everything");
}

/// One updater: `EVENTS` events, or until `stop`; what it accounted,
/// what it saw dropped, and how many events it fired.
#[allow(clippy::too_many_arguments)]
fn update(
    t: usize,
    seed: u64,
    maps: &[TracingMap<'_>],
    triggers: &[GrowTrigger],
    freed: &[AtomicBool],
    current: &AtomicUsize,
    spare: &AtomicUsize,
    older: &[AtomicUsize],
    requested: &AtomicBool,
    seq: &AtomicU64,
    used_freed: &AtomicBool,
    stop: Option<&AtomicBool>,
) -> (Entries, u64, u64) {
    let (mut model, mut dropped) = (Entries::new(), 0);
    let mut x = 0x2545_f491_4f6c_dd1du64 ^ (seed << 8) ^ t as u64;
    let mut fired = 0;
    for i in 0.. {
        match stop {
            Some(stop) if stop.load(Ordering::Acquire) => break,
            None if i == EVENTS => break,
            _ => {}
        }
        fired += 1;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let (key, v) = (x % KEYS, (x >> 32) % 1000);
        // Enter, then load the generation once. Nothing in here panics:
        // the grower would wait forever.
        seq.fetch_add(1, Ordering::SeqCst);
        let g = current.load(Ordering::SeqCst);
        if freed[g].load(Ordering::SeqCst) {
            used_freed.store(true, Ordering::Relaxed);
        }
        let map = &maps[g];
        // As the shell's event path: whether the map is near its
        // threshold before the event, and only then the check after.
        let near = triggers[g].near(map);
        let e = map.event_insert(&key.to_ne_bytes(), Inserter::on_cpu(t as u32), |e| {
            e.private_words()[0].store(key ^ 0x5a, Ordering::Relaxed)
        });
        if let Some(e) = &e {
            e.update_sum_on(t as u32, 0, 1);
            e.update_sum_on(t as u32, 1, v);
            e.update_max_on(t as u32, 2, v);
        }
        if near && triggers[g].check(map.len()) {
            switch(g, spare, older, current);
            requested.store(true, Ordering::Release);
        }
        // Leave.
        seq.fetch_add(1, Ordering::Release);
        match e {
            Some(_) => {
                let m = model.entry(key).or_default();
                *m = (m.0 + 1, m.1 + v, m.2.max(v));
            }
            None => dropped += 1,
        }
        // The grow work gets CPU time now and then.
        if i % 64 == 0 {
            std::thread::yield_now();
        }
    }
    (model, dropped, fired)
}

/// Replaces generation `g`, current and at its threshold, by the spare if
/// there is one (`grow.rs`'s `Growing::switch`).
fn switch(g: usize, spare: &AtomicUsize, older: &[AtomicUsize], current: &AtomicUsize) -> bool {
    let s = spare.swap(NONE, Ordering::Acquire);
    if s == NONE {
        return false;
    }
    older[s].store(g, Ordering::Relaxed);
    current.store(s, Ordering::SeqCst);
    true
}

/// Returns how many entries the folds lost.
fn run(seed: u64, pause_grower: bool) -> usize {
    let mut sizes = vec![FIRST_BITS];
    while let Some(b) = next_bits(*sizes.last().unwrap()) {
        if b > 14 {
            break;
        }
        sizes.push(b);
    }
    let stores: Vec<Vec<AtomicU64>> = sizes.iter().map(|&b| storage(&params(b))).collect();
    let maps: Vec<TracingMap<'_>> = sizes
        .iter()
        .zip(&stores)
        .map(|(&b, s)| TracingMap::new(params(b), s).unwrap())
        .collect();
    // Near the threshold within one event per updater: what can be under
    // way at once.
    let triggers: Vec<GrowTrigger> = sizes
        .iter()
        .map(|&b| GrowTrigger::new(b, UPDATERS))
        .collect();
    let freed: Vec<AtomicBool> = sizes.iter().map(|_| AtomicBool::new(false)).collect();
    let current = AtomicUsize::new(0);
    // The spare made with the trigger.
    let spare = AtomicUsize::new(1);
    let older: Vec<AtomicUsize> = sizes.iter().map(|_| AtomicUsize::new(NONE)).collect();
    let requested = AtomicBool::new(false);
    let seqs: Vec<AtomicU64> = (0..UPDATERS).map(|_| AtomicU64::new(0)).collect();
    let done = AtomicUsize::new(0);
    let used_freed = AtomicBool::new(false);
    // Per entry a fold had no room for: its key, hits, sum and max.
    let mut lost_parts: Vec<(u64, u64, u64, u64)> = Vec::new();

    let stop = AtomicBool::new(false);
    let results: Vec<(Entries, u64, u64)> = std::thread::scope(|s| {
        let grower = s.spawn(|| {
            let (mut folds, mut next) = (0, 2);
            loop {
                if !requested.swap(false, Ordering::Acquire) {
                    if done.load(Ordering::Acquire) < UPDATERS {
                        std::thread::yield_now();
                        continue;
                    }
                    // Every request made before the updaters ended is
                    // seen now.
                    if !requested.swap(false, Ordering::Acquire) {
                        return folds;
                    }
                }
                // The next spare ("made": the model's maps are all made
                // before), switched to here if the threshold came first.
                loop {
                    if spare.load(Ordering::Relaxed) == NONE && next < maps.len() {
                        spare.store(next, Ordering::Release);
                        next += 1;
                    }
                    let c = current.load(Ordering::SeqCst);
                    if !(triggers[c].asked() && switch(c, &spare, &older, &current)) {
                        break;
                    }
                }
                while pause_grower
                    && done.load(Ordering::Acquire) < UPDATERS
                    && maps[current.load(Ordering::SeqCst)].len()
                        < maps[current.load(Ordering::SeqCst)].max_elts()
                {
                    std::thread::yield_now();
                }
                // The generations left behind: off the chain, a grace
                // period (every updater in an event may have loaded one;
                // wait until each has left that event), then folded into
                // the current map and freed.
                loop {
                    let c = current.load(Ordering::SeqCst);
                    let mut g = older[c].swap(NONE, Ordering::Acquire);
                    if g == NONE {
                        break;
                    }
                    for seq in &seqs {
                        let at = seq.load(Ordering::SeqCst);
                        if at % 2 == 1 {
                            while seq.load(Ordering::Acquire) == at {
                                std::hint::spin_loop();
                            }
                        }
                    }
                    let into = current.load(Ordering::SeqCst);
                    while g != NONE {
                        let before = lost_parts.len();
                        let moved = maps[g]
                            .fold_into(
                                &maps[into],
                                |i| i == 2,
                                |e| {
                                    maps[into].add_drops(e.read_sum(0));
                                    lost_parts.push((
                                        e.key_word(0),
                                        e.read_sum(0),
                                        e.read_sum(1),
                                        e.read_max(2),
                                    ));
                                },
                            )
                            .unwrap();
                        assert_eq!(moved + lost_parts.len() - before, maps[g].len());
                        freed[g].store(true, Ordering::SeqCst);
                        maps[g].clear();
                        g = older[g].swap(NONE, Ordering::Relaxed);
                        folds += 1;
                    }
                    if folds >= 2 {
                        stop.store(true, Ordering::Release);
                    }
                }
            }
        });
        let updaters: Vec<_> = (0..UPDATERS)
            .map(|t| {
                let (maps, triggers, freed, current) = (&maps, &triggers, &freed, &current);
                let (spare, older) = (&spare, &older);
                let (requested, seq, used_freed, done) = (&requested, &seqs[t], &used_freed, &done);
                let stop = pause_grower.then_some(&stop);
                s.spawn(move || {
                    let r = update(
                        t, seed, maps, triggers, freed, current, spare, older, requested, seq,
                        used_freed, stop,
                    );
                    done.fetch_add(1, Ordering::Release);
                    r
                })
            })
            .collect();
        let results = updaters.into_iter().map(|h| h.join().unwrap()).collect();
        assert!(grower.join().unwrap() >= 1);
        results
    });

    assert!(!used_freed.load(Ordering::Relaxed), "a freed map was used");
    let mut want = Entries::new();
    let (mut dropped, mut fired) = (0, 0);
    for (m, d, f) in results {
        dropped += d;
        fired += f;
        for (k, (h, s, x)) in m {
            let w = want.entry(k).or_default();
            *w = (w.0 + h, w.1 + s, w.2.max(x));
        }
    }
    // What a fold lost is no longer in the map: take it out of the
    // model, and count its hits as drops.
    let mut lost_max: HashMap<u64, u64> = HashMap::new();
    let mut lost_hits = 0;
    for &(k, h, s, x) in &lost_parts {
        let w = want.get_mut(&k).expect("a lost entry's key was accounted");
        *w = (w.0 - h, w.1 - s, w.2);
        let m = lost_max.entry(k).or_default();
        *m = (*m).max(x);
        lost_hits += h;
    }
    want.retain(|_, w| w.0 != 0);
    let map = &maps[current.load(Ordering::SeqCst)];
    // What the first maps dropped before the grow work ran, and what the
    // folds lost, exactly.
    assert_eq!(map.drops(), dropped + lost_hits);
    assert_eq!(map.len(), want.len());
    let mut hits = 0;
    for e in map.iter() {
        let key = e.key_word(0);
        let (h, s, x) = want[&key];
        let got = (e.read_sum(0), e.read_sum(1));
        assert_eq!(got, (h, s), "key {key}");
        let max = e.read_max(2).max(lost_max.get(&key).copied().unwrap_or(0));
        assert_eq!(max, x, "key {key}");
        assert_eq!(e.private_words()[0].load(Ordering::Relaxed), key ^ 0x5a);
        hits += e.read_sum(0);
    }
    assert_eq!(hits + map.drops(), fired);
    eprintln!(
        "seed {seed}: {} keys, {dropped} dropped, {} entries lost ({lost_hits} hits)",
        want.len(),
        lost_parts.len()
    );
    lost_parts.len()
}
