// SPDX-License-Identifier: GPL-2.0

//! The kernel's C tracing_map against rhist_core's TracingMap, one update
//! (insert the key, add to its sums) at a time, in one criterion run.
//!
//! `cmap/{c,rust}/{hot,many}/{fill50,fill90}/{1,2}threads[/3sums]`: the map
//! (2048 elements, u64 keys) is first filled to 50% or 90% with distinct
//! keys; then each thread updates either one key shared by all threads
//! (hot) or keys drawn uniformly from the filled ones (many), in its own
//! shuffled order.  The time is wall time over updates per thread: what
//! one update costs each thread while the others run too.
//!
//! Thread `t` updates as CPU `t`: `rust` keeps the sums per CPU (for two
//! CPUs), as the kernel module does on a machine of two CPUs, and
//! `rust-shared` keeps one copy, as C does.
//!
//! `./run.sh` runs it and tabulates C against Rust.

use std::hint::black_box;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use rhist_cmap_bench::{CMap, KERNEL_SOURCE};
use rhist_core::hist::map::{Inserter, MapParams, TracingMap, BITS_DEFAULT};

/// Length of each thread's key sequence (a power of two).
const SEQ_LEN: usize = 1 << 16;

/// The key the `i`-th prefilled element gets: small integers, like pids.
fn key(i: usize) -> u64 {
    i as u64 + 1
}

/// xorshift64, enough for shuffling.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Pattern {
    Hot,
    Many,
}

/// Thread `t`'s key sequence over `n` prefilled keys.
fn sequence(pattern: Pattern, n: usize, t: usize) -> Vec<u64> {
    match pattern {
        Pattern::Hot => vec![key(n / 2); SEQ_LEN],
        Pattern::Many => {
            let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ ((t as u64 + 1) * 0x9e37_79b9));
            let mut s: Vec<u64> = (0..SEQ_LEN).map(|_| key(rng.below(n))).collect();
            for i in (1..s.len()).rev() {
                s.swap(i, rng.below(i + 1));
            }
            s
        }
    }
}

/// The Rust side: rhist_core's map, updated as in rust/core/benches/map.rs.
struct RustMap {
    storage: Vec<AtomicU64>,
    params: MapParams,
}

impl RustMap {
    fn new(n_sums: usize, n_cpus: usize) -> Self {
        let params = MapParams::new(BITS_DEFAULT, 8, n_sums, 0).per_cpu(n_cpus);
        assert_eq!(params.n_cpus, n_cpus);
        let storage = (0..params.storage_words().unwrap())
            .map(|_| AtomicU64::new(0))
            .collect();
        Self { storage, params }
    }

    fn map(&self) -> TracingMap<'_> {
        TracingMap::new(self.params, &self.storage).unwrap()
    }
}

/// What a compiled histogram does per event: the key as a word, the hit
/// counted by the hitcount sum alone (C also adds to `map->hits`).
#[inline(always)]
fn rust_update(m: &TracingMap<'_>, key: u64, n_sums: usize, cpu: u32) -> bool {
    match m
        .event_insert_words(&[key], Inserter::on_cpu(cpu))
        .and_then(|i| m.cpu_sums(i, cpu))
    {
        Some(sums) => {
            sums.add(0, 1);
            for i in 1..n_sums {
                sums.add(i, i as u64 * 3);
            }
            true
        }
        None => false,
    }
}

/// `iters` updates from `keys` on CPU `cpu`, the loop cmap_run() runs in C.
fn rust_run(m: &TracingMap<'_>, keys: &[u64], iters: u64, n_sums: usize, cpu: u32) -> u64 {
    let mask = keys.len() - 1;
    let mut drops = 0;
    for i in 0..iters as usize {
        drops += !rust_update(m, black_box(keys[i & mask]), n_sums, cpu) as u64;
    }
    drops
}

/// Wall time of `run(thread, iters)` on each of `threads` threads at once.
fn timed(threads: usize, iters: u64, run: impl Fn(usize, u64) -> u64 + Sync) -> Duration {
    let start = Instant::now();
    let drops: u64 = if threads == 1 {
        run(0, iters)
    } else {
        std::thread::scope(|sc| {
            let hs: Vec<_> = (0..threads)
                .map(|t| {
                    let run = &run;
                    sc.spawn(move || run(t, iters))
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        })
    };
    let elapsed = start.elapsed();
    assert_eq!(drops, 0, "updates of prefilled keys were dropped");
    elapsed
}

fn cmap(c: &mut Criterion) {
    eprintln!("tracing_map.c from {KERNEL_SOURCE}");
    let cases = [(Pattern::Hot, 1), (Pattern::Many, 1), (Pattern::Many, 3)];
    for (pattern, n_sums) in cases {
        for fill in [50, 90] {
            for threads in [1, 2] {
                if n_sums != 1 && fill != 90 {
                    continue;
                }
                let p = match pattern {
                    Pattern::Hot => "hot",
                    Pattern::Many => "many",
                };
                let suffix = if n_sums == 1 {
                    String::new()
                } else {
                    format!("/{n_sums}sums")
                };
                let name =
                    |side: &str| format!("cmap/{side}/{p}/fill{fill}/{threads}threads{suffix}");

                let cm = CMap::new(BITS_DEFAULT, n_sums as u32).unwrap();
                let rm = RustMap::new(n_sums, 2);
                let rmap = rm.map();
                let sm = RustMap::new(n_sums, 1);
                let smap = sm.map();
                let n = rmap.max_elts() * fill / 100;
                for i in 0..n {
                    assert!(cm.update(key(i)));
                    assert!(rust_update(&rmap, key(i), n_sums, 0));
                    assert!(rust_update(&smap, key(i), n_sums, 0));
                }
                let seqs: Vec<Vec<u64>> = (0..threads).map(|t| sequence(pattern, n, t)).collect();

                c.bench_function(&name("c"), |b| {
                    b.iter_custom(|iters| timed(threads, iters, |t, it| cm.run(&seqs[t], it)))
                });
                for (side, map) in [("rust", &rmap), ("rust-shared", &smap)] {
                    c.bench_function(&name(side), |b| {
                        b.iter_custom(|iters| {
                            timed(threads, iters, |t, it| {
                                rust_run(map, &seqs[t], it, n_sums, t as u32)
                            })
                        })
                    });
                }
                assert_eq!(cm.drops(), 0);
                assert_eq!(rmap.drops(), 0);
                assert_eq!(smap.drops(), 0);
            }
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = cmap
}
criterion_main!(benches);
