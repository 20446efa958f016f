// SPDX-License-Identifier: GPL-2.0

//! The map against a sequential model (proptest) and under threads.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::AtomicU64;

use proptest::prelude::*;
use rhist_core::hist::map::{MapParams, SortField, SortKey, TracingMap};

fn storage(p: &MapParams) -> Vec<AtomicU64> {
    (0..p.storage_words().unwrap())
        .map(|_| AtomicU64::new(0))
        .collect()
}

// ---------------------------------------------------------------------
// Sequential model.

#[derive(Clone, Debug)]
enum Op {
    /// Insert key `k`, add 1 to sum 0 and `v` to sum 1 (a hist update).
    Update(u8, u64),
    Lookup(u8),
    SetVar(u8, usize, u64),
    TakeVar(u8, usize),
    Clear,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0u8..24, 0u64..1000).prop_map(|(k, v)| Op::Update(k, v)),
        2 => (0u8..24).prop_map(Op::Lookup),
        2 => (0u8..24, 0usize..2, any::<u64>()).prop_map(|(k, i, v)| Op::SetVar(k, i, v)),
        2 => (0u8..24, 0usize..2).prop_map(|(k, i)| Op::TakeVar(k, i)),
        1 => Just(Op::Clear),
    ]
}

/// Key `k` as `size` bytes, distinct for distinct `k` whatever the size.
fn key_of(k: u8, size: usize) -> Vec<u8> {
    let mut key = vec![0u8; size];
    key[0] = k;
    key[size - 1] ^= k.wrapping_mul(37) | 1;
    key
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct ModelElt {
    sums: [u64; 2],
    vars: [Option<u64>; 2],
}

#[derive(Debug, Default)]
struct Model {
    elts: HashMap<Vec<u8>, ModelElt>,
    hits: u64,
    drops: u64,
}

/// What can be seen of a map: key -> (sums, vars), hits, drops, len.
type Seen = (BTreeMap<Vec<u8>, ModelElt>, u64, u64, usize);

fn observe(m: &TracingMap<'_>) -> Seen {
    let mut elts = BTreeMap::new();
    for e in m.iter() {
        let mut key = vec![0u8; e.key_size()];
        e.copy_key(&mut key);
        let elt = ModelElt {
            sums: [e.read_sum(0), e.read_sum(1)],
            vars: [0, 1].map(|i| e.var_is_set(i).then(|| e.read_var(i))),
        };
        assert!(elts.insert(key, elt).is_none(), "duplicate key");
    }
    (elts, m.hits(), m.drops(), m.len())
}

fn model_seen(model: &Model) -> Seen {
    let elts = model
        .elts
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (elts, model.hits, model.drops, model.elts.len())
}

fn run_model(bits: u32, key_size: usize, ops: &[Op]) -> Result<(), TestCaseError> {
    let p = MapParams::new(bits, key_size, 2, 2);
    let s = storage(&p);
    let m = TracingMap::new(p, &s).unwrap();
    let mut model = Model::default();
    for op in ops {
        match *op {
            Op::Update(k, v) => {
                let key = key_of(k, key_size);
                let got = m.insert(&key);
                let exists = model.elts.contains_key(&key);
                if exists || model.elts.len() < m.max_elts() {
                    let e = got.expect("insert failed with room left");
                    e.update_sum(0, 1);
                    e.update_sum(1, v);
                    let me = model.elts.entry(key).or_default();
                    me.sums[0] += 1;
                    me.sums[1] += v;
                    model.hits += 1;
                } else {
                    prop_assert!(got.is_none());
                    model.drops += 1;
                }
            }
            Op::Lookup(k) => {
                let key = key_of(k, key_size);
                let got = m.lookup(&key);
                let want = model.elts.get(&key);
                prop_assert_eq!(got.is_some(), want.is_some());
                if let (Some(e), Some(w)) = (got, want) {
                    prop_assert_eq!([e.read_sum(0), e.read_sum(1)], w.sums);
                }
            }
            Op::SetVar(k, i, v) => {
                let key = key_of(k, key_size);
                if let Some(e) = m.lookup(&key) {
                    e.set_var(i, v);
                    model.elts.get_mut(&key).unwrap().vars[i] = Some(v);
                } else {
                    prop_assert!(!model.elts.contains_key(&key));
                }
            }
            Op::TakeVar(k, i) => {
                let key = key_of(k, key_size);
                let got = m.lookup(&key).and_then(|e| e.take_var(i));
                let want = model.elts.get_mut(&key).and_then(|e| e.vars[i].take());
                prop_assert_eq!(got, want);
            }
            Op::Clear => {
                m.clear();
                model = Model::default();
            }
        }
        prop_assert_eq!(observe(&m), model_seen(&model));
    }
    // Sorting: a permutation of the elements, ordered by the two keys.
    let mut out = vec![0u32; m.max_elts()];
    let keys = [
        SortKey::descending(SortField::Sum(0)),
        SortKey::ascending(SortField::KeyNum {
            offset: 0,
            size: 1,
            signed: false,
        }),
    ];
    let n = m.sort_entries(&keys, &mut out);
    prop_assert_eq!(n, model.elts.len());
    let rows: Vec<(u64, u8)> = out[..n]
        .iter()
        .map(|&i| {
            let e = m.elt(i).unwrap();
            (e.read_sum(0), e.key_byte(0).unwrap())
        })
        .collect();
    let mut want: Vec<(u64, u8)> = model.elts.iter().map(|(k, e)| (e.sums[0], k[0])).collect();
    want.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    prop_assert_eq!(rows, want);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn map_matches_sequential_model(
        bits in 0u32..4,
        key_size in prop_oneof![Just(3usize), Just(8), Just(12), Just(24)],
        ops in proptest::collection::vec(op(), 0..120),
    ) {
        run_model(bits, key_size, &ops)?;
    }
}

// ---------------------------------------------------------------------
// Threads.

const THREADS: usize = 4;
const OPS: usize = 200_000;

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// Per-key counts a thread keeps of its own calls.
#[derive(Default)]
struct Tally {
    hits: HashMap<usize, u64>,
    drops: HashMap<usize, u64>,
}

/// `THREADS` threads each make `OPS` updates on keys `pick(rng)` out of
/// `keys`, adding 1 to sum 0 and the key id to sum 1; then every call must
/// be accounted for exactly once, as a sum contribution or a drop.
fn hammer(bits: u32, keys: &[Vec<u8>], pick: impl Fn(&mut u64) -> usize + Sync) -> (u64, u64) {
    let key_size = keys[0].len();
    let p = MapParams::new(bits, key_size, 2, 0);
    let s = storage(&p);
    let m = TracingMap::new(p, &s).unwrap();
    let tallies: Vec<Tally> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let pick = &pick;
                sc.spawn(move || {
                    let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ ((t as u64 + 1) * 0x1234_5678_9abc);
                    let mut tally = Tally::default();
                    for _ in 0..OPS {
                        let id = pick(&mut rng);
                        match m.insert(&keys[id]) {
                            Some(e) => {
                                e.update_sum(0, 1);
                                e.update_sum(1, id as u64);
                                *tally.hits.entry(id).or_default() += 1;
                            }
                            None => *tally.drops.entry(id).or_default() += 1,
                        }
                    }
                    tally
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    let mut hits: HashMap<usize, u64> = HashMap::new();
    let mut drops: HashMap<usize, u64> = HashMap::new();
    for t in &tallies {
        for (&k, &n) in &t.hits {
            *hits.entry(k).or_default() += n;
        }
        for (&k, &n) in &t.drops {
            *drops.entry(k).or_default() += n;
        }
    }
    let total_hits: u64 = hits.values().sum();
    let total_drops: u64 = drops.values().sum();
    assert_eq!(total_hits + total_drops, (THREADS * OPS) as u64);
    assert_eq!(m.hits(), total_hits, "hits counter");
    assert_eq!(m.drops(), total_drops, "drops counter");

    let index: HashMap<&[u8], usize> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_slice(), i))
        .collect();
    let mut seen = HashSet::new();
    let mut buf = vec![0u8; key_size];
    for e in m.iter() {
        e.copy_key(&mut buf);
        let id = *index.get(buf.as_slice()).expect("a key nobody inserted");
        assert!(seen.insert(id), "key {id} is in the map twice");
        let h = hits.get(&id).copied().unwrap_or(0);
        assert_eq!(e.read_sum(0), h, "key {id}: sum vs hits");
        assert_eq!(e.read_sum(1), h * id as u64, "key {id}: value sum");
    }
    // A key with hits is in the map; one that is not had only drops.
    for (id, &h) in &hits {
        assert!(h == 0 || seen.contains(id), "key {id} lost");
    }
    assert_eq!(m.len(), seen.len());
    assert!(m.len() <= m.max_elts());
    println!(
        "{} keys, {} elements: {total_hits} hits, {total_drops} drops, {} keys in the map",
        keys.len(),
        m.max_elts(),
        m.len()
    );
    (total_hits, total_drops)
}

fn keys8(n: usize) -> Vec<Vec<u8>> {
    (0..n as u64).map(|i| i.to_ne_bytes().to_vec()).collect()
}

fn keys24(n: usize) -> Vec<Vec<u8>> {
    (0..n as u64)
        .map(|i| {
            let mut k = i.to_ne_bytes().to_vec();
            k.extend_from_slice(&i.wrapping_mul(0x9e37_79b9).to_ne_bytes());
            k.extend_from_slice(&(!i).to_ne_bytes());
            k
        })
        .collect()
}

#[test]
fn threads_overlapping_keys_with_room() {
    // 1024 elements, 700 keys, every thread on all of them.
    let keys = keys8(700);
    let (hits, drops) = hammer(10, &keys, |r| (xorshift(r) % 700) as usize);
    // Drops here only come from giving up on an entry whose inserter was
    // preempted between claim and publish.
    assert!(drops < hits / 100, "{drops} drops");
}

#[test]
fn threads_full_map() {
    // 128 elements, 1000 keys: most calls are drops, none lost.
    let keys = keys24(1000);
    let (hits, drops) = hammer(7, &keys, |r| (xorshift(r) % 1000) as usize);
    assert!(drops > 0 && hits > 0);
}

#[test]
fn threads_one_hot_key() {
    let keys = keys8(1);
    let (hits, _) = hammer(7, &keys, |_| 0);
    assert!(hits > 0);
}

#[test]
fn threads_same_hash_keys() {
    // Pairs of distinct keys with one 32-bit hash, found by brute force:
    // they wait on each other's publish and must compare whole keys.
    let mut by_hash: HashMap<u32, u64> = HashMap::new();
    let mut keys = Vec::new();
    for x in 0u64.. {
        let k = x.to_ne_bytes();
        if let Some(y) = by_hash.insert(rhist_core::hist::map::key_hash(&k, 8), x) {
            keys.push(y.to_ne_bytes().to_vec());
            keys.push(k.to_vec());
            if keys.len() == 8 {
                break;
            }
        }
    }
    let n = keys.len();
    // Room for all, and a map too small for all.
    hammer(4, &keys, |r| (xorshift(r) % n as u64) as usize);
    hammer(1, &keys, |r| (xorshift(r) % n as u64) as usize);
}

#[test]
fn reader_during_inserts() {
    // One reader walks and sorts the map while writers insert: every key
    // it sees is whole, no key twice in one walk, sums never go down.
    let keys = keys24(300);
    let p = MapParams::new(8, 24, 1, 0);
    let s = storage(&p);
    let m = TracingMap::new(p, &s).unwrap();
    let valid: HashSet<Vec<u8>> = keys.iter().cloned().collect();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|sc| {
        for t in 0..2u64 {
            let (keys, done) = (&keys, &done);
            sc.spawn(move || {
                let mut rng = 77 + t;
                for _ in 0..OPS {
                    let id = (xorshift(&mut rng) % 300) as usize;
                    if let Some(e) = m.insert(&keys[id]) {
                        e.update_sum(0, 1);
                    }
                }
                done.store(true, std::sync::atomic::Ordering::Relaxed);
            });
        }
        let mut last: HashMap<Vec<u8>, u64> = HashMap::new();
        let mut out = vec![0u32; m.max_elts()];
        let sort = [SortKey::descending(SortField::Sum(0))];
        let mut walks = 0;
        while !done.load(std::sync::atomic::Ordering::Relaxed) || walks < 10 {
            let mut this_walk = HashSet::new();
            for e in m.iter() {
                let mut k = vec![0u8; 24];
                e.copy_key(&mut k);
                assert!(valid.contains(&k), "torn key");
                assert!(this_walk.insert(k.clone()), "key twice in one walk");
                let sum = e.read_sum(0);
                let prev = last.insert(k, sum).unwrap_or(0);
                assert!(sum >= prev, "sum went down");
            }
            let n = m.sort_entries(&sort, &mut out);
            assert!(n >= this_walk.len());
            walks += 1;
        }
    });
    let total: u64 = m.iter().map(|e| e.read_sum(0)).sum();
    assert_eq!(total, m.hits());
    assert_eq!(m.hits() + m.drops(), 2 * OPS as u64);
}

/// Threads insert keys and raise their maxima (rhist's `.max`, and
/// `.min` as the maximum of `!value`) at once, each in the copy of a CPU
/// of its own, then all in one shared copy: every maximum is the largest
/// value raised, a new entry's first ones included, and the reader's
/// view of one never goes down.
#[test]
fn threads_raise_maxima() {
    for cpus in [THREADS, 1] {
        let p = MapParams::new(8, 8, 3, 0).with_cpus(cpus);
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        let keys = keys8(200);
        let done = std::sync::atomic::AtomicUsize::new(0);
        let tallies: Vec<HashMap<usize, (u64, u64, u64)>> = std::thread::scope(|sc| {
            let handles: Vec<_> = (0..THREADS)
                .map(|t| {
                    let (keys, done) = (&keys, &done);
                    sc.spawn(move || {
                        let mut rng = 0x5151_u64 + t as u64;
                        let mut seen: HashMap<usize, (u64, u64, u64)> = HashMap::new();
                        for _ in 0..OPS / 4 {
                            let id = (xorshift(&mut rng) % 200) as usize;
                            let v = xorshift(&mut rng) >> (xorshift(&mut rng) % 64);
                            let Some(e) = m.insert(&keys[id]) else {
                                continue;
                            };
                            e.update_sum_on(t as u32, 0, 1);
                            e.update_max_on(t as u32, 1, v);
                            e.update_max_on(t as u32, 2, !v);
                            let s = seen.entry(id).or_insert((0, 0, u64::MAX));
                            *s = (s.0 + 1, s.1.max(v), s.2.min(v));
                        }
                        done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        seen
                    })
                })
                .collect();
            let mut last: HashMap<u64, (u64, u64)> = HashMap::new();
            while done.load(std::sync::atomic::Ordering::Relaxed) < THREADS {
                for e in m.iter() {
                    let now = (e.read_max(1), e.read_max(2));
                    let before = last.insert(e.key_word(0), now).unwrap_or((0, 0));
                    assert!(
                        now.0 >= before.0 && now.1 >= before.1,
                        "a maximum went down"
                    );
                }
            }
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut want: HashMap<usize, (u64, u64, u64)> = HashMap::new();
        for t in &tallies {
            for (&id, &(n, max, min)) in t {
                let w = want.entry(id).or_insert((0, 0, u64::MAX));
                *w = (w.0 + n, w.1.max(max), w.2.min(min));
            }
        }
        assert_eq!(m.len(), want.len());
        for (id, (n, max, min)) in want {
            let e = m.lookup(&keys[id]).expect("a key with hits is in the map");
            assert_eq!(e.read_sum(0), n, "{cpus} copies, key {id}: hits");
            assert_eq!(e.read_max(1), max, "{cpus} copies, key {id}: max");
            assert_eq!(!e.read_max(2), min, "{cpus} copies, key {id}: min");
        }
    }
}
