// SPDX-License-Identifier: GPL-2.0

//! The `le` edges of the exporter's Prometheus histograms, and the
//! cumulative counts at them.
//!
//! A histogram family is summed across machines with `sum by (le)`, which
//! is right only when every machine writes the same `le` set on every
//! scrape: the edges here depend on the command line and on the trigger
//! (a `.buckets=` key's size), never on the data. Each edge is exact: a
//! value is counted at `le` when it is at most `le`, and every edge is the
//! high end of one of the distribution's own buckets, so that no bucket
//! straddles an edge:
//!
//! - `.quantiles`: the sketch's buckets (one per value below 128, then 64
//!   per power of two; Documentation/trace/rhist.rst "Percentiles: the
//!   sketch"); the grid cuts each power of two `[2^p, 2^(p+1))` into
//!   `--buckets-per-power-of-two` parts of equal width, whose high ends
//!   are sketch edges;
//! - a `.log2` key: `hist` prints `~ 2^N` for the values `2^(N-1) + 1` to
//!   `2^N`, so the edges are the powers of two;
//! - a `.buckets=S` key: `hist` prints `~ LOW-HIGH`, `HIGH = LOW + S - 1`,
//!   so the edges are `S - 1`, `2S - 1`, ...
//!
//! `--bucket-min` and `--bucket-max` choose a range of the grid, each
//! rounded up to the next edge; `--bucket-edges` lists edges instead,
//! each rounded up to the next edge of the distribution's own buckets.
//! `--max-buckets` bounds a family's edges (the lowest are kept).
//! Values above the last edge count only in `+Inf` (and `_count`).

/// Edges are `u128`: a `.log2` key's last edge is 2^64.
pub type Edge = u128;

/// How the edges are chosen (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Parts of a power of two for `.quantiles`: 1, 2, 4 or 8.
    pub per_power: u32,
    /// The lowest and highest edge asked for, before rounding.
    pub min: u64,
    pub max: u64,
    /// Edges asked for, before rounding: replaces `min` and `max`.
    pub edges: Option<Vec<u64>>,
    /// The most edges of one family (`+Inf` aside).
    pub max_buckets: usize,
}

impl Default for Config {
    /// One bucket per power of two from 1 to 2^36 - 1 (68.7 s in
    /// nanoseconds): 36 edges and `+Inf`.
    fn default() -> Self {
        Config {
            per_power: 1,
            min: 1,
            max: (1 << 36) - 1,
            edges: None,
            max_buckets: 64,
        }
    }
}

impl Config {
    /// Checks what the command line gave.
    pub fn validate(&self) -> Result<(), String> {
        if ![1, 2, 4, 8].contains(&self.per_power) {
            return Err("--buckets-per-power-of-two takes 1, 2, 4 or 8".into());
        }
        if self.min > self.max {
            return Err("--bucket-min is above --bucket-max".into());
        }
        if self.max_buckets == 0 {
            return Err("--max-buckets must be at least 1".into());
        }
        if self.edges.as_ref().is_some_and(Vec::is_empty) {
            return Err("--bucket-edges needs at least one edge".into());
        }
        Ok(())
    }
}

/// What a distribution's buckets are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    /// A `.quantiles` sketch, cut into `per_power` parts per power of two.
    Sketch,
    /// A `.log2` key.
    Log2,
    /// A `.buckets=size` key.
    Linear(u64),
}

/// The high end of the sketch bucket that holds `v`.
pub fn sketch_edge(v: u64) -> u64 {
    if v < 128 {
        return v;
    }
    let p = 63 - v.leading_zeros();
    let width = 1u64 << (p - 6);
    (v & !(width - 1)) + (width - 1)
}

/// The smallest edge of `grid` at or above `v` (none above the last).
fn round_up(grid: Grid, per_power: u32, v: u64) -> Option<Edge> {
    let v = Edge::from(v);
    match grid {
        Grid::Sketch => grid_edges(per_power).find(|&e| e >= v),
        Grid::Log2 => Some(v.max(1).next_power_of_two()),
        Grid::Linear(size) => {
            let size = Edge::from(size.max(1));
            let e = (v / size) * size + size - 1;
            (e <= Edge::from(u64::MAX)).then_some(e)
        }
    }
}

/// The sketch grid's edges, in order: 0, then `per_power` per power of
/// two (as many as it has values, when fewer).
fn grid_edges(per_power: u32) -> impl Iterator<Item = Edge> {
    let k = u64::from(per_power);
    std::iter::once(0).chain((0..64u32).flat_map(move |p| {
        let base = 1u64 << p;
        let parts = k.min(base);
        (1..=parts).map(move |j| Edge::from(base - 1) + Edge::from(j * (base / parts)))
    }))
}

/// The next edge of `grid` after `e`.
fn next_edge(grid: Grid, per_power: u32, e: Edge) -> Option<Edge> {
    match grid {
        Grid::Sketch => grid_edges(per_power).find(|&x| x > e),
        Grid::Log2 => (e < 1 << 64).then(|| e * 2),
        Grid::Linear(size) => {
            let n = e + Edge::from(size.max(1));
            (n <= Edge::from(u64::MAX)).then_some(n)
        }
    }
}

/// The edges of a family of `grid`, in order.
pub fn edges(c: &Config, grid: Grid) -> Vec<Edge> {
    let mut out: Vec<Edge> = match &c.edges {
        Some(list) => {
            let mut v: Vec<Edge> = list
                .iter()
                .filter_map(|&x| match grid {
                    Grid::Sketch => Some(Edge::from(sketch_edge(x))),
                    _ => round_up(grid, c.per_power, x),
                })
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        }
        None => {
            let mut v = Vec::new();
            let last = round_up(grid, c.per_power, c.max);
            let mut e = round_up(grid, c.per_power, c.min);
            while let Some(x) = e {
                if v.len() == c.max_buckets || last.is_some_and(|l| x > l) {
                    break;
                }
                v.push(x);
                e = next_edge(grid, c.per_power, x);
            }
            v
        }
    };
    out.truncate(c.max_buckets);
    out
}

/// Cumulative counts at `edges` of buckets given as `(high, count)`, in
/// any order: per edge, the count of the buckets whose high end is at or
/// below it (the whole bucket, as no bucket straddles an edge).
pub fn cumulative(edges: &[Edge], counts: &[(Edge, u64)]) -> Vec<u64> {
    let mut sorted = counts.to_vec();
    sorted.sort_unstable();
    let mut out = Vec::with_capacity(edges.len());
    let (mut i, mut sum) = (0, 0u64);
    for &e in edges {
        while i < sorted.len() && sorted[i].0 <= e {
            sum = sum.saturating_add(sorted[i].1);
            i += 1;
        }
        out.push(sum);
    }
    out
}

/// The high end of an entry's range of a `.log2` or `.buckets=` key, as
/// the rhist file prints it: `~ 2^N` holds `2^(N-1) + 1` to `2^N` (`~ 2^0`
/// 0 and 1), `~ LOW-HIGH` holds `LOW` to `LOW + S - 1`.
pub fn key_high(grid: Grid, value: u64) -> Edge {
    match grid {
        Grid::Log2 => 1u128 << value.min(64),
        Grid::Linear(size) => Edge::from(value) + Edge::from(size.max(1)) - 1,
        Grid::Sketch => Edge::from(sketch_edge(value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sketch's buckets, `[low, high]`, from 0 up to `top`.
    fn sketch_buckets(top: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut lo = 0u64;
        while lo <= top {
            let hi = sketch_edge(lo);
            out.push((lo, hi));
            if hi == u64::MAX {
                break;
            }
            lo = hi + 1;
        }
        out
    }

    #[test]
    fn sketch_edges_are_its_buckets() {
        let b = sketch_buckets(u64::MAX);
        // 128 below 128, then 64 per power of two from 2^7 to 2^63.
        assert_eq!(b.len(), 128 + 64 * 57);
        assert_eq!(b[127], (127, 127));
        assert_eq!(b[128], (128, 129));
        assert_eq!(b[128 + 63], (254, 255));
        assert_eq!(*b.last().unwrap(), (u64::MAX - (1 << 57) + 1, u64::MAX));
        for w in b.windows(2) {
            assert_eq!(w[0].1 + 1, w[1].0);
        }
        for (lo, hi) in b.iter().step_by(7) {
            assert_eq!(sketch_edge(*lo), *hi);
            assert_eq!(sketch_edge(*hi), *hi);
        }
    }

    #[test]
    fn every_grid_edge_is_a_sketch_edge() {
        for k in [1, 2, 4, 8] {
            let g: Vec<Edge> = grid_edges(k).collect();
            assert!(g.windows(2).all(|w| w[0] < w[1]), "k={k}");
            assert_eq!(*g.last().unwrap(), Edge::from(u64::MAX));
            for &e in &g {
                let e = e as u64;
                assert_eq!(sketch_edge(e), e, "k={k} e={e}");
            }
        }
        let one: Vec<Edge> = grid_edges(1).take(6).collect();
        assert_eq!(one, [0, 1, 3, 7, 15, 31]);
        let four: Vec<Edge> = grid_edges(4).take(12).collect();
        assert_eq!(four, [0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 15]);
    }

    #[test]
    fn default_family_is_a_few_dozen() {
        let e = edges(&Config::default(), Grid::Sketch);
        assert_eq!(e.len(), 36);
        assert_eq!((e[0], e[35]), (1, (1 << 36) - 1));
        let e = edges(&Config::default(), Grid::Log2);
        assert_eq!(e.len(), 37);
        assert_eq!((e[0], e[36]), (1, 1 << 36));
        let e = edges(&Config::default(), Grid::Linear(1000));
        assert_eq!(e.len(), 64);
        assert_eq!((e[0], e[1]), (999, 1999));
    }

    #[test]
    fn min_max_and_lists_round_up_to_edges() {
        let c = Config {
            per_power: 2,
            min: 100,
            max: 1000,
            ..Config::default()
        };
        // 2^6: 95, 127; 2^7: 191, 255; 2^8: 383, 511; 2^9: 767, 1023.
        assert_eq!(
            edges(&c, Grid::Sketch),
            [127, 191, 255, 383, 511, 767, 1023]
        );
        assert_eq!(edges(&c, Grid::Log2), [128, 256, 512, 1024]);
        assert_eq!(edges(&c, Grid::Linear(300)), [299, 599, 899, 1199]);
        let c = Config {
            edges: Some(vec![1000, 5, 129, 1001, u64::MAX]),
            ..Config::default()
        };
        // 1000 and 1001 share the sketch bucket [992, 1007].
        assert_eq!(
            edges(&c, Grid::Sketch),
            [5, 129, 1007, Edge::from(u64::MAX)]
        );
        assert_eq!(edges(&c, Grid::Log2), [8, 256, 1024, 1 << 64]);
        let c = Config {
            max_buckets: 3,
            ..Config::default()
        };
        assert_eq!(edges(&c, Grid::Sketch), [1, 3, 7]);
    }

    #[test]
    fn cumulative_counts_are_exact_at_every_resolution() {
        // A distribution over the sketch's buckets, from a fixed
        // generator: the count at each edge must equal a direct count of
        // the values at or below it, and +Inf the total.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut values = Vec::new();
        for _ in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x >> (x % 64));
        }
        let mut counts: Vec<(Edge, u64)> = Vec::new();
        for &v in &values {
            let hi = Edge::from(sketch_edge(v));
            match counts.iter_mut().find(|c| c.0 == hi) {
                Some(c) => c.1 += 1,
                None => counts.push((hi, 1)),
            }
        }
        for k in [1, 2, 4, 8] {
            let c = Config {
                per_power: k,
                min: 0,
                max: u64::MAX,
                max_buckets: 1000,
                edges: None,
            };
            let e = edges(&c, Grid::Sketch);
            let cum = cumulative(&e, &counts);
            for (edge, n) in e.iter().zip(&cum) {
                let direct = values.iter().filter(|&&v| Edge::from(v) <= *edge).count();
                assert_eq!(*n as usize, direct, "k={k} le={edge}");
            }
            assert_eq!(*cum.last().unwrap() as usize, values.len());
            // Coarser resolutions lose no bucket: each edge of k is one
            // of 2k, with the same count.
            if k < 8 {
                let c2 = Config {
                    per_power: k * 2,
                    ..c.clone()
                };
                let e2 = edges(&c2, Grid::Sketch);
                let cum2 = cumulative(&e2, &counts);
                for (edge, n) in e.iter().zip(&cum) {
                    let at = e2.iter().position(|x| x == edge).expect("a finer edge");
                    assert_eq!(cum2[at], *n);
                }
            }
        }
    }

    #[test]
    fn key_ranges_end_where_hist_prints() {
        // `~ 2^3` holds 5 to 8; `~ 2^0` 0 and 1.
        assert_eq!(key_high(Grid::Log2, 3), 8);
        assert_eq!(key_high(Grid::Log2, 0), 1);
        assert_eq!(key_high(Grid::Log2, 64), 1 << 64);
        // `~ 2000-2999` of .buckets=1000.
        assert_eq!(key_high(Grid::Linear(1000), 2000), 2999);
    }

    #[test]
    fn bad_options() {
        let bad = |c: Config| assert!(c.validate().is_err(), "{c:?}");
        bad(Config {
            per_power: 3,
            ..Config::default()
        });
        bad(Config {
            min: 10,
            max: 9,
            ..Config::default()
        });
        bad(Config {
            edges: Some(vec![]),
            ..Config::default()
        });
        assert!(Config::default().validate().is_ok());
    }
}
