// SPDX-License-Identifier: GPL-2.0

//! The order of the entries: iteration, and the sort that mirrors
//! `tracing_map_sort_entries()` with the kernel's heapsort (`lib/sort.c`).

use super::*;

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
    /// A statistic (rhist's, [`stats`](super::super::stats)): sum `sum` divided by sum
    /// 0, the hitcount, when `per_hit` ([`per_hit`](super::super::stats::per_hit), an
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
    pub(super) fn compare(&self, a: &Elt<'_>, b: &Elt<'_>) -> CmpOrdering {
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
pub(super) fn kernel_heapsort(v: &mut [u32], cmp: &mut impl FnMut(u32, u32) -> CmpOrdering) {
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

impl<'a> TracingMap<'a> {
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
    pub(super) fn cmp_sort_keys(
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
    pub(super) fn cmp_key_bytes(&self, a: u32, b: u32) -> CmpOrdering {
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
    pub(super) fn cmp_sort_key(
        &self,
        key: &SortKey,
        external: &External<'_>,
        a: u32,
        b: u32,
    ) -> CmpOrdering {
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
