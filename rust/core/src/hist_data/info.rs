// SPDX-License-Identifier: GPL-2.0

//! The trigger's text as the `trigger` file shows it, its fields' names,
//! and whether two triggers are the same.

use super::*;

impl<'a> HistData<'a> {
    /// The trigger info line without its filter/state suffix: `hist:keys=...:vals=...[:var=...]:sort=...:size=N[:clock=..][:nohitcount]`
    /// with `prefix` replacing `hist:` (rhist passes "rhist:"), and `name:` after the prefix for named triggers, exactly as event_hist_trigger_print().
    pub fn write_info(&self, out: &mut dyn Write, prefix: &str) -> fmt::Result {
        out.write_str(prefix)?;
        if let Some(name) = self.spec.name_attr() {
            self.spec.write_as_c(out, name)?;
            out.write_char(':')?;
        }
        out.write_str("keys=")?;
        for (i, &id) in self.key_ids().iter().enumerate() {
            if i > 0 {
                out.write_char(',')?;
            }
            let f = self.node(id);
            if f.flags & FL_STACKTRACE != 0 {
                match f.field {
                    Some(field) => write!(out, "{}.stacktrace", field.name)?,
                    None => out.write_str("common_stacktrace")?,
                }
            } else {
                self.print_field(out, id, None)?;
            }
        }
        out.write_str(":vals=")?;
        let mut show_val = false;
        for i in 0..self.val_ids().len() {
            if i == 0 {
                if self.spec.no_hitcount() {
                    continue;
                }
                out.write_str("hitcount")?;
            } else {
                if show_val {
                    out.write_char(',')?;
                }
                self.write_stat_field(out, i)?;
            }
            show_val = true;
        }
        for (i, (&id, &name)) in self.var_ids().iter().zip(self.var_names.iter()).enumerate() {
            out.write_char(if i == 0 { ':' } else { ',' })?;
            self.print_field(out, id, Some(name))?;
        }
        out.write_str(":sort=")?;
        for (i, (key, field)) in self.sort_keys().iter().zip(self.sort_fields).enumerate() {
            if i > 0 {
                out.write_char(',')?;
            }
            match (field, key.field) {
                (None, _) => out.write_str("hitcount")?,
                (_, SortField::Quantile { val, rank }) => {
                    self.write_val_stem(out, val)?;
                    let label = super::super::sketch::PERCENTILE_NAMES
                        .get(rank)
                        .unwrap_or(&"p50");
                    write!(out, ".{label}")?;
                }
                // A statistic as its value is written, which sort= takes.
                (_, SortField::Sum(j)) if self.val_stat(j).is_some() => {
                    self.write_stat_field(out, j)?
                }
                (Some(id), _) => self.print_field(out, id, None)?,
            }
            if key.descending {
                out.write_str(".descending")?;
            }
        }
        write!(out, ":size={}", 1u32 << self.map_bits())?;
        if self.enable_timestamps {
            write!(out, ":clock={}", self.spec.clock())?;
        }
        if self.spec.no_hitcount() {
            out.write_str(":nohitcount")?;
        }
        if self.spec.grow() {
            out.write_str(":grow")?;
        }
        self.write_actions_info(out)
    }

    /// Whether this and `other` are the same histogram, as C's
    /// `hist_trigger_match()` decides it (the filter and the named
    /// trigger checks are the caller's): the same fields in the same
    /// order with the same flags, event field (`compatible_field()`:
    /// name, type, size and sign), place and size, the same variable
    /// names and the same sort keys. As in C, the operands of an
    /// expression are not compared, nor `size=` or `clock=`.
    pub fn matches(&self, other: &HistData<'_>) -> bool {
        fn compatible_field(a: Option<&EventField<'_>>, b: Option<&EventField<'_>>) -> bool {
            match (a, b) {
                (None, None) => true,
                (Some(a), Some(b)) => {
                    a.name == b.name
                        && a.type_name == b.type_name
                        && a.size == b.size
                        && a.signed == b.signed
                }
                _ => false,
            }
        }
        if self.n_vals != other.n_vals
            || self.n_vars != other.n_vars
            || self.n_keys != other.n_keys
            || self.sort_keys() != other.sort_keys()
            || self.val_stats() != other.val_stats()
            || self.spec.grow() != other.spec.grow()
        {
            return false;
        }
        let same_fields = self.field_ids().zip(other.field_ids()).all(|(a, b)| {
            let (f, g) = (self.node(a), other.node(b));
            f.flags == g.flags
                && compatible_field(f.field, g.field)
                && f.offset == g.offset
                && f.size == g.size
                && f.signed == g.signed
        });
        let n = self.n_vars;
        same_fields
            && self.var_names.get(..n) == other.var_names.get(..n)
            && self.actions_match(other)
    }

    /// `hist_field_print()`, with the variable's name.
    pub(super) fn print_field(
        &self,
        out: &mut dyn Write,
        id: u8,
        var_name: Option<&str>,
    ) -> fmt::Result {
        let f = self.node(id);
        if let Some(name) = var_name {
            self.spec.write_as_c(out, name)?;
            out.write_char('=')?;
        }
        if f.flags & FL_CPU != 0 {
            out.write_str("common_cpu")?;
        } else if f.flags & FL_COMM != 0 {
            out.write_str("common_comm")?;
        } else if f.flags & FL_CONST != 0 {
            write!(out, "{}", f.constant())?;
        } else {
            if f.flags & (FL_VAR_REF | FL_ALIAS) != 0 && !self.has_system(&f) {
                out.write_char('$')?;
            }
            self.write_name(out, id)?;
        }
        if f.flags & (FL_VAR_REF | FL_EXPR | FL_STACKTRACE) == 0 {
            if let Some(flags) = field_flags_str(f.flags) {
                write!(out, ".{flags}")?;
            }
        }
        if f.buckets() != 0 {
            // C prints the unsigned long with %ld.
            write!(out, "={}", f.buckets() as i64)?;
        }
        Ok(())
    }

    /// `expr_str()`: the name of an expression (what C stores in its
    /// `name` when it creates it); [`Builder::check_expr_str`] makes sure
    /// C would not fail here.
    pub(super) fn write_expr_str(&self, out: &mut dyn Write, id: u8, level: u32) -> fmt::Result {
        let f = self.node(id);
        let op0 = match f.operand(0) {
            Some(op) if op < id && level <= 1 => op,
            _ => return self.write_expr_field_str(out, id),
        };
        if f.fetch == Fetch::UMinus {
            out.write_str("-(")?;
            self.write_expr_str(out, op0, level + 1)?;
            return out.write_char(')');
        }
        self.write_expr_field_str(out, op0)?;
        out.write_char(f.fetch.operator().unwrap_or('?'))?;
        match f.operand(1) {
            Some(op1) if op1 < id => self.write_expr_field_str(out, op1),
            _ => Ok(()),
        }
    }

    /// `expr_field_str()`: an operand in an expression's name.
    pub(super) fn write_expr_field_str(&self, out: &mut dyn Write, id: u8) -> fmt::Result {
        let f = self.node(id);
        if f.flags & FL_VAR_REF != 0 {
            if !self.has_system(&f) {
                out.write_char('$')?;
            }
        } else if f.flags & FL_CONST != 0 {
            write!(out, "{}", f.constant())?;
        }
        self.write_name(out, id)?;
        if f.flags & FL_VAR_REF == 0 {
            if let Some(flags) = field_flags_str(f.flags) {
                write!(out, ".{flags}")?;
            }
        }
        Ok(())
    }

    /// `hist_field_name()`.
    pub(super) fn write_name(&self, out: &mut dyn Write, id: u8) -> fmt::Result {
        match self.name_str(id, 0) {
            Some(name) => out.write_str(name),
            None => self.write_expr_str(out, id, 0),
        }
    }

    /// `hist_field_name()` when it is text: `None` for an expression,
    /// whose name [`Self::write_name`] writes.
    pub(super) fn name_str(&self, id: u8, level: u32) -> Option<&'a str> {
        if level > 1 {
            return Some("");
        }
        let f = self.node(id);
        Some(if let Some(field) = f.field {
            field.name
        } else if f.flags & (FL_LOG2 | FL_ALIAS | FL_BUCKET) != 0 {
            match f.operand(0) {
                Some(op) if op < id => return self.name_str(op, level + 1),
                _ => "",
            }
        } else if f.flags & FL_CPU != 0 {
            "common_cpu"
        } else if f.flags & FL_COMM != 0 {
            "common_comm"
        } else if f.flags & FL_VAR_REF != 0 {
            // `system.event.$name` as written, or the variable's name.
            match self.ref_of(&f) {
                Some(r) if r.system().is_some() => r.full,
                Some(r) => r.name(),
                None => "",
            }
        } else if f.flags & FL_EXPR != 0 {
            return None;
        } else if f.flags & FL_TIMESTAMP != 0 {
            "common_timestamp"
        } else if f.flags & FL_STACKTRACE != 0 {
            "common_stacktrace"
        } else if f.flags & FL_HITCOUNT != 0 {
            "hitcount"
        } else {
            ""
        })
    }

    /// The reference a `VAR_REF` (or alias) field reads.
    pub(super) fn ref_of(&self, f: &HistField<'a>) -> Option<&super::super::var_ref::VarRef<'a>> {
        match f.fetch {
            Fetch::VarRef { idx } => self.refs.get(usize::from(idx)),
            _ => None,
        }
    }

    /// Whether a reference (or alias) field was written with a system
    /// (C's `system`), which it is printed with instead of `$`.
    pub(super) fn has_system(&self, f: &HistField<'a>) -> bool {
        self.ref_of(f).is_some_and(|r| r.system().is_some())
    }

    /// Whether `hist_field_name()` of `id` is `name`.
    pub(super) fn name_is(&self, id: u8, name: &str) -> bool {
        let mut m = Prefix {
            rest: name,
            ok: true,
        };
        self.write_name(&mut m, id).is_ok() && m.ok && m.rest.is_empty()
    }
}
