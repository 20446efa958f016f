// SPDX-License-Identifier: GPL-2.0

//! What the loom model checks of the map (`loom_map.rs`, `loom_grow.rs`)
//! share: the real `src/map.rs`, compiled here on loom's atomics (its
//! `cfg(all(loom, test))`), maps over leaked words, and the model runner.

// An inline module for the directory, so that map.rs finds its own
// files (src/map/) as in the crate, and its sibling (`super::stats`).
#[path = "../../src"]
#[allow(dead_code, unused_imports)]
mod src {
    pub mod map;
    mod stats;
}
pub use src::map;

use loom::sync::atomic::AtomicU64;
use map::{MapParams, TracingMap};

/// A map over leaked loom atomics (a few words per run of the model).
pub fn new_map(p: MapParams) -> TracingMap<'static> {
    let n = p.storage_words().unwrap();
    let s: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    TracingMap::new(p, Box::leak(s.into_boxed_slice())).unwrap()
}

/// Runs `f` under loom (at most 3 preemptions unless `LOOM_MAX_PREEMPTIONS`
/// says otherwise) and reports how many executions were explored.
pub fn model(name: &str, f: impl Fn() + Sync + Send + 'static) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        f()
    });
    println!("{name}: {} executions", runs.load(Ordering::Relaxed));
}
