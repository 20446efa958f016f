// SPDX-License-Identifier: GPL-2.0

//! What a sketch update costs against a plain sum: `N` updates of one
//! of 64 entries each, values of 10 µs to 10 ms in ns (log-uniform), by
//! way of an out-of-line function per update, so that both pay the same
//! loop and call.
//!
//! `sketch_cost MODE N`, MODE one of
//!
//! * `loop`: the loop and the call, no update (the baseline);
//! * `sum`: `AtomicU64::fetch_add` of the value to the entry's sum;
//! * `sketch`: `MapSketches::record` of the value in the entry's sketch
//!   (finding the entry's sketch by its index, then `Sketch::record`);
//! * `record`: `Sketch::record` alone, the entry's `Sketch` at hand.
//!
//! Instructions per update, as `tools/testing/bench/stages.sh` counts
//! them, `(Ir(2N) - Ir(N)) / N` so that start-up (and the pages' claims,
//! the same in both runs) drops out:
//!
//! ```text
//! cargo build --release --example sketch_cost
//! ir() { valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/sketch_cost "$@" 2>&1 | awk '/Collected/ { print $4 }'; }
//! for m in loop sum sketch record; do
//!     echo "$m $(( ($(ir $m 2000000) - $(ir $m 1000000)) / 1000000 ))"; done
//! ```
//!
//! `sketch_cost time [N]` times the three on the host CPU instead.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rhist_core::hist::sketch::{MapSketches, PoolParams, Sketch, SketchPool};

const ENTRIES: usize = 64;

struct State<'a> {
    sums: Vec<AtomicU64>,
    sketches: MapSketches<'a>,
    handles: Vec<Sketch<'a>>,
    values: Vec<u64>,
}

#[inline(never)]
fn update_loop(_: &State<'_>, _: u32, _: u64) {}

#[inline(never)]
fn update_sum(s: &State<'_>, e: u32, v: u64) {
    if let Some(sum) = s.sums.get(e as usize) {
        sum.fetch_add(v, Ordering::Relaxed);
    }
}

#[inline(never)]
fn update_sketch(s: &State<'_>, e: u32, v: u64) {
    s.sketches.record(e, 0, v);
}

#[inline(never)]
fn update_record(s: &State<'_>, e: u32, v: u64) {
    if let Some(sk) = s.handles.get(e as usize) {
        sk.record(v);
    }
}

/// One update of entry `e` with value `v`.
type Update = fn(&State<'_>, u32, u64);

fn run(s: &State<'_>, f: Update, n: usize) {
    for i in 0..n {
        let v = black_box(s.values[i & 4095]);
        f(s, (i % ENTRIES) as u32, v);
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "sketch".into());
    let n: usize = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    // Pages for all the groups the values touch (11), so that the pool
    // does not run dry.
    let params = PoolParams::new(ENTRIES, ENTRIES * 16);
    let storage: Vec<AtomicU64> = (0..params.storage_words().unwrap())
        .map(|_| AtomicU64::new(0))
        .collect();
    let pool = SketchPool::new(params, &storage).unwrap();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let values = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // 10^4 * 1000^u, u uniform in [0, 1).
            (1e4 * 1e3f64.powf((x >> 11) as f64 / (1u64 << 53) as f64)) as u64
        })
        .collect();
    let sketches = MapSketches::new(pool, 1).unwrap();
    let state = State {
        sums: (0..ENTRIES).map(|_| AtomicU64::new(0)).collect(),
        sketches,
        handles: (0..ENTRIES as u32)
            .filter_map(|e| sketches.sketch(e, 0))
            .collect(),
        values,
    };
    let modes: [(&str, Update); 4] = [
        ("loop", update_loop),
        ("sum", update_sum),
        ("sketch", update_sketch),
        ("record", update_record),
    ];
    if mode == "time" {
        let n = n.max(10_000_000);
        let mut ns = [0f64; 4];
        for (i, (_, f)) in modes.iter().enumerate() {
            run(&state, *f, n / 10);
            let t = Instant::now();
            run(&state, *f, n);
            ns[i] = t.elapsed().as_secs_f64() * 1e9 / n as f64;
        }
        for (i, (name, _)) in modes.iter().enumerate() {
            println!("{name:7} {:6.2} ns/update", ns[i]);
        }
        println!(
            "less the loop, sketch/sum: {:.2}, record/sum: {:.2}",
            (ns[2] - ns[0]) / (ns[1] - ns[0]),
            (ns[3] - ns[0]) / (ns[1] - ns[0])
        );
    } else {
        let Some((_, f)) = modes.iter().find(|(name, _)| *name == mode) else {
            eprintln!("usage: sketch_cost loop|sum|sketch|record|time [N]");
            std::process::exit(2);
        };
        run(&state, *f, n);
    }
    let s = state.sketches.union(0, 0..ENTRIES as u32).percentiles();
    let st = state.sketches.pool().stats();
    println!(
        "{} values, p50 {:?}, {} pages used, {} unplaced",
        s.count, s.p[0], st.pages_used, st.unplaced
    );
}
