// SPDX-License-Identifier: GPL-2.0

//! Value statistics, rhist's extension beyond hist: `.min`, `.max` and
//! `.avg` of a value (`vals=lat.min,lat.max,lat.avg`).
//!
//! hist 6.12 rejects these modifiers, so a text that uses them is one
//! hist rejects; [`super::hist_data::HistData::build`] takes one only
//! where hist's build fails (see there).  This module is the arithmetic:
//! how a statistic sits in a map slot, and what it prints.
//!
//! # In the map
//!
//! A statistic takes one slot of its entry's sums, as a sum does, and
//! per CPU when the sums are ([`super::map::MapParams::per_cpu`]):
//!
//! * `.avg` is a plain sum of the value, printed divided by the entry's
//!   hitcount; it needs nothing of its own but the slot.
//! * `.min` and `.max` are slots used as maxima: an event raises its
//!   CPU's copy with an atomic maximum
//!   ([`super::map::Elt::update_max_on`]), and a reader takes the largest
//!   copy ([`super::map::Elt::read_max`]).
//!   The slot holds the value encoded as `value ^ xor` ([`SlotOp`]), a
//!   bijection of the 64-bit values that keeps the order the statistic
//!   wants largest and maps its identity to 0: `0` for the largest
//!   unsigned value, `1 << 63` for the largest signed one (`i64::MIN`
//!   becomes 0), `!0` for the smallest unsigned one (order reversed,
//!   `u64::MAX` becomes 0), `!0 >> 1` for the smallest signed one
//!   (`i64::MAX` becomes 0).  A slot is zeroed when its element is
//!   handed out and when the map is cleared, which is the identity: a
//!   new entry needs no initial value before it is published, and its
//!   first event's update is exact whatever other CPUs do meanwhile.
//!
//! `.quantiles` (the percentiles) is the odd one: its slot stays 0, and its value goes
//! to a sketch of the entry ([`super::sketch`]), one per `.quantiles`
//! value and entry, in a pool made with the map. It takes unsigned
//! values only: a text with `.quantiles` of a signed value does not
//! build (and gets hist's error, as any text that fails both ways).
//!
//! Signed means the value's hist field is (`is_signed`): a signed event
//! field, an expression whose first operand is one, a reference to a
//! signed variable. The value is then the field sign-extended to 64 bits,
//! so that comparing it as an `i64` compares it as the field's type.

/// A statistic of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statistic {
    /// `.min`: the smallest value of the entry's events.
    Min,
    /// `.max`: the largest value of the entry's events.
    Max,
    /// `.avg`: the sum of the values over the hitcount, rounded toward
    /// zero.
    Avg,
    /// `.quantiles`: the percentiles p50, p90, p99 and p999 of the
    /// entry's values, from its sketch ([`super::sketch`]); its slot is
    /// left at 0 (it is kept so that a value's index stays its slot's).
    /// Not `.percentiles`, which hist takes: C reads any modifier that
    /// starts with `percent` as `.percent`.
    Percentiles,
}

impl Statistic {
    /// The modifier, without its dot.
    pub const fn name(self) -> &'static str {
        match self {
            Statistic::Min => "min",
            Statistic::Max => "max",
            Statistic::Avg => "avg",
            Statistic::Percentiles => "quantiles",
        }
    }

    /// The statistic a value text ends with, and the text before it:
    /// `lat.max` is `(lat, Max)`. `None` without such a suffix, or with
    /// nothing before it.
    pub fn split(text: &str) -> Option<(&str, Statistic)> {
        let (stem, suffix) = text.rsplit_once('.')?;
        let stat = match suffix {
            "min" => Statistic::Min,
            "max" => Statistic::Max,
            "avg" => Statistic::Avg,
            "quantiles" => Statistic::Percentiles,
            _ => return None,
        };
        (!stem.is_empty()).then_some((stem, stat))
    }

    /// How the slot of this statistic of a value (signed or not) is
    /// updated.
    pub const fn slot_op(self, signed: bool) -> SlotOp {
        const SIGN: u64 = 1 << 63;
        match (self, signed) {
            (Statistic::Avg, _) => SlotOp::Add,
            (Statistic::Percentiles, _) => SlotOp::Sketch,
            (Statistic::Max, false) => SlotOp::Max { xor: 0 },
            (Statistic::Max, true) => SlotOp::Max { xor: SIGN },
            (Statistic::Min, false) => SlotOp::Max { xor: !0 },
            (Statistic::Min, true) => SlotOp::Max { xor: !SIGN },
        }
    }

    /// The statistic of a value (signed or not) whose slot reads `slot`
    /// (its copies combined: summed, or their maximum), the entry's
    /// hitcount being `hits`.
    pub fn value(self, signed: bool, slot: u64, hits: u64) -> u64 {
        match self.slot_op(signed) {
            SlotOp::Max { xor } => slot ^ xor,
            SlotOp::Add => per_hit(slot, hits, signed),
            SlotOp::Sketch => slot,
        }
    }
}

/// How an event updates a slot of its entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotOp {
    /// Adds the value (a sum, hitcount, `.avg`).
    Add,
    /// Raises the slot to `value ^ xor` (`.min`, `.max`).
    Max {
        /// What the value is encoded with.
        xor: u64,
    },
    /// Leaves the slot and records the value in the entry's sketch
    /// (`.quantiles`).
    Sketch,
}

/// `sum / hits` as the kernel divides a `u64` (`div64_u64()`) or, for a
/// signed value, an `s64` (`div64_s64()`, rounding toward zero); 0 for no
/// hits (an entry read between its publication and its first update).
pub fn per_hit(sum: u64, hits: u64, signed: bool) -> u64 {
    if hits == 0 {
        return 0;
    }
    match (signed, i64::try_from(hits)) {
        // hits > 0, so neither overflows.
        (true, Ok(h)) => ((sum as i64) / h) as u64,
        _ => sum / hits,
    }
}

// Not under loom, whose test compiles this file alone (for map.rs); the
// path, so that the file is found from there too.
#[path = "stats/tests.rs"]
#[cfg(all(test, not(loom)))]
mod tests;
