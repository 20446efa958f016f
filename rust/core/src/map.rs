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

mod elt;
mod fold;
mod insert;
mod probe;
mod sort;
mod sums;

pub use elt::Elt;
#[cfg(not(MODULE))]
pub use elt::EltVars;
pub use sort::{SortField, SortKey};
pub use sums::{raise, SumsIndex};
// Named by the host's users only, not the module's shell.
#[allow(unused_imports)]
pub use {
    sort::{External, Iter},
    sums::CpuSums,
};

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
#[cfg(not(MODULE))]
pub const BITS_DEFAULT: u32 = 11;
/// Largest `bits` (`TRACING_MAP_BITS_MAX`).
pub const BITS_MAX: u32 = 17;
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
    #[cfg(not(MODULE))]
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
#[cfg(not(MODULE))]
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

/// How far a look-up went (see [`TracingMap::event_find_at_home`]).
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
    /// ([`TracingMap::event_find_past_home`]).
    Further,
    /// The rest is the probe loop's, from the entry where the key's probe
    /// starts ([`TracingMap::event_insert_missing`]): to insert the key
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
    #[cfg(not(MODULE))]
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
    #[cfg(not(MODULE))]
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

    /// Whether [`len`](Self::len) is at least `n`, for an `n` up to
    /// [`max_elts`](Self::max_elts) (`usize::MAX`: never): one load and
    /// a compare, what the event path of a `:grow` map asks
    /// ([`GrowTrigger::near`](super::grow::GrowTrigger::near)).
    #[inline(always)]
    pub fn len_reaches(&self, n: usize) -> bool {
        // Failed inserts count past the map's size: not past an `n` up
        // to it, and never to `u64::MAX`.
        self.header[NEXT_ELT].load(Ordering::Relaxed) >= n as u64
    }

    /// Whether no element has been handed out.
    #[cfg(not(MODULE))]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The hash the map uses for `key` (never 0).
    #[cfg(not(MODULE))]
    pub fn hash_key(&self, key: &[u8]) -> u32 {
        key_hash(key, self.g.params.key_size)
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
