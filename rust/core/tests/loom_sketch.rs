// SPDX-License-Identifier: GPL-2.0

//! Model check of the sketch's update protocol with loom.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test --release --test loom_sketch`.
//! This file compiles the real `src/sketch.rs` into itself: there, with
//! `cfg(all(loom, test))`, the sketch runs on loom's atomics, so the page
//! claims, the give-backs, the adds and the reads checked here are the
//! shipped ones, with the shipped orderings.
//!
//! An NMI that interrupts an update on its CPU runs a whole update between
//! two atomic steps of the interrupted one: one of the interleavings that
//! loom explores for two threads (every one, within its preemption bound).

#![cfg(loom)]

#[path = "../src/sketch.rs"]
#[allow(dead_code)]
mod sketch;

use loom::sync::atomic::AtomicU64;
use loom::thread;
use sketch::{bucket_of, bucket_value, PoolParams, Quantile, SketchPool, PPM};

/// A pool over leaked loom atomics.
fn new_pool(p: PoolParams) -> SketchPool<'static> {
    let n = p.storage_words().unwrap();
    let s: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    SketchPool::new(p, Box::leak(s.into_boxed_slice())).unwrap()
}

/// Runs `f` under loom (at most `bound` preemptions unless
/// `LOOM_MAX_PREEMPTIONS` says otherwise) and reports how many executions
/// were explored.
fn model(name: &str, bound: usize, f: impl Fn() + Sync + Send + 'static) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(bound);
    }
    // A read walks every group's slot and two pages' counters: longer
    // than loom's default 1,000 branches.
    b.max_branches = b.max_branches.max(20_000);
    b.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        f()
    });
    println!("{name}: {} executions", runs.load(Ordering::Relaxed));
}

/// After a race for group 2's page (values 128..256), a later claim in
/// another group gets a page of its own: 6400 sits in its page where 200
/// sits in its own, so a page handed out twice would show in 200's count.
fn check_next_claim(pool: &SketchPool<'_>, count_200: u64) {
    assert_eq!(bucket_of(200) % 64, bucket_of(6400) % 64);
    let sk = pool.sketch(0).unwrap();
    let pages = sk.pages();
    sk.record(6400);
    if sk.pages() > pages {
        assert_eq!(sk.bucket_count(bucket_of(6400)), 1);
        assert_eq!(sk.bucket_count(bucket_of(200)), count_200);
    } else {
        assert_eq!(sk.unplaced(), 1, "no page, and not unplaced");
    }
    check_pages(pool, 1);
}

/// Pages handed out are installed in a slot or counted lost, never both,
/// never neither.
fn check_pages(pool: &SketchPool<'_>, n_sketches: usize) {
    let stats = pool.stats();
    let installed: usize = (0..n_sketches)
        .map(|i| pool.sketch(i).unwrap().pages())
        .sum();
    assert_eq!(stats.pages_used as u64, installed as u64 + stats.pages_lost);
}

#[test]
fn same_group_two_claimers() {
    // 200 and 250 are both in [128, 256): one page between them.
    model("same_group_two_claimers", 3, || {
        let pool = new_pool(PoolParams::new(1, 2));
        let t = thread::spawn(move || pool.sketch(0).unwrap().record(200));
        pool.sketch(0).unwrap().record(250);
        t.join().unwrap();
        let sk = pool.sketch(0).unwrap();
        assert_eq!(sk.bucket_count(bucket_of(200)), 1);
        assert_eq!(sk.bucket_count(bucket_of(250)), 1);
        assert_eq!((sk.count(), sk.unplaced(), sk.pages()), (2, 0, 1));
        check_pages(&pool, 1);
        // The loser's page went back if it was the last handed out, else
        // it is counted lost.
        assert!(pool.stats().pages_lost <= 1);
        check_next_claim(&pool, 1);
    });
}

#[test]
fn three_claimers() {
    // Three updates of one group: each of the two losers gives its page
    // back if it is the last handed out, else counts it lost.
    model("three_claimers", 2, || {
        let pool = new_pool(PoolParams::new(1, 4));
        let t1 = thread::spawn(move || pool.sketch(0).unwrap().record(200));
        let t2 = thread::spawn(move || pool.sketch(0).unwrap().record(201));
        pool.sketch(0).unwrap().record(250);
        t1.join().unwrap();
        t2.join().unwrap();
        let sk = pool.sketch(0).unwrap();
        assert_eq!((sk.count(), sk.pages()), (3, 1));
        assert_eq!(sk.bucket_count(bucket_of(200)), 2); // 200 and 201
        check_pages(&pool, 1);
        assert!(pool.stats().pages_lost <= 2);
        check_next_claim(&pool, 2);
    });
}

#[test]
fn neighbour_slots() {
    // Groups 2 and 3 ([128, 256) and [256, 512)), neighbouring slots: two
    // claims at once, neither in the other's way.
    model("neighbour_slots", 3, || {
        let pool = new_pool(PoolParams::new(1, 2));
        let t = thread::spawn(move || pool.sketch(0).unwrap().record(200));
        pool.sketch(0).unwrap().record(300);
        t.join().unwrap();
        let sk = pool.sketch(0).unwrap();
        assert_eq!(sk.bucket_count(bucket_of(200)), 1);
        assert_eq!(sk.bucket_count(bucket_of(300)), 1);
        assert_eq!((sk.pages(), pool.stats().pages_lost), (2, 0));
        check_pages(&pool, 1);
    });
}

#[test]
fn dry_pool_two_sketches() {
    // One page for two sketches: one value placed, one unplaced, both
    // counted.
    model("dry_pool_two_sketches", 3, || {
        let pool = new_pool(PoolParams::new(2, 1));
        let t = thread::spawn(move || pool.sketch(0).unwrap().record(200));
        pool.sketch(1).unwrap().record(300);
        t.join().unwrap();
        let (a, b) = (pool.sketch(0).unwrap(), pool.sketch(1).unwrap());
        assert_eq!((a.count(), b.count()), (1, 1));
        assert_eq!(a.unplaced() + b.unplaced(), 1);
        assert_eq!(pool.stats().unplaced, 1);
        assert_eq!(a.pages() + b.pages(), 1);
        check_pages(&pool, 2);
        let dry = if a.unplaced() == 1 { a } else { b };
        assert_eq!(
            dry.quantile(PPM),
            Quantile::Within {
                low: 0,
                high: u64::MAX
            }
        );
    });
}

#[test]
fn reader_races_claims() {
    // A writer claims two pages and counts; a reader reads meanwhile: it
    // sees 0, 1 or 2 values, and quantiles of what it counts. Then every
    // count is exact. (The reader is the spawned thread: loom's DPOR
    // checks a thread's next load against the other's stores before it,
    // but keeps one last access per atomic, so a writer's own load of a
    // word hides the reader's earlier one from it.)
    model("reader_races_claims", 2, || {
        let pool = new_pool(PoolParams::new(1, 2));
        let reader = thread::spawn(move || pool.sketch(0).unwrap().percentiles());
        let sk = pool.sketch(0).unwrap();
        sk.record(200);
        sk.record(5000);
        let p = reader.join().unwrap();
        let (lo, hi) = (bucket_value(bucket_of(200)), bucket_value(bucket_of(5000)));
        match p.count {
            0 => assert_eq!(p.p, [Quantile::Empty; 4]),
            1 => assert!(p.p == [Quantile::Value(lo); 4] || p.p == [Quantile::Value(hi); 4]),
            2 => assert_eq!(p.p, [lo, hi, hi, hi].map(Quantile::Value)),
            n => panic!("{n} values"),
        }
        assert_eq!(p.unplaced, 0);
        assert_eq!(sk.count(), 2);
        assert_eq!(sk.quantile(0), Quantile::Value(lo));
        assert_eq!(sk.quantile(PPM), Quantile::Value(hi));
        check_pages(&pool, 1);
    });
}

#[test]
fn reader_races_two_writers() {
    // Two writers racing for one page, a reader racing both.
    model("reader_races_two_writers", 2, || {
        let pool = new_pool(PoolParams::new(1, 2));
        let reader = thread::spawn(move || pool.sketch(0).unwrap().quantile(PPM));
        let writer = thread::spawn(move || pool.sketch(0).unwrap().record(200));
        pool.sketch(0).unwrap().record(250);
        let q = reader.join().unwrap();
        writer.join().unwrap();
        let (a, b) = (bucket_value(bucket_of(200)), bucket_value(bucket_of(250)));
        assert!(
            q == Quantile::Empty || q == Quantile::Value(a) || q == Quantile::Value(b),
            "{q:?}"
        );
        let sk = pool.sketch(0).unwrap();
        assert_eq!((sk.count(), sk.pages()), (2, 1));
        check_pages(&pool, 1);
    });
}
