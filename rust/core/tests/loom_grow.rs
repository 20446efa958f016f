// SPDX-License-Identifier: GPL-2.0

//! Model check of `:grow`'s switch with loom: an updater accounts events
//! through a generation index loaded once per event, its sequence
//! counter odd while it is in one (the grace period's model); the grower
//! publishes the larger map, waits for the updater to leave an event it
//! was in, folds the old map into the new one (the real `fold_into` of
//! `src/map.rs`, on loom's atomics) and frees it. No event may use the
//! old map after the fold, and no count is lost or doubled, whatever the
//! interleaving.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test --release --test loom_grow`.

#![cfg(loom)]

mod common;

use common::map::{Inserter, MapParams, TracingMap};
use common::{model, new_map};
use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use loom::thread;

struct Gens {
    maps: [TracingMap<'static>; 2],
    current: AtomicUsize,
    seq: AtomicU64,
    freed: AtomicBool,
}

/// One event of `key` with value `v`, as the probe of a `:grow` trigger
/// would account it: whether it counted.
fn event(g: &Gens, key: u64, v: u64) -> bool {
    // Enter (a read-modify-write: see `grow()`).
    g.seq.fetch_add(1, Ordering::AcqRel);
    let at = g.current.load(Ordering::Acquire);
    assert!(
        at == 1 || !g.freed.load(Ordering::Acquire),
        "the old map used after its fold"
    );
    let counted = match g.maps[at].event_insert(&key.to_ne_bytes(), Inserter::on_cpu(0), |_| {}) {
        Some(e) => {
            e.update_sum(0, 1);
            e.update_max_on(0, 1, v);
            true
        }
        None => false,
    };
    g.seq.fetch_add(1, Ordering::Release);
    counted
}

/// The grow work: publish, wait, fold, free.
fn grow(g: &Gens) {
    g.current.store(1, Ordering::Relaxed);
    // The grace period's ordering, as loom can check it (it takes SeqCst
    // for AcqRel, so a store and a load would not do): a read-modify-
    // write of the sequence after the publication. Either it comes after
    // the updater's enter, and sees it in an event, or before, and the
    // updater's enter acquires it, and then loads the new index.
    let at = g.seq.fetch_add(0, Ordering::AcqRel);
    if at % 2 == 1 {
        while g.seq.load(Ordering::Acquire) == at {
            thread::yield_now();
        }
    }
    g.maps[0]
        .fold_into(&g.maps[1], |i| i == 1, |_| panic!("no room"))
        .unwrap();
    g.freed.store(true, Ordering::Release);
}

#[test]
fn publish_wait_fold() {
    model("publish_wait_fold", || {
        let p = |bits| MapParams::new(bits, 8, 2, 0);
        let g: &'static Gens = Box::leak(Box::new(Gens {
            maps: [new_map(p(0)), new_map(p(1))],
            current: AtomicUsize::new(0),
            seq: AtomicU64::new(0),
            freed: AtomicBool::new(false),
        }));
        // An entry already in the old map.
        assert!(event(g, 1, 5));
        // Two events of that key racing the switch: each goes to the old
        // map before the publication, or to the new one, maybe while the
        // fold inserts the same key there.
        let t = thread::spawn(move || event(g, 1, 9) as u64 + event(g, 1, 3) as u64);
        grow(g);
        let n = 1 + t.join().unwrap();
        assert_eq!(n, 3, "the maps have room");
        let e = g.maps[1].lookup(&1u64.to_ne_bytes()).unwrap();
        assert_eq!((e.read_sum(0), e.read_max(1)), (n, 9));
        assert_eq!(g.maps[1].iter().count(), 1);
        // The fold's element, when the event inserted the key first.
        assert!(g.maps[1].len() <= 2);
        assert_eq!(g.maps[1].drops(), 0);
    });
}
