// SPDX-License-Identifier: GPL-2.0

//! The variables of a histogram: those it defines, the references it
//! makes, and the copies its actions keep.

use super::*;

impl<'a> HistData<'a> {
    /// The number of variables this trigger defines (C's `n_vars`).
    pub fn n_vars(&self) -> usize {
        self.n_vars
    }

    /// The name of variable `i` (C's `var.name`; `i` is also C's
    /// `var.idx`, its slot in `tracing_map_elt.vars[]`).
    pub fn var_name(&self, i: usize) -> Option<&'a str> {
        self.var_names.get(..self.n_vars)?.get(i).copied()
    }

    /// The variable `name` of this trigger as another trigger's reference
    /// sees it (C's `find_var_field()` and what `init_var_ref()` copies),
    /// for the shell's [`VarLookup`]: `hist` is the identity the shell
    /// gives this histogram, `system` and `event` its event's names.
    pub fn var_target<'s>(
        &'s self,
        name: &str,
        hist: u64,
        system: &'s str,
        event: &'s str,
    ) -> Option<VarTarget<'s>> {
        let i = self
            .var_names
            .get(..self.n_vars)?
            .iter()
            .position(|&n| n == name)?;
        let id = *self.var_ids().get(i)?;
        let f = self.node_ref(id)?;
        Some(VarTarget {
            hist,
            var_idx: i,
            size: f.size,
            signed: f.signed,
            type_name: self.type_name(id),
            flags: f.flags,
            constant: f.constant(),
            copy: self.var_copy(i).is_some(),
            system,
            event,
        })
    }

    /// The number of references to other triggers' variables (C's
    /// `n_var_refs`): when not 0, events go through
    /// [`Histogram::update_with_refs`](super::super::histogram::Histogram::update_with_refs).
    pub fn n_var_refs(&self) -> usize {
        self.refs.refs().len()
    }

    /// Reference `i` (C's `var_refs[i]`).
    pub fn var_ref(&self, i: usize) -> Option<RefInfo> {
        self.refs.get(i).map(|r| RefInfo {
            slot: usize::from(r.slot),
            var_idx: usize::from(r.var_idx),
            read_once: r.read_once,
            own: r.slot == OWN_SLOT,
            copy: r.copy,
        })
    }

    /// The identities of the histograms the references name, by slot (as
    /// [`VarLookup`] gave them): the shell keeps one handle on each while
    /// this trigger lives, and passes them in this order to the event
    /// path.
    pub fn ref_hists(&self) -> &[u64] {
        self.refs.hists()
    }

    /// The value variable `i` takes for this record (what
    /// `hist_trigger_elt_update()` sets with `tracing_map_set_var()`); 0
    /// for no such variable.  Never panics, allocates or locks.
    #[cfg(not(MODULE))]
    pub fn var_value(&self, i: usize, rec: &[u8], ctx: &dyn EventContext) -> u64 {
        self.var_value_refs(i, rec, ctx, &[])
    }

    /// [`var_value`](Self::var_value) with the values resolved for the
    /// references (`var_ref_vals[]`, by reference index; missing ones
    /// read as 0).
    #[inline]
    pub fn var_value_refs(
        &self,
        i: usize,
        rec: &[u8],
        ctx: &dyn EventContext,
        ref_vals: &[u64],
    ) -> u64 {
        self.value_of(self.map_var_node(i).as_ref(), rec, ctx, ref_vals)
    }

    /// The variables of each entry: this trigger's own
    /// ([`n_vars`](Self::n_vars)), its field variables, its save
    /// variables and its tracking variables.  The per-variable accessors
    /// below take indices up to this.
    pub fn n_map_vars(&self) -> usize {
        self.n_event_vars() + self.n_save_vars + self.n_track_vars
    }

    /// The variables every event sets: this trigger's own and its field
    /// variables, the first of the map's.
    pub fn n_event_vars(&self) -> usize {
        self.n_vars + self.n_field_vars
    }

    /// How many variables keep a copy in each entry (C's `n_var_str`).
    pub fn n_var_copies(&self) -> usize {
        (0..self.n_map_vars())
            .filter(|&i| self.var_copy(i).is_some())
            .count()
    }

    /// How many of the variables every event sets keep a copy: the
    /// copies of the save variables come after theirs.
    pub fn n_event_var_copies(&self) -> usize {
        (0..self.n_event_vars())
            .filter(|&i| self.var_copy(i).is_some())
            .count()
    }

    /// What variable `i` keeps a copy of in each entry, C's variables with
    /// a `var_str_idx`; `None` for a number (or an alias, which has its
    /// target's value).
    pub fn var_copy(&self, i: usize) -> Option<VarCopy> {
        let f = self.node_ref(self.map_var_node(i)?)?;
        if f.flags & FL_ALIAS != 0 {
            None
        } else if f.flags & FL_EXECNAME != 0 {
            Some(VarCopy::Execname)
        } else if f.flags & FL_COMM != 0 {
            Some(VarCopy::Comm)
        } else if f.flags & FL_STRING != 0 {
            Some(VarCopy::String)
        } else if f.flags & FL_STACKTRACE != 0 {
            Some(VarCopy::Stack)
        } else {
            None
        }
    }

    /// The string a [`VarCopy::String`] variable `i` copies from `rec`:
    /// the record from the string's start, and the most bytes C's
    /// `strscpy()` takes, the NUL included (`min(size, STR_VAR_LEN_MAX)`).
    /// Empty for any other variable, or an offset past the record.
    pub fn var_string<'r>(&self, i: usize, rec: &'r [u8]) -> (&'r [u8], usize) {
        let Some(f) = self.map_var_node(i).and_then(|id| self.node_ref(id)) else {
            return (&[], 0);
        };
        let start = match f.fetch {
            Fetch::String { at } => at as usize,
            Fetch::DynString { at } => (rec_u32(rec, at as usize) & 0xffff) as usize,
            Fetch::RelDynString { at } => {
                let loc = (rec_u32(rec, at as usize) & 0xffff) as usize;
                at as usize + 4 + loc
            }
            _ => return (&[], 0),
        };
        let size = (f.size as usize).min(vars::STR_VAR_LEN_MAX);
        (rec.get(start..).unwrap_or(&[]), size)
    }
}
