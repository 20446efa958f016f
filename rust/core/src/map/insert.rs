// SPDX-License-Identifier: GPL-2.0

//! What a caller finds or inserts a key with. `insert*` and `lookup` are
//! C's, counting the hit. `event_*` are the event path's, for a
//! histogram that counts its hits itself (its hitcount, sum 0): by the
//! form of its key (bytes, any [`MapKey`], words, exactly the map's
//! words), or in three calls whose first is inline: the key at its home
//! entry, past it, then inserted if missing.

use super::*;

impl<'a> TracingMap<'a> {
    /// Finds the element of `key`, inserting it if new: C's
    /// `tracing_map_insert()`.  `None` when it had to be dropped (counted
    /// in [`drops`](Self::drops)); otherwise the hit is counted.
    ///
    /// `key` is taken as `key_size` bytes: shorter is zero padded, longer is
    /// cut.  Lock-free, no allocation, at most `2 * map_size + 1` looks at
    /// an entry, whatever other inserters do.
    #[inline]
    pub fn insert(&self, key: &[u8]) -> Option<Elt<'a>> {
        self.insert_on(key, Inserter::ANYWHERE)
    }

    /// [`insert`](Self::insert) by an insert that says where it runs.
    #[inline]
    pub fn insert_on(&self, key: &[u8], who: Inserter) -> Option<Elt<'a>> {
        self.find(self.cut(key), Find::Insert, who, |_| {})
    }

    /// [`insert`](Self::insert), running `init` on a newly inserted element
    /// before it is published (C's `elt_init` callback), e.g. to fill its
    /// private words.  `init` is not run when the key was already there.
    #[cfg(not(MODULE))]
    #[inline]
    pub fn insert_with(&self, key: &[u8], init: impl FnOnce(&Elt<'a>)) -> Option<Elt<'a>> {
        self.find(self.cut(key), Find::Insert, Inserter::ANYWHERE, init)
    }

    /// Finds the element of `key` without inserting it: C's
    /// `tracing_map_lookup()`.  Counts no hit; like C, it counts a drop
    /// when it gives up waiting for an element being published.
    #[inline]
    pub fn lookup(&self, key: &[u8]) -> Option<Elt<'a>> {
        self.find(self.cut(key), Find::Lookup, Inserter::ANYWHERE, |_| {})
    }

    /// [`insert_with`](Self::insert_with), not counting the hit in
    /// [`hits`](Self::hits): for a caller that counts them itself (a
    /// histogram's hitcount, sum 0, counts them all), so that events do
    /// not all write one shared word. `who` says where it runs.
    #[cfg(not(MODULE))]
    #[inline]
    pub fn event_insert(
        &self,
        key: &[u8],
        who: Inserter,
        init: impl FnOnce(&Elt<'a>),
    ) -> Option<Elt<'a>> {
        self.event_insert_idx(key, who, init)
            .and_then(|i| self.elt(i))
    }

    /// [`event_insert`](Self::event_insert), giving the element's index:
    /// for [`cpu_sums`](Self::cpu_sums), or [`elt`](Self::elt) when more
    /// than the sums is needed.
    #[inline]
    pub fn event_insert_idx(
        &self,
        key: &[u8],
        who: Inserter,
        init: impl FnOnce(&Elt<'a>),
    ) -> Option<u32> {
        let key = self.cut(key);
        // As words, when they are few: the probe's loops over them
        // unroll, as the compiled programs' do.
        match self.g.layout.key_words {
            1 => self.find_idx(&key_words::<1>(key), Find::InsertUncounted, who, init),
            2 => self.find_idx(&key_words::<2>(key), Find::InsertUncounted, who, init),
            3 => self.find_idx(&key_words::<3>(key), Find::InsertUncounted, who, init),
            4 => self.find_idx(&key_words::<4>(key), Find::InsertUncounted, who, init),
            _ => self.find_idx(key, Find::InsertUncounted, who, init),
        }
    }

    /// [`event_insert`](Self::event_insert) of a key of any
    /// [`MapKey`] type, whose [`MapKey::WORDS`] is 0 or this map's.
    #[inline]
    pub fn event_insert_key<K: MapKey>(&self, key: K, who: Inserter) -> Option<u32> {
        self.find_idx(key, Find::InsertUncounted, who, |_| {})
    }

    /// [`event_insert`](Self::event_insert) of a key given as
    /// words: the words past `key` are 0, those past the key size are
    /// not read. The element's index, for [`cpu_sums`](Self::cpu_sums)
    /// (the event path's), or [`elt`](Self::elt).
    #[inline]
    pub fn event_insert_words<const N: usize>(&self, key: &[u64; N], who: Inserter) -> Option<u32> {
        // `&[u64; N]` says it has N words: only true of this map's keys.
        // `find_idx()` straight, not through `event_insert_key()`:
        // one more level, and rustc outlines the slice key's `find_idx()`
        // (a string key of 2 words, `keys_s`, took 62 instructions more).
        if N == self.g.layout.key_words as usize {
            self.find_idx(key, Find::InsertUncounted, who, |_| {})
        } else {
            self.find_idx(&key[..], Find::InsertUncounted, who, |_| {})
        }
    }

    /// [`event_insert_words`](Self::event_insert_words) of a key
    /// of exactly the map's key words, as a compiled program builds it:
    /// one copy of the probe, unrolled for `N`. A key of any other size
    /// is dropped.
    #[inline(always)]
    pub fn event_insert_exact<const N: usize>(&self, key: &[u64; N], who: Inserter) -> Option<u32> {
        if N != self.g.layout.key_words as usize {
            self.count_drop(0);
            return None;
        }
        self.find_idx(key, Find::InsertUncounted, who, |_| {})
    }

    /// The start of [`event_insert_exact`](Self::event_insert_exact)
    /// of `key`, whose hash is `h` ([`MapKey::hash`]): the look-up at the
    /// entry where its probe starts, where most events find their key.
    /// The caller goes on with
    /// [`event_find_past_home`](Self::event_find_past_home) when
    /// that says [`First::Further`], and
    /// [`event_insert_missing`](Self::event_insert_missing) when it says
    /// [`First::Probe`]: out of line, so that what is inline here is
    /// short. A key of any other size than the map's is dropped.
    #[inline(always)]
    pub fn event_find_at_home<const N: usize>(&self, key: &[u64; N], h: u32) -> First {
        if N != self.g.layout.key_words as usize {
            self.count_drop(h);
            return First::Absent;
        }
        self.find_first(key, h, Find::InsertUncounted)
    }

    /// The rest of [`event_find_at_home`](Self::event_find_at_home)
    /// when it said [`First::Further`]: the look-up of `key`, whose hash
    /// is `h`, in the entries after the one where its probe starts, up to
    /// a free one. Never [`First::Further`].
    #[inline(always)]
    pub fn event_find_past_home<const N: usize>(&self, key: &[u64; N], h: u32) -> First {
        if N != self.g.layout.key_words as usize {
            self.count_drop(h);
            return First::Absent;
        }
        self.find_further(key, h, self.start(h), Find::InsertUncounted)
    }

    /// The rest of [`event_find_at_home`](Self::event_find_at_home)
    /// or [`event_find_past_home`](Self::event_find_past_home)
    /// when either said [`First::Probe`]: the probe loop, which inserts
    /// `key`, whose hash is `h`, or waits for it to be published.
    #[inline]
    pub fn event_insert_missing<const N: usize>(
        &self,
        key: &[u64; N],
        h: u32,
        who: Inserter,
    ) -> Option<u32> {
        if N != self.g.layout.key_words as usize {
            self.count_drop(h);
            return None;
        }
        self.probe(key, h, self.start(h), Find::InsertUncounted, who, |_| {})
    }

    /// `key` cut to the key size.
    #[inline(always)]
    pub(super) fn cut<'k>(&self, key: &'k [u8]) -> &'k [u8] {
        key.get(..self.g.params.key_size).unwrap_or(key)
    }
}

/// The first `N` words of `key`, zero padded past its end.
#[inline(always)]
fn key_words<const N: usize>(key: &[u8]) -> [u64; N] {
    core::array::from_fn(|i| key.word(i))
}
