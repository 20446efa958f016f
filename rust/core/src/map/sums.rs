// SPDX-License-Identifier: GPL-2.0

//! The sums of the elements: their per-CPU copies and maxima.

use super::*;

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

impl<'a> TracingMap<'a> {
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
}
