// SPDX-License-Identifier: GPL-2.0

//! The probe: finding a key's entry, claiming a free one and filling its
//! element, waiting for one being published.

use super::*;

impl<'a> TracingMap<'a> {
    /// The number of words of a key `key` is: its own or the map's.
    #[inline(always)]
    pub(super) fn key_words<K: MapKey>(&self) -> usize {
        match K::WORDS {
            0 => self.g.layout.key_words as usize,
            n => n,
        }
    }

    #[inline]
    pub(super) fn count(&self, which: usize) {
        self.header[which].fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a drop of the key whose hash is `h`.
    #[inline]
    pub(super) fn count_drop(&self, h: u32) {
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
    pub(super) fn find<K: MapKey>(
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
    pub(super) fn find_idx<K: MapKey>(
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
    pub(super) fn start(&self, h: u32) -> usize {
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
    pub(super) fn find_first<K: MapKey>(&self, key: K, h: u32, how: Find) -> First {
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
    pub(super) fn at_free(&self, h: u32, how: Find) -> First {
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
    /// ([`event_find_past_home`](Self::event_find_past_home)),
    /// that leaves the caller's registers alone.
    #[inline(always)]
    pub(super) fn find_further<K: MapKey>(&self, key: K, h: u32, start: usize, how: Find) -> First {
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
    pub(super) fn probe<K: MapKey>(
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
    pub(super) fn fill(
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
    pub(super) fn holds(&self, idx: u32, key: impl MapKey, words: usize) -> bool {
        // Neither overflows, as both factors are below 2^32: one bounds
        // check.
        let k = u64::from(idx).wrapping_mul(self.g.key_stride as u32 as u64) as usize;
        self.keys
            .get(k..k.wrapping_add(words))
            .is_some_and(|slots| key.matches(slots))
    }

    /// An element that no entry publishes yet, for
    /// [`fold_insert`](Self::fold_insert); `None` when none is left.
    pub(super) fn take_elt(&self) -> Option<u32> {
        let max = self.g.max_elts as u64;
        if self.header[NEXT_ELT].load(Ordering::Relaxed) >= max {
            return None;
        }
        // Relaxed: as in `fill()`.
        let i = self.header[NEXT_ELT].fetch_add(1, Ordering::Relaxed);
        u32::try_from(i).ok().filter(|_| i < max)
    }
}
