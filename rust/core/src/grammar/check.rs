// SPDX-License-Identifier: GPL-2.0

//! The checks of C's parse that need no event: what a trigger's fields
//! and expressions say, before they are resolved.

use super::*;

impl<'a> TriggerSpec<'a> {
    /// `field_name_from_var()`: the expression of the first variable named
    /// `var` (without `$`) that is a plain field (no operator, not a
    /// variable reference).  `parse_atom()` uses it for `$var` when the
    /// atom names no other event: C then parses that expression as the
    /// field instead.
    pub fn field_name_from_var(&self, defs: &VarDefs<'a>, var: &str) -> Option<&'a str> {
        defs.iter()
            .filter(|d| d.name == var)
            .find(|d| self.src.contains_operator(d.expr) == Operator::None && !is_var_ref(d.expr))
            .map(|d| d.expr)
    }

    /// The first error C would report for this command if every look-up
    /// succeeded.
    ///
    /// That is: every `onmatch()` event exists; every `$var` not standing
    /// for a plain local field names an existing variable; every other
    /// field name is a numeric field of the event (a `.stacktrace` one if
    /// it has that modifier); no variable is defined twice; units of
    /// timestamps agree; every sort key names a key or value; the named
    /// trigger, clock, synthetic events and onmax/onchange variables are
    /// fine.  `sys.event.$var` atoms are taken as references to another
    /// event, except that in a key one naming a variable of this trigger
    /// that is a plain field is not taken for a reference (C parses it as
    /// that field when `sys.event` is the trigger's own event, which only
    /// the build step knows).  Within those assumptions the error and
    /// caret are C's.
    pub fn check_syntax(&self) -> Result<(), HistError> {
        for handler in self.actions() {
            handler?.action()?;
        }
        let defs = self.var_defs()?;

        let vals = self.vals();
        for field in vals.fields().iter() {
            self.check_field(&defs, field, FieldContext::Val)?;
        }
        if let Some(e) = vals.too_many_error() {
            return Err(e);
        }
        if let Some(e) = vals.nohitcount_error() {
            return Err(e);
        }
        // C cuts each definition's text in place as it parses it
        // (Expr::c_remains()): later `$x`s see what is left.
        let mut defs = defs;
        for i in 0..defs.len() {
            let Some(&def) = defs.get(i) else { break };
            self.check_field(&defs, def.expr, FieldContext::Var)?;
            let remains = self.parse_expr(def.expr, FieldContext::Var).c_remains();
            defs.set_parsed_expr(i, remains);
        }
        let keys = self.keys();
        for key in keys.fields().iter() {
            if let KeyField::Expr(text) = key {
                self.check_field(&defs, text, FieldContext::Key)?;
            }
        }
        if let Some(e) = keys.too_many_error() {
            return Err(e);
        }
        if let Some(sort) = self.sort_keys() {
            for key in sort.keys().iter() {
                key.descending()?;
            }
            if let Some(e) = sort.error() {
                return Err(e);
            }
        }
        // create_actions()
        let mut saves = 0;
        for handler in self.actions() {
            let handler = handler?;
            if let Handler::OnMax { var } | Handler::OnChange { var } = handler.handler() {
                if !var.starts_with('$') {
                    return Err(self.src.error(HistErrorKind::OnxNotVar, var));
                }
            }
            if handler.action()?.kind() == ActionKind::Save {
                if saves > 0 {
                    return Err(HistError::new(HistErrorKind::TooManySaveActions, 0));
                }
                saves += 1;
            }
        }
        Ok(())
    }

    /// One value, variable or key of [`Self::check_syntax`]: `parse_expr()`
    /// and the checks `__create_val_field()` and `create_key_field()` make
    /// on its result.
    pub(super) fn check_field(
        &self,
        defs: &VarDefs<'a>,
        text: &'a str,
        ctx: FieldContext,
    ) -> Result<(), HistError> {
        let expr = self.parse_expr(text, ctx);
        let root = self.check_node(defs, &expr, expr.root())?;
        let bad = || Err(self.src.error(HistErrorKind::BadFieldModifier, text));
        match (ctx, root) {
            (FieldContext::Key, _) => {
                // A reference for sure: a `$var` that cannot stand for a
                // plain field of this trigger, whatever the event.
                let var_ref = |n: &Node<'a>| match n {
                    Node::Atom(a) => a
                        .var_ref()
                        .is_some_and(|var| self.field_name_from_var(defs, var).is_none()),
                    _ => false,
                };
                if expr.nodes.iter().any(var_ref) {
                    return Err(self.src.error(HistErrorKind::InvalidRefKey, text));
                }
                Ok(())
            }
            (FieldContext::Var, Some(f)) if f.modifier_forbidden_on_var() => bad(),
            (FieldContext::Val, Some(f)) if f.forbidden_on_val() => bad(),
            _ => Ok(()),
        }
    }

    /// The local field a `$var` atom stands for, as `local_field_var_ref()`.
    pub(super) fn local_field(&self, defs: &VarDefs<'a>, atom: &Atom<'a>) -> Option<&'a str> {
        if atom.system.is_some() {
            return None;
        }
        self.field_name_from_var(defs, atom.var_ref()?)
    }

    /// Checks a node and what is below it, in C's order; gives the field
    /// of an atom that is one.
    pub(super) fn check_node(
        &self,
        defs: &VarDefs<'a>,
        expr: &Expr<'a>,
        id: NodeId,
    ) -> Result<Option<FieldSpec<'a>>, HistError> {
        match *expr.node(id) {
            Node::Error(e) => Err(e),
            Node::Const { .. } => Ok(None),
            Node::Atom(atom) => {
                let field = match self.local_field(defs, &atom) {
                    Some(expr) => self.parse_field(expr, atom.context()),
                    None if atom.var_ref().is_some() => return Ok(None),
                    None => self.parse_field(atom.name(), atom.context()),
                };
                let modifier = field.modifier()?;
                if modifier == Some(FieldModifier::Stacktrace) && field.special().is_some() {
                    return Err(self
                        .src
                        .error(HistErrorKind::BadFieldModifier, field.text()));
                }
                Ok(Some(field))
            }
            Node::Neg { operand, .. } => {
                self.check_node(defs, expr, operand)?;
                Ok(None)
            }
            Node::Binary {
                op,
                lhs,
                rhs,
                rhs_text,
                ..
            } => {
                self.check_node(defs, expr, lhs)?;
                self.check_node(defs, expr, rhs)?;
                if op == BinaryOp::Div {
                    if let Node::Const { value: 0, .. } = expr.node(rhs) {
                        return Err(self.src.error(HistErrorKind::DivisionByZero, rhs_text));
                    }
                }
                Ok(None)
            }
        }
    }
}
