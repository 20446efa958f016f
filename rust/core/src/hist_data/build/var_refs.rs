// SPDX-License-Identifier: GPL-2.0

//! The builder's variable references: `$name` resolved, in this
//! histogram or another, and the aliases and hidden references C makes.

use super::*;

impl<'a> Builder<'_, '_, 'a> {
    /// `parse_var_ref()`: the reference to the variable `var` the shell
    /// finds ([`VarLookup`]); in a variable's definition that is just the
    /// reference, an alias of it (`create_alias()`).  When there is none,
    /// C logs `VAR_NOT_FOUND` (after `find_var_file()`'s `VAR_NOT_UNIQUE`
    /// if several events define it) and parses `$var` as a field, which
    /// fails again.
    pub(super) fn parse_var_ref(&mut self, atom: &Atom<'a>, var: &'a str) -> Result<u8, HistError> {
        let event = atom.system().zip(atom.event());
        let found = match (self.vars, event) {
            (None, _) => Found::None,
            (Some(lookup), Some(_)) => lookup.find_var(event, var),
            (Some(lookup), None) => match self.find_match_var(lookup, var) {
                Found::None => lookup.find_var(None, var),
                found => found,
            },
        };
        let made = match found {
            Found::One(target) => self.create_var_ref(atom, &target)?,
            Found::None | Found::NotUnique => None,
        };
        if let Some(id) = made {
            return if atom.context() == FieldContext::Var {
                self.create_alias(id)
            } else {
                Ok(id)
            };
        }
        let pos = self.spec().errpos(var);
        let field = self.spec().parse_field(atom.name(), atom.context());
        match self.parse_field(field, atom.context()) {
            Err(e) => {
                let e = e.after(HistErrorKind::VarNotFound, pos);
                Err(match found {
                    Found::NotUnique => e.after(HistErrorKind::VarNotUnique, pos),
                    _ => e,
                })
            }
            // A field name never starts with `$`.
            Ok(_) => Err(self.unsupported()),
        }
    }

    /// `find_match_var()`: an unqualified `$var` is first looked for on
    /// the events of this trigger's `onmatch()` handlers, in order; found
    /// on two (the same event named twice included), it is not unique.
    pub(super) fn find_match_var<'l>(&self, lookup: &'l dyn VarLookup, var: &str) -> Found<'l> {
        let mut found = Found::None;
        for handler in self.spec().actions() {
            let Ok(handler) = handler else { continue };
            let Handler::OnMatch { system, event } = handler.handler() else {
                continue;
            };
            if let Found::One(target) = lookup.find_var(Some((system, event)), var) {
                if found != Found::None {
                    return Found::NotUnique;
                }
                found = Found::One(target);
            }
        }
        found
    }

    /// `create_var_ref()` for `$var` written as `atom`: the hist field of
    /// the reference to `target`; `None` when there are as many as C
    /// allows.
    pub(super) fn create_var_ref(
        &mut self,
        atom: &Atom<'a>,
        target: &VarTarget<'_>,
    ) -> Result<Option<u8>, HistError> {
        let qualified = atom.system().is_some() && atom.event().is_some();
        let idx = self.var_ref(None, target, atom.text(), qualified)?;
        Ok(idx.and_then(|i| self.hd.refs.get(i)).map(|r| r.node))
    }

    /// `create_var_ref()` and `init_var_ref()`: the index in `var_refs[]`
    /// of the reference to `target` (this trigger's own variable `own`,
    /// if given), written `full`; the one this trigger has already if any;
    /// `None` when it has as many as C allows.
    pub(in super::super) fn var_ref(
        &mut self,
        own: Option<usize>,
        target: &VarTarget<'_>,
        full: &'a str,
        qualified: bool,
    ) -> Result<Option<usize>, HistError> {
        self.make_var_ref(own, target, full, qualified, None)
    }

    /// [`var_ref`](Self::var_ref) for the variable `synthetic_<field>`
    /// of a hidden histogram, for a parameter written `system.event.field`
    /// (`written`) or `field`.
    pub(in super::super) fn hidden_var_ref(
        &mut self,
        target: &VarTarget<'_>,
        field: &'a str,
        written: Option<(&'a str, &'a str)>,
    ) -> Result<Option<usize>, HistError> {
        self.make_var_ref(None, target, field, false, Some(written))
    }

    pub(super) fn make_var_ref(
        &mut self,
        own: Option<usize>,
        target: &VarTarget<'_>,
        full: &'a str,
        qualified: bool,
        hidden: Option<Option<(&'a str, &'a str)>>,
    ) -> Result<Option<usize>, HistError> {
        let existing = match own {
            Some(i) => self.hd.refs.find_own(i),
            None => self.hd.refs.find(target),
        };
        if existing.is_some() {
            return Ok(existing);
        }
        let idx = self.hd.refs.refs().len();
        if idx >= VAR_REFS_MAX || target.var_idx > usize::from(u8::MAX) {
            return Ok(None);
        }
        let id = self.push(HistField {
            flags: FL_VAR_REF | target.flags & (FL_TIMESTAMP | FL_TIMESTAMP_USECS | FL_STACKTRACE),
            size: target.size,
            signed: target.signed,
            fetch: Fetch::VarRef { idx: idx as u8 },
            ty: TypeName::Ref(idx as u8),
            ..HistField::default()
        })?;
        Ok(match (own, hidden) {
            (Some(_), _) => self.hd.refs.add_own(id, target, full, qualified),
            (None, Some(written)) => self.hd.refs.add_hidden(id, target, full, written),
            (None, None) => self.hd.refs.add(id, target, full, qualified),
        })
    }

    /// `create_alias()`: a variable defined as a reference (`x=$y`),
    /// which reads the reference's value.
    pub(super) fn create_alias(&mut self, var_ref: u8) -> Result<u8, HistError> {
        let r = self.node(var_ref);
        self.push(HistField {
            flags: FL_VAR
                | FL_ALIAS
                | r.flags & (FL_TIMESTAMP | FL_TIMESTAMP_USECS | FL_STACKTRACE),
            size: r.size,
            signed: r.signed,
            fetch: r.fetch,
            ty: r.ty,
            operands: [var_ref, NONE],
            ..HistField::default()
        })
    }

    /// The flags and constant `check_expr_operands()` and `parse_expr()`
    /// look at for an operand: a reference's are its variable's.
    pub(super) fn operand_var(&self, f: &HistField<'a>) -> (u32, u64) {
        match self.hd.ref_of(f) {
            Some(r) if f.flags & (FL_VAR_REF | FL_ALIAS) != 0 => (r.var_flags, r.var_constant),
            _ => (f.flags, f.constant()),
        }
    }

    /// `parse_expr()` sets `read_once` on the operands of a binary
    /// expression: a reference among them consumes the variable.
    pub(super) fn set_read_once(&mut self, id: u8) {
        let f = self.node(id);
        if f.flags & FL_VAR_REF == 0 {
            return;
        }
        if let Fetch::VarRef { idx } = f.fetch {
            if let Some(r) = self.hd.refs.get_mut(usize::from(idx)) {
                r.read_once = true;
            }
        }
    }

    /// `field_has_hist_vars()`: a variable or reference in the field or
    /// its operands (three levels down).
    pub(super) fn has_hist_vars(&self, id: u8, level: u32) -> bool {
        if level > 3 {
            return false;
        }
        let f = self.node(id);
        f.flags & (FL_VAR | FL_VAR_REF) != 0
            || (0..2).any(|i| match f.operand(i) {
                Some(op) if op < id => self.has_hist_vars(op, level + 1),
                _ => false,
            })
    }
}
