// SPDX-License-Identifier: GPL-2.0

//! The tests of `sketch.rs`: the bucket arithmetic on every bucket and at
//! every power of two, the pool and its dry behaviour, quantiles of random
//! data of several distributions against sorting (proptest), merging, and
//! threads racing a reader. The concurrent protocol under loom is in
//! `tests/loom_sketch.rs`.

use super::*;
use proptest::prelude::*;
use std::vec::Vec;

fn storage(p: &PoolParams) -> Vec<AtomicU64> {
    (0..p.storage_words().unwrap())
        .map(|_| AtomicU64::new(0))
        .collect()
}

/// `|got - want| <= want / 128`, the bound of the module doc, which is
/// under 1%.
fn within(got: u64, want: u64) -> bool {
    let err = (got as i128 - want as i128).unsigned_abs();
    err * 128 <= want as u128 && err * 100 <= want as u128
}

/// The exact nearest-rank quantile of sorted `v`.
fn exact(sorted: &[u64], q: u32) -> u64 {
    sorted[nearest_rank(q, sorted.len() as u64) as usize - 1]
}

// ---------------------------------------------------------------------
// Buckets.

#[test]
fn buckets_partition_u64() {
    assert_eq!(bucket_low(0), 0);
    assert_eq!(bucket_high(BUCKETS - 1), u64::MAX);
    assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
    for b in 0..BUCKETS {
        let (lo, hi) = (bucket_low(b), bucket_high(b));
        assert!(lo <= hi, "bucket {b}");
        assert_eq!(bucket_of(lo), b, "low of {b}");
        assert_eq!(bucket_of(hi), b, "high of {b}");
        if b + 1 < BUCKETS {
            assert_eq!(bucket_low(b + 1), hi + 1, "after {b}");
        }
    }
}

/// The error bound, on both ends of every bucket: the relative error is
/// largest there (`|r - v| / v` falls with `v` below `r`, grows above).
#[test]
fn every_bucket_within_bound() {
    for b in 0..BUCKETS {
        let (lo, hi, r) = (bucket_low(b), bucket_high(b), bucket_value(b));
        assert!(lo <= r && r <= hi, "bucket {b}");
        assert!(within(r, lo), "bucket {b}: {r} for {lo}");
        assert!(within(r, hi), "bucket {b}: {r} for {hi}");
    }
}

#[test]
fn every_power_of_two() {
    for e in 0..64 {
        let p = 1u64 << e;
        for v in [p - 1, p, p + 1, p.wrapping_mul(2).wrapping_sub(1)] {
            let b = bucket_of(v);
            assert!(bucket_low(b) <= v && v <= bucket_high(b), "{v}");
            assert!(within(bucket_value(b), v), "{v}");
        }
        // A power of two starts a bucket, and its group is its own above 64.
        assert_eq!(bucket_low(bucket_of(p)), p);
        if e >= 1 {
            assert_eq!(bucket_of(p - 1) + 1, bucket_of(p));
        }
        let g = bucket_of(p) / SUB;
        assert_eq!(g, if e < 6 { 0 } else { e - 5 }, "2^{e}");
        if e >= 6 {
            // All of [2^e, 2^(e+1)) is group e - 5, in 64 buckets.
            let last = p.wrapping_mul(2).wrapping_sub(1);
            assert_eq!(bucket_of(last), bucket_of(p) + 63);
            assert_eq!(bucket_of(p) % SUB, 0);
        }
    }
}

#[test]
fn particular_values() {
    // 0 and the values below 128 are exact.
    for v in 0..128 {
        assert_eq!(bucket_of(v), v as usize);
        assert_eq!(bucket_value(v as usize), v);
    }
    // 128: a bucket of two values, 128 and 129; 129 stands for both.
    assert_eq!((bucket_low(128), bucket_high(128)), (128, 129));
    assert_eq!(bucket_value(128), 129);
    let b = bucket_of((1 << 63) - 1);
    assert_eq!(b, 56 * 64 + 127);
    assert_eq!(bucket_value(b), (127 << 56) + (1 << 55));
    assert_eq!(bucket_of(1 << 63), 57 * 64 + 64);
    assert_eq!(bucket_value(BUCKETS - 1), (127 << 57) + (1 << 56));
    for v in [1, (1 << 63) - 1, 1 << 63, u64::MAX, 10_000, 10_000_000] {
        assert!(within(bucket_value(bucket_of(v)), v), "{v}");
    }
}

#[test]
fn ranks() {
    assert_eq!(nearest_rank(500_000, 0), 0);
    assert_eq!(nearest_rank(0, 10), 1);
    assert_eq!(nearest_rank(PPM, 10), 10);
    assert_eq!(nearest_rank(PPM + 1, 10), 10);
    assert_eq!(nearest_rank(500_000, 1), 1);
    assert_eq!(nearest_rank(500_000, 2), 1);
    assert_eq!(nearest_rank(500_000, 3), 2);
    assert_eq!(nearest_rank(999_000, 1000), 999);
    assert_eq!(nearest_rank(999_000, 1001), 1000);
    assert_eq!(nearest_rank(1, 1_000_000), 1);
    assert_eq!(nearest_rank(1, 1_000_001), 2);
    assert_eq!(nearest_rank(PPM, u64::MAX), u64::MAX);
    assert_eq!(nearest_rank(500_000, u64::MAX), u64::MAX / 2 + 1);
}

// ---------------------------------------------------------------------
// The pool.

/// The event path's record, by a sketch's first word, counts as
/// `Sketch::record` does, in that sketch, claims included; past the
/// sketches, nothing.
#[test]
fn record_at_is_record() {
    let params = PoolParams::new(3, 6);
    let (sa, sb) = (storage(&params), storage(&params));
    let (a, b) = (
        SketchPool::new(params, &sa).unwrap(),
        SketchPool::new(params, &sb).unwrap(),
    );
    let words = a;
    for (i, v) in [0u64, 1, 63, 64, 200, 200, 1 << 40, u64::MAX, 5, 1 << 20]
        .into_iter()
        .enumerate()
    {
        let slot = i % 3;
        words.record_at(slot * SKETCH_WORDS, v);
        b.sketch(slot).unwrap().record(v);
    }
    words.record_at(3 * SKETCH_WORDS, 7);
    words.record_at(usize::MAX, 7);
    for slot in 0..3 {
        let (x, y) = (a.sketch(slot).unwrap(), b.sketch(slot).unwrap());
        assert_eq!((x.count(), x.unplaced()), (y.count(), y.unplaced()));
        for bucket in 0..BUCKETS {
            assert_eq!(x.bucket_count(bucket), y.bucket_count(bucket));
        }
    }
    assert_eq!(a.stats(), b.stats());
}

#[test]
fn sizes() {
    let p = PoolParams::for_map(2048, 1);
    assert_eq!(p, PoolParams::new(2048, 8192));
    // 64 + 2048 * 512 + 8192 * 512 bytes, and up to 56 to align.
    assert_eq!(p.storage_bytes().unwrap(), 64 + 1_048_576 + 4_194_304 + 56);
    assert_eq!(PoolParams::for_map(1 << 17, 1).n_pages, PAGES_MAX);
    assert_eq!(PoolParams::for_map(usize::MAX, 2).n_pages, PAGES_MAX);
    assert_eq!(
        PoolParams::new(1, PAGES_MAX + 1).storage_words(),
        Err(SketchError::TooManyPages)
    );
    assert_eq!(
        PoolParams::new(SKETCHES_MAX + 1, 1).storage_words(),
        Err(SketchError::TooManySketches)
    );
    let p = PoolParams::new(2, 2);
    let s = storage(&p);
    assert!(SketchPool::new(p, &s[..s.len() - 8]).is_err());
    assert_eq!(SketchError::StorageTooSmall.errno(), 12);
    assert_eq!(SketchError::TooManyPages.errno(), 22);
    let pool = SketchPool::new(p, &s).unwrap();
    assert!(pool.sketch(1).is_some());
    assert!(pool.sketch(2).is_none());
    assert!(pool.sketch(usize::MAX).is_none());
}

#[test]
fn empty_sketch() {
    let p = PoolParams::new(1, 1);
    let s = storage(&p);
    let pool = SketchPool::new(p, &s).unwrap();
    let sk = pool.sketch(0).unwrap();
    assert_eq!(sk.count(), 0);
    assert_eq!(sk.quantile(500_000), Quantile::Empty);
    let p = sk.percentiles();
    assert_eq!((p.count, p.unplaced), (0, 0));
    assert_eq!(p.p, [Quantile::Empty; 4]);
    assert_eq!(pool.stats().pages_used, 0);
}

#[test]
fn records_and_reads() {
    let p = PoolParams::new(2, 4);
    let s = storage(&p);
    let pool = SketchPool::new(p, &s).unwrap();
    let sk = pool.sketch(1).unwrap();
    for v in 0..100 {
        sk.record(v);
    }
    assert_eq!(sk.count(), 100);
    assert_eq!(sk.pages(), 2);
    assert_eq!(sk.quantile(500_000), Quantile::Value(49));
    assert_eq!(sk.quantile(0), Quantile::Value(0));
    assert_eq!(sk.quantile(PPM), Quantile::Value(99));
    let p = sk.percentiles();
    assert_eq!(p.count, 100);
    assert_eq!(
        p.p,
        [49, 89, 98, 99].map(Quantile::Value),
        "p50 p90 p99 p999 of 0..100"
    );
    // The other sketch is untouched.
    assert_eq!(pool.sketch(0).unwrap().count(), 0);
    assert_eq!(pool.stats().pages_used, 2);
}

#[test]
fn extremes() {
    let p = PoolParams::new(1, 3);
    let s = storage(&p);
    let pool = SketchPool::new(p, &s).unwrap();
    let sk = pool.sketch(0).unwrap();
    sk.record(0);
    sk.record(u64::MAX);
    sk.record(1 << 63);
    assert_eq!(sk.quantile(0), Quantile::Value(0));
    assert_eq!(sk.quantile(PPM), Quantile::Value(bucket_value(BUCKETS - 1)));
    assert_eq!(
        sk.quantile(500_000),
        Quantile::Value(bucket_value(bucket_of(1 << 63)))
    );
    assert_eq!(sk.bucket_count(0), 1);
    assert_eq!(sk.bucket_count(BUCKETS - 1), 1);
    assert_eq!(sk.bucket_count(BUCKETS), 0);
}

/// Every group, whose slots share index words, gets its own page.
#[test]
fn every_group_its_own_page() {
    let p = PoolParams::new(1, GROUPS);
    let s = storage(&p);
    let pool = SketchPool::new(p, &s).unwrap();
    let sk = pool.sketch(0).unwrap();
    for g in (0..GROUPS).rev() {
        for i in 0..SUB {
            let b = g * SUB + i;
            sk.record_n(bucket_low(b), (b % 7) as u64);
            sk.record(bucket_high(b));
        }
    }
    assert_eq!(sk.pages(), GROUPS);
    assert_eq!(sk.unplaced(), 0);
    for b in 0..BUCKETS {
        assert_eq!(sk.bucket_count(b), (b % 7) as u64 + 1, "bucket {b}");
    }
    let stats = pool.stats();
    assert_eq!((stats.pages_used, stats.pages_lost), (GROUPS, 0));
}

#[test]
fn record_n_of_zero_claims_nothing() {
    let p = PoolParams::new(1, 1);
    let s = storage(&p);
    let pool = SketchPool::new(p, &s).unwrap();
    let sk = pool.sketch(0).unwrap();
    sk.record_n(1000, 0);
    assert_eq!(pool.stats().pages_used, 0);
    sk.record_n(1000, 5);
    assert_eq!(sk.count(), 5);
}

#[test]
fn dry_pool_counts_and_bounds() {
    let p = PoolParams::new(1, 1);
    let s = storage(&p);
    let pool = SketchPool::new(p, &s).unwrap();
    let sk = pool.sketch(0).unwrap();
    for _ in 0..3 {
        sk.record(100);
    }
    sk.record(1_000_000); // no page left for its group
    assert_eq!((sk.count(), sk.unplaced()), (4, 1));
    let stats = pool.stats();
    assert_eq!((stats.pages_used, stats.unplaced), (1, 1));
    // p50: rank 2 of 4, between the placed ranks 1 and 2, both 100.
    assert_eq!(sk.quantile(500_000), Quantile::Value(100));
    // p99: rank 4, beyond the 3 placed: at least the third, no more known.
    assert_eq!(
        sk.quantile(990_000),
        Quantile::Within {
            low: 100,
            high: u64::MAX
        }
    );
    let p = sk.percentiles();
    assert_eq!((p.count, p.unplaced), (4, 1));
    // The page already there still takes values.
    sk.record(101);
    assert_eq!(sk.bucket_count(101), 1);
}

#[test]
fn no_pages_at_all() {
    let p = PoolParams::new(1, 0);
    let s = storage(&p);
    let pool = SketchPool::new(p, &s).unwrap();
    let sk = pool.sketch(0).unwrap();
    sk.record(5);
    sk.record(7);
    assert_eq!((sk.count(), sk.unplaced()), (2, 2));
    assert_eq!(
        sk.quantile(500_000),
        Quantile::Within {
            low: 0,
            high: u64::MAX
        }
    );
}

#[test]
fn give_back_and_lost_pages() {
    let p = PoolParams::new(1, 4);
    let s = storage(&p);
    let pool = SketchPool::new(p, &s).unwrap();
    let (a, b) = (pool.take_page().unwrap(), pool.take_page().unwrap());
    assert_eq!((a, b), (0, 1));
    // `a` is not the last handed out: lost.
    pool.give_back(a);
    // `b` is: back in the pool.
    pool.give_back(b);
    let stats = pool.stats();
    assert_eq!((stats.pages_used, stats.pages_lost), (1, 1));
    assert_eq!(pool.take_page(), Some(1));
}

#[test]
fn clear_empties_everything() {
    let p = PoolParams::new(2, 2);
    let s = storage(&p);
    let pool = SketchPool::new(p, &s).unwrap();
    let sk = pool.sketch(0).unwrap();
    sk.record(10);
    sk.record(1000);
    sk.record(100_000); // unplaced
    pool.clear();
    assert_eq!(
        pool.stats(),
        PoolStats {
            pages: 2,
            ..PoolStats::default()
        }
    );
    assert!(s.iter().all(|w| w.load(Ordering::Relaxed) == 0));
    sk.record(100_000);
    assert_eq!((sk.count(), sk.unplaced(), sk.pages()), (1, 0, 1));
}

#[test]
fn map_sketches() {
    let p = MapSketches::params(4, 2);
    assert_eq!(p, PoolParams::new(8, 32));
    let s = storage(&p);
    let m = MapSketches::new(SketchPool::new(p, &s).unwrap(), 2).unwrap();
    assert!(MapSketches::new(*m.pool(), SKETCHES_MAX + 1).is_err());
    m.record(3, 1, 500);
    m.record(3, 0, 7);
    m.record(1, 1, 900);
    m.record(4, 0, 1); // no element 4: ignored
    m.record(0, 2, 1); // no value 2: ignored
    assert!(m.sketch(0, 2).is_none());
    assert_eq!(
        m.sketch(3, 1).unwrap().quantile(PPM),
        Quantile::Value(bucket_value(bucket_of(500)))
    );
    assert_eq!(m.sketch(3, 0).unwrap().count(), 1);
    let all = m.union(1, 0..4u32);
    assert_eq!(all.percentiles().count, 2);
    assert_eq!(
        all.quantile(PPM),
        Quantile::Value(bucket_value(bucket_of(900)))
    );
    assert_eq!(m.pool().stats().pages_used, 3);
    m.clear();
    assert_eq!(m.sketch(3, 1).unwrap().count(), 0);
}

// ---------------------------------------------------------------------
// Random data against sorting.

/// Data of one of several distributions.
fn data() -> impl Strategy<Value = Vec<u64>> {
    let n = 1usize..600;
    prop_oneof![
        // Uniform below a random bound (all of u64 included).
        (any::<u64>(), n.clone())
            .prop_flat_map(|(max, n)| { proptest::collection::vec(0..=max.max(1), n) }),
        // Log-uniform: a random number of bits, then random bits.
        proptest::collection::vec(
            (0u32..64, any::<u64>()).prop_map(|(e, r)| (1u64 << e) | (r & ((1u64 << e) - 1))),
            n.clone()
        ),
        // Latencies in ns, log-uniform from 10 us to 10 ms.
        proptest::collection::vec(
            (0u32..1000).prop_map(|x| (10_000.0 * 1000f64.powf(x as f64 / 1000.0)) as u64),
            n.clone()
        ),
        // Bimodal: two clusters 5% wide at random places.
        (1u64..1 << 40, 1u64..1 << 40, n.clone()).prop_flat_map(|(a, b, n)| {
            proptest::collection::vec(
                (any::<bool>(), 0u64..1000).prop_map(move |(which, x)| {
                    let c = if which { a } else { b };
                    c + c / 20 * x / 1000
                }),
                n,
            )
        }),
        // Constant.
        (any::<u64>(), n).prop_map(|(v, n)| std::vec![v; n]),
    ]
}

/// Quantiles to check, in ppm: the printed ones, the ends, a random one.
fn qs() -> impl Strategy<Value = Vec<u32>> {
    proptest::collection::vec(0..=PPM, 1..4).prop_map(|mut v| {
        v.extend([0, 1, PPM, 500_000, 900_000, 990_000, 999_000]);
        v
    })
}

fn sketch_of<'a>(pool: &SketchPool<'a>, slot: usize, values: &[u64]) -> Sketch<'a> {
    let sk = pool.sketch(slot).unwrap();
    for &v in values {
        sk.record(v);
    }
    sk
}

fn big_pool(n: usize) -> PoolParams {
    PoolParams::new(n, n * GROUPS)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn quantiles_within_one_percent(values in data(), qs in qs()) {
        let p = big_pool(1);
        let s = storage(&p);
        let pool = SketchPool::new(p, &s).unwrap();
        let sk = sketch_of(&pool, 0, &values);
        let mut sorted = values.clone();
        sorted.sort_unstable();
        prop_assert_eq!(sk.count(), values.len() as u64);
        for &q in &qs {
            let want = exact(&sorted, q);
            match sk.quantile(q) {
                Quantile::Value(got) => prop_assert!(within(got, want), "q {} got {} want {}", q, got, want),
                other => prop_assert!(false, "q {}: {:?}", q, other),
            }
        }
        let p = sk.percentiles();
        prop_assert_eq!(p.count, values.len() as u64);
        for (i, &q) in PERCENTILES.iter().enumerate() {
            prop_assert_eq!(p.p[i], Quantile::Value(bucket_value(bucket_of(exact(&sorted, q)))));
        }
    }

    /// Merging sketches gives the sketch of the union, and so does
    /// reading them as one.
    #[test]
    fn merge_is_the_union(values in data(), cuts in (0usize..600, 0usize..600), qs in qs()) {
        let (mut i, mut j) = (cuts.0.min(values.len()), cuts.1.min(values.len()));
        if i > j {
            core::mem::swap(&mut i, &mut j);
        }
        let p = big_pool(5);
        let s = storage(&p);
        let pool = SketchPool::new(p, &s).unwrap();
        let parts = [
            sketch_of(&pool, 0, &values[..i]),
            sketch_of(&pool, 1, &values[i..j]),
            sketch_of(&pool, 2, &values[j..]),
        ];
        let whole = sketch_of(&pool, 3, &values);
        let merged = pool.sketch(4).unwrap();
        for part in &parts {
            part.merge_into(&merged);
        }
        let union = Union(parts.iter().copied());
        for b in 0..BUCKETS {
            prop_assert_eq!(merged.bucket_count(b), whole.bucket_count(b));
        }
        prop_assert_eq!(merged.count(), values.len() as u64);
        prop_assert_eq!(merged.percentiles(), whole.percentiles());
        prop_assert_eq!(union.percentiles(), whole.percentiles());
        for &q in &qs {
            prop_assert_eq!(merged.quantile(q), whole.quantile(q));
            prop_assert_eq!(union.quantile(q), whole.quantile(q));
        }
    }

    /// A pool too small: counts stay exact, and every quantile is either
    /// within 1% or a range that holds the exact one.
    #[test]
    fn dry_pool_never_lies(values in data(), pages in 0usize..4, qs in qs()) {
        let p = PoolParams::new(2, pages);
        let s = storage(&p);
        let pool = SketchPool::new(p, &s).unwrap();
        let sk = sketch_of(&pool, 0, &values);
        let mut sorted = values.clone();
        sorted.sort_unstable();
        prop_assert_eq!(sk.count(), values.len() as u64);
        prop_assert!(sk.pages() <= pages);
        prop_assert_eq!(pool.stats().unplaced, sk.unplaced());
        for &q in &qs {
            let want = exact(&sorted, q);
            match sk.quantile(q) {
                Quantile::Value(got) => prop_assert!(within(got, want), "q {} got {} want {}", q, got, want),
                Quantile::Within { low, high } => prop_assert!(low <= want && want <= high),
                Quantile::Empty => prop_assert!(false, "empty"),
            }
        }
        // Merged into a dry sketch: still exact counts, still no lie.
        let other = pool.sketch(1).unwrap();
        sk.merge_into(&other);
        prop_assert_eq!(other.count(), values.len() as u64);
        for &q in &qs {
            let want = exact(&sorted, q);
            match other.quantile(q) {
                Quantile::Value(got) => prop_assert!(within(got, want)),
                Quantile::Within { low, high } => prop_assert!(low <= want && want <= high),
                Quantile::Empty => prop_assert!(false, "empty"),
            }
        }
    }
}

// ---------------------------------------------------------------------
// Threads.

/// Two writers on two sketches sharing pages' claims, a reader racing
/// them: the reader's counts never fall and its quantiles are values
/// that were recorded; afterwards every count is exact.
#[test]
fn threads_and_a_racing_reader() {
    const N: u64 = 20_000;
    let p = PoolParams::new(2, 2 * GROUPS);
    let s = storage(&p);
    let pool = SketchPool::new(p, &s).unwrap();
    let value = |t: u64, i: u64| {
        let x = (i ^ t).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        // 10 us to 10 ms in ns, roughly log-uniform.
        (10_000u64 << (x % 10)) | ((x >> 40) % 10_000)
    };
    std::thread::scope(|sc| {
        for t in 0..2u64 {
            let pool = &pool;
            sc.spawn(move || {
                for i in 0..N {
                    // Both threads on both sketches, racing for pages.
                    pool.sketch((i % 2) as usize).unwrap().record(value(t, i));
                }
            });
        }
        sc.spawn(|| {
            let (mut last0, mut last1) = (0, 0);
            for _ in 0..200 {
                let u = Union([0, 1].into_iter().filter_map(|i| pool.sketch(i)));
                let p = u.percentiles();
                let c0 = pool.sketch(0).unwrap().count();
                assert!(c0 >= last0 && p.count >= last1);
                (last0, last1) = (c0, p.count);
                for q in p.p {
                    match q {
                        Quantile::Empty => assert_eq!(p.count, 0),
                        Quantile::Value(v) => assert!((9_900..10_000 << 10).contains(&v), "{v}"),
                        Quantile::Within { .. } => panic!("no value is unplaced"),
                    }
                }
            }
        });
    });
    let mut want = std::vec![0u64; BUCKETS];
    for t in 0..2 {
        for i in 0..N {
            want[bucket_of(value(t, i))] += 1;
        }
    }
    for (b, &w) in want.iter().enumerate() {
        let got = pool.sketch(0).unwrap().bucket_count(b) + pool.sketch(1).unwrap().bucket_count(b);
        assert_eq!(got, w, "bucket {b}");
    }
    let stats = pool.stats();
    let installed = pool.sketch(0).unwrap().pages() + pool.sketch(1).unwrap().pages();
    assert_eq!(stats.pages_used as u64, installed as u64 + stats.pages_lost);
    assert_eq!(stats.unplaced, 0);
}
