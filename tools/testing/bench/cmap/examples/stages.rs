// SPDX-License-Identifier: GPL-2.0

//! The map's stages of one update, C's and the core's, for counting
//! instructions:
//! `valgrind --tool=callgrind target/release/examples/stages c|rust STAGE N`.
//!
//! A map of 2048 elements with u64 keys and a hitcount, 64 keys in it,
//! then N updates of those keys cut after STAGE: 1 only reads the key, 2
//! hashes it, 3 also finds its entry, 4 also adds to its sums. The differences between
//! stages (and between two N) give each stage's instructions per update.

use std::hint::black_box;

use rhist_cmap_bench::CMap;
use rhist_core::hist::map::{Inserter, MapKey, MapParams, TracingMap};

const BITS: u32 = 11;
const KEYS: usize = 4096;

/// `KEYS` keys drawn from 64 distinct ones.
fn keys() -> Vec<u64> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    (0..KEYS)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s % 64
        })
        .collect()
}

/// The Rust side of `CMap::run_stages()`, as a compiled histogram
/// updates (word key, hits counted by the hitcount).
#[inline(never)]
fn rust_stages(m: &TracingMap<'_>, keys: &[u64], iters: u64, stage: u32) -> u64 {
    let mut out = 0u64;
    for i in 0..iters as usize {
        let key = [keys[i & (KEYS - 1)]];
        if stage <= 1 {
            out = out.wrapping_add(key[0]);
            continue;
        }
        if stage == 2 {
            out = out.wrapping_add(u64::from((&key).hash(1)));
            continue;
        }
        let elt = m.event_insert_words(&key, Inserter::on_cpu(0));
        match elt.and_then(|i| m.cpu_sums(i, 0)) {
            Some(sums) if stage >= 4 => sums.add(0, 1),
            e => out = out.wrapping_add(u64::from(e.is_some())),
        }
    }
    out
}

fn main() {
    let mut args = std::env::args().skip(1);
    let side = args.next().unwrap_or_else(|| "rust".into());
    let stage: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(4);
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let keys = keys();
    let out = if side == "c" {
        let m = CMap::new(BITS, 1).expect("C map");
        m.run(&keys, KEYS as u64);
        m.run_stages(black_box(&keys), n, stage)
    } else {
        let p = MapParams::new(BITS, 8, 1, 0);
        let storage: Vec<_> = (0..p.storage_words().unwrap())
            .map(|_| std::sync::atomic::AtomicU64::new(0))
            .collect();
        let m = TracingMap::new(p, &storage).unwrap();
        rust_stages(&m, &keys, KEYS as u64, 4);
        rust_stages(&m, black_box(&keys), n, stage)
    };
    println!("{out}");
}
