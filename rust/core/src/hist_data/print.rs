// SPDX-License-Identifier: GPL-2.0

//! How the keys and values print in the `hist` file, and which sort
//! field each sort key is.

use super::*;

impl<'a> HistData<'a> {
    /// The name of value `i` without its statistic: what a `.quantiles`
    /// value's columns are named after (`lat` of `lat.p99`).
    pub fn write_val_stem(&self, out: &mut dyn Write, i: usize) -> fmt::Result {
        match self.val_ids().get(i).filter(|_| i > 0) {
            Some(&id) => self.write_name(out, id),
            None => out.write_str("hitcount"),
        }
    }

    /// What value `i` prints, its slot reading `slot` (the copies
    /// combined: added, or their maximum for a [`SlotOp::Max`]) and its
    /// entry's hitcount being what `hits` reads (for `.avg`): the sum, or
    /// the statistic.
    pub fn val_value(&self, i: usize, slot: u64, hits: impl FnOnce() -> u64) -> u64 {
        match self.val_stat(i) {
            Some(Statistic::Avg) => Statistic::Avg.value(self.val_signed(i), slot, hits()),
            Some(stat) => stat.value(self.val_signed(i), slot, 0),
            None => slot,
        }
    }

    /// Builds the key for one event record into `key` (len == key_size()),
    /// which must be all zeros, as event_hist_trigger()/add_to_key() do
    /// (strncpy semantics and the size-1 truncation of strings included).
    /// Never panics: out-of-range record offsets read as zero/empty.
    ///
    /// The event path passes a buffer it has just made of zeros: zeroing
    /// it again here cost a third of the general path's key.
    pub fn write_key(&self, rec: &[u8], ctx: &dyn EventContext, key: &mut [u8]) {
        debug_assert!(
            key.iter().all(|&b| b == 0),
            "write_key() into a used buffer"
        );
        for &id in self.key_ids() {
            let Some(f) = self.node_ref(id) else {
                continue;
            };
            let start = usize::from(f.offset).min(key.len());
            let end = start.saturating_add(f.size as usize).min(key.len());
            let Some(slot) = key.get_mut(start..end) else {
                continue;
            };
            if f.flags & FL_STACKTRACE != 0 {
                let mut entries = [0u64; STACKTRACE_DEPTH];
                match f.fetch {
                    Fetch::Stack { at } => read_stack(rec, at, &mut entries),
                    _ => ctx.stacktrace(&mut entries),
                }
                for (chunk, e) in slot.chunks_mut(8).zip(entries.iter()) {
                    put(chunk, &e.to_ne_bytes());
                }
            } else if f.fetch == Fetch::Comm {
                // add_to_key() of 6.16: strlen(), at most the slot less one.
                let comm = ctx.comm();
                let n = slot.len().saturating_sub(1);
                strncpy_from(slot, &comm, 0, n);
            } else if f.flags & FL_STRING != 0 {
                let Some(key_str) = key_str(f) else { continue };
                let (src, size) = key_str.locate(rec);
                strncpy_from(slot, rec, src, size);
            } else {
                // A reference in a key reads 0 (C's hist_field_var_ref()
                // without an entry), but keys never hold one.
                let value = self.field_value(f, id, rec, ctx, &[]).to_ne_bytes();
                match <&mut [u8; 8]>::try_from(&mut *slot) {
                    Ok(word) => *word = value,
                    Err(_) => put(slot, &value),
                }
            }
        }
    }

    /// The values to print after the keys: (sum index, name, display), hitcount first unless nohitcount.
    ///
    /// As in `hist_trigger_entry_print()`, C puts one more space before
    /// each value after hitcount than [`write_val`](super::super::output::write_val) writes,
    /// and leaves out expressions. A statistic is printed whatever its
    /// value is, an expression too, as its value's name and its modifier
    /// (`lat.max`), signed if the value is.
    pub fn printed_vals(&self) -> impl Iterator<Item = (usize, ValName<'_, 'a>, ValDisplay)> + '_ {
        let no_hitcount = self.spec.no_hitcount();
        self.val_ids()
            .iter()
            .enumerate()
            .filter(move |&(i, &id)| {
                let flags = self.node(id).flags;
                if i == 0 {
                    !no_hitcount
                } else {
                    flags & (FL_VAR | FL_EXPR) == 0 || self.val_stat(i).is_some()
                }
            })
            .map(move |(i, &id)| {
                let f = self.node(id);
                let display = match (i, self.val_stat(i)) {
                    (0, _) => ValDisplay::Plain,
                    (_, None) => val_display(f),
                    (_, Some(_)) if f.flags & FL_HEX != 0 => ValDisplay::Hex,
                    (_, Some(_)) if f.signed => ValDisplay::Signed,
                    (_, Some(_)) => ValDisplay::Plain,
                };
                (i, ValName { hd: self, i }, display)
            })
    }

    /// [`ValName`] of value `i`.
    pub(super) fn write_val_name(&self, out: &mut dyn Write, i: usize) -> fmt::Result {
        let Some(&id) = self.val_ids().get(i).filter(|_| i > 0) else {
            return out.write_str("hitcount");
        };
        match self.val_stat(i) {
            Some(stat) => {
                self.write_name(out, id)?;
                write!(out, ".{}", stat.name())
            }
            None => out.write_str(self.name_str(id, 0).unwrap_or("")),
        }
    }

    /// Whether `text` names statistic `i`, as it prints ([`ValName`],
    /// `cpu.max`) or as the trigger info writes it
    /// ([`write_stat_field`](Self::write_stat_field), `common_cpu.max`),
    /// alone or followed by a `.` and more: what follows, if so.
    pub(super) fn stat_name_prefix<'t>(&self, i: usize, text: &'t str) -> Option<&'t str> {
        self.val_stat(i)?;
        after_prefix(text, |out| self.write_val_name(out, i))
            .or_else(|| after_prefix(text, |out| self.write_stat_field(out, i)))
    }

    /// When value `i` is a `.quantiles` one and `text` names one of its
    /// quantiles (`lat.p99`, `lat.p99.descending`): which, and what
    /// follows it (`""`, `"descending"`).
    pub(super) fn quantile_sort_name<'t>(
        &self,
        i: usize,
        text: &'t str,
    ) -> Option<(usize, &'t str)> {
        if self.val_stat(i) != Some(Statistic::Percentiles) {
            return None;
        }
        let rest = after_prefix(text, |out| self.write_val_stem(out, i))?;
        let (label, order) = rest.split_once('.').unwrap_or((rest, ""));
        let rank = super::super::sketch::PERCENTILE_NAMES
            .iter()
            .position(|n| *n == label)?;
        Some((rank, order))
    }

    /// Value `i` as the trigger info writes it: `hist_field_print()`, and
    /// its statistic's modifier (`b.hex.max`, `common_cpu.min`).
    pub(super) fn write_stat_field(&self, out: &mut dyn Write, i: usize) -> fmt::Result {
        let Some(&id) = self.val_ids().get(i) else {
            return Ok(());
        };
        self.print_field(out, id, None)?;
        match self.val_stat(i) {
            Some(stat) => write!(out, ".{}", stat.name()),
            None => Ok(()),
        }
    }

    /// The compare function `create_tracing_map_fields()` gives a key.
    pub(super) fn key_sort_field(&self, f: &HistField<'a>) -> SortField {
        let num = |size: u32, signed: bool| match (size, signed) {
            (1 | 2 | 4 | 8, false) => (KeyCmp::Unsigned, size),
            (1 | 2 | 4 | 8, true) => (KeyCmp::Signed, size),
            _ => (KeyCmp::None, f.size),
        };
        let (cmp, size) = match f.field {
            _ if f.flags & FL_STACKTRACE != 0 => (KeyCmp::None, f.size),
            // 6.16 compares none: rhist sorts the names.
            _ if f.flags & FL_COMM != 0 => (KeyCmp::String, f.size),
            None => num(f.size, f.signed),
            Some(_) if f.flags & FL_CPU != 0 => num(f.size, f.signed),
            Some(field) if is_string_field(field) => (KeyCmp::String, f.size),
            Some(field) => num(field.size, field.signed),
        };
        SortField::Key {
            offset: u32::from(f.offset),
            size,
            cmp,
        }
    }
}
