// SPDX-License-Identifier: GPL-2.0

//! Cost of one hist update on the map: find-or-insert a key, add to its
//! sums.  `cargo bench --bench map -- --warm-up-time 1 --measurement-time 2`

use std::hint::black_box;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use rhist_core::hist::map::{MapParams, TracingMap, BITS_DEFAULT};

fn storage(p: &MapParams) -> Vec<AtomicU64> {
    (0..p.storage_words().unwrap())
        .map(|_| AtomicU64::new(0))
        .collect()
}

/// `n` distinct keys of `size` bytes (1 or 3 u64 key fields), shuffled.
fn keys(n: usize, size: usize) -> Vec<Vec<u8>> {
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut out: Vec<Vec<u8>> = (0..n as u64)
        .map(|i| {
            (0..size / 8)
                .flat_map(|w| (i * 1000 + w as u64).to_ne_bytes())
                .collect()
        })
        .collect();
    for i in (1..n).rev() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        out.swap(i, (s % (i as u64 + 1)) as usize);
    }
    out
}

#[inline(always)]
fn update(m: &TracingMap<'_>, key: &[u8], n_sums: usize) {
    if let Some(e) = m.insert(key) {
        e.update_sum(0, 1);
        for i in 1..n_sums {
            e.update_sum(i, i as u64 * 3);
        }
    }
}

fn single_thread(c: &mut Criterion) {
    let mut g = c.benchmark_group("update");
    for key_size in [8, 24] {
        for n_sums in [1, 4] {
            for fill in [50, 90] {
                let p = MapParams::new(BITS_DEFAULT, key_size, n_sums, 0);
                let s = storage(&p);
                let m = TracingMap::new(p, &s).unwrap();
                let ks = keys(m.max_elts() * fill / 100, key_size);
                for k in &ks {
                    update(&m, k, n_sums);
                }
                let vals = if n_sums == 1 {
                    "hitcount"
                } else {
                    "hitcount+3"
                };
                let name = format!("{}key/{vals}/{fill}%", key_size / 8);
                let mut i = 0;
                g.bench_function(name, |b| {
                    b.iter(|| {
                        i = if i + 1 == ks.len() { 0 } else { i + 1 };
                        update(&m, black_box(&ks[i]), n_sums);
                    })
                });
                assert_eq!(m.drops(), 0);
            }
        }
    }
    g.finish();
}

fn hot_key(c: &mut Criterion) {
    let mut g = c.benchmark_group("hot_key");
    for threads in [1, 2] {
        let p = MapParams::new(BITS_DEFAULT, 8, 1, 0);
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        let key = 42u64.to_ne_bytes();
        // Time per update as each thread sees it (wall time / updates per
        // thread), all threads on one key.
        g.bench_function(format!("{threads}threads"), |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                std::thread::scope(|sc| {
                    for _ in 0..threads {
                        sc.spawn(|| {
                            for _ in 0..iters {
                                update(&m, black_box(&key), 1);
                            }
                        });
                    }
                });
                start.elapsed()
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_secs(1));
    targets = single_thread, hot_key
}
criterion_main!(benches);
