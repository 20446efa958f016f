// SPDX-License-Identifier: GPL-2.0

//! The update with variables, references and actions (`onmatch`,
//! `onmax`, `onchange`, saved values).

use super::*;

impl<'a> Histogram<'a> {
    pub(super) fn update_with<const N: usize, const STATS: bool>(
        &self,
        rec: &[u8],
        ctx: &dyn TaskContext,
    ) {
        let mut key_buf = [0u8; N];
        let key = &mut key_buf[..self.data.key_size().min(N)];
        self.data.write_key(rec, ctx, key);
        self.account::<STATS>(key, rec, ctx, &[]);
    }

    /// Accounts one event record of a trigger with variable references
    /// or actions, as C's `event_hist_trigger()` does when `n_var_refs`
    /// is not 0: `refs[i]` is the histogram of slot `i` (the one
    /// [`HistData::ref_hists`]`[i]` names), and `sink` emits what the
    /// actions trace.
    ///
    /// Once the key is built, `resolve_var_refs(self = false)` looks each
    /// reference to another histogram up, in C's order, in that map with
    /// *this* trigger's key: a missing entry or an unset variable drops
    /// the event (references before it that consume have consumed, as in
    /// C); a reference with `read_once` (an operand of a binary
    /// expression) consumes the variable (`tracing_map_read_var_once()`),
    /// atomically here, the others read it.  Then the entry is found or
    /// inserted and updated, a reference's value being the one resolved.
    /// Then `resolve_var_refs(self = true)` reads the references to this
    /// trigger's own variables (an action's parameters) from its entry,
    /// and if they are all set the actions run.  A reference to a string
    /// or stack trace resolves to the address of its copy in the owner's
    /// entry.  Without references or actions,
    /// [`update_general`](Self::update_general).  Lock-free; no allocation.
    ///
    /// The referenced map reads as many key bytes as its own keys have:
    /// past this trigger's key they are 0 (C reads what its buffer holds).
    ///
    /// An action may emit a synthetic event whose triggers run inside this
    /// call, up to four deep (the shell's nesting limit): the key is built
    /// in a buffer no larger than the largest key read, most often a word.
    pub fn update_with_refs(
        &self,
        rec: &[u8],
        ctx: &dyn TaskContext,
        refs: &[&Histogram<'_>],
        sink: &dyn ActionSink,
    ) {
        let n = self.data.n_var_refs().min(VAR_REFS_MAX);
        if n == 0 && self.data.n_actions() == 0 {
            return self.update_general(rec, ctx);
        }
        let widest = refs
            .iter()
            .map(|h| h.data.key_size())
            .fold(self.data.key_size(), usize::max);
        match widest {
            0..=8 => self.update_refs_in::<8>(rec, ctx, refs, sink, n),
            9..=32 => self.update_refs_in::<32>(rec, ctx, refs, sink, n),
            _ => self.update_refs_in::<KEY_SIZE_MAX>(rec, ctx, refs, sink, n),
        }
    }

    /// [`update_with_refs`](Self::update_with_refs) with a key buffer of
    /// `N` bytes, at least the widest key read, and `n` references.
    #[inline(never)]
    pub(super) fn update_refs_in<const N: usize>(
        &self,
        rec: &[u8],
        ctx: &dyn TaskContext,
        refs: &[&Histogram<'_>],
        sink: &dyn ActionSink,
        n: usize,
    ) {
        let mut key_buf = [0u8; N];
        let size = self.data.key_size().min(N);
        self.data.write_key(rec, ctx, &mut key_buf[..size]);
        let mut vals = [0u64; VAR_REFS_MAX];
        let mut own_refs = false;
        for (i, val) in vals.iter_mut().enumerate().take(n) {
            let Some(r) = self.data.var_ref(i) else {
                return;
            };
            if r.own {
                own_refs = true;
                continue;
            }
            let Some(h) = refs.get(r.slot) else {
                return;
            };
            let other = h.data.key_size().min(N);
            let Some(elt) = h.map.lookup(&key_buf[..other]) else {
                return;
            };
            let value = if r.read_once {
                elt.take_var(r.var_idx)
            } else if elt.var_is_set(r.var_idx) {
                Some(elt.read_var(r.var_idx))
            } else {
                None
            };
            match value.and_then(|v| h.ref_value(&elt, v, r.copy)) {
                Some(v) => *val = v,
                None => return,
            }
        }
        let (key, refs) = (&key_buf[..size], &vals[..n]);
        let idx = match self.has_stats {
            false => self.account::<false>(key, rec, ctx, refs),
            true => self.account::<true>(key, rec, ctx, refs),
        };
        let Some(elt) = idx.and_then(|i| self.map.elt(i)) else {
            return;
        };
        if own_refs {
            for (i, val) in vals.iter_mut().enumerate().take(n) {
                let Some(r) = self.data.var_ref(i).filter(|r| r.own) else {
                    continue;
                };
                if !elt.var_is_set(r.var_idx) {
                    return;
                }
                match self.ref_value(&elt, elt.read_var(r.var_idx), r.copy) {
                    Some(v) => *val = v,
                    None => return,
                }
            }
        }
        let vals = &vals[..n];
        for a in 0..self.data.n_actions() {
            // ontrack_action(): only a new maximum or a change acts.
            if let Some(t) = self.data.action_track(a) {
                let new = vals.get(t.var_ref).copied().unwrap_or(0);
                if !t.how.passes(elt.read_var(t.var_idx), new) {
                    continue;
                }
                elt.set_var(t.var_idx, new);
                match self.data.action_kind(a) {
                    Some(ActionKind::Save) => self.set_save_vars(&elt, rec, ctx, vals),
                    Some(ActionKind::Snapshot) => {
                        sink.snapshot(new, &key_buf[..size], &self.entry_comm(&elt))
                    }
                    _ => sink.trace(a, vals, self.data.action_var_ref_idx(a)),
                }
            } else {
                sink.trace(a, vals, self.data.action_var_ref_idx(a));
            }
        }
    }

    /// The command name `elt` saved when it was made, for `.execname`.
    pub(crate) fn entry_comm(&self, elt: &map::Elt<'_>) -> [u8; 16] {
        let mut comm = [0u8; 16];
        if self.needs_comm {
            for (chunk, word) in comm.chunks_exact_mut(8).zip(elt.private_words()) {
                chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes());
            }
        }
        comm
    }

    /// `save_track_data_vars()`: sets the save variables of `elt` from
    /// this record; a string is copied into the entry, after the copies
    /// of the variables every event sets.
    #[inline(never)]
    pub(super) fn set_save_vars(
        &self,
        elt: &map::Elt<'a>,
        rec: &[u8],
        ctx: &dyn TaskContext,
        ref_vals: &[u64],
    ) {
        let words = elt.private_words();
        let comm = self.entry_comm(elt);
        let mut slot = self.event_copies;
        let mut copy = [0u8; vars::STR_VAR_LEN_MAX];
        for k in 0..self.data.n_save_vars() {
            let Some((_, i)) = self.data.save_var(k) else {
                break;
            };
            if self.data.var_copy(i).is_none() {
                elt.set_var(i, self.data.var_value_refs(i, rec, ctx, ref_vals));
                continue;
            }
            let string = || self.data.var_string(i, rec);
            vars::write_copy(self.data.var_copy(i), string, ctx, &comm, &mut copy);
            let at = comm_words(self.needs_comm) + slot * vars::STR_VAR_WORDS;
            let dst = words.get(at..at + vars::STR_VAR_WORDS).unwrap_or(&[]);
            for (word, chunk) in dst.iter().zip(copy.chunks_exact(8)) {
                let mut b = [0u8; 8];
                b.copy_from_slice(chunk);
                word.store(u64::from_ne_bytes(b), Ordering::Relaxed);
            }
            elt.set_var(i, slot as u64);
            slot += 1;
        }
    }

    /// The value a reference to a variable of this histogram resolves to,
    /// the variable holding `value` in `elt`: for a variable that keeps a
    /// copy (`copy`), the address of the copy, whose slot `value` is;
    /// `None` for a slot the entry does not have.
    pub(super) fn ref_value(&self, elt: &map::Elt<'_>, value: u64, copy: bool) -> Option<u64> {
        if !copy {
            return Some(value);
        }
        let slot = usize::try_from(value).ok()?;
        let at = comm_words(self.needs_comm) + slot.checked_mul(vars::STR_VAR_WORDS)?;
        let words = elt.private_words().get(at..at + vars::STR_VAR_WORDS)?;
        words.first().map(|w| w.as_ptr() as u64)
    }

    /// `tracing_map_insert()` and `hist_trigger_elt_update()`: finds or
    /// inserts the entry of `key` and updates it, `ref_vals` holding the
    /// values resolved for the references; the entry, if there is room.
    /// `STATS` is `has_stats`: whether some sums are statistics.
    #[inline]
    pub(super) fn account<const STATS: bool>(
        &self,
        key: &[u8],
        rec: &[u8],
        ctx: &dyn TaskContext,
        ref_vals: &[u64],
    ) -> Option<u32> {
        let cpu = ctx.cpu();
        let who = Inserter::on_cpu(cpu);
        let idx = if self.needs_comm {
            self.map.event_insert_idx(key, who, |elt| {
                let comm = saved_comm(ctx);
                for (word, chunk) in elt.private_words().iter().zip(comm.chunks_exact(8)) {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(chunk);
                    word.store(u64::from_ne_bytes(b), Ordering::Relaxed);
                }
            })
        } else {
            self.map.event_insert_idx(key, who, |_| {})
        }?;
        if !STATS {
            // The sums by the CPU's copy alone, as the compiled programs
            // add them: an [`Elt`](map::Elt) only for what else is set.
            if let Some(sums) = self.map.cpu_sums(idx, cpu) {
                let words = sums.words().iter().take(self.data.n_sums());
                for (i, word) in words.enumerate() {
                    let n = self.data.sum_value_refs(i, rec, ctx, ref_vals);
                    word.fetch_add(n, Ordering::Relaxed);
                }
            }
            if !self.has_copies {
                let n = self.data.n_event_vars();
                if let Some(vars) = self.map.elt_vars(idx).filter(|_| n != 0) {
                    for i in 0..n {
                        vars.set(i, self.data.var_value_refs(i, rec, ctx, ref_vals));
                    }
                }
                return Some(idx);
            }
        }
        let elt = self.map.elt(idx)?;
        if STATS {
            self.update_stats(&elt, rec, ctx, ref_vals);
        }
        if self.has_copies {
            self.set_vars_with_copies(&elt, rec, ctx, ref_vals);
        } else {
            for i in 0..self.data.n_event_vars() {
                elt.set_var(i, self.data.var_value_refs(i, rec, ctx, ref_vals));
            }
        }
        Some(idx)
    }

    /// The sums of `elt` for this record, some of them statistics
    /// ([`stats`](super::super::stats)): apart, so that the other triggers' loop does
    /// not ask each sum what it is.
    #[inline]
    pub(super) fn update_stats(
        &self,
        elt: &map::Elt<'a>,
        rec: &[u8],
        ctx: &dyn TaskContext,
        ref_vals: &[u64],
    ) {
        let cpu = ctx.cpu();
        for i in 0..self.data.n_sums() {
            let n = self.data.sum_value_refs(i, rec, ctx, ref_vals);
            let op = match self.ops.get(i) {
                Some(&op) => op,
                None => self.data.slot_op(i),
            };
            match op {
                SlotOp::Add => elt.update_sum_on(cpu, i, n),
                SlotOp::Max { xor } => elt.update_max_on(cpu, i, n ^ xor),
                SlotOp::Sketch => {
                    let j = match self.sketch_of.get(i) {
                        Some(&j) => Some(usize::from(j)),
                        None => self.data.sketch_index(i),
                    };
                    if let (Some(s), Some(j)) = (self.sketches(), j) {
                        s.record(elt.index(), j, n);
                    }
                }
            }
        }
    }

    /// Sets the variables of `elt` where some keep a copy in the entry:
    /// each such variable is given its slot's number.
    #[inline(never)]
    pub(super) fn set_vars_with_copies(
        &self,
        elt: &map::Elt<'a>,
        rec: &[u8],
        ctx: &dyn TaskContext,
        ref_vals: &[u64],
    ) {
        let words = elt.private_words();
        let start = comm_words(self.needs_comm);
        let mut comm = [0u8; 16];
        for (chunk, word) in comm
            .chunks_exact_mut(8)
            .zip(words.get(..start).unwrap_or(&[]))
        {
            chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes());
        }
        let mut slot = 0;
        let mut copy = [0u8; vars::STR_VAR_LEN_MAX];
        for i in 0..self.data.n_event_vars() {
            if self.data.var_copy(i).is_none() {
                elt.set_var(i, self.data.var_value_refs(i, rec, ctx, ref_vals));
                continue;
            }
            let string = || self.data.var_string(i, rec);
            vars::write_copy(self.data.var_copy(i), string, ctx, &comm, &mut copy);
            let at = start + slot * vars::STR_VAR_WORDS;
            let dst = words.get(at..at + vars::STR_VAR_WORDS).unwrap_or(&[]);
            for (word, chunk) in dst.iter().zip(copy.chunks_exact(8)) {
                let mut b = [0u8; 8];
                b.copy_from_slice(chunk);
                word.store(u64::from_ne_bytes(b), Ordering::Relaxed);
            }
            elt.set_var(i, slot as u64);
            slot += 1;
        }
    }
}
