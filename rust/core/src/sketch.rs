// SPDX-License-Identifier: GPL-2.0

//! A streaming quantile sketch per histogram entry: the data structure
//! behind `vals=lat.quantiles` (issue 29; not `.percentiles`, which hist
//! takes as `.percent`), which prints
//! `lat.p50: N  lat.p90: N  lat.p99: N  lat.p999: N` per entry
//! ([`super::stats`], [`super::histogram::Histogram::with_sketches`]).
//!
//! # What it does
//!
//! A sketch counts the values recorded into it in *log-linear buckets*
//! (as HdrHistogram does): each power of two is cut into 64 buckets of
//! equal width, and the values below 128 have a bucket each. A value's
//! bucket is a few shifts away ([`bucket_of`]), and every value in a
//! bucket is within 1/128 (0.79%) of the bucket's midpoint, which is what
//! a quantile returns: any quantile of any data, from 0 to `u64::MAX`,
//! comes out within 1% of the exact one (see *The error bound*).
//!
//! The 64 counters of one power of two are a *page* (512 bytes). A sketch
//! has no counters of its own, only a 512-byte *index* with a slot (a
//! word) for each of the 59 powers of two: a page, or none yet. Pages come
//! from a *pool* that all the sketches of a map share ([`SketchPool`]),
//! made with the map and never grown: the first value a sketch gets in a
//! power of two claims the next free page with one atomic increment and
//! installs it in the index with a compare-and-swap. A sketch then uses
//! memory in proportion to the spread of its values, not to the range
//! of `u64`: a latency between 10 µs and 10 ms takes 11 pages.
//!
//! Recording a value is lock-free and wait-free (a bounded number of
//! atomic instructions, no waiting on anyone), allocates nothing and
//! is safe in NMI context: one load of the index and one atomic add once
//! the page is there ([`Sketch::record`]). When the pool has no page left,
//! the value is counted as *unplaced* in its sketch; the quantiles it may
//! hide are then reported as a range, never as a wrong number (see *When
//! the pool runs dry*).
//!
//! Reading ([`Sketch::percentiles`], [`Sketch::quantile`]) walks the
//! counts; several sketches read as one ([`Union`], the per-trigger
//! summary over all entries) or add into another ([`Sketch::merge_into`]).
//! Reading allocates nothing and takes about 1 KiB of stack (the group
//! totals and one group's counts).
//!
//! # The buckets
//!
//! For a value `v`, let `s = max(0, floor(log2 v) - 6)` (0 for `v < 128`).
//! Its bucket is `b = 64 s + (v >> s)`:
//!
//! * `v < 128` (`s = 0`): `b = v`, one bucket per value: 0 is exact, and
//!   so is every value below 128.
//! * `v >= 128`: `v >> s` is `v`'s top 7 bits, between 64 and 127, so `b`
//!   is in `[64 (s + 1), 64 (s + 2))`, and the bucket holds the `2^s`
//!   values `[m 2^s, (m + 1) 2^s)` with `m = v >> s`.
//!
//! Buckets are in the order of their values; bucket `b` belongs to
//! *group* `g = b / 64`: group 0 holds 0..=63, group 1 64..=127, group
//! `g >= 1` the power of two `[2^(g+5), 2^(g+6))`. The largest `s` is 57
//! (`v >= 2^63`), so there are 59 groups and 3,776 buckets, and every
//! `u64` has one: values from 2^63 to `u64::MAX` are bucketed like any
//! other and keep the bound below. (A signed field's negative values are
//! `u64`s above 2^63 here; the hist code decides what to feed.)
//!
//! # The error bound
//!
//! A quantile returns the *representative* of a bucket: its lowest value
//! plus half its width, `rep = m 2^s + 2^(s-1)` (`rep = v` when `s = 0`);
//! [`bucket_value`]. For any `v` in the bucket:
//!
//! * if `s = 0`, `rep = v`;
//! * else `|rep - v| <= 2^(s-1)` (the bucket's values are `m 2^s` to
//!   `m 2^s + 2^s - 1`) and `v >= m 2^s >= 64 * 2^s`, so
//!   `|rep - v| <= 2^(s-1) / (64 * 2^s) * v = v / 128`.
//!
//! So `|rep - v| <= v / 128` (0.78125%) for every `u64` `v`, 0 included.
//!
//! A quantile is defined by *nearest rank*: of `n` values sorted
//! `x_1 <= ... <= x_n`, the `q`-quantile is `x_k`, `k = max(1, ceil(q n))`
//! ([`nearest_rank`]; `q` is given in parts per million, so that p99.9 is
//! `999_000` and the kernel needs no floating point). The counts are
//! exact and the buckets ordered, so the bucket where the running count
//! first reaches `k` is `x_k`'s bucket, and the sketch returns its
//! representative `r` with `|r - x_k| <= x_k / 128`: within 1% of the
//! exact quantile, whatever the distribution. The unit tests check the
//! inequality on both ends of every one of the 3,776 buckets; the
//! property tests check the quantiles of random data against sorting.
//!
//! 64 buckets per power of two is the fewest that gives 1% with a power
//! of two: 32 would give `1/64 = 1.6%`. DDSketch's purely logarithmic
//! buckets (ratio 1.02) need 35 per power of two for 1%, 45% fewer, but
//! take a logarithm per value; a 128-entry table merging 128 linear
//! sub-buckets into 42 would come close to that for one more load per
//! value, and is left for when memory matters more than the simpler
//! proof.
//!
//! # Memory
//!
//! A sketch is 64 words (512 bytes, eight cache lines): 59 index words,
//! the slots (slot `g` holds `64 (p + 1)` for page `p` of group `g`, the
//! index of its first counter in the pages plus 64, 0 for none), then the
//! count of unplaced values, and 4 unused. A slot is a word of its own,
//! not a quarter of one (as it was, in 128 bytes), so that recording
//! loads it as it is: no shift and mask on the event path, for 384 bytes
//! more per sketch. A page is 64 `u64` counters, 512 bytes, eight cache
//! lines. A pool of `n_sketches` sketches and `n_pages` pages
//! ([`PoolParams`]) takes
//!
//! `64 + 512 n_sketches + 512 n_pages` bytes (plus up to 63 to align),
//!
//! with `n_pages` at most 65,534. By default a map gets 4 pages per
//! sketch ([`PoolParams::for_map`]): `n_pages = min(4 n_sketches,
//! 65,534)`. For the default `size=2048` with one `.quantiles` value
//! that is `64 + 1,048,576 + 4,194,304` bytes, 5 MiB, against 59 MiB for
//! a flat array of the 3,776 buckets per entry (30,208 bytes each).
//!
//! What a sketch uses: one page per power of two its values touch. A
//! latency in ns between 10 µs (`[2^13, 2^14)`, group 8) and 10 ms
//! (`[2^23, 2^24)`, group 18) touches 11: 5,632 bytes of pages, 6,144
//! with its index, a fifth of the flat array. One between 50 µs and
//! 400 µs touches 4 (2 KiB); a constant, one. The default pool holds the
//! 2,048 entries at 4 pages each on average: 744 entries spanning the
//! full three decades, or all of them spanning four powers of two (a
//! factor of 8 to 16). Only pages given out are ever written, so the
//! untouched part of the pool costs no cache.
//!
//! # When the pool runs dry
//!
//! A value whose group has no page yet, when the pool has none left,
//! goes nowhere: its sketch counts it in `unplaced`, and the pool's
//! [`PoolStats`] add those up for the trigger's totals. Counts stay exact
//! (`count()` is placed + unplaced), and a quantile says what it knows.
//! With `d` values unplaced among `n`, and `P_1 <= ... <= P_(n-d)` the
//! placed ones, the true `x_k` lies between `P_(k-d)` and `P_k` (at most
//! `d` of the `k` smallest values are missing from the placed ones, and
//! `P_k` has `k` values at or below it). When both are in one bucket,
//! `x_k` is in it too and the quantile is [`Quantile::Value`], still
//! within 1%; otherwise it is [`Quantile::Within`] the two buckets'
//! bounds (0 below `P_1`, `u64::MAX` above `P_(n-d)`). The pool never
//! puts a value in a wrong bucket.
//!
//! A sketch's pages are not taken back until the pool is cleared (with
//! its map: [`SketchPool::clear`]), so a pool that ran dry stays dry.
//!
//! # Recording: the protocol
//!
//! [`Sketch::record`]: compute the bucket, load the slot of its group,
//! and if it holds a page, add 1 to the bucket's counter in it: one load
//! and one atomic add. Otherwise (out of line, once per
//! group and sketch):
//!
//! 1. If the pool's `next` page is past the end, the pool is dry: use
//!    the slot's page if someone installed one meanwhile, else count the
//!    value as unplaced.
//! 2. Take page `p = next.fetch_add(1)` (past the end: as in 1).
//! 3. Install `p` in the slot with a compare-and-swap from empty. If it
//!    fails, the slot now holds a page: someone (another CPU, or an NMI
//!    that interrupted this update) installed one first: give `p` back
//!    if it is still the last page handed out (`next` compare-and-swapped
//!    from `p + 1` back to `p`), else count it lost
//!    ([`PoolStats::pages_lost`]), and use theirs.
//! 4. Add to the counter in whichever page the slot holds.
//!
//! A slot changes once between clears (0 to a page), and is a word of
//! its own, so the compare-and-swap fails at most once, and is not
//! retried: every update takes a bounded number of steps, and none waits
//! for another. Of the claimers that race for one
//! slot, all but the winner lose a page unless it was the last handed
//! out: at most one per context that can update at once (CPUs times the
//! four levels an event path nests to), per slot, and only in such a
//! race; the pool counts them. An update interrupted at any point
//! by another (an NMI on this CPU) finds either an empty slot, and
//! claims as above, or a page, and adds to it; either way the
//! interrupted one goes on from where it was, with one atomic
//! instruction per step, and both values are counted once, in their
//! buckets. A page is installed before anything is written to it, and
//! pages are zero from the pool's creation or clearing, which the caller
//! orders before any update (as for the map): nothing is published
//! through the index, so every access is `Relaxed`. The adds are atomic
//! read-modify-writes, so once all updates are done each counter is
//! exactly the number of its values, in any order.
//!
//! # Reading while updates race
//!
//! Counters only grow between clears. A read first *collects* each
//! group's total, then walks the groups and buckets of the ranks it
//! needs, then collects again: when the two collections agree, no
//! counter changed between them (each one grows, and their sums per group
//! did not), so the walk saw exactly the counts of the moment between
//! the collections: a snapshot, read without stopping anybody. It tries
//! that [`READ_TRIES`] times. If updates to the sketch kept coming during
//! all of them, it answers from the last: every count read is one the
//! counter held during the read, so the answer is the quantile (within
//! 1%) of a set of values containing all those recorded before the read
//! began and only values recorded before it ended, at a rank off by at
//! most the number of values recorded during the read. That is what
//! "consistent enough" means here: never a value that was not recorded,
//! never one counted twice, and exact when nothing raced.
//!
//! # Hosting sketches in a map
//!
//! The map's element index is the sketch's slot: [`MapSketches`] keeps
//! one pool for a map, `n_values` sketches per element, so that the
//! event path, which has the element's index from
//! `TracingMap::event_insert_words()`, records with
//! `sketches.record(idx, j, v)`; printing reads `sketches.sketch(idx,
//! j)` per entry and [`MapSketches::union`] over all of them for the
//! totals; clearing the map clears the pool. Nothing in the map changes.
//! The shell allocates the pool's bytes in the map's `vmalloc()`, after
//! the map's ([`PoolParams::uninit_bytes`], [`SketchPool::new_uninit`],
//! which views them as atomics as the map does, through
//! `map::zeroed_words()`), and frees them with it.
//!
//! # What it costs
//!
//! `examples/sketch_cost.rs` counts instructions per update with
//! callgrind as `tools/testing/bench/stages.sh` does (`(Ir(2N) -
//! Ir(N)) / N`, less its loop's), for values of 10 µs to 10 ms into 64
//! entries, on x86-64:
//!
//! * a plain sum, `AtomicU64::fetch_add` to the entry's word: 5 (bounds
//!   check, address, the locked add);
//! * [`Sketch::record`], the entry's `Sketch` at hand: 25, of which 8
//!   take the handle; the record itself is some 17: 8 for the bucket,
//!   the load of its slot, the counter's address, the bounds check that
//!   also tells an empty slot, and the locked add;
//! * [`MapSketches::record`], from the element's index: 30.
//!
//! A compiled trigger whose last value is a `.quantiles` one records it
//! from where the element's sums are, with the histogram's constants
//! ([`SketchPool::record_at`]): in the kernel's instruction counts
//! (`make bench`), `keys=a:vals=b.quantiles` costs 57 instructions per
//! event more than `keys=a`, under twice a plain sum's 29.
//!
//! The rest of an event's path in a compiled trigger is some 140
//! instructions (`stages.sh`): a `.quantiles` value adds about a
//! fifth to it, a sum some 3%. In time, the locked add weighs most in
//! both (some 20 cycles of latency; the sketch's arithmetic before it
//! touches no memory but the index word): on the host (a loaded two-core
//! AMD EPYC VM) an update took 1.7 to 1.9 times a plain sum's time. The
//! sketch touches two lines where a sum touches one: its group's slot's
//! and the counter's. Its
//! lines are shared by the CPUs that update the entry, as shared sums
//! are: per-CPU copies would multiply its memory by the CPUs.

use self::sync::{AtomicU64, Ordering};

#[cfg(not(all(loom, test)))]
mod sync {
    pub(super) use core::sync::atomic::{AtomicU64, Ordering};
}

// The loom model test compiles this file into itself (`cfg(test)` there)
// with `--cfg loom`, so that the real protocol runs on loom's atomics.
#[cfg(all(loom, test))]
mod sync {
    pub(super) use loom::sync::atomic::{AtomicU64, Ordering};
}

/// Bits of a value below its leading one that pick its bucket.
const SUB_BITS: u32 = 6;
/// Buckets per group, and counters per page.
pub const SUB: usize = 1 << SUB_BITS;
/// Groups of buckets: 0..64, 64..128, then one per power of two from
/// 2^7 to 2^63.
pub const GROUPS: usize = 65 - SUB_BITS as usize;
/// Buckets of all `u64` values.
pub const BUCKETS: usize = GROUPS * SUB;
/// Words of a page: one counter per bucket of a group.
pub const PAGE_WORDS: usize = SUB;
/// Index words of a sketch: one slot per group.
const INDEX_WORDS: usize = GROUPS;
/// The word of a sketch that counts its unplaced values.
const UNPLACED: usize = INDEX_WORDS;
/// Words of a sketch: its index and its unplaced count (and 4 unused),
/// eight cache lines.
pub const SKETCH_WORDS: usize = 64;
/// Most pages a pool has.
pub const PAGES_MAX: usize = (1 << 16) - 2;
/// Most sketches a pool has.
pub const SKETCHES_MAX: usize = 1 << 22;
/// Pages per sketch that [`PoolParams::for_map`] gives a map's pool.
pub const PAGES_PER_SKETCH: usize = 4;
/// Parts per million: `q` of [`Sketch::quantile`] for the maximum.
pub const PPM: u32 = 1_000_000;
/// The quantiles a `.quantiles` value prints, in parts per million.
pub const PERCENTILES: [u32; 4] = [500_000, 900_000, 990_000, 999_000];
/// What [`PERCENTILES`] print as: `lat.p50` and so on.
pub const PERCENTILE_NAMES: [&str; 4] = ["p50", "p90", "p99", "p999"];
/// How many times a read tries to see the counts unchanged between two
/// collections (see *Reading while updates race*).
pub const READ_TRIES: usize = 4;

/// Words in a cache line.
const LINE_WORDS: usize = 8;
/// Words of the pool's header: a line of its own.
const POOL_HEADER_WORDS: usize = LINE_WORDS;
/// The next page to hand out (may run past the end).
const NEXT: usize = 0;
/// Pages claimed, lost to a race and not given back.
const LOST: usize = 1;

const _: () = assert!(INDEX_WORDS < SKETCH_WORDS);
const _: () = assert!(GROUPS * 64 == BUCKETS && BUCKETS == 3776);

/// The bucket of `v`: `64 s + (v >> s)`, `s = max(0, floor(log2 v) - 6)`
/// (see the module doc). Below [`BUCKETS`], increasing with `v`.
#[inline(always)]
pub const fn bucket_of(v: u64) -> usize {
    // `v | 64` has its leading one at bit 6 or above: at most 57 zeros.
    let s = (63 - SUB_BITS) - (v | SUB as u64).leading_zeros();
    // No overflow (nor an overflow check, in the kernel): s <= 57 and
    // v >> s < 128.
    ((s as usize) << SUB_BITS).wrapping_add(v.wrapping_shr(s) as usize)
}

/// The `s` of bucket `b`'s group: its width is `2^s`.
const fn shift_of(b: usize) -> u32 {
    let g = b >> SUB_BITS;
    if g == 0 {
        0
    } else {
        g as u32 - 1
    }
}

/// The lowest value of bucket `b` (below [`BUCKETS`]).
pub const fn bucket_low(b: usize) -> u64 {
    let s = shift_of(b);
    // Bucket b = 64 s + m holds the values with top bits m.
    ((b - ((s as usize) << SUB_BITS)) as u64) << s
}

/// The highest value of bucket `b` (below [`BUCKETS`]).
pub const fn bucket_high(b: usize) -> u64 {
    bucket_low(b) + ((1u64 << shift_of(b)) - 1)
}

/// The value a quantile in bucket `b` returns: its lowest value plus half
/// its width; within `v / 128` of every `v` in the bucket.
pub const fn bucket_value(b: usize) -> u64 {
    bucket_low(b) + ((1u64 << shift_of(b)) >> 1)
}

/// The nearest rank of the `q_ppm`-quantile among `n` values:
/// `max(1, ceil(q n))`, `q = q_ppm / 10^6` (at most 1); 0 when `n` is 0.
pub const fn nearest_rank(q_ppm: u32, n: u64) -> u64 {
    let q = if q_ppm < PPM {
        q_ppm as u64
    } else {
        PPM as u64
    };
    let d = PPM as u64;
    // ceil(q (a d + b) / d) = q a + ceil(q b / d), with no overflow:
    // q a <= n and q b < 10^12.
    let k = (n / d) * q + ((n % d) * q).div_ceil(d);
    if n == 0 {
        0
    } else if k == 0 {
        1
    } else {
        k
    }
}

/// Why a pool could not be set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SketchError {
    /// More than [`SKETCHES_MAX`] sketches.
    TooManySketches,
    /// More than [`PAGES_MAX`] pages.
    TooManyPages,
    /// The storage handed in is smaller than the parameters need.
    StorageTooSmall,
}

impl SketchError {
    /// The (positive) errno: `EINVAL`, or `ENOMEM` for missing storage.
    pub fn errno(self) -> i32 {
        match self {
            SketchError::StorageTooSmall => 12,
            _ => 22,
        }
    }
}

/// The shape of a pool: how many sketches, how many pages they share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolParams {
    /// Sketches (slots) in the pool.
    pub n_sketches: usize,
    /// Pages of 64 counters the sketches draw from.
    pub n_pages: usize,
}

impl PoolParams {
    /// A pool of `n_sketches` sketches sharing `n_pages` pages.
    pub const fn new(n_sketches: usize, n_pages: usize) -> Self {
        PoolParams {
            n_sketches,
            n_pages,
        }
    }

    /// The pool of a map of `max_elts` elements with `n_values` sketches
    /// each: [`PAGES_PER_SKETCH`] pages per sketch, at most [`PAGES_MAX`].
    pub const fn for_map(max_elts: usize, n_values: usize) -> Self {
        let n_sketches = max_elts.saturating_mul(n_values);
        let pages = n_sketches.saturating_mul(PAGES_PER_SKETCH);
        let n_pages = if pages < PAGES_MAX { pages } else { PAGES_MAX };
        PoolParams::new(n_sketches, n_pages)
    }

    fn check(&self) -> Result<(), SketchError> {
        if self.n_sketches > SKETCHES_MAX {
            return Err(SketchError::TooManySketches);
        }
        if self.n_pages > PAGES_MAX {
            return Err(SketchError::TooManyPages);
        }
        Ok(())
    }

    /// Words used, from the first cache line boundary.
    fn words(&self) -> usize {
        POOL_HEADER_WORDS + self.n_sketches * SKETCH_WORDS + self.n_pages * PAGE_WORDS
    }

    /// How many `AtomicU64` words [`SketchPool::new`] needs, including up
    /// to 7 it skips to start on a 64-byte boundary.
    pub fn storage_words(&self) -> Result<usize, SketchError> {
        self.check()?;
        Ok(self.words() + LINE_WORDS - 1)
    }

    /// The same in bytes.
    pub fn storage_bytes(&self) -> Result<usize, SketchError> {
        Ok(self.storage_words()? * 8)
    }

    /// How many bytes of raw memory [`SketchPool::new_uninit`] needs,
    /// including up to 63 it skips to start on a 64-byte boundary.
    pub fn uninit_bytes(&self) -> Result<usize, SketchError> {
        self.check()?;
        Ok(self.words() * 8 + LINE_WORDS * 8 - 1)
    }
}

/// What a pool has given out, for a trigger's totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Pages in the pool.
    pub pages: usize,
    /// Pages handed out (installed, or lost).
    pub pages_used: usize,
    /// Pages handed out but lost to a race for the same slot (and not
    /// given back): unused until the pool is cleared.
    pub pages_lost: u64,
    /// Values the sketches could not place, the pool being dry.
    pub unplaced: u64,
}

/// The sketches of a map and the pages they share: a cheap `Copy` handle
/// over the caller's storage, like the map's.
#[derive(Clone, Copy)]
pub struct SketchPool<'a> {
    header: &'a [AtomicU64; POOL_HEADER_WORDS],
    /// `n_sketches` sketches of [`SKETCH_WORDS`] words.
    sketches: &'a [AtomicU64],
    /// `n_pages` pages of [`PAGE_WORDS`] counters.
    pages: &'a [AtomicU64],
}

impl core::fmt::Debug for SketchPool<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SketchPool")
            .field("params", &self.params())
            .field("stats", &self.stats())
            .finish()
    }
}

impl<'a> SketchPool<'a> {
    /// Builds a pool over `storage`, which must hold at least
    /// [`PoolParams::storage_words`] words; the ones it uses are zeroed.
    ///
    /// On the host: `let s: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();`;
    /// in the module, a `VVec<AtomicU64>` filled the same way.
    pub fn new(params: PoolParams, storage: &'a [AtomicU64]) -> Result<Self, SketchError> {
        params.check()?;
        // Start on a cache line where a word is 8 bytes (not under loom).
        let skip = if core::mem::size_of::<AtomicU64>() == 8 {
            ((storage.as_ptr() as usize).wrapping_neg() % (LINE_WORDS * 8)) / 8
        } else {
            0
        };
        let s = storage
            .get(skip..skip + params.words())
            .ok_or(SketchError::StorageTooSmall)?;
        let (header, rest) = s
            .split_first_chunk::<POOL_HEADER_WORDS>()
            .ok_or(SketchError::StorageTooSmall)?;
        let (sketches, pages) = rest.split_at(params.n_sketches * SKETCH_WORDS);
        for w in s {
            w.store(0, Ordering::Relaxed);
        }
        Ok(SketchPool {
            header,
            sketches,
            pages,
        })
    }

    /// Builds a pool over raw memory, say from `vmalloc()`, which must
    /// hold at least [`PoolParams::uninit_bytes`] bytes; it is aligned and
    /// zeroed here. The pool borrows the memory for `'a`.
    #[cfg(not(all(loom, test)))]
    pub fn new_uninit(
        params: PoolParams,
        storage: &'a mut [core::mem::MaybeUninit<u8>],
    ) -> Result<Self, SketchError> {
        params.check()?;
        let words = super::map::zeroed_words(storage, params.words())
            .ok_or(SketchError::StorageTooSmall)?;
        Self::new(params, words)
    }

    /// The parameters the pool was built with.
    pub fn params(&self) -> PoolParams {
        PoolParams::new(
            self.sketches.len() / SKETCH_WORDS,
            self.pages.len() / PAGE_WORDS,
        )
    }

    /// A pool of no sketches and no pages, that records nothing.
    #[cfg(not(all(loom, test)))]
    pub fn empty() -> SketchPool<'static> {
        static HEADER: [AtomicU64; POOL_HEADER_WORDS] =
            [const { AtomicU64::new(0) }; POOL_HEADER_WORDS];
        SketchPool {
            header: &HEADER,
            sketches: &[],
            pages: &[],
        }
    }

    /// Sketch `slot`; `None` past `n_sketches`.
    #[inline(always)]
    pub fn sketch(&self, slot: usize) -> Option<Sketch<'a>> {
        // One bounds check: `slot` past `n_sketches` wraps or lands past
        // the sketches either way.
        let first = slot.wrapping_mul(SKETCH_WORDS);
        let words: &'a [AtomicU64] = self.sketches;
        let index = words.get(first..first.wrapping_add(SKETCH_WORDS))?;
        Some(Sketch {
            index: index.try_into().ok()?,
            header: self.header,
            pages: self.pages,
        })
    }

    /// Records `v` in the sketch whose first word is `first`, that is
    /// `slot * SKETCH_WORDS` (nothing past the sketches): the event
    /// path, given the sketch's place. [`Sketch::record`] with one bounds
    /// check for the sketch and its slot; the page's claim, out of line,
    /// finds the rest.
    #[inline(always)]
    pub fn record_at(&self, first: usize, v: u64) {
        let b = bucket_of(v);
        // The group is below SKETCH_WORDS: for a `first` of a sketch, its
        // slot.
        let Some(slot) = self.sketches.get(first.wrapping_add(b >> SUB_BITS)) else {
            return;
        };
        // As in `Sketch::record()`.
        let at = slot_counter(slot.load(Ordering::Relaxed), b);
        match self.pages.get(at) {
            Some(c) => {
                c.fetch_add(1, Ordering::Relaxed);
            }
            None => self.record_slow_at(first, b),
        }
    }

    /// [`record_at`](Self::record_at) when the slot has no page.
    #[cold]
    #[inline(never)]
    fn record_slow_at(&self, first: usize, b: usize) {
        if let Some(s) = self.sketch(first / SKETCH_WORDS) {
            record_slow(s.index, s.header, s.pages, b, 1);
        }
    }

    /// Pages handed out, installed or lost.
    fn pages_used(&self) -> usize {
        let next = self.header[NEXT].load(Ordering::Relaxed);
        next.min(self.params().n_pages as u64) as usize
    }

    /// What the pool has given out. Reads every sketch's unplaced count.
    pub fn stats(&self) -> PoolStats {
        let unplaced = self.sketches.chunks_exact(SKETCH_WORDS).fold(0u64, |n, s| {
            n.wrapping_add(s[UNPLACED].load(Ordering::Relaxed))
        });
        PoolStats {
            pages: self.params().n_pages,
            pages_used: self.pages_used(),
            pages_lost: self.header[LOST].load(Ordering::Relaxed),
            unplaced,
        }
    }

    /// Empties every sketch and gives every page back, as
    /// `TracingMap::clear()` does for the map: the caller makes sure no
    /// update runs meanwhile and that the clearing happens before later
    /// updates. If not, counts come out wrong, but nothing worse happens.
    pub fn clear(&self) {
        for w in self.sketches {
            w.store(0, Ordering::Relaxed);
        }
        // Only the pages handed out were written to (a lost one never).
        let used = self.pages_used() * PAGE_WORDS;
        for w in self.pages.get(..used).unwrap_or(self.pages) {
            w.store(0, Ordering::Relaxed);
        }
        for w in self.header {
            w.store(0, Ordering::Relaxed);
        }
    }

    /// [`take_page`] of this pool.
    #[cfg(test)]
    fn take_page(&self) -> Option<usize> {
        take_page(self.header, self.pages)
    }

    /// [`give_back`] to this pool.
    #[cfg(test)]
    fn give_back(&self, p: usize) {
        give_back(self.header, p)
    }
}

/// Step 1 and 2 of the protocol: a page of its own for the caller, from
/// the pool of `header` and `pages`; `None` when the pool is dry.
fn take_page(header: &[AtomicU64; POOL_HEADER_WORDS], pages: &[AtomicU64]) -> Option<usize> {
    let next = &header[NEXT];
    let n = (pages.len() / PAGE_WORDS) as u64;
    // Check first: a dry pool's line is then only read, by every update
    // that finds no page.
    if next.load(Ordering::Relaxed) >= n {
        return None;
    }
    // Relaxed: each page is handed out once; nothing is published.
    let p = next.fetch_add(1, Ordering::Relaxed);
    (p < n).then_some(p as usize)
}

/// Step 3's loser: gives page `p` back to the pool of `header` if it is
/// still the last one handed out, else counts it lost.
fn give_back(header: &[AtomicU64; POOL_HEADER_WORDS], p: usize) {
    // The pages from `next` on are nobody's: whoever took one after `p`
    // moved `next` past `p + 1`, and only a give-back brings it back, by
    // one, of a page its taker never wrote to. So when `next` is `p + 1`,
    // no page after `p` is in use, and `p` is ours: handing it out again
    // is safe.
    let next = &header[NEXT];
    let p = p as u64;
    if next
        .compare_exchange(p + 1, p, Ordering::Relaxed, Ordering::Relaxed)
        .is_err()
    {
        header[LOST].fetch_add(1, Ordering::Relaxed);
    }
}

/// One sketch: its index, over its pool's pages. A `Copy` view, valid as
/// long as the pool's storage is.
#[derive(Clone, Copy)]
pub struct Sketch<'a> {
    /// The index words and the unplaced count.
    index: &'a [AtomicU64; SKETCH_WORDS],
    /// The pool's header and pages (three words, not a whole
    /// [`SketchPool`], to keep the event path's registers free).
    header: &'a [AtomicU64; POOL_HEADER_WORDS],
    pages: &'a [AtomicU64],
}

impl core::fmt::Debug for Sketch<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sketch")
            .field("count", &self.count())
            .field("unplaced", &self.unplaced())
            .finish()
    }
}

/// What the slot of a group holds for page `p`: its first counter's
/// index in the pages, plus [`PAGE_WORDS`] (0 is an empty slot).
fn slot_of_page(p: usize) -> u64 {
    ((p as u64) + 1) * PAGE_WORDS as u64
}

/// The page in a slot, `None` for an empty slot.
#[inline(always)]
fn slot_page(slot: u64) -> Option<usize> {
    ((slot / PAGE_WORDS as u64) as usize).checked_sub(1)
}

/// The index in the pages of bucket `b`'s counter, for the slot of its
/// group: far past the pages for an empty slot (0 wraps), so that the
/// bounds check of the counter also tells whether the slot has a page.
#[inline(always)]
fn slot_counter(slot: u64, b: usize) -> usize {
    (slot as usize)
        .wrapping_add(b % SUB)
        .wrapping_sub(PAGE_WORDS)
}

impl<'a> Sketch<'a> {
    /// Records `v`: lock-free, wait-free, allocation-free, NMI-safe (see
    /// *Recording: the protocol*).
    #[inline(always)]
    pub fn record(&self, v: u64) {
        let b = bucket_of(v);
        // The group is at most 58: the mask only spares a bounds check.
        let slot = self.index[(b >> SUB_BITS) % SKETCH_WORDS].load(Ordering::Relaxed);
        // An empty slot wraps to far past the pages, so the one bounds
        // check below also tells whether the slot has a page.
        let at = slot_counter(slot, b);
        match self.pages.get(at) {
            Some(c) => {
                c.fetch_add(1, Ordering::Relaxed);
            }
            None => record_slow(self.index, self.header, self.pages, b, 1),
        }
    }

    /// Records `n` values `v` at once (what a merge adds); nothing for 0.
    #[cfg(not(MODULE))]
    pub fn record_n(&self, v: u64, n: u64) {
        if n == 0 {
            return;
        }
        let b = bucket_of(v);
        match self.page(b >> SUB_BITS) {
            Some(p) => add(self.pages, p, b, n),
            None => record_slow(self.index, self.header, self.pages, b, n),
        }
    }

    /// The page of group `g`, if it has one.
    #[inline(always)]
    fn page(&self, g: usize) -> Option<usize> {
        let slot = self.index.get(g)?.load(Ordering::Relaxed);
        slot_page(slot).filter(|&p| p < self.pages.len() / PAGE_WORDS)
    }

    /// Values recorded and not placed, the pool being dry.
    pub fn unplaced(&self) -> u64 {
        self.index[UNPLACED].load(Ordering::Relaxed)
    }

    /// Values recorded, placed or not (a read racing updates may miss
    /// some of theirs).
    pub fn count(&self) -> u64 {
        (0..GROUPS).fold(self.unplaced(), |n, g| n.wrapping_add(self.group_total(g)))
    }

    /// The number of pages the sketch holds.
    #[cfg(not(MODULE))]
    pub fn pages(&self) -> usize {
        (0..GROUPS).filter(|&g| self.page(g).is_some()).count()
    }

    /// The counters of group `g`'s page, if it has one.
    fn counters(&self, g: usize) -> Option<&'a [AtomicU64]> {
        let p = self.page(g)?;
        let pages: &'a [AtomicU64] = self.pages;
        pages.get(p * PAGE_WORDS..(p + 1) * PAGE_WORDS)
    }

    /// The count of bucket `b` (0 past the buckets).
    #[cfg(not(MODULE))]
    pub fn bucket_count(&self, b: usize) -> u64 {
        self.counters(b >> SUB_BITS)
            .and_then(|c| c.get(b % SUB))
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// The `q_ppm`-quantile (parts per million) by nearest rank: see
    /// [`quantiles`].
    pub fn quantile(&self, q_ppm: u32) -> Quantile {
        let mut out = [Quantile::Empty];
        quantiles(self, &[q_ppm], &mut out);
        out[0]
    }

    /// p50, p90, p99 and p999, and the count they are of.
    pub fn percentiles(&self) -> Percentiles {
        percentiles(self)
    }

    /// Adds every count of this sketch to `dst` (which may be in another
    /// pool): `dst` then counts what it counted and what this one did.
    /// Values `dst`'s pool has no page for are unplaced there. Racing
    /// updates of this sketch may or may not be carried over.
    #[cfg(not(MODULE))]
    pub fn merge_into(&self, dst: &Sketch<'_>) {
        for g in 0..GROUPS {
            let Some(counters) = self.counters(g) else {
                continue;
            };
            for (i, c) in counters.iter().enumerate() {
                let b = (g << SUB_BITS) + i;
                dst.record_n(bucket_low(b), c.load(Ordering::Relaxed));
            }
        }
        let unplaced = self.unplaced();
        if unplaced != 0 {
            dst.index[UNPLACED].fetch_add(unplaced, Ordering::Relaxed);
        }
    }
}

/// Adds `n` to bucket `b`'s counter in page `p` of `pages`.
#[inline(always)]
fn add(pages: &[AtomicU64], p: usize, b: usize, n: u64) {
    if let Some(c) = pages.get(p * PAGE_WORDS + b % SUB) {
        c.fetch_add(n, Ordering::Relaxed);
    }
}

/// [`Sketch::record`] of `n` values in bucket `b` when the sketch of
/// `index` has no page for its group: claims one from the pool of
/// `header` and `pages` (steps 1 to 4 of the protocol), or counts the
/// values as unplaced. Out of line, and given the sketch's parts rather
/// than the sketch, so that the event path keeps them in registers.
#[cold]
#[inline(never)]
fn record_slow(
    index: &[AtomicU64; SKETCH_WORDS],
    header: &[AtomicU64; POOL_HEADER_WORDS],
    pages: &[AtomicU64],
    b: usize,
    n: u64,
) {
    match claim(index, header, pages, b >> SUB_BITS) {
        Some(p) => add(pages, p, b, n),
        None => {
            index[UNPLACED].fetch_add(n, Ordering::Relaxed);
        }
    }
}

/// The page of group `g` of the sketch of `index`, claimed from the pool
/// if it has none; `None` when it has none and the pool is dry.
fn claim(
    index: &[AtomicU64; SKETCH_WORDS],
    header: &[AtomicU64; POOL_HEADER_WORDS],
    pages: &[AtomicU64],
    g: usize,
) -> Option<usize> {
    let slot = index.get(g)?;
    let cur = slot.load(Ordering::Relaxed);
    if let Some(p) = slot_page(cur) {
        return Some(p);
    }
    let Some(mine) = take_page(header, pages) else {
        // Dry; but someone may have installed a page meanwhile.
        return slot_page(slot.load(Ordering::Relaxed));
    };
    // Relaxed: the page is zero since the pool was made or cleared, which
    // the caller ordered before this update; nothing is published here.
    match slot.compare_exchange(
        cur,
        slot_of_page(mine),
        Ordering::Relaxed,
        Ordering::Relaxed,
    ) {
        Ok(_) => Some(mine),
        // The slot changes once, from empty: someone installed theirs.
        Err(now) => {
            give_back(header, mine);
            slot_page(now)
        }
    }
}

/// Calls `f(low, high, count)` for each bucket of `src` that counts
/// something, in the order of their values: the bucket holds the values
/// `low` to `high`, both included, and the buckets of one sketch never
/// overlap (a reader merges neighbours for a coarser resolution). Stops
/// at `f`'s first error. A read racing with updates sees each group's
/// counts at one moment, as [`Counts::add_group`] reads them.
pub fn try_for_each_bucket<E>(
    src: &impl Counts,
    mut f: impl FnMut(u64, u64, u64) -> Result<(), E>,
) -> Result<(), E> {
    for g in 0..GROUPS {
        if src.group_total(g) == 0 {
            continue;
        }
        let mut counts = [0u64; SUB];
        src.add_group(g, &mut counts);
        for (i, &n) in counts.iter().enumerate() {
            if n != 0 {
                let b = g * SUB + i;
                f(bucket_low(b), bucket_high(b), n)?;
            }
        }
    }
    Ok(())
}

/// Counts a quantile can be read from: one sketch, or several as one.
pub trait Counts {
    /// The total of group `g`'s buckets.
    fn group_total(&self, g: usize) -> u64;
    /// Adds the counts of group `g`'s buckets to `out`.
    fn add_group(&self, g: usize, out: &mut [u64; SUB]);
    /// Values not placed in any bucket.
    fn unplaced(&self) -> u64;
}

impl Counts for Sketch<'_> {
    fn group_total(&self, g: usize) -> u64 {
        self.counters(g).map_or(0, |c| {
            c.iter()
                .fold(0u64, |n, c| n.wrapping_add(c.load(Ordering::Relaxed)))
        })
    }

    fn add_group(&self, g: usize, out: &mut [u64; SUB]) {
        if let Some(c) = self.counters(g) {
            for (o, c) in out.iter_mut().zip(c) {
                *o = o.wrapping_add(c.load(Ordering::Relaxed));
            }
        }
    }

    fn unplaced(&self) -> u64 {
        Sketch::unplaced(self)
    }
}

/// Several sketches read as one, the sketch of all their values: the
/// per-trigger summary over all entries. `I` yields the sketches, again
/// for each pass of a read (a few per quantile); nothing is copied.
#[derive(Clone, Debug)]
pub struct Union<I>(pub I);

impl<'a, I: Iterator<Item = Sketch<'a>> + Clone> Counts for Union<I> {
    fn group_total(&self, g: usize) -> u64 {
        self.0
            .clone()
            .fold(0u64, |n, s| n.wrapping_add(s.group_total(g)))
    }

    fn add_group(&self, g: usize, out: &mut [u64; SUB]) {
        for s in self.0.clone() {
            s.add_group(g, out);
        }
    }

    fn unplaced(&self) -> u64 {
        self.0
            .clone()
            .fold(0u64, |n, s| n.wrapping_add(s.unplaced()))
    }
}

impl<'a, I: Iterator<Item = Sketch<'a>> + Clone> Union<I> {
    /// p50, p90, p99 and p999 of all the sketches' values together.
    #[cfg(not(MODULE))]
    pub fn percentiles(&self) -> Percentiles {
        percentiles(self)
    }

    /// The `q_ppm`-quantile of all the sketches' values together.
    #[cfg(not(MODULE))]
    pub fn quantile(&self, q_ppm: u32) -> Quantile {
        let mut out = [Quantile::Empty];
        quantiles(self, &[q_ppm], &mut out);
        out[0]
    }
}

/// A quantile as a sketch knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantile {
    /// No value was recorded.
    Empty,
    /// The representative of the quantile's bucket: within `x / 128`
    /// (under 1%) of the exact nearest-rank quantile `x`.
    Value(u64),
    /// Unplaced values (the pool ran dry) hide the quantile: it is
    /// between `low` and `high`, both included.
    Within {
        /// The lowest value it may be.
        low: u64,
        /// The highest value it may be.
        high: u64,
    },
}

/// What a `.quantiles` value prints for an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Percentiles {
    /// Values recorded, placed or not (those the quantiles are of).
    pub count: u64,
    /// Of which unplaced (the pool ran dry).
    pub unplaced: u64,
    /// p50, p90, p99, p999: [`PERCENTILES`].
    pub p: [Quantile; 4],
}

/// p50, p90, p99 and p999 of `src`.
pub fn percentiles(src: &impl Counts) -> Percentiles {
    let mut p = [Quantile::Empty; 4];
    let (count, unplaced) = quantiles(src, &PERCENTILES, &mut p);
    Percentiles { count, unplaced, p }
}

/// Per-group totals and the unplaced count, as one collection read them.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Collection {
    groups: [u64; GROUPS],
    unplaced: u64,
}

impl Collection {
    fn of(src: &impl Counts) -> Self {
        let mut c = Collection {
            groups: [0; GROUPS],
            unplaced: 0,
        };
        c.refresh(src);
        c
    }

    /// Collects again, in place: whether nothing changed.
    fn refresh(&mut self, src: &impl Counts) -> bool {
        let mut same = true;
        for (g, t) in self.groups.iter_mut().enumerate() {
            let now = src.group_total(g);
            same &= now == *t;
            *t = now;
        }
        let now = src.unplaced();
        same &= now == self.unplaced;
        self.unplaced = now;
        same
    }

    fn placed(&self) -> u64 {
        self.groups.iter().fold(0u64, |n, t| n.wrapping_add(*t))
    }
}

/// The bucket of the value of rank `r` (1-based) among the placed values
/// of `src`, by the group totals of `c` and the counts in the group.
fn bucket_of_rank(src: &impl Counts, c: &Collection, r: u64) -> usize {
    let mut before = 0u64;
    let mut g = GROUPS - 1;
    for (i, &t) in c.groups.iter().enumerate() {
        if before.saturating_add(t) >= r {
            g = i;
            break;
        }
        before = before.saturating_add(t);
    }
    let mut counts = [0u64; SUB];
    src.add_group(g, &mut counts);
    let r = r - before.min(r);
    let mut seen = 0u64;
    let mut last = 0;
    for (i, &n) in counts.iter().enumerate() {
        seen = seen.saturating_add(n);
        if n != 0 {
            last = i;
        }
        if seen >= r && n != 0 {
            return (g << SUB_BITS) + i;
        }
    }
    // The counts fell below the collection's (a clear raced): the last
    // bucket that has any.
    (g << SUB_BITS) + last
}

/// Quantile `q` of `c`, reading buckets from `src`.
fn quantile_of(src: &impl Counts, c: &Collection, q_ppm: u32) -> Quantile {
    let placed = c.placed();
    let d = c.unplaced;
    let n = placed.saturating_add(d);
    let k = nearest_rank(q_ppm, n);
    if n == 0 {
        return Quantile::Empty;
    }
    // x_k lies between the placed values of ranks k - d and k.
    let low = (k > d).then(|| bucket_of_rank(src, c, k - d));
    let high = (k <= placed).then(|| bucket_of_rank(src, c, k));
    match (low, high) {
        (Some(l), Some(h)) if l == h => Quantile::Value(bucket_value(h)),
        (l, h) => Quantile::Within {
            low: l.map_or(0, bucket_low),
            high: h.map_or(u64::MAX, bucket_high),
        },
    }
}

/// Quantiles `qs` (parts per million) of `src` into `out` (as many as
/// fit), and the count and unplaced count they are of. See *Reading while
/// updates race* for what a read racing updates gives.
pub fn quantiles(src: &impl Counts, qs: &[u32], out: &mut [Quantile]) -> (u64, u64) {
    let mut c = Collection::of(src);
    for tries in 1.. {
        for (o, &q) in out.iter_mut().zip(qs) {
            *o = quantile_of(src, &c, q);
        }
        // Done if nothing changed since the collection the quantiles are
        // of: the walk then read the counts of that moment. Else `c` is
        // the newer collection, for the next try.
        if tries >= READ_TRIES || c.refresh(src) {
            break;
        }
    }
    (c.placed().wrapping_add(c.unplaced), c.unplaced)
}

/// The sketches of a map's `.quantiles` values: `n_values` per element,
/// in one pool, found by the element's index. What the hist code holds
/// next to its `TracingMap` (see *Hosting sketches in a map*).
#[derive(Clone, Copy, Debug)]
pub struct MapSketches<'a> {
    pool: SketchPool<'a>,
    n_values: usize,
}

impl<'a> MapSketches<'a> {
    /// The pool a map of `max_elts` elements with `n_values`
    /// `.quantiles` values gets: see [`PoolParams::for_map`].
    pub const fn params(max_elts: usize, n_values: usize) -> PoolParams {
        PoolParams::for_map(max_elts, n_values)
    }

    /// The sketches of a map over `pool`, made with
    /// [`params`](Self::params) of the map's `max_elts` and `n_values`.
    pub fn new(pool: SketchPool<'a>, n_values: usize) -> Result<Self, SketchError> {
        match n_values <= SKETCHES_MAX {
            true => Ok(MapSketches { pool, n_values }),
            false => Err(SketchError::TooManySketches),
        }
    }

    /// The pool, for its [`stats`](SketchPool::stats).
    #[inline(always)]
    pub fn pool(&self) -> &SketchPool<'a> {
        &self.pool
    }

    /// No sketches: what a map without `.quantiles` values holds.
    #[cfg(not(all(loom, test)))]
    pub fn empty() -> MapSketches<'static> {
        MapSketches {
            pool: SketchPool::empty(),
            n_values: 0,
        }
    }

    /// Sketches per element: 0 for [`empty`](Self::empty).
    pub fn n_values(&self) -> usize {
        self.n_values
    }

    /// Sketch of value `j` of element `elt` (`TracingMap`'s index).
    #[inline(always)]
    pub fn sketch(&self, elt: u32, j: usize) -> Option<Sketch<'a>> {
        if j >= self.n_values {
            return None;
        }
        // No overflow: `elt < 2^32` and `n_values <= 2^22`.
        let slot = (elt as usize).wrapping_mul(self.n_values).wrapping_add(j);
        self.pool.sketch(slot)
    }

    /// Records `v` in value `j`'s sketch of element `elt`: the event path.
    #[inline(always)]
    pub fn record(&self, elt: u32, j: usize, v: u64) {
        if let Some(s) = self.sketch(elt, j) {
            s.record(v);
        }
    }

    /// Value `j`'s sketches of the elements `elts` yields (for instance
    /// the map's sorted entries) read as one: the totals.
    pub fn union<I: Iterator<Item = u32> + Clone>(
        &self,
        j: usize,
        elts: I,
    ) -> Union<impl Iterator<Item = Sketch<'a>> + Clone> {
        let this = *self;
        Union(elts.filter_map(move |e| this.sketch(e, j)))
    }

    /// Clears every sketch: with `TracingMap::clear()`, under the same
    /// rules.
    pub fn clear(&self) {
        self.pool.clear()
    }
}

// A path relative to this file's directory, so that it resolves the same
// when `tests/loom_sketch.rs` includes this file (for rustfmt; loom skips
// it).
#[cfg(all(test, not(loom)))]
#[path = "sketch/tests.rs"]
mod tests;
