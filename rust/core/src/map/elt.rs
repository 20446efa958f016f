// SPDX-License-Identifier: GPL-2.0

//! An element of the map: its key, sums, variables and private words.

use super::*;

/// One element of a map: its key, sums, variables and private words.
///
/// Obtained from [`TracingMap::insert`] and friends; valid as long as the
/// map's storage is, but after a [`TracingMap::clear`] it may belong to
/// another key.
#[derive(Clone, Copy)]
pub struct Elt<'a> {
    pub(super) key: &'a [AtomicU64],
    pub(super) data: &'a [AtomicU64],
    /// Its sums: CPU 0's, then each next CPU's `layout.cpu_stride` on.
    pub(super) sums: &'a [AtomicU64],
    pub(super) layout: EltLayout,
    pub(super) idx: u32,
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

    pub(super) fn key_slots(&self) -> &'a [AtomicU64] {
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
    #[cfg(not(MODULE))]
    #[inline]
    pub fn key_eq(&self, key: &[u8]) -> bool {
        self.key_is(key.get(..self.key_size()).unwrap_or(key), self.key_words())
    }

    /// Whether the key equals `key`, which has `words` words (the map's).
    #[cfg(not(MODULE))]
    #[inline]
    pub(super) fn key_is(&self, key: impl MapKey, words: usize) -> bool {
        self.key
            .get(..words)
            .is_some_and(|slots| key.matches(slots))
    }

    #[cfg(not(MODULE))]
    pub(super) fn key_words(&self) -> usize {
        self.layout.key_words as usize
    }

    /// CPU `cpu`'s copy of sum `i`; `None` out of range.
    #[inline]
    pub(super) fn sum_of(&self, cpu: u32, i: usize) -> Option<&'a AtomicU64> {
        let words: &'a [AtomicU64] = self.sums;
        match i < self.layout.n_sums as usize && cpu < self.layout.n_cpus {
            // Does not overflow: cpu < n_cpus, and the copies fit in
            // memory.
            true => words.get(cpu as usize * self.layout.cpu_stride as usize + i),
            false => None,
        }
    }

    #[inline]
    pub(super) fn var(&self, i: usize) -> Option<&'a AtomicU64> {
        let words: &'a [AtomicU64] = self.data;
        match i < self.layout.n_vars as usize {
            true => words.get(self.layout.vars_off() + i),
            false => None,
        }
    }

    pub(super) fn var_flags(&self) -> Option<&'a AtomicU64> {
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
    #[cfg(not(MODULE))]
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
        if let (Some(v), Some(flags)) = (self.var(i), self.var_flags()) {
            set_var_word(v, flags, i, n);
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
    #[cfg(not(MODULE))]
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

/// Sets variable `i`, word `v`, to `n`, and its bit in `flags`.
#[inline(always)]
fn set_var_word(v: &AtomicU64, flags: &AtomicU64, i: usize, n: u64) {
    v.store(n, Ordering::Relaxed);
    // Release: whoever sees the flag sees this value (or a later one).
    // Once set, the flag stays set until the map is cleared: skip the
    // read-modify-write, as C's plain `var_set[i] = true` does.
    if flags.load(Ordering::Relaxed) & (1 << i) == 0 {
        flags.fetch_or(1 << i, Ordering::Release);
    }
}

/// The variables of one element, as the event path sets them: their
/// words and the word of their flags, without the rest of an [`Elt`].
pub struct EltVars<'a> {
    flags: &'a AtomicU64,
    vars: &'a [AtomicU64],
}

impl EltVars<'_> {
    /// [`Elt::set_var`]: sets variable `i` (ignored out of range).
    #[inline]
    pub fn set(&self, i: usize, n: u64) {
        if let Some(v) = self.vars.get(i) {
            set_var_word(v, self.flags, i, n);
        }
    }
}

impl<'a> TracingMap<'a> {
    /// The variables of the element with index `idx`; `None` past
    /// `max_elts`, or for a map without variables.
    #[inline]
    pub fn elt_vars(&self, idx: u32) -> Option<EltVars<'a>> {
        let l = &self.g.layout;
        if l.n_vars == 0 {
            return None;
        }
        // None overflows, as in `elt()`.
        let d = (idx as usize).wrapping_mul(self.g.data_stride);
        let data: &'a [AtomicU64] = self.data;
        let words = data.get(d + l.flags_off()..d + l.vars_off() + l.n_vars as usize)?;
        let (flags, vars) = words.split_first()?;
        Some(EltVars { flags, vars })
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
}
