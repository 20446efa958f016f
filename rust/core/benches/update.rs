// SPDX-License-Identifier: GPL-2.0

//! Cost of one event through a whole histogram (`Histogram::update()`):
//! reading the record, building the key, the map, the sums, for the
//! trigger shapes of `make bench`, on the host CPU.
//! `cargo bench --bench update -- --warm-up-time 1 --measurement-time 2`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use rhist_core::hist::hist_data::HistData;
use rhist_core::hist::histogram::{map_params, Histogram};
use rhist_core::hist::map::TracingMap;
use rhist_core::hist::trigger;
use rhist_core::testing::{map_storage, record, EVENT, TASK};

/// 4096 records of 64 keys, with varied values.
fn records() -> Vec<[u8; 24]> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    (0..4096)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            record(s % 64, (s >> 8) as u32, (s >> 40) as i32)
        })
        .collect()
}

fn shapes(c: &mut Criterion) {
    let recs = records();
    let mut g = c.benchmark_group("event");
    for (name, text) in [
        ("keys_a", "keys=a"),
        ("keys_abc_vals_ab", "keys=a,b,c:vals=a,b"),
        ("log2_vals_b", "keys=a.log2:vals=b"),
        ("sort_3vals", "keys=a:vals=b,c:sort=b.descending"),
        ("var_expr", "keys=a:x=b,y=c:vals=b"),
    ] {
        let spec = trigger::parse(text).unwrap();
        let data = HistData::build(&spec, &EVENT).unwrap();
        let params = map_params(&data, 2);
        let storage = map_storage(&params);
        let hist = Histogram::new(&data, TracingMap::new(params, &storage).unwrap()).unwrap();
        g.bench_function(name, |b| {
            let mut i = 0;
            b.iter(|| {
                hist.update(black_box(&recs[i & 4095]), &TASK);
                i += 1;
            })
        });
    }
    g.finish();
}

criterion_group!(benches, shapes);
criterion_main!(benches);
