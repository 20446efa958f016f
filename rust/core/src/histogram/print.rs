// SPDX-License-Identifier: GPL-2.0

//! Sorting and printing a histogram as the `hist` file shows it.

use super::*;

impl<'a> Histogram<'a> {
    /// The map's sort keys for this histogram.
    pub(super) fn sort_keys(&self) -> ([map::SortKey; map::SORT_KEYS_MAX], usize) {
        let mut keys = [map::SortKey::ascending(map::SortField::Sum(0)); map::SORT_KEYS_MAX];
        let mut n = 0;
        for (slot, key) in keys.iter_mut().zip(self.data.sort_keys()) {
            let field = match key.field {
                hist_data::SortField::Sum(i) => match self.data.val_stat(i) {
                    None => map::SortField::Sum(i),
                    Some(stat) => {
                        let signed = self.data.val_signed(i);
                        let (xor, per_hit) = match stat.slot_op(signed) {
                            SlotOp::Max { xor } => (xor, false),
                            SlotOp::Add => (0, true),
                            // The build takes no sort on it; its slot is 0.
                            SlotOp::Sketch => (0, false),
                        };
                        map::SortField::Stat {
                            sum: i,
                            xor,
                            per_hit,
                            signed,
                        }
                    }
                },
                hist_data::SortField::Quantile { val, rank } => map::SortField::External {
                    value: val,
                    which: rank,
                    signed: self.data.val_signed(val),
                },
                hist_data::SortField::Key { offset, size, cmp } => match cmp {
                    hist_data::KeyCmp::Unsigned | hist_data::KeyCmp::Signed => {
                        map::SortField::KeyNum {
                            offset: offset as usize,
                            size: size as usize,
                            signed: cmp == hist_data::KeyCmp::Signed,
                        }
                    }
                    hist_data::KeyCmp::String => map::SortField::KeyStr {
                        offset: offset as usize,
                    },
                    hist_data::KeyCmp::None => map::SortField::None,
                },
            };
            *slot = map::SortKey {
                field,
                descending: key.descending,
            };
            n += 1;
        }
        (keys, n)
    }

    /// Fills `order` with the indices of the entries, sorted as C sorts
    /// them for the `hist` file, and returns how many there are. `order`
    /// must hold at least `max_elts` indices.
    pub fn sort_entries(&self, order: &mut [u32]) -> usize {
        let (keys, n_keys) = self.sort_keys();
        // `sort=lat.p99`: the quantile of each entry's sketch, computed
        // at each comparison (a few hundred counters read; no memory to
        // keep them in).
        let quantile = |val: usize, rank: usize, idx: u32| {
            let q = self.data.sketch_index(val).and_then(|j| {
                let sketch = self.sketches()?.sketch(idx, j)?;
                Some(sketch.quantile(*PERCENTILES.get(rank)?))
            });
            match q {
                Some(Quantile::Value(v)) => (v, v),
                Some(Quantile::Within { low, high }) => (low, high),
                Some(Quantile::Empty) | None => (0, 0),
            }
        };
        self.map.sort_entries_by(&keys[..n_keys], &quantile, order)
    }

    /// Each sum's total and maximum over `entries`, which `.percent` and
    /// `.graph` scale by (the hitcount's total is the Totals' hits).
    pub fn column_stats(&self, entries: &[u32]) -> [ValStat; map::SUMS_MAX] {
        let mut stats = [ValStat::default(); map::SUMS_MAX];
        for (i, stat) in stats.iter_mut().enumerate().take(self.data.n_sums()) {
            for &idx in entries {
                if let Some(elt) = self.map.elt(idx) {
                    let v = elt.read_sum(i);
                    stat.total = stat.total.wrapping_add(v);
                    stat.max = stat.max.max(v);
                }
            }
        }
        stats
    }

    /// Writes the histogram's entries and Totals (everything after the
    /// header), sorted as C sorts them. `order` must hold at least
    /// `max_elts` indices; it is scratch space.
    #[cfg(not(MODULE))]
    pub fn print(
        &self,
        out: &mut dyn Write,
        resolver: &dyn Resolver,
        order: &mut [u32],
    ) -> fmt::Result {
        self.print_with_snapshot(out, resolver, order, None)
    }

    /// [`print`](Self::print), with C's details of the last snapshot a
    /// `snapshot()` action took (`track_data_snapshot_print()`) before
    /// the Totals.
    pub fn print_with_snapshot(
        &self,
        out: &mut dyn Write,
        resolver: &dyn Resolver,
        order: &mut [u32],
        snapshot: Option<&Snapshot<'_>>,
    ) -> fmt::Result {
        let n = self.sort_entries(order);
        let entries = &order[..n];
        let stats = self.column_stats(entries);

        let mut key_buf = [0u8; KEY_SIZE_MAX];
        for (n_written, &idx) in entries.iter().enumerate() {
            if n_written % output::PAUSE_EVERY == output::PAUSE_EVERY - 1 {
                resolver.pause();
            }
            let Some(elt) = self.map.elt(idx) else {
                continue;
            };
            let key_size = elt.copy_key(&mut key_buf);
            let key = &key_buf[..key_size.min(KEY_SIZE_MAX)];
            self.write_key(out, key, &self.entry_comm(&elt), resolver)?;
            for (i, name, display) in self.data.printed_vals() {
                // C writes an extra space before every value but hitcount.
                if i != 0 {
                    out.write_char(' ')?;
                }
                if let Some(j) = self.data.sketch_index(i) {
                    let sketch = self.sketches().and_then(|s| s.sketch(idx, j));
                    let p = sketch.map(|s| s.percentiles());
                    self.write_percentiles(out, i, display, p.map(|p| p.p))?;
                    continue;
                }
                let slot = match self.data.slot_op(i) {
                    SlotOp::Add | SlotOp::Sketch => elt.read_sum(i),
                    SlotOp::Max { .. } => elt.read_max(i),
                };
                let val = self.data.val_value(i, slot, || elt.read_sum(0));
                let stat = stats.get(i).copied().unwrap_or_default();
                output::write_val(out, name, display, val, stat)?;
            }
            self.print_actions(out, &elt)?;
            out.write_char('\n')?;
        }
        if let (Some(snap), Some((how, var))) = (snapshot, self.data.snapshot_action()) {
            out.write_str("\nSnapshot taken (see tracing/snapshot).  Details:\n")?;
            let name = how.handler_name();
            write!(
                out,
                "\ttriggering value {{ {name}({var}) }}: {:10}",
                snap.val
            )?;
            out.write_str("\ttriggered by event with key: ")?;
            let mut key_buf = [0u8; KEY_SIZE_MAX];
            let size = self.data.key_size().min(KEY_SIZE_MAX).min(snap.key.len());
            key_buf[..size].copy_from_slice(&snap.key[..size]);
            self.write_key(
                out,
                &key_buf[..self.data.key_size().min(KEY_SIZE_MAX)],
                &snap.comm,
                resolver,
            )?;
            out.write_char('\n')?;
        }
        // Every hit adds 1 to its entry's hitcount, and nothing else does:
        // their total is C's `map->hits`, which the event path does not
        // count apart (see `TracingMap::event_insert()`).
        output::write_totals(out, stats[0].total, n as u32, self.map.drops())?;
        self.write_percentiles_summary(out, entries)
    }

    /// The columns of `.quantiles` value `i` (its `display`), with the
    /// quantiles `p` (none: 0): ` lat.p50: %10llu`, each but the first
    /// after one more space, as C puts before each value.
    pub(super) fn write_percentiles(
        &self,
        out: &mut dyn Write,
        i: usize,
        display: output::ValDisplay,
        p: Option<[Quantile; 4]>,
    ) -> fmt::Result {
        let p = p.unwrap_or([Quantile::Empty; 4]);
        for (k, (q, label)) in p.iter().zip(PERCENTILE_NAMES).enumerate() {
            if k != 0 {
                out.write_char(' ')?;
            }
            let stem = Stem(self.data, i);
            output::write_quantile(out, stem, label, display, *q)?;
        }
        Ok(())
    }

    /// rhist's line after the Totals of a trigger with `.quantiles`
    /// values: each one's quantiles over all of `entries`, then the
    /// pool's pages used and total, and the values it had no page for.
    pub(super) fn write_percentiles_summary(
        &self,
        out: &mut dyn Write,
        entries: &[u32],
    ) -> fmt::Result {
        let Some(s) = self.sketches() else {
            return Ok(());
        };
        out.write_str("    Percentiles:")?;
        for (i, _, display) in self.data.printed_vals() {
            let Some(j) = self.data.sketch_index(i) else {
                continue;
            };
            let mut p = [Quantile::Empty; 4];
            let union = s.union(j, entries.iter().copied());
            sketch::quantiles(&union, &PERCENTILES, &mut p);
            out.write_char(' ')?;
            self.write_percentiles(out, i, display, Some(p))?;
        }
        let pool = s.pool().stats();
        writeln!(
            out,
            "  pages: {}/{}  unplaced: {}",
            pool.pages_used, pool.pages, pool.unplaced
        )
    }

    /// `hist_trigger_print_key()` of `key`, whose entry saved `comm`.
    pub(super) fn write_key(
        &self,
        out: &mut dyn Write,
        key: &[u8],
        comm: &[u8; 16],
        resolver: &dyn Resolver,
    ) -> fmt::Result {
        output::write_key_parts(out, self.data.key_parts(key), comm, resolver)
    }

    /// `print_actions()`: what each `onmax()` or `onchange()` action but
    /// `snapshot()` tracked in `elt`, and the save variables.
    pub(super) fn print_actions(&self, out: &mut dyn Write, elt: &map::Elt<'_>) -> fmt::Result {
        for a in 0..self.data.n_actions() {
            let Some(t) = self.data.action_track(a) else {
                continue;
            };
            if self.data.action_kind(a) == Some(ActionKind::Snapshot) {
                continue;
            }
            let label = match t.how {
                Tracking::Max => "max",
                Tracking::Change => "changed",
            };
            write!(out, "\n\t{label}: {:10}", elt.read_var(t.var_idx))?;
            for k in 0..self.data.n_save_vars() {
                let Some((name, i)) = self.data.save_var(k) else {
                    break;
                };
                let val = elt.read_var(i);
                let copy = self.data.var_copy(i);
                if !matches!(copy, Some(vars::VarCopy::String | vars::VarCopy::Comm)) {
                    write!(out, "  {name}: {val:10}")?;
                    continue;
                }
                // C prints the copy's address: NULL until saved.
                let mut text = [0u8; vars::STR_VAR_LEN_MAX];
                let s: &[u8] = if elt.var_is_set(i) {
                    self.read_copy(elt, val, &mut text)
                } else {
                    b"(null)"
                };
                write!(out, "  {name}: ")?;
                output::write_padded(out, s, 32)?;
            }
        }
        Ok(())
    }

    /// The string in copy slot `slot` of `elt`, read into `buf`.
    pub(crate) fn read_copy<'b>(
        &self,
        elt: &map::Elt<'_>,
        slot: u64,
        buf: &'b mut [u8],
    ) -> &'b [u8] {
        let at = comm_words(self.needs_comm)
            + usize::try_from(slot)
                .unwrap_or(usize::MAX)
                .saturating_mul(vars::STR_VAR_WORDS);
        let words = elt.private_words().get(at..).unwrap_or(&[]);
        for (chunk, word) in buf
            .chunks_exact_mut(8)
            .zip(words.iter().take(vars::STR_VAR_WORDS))
        {
            chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes());
        }
        let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        &buf[..len]
    }
}
