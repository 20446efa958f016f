// SPDX-License-Identifier: GPL-2.0

//! The `hist_debug` file: each field's flags, type and place.

use super::*;

impl<'a> HistData<'a> {
    /// What the `hist_debug` file shows for this trigger after its
    /// header, exactly as `hist_trigger_debug_show()`: from
    /// `hist_data: <ptr>` (`hist_data_ptr` shows C's `%p`) to the
    /// actions, a referenced histogram shown as its identity in hex.
    ///
    /// C writes before it `"\n\n"` for every trigger but the event's
    /// first, then `"# event histogram\n#\n# trigger info: "`, the trigger
    /// info line with its suffix and newline, and `"#\n\n"`.
    #[cfg(not(MODULE))]
    pub fn write_debug(
        &self,
        out: &mut dyn Write,
        hist_data_ptr: &dyn fmt::Display,
    ) -> fmt::Result {
        self.write_debug_with(out, hist_data_ptr, &|out, hist| match hist {
            Some(hist) => write!(out, "{hist:#x}"),
            None => out.write_str("(null)"),
        })
    }

    /// [`write_debug`](Self::write_debug), then C's `variable reference
    /// fields:` (`var_refs[]`); `var_hist_data` writes C's `%p` of the
    /// histogram a reference names, given its identity
    /// ([`ref_hists`](Self::ref_hists)).
    pub fn write_debug_with(
        &self,
        out: &mut dyn Write,
        hist_data_ptr: &dyn fmt::Display,
        var_hist_data: HistPtr<'_>,
    ) -> fmt::Result {
        let n_vals = self.n_vals + self.n_vars;
        writeln!(out, "hist_data: {hist_data_ptr}\n")?;
        writeln!(out, "  n_vals: {n_vals}")?;
        writeln!(out, "  n_keys: {}", self.n_keys)?;
        writeln!(out, "  n_fields: {}", n_vals + self.n_keys)?;
        out.write_str("\n  val fields:\n\n")?;
        let vals = self.val_ids().iter().chain(self.var_ids());
        for (i, &id) in vals.enumerate() {
            if i == 0 {
                out.write_str("    hist_data->fields[0]:\n")?;
            } else {
                write!(out, "\n    hist_data->fields[{i}]:\n")?;
            }
            self.debug_field(out, id, var_hist_data)?;
            // rhist's own line, for its own modifiers.
            if let Some(stat) = self.val_stat(i) {
                writeln!(out, "      statistic: {}", stat.name())?;
            }
            if let (Some(j), Some(pool)) = (self.sketch_index(i), self.sketch_params()) {
                self.debug_sketch(out, j, pool)?;
            }
        }
        out.write_str("\n  key fields:\n")?;
        for (i, &id) in self.key_ids().iter().enumerate() {
            write!(out, "\n    hist_data->fields[{}]:\n", n_vals + i)?;
            self.debug_field(out, id, var_hist_data)?;
        }
        if !self.refs.refs().is_empty() {
            out.write_str("\n  variable reference fields:\n")?;
        }
        // A reference to this trigger's own variable names this
        // histogram.
        let var_hist_data = |out: &mut dyn Write, hist: Option<u64>| match hist {
            Some(OWN_HIST) => write!(out, "{hist_data_ptr}"),
            other => var_hist_data(out, other),
        };
        for (i, r) in self.refs.refs().iter().enumerate() {
            write!(out, "\n    hist_data->var_refs[{i}]:\n")?;
            self.debug_field(out, r.node, &var_hist_data)?;
        }
        self.write_actions_debug(out, &var_hist_data)
    }

    /// rhist's lines for the sketch `j` of a `.quantiles` value: what
    /// an entry's sketch takes, and the pool the map's share.
    pub(super) fn debug_sketch(
        &self,
        out: &mut dyn Write,
        j: usize,
        pool: PoolParams,
    ) -> fmt::Result {
        let (index, page) = (SKETCH_WORDS * 8, PAGE_WORDS * 8);
        writeln!(out, "      sketch: {j} of {}", self.n_percentiles())?;
        writeln!(
            out,
            "      sketch memory per entry: {index} bytes of index, and {page} bytes per page it takes"
        )?;
        let bytes = pool.storage_bytes().unwrap_or(0);
        writeln!(
            out,
            "      sketch pool: {} sketches, {} pages, {bytes} bytes",
            pool.n_sketches, pool.n_pages
        )
    }

    /// C's `type` string of a field.
    pub(super) fn type_name(&self, id: u8) -> &str {
        let mut id = id;
        // Each step goes to a lower index.
        for _ in 0..NODES_MAX {
            let f = self.node(id);
            match f.ty {
                TypeName::Field => return f.field.map_or("(null)", |field| field.type_name),
                TypeName::U64 => return "u64",
                TypeName::UnsignedLongArray => return "unsigned long[]",
                TypeName::UnsignedInt => return "unsigned int",
                TypeName::CharArray => return "char[]",
                TypeName::Comm => return "char[16]",
                TypeName::Ref(idx) => {
                    return self
                        .refs
                        .get(usize::from(idx))
                        .map_or("", |r| r.ty.as_str())
                }
                TypeName::Operand => match f.operand(0) {
                    Some(op) if op < id => id = op,
                    _ => break,
                },
            }
        }
        "(null)"
    }

    /// `hist_field_debug_show()` of a field (with C's flags, which never
    /// fail its check); `var_hist_data` writes C's `%p` of a referenced
    /// histogram.
    pub(super) fn debug_field(
        &self,
        out: &mut dyn Write,
        id: u8,
        var_hist_data: HistPtr<'_>,
    ) -> fmt::Result {
        let f = self.node(id);
        out.write_str("      flags:\n")?;
        out.write_str(if f.flags & FL_KEY != 0 {
            "        HIST_FIELD_FL_KEY\n"
        } else if f.flags & FL_HITCOUNT != 0 {
            "        VAL: HIST_FIELD_FL_HITCOUNT\n"
        } else if f.flags & FL_VAR != 0 {
            "        HIST_FIELD_FL_VAR\n"
        } else if f.flags & FL_VAR_REF != 0 {
            "        HIST_FIELD_FL_VAR_REF\n"
        } else {
            "        VAL: normal u64 value\n"
        })?;
        if f.flags & FL_ALIAS != 0 {
            out.write_str("        HIST_FIELD_FL_ALIAS\n")?;
        } else if f.flags & FL_CONST != 0 {
            out.write_str("        HIST_FIELD_FL_CONST\n")?;
        }
        if let Some(field) = f.field {
            writeln!(out, "      ftrace_event_field name: {}", field.name)?;
        }
        if f.flags & FL_VAR != 0 {
            let idx = self.var_ids().iter().position(|&v| v == id).unwrap_or(0);
            out.write_str("      var.name: ")?;
            self.spec
                .write_as_c(out, self.var_name(idx).unwrap_or(""))?;
            out.write_char('\n')?;
            writeln!(out, "      var.idx (into tracing_map_elt.vars[]): {idx}")?;
        }
        if f.flags & FL_CONST != 0 {
            writeln!(out, "      constant: {}", f.constant())?;
        }
        let var_ref_idx = match f.fetch {
            Fetch::VarRef { idx } => idx,
            _ => 0,
        };
        if f.flags & FL_ALIAS != 0 {
            writeln!(
                out,
                "      var_ref_idx (into hist_data->var_refs[]): {var_ref_idx}"
            )?;
        }
        if f.flags & FL_VAR_REF != 0 {
            if let Some(r) = self.ref_of(&f) {
                writeln!(out, "      name: {}{}", r.name_prefix(), r.name())?;
                let var_idx = match r.slot {
                    OWN_SLOT => self.c_var_idx(usize::from(r.var_idx)),
                    _ => usize::from(r.var_idx),
                };
                writeln!(
                    out,
                    "      var.idx (into tracing_map_elt.vars[]): {var_idx}"
                )?;
                out.write_str("      var.hist_data: ")?;
                let hist = match r.slot {
                    OWN_SLOT => Some(OWN_HIST),
                    slot => self.refs.hists().get(usize::from(slot)).copied(),
                };
                var_hist_data(out, hist)?;
                out.write_char('\n')?;
                writeln!(
                    out,
                    "      var_ref_idx (into hist_data->var_refs[]): {var_ref_idx}"
                )?;
                if let Some((system, event)) = r.system() {
                    writeln!(out, "      system: {system}")?;
                    writeln!(out, "      event_name: {event}")?;
                }
            }
        }
        writeln!(out, "      type: {}", self.type_name(id))?;
        writeln!(out, "      size: {}", f.size)?;
        writeln!(out, "      is_signed: {}", u32::from(f.signed))
    }
}
