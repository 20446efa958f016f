// SPDX-License-Identifier: GPL-2.0

//! The values a program adds to an element's sums, and the statistics
//! it keeps of the last one.

use super::*;

impl Program {
    /// Adds the values of `rec`, the sums after the hitcount, to
    /// `values`, the element's sums after its hitcount, as long as their
    /// loads are quick ([`Op::eval_fast`]): `Err(i)` when value `i` (sum
    /// `i + 1`) and those after it are left to
    /// [`add_values`](Self::add_values).
    #[inline(always)]
    pub fn add_values_fast(&self, rec: &[u8], values: &[AtomicU64]) -> Result<(), usize> {
        for i in 1..usize::from(self.n_sums).min(TRACING_MAP_VALS_MAX) {
            let (Some(op), Some(sum)) = (self.sums.get(i), values.get(i - 1)) else {
                break;
            };
            match op.eval_fast(rec) {
                Some(v) => sum.fetch_add(v, Ordering::Relaxed),
                None => return Err(i - 1),
            };
        }
        Ok(())
    }

    /// Applies the values of `rec` from value `from` on (see
    /// [`add_values_fast`](Self::add_values_fast)) to `values`, each as
    /// its operation says ([`apply`](Self::apply)), `sketch(i, value)`
    /// recording a `.quantiles` value, sum `i`.
    pub fn add_values(
        &self,
        rec: &[u8],
        values: &[AtomicU64],
        from: usize,
        mut sketch: impl FnMut(usize, u64),
    ) {
        for i in from + 1..self.n_sums() {
            if let Some(v) = self.apply(rec, values, i) {
                sketch(i, v);
            }
        }
    }

    /// Applies sum `i` of `rec` to `values`, the element's sums after its
    /// hitcount, as its operation says: an add, or the atomic maximum of
    /// its encoded value ([`raise`]: NMI-safe, as an add is, even against
    /// an update of the same slot by an NMI on this CPU). A `.quantiles`
    /// value leaves its slot at 0 and is returned, for its sketch.
    #[inline(always)]
    pub fn apply(&self, rec: &[u8], values: &[AtomicU64], i: usize) -> Option<u64> {
        let (Some(load), Some(&op), Some(num), Some(sum)) = (
            self.sums.get(i),
            self.ops.get(i),
            self.nums.get(i),
            values.get(i.wrapping_sub(1)),
        ) else {
            return None;
        };
        let v = match read_word(rec, num.word_at) {
            Some(word) => num.of(word),
            None => load.eval(rec),
        };
        match op {
            SlotOp::Add => {
                sum.fetch_add(v, Ordering::Relaxed);
            }
            SlotOp::Max { xor } => raise(sum, v ^ xor),
            SlotOp::Sketch => return Some(v),
        }
        None
    }

    /// [`add_values`](Self::add_values) of the commonest values with a
    /// statistic, a `.min`, `.max` or `.quantiles` of a number, last,
    /// after plain sums (done: `from` is its index in `values`), whose
    /// number is in `rec`: a few loads, a test and the atomic maximum;
    /// [`Applied::NotQuick`], having done nothing, for any other.
    #[inline(always)]
    pub fn last_stat(&self, rec: &[u8], values: &[AtomicU64], from: usize) -> Applied {
        let last = &self.last;
        if from != usize::from(last.from) {
            return Applied::NotQuick;
        }
        let Some(word) = read_word(rec, last.num.word_at) else {
            return Applied::NotQuick;
        };
        let v = last.num.of(word);
        // A sketch's slot is not written: no bounds check for it.
        if last.sketch {
            return Applied::Sketch(v);
        }
        let Some(sum) = values.get(from) else {
            return Applied::NotQuick;
        };
        raise(sum, v ^ last.xor);
        Applied::Done
    }

    /// The number of the last value in `rec`, when [`add_values_fast`]
    /// stopped at it, at `from`, and that is `sketch_from`, the `from`
    /// of the histogram's sketch of [`last_sketch`](Self::last_sketch)
    /// (`usize::MAX` for none), and its number is in `rec`: what
    /// [`last_stat`](Self::last_stat) returns as [`Applied::Sketch`], in
    /// one test and a load.
    ///
    /// [`add_values_fast`]: Self::add_values_fast
    #[inline(always)]
    pub fn last_sketch_value(&self, rec: &[u8], from: usize, sketch_from: usize) -> Option<u64> {
        if from != sketch_from {
            return None;
        }
        let num = &self.last.num;
        Some(num.of(read_word(rec, num.word_at)?))
    }

    /// The sum that [`last_stat`](Self::last_stat) returns as
    /// [`Applied::Sketch`], if any: the last, a `.quantiles` value.
    pub fn last_sketch(&self) -> Option<usize> {
        let last = &self.last;
        (last.sketch && last.from != u8::MAX).then_some(usize::from(last.from) + 1)
    }
}
