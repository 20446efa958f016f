// SPDX-License-Identifier: GPL-2.0

//! The event path: which way a record goes, the generic way included.

use super::*;

/// The [`Here`] of a [`TaskContext`]: its CPU, and its task's name,
/// asked of it only when a key reads it.
#[cfg(not(MODULE))]
#[derive(Clone, Copy)]
struct CtxHere<'c>(&'c dyn TaskContext);

#[cfg(not(MODULE))]
impl Here for CtxHere<'_> {
    fn cpu(self) -> u32 {
        self.0.cpu()
    }

    fn comm_word(self, i: usize) -> u64 {
        super::super::program::comm_word_of(&self.0.comm(), i)
    }
}

impl<'a> Histogram<'a> {
    /// Accounts one event record: builds its key, finds or inserts its
    /// entry, adds its values and sets its variables. Lock-free; no
    /// allocation.
    #[cfg(not(MODULE))]
    #[inline]
    pub fn update(&self, rec: &[u8], ctx: &dyn TaskContext) {
        if !self.update_compiled(rec, CtxHere(ctx), || {}) {
            self.update_general(rec, ctx);
        }
    }

    /// [`update`](Self::update) by the general path, whatever the
    /// histogram's program: the probe takes it when there is none (it runs
    /// the program with [`update_compiled`](Self::update_compiled), which
    /// is then its only copy in the kernel).
    #[inline]
    pub fn update_general(&self, rec: &[u8], ctx: &dyn TaskContext) {
        // The key is built on the stack, in a buffer no larger than it
        // needs: most keys are a word or two, and zeroing the largest
        // possible key on every event would cost more than the rest.
        if self.has_stats {
            return self.update_general_stats(rec, ctx);
        }
        match self.data.key_size() {
            0..=8 => self.update_with::<8, false>(rec, ctx),
            9..=32 => self.update_with::<32, false>(rec, ctx),
            _ => self.update_with::<KEY_SIZE_MAX, false>(rec, ctx),
        }
    }

    /// [`update_general`](Self::update_general) of a histogram with
    /// statistics ([`stats`](super::super::stats)): apart, so that the others ask only
    /// once whether theirs are.
    #[inline(never)]
    pub(super) fn update_general_stats(&self, rec: &[u8], ctx: &dyn TaskContext) {
        match self.data.key_size() {
            0..=8 => self.update_with::<8, true>(rec, ctx),
            9..=32 => self.update_with::<32, true>(rec, ctx),
            _ => self.update_with::<KEY_SIZE_MAX, true>(rec, ctx),
        }
    }

    /// [`update`](Self::update) by the compiled program, if the histogram
    /// has one (then it has no variables, references or actions, and
    /// reads nothing but the record); `false`, having done nothing,
    /// otherwise.
    ///
    /// In the kernel, the code an event runs is at most a page: the probe,
    /// with this inlined, jumps to the code of the program's shape, each
    /// in a section that starts on a page (see `global_asm!` above). The
    /// probe and the shapes of one and two numbers share theirs.
    ///
    /// `here` gives the CPU the caller runs on, whose copy of the sums
    /// the event adds to (see [`MapParams::per_cpu`]), when they are
    /// added, and the current task's name for a `common_comm` key: in
    /// the kernel, reads of per-CPU variables (and the task's name) that
    /// take no register before them.
    ///
    /// `after` runs once the entry is updated (the kernel wakes the hist
    /// files' pollers), in the shape's code: the probe's call to it can be
    /// its last, a jump, and the shape returns to the probe's caller.
    ///
    /// Each shape's code calls nothing on its common path (a key whose
    /// loads are all quick, found where its probe starts), and keeps few
    /// values (in the module, a key of one number with no values saves no
    /// register); the rest (a longer probe, an insert, the values, a load
    /// that is not quick) is a jump to code out of line, which saves what
    /// it uses itself.
    #[inline(always)]
    pub fn update_compiled(&self, rec: &[u8], here: impl Here, after: impl FnOnce()) -> bool {
        if self.shape == Shape::Number1 {
            self.run_number_key1(rec, here, after);
            return true;
        }
        // The others after that one test: a key of one number is the
        // commonest (without this, a tree of tests, the kernel building
        // without jump tables).
        core::hint::cold_path();
        match self.shape {
            Shape::Number1 => self.run_number_key1(rec, here, after),
            Shape::Number2 => self.run_number_key2(rec, here, after),
            Shape::Number3 => self.run_number_key3(rec, here, after),
            Shape::Short1 => self.run_short_key1(rec, here, after),
            Shape::Short2 => self.run_short_key2(rec, here, after),
            Shape::Short3 => self.run_short_key3(rec, here, after),
            Shape::Short4 => self.run_short_key4(rec, here, after),
            Shape::String => self.run_string_key(rec, here, after),
            Shape::Comm => self.run_comm_key(rec, here, after),
            Shape::Compact => self.run_compact_key(rec, here, after),
            Shape::None => return false,
        }
        true
    }

    /// [`update_compiled`](Self::update_compiled) of an event whose key
    /// has a load that is not quick: the key is built as the program's
    /// shape says, without the quick loads.
    #[inline(never)]
    #[cold]
    pub(super) fn run_slow<H: Here, F: FnOnce()>(&self, rec: &[u8], here: H, after: F) {
        let p = &self.program;
        let map = &self.map;
        let who = Inserter::on_cpu(here.cpu());
        let elt = match self.shape {
            Shape::Number1 => map.event_insert_exact(&p.number_key::<1>(rec), who),
            Shape::Number2 => map.event_insert_exact(&p.number_key::<2>(rec), who),
            Shape::Number3 => map.event_insert_exact(&p.number_key::<3>(rec), who),
            _ => map.event_insert_words(&p.key::<4>(rec, here), who),
        };
        match elt {
            Some(idx) => self.add_sums(rec, here, idx, after),
            None => after(),
        }
    }

    /// Adds the program's sums of `rec` to the entry found, if any, in
    /// CPU `cpu`'s copy.
    #[inline(always)]
    pub(super) fn add_sums_of(&self, rec: &[u8], cpu: u32, elt: Option<u32>) {
        let p = &self.program;
        let Some(sums) = elt.and_then(|i| self.map.cpu_sums(i, cpu)) else {
            return;
        };
        sums.add(0, 1);
        for i in 1..p.n_sums() {
            sums.add(i, p.value(i, rec));
        }
    }
}
