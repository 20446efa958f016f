// SPDX-License-Identifier: GPL-2.0

//! `:grow`, rhist's extension beyond hist: a histogram whose map moves to
//! a larger one when it fills, rather than dropping new keys.
//!
//! # The protocol
//!
//! The owner (the kernel shell) keeps the histogram of the current
//! generation behind one pointer, which the event path loads once per
//! event, and the next generation, the spare, made ahead of need. This
//! module is what does not need those pointers:
//!
//! 1. The event path, after accounting an event in generation `g` that
//!    found `g` near its threshold ([`GrowTrigger::near`], before the
//!    event: the only question the others ask), asks
//!    [`GrowTrigger::check`] with `g`'s entry count whether `g` has
//!    reached its threshold (half the map): true once per generation.
//!    It then takes the spare, if there is one (one swap: one taker),
//!    hangs `g` on it as the generation it replaced, publishes it as the
//!    current one, and schedules the work (an NMI-safe `irq_work`, which
//!    queues a work item): no allocation, no lock, no wait.
//! 2. The work, in process context and under the lock the readers of
//!    the histogram take, makes the next spare, of [`spare_bits`] (if the
//!    threshold came when there was none, it switches to it itself, as
//!    [`GrowTrigger::asked`] says; a failed allocation
//!    [`GrowTrigger::retry`]s later). Then it waits until no event can
//!    still be in the generations left behind (a grace period: every
//!    probe that loaded one of them has returned), folds them into the
//!    current one ([`fold_into`]) and frees them. A reader, under the
//!    same lock, folds them itself before it reads.
//! 3. Between the switch and the fold, a key's events go to its entry in
//!    the new map, and the fold adds the old counts to it: none lost,
//!    none counted twice. A reader sees the histogram after a fold.
//! 4. Events are dropped only when a burst of new keys fills the current
//!    generation before the work has made the next spare: as many new
//!    keys as the spare holds (four times the current size, and at least
//!    [`SPARE_BITS_MIN`]'s 8192) can come between two runs of the work.
//!    Drops are counted in the map's `Dropped:`, and folded.
//!
//! [`GrowStats`] counts what `rhist_debug` shows.

use core::fmt::{self, Write};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};

use super::histogram::Histogram;
use super::map::{MapError, TracingMap, BITS_MAX};
use super::stats::SlotOp;

/// The largest map a histogram grows to, in bits: `TRACING_MAP_BITS_MAX`,
/// 131072 entries.
pub const GROW_BITS_MAX: u32 = BITS_MAX;

/// Each grow multiplies the entries by `1 << GROW_STEP_BITS`.
pub const GROW_STEP_BITS: u32 = 2;

/// The size to grow a map of `bits` to: four times larger, up to
/// [`GROW_BITS_MAX`]; `None` at the cap.
pub fn next_bits(bits: u32) -> Option<u32> {
    (bits < GROW_BITS_MAX).then(|| (bits + GROW_STEP_BITS).min(GROW_BITS_MAX))
}

/// The fewest entries of a spare generation, in bits: 8192, the spare of
/// a `:grow` map of hist's default size (2048). A smaller map's spare is
/// made this large, so that a burst of new keys has as much room before
/// the work runs whatever `size=` said.
pub const SPARE_BITS_MIN: u32 = 13;

/// The size of the spare made for a generation of `bits`: the next size
/// ([`next_bits`]) but at least [`SPARE_BITS_MIN`], up to the cap;
/// `None` at the cap.
pub fn spare_bits(bits: u32) -> Option<u32> {
    next_bits(bits).map(|b| b.clamp(SPARE_BITS_MIN, GROW_BITS_MAX))
}

/// When a generation's map asks to grow: once its entry count reaches a
/// threshold, and once only, until [`retry`](Self::retry).
///
/// The event path asks [`check`](Self::check) after it accounted an
/// event, with the count then; to spare the events far from the
/// threshold that, it asks [`near`](Self::near) first, before the
/// event: whether the map is within `slack` entries of the threshold,
/// `slack` being more than the events that can be under way at once (then
/// an event that takes the entry that reaches the threshold found the
/// map near it, unless it was held up between the two for longer than
/// `slack` other inserts took: then the next event, or reader, asks).
#[derive(Debug)]
pub struct GrowTrigger {
    /// The entry count that asks; `usize::MAX`: never.
    at: AtomicUsize,
    /// The first `at` less `slack` (`usize::MAX` with it): at most any
    /// later `at` less `slack` (`retry()` raises `at`, `reset()` puts it
    /// back), and never changed, so that the event path compares with it
    /// in memory.
    near: usize,
    max_elts: usize,
    requested: AtomicBool,
}

impl GrowTrigger {
    /// The trigger of a map of `bits` (`1 << bits` entries): at half of
    /// them, or never at the cap; [`near`](Self::near) it within
    /// `slack` entries.
    pub fn new(bits: u32, slack: usize) -> Self {
        let max_elts = 1usize << bits.min(GROW_BITS_MAX);
        let at = Self::first(max_elts);
        GrowTrigger {
            at: AtomicUsize::new(at),
            near: match at {
                usize::MAX => usize::MAX,
                at => at.saturating_sub(slack),
            },
            max_elts,
            requested: AtomicBool::new(false),
        }
    }

    /// The threshold of a new map of `max_elts` entries: half of them,
    /// or never at the cap.
    fn first(max_elts: usize) -> usize {
        if max_elts >= 1 << GROW_BITS_MAX {
            usize::MAX
        } else {
            max_elts / 2
        }
    }

    /// Whether an event that left the map with `len` entries must ask for
    /// the grow: true for one event of the generation. Lock-free, no
    /// write but the one that says yes (a test-and-set, after a load that
    /// spares the others the locked instruction).
    #[inline(always)]
    pub fn check(&self, len: usize) -> bool {
        len >= self.at.load(Ordering::Relaxed)
            && !self.requested.load(Ordering::Relaxed)
            && !self.requested.swap(true, Ordering::Relaxed)
    }

    /// Whether `map`, this trigger's, is within `slack` entries of the
    /// first threshold, or past it: what the event path asks before
    /// every event, in two loads and a compare; an event that finds it
    /// so asks [`check`](Self::check) after its update (see the type).
    /// Once true, it stays true until the map is emptied.
    #[inline(always)]
    pub fn near(&self, map: &TracingMap<'_>) -> bool {
        // At most the map's size, or `usize::MAX`.
        map.len_reaches(self.near)
    }

    /// Whether the threshold was reached and the grow is still to come.
    pub fn asked(&self) -> bool {
        self.requested.load(Ordering::Relaxed)
    }

    /// After a grow that failed (the larger map could not be allocated):
    /// asks again halfway from the threshold to the full map, and at the
    /// full map; then never. Whatever the map drops meanwhile is counted
    /// in its `Dropped:`.
    pub fn retry(&self) {
        let at = self.at.load(Ordering::Relaxed);
        let next = if at >= self.max_elts {
            usize::MAX
        } else {
            at + (self.max_elts - at).div_ceil(2)
        };
        self.at.store(next, Ordering::Relaxed);
        self.requested.store(false, Ordering::Relaxed);
    }

    /// After the map was emptied (`clear`): asks as a new map's trigger
    /// does, at half the map (never at the cap).
    pub fn reset(&self) {
        self.at.store(Self::first(self.max_elts), Ordering::Relaxed);
        self.requested.store(false, Ordering::Relaxed);
    }

    /// The entry count that asks next, if any.
    #[cfg(not(MODULE))]
    pub fn threshold(&self) -> Option<usize> {
        Some(self.at.load(Ordering::Relaxed)).filter(|&at| at != usize::MAX)
    }
}

/// What a growing histogram has done, for `rhist_debug`.
#[derive(Debug, Default)]
pub struct GrowStats {
    generation: AtomicU32,
    grows: AtomicU32,
    failed: AtomicU32,
}

impl GrowStats {
    /// A new generation was published.
    pub fn grew(&self) {
        self.generation.fetch_add(1, Ordering::Relaxed);
        self.grows.fetch_add(1, Ordering::Relaxed);
    }

    /// A grow could not allocate its map.
    pub fn failed(&self) {
        self.failed.fetch_add(1, Ordering::Relaxed);
    }

    /// The generation (0 for the map `size=` made).
    pub fn generation(&self) -> u32 {
        self.generation.load(Ordering::Relaxed)
    }

    /// Grows done and failed.
    pub fn counts(&self) -> (u32, u32) {
        (
            self.grows.load(Ordering::Relaxed),
            self.failed.load(Ordering::Relaxed),
        )
    }

    /// The `rhist_debug` line of a histogram whose current map has
    /// `max_elts` entries.
    pub fn write_debug(&self, out: &mut dyn Write, max_elts: usize) -> fmt::Result {
        let (grows, failed) = self.counts();
        writeln!(
            out,
            "  grow: generation {} size {} grows {} failed {}",
            self.generation(),
            max_elts,
            grows,
            failed
        )
    }
}

/// Folds the histogram of a generation into that of the next (see the
/// module documentation): `old`'s entries are added to `new`'s, the
/// statistics' maxima merged, the keys `new` has no room for counted in
/// its drops (their hitcounts). Both must be of the same [`HistData`]
/// (a map of any size), without `.quantiles`; events may update `new`
/// meanwhile, but none `old`.
///
/// [`HistData`]: super::hist_data::HistData
pub fn fold_into(old: &Histogram<'_>, new: &Histogram<'_>) -> Result<usize, MapError> {
    if !core::ptr::eq(old.data(), new.data()) || old.sketches().is_some() {
        return Err(MapError::StorageTooSmall);
    }
    let data = old.data();
    let is_max = |i| matches!(data.slot_op(i), SlotOp::Max { .. });
    let dst = new.map();
    old.map()
        .fold_into(dst, is_max, |elt| dst.add_drops(elt.read_sum(0)))
}

#[cfg(test)]
mod tests;
