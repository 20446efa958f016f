// SPDX-License-Identifier: GPL-2.0

//! The builder's expressions: `parse_expr()`, its unary and binary
//! operators and atoms, as C parses them.

use super::*;

impl<'a> Builder<'_, '_, 'a> {
    /// `parse_expr()` of a key, value or variable: its hist field, or the
    /// error C reports.
    pub(super) fn parse_expr(&mut self, text: &'a str, ctx: FieldContext) -> Result<u8, HistError> {
        let expr = self.spec().parse_expr(text, ctx);
        self.build_node(&expr, expr.root(), context_flags(ctx))
    }

    /// One node of `parse_expr()`'s recursion; `flags` are those of the
    /// field (none for an operand).  The recursion is as deep as the tree
    /// (at most C's 3 subexpressions).
    pub(super) fn build_node(
        &mut self,
        expr: &Expr<'a>,
        id: NodeId,
        flags: u32,
    ) -> Result<u8, HistError> {
        match *expr.node(id) {
            Node::Error(e) => Err(e),
            // parse_const()
            Node::Const { value, .. } => self.push_const(flags, value),
            Node::Atom(atom) => self.parse_atom(&atom),
            Node::Neg { text, operand } => self.parse_unary(expr, flags, text, operand),
            Node::Binary {
                op,
                lhs_text,
                rhs_text,
                lhs,
                rhs,
            } => self.parse_binary(expr, flags, op, (lhs_text, lhs), (rhs_text, rhs)),
        }
    }

    /// A constant: `create_hist_field()` with `HIST_FIELD_FL_CONST`.
    pub(super) fn push_const(&mut self, flags: u32, value: u64) -> Result<u8, HistError> {
        self.push(HistField {
            flags: flags | FL_CONST,
            fetch: Fetch::Const,
            size: 8,
            ty: TypeName::U64,
            param: value,
            ..HistField::default()
        })
    }

    /// `parse_unary()` after its syntax checks: `-(operand)`.
    pub(super) fn parse_unary(
        &mut self,
        expr: &Expr<'a>,
        flags: u32,
        text: &'a str,
        operand: NodeId,
    ) -> Result<u8, HistError> {
        // The closing parenthesis becomes a NUL first.
        self.cut_current_def(text);
        let op = self.build_node(expr, operand, 0)?;
        let o = self.node(op);
        if o.flags & FL_STRING != 0 {
            return Err(self.error(HistErrorKind::InvalidStrOperand, text));
        }
        let id = self.push(HistField {
            flags: flags | FL_EXPR | o.flags & (FL_TIMESTAMP | FL_TIMESTAMP_USECS),
            fetch: Fetch::UMinus,
            operands: [op, NONE],
            size: o.size,
            signed: o.signed,
            ty: TypeName::Operand,
            ..HistField::default()
        })?;
        self.check_expr_str(id)?;
        Ok(id)
    }

    /// C writes a NUL, in the buffer the variable definitions keep, at
    /// each place [`Expr::c_remains`] lists, before it parses what
    /// follows: a binary operator, the `)` of a unary minus, the dots of
    /// `system.event.`. A `$name` inside the definition of `name` itself
    /// then finds its text cut there (`field_name_from_var()`): in
    /// `x=16-8-$x-2`, `$x` stands for the field `16`. Cuts the text of the
    /// definition being built at the end of `lhs_text`, if that lies in
    /// it and is shorter.
    pub(super) fn cut_current_def(&mut self, lhs_text: &'a str) {
        let Some(i) = self.current_def else { return };
        let Some(def) = self.defs.get(i) else { return };
        let base = def.expr.as_ptr() as usize;
        let end = (lhs_text.as_ptr() as usize + lhs_text.len()).checked_sub(base);
        if let Some(prefix) = end.and_then(|end| def.expr.get(..end)) {
            self.defs.set_parsed_expr(i, prefix);
        }
    }

    /// `parse_expr()` of `lhs op rhs`, after its syntax checks.
    pub(super) fn parse_binary(
        &mut self,
        expr: &Expr<'a>,
        flags: u32,
        op: BinaryOp,
        (lhs_text, lhs): (&'a str, NodeId),
        (rhs_text, rhs): (&'a str, NodeId),
    ) -> Result<u8, HistError> {
        let mark = self.hd.n_nodes;
        let refs_mark = self.hd.refs.refs().len();
        self.cut_current_def(lhs_text);
        let l = self.build_node(expr, lhs, 0)?;
        if self.node(l).flags & FL_STRING != 0 {
            return Err(self.error(HistErrorKind::InvalidStrOperand, lhs_text));
        }
        let r = self.build_node(expr, rhs, 0)?;
        let (lf, rf) = (self.node(l), self.node(r));
        if rf.flags & FL_STRING != 0 {
            return Err(self.error(HistErrorKind::InvalidStrOperand, rhs_text));
        }
        // check_expr_operands(): a reference stands for its variable.
        let (lvar, rvar) = (self.operand_var(&lf), self.operand_var(&rf));
        if (lvar.0 ^ rvar.0) & FL_TIMESTAMP_USECS != 0 {
            return Err(HistError::new(HistErrorKind::TimestampMismatch, 0));
        }
        self.set_read_once(l);
        self.set_read_once(r);
        let combine = lvar.0 & rvar.0 & FL_CONST != 0;
        let mut fetch = match op {
            BinaryOp::Plus => Fetch::Plus,
            BinaryOp::Minus => Fetch::Minus,
            BinaryOp::Mult => Fetch::Mult,
            BinaryOp::Div => Fetch::Div,
        };
        let divisor = rvar.1;
        if op == BinaryOp::Div && rvar.0 & FL_CONST != 0 {
            if divisor == 0 {
                return Err(self.error(HistErrorKind::DivisionByZero, rhs_text));
            }
            fetch = div_fetch(divisor);
            // C copies the divisor into the operand (a reference's
            // variable's constant), which the division reads.
            if let Some(f) = self.hd.nodes.get_mut(usize::from(r)) {
                f.param = divisor;
            }
        }
        let ts_flags = lf.flags & (FL_TIMESTAMP | FL_TIMESTAMP_USECS);
        if combine {
            // The operator is applied now and the operands dropped; they
            // are the last fields made.  References stay in var_refs[]
            // (C destroys them with the trigger), so do their fields.
            let value = apply_op(fetch, lvar.1, || rvar.1, divisor);
            if self.hd.refs.refs().len() == refs_mark {
                for f in self.hd.nodes.iter_mut().take(self.hd.n_nodes).skip(mark) {
                    *f = HistField::default();
                }
                self.hd.n_nodes = mark;
            }
            return self.push_const(flags | ts_flags, value);
        }
        let id = self.push(HistField {
            flags: flags | FL_EXPR | ts_flags,
            fetch,
            operands: [l, r],
            size: lf.size,
            signed: lf.signed,
            ty: TypeName::Operand,
            ..HistField::default()
        })?;
        self.check_expr_str(id)?;
        Ok(id)
    }

    /// Where `expr_str()` fails for a new expression: `-EINVAL` for the
    /// negation of a field with an operand but no operator (`.log2`,
    /// `.buckets=`), `-E2BIG` for a name that does not fit its buffer.
    pub(super) fn check_expr_str(&self, id: u8) -> Result<(), HistError> {
        let f = self.node(id);
        if f.fetch == Fetch::UMinus {
            if let Some(op) = f.operand(0) {
                let o = self.node(op);
                // expr_str() of the operand, one level down: a field with
                // an operand must be a binary expression there.
                let binary = o.fetch != Fetch::UMinus && o.fetch.operator().is_some();
                if o.operand(0).is_some() && !binary {
                    return Err(HistError::silent(errno::EINVAL));
                }
            }
        }
        let mut len = Count(0);
        let _ = self.hd.write_expr_str(&mut len, id, 0);
        if len.0 > EXPR_STR_MAX {
            return Err(HistError::silent(E2BIG));
        }
        Ok(())
    }

    /// `parse_atom()` of a field or variable reference (constants are
    /// [`Self::push_const`]).
    pub(super) fn parse_atom(&mut self, atom: &Atom<'a>) -> Result<u8, HistError> {
        // strsep() cuts `system.event.` off in place first.
        if let Some(system) = atom.system() {
            self.cut_current_def(system);
        }
        let text = match atom.var_ref() {
            None => atom.name(),
            Some(var) => {
                // local_field_var_ref(): a variable of this trigger that
                // is a plain field stands for that field.
                let here = match (atom.system(), atom.event()) {
                    (Some(s), Some(e)) => s == self.event.system && e == self.event.name,
                    (None, None) => true,
                    _ => false,
                };
                let local = if here {
                    self.spec().field_name_from_var(&self.defs, var)
                } else {
                    None
                };
                match local {
                    Some(field) => field,
                    // Otherwise C looks the variable up among the
                    // registered triggers.
                    None => return self.parse_var_ref(atom, var),
                }
            }
        };
        let field = self.spec().parse_field(text, atom.context());
        self.parse_field(field, atom.context())
    }
}
