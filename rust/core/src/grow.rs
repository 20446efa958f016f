// SPDX-License-Identifier: GPL-2.0

//! `:grow`, rhist's extension beyond hist: a histogram whose map moves to
//! a larger one when it fills, rather than dropping new keys.
//!
//! # The protocol
//!
//! The owner (the kernel shell) keeps the histogram of the current
//! generation behind one pointer, which the event path loads once per
//! event. This module is what does not need that pointer:
//!
//! 1. The event path, after accounting an event in generation `g`, asks
//!    [`GrowTrigger::check`] with `g`'s entry count whether to ask for a
//!    grow: true once per generation, when the count reaches the
//!    threshold (half the map). The shell then schedules the grow work
//!    (an NMI-safe `irq_work`, which queues a work item), nothing more.
//! 2. The grow work, in process context and under the lock the readers
//!    of the histogram take, makes the map of [`next_bits`] (a failed
//!    allocation keeps `g` and [`GrowTrigger::retry`]s later), publishes
//!    the new generation, waits until no event can still be in `g` (a
//!    grace period: every probe that loaded the old pointer has
//!    returned), then folds `g` into it ([`fold_into`]) and frees `g`.
//! 3. Between the publication and the fold, a key's events go to its
//!    entry in the new map, and the fold adds `g`'s counts to it: none
//!    lost, none counted twice. A reader holds the lock, so it sees the
//!    histogram before the publication or after the fold.
//!
//! [`GrowStats`] counts what `rhist_debug` shows.

use core::fmt::{self, Write};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};

use super::histogram::Histogram;
use super::map::{MapError, BITS_MAX};
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

/// When a generation's map asks to grow: once its entry count reaches a
/// threshold, and once only, until [`retry`](Self::retry).
#[derive(Debug)]
pub struct GrowTrigger {
    /// The entry count that asks; `usize::MAX`: never.
    at: AtomicUsize,
    max_elts: usize,
    requested: AtomicBool,
}

impl GrowTrigger {
    /// The trigger of a map of `bits` (`1 << bits` entries): at half of
    /// them, or never at the cap.
    pub fn new(bits: u32) -> Self {
        let max_elts = 1usize << bits.min(GROW_BITS_MAX);
        let at = match next_bits(bits) {
            Some(_) => max_elts / 2,
            None => usize::MAX,
        };
        GrowTrigger {
            at: AtomicUsize::new(at),
            max_elts,
            requested: AtomicBool::new(false),
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
        let at = if self.max_elts >= 1 << GROW_BITS_MAX {
            usize::MAX
        } else {
            self.max_elts / 2
        };
        self.at.store(at, Ordering::Relaxed);
        self.requested.store(false, Ordering::Relaxed);
    }

    /// The entry count that asks next, if any.
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
