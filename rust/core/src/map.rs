// SPDX-License-Identifier: GPL-2.0

//! The lock-free map behind a hist trigger: `kernel/trace/tracing_map.c`.
//!
//! # What it does (as C does)
//!
//! A map of `max_elts = 1 << bits` elements, found through a hash table of
//! `map_size = 2 * max_elts` entries.  Each entry holds a 32-bit key hash
//! (0 means free) and the index of a preallocated element.  Inserting claims
//! a free entry by compare-and-swap of its hash, takes the next free element
//! with an atomic increment, copies the key into it and publishes the
//! element in the entry.  Looking up compares the hash, then the whole key.
//! Nothing is ever deleted or moved until [`TracingMap::clear`]; when the
//! elements run out, inserting a new key fails and counts a *drop*, while
//! keys already in the map keep being found.  Every successful insert or
//! find counts a *hit*.
//!
//! Each element holds the key (its size rounded up to 8 bytes), `n_sums`
//! 64-bit sums (atomic add, `tracing_map_update_sum()`), `n_vars` 64-bit
//! variables with a "set" flag (`tracing_map_set_var()` and friends), and
//! optionally `n_private` words of client data (C's `private_data`, which
//! the hist code fills in its `elt_init` callback, see
//! [`TracingMap::insert_with`]).
//!
//! # How it differs from C
//!
//! * Memory comes from the caller: one slab (see [`MapParams::storage_words`]
//!   and [`MapParams::storage_bytes`]) holds the counters, the entry table
//!   and every element, each in two parts rather than C's five small
//!   allocations: its key in the region of the keys, its data (sums, vars,
//!   private words) in the region of the data. The keys, which every event
//!   reads, are not on the lines of the sums, which the events on a hot key
//!   write from every CPU. No part straddles cache lines (their strides are
//!   powers of two up to 64 bytes, multiples of 64 bytes beyond) but packed
//!   per-CPU sums ([`MapParams::with_packed_sums`]), which straddle lines
//!   only their CPU writes; `hits` has a cache line of its own.
//! * Sums may be kept per CPU ([`MapParams::per_cpu`]): each CPU adds to
//!   a copy of its own ([`Elt::update_sum_on`], [`TracingMap::cpu_sums`]),
//!   in a region of the slab no other CPU writes, and reading a sum
//!   totals the copies. CPUs on one hot key then write no common line.
//! * A sum may serve as a maximum instead (rhist's `.min` and `.max`, see
//!   [`super::stats`]): an event raises its copy ([`Elt::update_max_on`])
//!   and reading it ([`Elt::read_max`]) takes the largest copy. Its
//!   identity is 0, what every sum starts from. Which sums are maxima is
//!   the caller's to know, as what each sum means is.
//! * Everything in the slab is an `AtomicU64`, key words included, so a
//!   misused map (say, [`TracingMap::clear`] while events still arrive) can
//!   only give wrong numbers, never undefined behaviour.  On the host and in
//!   the kernel relaxed atomic loads and stores compile to plain moves.
//! * An entry is one 64-bit word: the hash in the low half, the element
//!   state in the high half (claimed, element not yet published: `2^31`
//!   plus the inserter's CPU, or 0 if it did not say; `!0`: dead;
//!   otherwise element index + 1).  One load sees both consistently.
//! * C waits for an entry another insert has claimed but not published
//!   yet (its key may be the one being inserted) `map_size` turns at most,
//!   then drops: two CPUs that meet on a new key lose a count now and then
//!   (`hist` lost one in 40 rounds of 3,000 events of 1,000 keys on 2
//!   vCPUs).
//!   Here an insert says on which CPU it runs ([`Inserter`]) and the entry
//!   it claims records it. An entry claimed on another CPU is published
//!   while this insert waits, so it waits longer, with a pause each turn,
//!   [`OTHER_CPU_WAITS`] turns at most (the other vCPU may be held up by
//!   its host). One claimed on its own CPU was claimed by the context this
//!   insert interrupted, which cannot publish before this returns: it
//!   drops at once, rather than after `map_size` turns.
//! * When an inserter has claimed an entry but no element is left, C puts
//!   the entry back to free (hash 0).  That can hide a key inserted further
//!   along the same probe chain meanwhile, which then is dropped forever.
//!   Here the entry is marked dead instead: it keeps its hash, lookups step
//!   over it.  And before claiming a free entry the inserter checks whether
//!   any element is left at all, so a full map does not burn entries.
//! * Probing is bounded by `map_size` steps besides C's bound on waiting for
//!   an unpublished entry (which here also covers losing the race for a free
//!   entry), so no call can loop forever, whatever the table holds.
//! * The hash is a sum of 8-byte words times odd constants, folded and
//!   multiplied once more ([`hash_finish`]), not `jhash()`; the table
//!   index is its top `bits + 1` bits, as in C.
//!
//! # Sorting
//!
//! [`TracingMap::sort_entries`] mirrors `tracing_map_sort_entries()` step by
//! step, so that entries whose sort keys are equal come out in C's order:
//! the entries are first sorted by `memcmp()` of their whole key (C's
//! `detect_dups()`, which leaves them in that order), then by the first
//! sort key with the kernel's heapsort (`lib/sort.c`, not stable; its exact
//! steps are reproduced), then each run of entries equal on the first key is
//! sorted by the second key in the same way (`sort_secondary()`).
//!
//! # Memory ordering
//!
//! The inserter writes the key words (and runs the client's init) before
//! publishing the element index with a `Release` store to the entry; every
//! reader loads the entry with `Acquire`, so whoever sees an element index
//! also sees the key and private words written for it.  Claiming an entry
//! and an element only needs the atomicity of the read-modify-writes (each
//! is owned by exactly one winner), so they are `Relaxed`; sums, counters
//! and the clearing done by [`TracingMap::clear`] are `Relaxed` too: the
//! caller orders `clear` against events by pausing them, as C does.

use self::sync::{pause, spin, AtomicU64, Ordering};
use super::stats;
use core::cmp::Ordering as CmpOrdering;

#[cfg(not(all(loom, test)))]
mod sync {
    pub(super) use core::sync::atomic::{AtomicU64, Ordering};

    /// One turn of waiting for an entry to be published.  Like C, no pause
    /// instruction: the wait is bounded by a count (up to `map_size`), and
    /// in an NMI that interrupted the publisher the whole count is spent,
    /// so each turn should cost no more than a load.
    #[inline(always)]
    pub(super) fn spin() {}

    /// One turn of a longer wait (a fold's, or for another CPU's
    /// insert): a pause.
    #[inline(always)]
    pub(super) fn pause() {
        core::hint::spin_loop();
        #[cfg(test)]
        paused::turn();
    }

    /// What a unit test runs at each [`pause`] of its thread: the turns
    /// counted, and what a test does at each (another CPU's publication,
    /// at the turn it picks).
    #[cfg(test)]
    pub(super) mod paused {
        use std::boxed::Box;
        use std::cell::{Cell, RefCell};

        type AtTurn = Option<Box<dyn FnMut(u64)>>;

        std::thread_local! {
            static TURNS: Cell<u64> = const { Cell::new(0) };
            static AT_TURN: RefCell<AtTurn> = const { RefCell::new(None) };
        }

        pub(in super::super) fn turn() {
            let n = TURNS.with(|t| {
                t.set(t.get() + 1);
                t.get()
            });
            AT_TURN.with(|f| {
                if let Some(f) = f.borrow_mut().as_mut() {
                    f(n)
                }
            });
        }

        /// Runs `f` with `at_turn` called at each pause of this thread:
        /// the pauses `f` made.
        pub(in super::super) fn count(at_turn: impl FnMut(u64) + 'static, f: impl FnOnce()) -> u64 {
            TURNS.with(|t| t.set(0));
            AT_TURN.with(|a| *a.borrow_mut() = Some(Box::new(at_turn)));
            f();
            AT_TURN.with(|a| *a.borrow_mut() = None);
            TURNS.with(|t| t.get())
        }
    }
}

// The loom model test compiles this file into itself (`cfg(test)` there)
// with `--cfg loom`, so that the real protocol runs on loom's atomics.
#[cfg(all(loom, test))]
mod sync {
    pub(super) use loom::sync::atomic::{AtomicU64, Ordering};

    pub(super) fn spin() {
        loom::hint::spin_loop();
    }

    pub(super) fn pause() {
        loom::hint::spin_loop();
    }
}

/// Default `bits` of a hist map (`TRACING_MAP_BITS_DEFAULT`): 2048 elements.
pub const BITS_DEFAULT: u32 = 11;
/// Largest `bits` (`TRACING_MAP_BITS_MAX`).
pub const BITS_MAX: u32 = 17;
/// Smallest `bits` C accepts (`TRACING_MAP_BITS_MIN`).  The map itself takes
/// anything from 0 up, which tests use; the hist parser enforces this.
pub const BITS_MIN: u32 = 7;
/// Most sort keys: `TRACING_MAP_SORT_KEYS_MAX` is 2, rhist's extensions
/// take 4.
pub const SORT_KEYS_MAX: usize = 4;
/// Most variables per element here (one word of "set" flags).  C allows
/// `TRACING_MAP_VARS_MAX` = 16.
pub const VARS_MAX: usize = 64;
/// Most sums per element here.  C allows `TRACING_MAP_VALS_MAX` values.
pub const SUMS_MAX: usize = 64;
/// Most private words per element.
pub const PRIVATE_MAX: usize = 1024;
/// Largest key in bytes.  The hist code's own bound (`HIST_KEY_SIZE_MAX`)
/// is 384.
pub const KEY_SIZE_MAX: usize = 4096;
/// Most CPUs a map keeps sums for (the kernel's largest `NR_CPUS`).
pub const CPUS_MAX: usize = 8192;
/// Most bytes [`MapParams::per_cpu`] gives the sums of all CPUs together;
/// beyond, the CPUs share one copy of each sum.
pub const PER_CPU_SUMS_BYTES_MAX: usize = 4 << 20;

/// Largest key [`TracingMap::fold_into`] takes, in bytes: a
/// histogram's keys are at most 384.
pub const FOLD_KEY_MAX: usize = 512;

/// Words in a cache line.
const LINE_WORDS: usize = 8;
/// Lines of drop counts: a drop adds to the line its key's hash picks, so
/// that CPUs dropping different keys seldom write the same line.
const DROP_LINES: usize = 4;
/// Words before the entry table: `hits` and `next_elt` on a line, then
/// the [`DROP_LINES`] lines of drop counts (the first word of each).
const HEADER_WORDS: usize = (1 + DROP_LINES) * LINE_WORDS;
const HITS: usize = 0;
const NEXT_ELT: usize = 1;
const DROPS: usize = LINE_WORDS;

/// Entry state (high half): claimed by an insert that did not say on
/// which CPU it runs ([`Inserter::ANYWHERE`]), element not published yet.
const PENDING: u32 = 0;
/// Entry state (high half): claimed on CPU `c`, element not published
/// yet: `PENDING_ON + c`, `c` below [`CPUS_MAX`].
const PENDING_ON: u32 = 1 << 31;
/// Most turns an insert waits for an entry claimed on another CPU: far
/// longer than its publication takes (a few dozen instructions, with
/// interrupts maybe), short enough for a bound (at most a few
/// milliseconds of pauses).
pub const OTHER_CPU_WAITS: u32 = 1 << 16;

/// Whether entry state `n` is a claimed entry's, not published yet.
#[inline(always)]
const fn is_pending(n: u32) -> bool {
    n == PENDING || (n >= PENDING_ON && n != DEAD)
}

/// Where an insert runs: the entry it claims records it, so that a wait
/// for that entry can tell an insert on another CPU, which publishes
/// while the waiter waits, from one the waiter interrupted on its own
/// CPU, which cannot (see "How it differs from C").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inserter(u32);

impl Inserter {
    /// An insert that does not say where it runs: it waits for every
    /// claimed entry as C does, `map_size` turns at most.
    pub const ANYWHERE: Self = Self(u32::MAX);

    /// An insert on CPU `cpu`, in a context that nothing on `cpu` can
    /// suspend but an interrupt (the event path: preemption is off).
    /// [`ANYWHERE`](Self::ANYWHERE)'s waits from [`CPUS_MAX`] on.
    #[inline(always)]
    pub const fn on_cpu(cpu: u32) -> Self {
        Self(cpu)
    }

    /// The state of an entry this insert claims.
    #[inline(always)]
    const fn pending_state(self) -> u32 {
        match self.0 < CPUS_MAX as u32 {
            true => PENDING_ON + self.0,
            false => PENDING,
        }
    }
}
/// Entry state (high half): claimed, but no element was left.
const DEAD: u32 = u32::MAX;

/// Why a map could not be set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapError {
    /// `bits` is above [`BITS_MAX`].
    BadBits,
    /// The key size is 0 or above [`KEY_SIZE_MAX`].
    BadKeySize,
    /// More than [`SUMS_MAX`] sums.
    TooManySums,
    /// More than [`VARS_MAX`] variables.
    TooManyVars,
    /// More than [`PRIVATE_MAX`] private words.
    TooManyPrivate,
    /// No CPU, or more than [`CPUS_MAX`].
    BadCpus,
    /// The storage handed in is smaller than the parameters need.
    StorageTooSmall,
}

impl MapError {
    /// The (positive) errno C would return: `EINVAL`, or `ENOMEM` for
    /// missing storage.
    pub fn errno(self) -> i32 {
        match self {
            MapError::StorageTooSmall => 12,
            _ => 22,
        }
    }
}

/// The shape of a map: its size and what each element holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapParams {
    /// `max_elts = 1 << bits`, `map_size = 2 << bits`.
    pub bits: u32,
    /// Key size in bytes; stored rounded up to 8, zero padded.
    pub key_size: usize,
    /// Number of sums per element (the hist code's hitcount is sum 0).
    pub n_sums: usize,
    /// Number of variables per element.
    pub n_vars: usize,
    /// Number of private 64-bit words per element.
    pub n_private: usize,
    /// Number of copies of each element's sums, one per CPU: 1 when the
    /// CPUs share them (see [`MapParams::per_cpu`]).
    pub n_cpus: usize,
    /// Per-CPU sums at a stride of exactly `n_sums` words, rather than a
    /// power of two (see [`MapParams::with_packed_sums`]).
    pub packed_sums: bool,
}

impl MapParams {
    /// A map of `1 << bits` elements with `key_size`-byte keys, `n_sums`
    /// sums and `n_vars` variables, without private words.
    pub const fn new(bits: u32, key_size: usize, n_sums: usize, n_vars: usize) -> Self {
        MapParams {
            bits,
            key_size,
            n_sums,
            n_vars,
            n_private: 0,
            n_cpus: 1,
            packed_sums: false,
        }
    }

    /// The same with per-CPU sums packed: each element's copy takes
    /// `n_sums` words, where it takes a power of two otherwise (3 sums:
    /// 24 bytes rather than 32). An element's sums may then straddle two
    /// lines, both in the region its CPU alone writes; and
    /// [`TracingMap::sums_index`] finds no element from its sums, which
    /// only `.quantiles` values need. Shared sums stay in the data.
    pub const fn with_packed_sums(mut self) -> Self {
        self.packed_sums = true;
        self
    }

    /// The same with `n` private words per element.
    pub const fn with_private_words(mut self, n: usize) -> Self {
        self.n_private = n;
        self
    }

    /// The same with a copy of the sums for each of `n` CPUs.
    pub const fn with_cpus(mut self, n: usize) -> Self {
        self.n_cpus = n;
        self
    }

    /// The same with the sums kept per CPU, for `n_cpus` CPUs, when that
    /// is worth it: when there are sums and CPUs to share them, and the
    /// copies of all CPUs take at most [`PER_CPU_SUMS_BYTES_MAX`] bytes.
    /// Otherwise the CPUs share one copy, as in C.
    ///
    /// Per-CPU sums take `n_cpus * max_elts * stride * 8` bytes, the
    /// stride being `n_sums` (packed), or `n_sums` rounded up to a power
    /// of two (up to 8, whole lines beyond): 2,048 entries of 1 to 4 sums
    /// on 64 CPUs take 1 to 4 MB, and stay per CPU; 131,072 entries on 8
    /// CPUs would take 8 MB, and share.
    pub fn per_cpu(self, n_cpus: usize) -> Self {
        let bytes = Geometry::sums_bytes(&self.with_cpus(n_cpus));
        match bytes {
            Some(b) if self.n_sums > 0 && n_cpus > 1 && b <= PER_CPU_SUMS_BYTES_MAX => {
                self.with_cpus(n_cpus)
            }
            _ => self.with_cpus(1),
        }
    }

    /// How many `AtomicU64` words [`TracingMap::new`] needs, including up
    /// to 7 words it skips to start on a 64-byte boundary.
    pub fn storage_words(&self) -> Result<usize, MapError> {
        Ok(Geometry::new(self)?.words + LINE_WORDS - 1)
    }

    /// How many bytes [`TracingMap::new_uninit`] needs, including up to 63
    /// bytes it skips to start on a 64-byte boundary.
    pub fn storage_bytes(&self) -> Result<usize, MapError> {
        Ok(Geometry::new(self)?.words * 8 + LINE_WORDS * 8 - 1)
    }
}

/// Where things are in the slab, in words; all derived from [`MapParams`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Geometry {
    params: MapParams,
    max_elts: usize,
    map_size: usize,
    layout: EltLayout,
    /// Distance between the keys of two elements.
    key_stride: usize,
    /// Distance between the data (sums, variables, private words) of two
    /// elements.
    data_stride: usize,
    /// First word of the first element's key.
    keys_off: usize,
    /// First word of the first element's data.
    data_off: usize,
    /// First word of the first element's sums: in its data when the CPUs
    /// share them, else CPU 0's copy, in the copies of the sums after
    /// the data.
    sums_off: usize,
    /// Distance between the sums of two elements (of one CPU).
    sum_stride: usize,
    /// Words used (after alignment).
    words: usize,
    /// The right shift of a hash that gives where probing starts (its
    /// top `bits + 1` bits).
    start_shift: u32,
}

/// Where things are inside one element, in words: its key words, then
/// (apart, see [`Geometry`]) its data words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct EltLayout {
    key_size: u32,
    key_words: u32,
    n_sums: u32,
    /// The sums in the data words: `n_sums`, or 0 when they are per CPU.
    data_sums: u32,
    n_vars: u32,
    n_private: u32,
    /// The copies of the sums (1 when the CPUs share them).
    n_cpus: u32,
    /// The distance from one CPU's copy of a sum to the next CPU's, in
    /// words (0 when the CPUs share them).
    cpu_stride: u32,
}

impl EltLayout {
    /// The first sum, in the data words.
    const fn sums_off(&self) -> usize {
        0
    }
    /// The word of "set" flags, present when there are variables.
    const fn flags_off(&self) -> usize {
        self.sums_off() + self.data_sums as usize
    }
    const fn vars_off(&self) -> usize {
        self.flags_off() + (self.n_vars != 0) as usize
    }
    const fn private_off(&self) -> usize {
        self.vars_off() + self.n_vars as usize
    }
    /// The number of data words.
    const fn data_words(&self) -> usize {
        self.private_off() + self.n_private as usize
    }
    /// The words from an element's first sum of CPU 0 to its last sum of
    /// the last CPU.
    const fn sums_span(&self) -> usize {
        (self.n_cpus as usize - 1) * self.cpu_stride as usize + self.n_sums as usize
    }
}

/// The distance between two elements' parts of `words` words: a power of
/// two up to a cache line, so that none straddles two lines, whole lines
/// beyond; none for a part of no words (the data of elements whose sums
/// are per CPU, with no variables nor private words).
const fn part_stride(words: usize) -> usize {
    if words == 0 {
        0
    } else if words <= LINE_WORDS {
        words.next_power_of_two()
    } else {
        words.next_multiple_of(LINE_WORDS)
    }
}

impl Geometry {
    fn new(p: &MapParams) -> Result<Self, MapError> {
        if p.bits > BITS_MAX {
            return Err(MapError::BadBits);
        }
        if p.key_size == 0 || p.key_size > KEY_SIZE_MAX {
            return Err(MapError::BadKeySize);
        }
        if p.n_sums > SUMS_MAX {
            return Err(MapError::TooManySums);
        }
        if p.n_vars > VARS_MAX {
            return Err(MapError::TooManyVars);
        }
        if p.n_private > PRIVATE_MAX {
            return Err(MapError::TooManyPrivate);
        }
        if p.n_cpus == 0 || p.n_cpus > CPUS_MAX {
            return Err(MapError::BadCpus);
        }
        let per_cpu = p.n_cpus > 1 && p.n_sums > 0;
        let max_elts = 1usize << p.bits;
        let sum_stride = match per_cpu && p.packed_sums {
            true => p.n_sums,
            false => part_stride(p.n_sums),
        };
        // One CPU's copies of every element's sums, on lines of its own.
        let cpu_stride = match per_cpu {
            true => (max_elts * sum_stride).next_multiple_of(LINE_WORDS),
            false => 0,
        };
        // The bounds above keep every value here below u32::MAX
        // (`cpu_stride` is at most 2^17 * 64 words).
        let layout = EltLayout {
            key_size: p.key_size as u32,
            key_words: p.key_size.div_ceil(8) as u32,
            n_sums: p.n_sums as u32,
            data_sums: if per_cpu { 0 } else { p.n_sums as u32 },
            n_vars: p.n_vars as u32,
            n_private: p.n_private as u32,
            n_cpus: if per_cpu { p.n_cpus as u32 } else { 1 },
            cpu_stride: cpu_stride as u32,
        };
        // The keys and the data are apart, each on lines of their own:
        // a key compared on every event is not on a line that the events
        // of other CPUs write (a hot key's sums). Per-CPU sums come last,
        // each CPU's on lines no other CPU writes.
        let key_stride = part_stride(layout.key_words as usize);
        let data_stride = part_stride(layout.data_words());
        let map_size = max_elts << 1;
        let keys_off = (HEADER_WORDS + map_size).next_multiple_of(LINE_WORDS);
        let data_off = (keys_off + max_elts * key_stride).next_multiple_of(LINE_WORDS);
        let data_end = (data_off + max_elts * data_stride).next_multiple_of(LINE_WORDS);
        let (sums_off, sum_stride, words) = match per_cpu {
            true => {
                let words = cpu_stride
                    .checked_mul(p.n_cpus)
                    .and_then(|w| w.checked_add(data_end))
                    .ok_or(MapError::BadCpus)?;
                (data_end, sum_stride, words)
            }
            false => (data_off, data_stride, data_off + max_elts * data_stride),
        };
        // The event path takes it for a u16 (`TracingMap::cpu_sums()`):
        // at most a line of sums, or the data's stride, whose parts have
        // bounds far below.
        if sum_stride > usize::from(u16::MAX) {
            return Err(MapError::TooManyPrivate);
        }
        Ok(Geometry {
            params: *p,
            max_elts,
            map_size,
            layout,
            key_stride,
            data_stride,
            keys_off,
            data_off,
            sums_off,
            sum_stride,
            words,
            start_shift: 32 - (p.bits + 1),
        })
    }

    /// The bytes the copies of the sums take when they are per CPU.
    fn sums_bytes(p: &MapParams) -> Option<usize> {
        let g = Geometry::new(p).ok()?;
        Some((g.layout.cpu_stride as usize) * (g.layout.n_cpus as usize) * 8)
    }
}

/// The map: a cheap `Copy` handle over the caller's storage.
///
/// Everything that changes lives in the storage, so copies of the handle
/// (one per CPU, in a trigger's private data, ...) all act on one map.
#[derive(Clone, Copy)]
pub struct TracingMap<'a> {
    g: Geometry,
    /// A fixed-size array: its words are read and written with no bounds
    /// check on the event path.
    header: &'a [AtomicU64; HEADER_WORDS],
    entries: &'a [AtomicU64],
    /// The elements' keys.
    keys: &'a [AtomicU64],
    /// The elements' data: sums (unless per CPU), variables, private
    /// words; then the per-CPU sums, if any.
    data: &'a [AtomicU64],
    /// The elements' sums, from the first element's (CPU 0's copy).
    sums: &'a [AtomicU64],
}

impl core::fmt::Debug for TracingMap<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TracingMap")
            .field("params", &self.g.params)
            .field("len", &self.len())
            .field("hits", &self.hits())
            .field("drops", &self.drops())
            .finish()
    }
}

/// The hash a map with `key_size`-byte keys uses for `key`: never 0 (a
/// free entry).  The top `bits + 1` bits choose where probing starts.
pub fn key_hash(key: &[u8], key_size: usize) -> u32 {
    let key = key.get(..key_size).unwrap_or(key);
    key.hash(key_size.div_ceil(8))
}

/// Word `i`'s share of a key's hash: 0 for a zero word, so that a key's
/// hash is the sum over its non-zero words only, and a key whose words are
/// mostly zero (a short string in a long slot) hashes at the cost of the
/// others (see [`MapKey::hash`]). One multiply: [`hash_finish`] mixes the
/// sum.
#[inline(always)]
pub fn hash_word(w: u64, i: usize) -> u64 {
    // Odd multipliers, a different one per word (splitmix64 of i).
    const fn multiplier(i: u64) -> u64 {
        let mut z = i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) | 1
    }
    const MULTIPLIERS: [u64; 64] = {
        let mut m = [0u64; 64];
        let mut i = 0;
        while i < 64 {
            m[i] = multiplier(i as u64);
            i += 1;
        }
        m
    };
    // Past 64 words (longer than any histogram key), the multipliers
    // repeat with an even offset: still odd.
    let m = MULTIPLIERS[i % 64].wrapping_add((i / 64) as u64 * 2);
    w.wrapping_mul(m)
}

/// The hash of a key from the sum of its words' [`hash_word`]s: never 0
/// (a free entry).
#[inline(always)]
pub fn hash_finish(sum: u64) -> u32 {
    // The sum's top half folded onto its bottom half, then a multiply,
    // whose top bits so depend on every bit of the sum: the table index
    // is taken from the top bits, as C does with jhash(). Made odd, so
    // never 0: the index never uses the lowest bit, and two keys' hashes
    // are compared on the other 31. A multiply and two xorshifts fewer
    // than murmur3's finaliser, which this replaces, and the words' own
    // xorshifts gone: probes as short, measured on numbers, strings and
    // pointers in a table half full.
    const MIX: u64 = 0x9e37_79b9_7f4a_7c15;
    let x = (sum ^ (sum >> 32)).wrapping_mul(MIX);
    (x >> 32) as u32 | 1
}

/// What [`TracingMap::find`] does with a key that is not there, and
/// whether it counts the hit.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Find {
    /// Nothing (C's `tracing_map_lookup()`).
    Lookup,
    /// Insert it; count hits (C's `tracing_map_insert()`).
    Insert,
    /// Insert it; the caller counts hits itself.
    InsertUncounted,
}

/// How far a look-up went (see [`TracingMap::insert_first_uncounted`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum First {
    /// The key's element.
    Found(u32),
    /// The key is not in the map and was not inserted: a free entry ends
    /// its probe and no element is left (the drop is counted), or (a
    /// lookup) a free entry ends its probe.
    Absent,
    /// The entry where the key's probe starts holds another key: the
    /// look-up goes on from the next one
    /// ([`TracingMap::insert_further_uncounted`]).
    Further,
    /// The rest is the probe loop's, from the entry where the key's probe
    /// starts ([`TracingMap::insert_rest_uncounted`]): to insert the key
    /// in a free entry, or wait for an entry being published with its
    /// hash.
    Probe,
}

/// A key as the map reads it: word by word, zero past its end.
///
/// The provided methods hash, compare and store it a word at a time; a
/// key that knows where its zero words are may do less, as long as it
/// gives the same results.
pub trait MapKey: Copy {
    /// The number of words, when the type fixes it (0: the map's). A key
    /// that fixes it goes only to a map of that many key words.
    const WORDS: usize = 0;

    /// Word `i`, in native byte order.
    fn word(self, i: usize) -> u64;

    /// The key's hash, `words` being the key size in words:
    /// [`hash_finish`] of the sum of its words' [`hash_word`]s.
    #[inline(always)]
    fn hash(self, words: usize) -> u32 {
        let mut sum = 0u64;
        for i in 0..words {
            sum = sum.wrapping_add(hash_word(self.word(i), i));
        }
        hash_finish(sum)
    }

    /// Whether `slots` (the key words of an element) hold this key.
    #[inline(always)]
    fn matches(self, slots: &[AtomicU64]) -> bool {
        slots
            .iter()
            .enumerate()
            .all(|(i, w)| w.load(Ordering::Relaxed) == self.word(i))
    }

    /// Stores the key into `slots`, the key words of a new element.
    #[inline]
    fn store(self, slots: &[AtomicU64]) {
        for (i, slot) in slots.iter().enumerate() {
            slot.store(self.word(i), Ordering::Relaxed);
        }
    }
}

/// A key as bytes.
impl MapKey for &[u8] {
    #[inline(always)]
    fn word(self, i: usize) -> u64 {
        key_word(self, i)
    }
}

/// A key as words (what a compiled program builds).
impl MapKey for &[u64] {
    #[inline(always)]
    fn word(self, i: usize) -> u64 {
        self.get(i).copied().unwrap_or(0)
    }
}

/// A key of exactly `N` words, `N` being the map's: the loops over its
/// words unroll.
impl<const N: usize> MapKey for &[u64; N] {
    const WORDS: usize = N;
    #[inline(always)]
    fn word(self, i: usize) -> u64 {
        self.get(i).copied().unwrap_or(0)
    }

    /// A loop over the words by their index, which the compiler unrolls:
    /// no iterator adapter for it to leave out of line (it did, for the
    /// event path's look-up past the first entry in the module).
    #[inline(always)]
    fn matches(self, slots: &[AtomicU64]) -> bool {
        let Some(slots) = slots.first_chunk::<N>() else {
            return false;
        };
        for i in 0..N {
            if slots[i].load(Ordering::Relaxed) != self[i] {
                return false;
            }
        }
        true
    }
}

/// Word `i` of a key given as bytes, zero padded past its end.
#[inline(always)]
fn key_word(key: &[u8], i: usize) -> u64 {
    let start = i * 8;
    if let Some(bytes) = key.get(start..start + 8) {
        let mut b = [0u8; 8];
        b.copy_from_slice(bytes);
        u64::from_ne_bytes(b)
    } else {
        let mut b = [0u8; 8];
        if let Some(rest) = key.get(start..) {
            b[..rest.len()].copy_from_slice(rest);
        }
        u64::from_ne_bytes(b)
    }
}

/// `words` zeroed atomic words over raw memory (say from `vmalloc()`),
/// from its first 64-byte boundary: `None` if `storage` is too small for
/// that (it needs `words * 8 + 63` bytes at most). The words borrow the
/// memory for `'a`.
#[cfg(not(all(loom, test)))]
pub fn zeroed_words(
    storage: &mut [core::mem::MaybeUninit<u8>],
    words: usize,
) -> Option<&[AtomicU64]> {
    let skip = (storage.as_ptr() as usize).wrapping_neg() % (LINE_WORDS * 8);
    let bytes = storage.get_mut(skip..skip.checked_add(words.checked_mul(8)?)?)?;
    for b in bytes.iter_mut() {
        b.write(0);
    }
    // SAFETY: `bytes` starts on a 64-byte boundary, which satisfies the
    // alignment of `AtomicU64` (at most 8), and holds `words * 8` bytes,
    // all initialised above to 0, a valid `AtomicU64`, whose size is 8.
    // The exclusive borrow of the bytes for `'a` is consumed here, so the
    // atomics are the only access to that memory for `'a`.
    Some(unsafe { core::slice::from_raw_parts(bytes.as_mut_ptr().cast::<AtomicU64>(), words) })
}

impl<'a> TracingMap<'a> {
    /// Builds a map over `storage`, which must hold at least
    /// [`MapParams::storage_words`] words; all of them are zeroed here.
    ///
    /// On the host: `let s: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();`.
    pub fn new(params: MapParams, storage: &'a [AtomicU64]) -> Result<Self, MapError> {
        let map = Self::attach(params, storage)?;
        for w in map
            .header
            .iter()
            .chain(map.entries)
            .chain(map.keys)
            .chain(map.data)
        {
            w.store(0, Ordering::Relaxed);
        }
        Ok(map)
    }

    /// Builds a map over raw memory, say from `vmalloc()`, which must hold
    /// at least [`MapParams::storage_bytes`] bytes; it is aligned and zeroed
    /// here.  The map borrows the memory for `'a`; whoever frees it must
    /// first be done with every copy of the map and every element handle.
    #[cfg(not(all(loom, test)))]
    pub fn new_uninit(
        params: MapParams,
        storage: &'a mut [core::mem::MaybeUninit<u8>],
    ) -> Result<Self, MapError> {
        let g = Geometry::new(&params)?;
        let words = zeroed_words(storage, g.words).ok_or(MapError::StorageTooSmall)?;
        Self::attach(params, words)
    }

    /// Splits `storage` as `params` say, without touching it.
    fn attach(params: MapParams, storage: &'a [AtomicU64]) -> Result<Self, MapError> {
        let g = Geometry::new(&params)?;
        // Start on a cache line where a word is 8 bytes (not under loom).
        let skip = if core::mem::size_of::<AtomicU64>() == 8 {
            ((storage.as_ptr() as usize).wrapping_neg() % (LINE_WORDS * 8)) / 8
        } else {
            0
        };
        let s = storage
            .get(skip..skip + g.words)
            .ok_or(MapError::StorageTooSmall)?;
        let (header, rest) = s
            .split_first_chunk::<HEADER_WORDS>()
            .ok_or(MapError::StorageTooSmall)?;
        let entries = &rest[..g.map_size];
        let keys = &s[g.keys_off..g.data_off];
        let data = &s[g.data_off..];
        let sums = &s[g.sums_off..];
        Ok(TracingMap {
            g,
            header,
            entries,
            keys,
            data,
            sums,
        })
    }

    /// The parameters the map was built with.
    pub fn params(&self) -> MapParams {
        self.g.params
    }

    /// The number of elements (`max_elts`).
    pub fn max_elts(&self) -> usize {
        self.g.max_elts
    }

    /// The number of hash table entries (`map_size`).
    pub fn map_size(&self) -> usize {
        self.g.map_size
    }

    /// Successful inserts and finds since the last clear.
    pub fn hits(&self) -> u64 {
        self.header[HITS].load(Ordering::Relaxed)
    }

    /// Failed inserts (and lookups given up on) since the last clear.
    pub fn drops(&self) -> u64 {
        (0..DROP_LINES).fold(0u64, |n, line| {
            n.wrapping_add(self.header[DROPS + line * LINE_WORDS].load(Ordering::Relaxed))
        })
    }

    /// The number of elements handed out since the last clear; once no
    /// insert is in flight, the number of keys in the map (and one more
    /// after a `:grow` fold that raced an event to a key: `fold_insert()`).
    pub fn len(&self) -> usize {
        let n = self.header[NEXT_ELT].load(Ordering::Relaxed);
        n.min(self.g.max_elts as u64) as usize
    }

    /// Whether no element has been handed out.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The hash the map uses for `key` (never 0).
    pub fn hash_key(&self, key: &[u8]) -> u32 {
        key_hash(key, self.g.params.key_size)
    }

    /// Finds the element of `key`, inserting it if new: C's
    /// `tracing_map_insert()`.  `None` when it had to be dropped (counted
    /// in [`drops`](Self::drops)); otherwise the hit is counted.
    ///
    /// `key` is taken as `key_size` bytes: shorter is zero padded, longer is
    /// cut.  Lock-free, no allocation, at most `2 * map_size + 1` looks at
    /// an entry, whatever other inserters do.
    #[inline]
    pub fn insert(&self, key: &[u8]) -> Option<Elt<'a>> {
        self.insert_on(key, Inserter::ANYWHERE)
    }

    /// [`insert`](Self::insert) by an insert that says where it runs.
    #[inline]
    pub fn insert_on(&self, key: &[u8], who: Inserter) -> Option<Elt<'a>> {
        self.find(self.cut(key), Find::Insert, who, |_| {})
    }

    /// [`insert_with`](Self::insert_with), not counting the hit in
    /// [`hits`](Self::hits): for a caller that counts them itself (a
    /// histogram's hitcount, sum 0, counts them all), so that events do
    /// not all write one shared word. `who` says where it runs.
    #[inline]
    pub fn insert_uncounted(
        &self,
        key: &[u8],
        who: Inserter,
        init: impl FnOnce(&Elt<'a>),
    ) -> Option<Elt<'a>> {
        self.find(self.cut(key), Find::InsertUncounted, who, init)
    }

    /// [`insert_uncounted`](Self::insert_uncounted) of a key given as
    /// words: the words past `key` are 0, those past the key size are
    /// not read. The element's index, for [`cpu_sums`](Self::cpu_sums)
    /// (the event path's), or [`elt`](Self::elt).
    #[inline]
    pub fn insert_words_uncounted<const N: usize>(
        &self,
        key: &[u64; N],
        who: Inserter,
    ) -> Option<u32> {
        // `&[u64; N]` says it has N words: only true of this map's keys.
        // `find_idx()` straight, not through `insert_key_uncounted()`:
        // one more level, and rustc outlines the slice key's `find_idx()`
        // (a string key of 2 words, `keys_s`, took 62 instructions more).
        if N == self.g.layout.key_words as usize {
            self.find_idx(key, Find::InsertUncounted, who, |_| {})
        } else {
            self.find_idx(&key[..], Find::InsertUncounted, who, |_| {})
        }
    }

    /// [`insert_words_uncounted`](Self::insert_words_uncounted) of a key
    /// of exactly the map's key words, as a compiled program builds it:
    /// one copy of the probe, unrolled for `N`. A key of any other size
    /// is dropped.
    #[inline(always)]
    pub fn insert_exact_uncounted<const N: usize>(
        &self,
        key: &[u64; N],
        who: Inserter,
    ) -> Option<u32> {
        if N != self.g.layout.key_words as usize {
            self.count_drop(0);
            return None;
        }
        self.find_idx(key, Find::InsertUncounted, who, |_| {})
    }

    /// The start of [`insert_exact_uncounted`](Self::insert_exact_uncounted)
    /// of `key`, whose hash is `h` ([`MapKey::hash`]): the look-up at the
    /// entry where its probe starts, where most events find their key.
    /// The caller goes on with
    /// [`insert_further_uncounted`](Self::insert_further_uncounted) when
    /// that says [`First::Further`], and
    /// [`insert_rest_uncounted`](Self::insert_rest_uncounted) when it says
    /// [`First::Probe`]: out of line, so that what is inline here is
    /// short. A key of any other size than the map's is dropped.
    #[inline(always)]
    pub fn insert_first_uncounted<const N: usize>(&self, key: &[u64; N], h: u32) -> First {
        if N != self.g.layout.key_words as usize {
            self.count_drop(h);
            return First::Absent;
        }
        self.find_first(key, h, Find::InsertUncounted)
    }

    /// The rest of [`insert_first_uncounted`](Self::insert_first_uncounted)
    /// when it said [`First::Further`]: the look-up of `key`, whose hash
    /// is `h`, in the entries after the one where its probe starts, up to
    /// a free one. Never [`First::Further`].
    #[inline(always)]
    pub fn insert_further_uncounted<const N: usize>(&self, key: &[u64; N], h: u32) -> First {
        if N != self.g.layout.key_words as usize {
            self.count_drop(h);
            return First::Absent;
        }
        self.find_further(key, h, self.start(h), Find::InsertUncounted)
    }

    /// The rest of [`insert_first_uncounted`](Self::insert_first_uncounted)
    /// or [`insert_further_uncounted`](Self::insert_further_uncounted)
    /// when either said [`First::Probe`]: the probe loop, which inserts
    /// `key`, whose hash is `h`, or waits for it to be published.
    #[inline]
    pub fn insert_rest_uncounted<const N: usize>(
        &self,
        key: &[u64; N],
        h: u32,
        who: Inserter,
    ) -> Option<u32> {
        if N != self.g.layout.key_words as usize {
            self.count_drop(h);
            return None;
        }
        self.probe(key, h, self.start(h), Find::InsertUncounted, who, |_| {})
    }

    /// [`insert_uncounted`](Self::insert_uncounted) of a key of any
    /// [`MapKey`] type, whose [`MapKey::WORDS`] is 0 or this map's.
    #[inline]
    pub fn insert_key_uncounted<K: MapKey>(&self, key: K, who: Inserter) -> Option<u32> {
        self.find_idx(key, Find::InsertUncounted, who, |_| {})
    }

    /// CPU `cpu`'s copy of the sums of element `idx` (CPU 0's if the map
    /// keeps none for `cpu`); `None` past `max_elts`. One bounds check,
    /// where an [`Elt`] takes three.
    #[inline(always)]
    pub fn cpu_sums(&self, idx: u32, cpu: u32) -> Option<CpuSums<'a>> {
        let l = &self.g.layout;
        let cpu = if cpu < l.n_cpus { cpu } else { 0 };
        // Nothing overflows, nor truncates: cpu < n_cpus <= CPUS_MAX <
        // 2^16, sum_stride < 2^16 (see `Geometry::new()`), so each product
        // is below 2^48. Said with the types, that leaves one bounds
        // check.
        let first = u64::from(idx)
            .wrapping_mul(u64::from(self.g.sum_stride as u16))
            .wrapping_add(u64::from(cpu as u16).wrapping_mul(u64::from(l.cpu_stride)));
        let first = first as usize;
        let sums: &'a [AtomicU64] = self.sums;
        sums.get(first..first.wrapping_add(l.n_sums as usize))
            .map(CpuSums)
    }

    /// How to find the element of a copy of its sums ([`SumsIndex`]),
    /// when the strides of the sums are powers of two (as they are for
    /// sums of up to 8 words and no variables).
    pub fn sums_index(&self) -> Option<SumsIndex> {
        let word = core::mem::size_of::<AtomicU64>();
        let sum = self.g.sum_stride.checked_mul(word)?;
        let cpu = (self.g.layout.cpu_stride as usize).checked_mul(word)?;
        if !sum.is_power_of_two() || !(cpu == 0 || cpu.is_power_of_two()) {
            return None;
        }
        Some(SumsIndex {
            base: self.sums.as_ptr() as usize,
            bytes: self.sums.len().checked_mul(word)?,
            // All ones for one copy.
            mask: cpu.wrapping_sub(1),
            shift: sum.trailing_zeros(),
            elt_mask: cpu.wrapping_sub(1) & !(sum - 1),
        })
    }

    /// The number of words of a key `key` is: its own or the map's.
    #[inline(always)]
    fn key_words<K: MapKey>(&self) -> usize {
        match K::WORDS {
            0 => self.g.layout.key_words as usize,
            n => n,
        }
    }

    /// [`insert`](Self::insert), running `init` on a newly inserted element
    /// before it is published (C's `elt_init` callback), e.g. to fill its
    /// private words.  `init` is not run when the key was already there.
    #[inline]
    pub fn insert_with(&self, key: &[u8], init: impl FnOnce(&Elt<'a>)) -> Option<Elt<'a>> {
        self.find(self.cut(key), Find::Insert, Inserter::ANYWHERE, init)
    }

    /// Finds the element of `key` without inserting it: C's
    /// `tracing_map_lookup()`.  Counts no hit; like C, it counts a drop
    /// when it gives up waiting for an element being published.
    #[inline]
    pub fn lookup(&self, key: &[u8]) -> Option<Elt<'a>> {
        self.find(self.cut(key), Find::Lookup, Inserter::ANYWHERE, |_| {})
    }

    /// `key` cut to the key size.
    #[inline(always)]
    fn cut<'k>(&self, key: &'k [u8]) -> &'k [u8] {
        key.get(..self.g.params.key_size).unwrap_or(key)
    }

    #[inline]
    fn count(&self, which: usize) {
        self.header[which].fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a drop of the key whose hash is `h`.
    #[inline]
    fn count_drop(&self, h: u32) {
        // Not the lowest bit: it is always 1.
        self.count(DROPS + ((h >> 1) as usize % DROP_LINES) * LINE_WORDS);
    }

    /// Finds (or inserts) the element of `key`. The entries up to the
    /// first free one are looked at here, inline: an event whose key is
    /// in the map finds it there, and so does a drop from a full map. The
    /// first entry is looked at before the loop, since most events find
    /// their key there ([`find_first`](Self::find_first), then
    /// [`find_further`](Self::find_further)). The rest (claiming a free
    /// entry, waiting for one being published) is [`probe`](Self::probe),
    /// from the start again.
    #[inline]
    fn find<K: MapKey>(
        &self,
        key: K,
        how: Find,
        who: Inserter,
        init: impl FnOnce(&Elt<'a>),
    ) -> Option<Elt<'a>> {
        self.find_idx(key, how, who, init).and_then(|i| self.elt(i))
    }

    /// [`find`](Self::find), giving the element's index: an event path
    /// that only adds to sums takes them with [`cpu_sums`](Self::cpu_sums),
    /// without making the rest of an [`Elt`].
    #[inline]
    fn find_idx<K: MapKey>(
        &self,
        key: K,
        how: Find,
        who: Inserter,
        init: impl FnOnce(&Elt<'a>),
    ) -> Option<u32> {
        let h = key.hash(self.key_words::<K>());
        let start = self.start(h);
        let first = match self.find_first(key, h, how) {
            First::Further => self.find_further(key, h, start, how),
            first => first,
        };
        match first {
            First::Found(i) => Some(i),
            First::Absent => None,
            First::Further | First::Probe => self.probe(key, h, start, how, who, init),
        }
    }

    /// The entry where the probe of a key whose hash is `h` starts: the
    /// hash's top `bits + 1` bits, below `map_size`.
    #[inline(always)]
    fn start(&self, h: u32) -> usize {
        // start_shift < 32 (bits is at most 17).
        h.wrapping_shr(self.g.start_shift) as usize
    }

    /// The look-up of `key`, whose hash is `h`, at the entry where its
    /// probe starts (counting the hit if `how` says so).
    ///
    /// An entry with the hash that publishes no element (pending or dead)
    /// gives an index past the elements, whose key [`holds`](Self::holds)
    /// rejects: one test for both on the common path.
    #[inline(always)]
    fn find_first<K: MapKey>(&self, key: K, h: u32, how: Find) -> First {
        let Some(entry) = self.entries.get(self.start(h)) else {
            return First::Further;
        };
        // Acquire: as in `probe()`.
        let e = entry.load(Ordering::Acquire);
        if e as u32 != h {
            return match e {
                0 => self.at_free(h, how),
                _ => First::Further,
            };
        }
        let n = (e >> 32) as u32;
        if self.holds(n.wrapping_sub(1), key, self.key_words::<K>()) {
            if how == Find::Insert {
                self.count(HITS);
            }
            return First::Found(n.wrapping_sub(1));
        }
        match n {
            // Being inserted, maybe with this key: `probe()` waits for it.
            // So it does for an entry claimed on a CPU (not tested here,
            // to keep the inline path short): `find_further()` sends the
            // look-up there, from a free entry or none.
            PENDING => First::Probe,
            _ => First::Further,
        }
    }

    /// What a look-up of a key whose hash is `h` does at a free entry: a
    /// key is never behind one (with no element left nothing is inserted,
    /// and a lookup is done), so it is [`First::Absent`] unless an insert
    /// can insert.
    #[inline(always)]
    fn at_free(&self, h: u32, how: Find) -> First {
        if how == Find::Lookup {
            return First::Absent;
        }
        if self.header[NEXT_ELT].load(Ordering::Relaxed) >= self.g.max_elts as u64 {
            self.count_drop(h);
            return First::Absent;
        }
        First::Probe
    }

    /// The look-up of `key`, whose hash is `h`, after entry `start`,
    /// where its probe starts and which holds another key, up to a free
    /// entry or the first with the key's hash (counting the hit if `how`
    /// says so). Never [`First::Further`]; what is left is
    /// [`probe`](Self::probe)'s, from `start` again: an entry with the
    /// hash that holds another key (two keys of one 32-bit hash), or none
    /// yet, is rare, and left to it.
    ///
    /// The entries after `start`, then those before it, each walked by
    /// a pointer to its end: fewer registers than an index that wraps
    /// and a count, and no key compared in the loop. On the event path
    /// ([`insert_further_uncounted`](Self::insert_further_uncounted)),
    /// that leaves the caller's registers alone.
    #[inline(always)]
    fn find_further<K: MapKey>(&self, key: K, h: u32, start: usize, how: Find) -> First {
        // One test for both slices (`start` is below `map_size`).
        let Some((before, after)) = self.entries.split_at_checked(start) else {
            return First::Probe;
        };
        let after = after.get(1..).unwrap_or(&[]);
        let stop = |e: &AtomicU64| {
            // Acquire: as in `probe()`.
            let e = e.load(Ordering::Acquire);
            (e == 0 || e as u32 == h).then_some(e)
        };
        let Some(e) = after
            .iter()
            .find_map(stop)
            .or_else(|| before.iter().find_map(stop))
        else {
            return First::Probe;
        };
        if e == 0 {
            return self.at_free(h, how);
        }
        let n = (e >> 32) as u32;
        // A pending or dead entry's index is past the elements: no key.
        if e as u32 != h || !self.holds(n.wrapping_sub(1), key, self.key_words::<K>()) {
            return First::Probe;
        }
        if how == Find::Insert {
            self.count(HITS);
        }
        First::Found(n.wrapping_sub(1))
    }

    /// The probe loop of [`find`](Self::find), from entry `idx` where `key`
    /// (whose hash is `h`) starts: the index of its element. An index, not
    /// an [`Elt`], so that the inline paths of `find()` keep theirs in
    /// registers rather than in the memory this call would return it in.
    #[inline(never)]
    fn probe<K: MapKey>(
        &self,
        key: K,
        h: u32,
        mut idx: usize,
        how: Find,
        who: Inserter,
        init: impl FnOnce(&Elt<'a>),
    ) -> Option<u32> {
        let mask = self.g.map_size.wrapping_sub(1);
        let mut dup_try = 0usize;
        let mut other_cpu_waits = 0u32;
        let mut probes = 0usize;
        let claimed = who.pending_state();

        loop {
            idx &= mask;
            let entry = &self.entries[idx];
            // Acquire: pairs with the Release that publishes an element, so
            // its key words read below are the ones written for it.
            let e = entry.load(Ordering::Acquire);
            let entry_hash = e as u32;

            if entry_hash == 0 {
                if how == Find::Lookup {
                    return None;
                }
                // No element left: drop now rather than claim (and kill) an
                // entry.  A key already in the map is never behind a free
                // entry, so this does not lose existing keys.
                if self.header[NEXT_ELT].load(Ordering::Relaxed) >= self.g.max_elts as u64 {
                    self.count_drop(h);
                    return None;
                }
                // Relaxed: only the atomicity matters, the winner owns the
                // entry; nothing is published by this write.
                let pending = h as u64 | u64::from(claimed) << 32;
                match entry.compare_exchange(0, pending, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => return self.fill(entry, h, key, how, init),
                    Err(_) => {
                        // Someone claimed it first: look again at what.
                        dup_try += 1;
                        if dup_try > self.g.map_size {
                            self.count_drop(h);
                            return None;
                        }
                        continue;
                    }
                }
            }

            if entry_hash == h {
                match (e >> 32) as u32 {
                    DEAD => {}
                    // Being inserted, maybe with our key: wait for it.
                    s if is_pending(s) && s != PENDING && claimed != PENDING => {
                        // Claimed on this CPU: by the context this one
                        // interrupted, which cannot publish until this
                        // returns. On another: it publishes meanwhile.
                        other_cpu_waits += 1;
                        if s == claimed || other_cpu_waits > OTHER_CPU_WAITS {
                            self.count_drop(h);
                            return None;
                        }
                        pause();
                        continue;
                    }
                    s if is_pending(s) => {
                        // Where it runs is not known: as C, wait only so
                        // long (the inserter may be the context this one
                        // interrupted).
                        dup_try += 1;
                        if dup_try > self.g.map_size {
                            self.count_drop(h);
                            return None;
                        }
                        spin();
                        continue;
                    }
                    n => {
                        if self.holds(n - 1, key, self.key_words::<K>()) {
                            if how == Find::Insert {
                                self.count(HITS);
                            }
                            return Some(n - 1);
                        }
                    }
                }
            }

            idx += 1;
            probes += 1;
            if probes >= self.g.map_size {
                self.count_drop(h);
                return None;
            }
        }
    }

    /// Gives the entry just claimed an element and publishes it.
    #[inline]
    fn fill(
        &self,
        entry: &AtomicU64,
        h: u32,
        key: impl MapKey,
        how: Find,
        init: impl FnOnce(&Elt<'a>),
    ) -> Option<u32> {
        // Relaxed: each index is handed out once; the element's contents
        // are ordered by the publishing store below.
        let i = self.header[NEXT_ELT].fetch_add(1, Ordering::Relaxed);
        let elt = match i < self.g.max_elts as u64 {
            true => self.elt(i as u32),
            false => None,
        };
        let Some(elt) = elt else {
            // Keep the hash so probes go on past this entry; readers skip
            // dead entries.  Nothing to publish: Relaxed.
            entry.store(h as u64 | (DEAD as u64) << 32, Ordering::Relaxed);
            self.count_drop(h);
            return None;
        };
        key.store(elt.key_slots());
        init(&elt);
        // Release: the key words and whatever `init` wrote happen before
        // any Acquire load that sees this index.
        entry.store(h as u64 | (i + 1) << 32, Ordering::Release);
        if how == Find::Insert {
            self.count(HITS);
        }
        Some(elt.idx)
    }

    /// Whether element `idx` holds `key`, of `words` words: only its key
    /// is read (the rest of it is apart).
    #[inline(always)]
    fn holds(&self, idx: u32, key: impl MapKey, words: usize) -> bool {
        // Neither overflows, as both factors are below 2^32: one bounds
        // check.
        let k = u64::from(idx).wrapping_mul(self.g.key_stride as u32 as u64) as usize;
        self.keys
            .get(k..k.wrapping_add(words))
            .is_some_and(|slots| key.matches(slots))
    }

    /// The element with index `idx`, published or not; `None` past
    /// `max_elts`.  Meant for indices from [`sort_entries`](Self::sort_entries)
    /// or [`Elt::index`].
    #[inline]
    pub fn elt(&self, idx: u32) -> Option<Elt<'a>> {
        // None overflows: idx < 2^32, strides and sizes are small.
        let k = (idx as usize).wrapping_mul(self.g.key_stride);
        let d = (idx as usize).wrapping_mul(self.g.data_stride);
        let key = self
            .keys
            .get(k..k.wrapping_add(self.g.layout.key_words as usize))?;
        let data = self
            .data
            .get(d..d.wrapping_add(self.g.layout.data_words()))?;
        let s = (idx as usize).wrapping_mul(self.g.sum_stride);
        let sums = self
            .sums
            .get(s..s.wrapping_add(self.g.layout.sums_span()))?;
        Some(Elt {
            key,
            data,
            sums,
            layout: self.g.layout,
            idx,
        })
    }

    /// Resets the map to empty: C's `tracing_map_clear()`.
    ///
    /// The caller must make sure that no insert runs meanwhile and that the
    /// clearing happens before later inserts (C pauses the trigger and waits
    /// for running events).  If that is not so, counts and sums come out
    /// wrong, but nothing worse happens.  Readers may run meanwhile and see
    /// a partly cleared map.
    pub fn clear(&self) {
        for e in self.entries {
            e.store(0, Ordering::Relaxed);
        }
        // Only handed-out elements were written to; keys are overwritten
        // when an element is handed out again.
        for i in 0..self.len() {
            if let Some(elt) = self.elt(i as u32) {
                for w in elt.data {
                    w.store(0, Ordering::Relaxed);
                }
                for cpu in 0..elt.layout.n_cpus {
                    for sum in 0..elt.layout.n_sums {
                        if let Some(w) = elt.sum_of(cpu, sum as usize) {
                            w.store(0, Ordering::Relaxed);
                        }
                    }
                }
            }
        }
        self.header[NEXT_ELT].store(0, Ordering::Relaxed);
        self.header[HITS].store(0, Ordering::Relaxed);
        for line in 0..DROP_LINES {
            self.header[DROPS + line * LINE_WORDS].store(0, Ordering::Relaxed);
        }
    }

    /// Folds every published element of this map into `dst` (rhist's
    /// `:grow`): its key is found or inserted there, each CPU's copy of
    /// each sum is added to `dst`'s copy of that CPU (CPU 0's when `dst`
    /// keeps none for it), or raised to it where `is_max(i)` says the sum
    /// is a maximum, and its private words replace `dst`'s (this map's
    /// entry is the older, and its first event saved them). A newly
    /// inserted element also gets this map's variables. This map's hits
    /// and drops are added to `dst`'s.
    ///
    /// `dst` must have the same key size, sums, variables and private
    /// words (any `bits`, any CPUs); otherwise nothing is done. Events may
    /// update `dst` meanwhile (no count is lost: both add), but none may
    /// update this map: the caller waits for them first.
    ///
    /// Calls `lost(elt)` for each element `dst` has no room for (its sums
    /// are then not moved); returns how many were moved.
    pub fn fold_into(
        &self,
        dst: &TracingMap<'_>,
        is_max: impl Fn(usize) -> bool,
        mut lost: impl FnMut(&Elt<'a>),
    ) -> Result<usize, MapError> {
        let (a, b) = (self.g.params, dst.g.params);
        if a.key_size != b.key_size
            || a.n_sums != b.n_sums
            || a.n_vars != b.n_vars
            || a.n_private != b.n_private
        {
            return Err(MapError::BadKeySize);
        }
        if a.key_size > FOLD_KEY_MAX {
            return Err(MapError::BadKeySize);
        }
        let mut key = [0u8; FOLD_KEY_MAX];
        let key = &mut key[..a.key_size];
        let (mut moved, mut spare) = (0, None);
        for src in self.iter() {
            src.copy_key(key);
            let init = |new: &Elt<'_>| {
                // The words after the sums, each in its own layout.
                let from = &src.data[src.layout.flags_off()..];
                let to = new.data.get(new.layout.flags_off()..).unwrap_or(&[]);
                for (d, s) in to.iter().zip(from) {
                    d.store(s.load(Ordering::Relaxed), Ordering::Relaxed);
                }
            };
            let Some(new) = dst.fold_insert(key, init, &mut spare) else {
                lost(&src);
                continue;
            };
            for (d, s) in new.private_words().iter().zip(src.private_words()) {
                d.store(s.load(Ordering::Relaxed), Ordering::Relaxed);
            }
            for cpu in 0..src.layout.n_cpus {
                let to = if cpu < new.layout.n_cpus { cpu } else { 0 };
                for i in 0..src.n_sums() {
                    let (Some(s), Some(d)) = (src.sum_of(cpu, i), new.sum_of(to, i)) else {
                        continue;
                    };
                    let n = s.load(Ordering::Relaxed);
                    if is_max(i) {
                        raise(d, n);
                    } else if n != 0 {
                        d.fetch_add(n, Ordering::Relaxed);
                    }
                }
            }
            moved += 1;
        }
        dst.add_count(HITS, self.hits());
        dst.add_drops(self.drops());
        Ok(moved)
    }

    /// [`fold_into`](Self::fold_into)'s insert of `key`, which events may
    /// be inserting meanwhile. Unlike an event's insert, it never leaves a
    /// claimed entry pending: it fills an element first, `spare`, then
    /// claims a free entry and publishes that element in one
    /// compare-and-swap. An event that comes to the key meanwhile (on
    /// another CPU, or interrupting the fold on this one) finds it absent
    /// or published, never an entry to wait for and give up on (a drop).
    ///
    /// It waits instead for the entries events left pending, which an
    /// event publishes a few stores later, up to a bound no event takes.
    /// When an event inserted the key first, that element is found and
    /// `spare`, filled for nothing, is kept for the next key: a fold
    /// leaves at most one element unused, which [`len`](Self::len)
    /// counts. `None` when the map is full.
    fn fold_insert(
        &self,
        key: &[u8],
        init: impl Fn(&Elt<'a>),
        spare: &mut Option<u32>,
    ) -> Option<Elt<'a>> {
        const TRIES: u32 = 1 << 20;
        let h = key.hash(self.key_words::<&[u8]>());
        let mask = self.g.map_size.wrapping_sub(1);
        let mut idx = self.start(h);
        let (mut probes, mut waits) = (0usize, 0u32);
        loop {
            idx &= mask;
            let entry = self.entries.get(idx)?;
            // Acquire: as in `probe()`.
            let e = entry.load(Ordering::Acquire);
            if e == 0 {
                // The key is not behind a free entry: fill an element and
                // publish it here.
                let i = match *spare {
                    Some(i) => i,
                    None => self.take_elt()?,
                };
                *spare = Some(i);
                let elt = self.elt(i)?;
                key.store(elt.key_slots());
                init(&elt);
                // Release: as `fill()`'s publication.
                let published = h as u64 | (u64::from(i) + 1) << 32;
                if entry
                    .compare_exchange(0, published, Ordering::Release, Ordering::Relaxed)
                    .is_ok()
                {
                    *spare = None;
                    return Some(elt);
                }
                // An event claimed it first: look again at what.
                continue;
            }
            if e as u32 == h {
                match (e >> 32) as u32 {
                    s if is_pending(s) => {
                        waits += 1;
                        if waits >= TRIES {
                            return None;
                        }
                        pause();
                        continue;
                    }
                    DEAD => {}
                    n if self.holds(n - 1, key, self.key_words::<&[u8]>()) => {
                        return self.elt(n - 1);
                    }
                    _ => {}
                }
            }
            idx += 1;
            probes += 1;
            if probes >= self.g.map_size {
                return None;
            }
        }
    }

    /// An element that no entry publishes yet, for
    /// [`fold_insert`](Self::fold_insert); `None` when none is left.
    fn take_elt(&self) -> Option<u32> {
        let max = self.g.max_elts as u64;
        if self.header[NEXT_ELT].load(Ordering::Relaxed) >= max {
            return None;
        }
        // Relaxed: as in `fill()`.
        let i = self.header[NEXT_ELT].fetch_add(1, Ordering::Relaxed);
        u32::try_from(i).ok().filter(|_| i < max)
    }

    /// Adds `n` to the drops (what a fold could not move, say).
    pub fn add_drops(&self, n: u64) {
        self.add_count(DROPS, n);
    }

    fn add_count(&self, which: usize, n: u64) {
        if n != 0 {
            self.header[which].fetch_add(n, Ordering::Relaxed);
        }
    }

    /// The published elements, in hash table order.  Safe while inserts
    /// go on: an element is yielded once its key is complete.
    pub fn iter(&self) -> Iter<'a> {
        Iter { map: *self, pos: 0 }
    }

    /// Writes the indices of the published elements, in hash table order,
    /// to the front of `out` and returns how many; stops when `out` is
    /// full (`max_elts` entries always suffice).
    pub fn collect_entries(&self, out: &mut [u32]) -> usize {
        let mut n = 0;
        for (slot, elt) in out.iter_mut().zip(self.iter()) {
            *slot = elt.idx;
            n += 1;
        }
        n
    }

    /// C's `tracing_map_sort_entries()`: collects the published elements
    /// into `out` (see [`collect_entries`](Self::collect_entries)) and sorts
    /// them by `keys` (at most [`SORT_KEYS_MAX`] are used; none leaves them
    /// in key byte order).  Returns how many there are: `out[..n]`.
    ///
    /// Equal entries come out in the order C gives them.  Sums are read as
    /// the sort goes, so with inserts going on the order is approximate, as
    /// in C.
    pub fn sort_entries(&self, keys: &[SortKey], out: &mut [u32]) -> usize {
        self.sort_entries_by(keys, &|_, _, _| (0, 0), out)
    }

    /// [`sort_entries`](Self::sort_entries), with `external(value, which,
    /// idx)` the number of element `idx` that a [`SortField::External`]
    /// key compares.
    pub fn sort_entries_by(
        &self,
        keys: &[SortKey],
        external: &External<'_>,
        out: &mut [u32],
    ) -> usize {
        let n = self.collect_entries(out);
        let v = &mut out[..n];
        if n < 2 {
            return n;
        }
        // detect_dups(): by memcmp() of the whole key.
        kernel_heapsort(v, &mut |a, b| self.cmp_key_bytes(a, b));
        let Some(primary) = keys.first() else {
            return n;
        };
        kernel_heapsort(v, &mut |a, b| self.cmp_sort_key(primary, external, a, b));
        // C sorts the runs equal on the first key by the second; each
        // further key (rhist's extension) sorts the runs equal on all
        // the keys before it the same way.
        let keys = keys.get(..SORT_KEYS_MAX).unwrap_or(keys);
        for i in 1..keys.len() {
            let (before, rest) = keys.split_at(i);
            let Some(next) = rest.first() else { break };
            let mut before_cmp = |a, b| self.cmp_sort_keys(before, external, a, b);
            let mut next_cmp = |a, b| self.cmp_sort_key(next, external, a, b);
            sort_secondary(v, &mut before_cmp, &mut next_cmp);
        }
        n
    }

    /// Compares two elements by `keys` in order, the first unequal
    /// deciding.
    fn cmp_sort_keys(
        &self,
        keys: &[SortKey],
        external: &External<'_>,
        a: u32,
        b: u32,
    ) -> CmpOrdering {
        keys.iter()
            .map(|k| self.cmp_sort_key(k, external, a, b))
            .find(|o| o.is_ne())
            .unwrap_or(CmpOrdering::Equal)
    }

    /// memcmp() of two elements' keys.
    fn cmp_key_bytes(&self, a: u32, b: u32) -> CmpOrdering {
        let (Some(a), Some(b)) = (self.elt(a), self.elt(b)) else {
            return CmpOrdering::Equal;
        };
        for (x, y) in a.key_slots().iter().zip(b.key_slots()) {
            // Byte order of memory as a big-endian number: memcmp() order.
            let x = u64::from_be_bytes(x.load(Ordering::Relaxed).to_ne_bytes());
            let y = u64::from_be_bytes(y.load(Ordering::Relaxed).to_ne_bytes());
            match x.cmp(&y) {
                CmpOrdering::Equal => {}
                o => return o,
            }
        }
        CmpOrdering::Equal
    }

    /// Compares two elements by one sort key (C's `cmp_entries_sum()` and
    /// `cmp_entries_key()`).
    fn cmp_sort_key(&self, key: &SortKey, external: &External<'_>, a: u32, b: u32) -> CmpOrdering {
        let o = match key.field {
            SortField::External {
                value,
                which,
                signed,
            } => {
                let (x, y) = (external(value, which, a), external(value, which, b));
                match signed {
                    true => (x.0 as i64, x.1 as i64).cmp(&(y.0 as i64, y.1 as i64)),
                    false => x.cmp(&y),
                }
            }
            _ => {
                let (Some(a), Some(b)) = (self.elt(a), self.elt(b)) else {
                    return CmpOrdering::Equal;
                };
                key.field.compare(&a, &b)
            }
        };
        if key.descending {
            o.reverse()
        } else {
            o
        }
    }
}

/// The numbers [`SortField::External`] keys compare, per `(value, which,
/// element)`: `(low, high)`.
pub type External<'e> = dyn Fn(usize, usize, u32) -> (u64, u64) + 'e;

/// What to sort on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortField {
    /// Sum `i`, as u64 (C's `tracing_map_cmp_atomic64()`).
    Sum(usize),
    /// A number of `size` bytes at byte `offset` of the key, in native byte
    /// order (C's `tracing_map_cmp_num()`).  Sizes other than 1, 2, 4 and 8
    /// compare equal, as C's `tracing_map_cmp_none()`.
    KeyNum {
        /// Byte offset in the key.
        offset: usize,
        /// 1, 2, 4 or 8.
        size: usize,
        /// Whether the number is signed.
        signed: bool,
    },
    /// A NUL-terminated string at byte `offset` of the key, compared as
    /// `strcmp()` does (C's `tracing_map_cmp_string()`); the end of the key
    /// ends it too.
    KeyStr {
        /// Byte offset in the key.
        offset: usize,
    },
    /// Everything compares equal (C's `tracing_map_cmp_none()`, which the
    /// hist code uses for stacktrace keys).
    None,
    /// A number the caller of [`TracingMap::sort_entries_by`] computes
    /// per entry, `(low, high)` (a range, or the same twice), from
    /// `value` and `which` (rhist's `sort=lat.p99`: a quantile of an
    /// entry's sketch); compared as `i64`s when `signed`.
    External {
        /// The caller's value.
        value: usize,
        /// The caller's choice within it.
        which: usize,
        /// Compared as signed.
        signed: bool,
    },
    /// A statistic (rhist's, [`super::stats`]): sum `sum` divided by sum
    /// 0, the hitcount, when `per_hit` ([`super::stats::per_hit`], an
    /// `.avg`), else the maximum `sum` (as [`Elt::read_max`] reads it)
    /// `^ xor` (a `.min` or `.max`); compared as an `i64` when `signed`.
    Stat {
        /// The sum.
        sum: usize,
        /// What a maximum's value is encoded with.
        xor: u64,
        /// A sum over the hitcount, rather than a maximum.
        per_hit: bool,
        /// Compared as signed.
        signed: bool,
    },
}

impl SortField {
    fn compare(&self, a: &Elt<'_>, b: &Elt<'_>) -> CmpOrdering {
        match *self {
            SortField::Sum(i) => a.read_sum(i).cmp(&b.read_sum(i)),
            SortField::KeyNum {
                offset,
                size,
                signed,
            } => {
                let (Some(x), Some(y)) = (a.key_num(offset, size), b.key_num(offset, size)) else {
                    return CmpOrdering::Equal;
                };
                // Sign-extend from `size` bytes when signed.
                let shift = 64 - 8 * size as u32;
                if signed {
                    ((x << shift) as i64 >> shift).cmp(&((y << shift) as i64 >> shift))
                } else {
                    x.cmp(&y)
                }
            }
            SortField::KeyStr { offset } => {
                let mut i = offset;
                loop {
                    let x = a.key_byte(i).unwrap_or(0);
                    let y = b.key_byte(i).unwrap_or(0);
                    if x != y {
                        return x.cmp(&y);
                    }
                    if x == 0 {
                        return CmpOrdering::Equal;
                    }
                    i += 1;
                }
            }
            // [`TracingMap::sort_entries_by`] compares these itself.
            SortField::None | SortField::External { .. } => CmpOrdering::Equal,
            SortField::Stat {
                sum,
                xor,
                per_hit,
                signed,
            } => {
                let value = |e: &Elt<'_>| match per_hit {
                    true => stats::per_hit(e.read_sum(sum), e.read_sum(0), signed),
                    false => e.read_max(sum) ^ xor,
                };
                let (x, y) = (value(a), value(b));
                if signed {
                    (x as i64).cmp(&(y as i64))
                } else {
                    x.cmp(&y)
                }
            }
        }
    }
}

/// One sort key: a field and a direction (C's `tracing_map_sort_key`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortKey {
    /// What to compare.
    pub field: SortField,
    /// Largest first.
    pub descending: bool,
}

impl SortKey {
    /// Ascending on `field`.
    pub const fn ascending(field: SortField) -> Self {
        SortKey {
            field,
            descending: false,
        }
    }

    /// Descending on `field`.
    pub const fn descending(field: SortField) -> Self {
        SortKey {
            field,
            descending: true,
        }
    }
}

/// The kernel's `sort()` (`lib/sort.c`, 6.12): a bottom-up heapsort that
/// takes the two largest elements at a time.  Not stable; reproduced step
/// by step so that equal elements end up where C puts them.
fn kernel_heapsort(v: &mut [u32], cmp: &mut impl FnMut(u32, u32) -> CmpOrdering) {
    let parent = |i: usize| (i - 1) / 2;
    let mut n = v.len();
    let mut a = n / 2;
    let mut shift = 0;
    if a == 0 {
        return;
    }
    loop {
        if a != 0 {
            // Building the heap: sift down `a`.
            a -= 1 << shift;
        } else if n > 3 {
            // Sorting: take the two largest elements.
            n -= 1;
            v.swap(0, n);
            shift = (cmp(v[1], v[2]) != CmpOrdering::Greater) as usize;
            a = 1 << shift;
            n -= 1;
            v.swap(a, n);
        } else {
            break;
        }
        // Find the leaf the sift-down would end at...
        let mut b = a;
        let mut c;
        let mut d;
        loop {
            c = 2 * b + 1;
            d = c + 1;
            if d >= n {
                break;
            }
            b = if cmp(v[c], v[d]) == CmpOrdering::Greater {
                c
            } else {
                d
            };
        }
        if d == n {
            b = c;
        }
        // ...back up to where `a` belongs, and rotate it there.
        while b != a && cmp(v[a], v[b]) != CmpOrdering::Less {
            b = parent(b);
        }
        c = b;
        while b != a {
            b = parent(b);
            v.swap(b, c);
        }
    }
    n -= 1;
    v.swap(0, n);
    if n == 2 && cmp(v[0], v[1]) == CmpOrdering::Greater {
        v.swap(0, 1);
    }
}

/// C's `sort_secondary()`: sorts each run of entries equal on the primary
/// key by the secondary key.
fn sort_secondary(
    v: &mut [u32],
    primary: &mut impl FnMut(u32, u32) -> CmpOrdering,
    secondary: &mut impl FnMut(u32, u32) -> CmpOrdering,
) {
    let n = v.len();
    let mut start = 0;
    let mut n_sub = 1;
    for i in 0..n.saturating_sub(1) {
        if primary(v[i], v[i + 1]) == CmpOrdering::Equal {
            n_sub += 1;
            if i < n - 2 {
                continue;
            }
        }
        if n_sub < 2 {
            start = i + 1;
            n_sub = 1;
            continue;
        }
        kernel_heapsort(&mut v[start..start + n_sub], secondary);
        start = i + 1;
        n_sub = 1;
    }
}

/// Iterator over the published elements of a map, in hash table order.
#[derive(Clone)]
pub struct Iter<'a> {
    map: TracingMap<'a>,
    pos: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = Elt<'a>;

    fn next(&mut self) -> Option<Elt<'a>> {
        while let Some(entry) = self.map.entries.get(self.pos) {
            self.pos += 1;
            // Acquire: see `TracingMap::find`.
            let e = entry.load(Ordering::Acquire);
            let state = (e >> 32) as u32;
            if e as u32 != 0 && !is_pending(state) && state != DEAD {
                if let Some(elt) = self.map.elt(state - 1) {
                    return Some(elt);
                }
            }
        }
        None
    }
}

/// Raises `s` to `n` if it is below: an atomic maximum, after a load that
/// spares the write (and the locked instruction) when it is not.
/// NMI-safe: an update of `s` between the load and the maximum (an NMI's,
/// on this CPU) only makes the maximum change less, or nothing.
#[inline(always)]
pub fn raise(s: &AtomicU64, n: u64) {
    // Relaxed, as the sums: a maximum only grows until the map is
    // cleared, so a stale load only costs a `fetch_max()` that changes
    // nothing.
    if n > s.load(Ordering::Relaxed) {
        s.fetch_max(n, Ordering::Relaxed);
    }
}

/// Finds the element whose sums (of any CPU) a slice of a map's storage
/// starts in, as [`TracingMap::cpu_sums`] gives them, or a slice of them,
/// from where it is: code handed an element's sums can find its other
/// parts. A mask and a shift: for a map whose strides are powers of two.
#[derive(Clone, Copy, Debug)]
pub struct SumsIndex {
    /// The address of the map's first sum.
    base: usize,
    /// The bytes of the sums.
    bytes: usize,
    /// The distance between two CPUs' copies, in bytes, less one; all
    /// ones for one copy.
    mask: usize,
    /// The distance between two elements' sums is `1 << shift` bytes.
    shift: u32,
    /// `mask` without the bits below `1 << shift`.
    elt_mask: usize,
}

impl SumsIndex {
    /// One that finds element 0 everywhere, for no map.
    pub const NONE: SumsIndex = SumsIndex {
        base: 0,
        bytes: 0,
        mask: 0,
        shift: 0,
        elt_mask: 0,
    };

    /// The element whose sums `sums` starts in; `None` for a slice
    /// elsewhere.
    #[inline(always)]
    pub fn elt(&self, sums: &[AtomicU64]) -> Option<u32> {
        let at = (sums.as_ptr() as usize).wrapping_sub(self.base);
        if at >= self.bytes {
            return None;
        }
        u32::try_from((at & self.mask) >> self.shift).ok()
    }

    /// The multiplier of [`elt_times`](Self::elt_times) for `k`, if
    /// there is one: `k << (16 - shift)`, with no product overflowing.
    pub fn times(&self, k: usize) -> Option<usize> {
        let m = k.checked_shl(16u32.checked_sub(self.shift)?)?;
        self.bytes.checked_mul(m)?;
        Some(m)
    }

    /// `elt(sums) * k` without [`elt`](Self::elt)'s checks, `m` being
    /// [`times`](Self::times)`(k)`: the element of a slice of the map's
    /// sums, times `k`; any number for a slice elsewhere, which the
    /// caller bounds-checks wherever it uses it. A mask, a multiply and a
    /// constant shift.
    #[inline(always)]
    pub fn elt_times(&self, sums: &[AtomicU64], m: usize) -> usize {
        let at = (sums.as_ptr() as usize).wrapping_sub(self.base);
        // The bits below the element's sums cleared: `elt << shift`.
        (at & self.elt_mask).wrapping_mul(m) >> 16
    }
}

/// One CPU's copy of one element's sums (the only copy, when the CPUs
/// share them): what the event path adds to.
#[derive(Clone, Copy, Debug)]
pub struct CpuSums<'a>(&'a [AtomicU64]);

impl<'a> CpuSums<'a> {
    /// The sums, in order, to add to atomically (see
    /// [`Elt::update_sum_on`]).
    #[inline(always)]
    pub fn words(&self) -> &'a [AtomicU64] {
        self.0
    }

    /// Adds `n` to sum `i` (ignored out of range): see
    /// [`Elt::update_sum_on`].
    #[inline(always)]
    pub fn add(&self, i: usize, n: u64) {
        if let Some(s) = self.0.get(i) {
            s.fetch_add(n, Ordering::Relaxed);
        }
    }
}

/// One element of a map: its key, sums, variables and private words.
///
/// Obtained from [`TracingMap::insert`] and friends; valid as long as the
/// map's storage is, but after a [`TracingMap::clear`] it may belong to
/// another key.
#[derive(Clone, Copy)]
pub struct Elt<'a> {
    key: &'a [AtomicU64],
    data: &'a [AtomicU64],
    /// Its sums: CPU 0's, then each next CPU's `layout.cpu_stride` on.
    sums: &'a [AtomicU64],
    layout: EltLayout,
    idx: u32,
}

impl core::fmt::Debug for Elt<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Elt").field("idx", &self.idx).finish()
    }
}

impl<'a> Elt<'a> {
    /// The element's index in the map (for [`TracingMap::elt`]).
    pub fn index(&self) -> u32 {
        self.idx
    }

    fn key_slots(&self) -> &'a [AtomicU64] {
        self.key
    }

    /// The key size in bytes, as given in [`MapParams`].
    pub fn key_size(&self) -> usize {
        self.layout.key_size as usize
    }

    /// Word `i` of the key (native byte order); 0 past the key.
    pub fn key_word(&self, i: usize) -> u64 {
        self.key_slots()
            .get(i)
            .map_or(0, |w| w.load(Ordering::Relaxed))
    }

    /// Byte `i` of the key, `None` past the key (rounded up to 8 bytes).
    pub fn key_byte(&self, i: usize) -> Option<u8> {
        let w = self.key_slots().get(i / 8)?.load(Ordering::Relaxed);
        Some(w.to_ne_bytes()[i % 8])
    }

    /// `size` (1, 2, 4 or 8) key bytes at `offset` as a native-endian
    /// unsigned number; `None` for other sizes or past the key.
    pub fn key_num(&self, offset: usize, size: usize) -> Option<u64> {
        if !matches!(size, 1 | 2 | 4 | 8) {
            return None;
        }
        let mut b = [0u8; 8];
        for (j, out) in b[..size].iter_mut().enumerate() {
            *out = self.key_byte(offset + j)?;
        }
        Some(match size {
            1 => b[0] as u64,
            2 => u16::from_ne_bytes([b[0], b[1]]) as u64,
            4 => u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as u64,
            _ => u64::from_ne_bytes(b),
        })
    }

    /// Copies the key to `out` (as many bytes as fit, at most the key size);
    /// returns how many bytes were copied.
    pub fn copy_key(&self, out: &mut [u8]) -> usize {
        let n = out.len().min(self.key_size());
        for (i, chunk) in out[..n].chunks_mut(8).enumerate() {
            let w = self.key_word(i).to_ne_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
        n
    }

    /// Whether the key equals `key` (zero padded or cut to the key size).
    #[inline]
    pub fn key_eq(&self, key: &[u8]) -> bool {
        self.key_is(key.get(..self.key_size()).unwrap_or(key), self.key_words())
    }

    /// Whether the key equals `key`, which has `words` words (the map's).
    #[inline]
    fn key_is(&self, key: impl MapKey, words: usize) -> bool {
        self.key
            .get(..words)
            .is_some_and(|slots| key.matches(slots))
    }

    fn key_words(&self) -> usize {
        self.layout.key_words as usize
    }

    /// CPU `cpu`'s copy of sum `i`; `None` out of range.
    #[inline]
    fn sum_of(&self, cpu: u32, i: usize) -> Option<&'a AtomicU64> {
        let words: &'a [AtomicU64] = self.sums;
        match i < self.layout.n_sums as usize && cpu < self.layout.n_cpus {
            // Does not overflow: cpu < n_cpus, and the copies fit in
            // memory.
            true => words.get(cpu as usize * self.layout.cpu_stride as usize + i),
            false => None,
        }
    }

    #[inline]
    fn var(&self, i: usize) -> Option<&'a AtomicU64> {
        let words: &'a [AtomicU64] = self.data;
        match i < self.layout.n_vars as usize {
            true => words.get(self.layout.vars_off() + i),
            false => None,
        }
    }

    fn var_flags(&self) -> Option<&'a AtomicU64> {
        let words: &'a [AtomicU64] = self.data;
        match self.layout.n_vars {
            0 => None,
            _ => words.get(self.layout.flags_off()),
        }
    }

    /// The number of sums.
    pub fn n_sums(&self) -> usize {
        self.layout.n_sums as usize
    }

    /// Adds `n` to sum `i` (C's `tracing_map_update_sum()`), in the copy
    /// of CPU `cpu`, the one the caller runs on; ignores an `i` out of
    /// range. A `cpu` the map has no copy for adds to CPU 0's.
    ///
    /// The add is atomic, not only because readers and [`clear`] may run
    /// meanwhile: an NMI may interrupt an add on the same CPU, and add to
    /// the same copy.
    ///
    /// [`clear`]: TracingMap::clear
    #[inline]
    pub fn update_sum_on(&self, cpu: u32, i: usize, n: u64) {
        let cpu = if cpu < self.layout.n_cpus { cpu } else { 0 };
        if let Some(s) = self.sum_of(cpu, i) {
            s.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// [`update_sum_on`](Self::update_sum_on) CPU 0, for callers that do
    /// not know which CPU they run on: the sums come out right, but the
    /// CPUs share a copy.
    #[inline]
    pub fn update_sum(&self, i: usize, n: u64) {
        self.update_sum_on(0, i, n)
    }

    /// Raises sum `i`, used as a maximum, to `n` in the copy of CPU `cpu`
    /// (CPU 0's if the map has none for it) if it is below; ignores an `i`
    /// out of range. [`read_max`](Self::read_max) reads it.
    ///
    /// Lock-free and atomic as [`update_sum_on`](Self::update_sum_on) is,
    /// an NMI included: an atomic maximum (a compare-and-swap loop on
    /// x86), taken only when `n` is above what the copy holds, which most
    /// events are not once the entry has seen a few.
    #[inline]
    pub fn update_max_on(&self, cpu: u32, i: usize, n: u64) {
        let cpu = if cpu < self.layout.n_cpus { cpu } else { 0 };
        if let Some(s) = self.sum_of(cpu, i) {
            raise(s, n);
        }
    }

    /// Sum `i`: the total of every CPU's copy, wrapping as one shared
    /// sum would (0 for `i` out of range).
    #[inline]
    pub fn read_sum(&self, i: usize) -> u64 {
        (0..self.layout.n_cpus).fold(0u64, |total, cpu| {
            let n = self.sum_of(cpu, i).map_or(0, |s| s.load(Ordering::Relaxed));
            total.wrapping_add(n)
        })
    }

    /// Sum `i` used as a maximum ([`update_max_on`](Self::update_max_on)):
    /// the largest of the CPUs' copies (0 for `i` out of range).
    #[inline]
    pub fn read_max(&self, i: usize) -> u64 {
        (0..self.layout.n_cpus).fold(0u64, |max, cpu| {
            let n = self.sum_of(cpu, i).map_or(0, |s| s.load(Ordering::Relaxed));
            max.max(n)
        })
    }

    /// Sets variable `i` to `n` and marks it set (C's
    /// `tracing_map_set_var()`).
    #[inline]
    pub fn set_var(&self, i: usize, n: u64) {
        let (Some(v), Some(flags)) = (self.var(i), self.var_flags()) else {
            return;
        };
        v.store(n, Ordering::Relaxed);
        // Release: whoever sees the flag sees this value (or a later one).
        // Once set, the flag stays set until the map is cleared: skip the
        // read-modify-write, as C's plain `var_set[i] = true` does.
        if flags.load(Ordering::Relaxed) & (1 << i) == 0 {
            flags.fetch_or(1 << i, Ordering::Release);
        }
    }

    /// Whether variable `i` is set (C's `tracing_map_var_set()`).
    #[inline]
    pub fn var_is_set(&self, i: usize) -> bool {
        match (self.var(i), self.var_flags()) {
            (Some(_), Some(flags)) => flags.load(Ordering::Acquire) & (1 << i) != 0,
            _ => false,
        }
    }

    /// Variable `i`, set or not (C's `tracing_map_read_var()`).
    #[inline]
    pub fn read_var(&self, i: usize) -> u64 {
        self.var(i).map_or(0, |v| v.load(Ordering::Relaxed))
    }

    /// Variable `i`, marking it unset (C's `tracing_map_read_var_once()`).
    #[inline]
    pub fn read_var_once(&self, i: usize) -> u64 {
        self.take_var(i).unwrap_or_else(|| self.read_var(i))
    }

    /// Variable `i` if it was set, marking it unset, atomically as to the
    /// flag: of two takers only one gets `Some`.
    #[inline]
    pub fn take_var(&self, i: usize) -> Option<u64> {
        let (v, flags) = (self.var(i)?, self.var_flags()?);
        // Acquire: pairs with the Release in `set_var`.
        let old = flags.fetch_and(!(1 << i), Ordering::Acquire);
        (old & (1 << i) != 0).then(|| v.load(Ordering::Relaxed))
    }

    /// The element's private words, zeroed when the element is handed out
    /// afresh; written by [`TracingMap::insert_with`]'s `init` or later.
    pub fn private_words(&self) -> &'a [AtomicU64] {
        let words: &'a [AtomicU64] = self.data;
        &words[self.layout.private_off()..]
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::sync::paused;
    use super::*;
    use core::mem::MaybeUninit;
    use std::vec::Vec;

    fn storage(p: &MapParams) -> Vec<AtomicU64> {
        (0..p.storage_words().unwrap())
            .map(|_| AtomicU64::new(0))
            .collect()
    }

    fn k(x: u64) -> [u8; 8] {
        x.to_ne_bytes()
    }

    #[test]
    fn params_are_checked() {
        assert_eq!(
            Geometry::new(&MapParams::new(18, 8, 1, 0)),
            Err(MapError::BadBits)
        );
        assert_eq!(
            Geometry::new(&MapParams::new(7, 0, 1, 0)),
            Err(MapError::BadKeySize)
        );
        assert_eq!(
            Geometry::new(&MapParams::new(7, 8, 65, 0)),
            Err(MapError::TooManySums)
        );
        assert_eq!(
            Geometry::new(&MapParams::new(7, 8, 1, 65)),
            Err(MapError::TooManyVars)
        );
        let p = MapParams::new(3, 8, 1, 0);
        let s: Vec<AtomicU64> = (0..p.storage_words().unwrap() - 8)
            .map(|_| AtomicU64::new(0))
            .collect();
        assert_eq!(
            TracingMap::new(p, &s).map(|_| ()),
            Err(MapError::StorageTooSmall)
        );
        assert_eq!(MapError::StorageTooSmall.errno(), 12);
        assert_eq!(MapError::BadBits.errno(), 22);
    }

    /// `fold_into()` moves every key with its sums (per CPU, or onto a
    /// map whose CPUs share them), maxima and private words into a larger
    /// map that events already wrote to, exactly as a model adds them;
    /// the drops come along, and a map too small reports what it lost.
    /// An event that comes to a key while the fold inserts it (from
    /// another CPU, or an interrupt on the fold's) finds no pending entry
    /// of the fold's to wait for and give up on: it counts, and the fold
    /// adds to the entry it made.
    #[test]
    fn an_event_during_a_folds_insert_is_not_dropped() {
        let p = MapParams::new(3, 8, 1, 0);
        let s = storage(&p);
        let map = TracingMap::new(p, &s).unwrap();
        let counted = core::cell::Cell::new(false);
        let event = || {
            if let Some(e) = map.insert_uncounted(&k(5), Inserter::on_cpu(0), |_| {}) {
                e.update_sum(0, 1);
                counted.set(true);
            }
        };
        let folded = map.fold_insert(&k(5), |_| event(), &mut None).unwrap();
        folded.update_sum(0, 2);
        assert!(counted.get(), "the event was dropped");
        assert_eq!(map.drops(), 0);
        assert_eq!(map.iter().count(), 1);
        assert_eq!(map.lookup(&k(5)).unwrap().read_sum(0), 3);
    }

    #[test]
    fn fold_into_adds_every_count() {
        use std::collections::HashMap;
        let src_p = MapParams::new(4, 8, 3, 0).with_private_words(2).per_cpu(4);
        assert_eq!(src_p.n_cpus, 4);
        let src_s = storage(&src_p);
        let src = TracingMap::new(src_p, &src_s).unwrap();
        // key -> (hits, sum, max, private)
        let mut model: HashMap<u64, (u64, u64, u64, u64)> = HashMap::new();
        let mut x = 12345u64;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut dropped = 0;
        for _ in 0..400 {
            let key = rnd() % 24;
            let (cpu, v) = ((rnd() % 4) as u32, rnd() % 1000);
            match src.insert_uncounted(&k(key), Inserter::on_cpu(cpu), |e| {
                e.private_words()[1].store(key + 7, Ordering::Relaxed)
            }) {
                Some(e) => {
                    e.update_sum_on(cpu, 0, 1);
                    e.update_sum_on(cpu, 1, v);
                    e.update_max_on(cpu, 2, v);
                    let m = model.entry(key).or_insert((0, 0, 0, key + 7));
                    m.0 += 1;
                    m.1 += v;
                    m.2 = m.2.max(v);
                }
                None => dropped += 1,
            }
        }
        assert_eq!(src.len(), 16);
        assert_eq!(src.drops(), dropped);
        for (key, m) in &model {
            let e = src.lookup(&k(*key)).unwrap();
            assert_eq!(
                (e.read_sum(0), e.read_sum(1), e.read_max(2)),
                (m.0, m.1, m.2),
                "src {key}"
            );
        }
        for n_cpus in [4, 1] {
            let mut dst_p = MapParams::new(6, 8, 3, 0).with_private_words(2);
            dst_p.n_cpus = n_cpus;
            dst_p = dst_p.per_cpu(n_cpus);
            let dst_s = storage(&dst_p);
            let dst = TracingMap::new(dst_p, &dst_s).unwrap();
            // Events that came to the new map before the fold: an old
            // key (its private words are the old entry's after) and a
            // new one.
            let mut want = model.clone();
            let old = *model.keys().next().unwrap();
            for key in [old, 99] {
                let e = dst
                    .insert_uncounted(&k(key), Inserter::on_cpu(1), |e| {
                        e.private_words()[1].store(1, Ordering::Relaxed)
                    })
                    .unwrap();
                e.update_sum_on(1, 0, 1);
                e.update_sum_on(1, 1, 5000);
                e.update_max_on(1, 2, 5000);
                let m = want.entry(key).or_insert((0, 0, 0, 1));
                *m = (m.0 + 1, m.1 + 5000, 5000, m.3);
            }
            let moved = src.fold_into(&dst, |i| i == 2, |_| panic!("lost")).unwrap();
            assert_eq!(moved, 16);
            assert_eq!(dst.drops(), dropped);
            assert_eq!(dst.len(), want.len());
            for (key, (hits, sum, max, private)) in &want {
                let e = dst.lookup(&k(*key)).unwrap();
                let got = (e.read_sum(0), e.read_sum(1), e.read_max(2));
                assert_eq!(got, (*hits, *sum, *max), "key {key}");
                assert_eq!(e.private_words()[1].load(Ordering::Relaxed), *private);
            }
        }
        // Into a map too small: what does not fit is reported, not lost
        // silently.
        let small_p = MapParams::new(3, 8, 3, 0).with_private_words(2);
        let small_s = storage(&small_p);
        let small = TracingMap::new(small_p, &small_s).unwrap();
        let mut lost = 0;
        let moved = src.fold_into(&small, |i| i == 2, |_| lost += 1).unwrap();
        assert_eq!((moved, lost), (8, 8));
        // Another shape is refused.
        let other_p = MapParams::new(6, 8, 2, 0).with_private_words(2);
        let other_s = storage(&other_p);
        let other = TracingMap::new(other_p, &other_s).unwrap();
        assert!(src.fold_into(&other, |_| false, |_| ()).is_err());
    }

    /// The fold's insert of a key whose entry another inserter claimed
    /// (pending) waits it out and inserts the key once that entry turns
    /// dead, and counts no drop, however long the wait. (If the entry
    /// stays pending past the fold's bound, `None`, and still no drop.)
    #[test]
    fn fold_insert_waits_out_a_pending_entry() {
        let p = MapParams::new(2, 8, 1, 0);
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        let key = k(5);
        let h = m.hash_key(&key);
        let at = m.start(h);
        m.entries[at].store(h as u64, Ordering::Relaxed);
        std::thread::scope(|sc| {
            sc.spawn(|| {
                std::thread::yield_now();
                m.entries[at].store(h as u64 | (DEAD as u64) << 32, Ordering::Release);
            });
            if let Some(e) = m.fold_insert(&key, |_| {}, &mut None) {
                assert_eq!(m.lookup(&key).unwrap().index(), e.index());
            }
        });
        assert_eq!(m.drops(), 0);
        // Once dead, it is inserted past the dead entry at once.
        assert!(m.fold_insert(&key, |_| {}, &mut None).is_some());
        assert_eq!((m.drops(), m.len()), (0, 1));
    }

    /// A map whose entry for `key` another insert has claimed, on CPU
    /// `cpu` (`PENDING` if not said): leaked, so that a pause's hook may
    /// publish it.
    fn claimed_map(key: [u8; 8], state: u32) -> (TracingMap<'static>, u32) {
        let p = MapParams::new(2, 8, 1, 0);
        let m = TracingMap::new(p, storage(&p).leak()).unwrap();
        let h = m.hash_key(&key);
        m.entries[m.start(h)].store(h as u64 | u64::from(state) << 32, Ordering::Relaxed);
        (m, h)
    }

    /// What the claimer of [`claimed_map`]'s entry does to finish: fill
    /// an element with `key` and publish it.
    fn publish(m: TracingMap<'static>, key: [u8; 8], h: u32) {
        let i = m.take_elt().unwrap();
        (&key[..]).store(m.elt(i).unwrap().key_slots());
        let published = h as u64 | (u64::from(i) + 1) << 32;
        m.entries[m.start(h)].store(published, Ordering::Release);
    }

    /// An event that comes to a key another CPU is inserting waits until
    /// that CPU publishes it, longer than C's `map_size` turns (C drops
    /// it): it counts, in the element published.
    #[test]
    fn an_insert_waits_for_another_cpus_claim() {
        let key = k(5);
        let (m, h) = claimed_map(key, Inserter::on_cpu(1).pending_state());
        let mut found = None;
        let turns = paused::count(
            move |n| {
                if n == 1000 {
                    publish(m, key, h);
                }
            },
            || found = m.insert_uncounted(&key, Inserter::on_cpu(0), |_| {}),
        );
        assert_eq!(found.map(|e| e.index()), Some(0), "dropped");
        assert_eq!((turns, m.drops(), m.len()), (1000, 0, 1));
    }

    /// One that comes to a key an insert on its own CPU claimed (the
    /// context it interrupted, which cannot publish before it returns)
    /// drops at once; one on another CPU gives up after
    /// [`OTHER_CPU_WAITS`] turns; one that does not say where it runs,
    /// or an entry that does not say, waits as C does, `map_size` turns
    /// without a pause.
    #[test]
    fn an_insert_gives_up_a_claim_it_cannot_see_published() {
        let key = k(5);
        let cases = [
            (0, Inserter::on_cpu(0), 0),
            (1, Inserter::on_cpu(0), u64::from(OTHER_CPU_WAITS)),
            (1, Inserter::ANYWHERE, 0),
            (CPUS_MAX as u32, Inserter::on_cpu(0), 0),
        ];
        for (claimer, who, want_turns) in cases {
            let (m, _) = claimed_map(key, Inserter::on_cpu(claimer).pending_state());
            let mut found = None;
            let turns = paused::count(|_| {}, || found = m.insert_uncounted(&key, who, |_| {}));
            assert!(found.is_none(), "claimer {claimer}, {who:?}");
            assert_eq!(
                (turns, m.drops()),
                (want_turns, 1),
                "claimer {claimer}, {who:?}"
            );
        }
    }

    /// A compiled program's key of exactly the map's words finds what
    /// the byte key does; a key of another size is a drop, not an entry.
    #[test]
    fn exact_word_keys() {
        let p = MapParams::new(3, 16, 1, 0);
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        let a = m
            .insert_exact_uncounted(&[7u64, 9], Inserter::ANYWHERE)
            .unwrap();
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&7u64.to_ne_bytes());
        bytes[8..].copy_from_slice(&9u64.to_ne_bytes());
        assert_eq!(m.lookup(&bytes).unwrap().index(), a);
        assert_eq!(
            m.insert_exact_uncounted(&[7u64, 9], Inserter::ANYWHERE)
                .unwrap(),
            a
        );
        assert!(m
            .insert_exact_uncounted(&[7u64], Inserter::ANYWHERE)
            .is_none());
        assert!(m
            .insert_exact_uncounted(&[7u64, 9, 0], Inserter::ANYWHERE)
            .is_none());
        assert_eq!((m.len(), m.drops()), (1, 2));
    }

    /// The event path's look-up in its steps (first entry, further
    /// entries, probe loop) inserts and finds as a model map does, on
    /// maps small enough that keys collide, fill them and are dropped,
    /// and with keys that share a 32-bit hash; lookups agree.
    #[test]
    fn stepwise_insert_is_a_map() {
        fn steps<const N: usize>(m: &TracingMap<'_>, key: [u64; N]) -> Option<u32> {
            let h = (&key).hash(N);
            let first = match m.insert_first_uncounted(&key, h) {
                First::Further => m.insert_further_uncounted(&key, h),
                first => first,
            };
            match first {
                First::Found(i) => Some(i),
                First::Absent => None,
                First::Further => panic!("further after further"),
                First::Probe => m.insert_rest_uncounted(&key, h, Inserter::ANYWHERE),
            }
        }
        // Keys of one hash: the first two pairs found among small ones.
        let mut by_hash = std::collections::HashMap::new();
        let mut same = Vec::new();
        for x in 0u64.. {
            if let Some(y) = by_hash.insert([x, 1].hash(2), x) {
                same.extend([[y, 1], [x, 1]]);
                if same.len() == 4 {
                    break;
                }
            }
        }
        for bits in [0, 1, 3, 5] {
            let p = MapParams::new(bits, 16, 1, 0);
            let s = storage(&p);
            let m = TracingMap::new(p, &s).unwrap();
            let mut model = std::collections::HashMap::new();
            let mut drops = 0;
            let mut x = 0x2545_f491_4f6c_dd1du64;
            for i in 0..600 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let key = match i % 5 {
                    0 => same[(x % 4) as usize],
                    _ => [x % 97, x >> 62],
                };
                let next = model.len() as u32;
                let want = match model.get(&key) {
                    Some(&i) => Some(i),
                    None if (next as usize) < m.max_elts() => {
                        model.insert(key, next);
                        Some(next)
                    }
                    None => {
                        drops += 1;
                        None
                    }
                };
                assert_eq!(steps(&m, key), want, "bits {bits}, key {key:?}");
                let mut bytes = [0u8; 16];
                bytes[..8].copy_from_slice(&key[0].to_ne_bytes());
                bytes[8..].copy_from_slice(&key[1].to_ne_bytes());
                assert_eq!(m.lookup(&bytes).map(|e| e.index()), want);
                let absent = [key[0] + 1000, 3].map(u64::to_ne_bytes).concat();
                assert!(m.lookup(&absent).is_none());
            }
            assert_eq!((m.len(), m.drops()), (model.len(), drops));
        }
    }

    #[test]
    fn layout_is_cache_friendly() {
        // key 8 + hitcount: 8-byte strides.
        let g = Geometry::new(&MapParams::new(7, 8, 1, 0)).unwrap();
        assert_eq!((g.key_stride, g.data_stride), (1, 1));
        // The same with per-CPU sums: no data words, no data.
        let g = Geometry::new(&MapParams::new(7, 8, 1, 0).with_cpus(2)).unwrap();
        assert_eq!((g.key_stride, g.data_stride, g.sum_stride), (1, 0, 1));
        assert_eq!(g.data_off, g.sums_off);
        // key 24 + 3 sums: 32 bytes each.
        let g = Geometry::new(&MapParams::new(7, 24, 3, 0)).unwrap();
        assert_eq!((g.key_stride, g.data_stride), (4, 4));
        // key 20 (3 words); 3 sums + flags + 2 vars = 6 words -> 64 bytes.
        let g = Geometry::new(&MapParams::new(7, 20, 3, 2)).unwrap();
        assert_eq!(g.layout.data_words(), 6);
        assert_eq!((g.key_stride, g.data_stride), (4, 8));
        assert_eq!(g.keys_off % LINE_WORDS, 0);
        assert_eq!(g.data_off % LINE_WORDS, 0);
        // A key of 9 words takes two whole lines.
        let g = Geometry::new(&MapParams::new(7, 72, 1, 0)).unwrap();
        assert_eq!(g.key_stride, 16);
        let p = MapParams::new(7, 24, 3, 0);
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        assert_eq!(m.keys.as_ptr() as usize % 64, 0);
        assert_eq!(m.data.as_ptr() as usize % 64, 0);
        assert_eq!(m.header.as_ptr() as usize % 64, 0);
        assert_eq!(m.max_elts(), 128);
        assert_eq!(m.map_size(), 256);
    }

    /// The cache lines of the keys, which every event reads, hold no sum,
    /// which the events on a hot key write from every CPU.
    #[test]
    fn keys_are_not_on_the_lines_of_the_sums() {
        for (key_size, n_sums, n_vars, n_cpus) in [
            (8, 1, 0, 1),
            (8, 3, 0, 1),
            (24, 2, 1, 1),
            (64, 1, 0, 1),
            (8, 1, 0, 2),
            (24, 2, 1, 3),
        ] {
            let p = MapParams::new(4, key_size, n_sums, n_vars).with_cpus(n_cpus);
            let s = storage(&p);
            let m = TracingMap::new(p, &s).unwrap();
            let line = |w: &AtomicU64| w as *const AtomicU64 as usize / 64;
            let mut key_lines = Vec::new();
            let mut sum_lines = Vec::new();
            for i in 0..m.max_elts() as u64 {
                let e = m.insert(&i.to_ne_bytes()).unwrap();
                key_lines.extend(e.key_slots().iter().map(line));
                for cpu in 0..n_cpus as u32 {
                    sum_lines.extend((0..n_sums).filter_map(|j| e.sum_of(cpu, j)).map(line));
                }
            }
            assert_eq!(sum_lines.len(), m.max_elts() * n_sums * n_cpus);
            assert!(
                key_lines.iter().all(|l| !sum_lines.contains(l)),
                "key size {key_size}, {n_sums} sums"
            );
        }
    }

    /// [`SumsIndex`] finds the element of each CPU's copy of its sums,
    /// and of the part after the hitcount, whether the CPUs share them
    /// or not; nothing for a slice elsewhere, or for strides that are
    /// not powers of two.
    #[test]
    fn sums_index_finds_the_element() {
        for (n_sums, n_vars, cpus) in [(2, 0, 1), (3, 0, 1), (2, 0, 3), (3, 0, 4), (1, 0, 2)] {
            let p = MapParams::new(7, 8, n_sums, n_vars).with_cpus(cpus);
            let s = storage(&p);
            let m = TracingMap::new(p, &s).unwrap();
            let index = m.sums_index().unwrap();
            for idx in 0..m.max_elts() as u32 {
                for cpu in 0..cpus as u32 {
                    let sums = m.cpu_sums(idx, cpu).unwrap().words();
                    assert_eq!(index.elt(sums), Some(idx), "{n_sums} {cpu}");
                    assert_eq!(index.elt(&sums[n_sums - 1..]), Some(idx));
                    // The event path's: times 64, for each value's slice.
                    let m64 = index.times(64).unwrap();
                    for at in 0..n_sums {
                        let e = index.elt_times(&sums[at..], m64);
                        assert_eq!(e, idx as usize * 64, "{n_sums} {cpu} {at}");
                    }
                }
            }
            // No multiplier whose product with the map's bytes overflows.
            assert_eq!(index.times(usize::MAX >> 8), None);
            let elsewhere = [AtomicU64::new(0)];
            assert_eq!(index.elt(&elsewhere), None);
            assert_eq!(index.elt(&s[..1]), None);
        }
        // Shared sums among 21 data words: a stride of 24 words.
        let p = MapParams::new(7, 8, 5, 15);
        let s = storage(&p);
        assert!(TracingMap::new(p, &s).unwrap().sums_index().is_none());
    }

    #[test]
    fn insert_and_lookup() {
        let p = MapParams::new(7, 8, 2, 0);
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        assert!(m.is_empty());
        assert!(m.lookup(&k(5)).is_none());
        let e = m.insert(&k(5)).unwrap();
        e.update_sum(0, 1);
        e.update_sum(1, 10);
        assert_eq!(m.len(), 1);
        assert_eq!(m.hits(), 1);
        let f = m.lookup(&k(5)).unwrap();
        assert_eq!(f.index(), e.index());
        assert_eq!(f.read_sum(0), 1);
        assert_eq!(f.read_sum(1), 10);
        // A lookup counts no hit.
        assert_eq!(m.hits(), 1);
        assert!(m.lookup(&k(6)).is_none());
        let mut out = [0u8; 8];
        assert_eq!(f.copy_key(&mut out), 8);
        assert_eq!(out, k(5));
        assert_eq!(f.n_sums(), 2);
        // Out-of-range indices are ignored.
        f.update_sum(2, 5);
        assert_eq!(f.read_sum(2), 0);
    }

    #[test]
    fn duplicate_keys_share_an_element() {
        let p = MapParams::new(7, 8, 1, 0);
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        for _ in 0..10 {
            for x in 0..20 {
                m.insert(&k(x)).unwrap().update_sum(0, 1);
            }
        }
        assert_eq!(m.len(), 20);
        assert_eq!(m.hits(), 200);
        assert_eq!(m.drops(), 0);
        let mut seen = Vec::new();
        for e in m.iter() {
            assert_eq!(e.read_sum(0), 10);
            seen.push(e.key_word(0));
        }
        seen.sort();
        assert_eq!(seen, (0..20).collect::<Vec<_>>());
    }

    #[test]
    fn short_odd_and_long_keys() {
        // A 5-byte key, stored in one word, zero padded.
        let p = MapParams::new(4, 5, 1, 0);
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        let a = m.insert(b"abcde").unwrap();
        // Longer input is cut to the key size, shorter is zero padded.
        assert_eq!(m.insert(b"abcdeXYZ").unwrap().index(), a.index());
        let b = m.insert(b"abc").unwrap();
        assert_ne!(a.index(), b.index());
        assert_eq!(m.lookup(b"abc\0\0").unwrap().index(), b.index());
        let mut out = [0xffu8; 8];
        assert_eq!(a.copy_key(&mut out), 5);
        assert_eq!(&out, b"abcde\xff\xff\xff");
        assert_eq!(a.key_size(), 5);
        assert_eq!(a.key_byte(7), Some(0));
        assert_eq!(a.key_byte(8), None);

        // A 24-byte key differing only in its last word.
        let p = MapParams::new(4, 24, 1, 0);
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        let mut key = [7u8; 24];
        let x = m.insert(&key).unwrap();
        key[23] = 8;
        let y = m.insert(&key).unwrap();
        assert_ne!(x.index(), y.index());
        assert!(y.key_eq(&key));
        assert!(!x.key_eq(&key));
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn full_map_drops_and_does_not_hang() {
        let p = MapParams::new(2, 8, 1, 0); // 4 elements, 8 entries
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        for x in 0..4 {
            m.insert(&k(x)).unwrap().update_sum(0, 1);
        }
        for x in 4..100 {
            assert!(m.insert(&k(x)).is_none());
        }
        // Existing keys are still found and count hits.
        for x in 0..4 {
            m.insert(&k(x)).unwrap().update_sum(0, 1);
        }
        assert_eq!(m.len(), 4);
        assert_eq!(m.hits(), 8);
        assert_eq!(m.drops(), 96);
        // Drops of different keys are spread over the drop lines.
        let lines = (0..DROP_LINES)
            .filter(|l| m.header[DROPS + l * LINE_WORDS].load(Ordering::Relaxed) > 0);
        assert_eq!(lines.count(), DROP_LINES);
        // A full map did not burn free entries.
        let used = m.entries.iter().filter(|e| e.load(Ordering::Relaxed) != 0);
        assert_eq!(used.count(), 4);
        assert!(m.lookup(&k(50)).is_none());
    }

    #[test]
    fn dead_and_pending_entries() {
        // Forge the states a racing inserter leaves behind.
        let p = MapParams::new(1, 8, 1, 0); // 2 elements, 4 entries
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        let key = k(42);
        let h = m.hash_key(&key);
        let start = (h >> (32 - 2)) as usize;
        // A dead entry with our hash at the start of the probe: stepped over.
        m.entries[start].store(h as u64 | (DEAD as u64) << 32, Ordering::Relaxed);
        let e = m.insert(&key).unwrap();
        assert_eq!(m.lookup(&key).unwrap().index(), e.index());
        assert_eq!(m.iter().count(), 1);
        // A pending entry with our hash: waited for, then dropped.
        m.clear();
        m.entries[start].store(h as u64, Ordering::Relaxed);
        assert!(m.insert(&key).is_none());
        assert_eq!(m.drops(), 1);
        assert!(m.lookup(&key).is_none());
        assert_eq!(m.drops(), 2); // as C, a lookup giving up counts a drop
        assert_eq!(m.iter().count(), 0);
        // Element exhausted after claiming an entry: the entry goes dead
        // and the drop is counted once.
        m.clear();
        m.header[NEXT_ELT].store(1, Ordering::Relaxed);
        m.insert(&k(1)).unwrap();
        m.header[NEXT_ELT].store(1, Ordering::Relaxed);
        // Make the pre-check pass but the claim fail by faking the count.
        let before = m.drops();
        let e = m
            .entries
            .iter()
            .position(|e| e.load(Ordering::Relaxed) == 0);
        let free = e.unwrap();
        m.header[NEXT_ELT].store(2, Ordering::Relaxed);
        assert!(m
            .fill(
                &m.entries[free],
                7,
                &k(2)[..],
                Find::Insert,
                |_| unreachable!()
            )
            .is_none());
        assert_eq!(m.drops(), before + 1);
        assert_eq!(
            m.entries[free].load(Ordering::Relaxed),
            7 | (DEAD as u64) << 32
        );
        assert_eq!(m.iter().count(), 1);
        // In a full map, past another key's dead entry: our element is
        // found (and the hit counted), a pending entry waited for, then
        // dropped (and the drop counted).
        m.clear();
        let next = (start + 1) % 4;
        let e = m.insert(&key).unwrap();
        m.header[NEXT_ELT].store(2, Ordering::Relaxed);
        let other = (h ^ 1) as u64 | (DEAD as u64) << 32;
        let ours = m.entries[start].load(Ordering::Relaxed);
        m.entries[start].store(other, Ordering::Relaxed);
        m.entries[next].store(ours, Ordering::Relaxed);
        let hits = m.hits();
        assert_eq!(m.insert(&key).unwrap().index(), e.index());
        assert_eq!(m.hits(), hits + 1);
        m.entries[next].store(h as u64, Ordering::Relaxed);
        let drops = m.drops();
        assert!(m.insert(&key).is_none());
        assert_eq!(m.drops(), drops + 1);
    }

    #[test]
    fn every_entry_claimed_still_terminates() {
        // A table whose entries are all claimed by other hashes: bounded.
        let p = MapParams::new(1, 8, 1, 0);
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        let h = m.hash_key(&k(9));
        for e in m.entries {
            e.store((h ^ 0x5555) as u64 | (DEAD as u64) << 32, Ordering::Relaxed);
        }
        assert!(m.insert(&k(9)).is_none());
        assert_eq!(m.drops(), 1);
    }

    /// Per-CPU sums: each CPU adds to its own copy, on lines no other
    /// CPU's copy shares, and the sums read are the totals, wrapping as
    /// one shared sum does; the variables and private words are one.
    /// Packed or not, no two elements' copies overlap.
    #[test]
    fn per_cpu_sums_add_up() {
        let p = MapParams::new(4, 8, 3, 1)
            .with_private_words(1)
            .with_cpus(3);
        per_cpu_sums_of(p);
        let packed = p.with_packed_sums();
        assert!(packed.storage_words().unwrap() < p.storage_words().unwrap());
        per_cpu_sums_of(packed);
    }

    fn per_cpu_sums_of(p: MapParams) {
        let shared = MapParams::new(4, 8, 3, 1).with_private_words(1);
        assert!(p.storage_words().unwrap() > shared.storage_words().unwrap());
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        let line = |w: &AtomicU64| w as *const AtomicU64 as usize / 64;
        for x in 0..16 {
            let e = m.insert(&k(x)).unwrap();
            for cpu in 0..4u32 {
                e.update_sum_on(cpu, 0, 1);
                e.update_sum_on(cpu, 1, x);
                e.update_sum_on(cpu, 2, u64::MAX);
            }
            e.set_var(0, x);
            // No line holds copies of two CPUs.
            for a in 0..3 {
                for b in 0..a {
                    for i in 0..3 {
                        for j in 0..3 {
                            let (x, y) = (e.sum_of(a, i).unwrap(), e.sum_of(b, j).unwrap());
                            assert_ne!(line(x), line(y));
                        }
                    }
                }
            }
            assert!(e.sum_of(3, 0).is_none());
        }
        let mut words: Vec<usize> = (0..16)
            .flat_map(|x| {
                let e = m.lookup(&k(x)).unwrap();
                (0..3).flat_map(move |c| {
                    (0..3).map(move |i| e.sum_of(c, i).unwrap().as_ptr() as usize)
                })
            })
            .collect();
        words.sort();
        words.dedup();
        assert_eq!(words.len(), 16 * 3 * 3, "two elements share a sum");
        for x in 0..16 {
            let e = m.lookup(&k(x)).unwrap();
            // CPU 3 has no copy: it added to CPU 0's.
            assert_eq!(e.read_sum(0), 4);
            assert_eq!(e.read_sum(1), 4 * x);
            assert_eq!(e.read_sum(2), 4u64.wrapping_mul(u64::MAX));
            assert_eq!(e.read_sum(3), 0);
            assert_eq!(e.read_var(0), x);
            assert_eq!(e.sum_of(0, 0).unwrap().load(Ordering::Relaxed), 2);
            assert_eq!(e.sum_of(1, 0).unwrap().load(Ordering::Relaxed), 1);
        }
        let order = [SortKey::descending(SortField::Sum(1))];
        let mut out = [0u32; 16];
        assert_eq!(m.sort_entries(&order, &mut out), 16);
        assert_eq!(m.elt(out[0]).unwrap().key_word(0), 15);
        m.clear();
        let e = m.insert(&k(99)).unwrap();
        for cpu in 0..3 {
            assert_eq!(e.sum_of(cpu, 1).unwrap().load(Ordering::Relaxed), 0);
        }
        assert_eq!(e.read_sum(1), 0);
    }

    /// Sums used as maxima (`.min`, `.max`): each CPU raises its copy, a
    /// reader takes the largest, sort compares them decoded, and 0, the
    /// identity, is what a new element and a cleared map start from.
    #[test]
    fn sums_used_as_maxima() {
        for cpus in [1, 3] {
            let p = MapParams::new(4, 8, 3, 0).with_cpus(cpus);
            let s = storage(&p);
            let m = TracingMap::new(p, &s).unwrap();
            for x in 0..8u64 {
                let e = m.insert(&k(x)).unwrap();
                assert_eq!((e.read_max(1), e.read_max(2)), (0, 0));
                for (cpu, v) in [(0u32, 5), (1, 9 + x), (2, 7), (3, 1)] {
                    e.update_sum_on(cpu, 0, 1);
                    e.update_max_on(cpu, 1, v);
                    // Sum 2 holds !value: the largest is the smallest.
                    e.update_max_on(cpu, 2, !(v * x));
                }
                // Out of range: ignored.
                e.update_max_on(0, 3, 1000);
            }
            for x in 0..8u64 {
                let e = m.lookup(&k(x)).unwrap();
                assert_eq!(e.read_sum(0), 4, "{cpus} CPUs");
                assert_eq!(e.read_max(1), 9 + x);
                assert_eq!(!e.read_max(2), x);
                assert_eq!(e.read_max(3), 0);
                if cpus == 3 {
                    // CPU 3 has no copy: it raised CPU 0's.
                    assert_eq!(e.sum_of(0, 1).unwrap().load(Ordering::Relaxed), 5);
                    assert_eq!(e.sum_of(1, 1).unwrap().load(Ordering::Relaxed), 9 + x);
                }
            }
            let mut out = [0u32; 16];
            let by = |field, descending| [SortKey { field, descending }];
            let max = SortField::Stat {
                sum: 1,
                xor: 0,
                per_hit: false,
                signed: false,
            };
            m.sort_entries(&by(max, true), &mut out);
            assert_eq!(m.elt(out[0]).unwrap().key_word(0), 7);
            let min = SortField::Stat {
                sum: 2,
                xor: !0,
                per_hit: false,
                signed: false,
            };
            m.sort_entries(&by(min, false), &mut out);
            assert_eq!(m.elt(out[0]).unwrap().key_word(0), 0);
            m.sort_entries(&by(min, true), &mut out);
            assert_eq!(m.elt(out[0]).unwrap().key_word(0), 7);
            // Signed: decoded (here to below 0), compared as an i64.
            let signed = SortField::Stat {
                sum: 1,
                xor: 1 << 63,
                per_hit: false,
                signed: true,
            };
            m.sort_entries(&by(signed, false), &mut out);
            assert_eq!(m.elt(out[0]).unwrap().key_word(0), 0);
            m.clear();
            let e = m.insert(&k(99)).unwrap();
            assert_eq!((e.read_max(1), e.read_max(2)), (0, 0));
            e.update_max_on(2, 1, 3);
            assert_eq!(e.read_max(1), 3);
        }
    }

    /// An average sorts by its sum over the hitcount, as an `i64` when
    /// signed.
    #[test]
    fn sort_by_sum_per_hit() {
        let p = MapParams::new(4, 8, 2, 0).with_cpus(2);
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        // (key, hits, sum): averages 10, -3, 4 (signed).
        for (x, hits, sum) in [(1u64, 2u64, 20i64), (2, 3, -9), (3, 4, 17)] {
            let e = m.insert(&k(x)).unwrap();
            for i in 0..hits {
                e.update_sum_on(i as u32 % 2, 0, 1);
            }
            e.update_sum_on(1, 1, sum as u64);
        }
        let order = |signed, descending| {
            let field = SortField::Stat {
                sum: 1,
                xor: 0,
                per_hit: true,
                signed,
            };
            let mut out = [0u32; 16];
            let n = m.sort_entries(&[SortKey { field, descending }], &mut out);
            out[..n]
                .iter()
                .map(|&i| m.elt(i).unwrap().key_word(0))
                .collect::<Vec<_>>()
        };
        assert_eq!(order(true, false), [2, 3, 1]);
        assert_eq!(order(true, true), [1, 3, 2]);
        // Unsigned, -9 is a large sum.
        assert_eq!(order(false, true), [2, 1, 3]);
    }

    /// Sums are per CPU when there are several CPUs, sums, and room by
    /// the rule; the CPUs share them otherwise.
    #[test]
    fn per_cpu_rule() {
        let p = |bits, n_sums| MapParams::new(bits, 8, n_sums, 0);
        assert_eq!(p(11, 1).per_cpu(2).n_cpus, 2);
        assert_eq!(p(11, 1).per_cpu(1).n_cpus, 1);
        assert_eq!(p(11, 0).per_cpu(64).n_cpus, 1);
        // 2048 entries of 3 sums (a stride of 4) on 64 CPUs: 4 MB.
        assert_eq!(p(11, 3).per_cpu(64).n_cpus, 64);
        assert_eq!(p(11, 5).per_cpu(64).n_cpus, 1);
        assert_eq!(p(17, 1).per_cpu(4).n_cpus, 4);
        assert_eq!(p(17, 1).per_cpu(5).n_cpus, 1);
        assert_eq!(p(11, 1).per_cpu(CPUS_MAX + 1).n_cpus, 1);
        assert_eq!(Geometry::new(&p(7, 1).with_cpus(0)), Err(MapError::BadCpus));
        // The bytes the rule counts are the bytes the map takes: the
        // copies, less the sums leaving the data (a stride of 4 words to
        // none).
        let (one, many) = (p(11, 3), p(11, 3).with_cpus(64));
        let extra = (many.storage_words().unwrap() - one.storage_words().unwrap()) * 8;
        assert_eq!(extra, (4 << 20) - 2048 * 4 * 8);
    }

    #[test]
    fn clear_resets_everything() {
        let p = MapParams::new(3, 8, 2, 2).with_private_words(2);
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        for x in 0..12 {
            if let Some(e) = m.insert_with(&k(x), |e| {
                e.private_words()[0].store(x + 100, Ordering::Relaxed)
            }) {
                e.update_sum(0, 1);
                e.update_sum(1, x);
                e.set_var(1, x);
            }
        }
        assert_eq!((m.len(), m.hits(), m.drops()), (8, 8, 4));
        m.clear();
        assert_eq!((m.len(), m.hits(), m.drops()), (0, 0, 0));
        assert!(m.iter().next().is_none());
        assert!(m.lookup(&k(3)).is_none());
        // Elements handed out again start from zero.
        let e = m.insert(&k(77)).unwrap();
        assert_eq!(e.read_sum(0), 0);
        assert_eq!(e.read_sum(1), 0);
        assert!(!e.var_is_set(1));
        assert_eq!(e.read_var(1), 0);
        assert_eq!(e.private_words()[0].load(Ordering::Relaxed), 0);
        assert!(e.key_eq(&k(77)));
        assert_eq!((m.len(), m.hits()), (1, 1));
    }

    #[test]
    fn vars_set_and_unset() {
        let p = MapParams::new(3, 8, 1, 3);
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        let e = m.insert(&k(1)).unwrap();
        assert!(!e.var_is_set(0));
        e.set_var(0, 11);
        e.set_var(2, 33);
        assert!(e.var_is_set(0) && !e.var_is_set(1) && e.var_is_set(2));
        assert_eq!(e.read_var(0), 11);
        assert_eq!(e.read_var_once(0), 11);
        assert!(!e.var_is_set(0));
        // read_var_once of an unset variable still returns its value.
        assert_eq!(e.read_var_once(0), 11);
        assert_eq!(e.take_var(2), Some(33));
        assert_eq!(e.take_var(2), None);
        assert_eq!(e.take_var(1), None);
        // Out of range: ignored.
        e.set_var(3, 1);
        assert!(!e.var_is_set(3));
        assert_eq!(e.read_var(3), 0);
        // Vars do not touch sums.
        assert_eq!(e.read_sum(0), 0);
        // No vars at all.
        let p = MapParams::new(3, 8, 1, 0);
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        let e = m.insert(&k(1)).unwrap();
        e.set_var(0, 5);
        assert!(!e.var_is_set(0));
        assert_eq!(e.take_var(0), None);
    }

    #[test]
    fn new_uninit_aligns_and_zeroes() {
        let p = MapParams::new(3, 16, 2, 1);
        let mut buf = std::vec![MaybeUninit::new(0xa5u8); p.storage_bytes().unwrap() + 3];
        for off in 0..4 {
            let m = TracingMap::new_uninit(p, &mut buf[off..]).unwrap();
            assert_eq!(m.header.as_ptr() as usize % 64, 0);
            assert!(m.is_empty());
            let e = m.insert(&[1u8; 16]).unwrap();
            e.update_sum(1, 3);
            assert_eq!(e.read_sum(1), 3);
            assert_eq!(e.read_sum(0), 0);
        }
        let mut small = std::vec![MaybeUninit::uninit(); p.storage_bytes().unwrap() - 64];
        assert_eq!(
            TracingMap::new_uninit(p, &mut small).map(|_| ()),
            Err(MapError::StorageTooSmall)
        );
    }

    #[test]
    fn hash_is_never_zero_and_spreads() {
        assert_ne!(key_hash(&[], 8), 0);
        let p = MapParams::new(7, 8, 1, 0);
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        // Sequential small keys (pids) land on many distinct start slots.
        let mut starts: Vec<u32> = (0..128u64).map(|x| m.hash_key(&k(x)) >> 24).collect();
        starts.sort();
        starts.dedup();
        assert!(starts.len() > 70, "{}", starts.len());
        // So do compound keys of small numbers (a, b, c in 0..8): the hash
        // is not linear in the words.
        let mut starts: Vec<u32> = (0..512u64)
            .map(|x| [x % 8, x / 8 % 8, x / 64].as_slice().hash(3) >> 23)
            .collect();
        starts.sort();
        starts.dedup();
        assert!(starts.len() > 300, "{}", starts.len());
    }

    /// A map with keys (u32 a, i32 b, 8-byte string) and sums.
    fn sort_fixture(rows: &[(u32, i32, &str, u64, u64)]) -> (Vec<AtomicU64>, MapParams) {
        let p = MapParams::new(5, 16, 2, 0);
        let s = storage(&p);
        {
            let m = TracingMap::new(p, &s).unwrap();
            for &(a, b, name, s0, s1) in rows {
                let mut key = [0u8; 16];
                key[..4].copy_from_slice(&a.to_ne_bytes());
                key[4..8].copy_from_slice(&b.to_ne_bytes());
                key[8..8 + name.len()].copy_from_slice(name.as_bytes());
                let e = m.insert(&key).unwrap();
                e.update_sum(0, s0);
                e.update_sum(1, s1);
            }
        }
        (s, p)
    }

    fn sorted(m: &TracingMap<'_>, keys: &[SortKey]) -> Vec<(u32, i32)> {
        let mut out = std::vec![0u32; m.max_elts()];
        let n = m.sort_entries(keys, &mut out);
        out[..n]
            .iter()
            .map(|&i| {
                let e = m.elt(i).unwrap();
                (
                    e.key_num(0, 4).unwrap() as u32,
                    e.key_num(4, 4).unwrap() as u32 as i32,
                )
            })
            .collect()
    }

    const ROWS: &[(u32, i32, &str, u64, u64)] = &[
        (1, -5, "bb", 3, 1),
        (2, 7, "a", 1, 2),
        (3, -1, "ab", 3, 3),
        (4, 0, "b", 2, 1),
        (5, 100, "", 1, 9),
        (6, -100, "abc", 3, 0),
    ];

    #[test]
    fn sort_one_key_both_directions() {
        let (s, p) = sort_fixture(ROWS);
        // Attach without zeroing, to read the fixture.
        let m = TracingMap::attach(p, &s).unwrap();
        let a = |r: &[(u32, i32)]| r.iter().map(|x| x.0).collect::<Vec<_>>();
        let asc = sorted(
            &m,
            &[SortKey::ascending(SortField::KeyNum {
                offset: 0,
                size: 4,
                signed: false,
            })],
        );
        assert_eq!(a(&asc), [1, 2, 3, 4, 5, 6]);
        let desc = sorted(
            &m,
            &[SortKey::descending(SortField::KeyNum {
                offset: 0,
                size: 4,
                signed: false,
            })],
        );
        assert_eq!(a(&desc), [6, 5, 4, 3, 2, 1]);
        // Signed key.
        let b = |r: &[(u32, i32)]| r.iter().map(|x| x.1).collect::<Vec<_>>();
        let signed = SortField::KeyNum {
            offset: 4,
            size: 4,
            signed: true,
        };
        assert_eq!(
            b(&sorted(&m, &[SortKey::ascending(signed)])),
            [-100, -5, -1, 0, 7, 100]
        );
        assert_eq!(
            b(&sorted(&m, &[SortKey::descending(signed)])),
            [100, 7, 0, -1, -5, -100]
        );
        // The same bytes unsigned: negatives are large.
        let unsigned = SortField::KeyNum {
            offset: 4,
            size: 4,
            signed: false,
        };
        assert_eq!(
            b(&sorted(&m, &[SortKey::ascending(unsigned)])),
            [0, 7, 100, -100, -5, -1]
        );
        // String key.
        let names = sorted(&m, &[SortKey::ascending(SortField::KeyStr { offset: 8 })]);
        assert_eq!(a(&names), [5, 2, 3, 6, 4, 1]); // "", a, ab, abc, b, bb
                                                   // Sum with ties: ties come out in C's (heapsort) order, checked
                                                   // separately against lib/sort.c; here: ordered and deterministic.
        let by_sum = sorted(&m, &[SortKey::ascending(SortField::Sum(1))]);
        assert_eq!(a(&by_sum), [6, 4, 1, 2, 3, 5]);
        let by_sum0 = sorted(&m, &[SortKey::descending(SortField::Sum(0))]);
        let sums: Vec<u64> = by_sum0.iter().map(|x| ROWS[x.0 as usize - 1].3).collect();
        assert_eq!(sums, [3, 3, 3, 2, 1, 1]);
        assert_eq!(
            by_sum0,
            sorted(&m, &[SortKey::descending(SortField::Sum(0))])
        );
        // No sort key: memcmp order of the whole key.
        let raw = sorted(&m, &[]);
        assert_eq!(a(&raw), [1, 2, 3, 4, 5, 6]);
        // cmp_none: the memcmp order stays as heapsort leaves it; 8-byte
        // and odd sizes.
        assert_eq!(sorted(&m, &[SortKey::ascending(SortField::None)]).len(), 6);
        let odd = SortField::KeyNum {
            offset: 0,
            size: 3,
            signed: false,
        };
        assert_eq!(sorted(&m, &[SortKey::ascending(odd)]).len(), 6);
    }

    #[test]
    fn sort_two_keys() {
        let (s, p) = sort_fixture(ROWS);
        let m = TracingMap::attach(p, &s).unwrap();
        let a = |r: &[(u32, i32)]| r.iter().map(|x| x.0).collect::<Vec<_>>();
        let k0 = SortKey::descending(SortField::Sum(0));
        let k1 = SortKey::ascending(SortField::KeyNum {
            offset: 0,
            size: 4,
            signed: false,
        });
        assert_eq!(a(&sorted(&m, &[k0, k1])), [1, 3, 6, 4, 2, 5]);
        let k1d = SortKey::descending(SortField::KeyNum {
            offset: 0,
            size: 4,
            signed: false,
        });
        assert_eq!(a(&sorted(&m, &[k0, k1d])), [6, 3, 1, 4, 5, 2]);
        let k0a = SortKey::ascending(SortField::Sum(0));
        let k1s = SortKey::descending(SortField::Sum(1));
        assert_eq!(a(&sorted(&m, &[k0a, k1s])), [5, 2, 4, 3, 1, 6]);
        // Extra keys beyond two are ignored.
        assert_eq!(sorted(&m, &[k0, k1, k0a]), sorted(&m, &[k0, k1]));
    }

    #[test]
    fn sort_small_and_short_buffers() {
        let p = MapParams::new(3, 8, 1, 0);
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        let key = [SortKey::ascending(SortField::Sum(0))];
        let mut out = [0u32; 8];
        assert_eq!(m.sort_entries(&key, &mut out), 0);
        m.insert(&k(3)).unwrap();
        assert_eq!(m.sort_entries(&key, &mut out), 1);
        for x in 0..8 {
            m.insert(&k(x)).unwrap().update_sum(0, 8 - x);
        }
        let mut short = [0u32; 3];
        assert_eq!(m.sort_entries(&key, &mut short), 3);
        assert_eq!(m.sort_entries(&key, &mut out), 8);
        let keys: Vec<u64> = out.iter().map(|&i| m.elt(i).unwrap().key_word(0)).collect();
        assert_eq!(keys, [7, 6, 5, 4, 3, 2, 1, 0]);
        assert_eq!(m.collect_entries(&mut out), 8);
        assert!(m.elt(8).is_none());
    }

    #[test]
    fn heapsort_sorts_and_matches_lib_sort_shapes() {
        // Sorted output for all small sizes and patterns.
        let mut seed = 0x1234_5678u64;
        for n in 0..40usize {
            for _ in 0..20 {
                let mut v: Vec<u32> = (0..n)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        (seed % 7) as u32
                    })
                    .collect();
                let mut want = v.clone();
                want.sort();
                kernel_heapsort(&mut v, &mut |a, b| a.cmp(&b));
                assert_eq!(v, want);
            }
        }
        // Reference outputs of lib/sort.c (6.12) on a tie-heavy input: the
        // values sort by v / 10, the index shows where equal ones end up.
        let input: Vec<u32> = [
            12, 3, 15, 7, 11, 1, 19, 5, 13, 8, 0, 17, 2, 14, 9, 16, 4, 18, 6, 10,
        ]
        .to_vec();
        let mut v = input.clone();
        kernel_heapsort(&mut v, &mut |a, b| (a / 10).cmp(&(b / 10)));
        assert_eq!(v, KERNEL_SORT_REFERENCE);
    }

    /// `lib/sort.c` of Linux 6.12, compiled in user space, sorting the
    /// input of the test above on `v / 10`.
    const KERNEL_SORT_REFERENCE: [u32; 20] = [
        0, 6, 9, 4, 8, 2, 5, 3, 7, 1, 16, 18, 13, 10, 11, 17, 14, 19, 15, 12,
    ];

    #[test]
    fn key_compare_functions() {
        let p = MapParams::new(3, 24, 1, 0);
        let s = storage(&p);
        let m = TracingMap::new(p, &s).unwrap();
        let mut ka = [0u8; 24];
        let mut kb = [0u8; 24];
        ka[0] = 0x80; // i8 -128 / u8 128
        kb[0] = 0x01;
        ka[2..4].copy_from_slice(&(-2i16).to_ne_bytes());
        kb[2..4].copy_from_slice(&3i16.to_ne_bytes());
        ka[8..16].copy_from_slice(&(-1i64).to_ne_bytes());
        kb[8..16].copy_from_slice(&1i64.to_ne_bytes());
        ka[16..20].copy_from_slice(b"abc\0");
        kb[16..24].copy_from_slice(b"abcdefgh"); // runs to the key's end
        let a = m.insert(&ka).unwrap();
        let b = m.insert(&kb).unwrap();
        let c = |f: SortField| f.compare(&a, &b);
        use CmpOrdering::*;
        let num = |offset, size, signed| SortField::KeyNum {
            offset,
            size,
            signed,
        };
        assert_eq!(c(num(0, 1, false)), Greater);
        assert_eq!(c(num(0, 1, true)), Less);
        assert_eq!(c(num(2, 2, false)), Greater);
        assert_eq!(c(num(2, 2, true)), Less);
        assert_eq!(c(num(8, 8, false)), Greater);
        assert_eq!(c(num(8, 8, true)), Less);
        assert_eq!(c(num(20, 8, true)), Equal); // past the key
        assert_eq!(c(num(0, 16, true)), Equal); // no such size
        assert_eq!(c(SortField::KeyStr { offset: 16 }), Less);
        assert_eq!(c(SortField::KeyStr { offset: 30 }), Equal);
        assert_eq!(c(SortField::None), Equal);
        assert_eq!(m.cmp_key_bytes(a.index(), b.index()), Greater); // 0x80 > 0x01
        assert_eq!(m.cmp_key_bytes(a.index(), a.index()), Equal);
    }
}
