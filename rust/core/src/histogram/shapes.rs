// SPDX-License-Identifier: GPL-2.0

//! The event path's program shapes, each in a page-aligned section:
//! the key built, found in the map, and the values added to its sums.

use super::*;

// The sections of the event path's code, each page-aligned (the module
// loader keeps a section's alignment). An event's code stays in one page
// of one section: it runs no jump out of the page but its return (under
// QEMU's TCG, each such jump costs a lookup of the code that follows; on
// hardware, fewer pages and cache lines). check.sh's event-text test
// checks that each section holds in a page.
#[cfg(target_os = "none")]
core::arch::global_asm!(
    ".pushsection .text.rhist_event,\"ax\",@progbits\n.balign 4096\n.popsection",
    ".pushsection .text.rhist_event.key3,\"ax\",@progbits\n.balign 4096\n.popsection",
    ".pushsection .text.rhist_event.short,\"ax\",@progbits\n.balign 4096\n.popsection",
    ".pushsection .text.rhist_event.key4,\"ax\",@progbits\n.balign 4096\n.popsection",
    ".pushsection .text.rhist_event.string,\"ax\",@progbits\n.balign 4096\n.popsection",
    ".pushsection .text.rhist_event.compact,\"ax\",@progbits\n.balign 4096\n.popsection",
);

impl<'a> Histogram<'a> {
    /// [`update_compiled`](Self::update_compiled) of a key of one number.
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event")]
    pub(super) fn run_number_key1<H: Here, F: FnOnce()>(&self, rec: &[u8], here: H, after: F) {
        match self.program.number_key_fast::<1>(rec) {
            Some(key) => self.account_words(key, rec, here, after),
            None => self.run_slow(rec, here, after),
        }
    }

    /// [`update_compiled`](Self::update_compiled) of a key of two numbers.
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event")]
    pub(super) fn run_number_key2<H: Here, F: FnOnce()>(&self, rec: &[u8], here: H, after: F) {
        match self.program.number_key_fast::<2>(rec) {
            Some(key) => self.account_words(key, rec, here, after),
            None => self.run_slow(rec, here, after),
        }
    }

    /// [`update_compiled`](Self::update_compiled) of a key of three
    /// numbers.
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event.key3")]
    pub(super) fn run_number_key3<H: Here, F: FnOnce()>(&self, rec: &[u8], here: H, after: F) {
        match self.program.number_key_fast::<3>(rec) {
            Some(key) => self.account_words(key, rec, here, after),
            None => self.run_slow(rec, here, after),
        }
    }

    /// [`update_compiled`](Self::update_compiled) of a key of numbers and
    /// `char[]` strings of one word.
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event.short")]
    pub(super) fn run_short_key1<H: Here, F: FnOnce()>(&self, rec: &[u8], here: H, after: F) {
        match self.program.short_key_fast::<1>(rec) {
            Some(key) => self.account_words(key, rec, here, after),
            None => self.run_slow(rec, here, after),
        }
    }

    /// [`run_short_key1`](Self::run_short_key1) of two words.
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event.short")]
    pub(super) fn run_short_key2<H: Here, F: FnOnce()>(&self, rec: &[u8], here: H, after: F) {
        match self.program.short_key_fast::<2>(rec) {
            Some(key) => self.account_words(key, rec, here, after),
            None => self.run_slow(rec, here, after),
        }
    }

    /// [`run_short_key1`](Self::run_short_key1) of three words.
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event.key3")]
    pub(super) fn run_short_key3<H: Here, F: FnOnce()>(&self, rec: &[u8], here: H, after: F) {
        match self.program.short_key_fast::<3>(rec) {
            Some(key) => self.account_words(key, rec, here, after),
            None => self.run_slow(rec, here, after),
        }
    }

    /// [`run_short_key1`](Self::run_short_key1) of four words.
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event.key4")]
    pub(super) fn run_short_key4<H: Here, F: FnOnce()>(&self, rec: &[u8], here: H, after: F) {
        match self.program.short_key_fast::<4>(rec) {
            Some(key) => self.account_words(key, rec, here, after),
            None => self.run_slow(rec, here, after),
        }
    }

    /// [`update_compiled`](Self::update_compiled) of a key of
    /// `common_comm` alone: the task's name, two words, read where the
    /// event runs; no load of it can fail.
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event.short")]
    pub(super) fn run_comm_key<H: Here, F: FnOnce()>(&self, rec: &[u8], here: H, after: F) {
        let key = self.program.comm_key(here);
        self.account_words(key, rec, here, after)
    }

    /// Finds or inserts the entry of `key`, built for `rec`, and adds the
    /// sums of `rec` to it, then runs `after`: inline at the entry where
    /// the key's probe starts, out of line from there on.
    #[inline(always)]
    pub(super) fn account_words<const N: usize, H: Here, F: FnOnce()>(
        &self,
        key: [u64; N],
        rec: &[u8],
        here: H,
        after: F,
    ) {
        let h = (&key).hash(N);
        match self.map.event_find_at_home(&key, h) {
            First::Found(idx) => self.add_sums(rec, here, idx, after),
            First::Absent => after(),
            First::Further => self.account_further(key, h, rec, here, after),
            First::Probe => self.account_probe(key, h, rec, here, after),
        }
    }

    /// [`account_words`](Self::account_words) past the entry where the
    /// key's probe starts, up to a free entry.
    #[inline(never)]
    pub(super) fn account_further<const N: usize, H: Here, F: FnOnce()>(
        &self,
        key: [u64; N],
        h: u32,
        rec: &[u8],
        here: H,
        after: F,
    ) {
        match self.map.event_find_past_home(&key, h) {
            First::Found(idx) => self.add_sums(rec, here, idx, after),
            First::Probe => self.account_probe(key, h, rec, here, after),
            First::Absent | First::Further => after(),
        }
    }

    /// [`account_words`](Self::account_words) by the map's probe loop:
    /// an insert, or a wait for an entry being published.
    #[inline(never)]
    pub(super) fn account_probe<const N: usize, H: Here, F: FnOnce()>(
        &self,
        key: [u64; N],
        h: u32,
        rec: &[u8],
        here: H,
        after: F,
    ) {
        match self
            .map
            .event_insert_missing(&key, h, Inserter::on_cpu(here.cpu()))
        {
            Some(idx) => self.add_sums(rec, here, idx, after),
            None => after(),
        }
    }

    /// Adds the program's sums of `rec` to element `idx`, in the copy of
    /// the CPU `cpu` gives, then runs `after`: the hitcount inline, the
    /// values, if any, out of line ([`add_values`](Self::add_values)), so
    /// that a histogram of hitcounts keeps none of what they need.
    #[inline(always)]
    pub(super) fn add_sums<H: Here, F: FnOnce()>(&self, rec: &[u8], here: H, idx: u32, after: F) {
        let sums = self.map.cpu_sums(idx, here.cpu()).map(|s| s.words());
        let Some((hits, values)) = sums.and_then(|s| s.split_first()) else {
            return after();
        };
        hits.fetch_add(1, Ordering::Relaxed);
        if values.is_empty() {
            return after();
        }
        self.add_values(rec, values, after)
    }

    /// The values of [`add_sums`](Self::add_sums): inline as long as
    /// their loads are quick and they are plain sums, out of line from
    /// the first that is not ([`add_values_rest`](Self::add_values_rest)),
    /// unless it is the last, a `.quantiles` value: recorded here, from
    /// the histogram's constants ([`LastSketch`]).
    #[inline(never)]
    pub(super) fn add_values<F: FnOnce()>(&self, rec: &[u8], values: &[AtomicU64], after: F) {
        if let Err(from) = self.program.add_values_fast(rec, values) {
            let last = &self.last_sketch;
            match self
                .program
                .last_sketch_value(rec, from, last.from as usize)
            {
                Some(v) => {
                    // Its slot found with a mask, a multiply and a shift,
                    // and one bounds check.
                    let first = self.sums_index.elt_times(values, last.stride);
                    let first = first.wrapping_add(last.first);
                    self.sketches.pool().record_at(first, v);
                }
                None => self.add_values_rest(rec, values, from),
            }
        }
        after();
    }

    /// The values of [`add_values`](Self::add_values) from value `from`
    /// on, `values` being an element's sums after its hitcount: each as
    /// its statistic says, a `.quantiles` value into the element's sketch
    /// (the element found from where its sums are).
    ///
    /// The last value alone, the common case
    /// ([`Program::last_stat`]), keeps nothing across a call: anything
    /// else is a jump to [`add_values_all`](Self::add_values_all), a
    /// sketch [`add_values`](Self::add_values) did not record a jump to
    /// [`record_sketch`](Self::record_sketch).
    #[inline(never)]
    pub(super) fn add_values_rest(&self, rec: &[u8], values: &[AtomicU64], from: usize) {
        match self.program.last_stat(rec, values, from) {
            Applied::Done => {}
            Applied::Sketch(v) => self.record_sketch(values, from + 1, v),
            Applied::NotQuick => self.add_values_all(rec, values, from),
        }
    }

    /// [`add_values_rest`](Self::add_values_rest) of several values, or
    /// of a load that is not quick.
    #[inline(never)]
    pub(super) fn add_values_all(&self, rec: &[u8], values: &[AtomicU64], from: usize) {
        let sketch = |i, v| self.record_sketch(values, i, v);
        self.program.add_values(rec, values, from, sketch);
    }

    /// Records `v` in the sketch of sum `i`, a `.quantiles` value, of the
    /// element whose sums after its hitcount are `values`. Out of line:
    /// the other statistics keep none of what it needs.
    #[inline(never)]
    pub(super) fn record_sketch(&self, values: &[AtomicU64], i: usize, v: u64) {
        let (Some(s), Some(&j)) = (self.sketches(), self.sketch_of.get(i)) else {
            return;
        };
        if let Some(idx) = self.sums_index.elt(values) {
            s.record(idx, usize::from(j), v);
        }
    }

    /// [`update_compiled`](Self::update_compiled) of a key of one string
    /// of more than 4 words: a [`StrKey`] when it fits, else the whole
    /// key ([`run_long_key`](Self::run_long_key)).
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event.string")]
    pub(super) fn run_string_key<H: Here, F: FnOnce()>(&self, rec: &[u8], here: H, after: F) {
        let p = &self.program;
        let mut key = StrKey::EMPTY;
        let cpu = here.cpu();
        let who = Inserter::on_cpu(cpu);
        match p.string_key(rec, &mut key) {
            true => self.add_sums_of(rec, cpu, self.map.event_insert_key(&key, who)),
            false => self.run_long_key(rec, here),
        }
        after();
    }

    /// [`update_compiled`](Self::update_compiled) of a key with strings
    /// of more than 4 words: a
    /// [`CompactKey`](super::super::program::CompactKey) when it fits, else the
    /// whole key ([`run_long_key`](Self::run_long_key)).
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event.compact")]
    pub(super) fn run_compact_key<H: Here, F: FnOnce()>(&self, rec: &[u8], here: H, after: F) {
        let p = &self.program;
        let mut key = CompactKey::EMPTY;
        let cpu = here.cpu();
        let who = Inserter::on_cpu(cpu);
        match p.compact_key(rec, here, &mut key) {
            true => self.add_sums_of(rec, cpu, self.map.event_insert_key(&key, who)),
            false => self.run_long_key(rec, here),
        }
        after();
    }

    /// [`run_compact_key`](Self::run_compact_key) of a key that a compact
    /// one does not hold: rare, out of the event path's sections.
    #[inline(never)]
    pub(super) fn run_long_key(&self, rec: &[u8], here: impl Here) {
        let p = &self.program;
        let map = &self.map;
        let cpu = here.cpu();
        let who = Inserter::on_cpu(cpu);
        let elt = match p.key_words() {
            0..=8 => map.event_insert_words(&p.key::<8>(rec, here), who),
            9..=32 => map.event_insert_words(&p.key::<32>(rec, here), who),
            _ => map.event_insert_words(&p.key::<KEY_WORDS_MAX>(rec, here), who),
        };
        self.add_sums_of(rec, cpu, elt);
    }
}
