// SPDX-License-Identifier: GPL-2.0

//! Clearing the map, and folding one map into another (`:grow`).

use super::*;

impl<'a> TracingMap<'a> {
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
    pub(super) fn fold_insert(
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

    /// Adds `n` to the drops (what a fold could not move, say).
    pub fn add_drops(&self, n: u64) {
        self.add_count(DROPS, n);
    }

    pub(super) fn add_count(&self, which: usize, n: u64) {
        if n != 0 {
            self.header[which].fetch_add(n, Ordering::Relaxed);
        }
    }
}
