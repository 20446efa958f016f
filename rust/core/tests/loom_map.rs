// SPDX-License-Identifier: GPL-2.0

//! Model check of the map's insert protocol with loom.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test --release --test loom_map`.
//! This file compiles the real `src/map.rs` into itself (through
//! `tests/common`): there, with `cfg(all(loom, test))`, the map runs on
//! loom's atomics, so the claim, publish and lookup steps checked here are
//! the shipped ones, with the shipped orderings.

#![cfg(loom)]

mod common;

use common::map::{self, key_hash, First, Inserter, MapKey, MapParams, TracingMap};
use common::{model, new_map};
use loom::sync::atomic::Ordering;
use loom::thread;

/// 3-word keys: a reader seeing only some words of one would notice.
fn key24(id: u64) -> [u8; 24] {
    let mut k = [0u8; 24];
    k[..8].copy_from_slice(&id.to_ne_bytes());
    k[8..16].copy_from_slice(&id.wrapping_mul(0x9e37_79b9).to_ne_bytes());
    k[16..].copy_from_slice(&(!id).to_ne_bytes());
    k
}

/// Inserts `key` and adds 1 to sum 0: whether it counted.
fn hit(m: &TracingMap<'_>, key: &[u8]) -> bool {
    match m.insert(key) {
        Some(e) => {
            e.update_sum(0, 1);
            true
        }
        None => false,
    }
}

/// Every hit is in a sum, hits and drops add up, no key is there twice.
fn check_accounting(m: &TracingMap<'_>, calls: u64, counted: u64) {
    assert_eq!(m.hits() + m.drops(), calls);
    assert_eq!(m.hits(), counted);
    let sum: u64 = m.iter().map(|e| e.read_sum(0)).sum();
    assert_eq!(sum, counted);
    let mut keys: Vec<u64> = m.iter().map(|e| e.key_word(0)).collect();
    let n = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), n, "a key is in the map twice");
    assert_eq!(m.len(), n);
}

#[test]
fn same_key_two_inserters() {
    model("same_key_two_inserters", || {
        let m = new_map(MapParams::new(1, 8, 1, 0));
        let k = 7u64.to_ne_bytes();
        let t = thread::spawn(move || hit(&m, &k));
        let a = hit(&m, &k);
        let b = t.join().unwrap();
        check_accounting(&m, 2, a as u64 + b as u64);
        // The first to claim always gets the element; the other finds it,
        // or gives up waiting for it to be published (a drop).
        assert!(a || b);
        assert_eq!(m.len(), 1);
        assert_eq!(m.lookup(&k).unwrap().read_sum(0), a as u64 + b as u64);
    });
}

/// The event path's insert of the one-word `key` on CPU `cpu`, in its
/// steps (the first entry, the further ones, the probe loop), adding 1 to
/// sum 0: whether it counted.
fn hit_steps(m: &TracingMap<'_>, key: u64, cpu: u32) -> bool {
    let key = [key];
    let h = (&key).hash(1);
    let first = match m.event_find_at_home(&key, h) {
        First::Further => m.event_find_past_home(&key, h),
        first => first,
    };
    let idx = match first {
        First::Found(i) => Some(i),
        First::Absent | First::Further => None,
        First::Probe => m.event_insert_missing(&key, h, Inserter::on_cpu(cpu)),
    };
    match idx.and_then(|i| m.elt(i)) {
        Some(e) => {
            e.update_sum(0, 1);
            true
        }
        None => false,
    }
}

#[test]
fn same_key_two_inserters_in_steps() {
    // As `same_key_two_inserters`, by the event path on two CPUs: the one
    // that does not claim the entry finds it published at its first
    // entry, or waits for it in the probe loop until it is (the claimer
    // is on the other CPU): neither drops. Neither counts hits; both sums
    // add up.
    model("same_key_two_inserters_in_steps", || {
        let m = new_map(MapParams::new(1, 8, 1, 0));
        let t = thread::spawn(move || hit_steps(&m, 7, 1));
        let a = hit_steps(&m, 7, 0);
        let b = t.join().unwrap();
        assert!(a && b, "an insert gave up on the other CPU's");
        assert_eq!(m.drops(), 0);
        assert_eq!(m.len(), 1);
        let k = 7u64.to_ne_bytes();
        assert_eq!(m.lookup(&k).unwrap().read_sum(0), a as u64 + b as u64);
    });
}

#[test]
fn distinct_keys_one_element_in_steps() {
    // As `distinct_keys_one_element`, by the event path, with a third
    // event that finds its key further along, or drops it.
    let p = MapParams::new(1, 8, 1, 0);
    let start = |x: u64| key_hash(&x.to_ne_bytes(), 8) >> 30;
    let k1 = 1u64;
    let k2 = (2..).find(|&x| start(x) == start(k1)).unwrap();
    model("distinct_keys_one_element_in_steps", move || {
        let m = new_map(p);
        let t = thread::spawn(move || hit_steps(&m, k2, 1) as u64 + hit_steps(&m, k2, 1) as u64);
        let a = hit_steps(&m, k1, 0) as u64;
        let b = t.join().unwrap();
        // Two elements: both keys get one, unless a wait is given up.
        assert_eq!(m.drops(), 3 - a - b);
        let sums: u64 = m.iter().map(|e| e.read_sum(0)).sum();
        assert_eq!(sums, a + b);
        assert_eq!(m.len(), 2);
    });
}

#[test]
fn distinct_keys_one_element() {
    // One element, two entries; two keys starting at the same entry.
    let p = MapParams::new(0, 8, 1, 0);
    let start = |x: u64| key_hash(&x.to_ne_bytes(), 8) >> 31;
    let k1 = 1u64;
    let k2 = (2..).find(|&x| start(x) == start(k1)).unwrap();
    model("distinct_keys_one_element", move || {
        let m = new_map(p);
        let t = thread::spawn(move || hit(&m, &k2.to_ne_bytes()));
        let a = hit(&m, &k1.to_ne_bytes());
        let b = t.join().unwrap();
        check_accounting(&m, 2, a as u64 + b as u64);
        assert!(a != b, "exactly one key gets the one element");
        assert_eq!(m.drops(), 1);
        let winner = if a { k1 } else { k2 };
        assert!(m.lookup(&winner.to_ne_bytes()).is_some());
    });
}

#[test]
fn same_hash_distinct_keys() {
    // Two keys with one 32-bit hash: each waits for the other's publish
    // and must then compare the whole key.
    let mut seen = std::collections::HashMap::new();
    let (k1, k2) = (0u64..)
        .find_map(|x| {
            let h = key_hash(&x.to_ne_bytes(), 8);
            seen.insert(h, x).map(|y| (y, x))
        })
        .unwrap();
    model("same_hash_distinct_keys", move || {
        let m = new_map(MapParams::new(1, 8, 1, 0));
        let t = thread::spawn(move || hit(&m, &k2.to_ne_bytes()));
        let a = hit(&m, &k1.to_ne_bytes());
        let b = t.join().unwrap();
        check_accounting(&m, 2, a as u64 + b as u64);
        for (ok, k) in [(a, k1), (b, k2)] {
            let found = m.lookup(&k.to_ne_bytes());
            assert_eq!(ok, found.is_some());
            if let Some(e) = found {
                assert_eq!(e.key_word(0), k);
                assert_eq!(e.read_sum(0), 1);
            }
        }
    });
}

#[test]
fn reader_sees_whole_keys() {
    // Two inserters and a reader walking the map meanwhile: the reader
    // must only ever see complete keys and initialised private words
    // (the publish/Acquire pairing).  The reader is a spawned thread: loom
    // never lets a thread read a value older than its own last store, and
    // the main thread zeroed the storage.
    model("reader_sees_whole_keys", || {
        let m = new_map(MapParams::new(1, 24, 1, 0).with_private_words(1));
        let r = thread::spawn(move || {
            // Walk until both are seen, checking everything seen on the way.
            let mut seen = 0;
            while seen < 2 {
                seen = 0;
                for e in m.iter() {
                    let ok1 = e.key_eq(&key24(1));
                    assert!(ok1 || e.key_eq(&key24(2)), "torn or stale key");
                    if ok1 {
                        let p = e.private_words()[0].load(Ordering::Relaxed);
                        assert_eq!(p, 101, "init not visible");
                    }
                    seen += 1;
                }
                thread::yield_now();
            }
        });
        let t = thread::spawn(move || hit(&m, &key24(2)));
        let init = |e: &map::Elt<'_>| e.private_words()[0].store(101, Ordering::Relaxed);
        assert!(m.insert_with(&key24(1), init).is_some());
        assert!(t.join().unwrap());
        r.join().unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m.hits(), 2);
    });
}

#[test]
fn vars_flag_publishes_value() {
    model("vars_flag_publishes_value", || {
        let m = new_map(MapParams::new(0, 8, 1, 1));
        let e = m.insert(&3u64.to_ne_bytes()).unwrap();
        let r = thread::spawn(move || e.take_var(0));
        e.set_var(0, 42);
        if let Some(v) = r.join().unwrap() {
            assert_eq!(v, 42);
        }
    });
}

#[test]
fn per_cpu_sums_read_whole() {
    // Two CPUs add to their own copies of one key's sums while a reader
    // totals them: it never sees more than was added, nor a total go
    // back, and once both are done it sees every add.
    model("per_cpu_sums_read_whole", || {
        let m = new_map(MapParams::new(0, 8, 2, 0).with_cpus(2));
        let k = 5u64.to_ne_bytes();
        let e = m.insert(&k).unwrap();
        let r = thread::spawn(move || {
            let mut last = 0;
            for _ in 0..2 {
                let n = e.read_sum(1);
                assert!(n >= last && n <= 30 && n.is_multiple_of(10), "read {n}");
                last = n;
            }
        });
        let t = thread::spawn(move || {
            e.update_sum_on(1, 0, 1);
            e.update_sum_on(1, 1, 20);
        });
        e.update_sum_on(0, 0, 1);
        e.update_sum_on(0, 1, 10);
        t.join().unwrap();
        r.join().unwrap();
        assert_eq!((e.read_sum(0), e.read_sum(1)), (2, 30));
        assert_eq!(m.lookup(&k).unwrap().read_sum(1), 30);
    });
}
