// SPDX-License-Identifier: GPL-2.0

//! The builder of [`HistData`]: `create_hist_data()`'s parsing of the
//! trigger's fields into hist fields, in C's order of work, so that the
//! first error is C's.  Evaluation stays in the parent module.

use super::*;

/// `create_hist_data()` into `hd`, which is empty for `spec`.
///
/// First as hist builds it, and so with hist's result for every text: a
/// text hist builds is built as hist builds it, and the first error is
/// hist's. Only when that fails and the text may be one of rhist's
/// extensions (a value ending with a statistic, `.min`, `.max`, `.avg`,
/// `.quantiles`, see [`super::super::stats`]; more keys, values or sort
/// keys than hist takes, up to [`KEYS_EXT_MAX`], [`VAL_FIELDS_EXT_MAX`]
/// and [`SORT_KEYS_EXT_MAX`]; `common_comm`) is the text built again,
/// afresh, as an extension; if that fails too, the error is still
/// hist's.
pub(super) fn build<'a>(
    hd: &mut HistData<'a>,
    spec: &TriggerSpec<'a>,
    event: &EventDesc<'a>,
    options: BuildOptions<'_>,
) -> Result<(), HistError> {
    match build_as(hd, spec, event, options, false) {
        Err(e) if spec.may_be_extension() || spec.may_have_comm() => {
            *hd = HistData::BLANK;
            hd.spec = *spec;
            hd.comm = spec.may_have_comm();
            build_as(hd, spec, event, options, spec.may_be_extension()).map_err(|_| e)
        }
        built => built,
    }
}

/// [`build`], as an extension or as hist.
fn build_as<'a>(
    hd: &mut HistData<'a>,
    spec: &TriggerSpec<'a>,
    event: &EventDesc<'a>,
    options: BuildOptions<'_>,
    ext: bool,
) -> Result<(), HistError> {
    // parse_actions(): the grammar did what comes before onmatch()'s
    // look-up of its event.
    for handler in spec.actions() {
        let handler = handler?;
        match handler.handler() {
            Handler::OnMatch { system, event } => {
                let exists = options.event_exists.is_some_and(|f| f(system, event));
                if !exists {
                    let pos = spec.errpos(event);
                    return Err(HistError::new(HistErrorKind::InvalidSubsysEvent, pos));
                }
            }
            Handler::OnMax { .. } | Handler::OnChange { .. } => {}
        }
        handler.action()?;
    }
    let mut b = Builder::new(hd, event, options)?;
    b.ext = ext;
    let built = (|| {
        b.create_val_fields()?;
        b.create_var_fields()?;
        b.create_key_fields()?;
        b.create_sort_keys()
    })();
    match built {
        Err(_) if b.unsupported => Err(unsupported_from(spec)),
        Err(e) => Err(e),
        Ok(()) if b.deferred.is_some() => Err(unsupported_from(spec)),
        Ok(()) => Ok(()),
    }
}

/// The state of one [`HistData::build`] (or
/// [`HistData::create_actions`]).
pub(super) struct Builder<'h, 'e, 'a> {
    pub(super) hd: &'h mut HistData<'a>,
    pub(super) event: &'e EventDesc<'a>,
    defs: VarDefs<'a>,
    /// The variable definition being built, whose text C splits in place
    /// as it parses it (see [`Self::cut_current_def`]).
    current_def: Option<usize>,
    pub(super) remove: bool,
    pub(super) defined_elsewhere: Option<&'h dyn Fn(&str) -> bool>,
    pub(super) vars: Option<&'h dyn VarLookup>,
    pub(super) synths: Option<&'h dyn SynthLookup>,
    pub(super) event_exists: Option<&'h EventExists<'h>>,
    pub(super) enable_snapshot: Option<&'h dyn Fn() -> Result<(), i32>>,
    pub(super) field_var_hist: Option<&'h FieldVarHist<'h>>,
    pub(super) log: Option<&'h dyn Fn(HistErrorKind, usize)>,
    /// [`not_supported`] for something C accepts but that does not stop
    /// the build (reported if nothing else fails).
    deferred: Option<HistError>,
    /// The build stopped at something not supported, where C goes
    /// on (its error is [`not_supported`]).
    unsupported: bool,
    /// Built as rhist's extensions ([`build`]): statistics, and more
    /// keys, values and sort keys.
    ext: bool,
    /// With [`HistData::comm`], the generic `comm` is `common_comm`.
    pub(super) generic_comm: bool,
}

/// The flags `parse_expr()` is called with for a field of kind `ctx`.
fn context_flags(ctx: FieldContext) -> u32 {
    match ctx {
        FieldContext::Key => FL_KEY,
        FieldContext::Var => FL_VAR,
        FieldContext::Val | FieldContext::Operand => 0,
    }
}

impl<'h, 'e, 'a> Builder<'h, 'e, 'a> {
    /// A builder adding to `hd`, built for `event` or empty.
    pub(super) fn new(
        hd: &'h mut HistData<'a>,
        event: &'e EventDesc<'a>,
        options: BuildOptions<'h>,
    ) -> Result<Self, HistError> {
        let defs = hd.spec.var_defs()?;
        Ok(Builder {
            hd,
            event,
            defs,
            current_def: None,
            remove: options.remove,
            defined_elsewhere: options.defined_elsewhere,
            vars: options.vars,
            synths: options.synths,
            event_exists: options.event_exists,
            enable_snapshot: options.enable_snapshot,
            field_var_hist: options.field_var_hist,
            log: options.log,
            deferred: None,
            unsupported: false,
            ext: false,
            generic_comm: true,
        })
    }
}

impl<'a> Builder<'_, '_, 'a> {
    pub(super) fn spec(&self) -> &TriggerSpec<'a> {
        &self.hd.spec
    }

    pub(super) fn error(&self, kind: HistErrorKind, at: &str) -> HistError {
        HistError::new(kind, self.spec().errpos(at))
    }

    fn defer(&mut self) {
        self.deferred.get_or_insert(not_supported());
    }

    /// Stops the build at something not supported.
    fn unsupported(&mut self) -> HistError {
        self.unsupported = true;
        not_supported()
    }

    pub(super) fn push(&mut self, f: HistField<'a>) -> Result<u8, HistError> {
        let id = self.hd.n_nodes;
        let Some(slot) = self.hd.nodes.get_mut(id) else {
            return Err(self.unsupported());
        };
        *slot = f;
        self.hd.n_nodes += 1;
        // NODES_MAX < NONE.
        Ok(id as u8)
    }

    pub(super) fn node(&self, id: u8) -> HistField<'a> {
        self.hd.node(id)
    }

    /// `create_val_fields()`.
    fn create_val_fields(&mut self) -> Result<(), HistError> {
        // create_hitcount_val()
        let hitcount = self.push(HistField {
            flags: FL_HITCOUNT,
            fetch: Fetch::Counter,
            size: 8,
            ty: TypeName::U64,
            ..HistField::default()
        })?;
        self.hd.vals[0] = hitcount;
        self.hd.n_vals = 1;
        let spec = *self.spec();
        let (hist, ext);
        let (fields, too_many, need_nohc) = match self.ext {
            false => {
                hist = spec.vals();
                (
                    hist.fields(),
                    hist.too_many_error(),
                    hist.nohitcount_error(),
                )
            }
            true => {
                ext = spec.vals_ext();
                (ext.fields(), ext.too_many_error(), ext.nohitcount_error())
            }
        };
        for &text in fields {
            match self.ext {
                false => self.create_val_field(text)?,
                true => self.create_val_field_or_stat(text)?,
            }
        }
        if let Some(e) = too_many {
            return Err(e);
        }
        if let Some(e) = need_nohc {
            return Err(e);
        }
        Ok(())
    }

    /// `create_val_field()` / `__create_val_field()` of a value.
    fn create_val_field(&mut self, text: &'a str) -> Result<(), HistError> {
        let id = self.val_field(text)?;
        self.push_val(id, None)
    }

    /// The hist field of value `text`, as `__create_val_field()` makes
    /// it.
    fn val_field(&mut self, text: &'a str) -> Result<u8, HistError> {
        let id = self.parse_expr(text, FieldContext::Val)?;
        let f = self.node(id);
        let forbidden = FL_BUCKET | FL_LOG2 | FL_SYM | FL_SYM_OFFSET | FL_SYSCALL | FL_STACKTRACE;
        if f.flags & forbidden != 0 {
            return Err(self.error(HistErrorKind::BadFieldModifier, text));
        }
        // A sum of the name's address (6.16's) means nothing.
        if f.flags & FL_COMM != 0 {
            return Err(self.error(HistErrorKind::InvalidStrOperand, text));
        }
        Ok(id)
    }

    /// Adds value `id`, a sum or a statistic.
    fn push_val(&mut self, id: u8, stat: Option<Statistic>) -> Result<(), HistError> {
        let n = self.hd.n_vals;
        match (self.hd.vals.get_mut(n), self.hd.stats.get_mut(n)) {
            (Some(slot), Some(s)) => {
                *slot = id;
                *s = stat;
            }
            _ => return Err(not_supported()),
        }
        self.hd.n_vals += 1;
        Ok(())
    }

    /// A value of a build with statistics ([`build`]): as hist takes it
    /// if it can (`$x.max` names the variable `x.max` if there is one,
    /// `x.y.max` the event's field `max` if it has one: C reads it as
    /// `system.event.field`), else a statistic of what is before its last
    /// `.` (`lat.max`, `$lat.min`, `a-b.avg`, `lat.hex.max`): a number,
    /// neither a string, a stack trace, an `.execname`, a `.percent` or
    /// `.graph`, nor hitcount. Its errors are not shown (the build's is hist's).
    fn create_val_field_or_stat(&mut self, text: &'a str) -> Result<(), HistError> {
        let mark = (
            self.hd.n_nodes,
            self.hd.refs.len(),
            self.hd.enable_timestamps,
            self.hd.ts_in_usecs,
            self.deferred,
        );
        let (id, stat) = match (self.val_field(text), Statistic::split(text)) {
            (Ok(id), _) => (id, None),
            (Err(e), None) => return Err(e),
            (Err(e), Some(_)) if self.unsupported => return Err(e),
            (Err(_), Some((stem, stat))) => {
                // What hist's attempt made goes.
                let (n_nodes, n_refs, timestamps, usecs, deferred) = mark;
                for f in self.hd.nodes.iter_mut().take(self.hd.n_nodes).skip(n_nodes) {
                    *f = HistField::default();
                }
                self.hd.n_nodes = n_nodes;
                self.hd.refs.truncate(n_refs);
                self.hd.enable_timestamps = timestamps;
                self.hd.ts_in_usecs = usecs;
                self.deferred = deferred;
                let id = self.val_field(stem)?;
                let f = self.node(id);
                // Nor hitcount, whose every statistic would be 1.
                let not_a_number =
                    FL_STRING | FL_STACKTRACE | FL_EXECNAME | FL_PERCENT | FL_GRAPH | FL_HITCOUNT;
                let copy = self.hd.ref_of(&f).is_some_and(|r| r.copy);
                if f.flags & not_a_number != 0 || copy {
                    return Err(not_supported());
                }
                // A sketch counts unsigned values (see `stats`).
                if stat == Statistic::Percentiles && f.signed {
                    return Err(not_supported());
                }
                (id, Some(stat))
            }
        };
        self.push_val(id, stat)
    }

    /// `create_var_fields()`.
    fn create_var_fields(&mut self) -> Result<(), HistError> {
        for i in 0..self.defs.len() {
            if let Some(&def) = self.defs.get(i) {
                self.current_def = Some(i);
                let remains = self.create_var_field(def);
                self.current_def = None;
                let remains = remains?;
                // C parsed the definition in place: later `$name`s see
                // what is left of it.
                self.defs.set_parsed_expr(i, remains);
            }
        }
        Ok(())
    }

    /// `create_var_field()`; gives what is left of the definition's text
    /// in C's buffer once parsed ([`Expr::c_remains`]).
    fn create_var_field(&mut self, def: VarDef<'a>) -> Result<&'a str, HistError> {
        // find_var(): this trigger's variables, then the event's other
        // triggers'.
        let names = self.hd.var_names.get(..self.hd.n_vars).unwrap_or(&[]);
        let elsewhere = |name| self.defined_elsewhere.is_some_and(|f| f(name));
        if !self.remove && (names.contains(&def.name) || elsewhere(def.name)) {
            return Err(self.error(HistErrorKind::DuplicateVar, def.name));
        }
        let expr = self.spec().parse_expr(def.expr, FieldContext::Var);
        let id = self.build_node(&expr, expr.root(), context_flags(FieldContext::Var))?;
        let f = self.node(id);
        if f.flags & (FL_GRAPH | FL_PERCENT | FL_BUCKET | FL_LOG2) != 0 {
            return Err(self.error(HistErrorKind::BadFieldModifier, def.expr));
        }
        if f.flags & FL_EXECNAME != 0 {
            // update_var_execname(): the variable is the entry's saved
            // command name, as a string.
            if let Some(node) = self.hd.nodes.get_mut(usize::from(id)) {
                node.flags = FL_STRING | FL_VAR | FL_EXECNAME;
                node.size = MAX_FILTER_STR_VAL;
                node.signed = false;
                node.ty = TypeName::CharArray;
                node.fetch = Fetch::Nop;
            }
        }
        let n = self.hd.n_vars;
        match (self.hd.vars.get_mut(n), self.hd.var_names.get_mut(n)) {
            (Some(slot), Some(name)) => {
                *slot = id;
                *name = def.name;
            }
            // The grammar allows at most TRACING_MAP_VARS_MAX.
            _ => return Err(not_supported()),
        }
        self.hd.n_vars += 1;
        Ok(expr.c_remains())
    }

    /// `create_key_fields()`.
    fn create_key_fields(&mut self) -> Result<(), HistError> {
        let spec = *self.spec();
        let (hist, ext);
        let (fields, too_many) = match self.ext {
            false => {
                hist = spec.keys();
                (hist.fields(), hist.too_many_error())
            }
            true => {
                ext = spec.keys_ext();
                (ext.fields(), ext.too_many_error())
            }
        };
        for &key in fields {
            self.create_key_field(key)?;
        }
        match too_many {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// `create_key_field()`.
    fn create_key_field(&mut self, key: KeyField<'a>) -> Result<(), HistError> {
        let (id, size) = match key {
            KeyField::Stacktrace => {
                let id = self.push(HistField {
                    flags: FL_KEY | FL_STACKTRACE,
                    size: HIST_STACKTRACE_SIZE,
                    ty: TypeName::UnsignedLongArray,
                    ..HistField::default()
                })?;
                (id, HIST_STACKTRACE_SIZE)
            }
            KeyField::Expr(text) => {
                let id = self.parse_expr(text, FieldContext::Key)?;
                if self.has_hist_vars(id, 0) {
                    return Err(self.error(HistErrorKind::InvalidRefKey, text));
                }
                (id, self.node(id).size)
            }
        };
        let size = align8(size);
        let offset = self.hd.key_size;
        if let Some(f) = self.hd.nodes.get_mut(usize::from(id)) {
            f.size = size;
            // At most HIST_KEY_SIZE_MAX, checked for the key before.
            f.offset = offset as u16;
        }
        self.hd.key_size = offset.wrapping_add(size);
        if self.hd.key_size > HIST_KEY_SIZE_MAX {
            return Err(HistError::silent(errno::EINVAL));
        }
        let slot = self
            .hd
            .keys
            .get_mut(self.hd.n_keys)
            .ok_or(not_supported())?;
        *slot = id;
        self.hd.n_keys += 1;
        Ok(())
    }

    /// `create_sort_keys()`.
    fn create_sort_keys(&mut self) -> Result<(), HistError> {
        // More sort keys only where the keys or values are already an
        // extension: a text hist could take but for a third sort key
        // keeps hist's TOO_MANY_SORT_FIELDS, which its selftests check.
        let spec = *self.spec();
        let (hist, ext);
        let (keys, error) = match self.ext && self.hd.fields_beyond_hist() {
            false => match spec.sort_keys() {
                Some(sort) => {
                    hist = sort;
                    (hist.keys(), hist.error())
                }
                None => return Ok(()),
            },
            true => match spec.sort_keys_ext() {
                Some(sort) => {
                    ext = sort;
                    (ext.keys(), ext.error())
                }
                None => return Ok(()),
            },
        };
        let mut n = 0;
        for (i, key) in keys.iter().enumerate() {
            let (field, node, descending) = match self.stat_sort_key(key.text())? {
                Some((field, j, order)) => {
                    let descending = match order {
                        "" | "ascending" => false,
                        "descending" => true,
                        _ => return Err(not_supported()),
                    };
                    (field, self.hd.val_ids().get(j).copied(), descending)
                }
                None if key.name() == "hitcount" => (SortField::Sum(0), None, key.descending()?),
                None => {
                    // A statistic is not its value's name (`lat` is not
                    // `lat.max`).
                    let vals = self.hd.val_ids().iter().enumerate().skip(1);
                    let vals = vals.filter(|&(j, _)| self.hd.val_stat(j).is_none());
                    let vals = vals.map(|(j, &id)| (SortField::Sum(j), id));
                    let keys = self.hd.key_ids().iter();
                    let keys = keys.map(|&id| (self.hd.key_sort_field(&self.node(id)), id));
                    let found = vals
                        .chain(keys)
                        .find(|&(_, id)| self.hd.name_is(id, key.name()));
                    match found {
                        Some((field, id)) => (field, Some(id), key.descending()?),
                        None => return Err(self.error(HistErrorKind::InvalidSortField, key.name())),
                    }
                }
            };
            if let (Some(k), Some(f)) =
                (self.hd.sort_keys.get_mut(i), self.hd.sort_fields.get_mut(i))
            {
                *k = SortKey { field, descending };
                *f = node;
            }
            n = i + 1;
        }
        if let Some(e) = error {
            return Err(e);
        }
        self.hd.n_sort_keys = n;
        Ok(())
    }

    /// A sort key named after a statistic of value `j`, as rhist's names
    /// go and hist never reads them: a quantile of a `.quantiles` value
    /// (`lat.p99.descending`), else a statistic as it prints
    /// (`lat.max.descending`, which hist takes to be `lat`). The field, `j`
    /// and what follows the name; a sketch itself has no one number to
    /// sort on.
    fn stat_sort_key<'t>(
        &self,
        text: &'t str,
    ) -> Result<Option<(SortField, usize, &'t str)>, HistError> {
        let quantile = (1..self.hd.n_vals).find_map(|j| {
            let (rank, order) = self.hd.quantile_sort_name(j, text)?;
            Some((SortField::Quantile { val: j, rank }, j, order))
        });
        if quantile.is_some() {
            return Ok(quantile);
        }
        let stat = (1..self.hd.n_vals)
            .find_map(|j| Some((SortField::Sum(j), j, self.hd.stat_name_prefix(j, text)?)));
        match stat {
            Some((_, j, _)) if self.hd.val_stat(j) == Some(Statistic::Percentiles) => {
                Err(not_supported())
            }
            _ => Ok(stat),
        }
    }

    /// `parse_expr()` of a key, value or variable: its hist field, or the
    /// error C reports.
    fn parse_expr(&mut self, text: &'a str, ctx: FieldContext) -> Result<u8, HistError> {
        let expr = self.spec().parse_expr(text, ctx);
        self.build_node(&expr, expr.root(), context_flags(ctx))
    }

    /// One node of `parse_expr()`'s recursion; `flags` are those of the
    /// field (none for an operand).  The recursion is as deep as the tree
    /// (at most C's 3 subexpressions).
    fn build_node(&mut self, expr: &Expr<'a>, id: NodeId, flags: u32) -> Result<u8, HistError> {
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
    fn push_const(&mut self, flags: u32, value: u64) -> Result<u8, HistError> {
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
    fn parse_unary(
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
    fn cut_current_def(&mut self, lhs_text: &'a str) {
        let Some(i) = self.current_def else { return };
        let Some(def) = self.defs.get(i) else { return };
        let base = def.expr.as_ptr() as usize;
        let end = (lhs_text.as_ptr() as usize + lhs_text.len()).checked_sub(base);
        if let Some(prefix) = end.and_then(|end| def.expr.get(..end)) {
            self.defs.set_parsed_expr(i, prefix);
        }
    }

    /// `parse_expr()` of `lhs op rhs`, after its syntax checks.
    fn parse_binary(
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
    fn check_expr_str(&self, id: u8) -> Result<(), HistError> {
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
    fn parse_atom(&mut self, atom: &Atom<'a>) -> Result<u8, HistError> {
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

    /// `parse_var_ref()`: the reference to the variable `var` the shell
    /// finds ([`VarLookup`]); in a variable's definition that is just the
    /// reference, an alias of it (`create_alias()`).  When there is none,
    /// C logs `VAR_NOT_FOUND` (after `find_var_file()`'s `VAR_NOT_UNIQUE`
    /// if several events define it) and parses `$var` as a field, which
    /// fails again.
    fn parse_var_ref(&mut self, atom: &Atom<'a>, var: &'a str) -> Result<u8, HistError> {
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
    fn find_match_var<'l>(&self, lookup: &'l dyn VarLookup, var: &str) -> Found<'l> {
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
    fn create_var_ref(
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
    pub(super) fn var_ref(
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
    pub(super) fn hidden_var_ref(
        &mut self,
        target: &VarTarget<'_>,
        field: &'a str,
        written: Option<(&'a str, &'a str)>,
    ) -> Result<Option<usize>, HistError> {
        self.make_var_ref(None, target, field, false, Some(written))
    }

    fn make_var_ref(
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
    fn create_alias(&mut self, var_ref: u8) -> Result<u8, HistError> {
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
    fn operand_var(&self, f: &HistField<'a>) -> (u32, u64) {
        match self.hd.ref_of(f) {
            Some(r) if f.flags & (FL_VAR_REF | FL_ALIAS) != 0 => (r.var_flags, r.var_constant),
            _ => (f.flags, f.constant()),
        }
    }

    /// `parse_expr()` sets `read_once` on the operands of a binary
    /// expression: a reference among them consumes the variable.
    fn set_read_once(&mut self, id: u8) {
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
    fn has_hist_vars(&self, id: u8, level: u32) -> bool {
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

    /// `parse_field()` and `create_hist_field()`.
    pub(super) fn parse_field(
        &mut self,
        spec: FieldSpec<'a>,
        ctx: FieldContext,
    ) -> Result<u8, HistError> {
        let modifier = spec.modifier()?;
        let mut flags = context_flags(ctx);
        let mut buckets = 0;
        flags |= match modifier {
            None => 0,
            Some(FieldModifier::Hex) => FL_HEX,
            Some(FieldModifier::Sym) => FL_SYM,
            Some(FieldModifier::SymOffset) => FL_SYM_OFFSET,
            Some(FieldModifier::Execname) => FL_EXECNAME,
            Some(FieldModifier::Syscall) => FL_SYSCALL,
            Some(FieldModifier::Stacktrace) => FL_STACKTRACE,
            Some(FieldModifier::Log2) => FL_LOG2,
            Some(FieldModifier::Usecs) => FL_TIMESTAMP_USECS,
            Some(FieldModifier::Buckets(n)) => {
                buckets = n;
                FL_BUCKET
            }
            Some(FieldModifier::Percent) => FL_PERCENT,
            Some(FieldModifier::Graph) => FL_GRAPH,
        };
        let mut field = None;
        match spec.special() {
            Some(SpecialField::CommonTimestamp) => {
                flags |= FL_TIMESTAMP;
                self.hd.enable_timestamps = true;
                if flags & FL_TIMESTAMP_USECS != 0 {
                    self.hd.ts_in_usecs = true;
                }
            }
            Some(SpecialField::CommonStacktrace) => flags |= FL_STACKTRACE,
            Some(SpecialField::CommonCpu) => flags |= FL_CPU,
            Some(SpecialField::CommonComm) if self.hd.comm => flags |= FL_COMM | FL_STRING,
            Some(SpecialField::CommonComm) => {
                return Err(self.error(HistErrorKind::FieldNotFound, spec.name()))
            }
            Some(SpecialField::Hitcount) => flags |= FL_HITCOUNT,
            None => match find_event_field(self.event, spec.name()) {
                Some(f) if f.size != 0 => field = Some(f),
                // "cpu"/"CPU" mean common_cpu (the generic field stays).
                Some(f) if f.storage == FieldStorage::Cpu => {
                    flags |= FL_CPU;
                    field = Some(f);
                }
                // "stacktrace"/"STACKTRACE" mean common_stacktrace.
                Some(f) if f.storage == FieldStorage::Stacktrace => flags |= FL_STACKTRACE,
                // "comm"/"COMM" mean common_comm, as in 6.16 (6.12 has
                // no such field; the generic field stays, for its name).
                Some(f) if f.storage == FieldStorage::Comm && self.hd.comm && self.generic_comm => {
                    flags |= FL_COMM | FL_STRING;
                    field = Some(f);
                }
                _ => return Err(self.error(HistErrorKind::FieldNotFound, spec.name())),
            },
        }
        // 6.16 takes the name's address for a number here, and then
        // reads a string at that number: refused.
        if flags & FL_COMM != 0 && flags & (FL_LOG2 | FL_BUCKET) != 0 {
            return Err(self.error(HistErrorKind::BadFieldModifier, spec.text()));
        }
        if modifier == Some(FieldModifier::Stacktrace)
            && !matches!(field, Some(f) if f.storage == FieldStorage::Stacktrace)
        {
            return Err(self.error(HistErrorKind::BadFieldModifier, spec.text()));
        }
        let id = self.create_hist_field(field, flags)?;
        if let Some(f) = self.hd.nodes.get_mut(usize::from(id)) {
            // C sets buckets on whatever it made; only FL_BUCKET reads it.
            if f.flags & FL_BUCKET != 0 {
                f.param = buckets;
            }
        }
        Ok(id)
    }

    /// `create_hist_field()` (constants and expressions are made by
    /// their parsers).
    fn create_hist_field(
        &mut self,
        field: Option<&'a EventField<'a>>,
        flags: u32,
    ) -> Result<u8, HistError> {
        let mut f = HistField {
            flags,
            field,
            ..HistField::default()
        };
        if flags & FL_HITCOUNT != 0 {
            f.fetch = Fetch::Counter;
            f.size = 8;
            f.ty = TypeName::U64;
        } else if flags & FL_STACKTRACE != 0 {
            f.fetch = match field {
                Some(field) => Fetch::Stack { at: field.offset },
                None => Fetch::Nop,
            };
            f.size = HIST_STACKTRACE_SIZE;
            f.ty = TypeName::UnsignedLongArray;
        } else if flags & (FL_LOG2 | FL_BUCKET) != 0 {
            let op = self.create_hist_field(field, flags & !(FL_LOG2 | FL_BUCKET))?;
            let o = self.node(op);
            f.fetch = if flags & FL_LOG2 != 0 {
                Fetch::Log2
            } else {
                Fetch::Bucket
            };
            f.operands = [op, NONE];
            f.size = o.size;
            f.ty = TypeName::Operand;
        } else if flags & FL_TIMESTAMP != 0 {
            f.fetch = Fetch::Timestamp;
            f.size = 8;
            f.ty = TypeName::U64;
        } else if flags & FL_CPU != 0 {
            f.fetch = Fetch::Cpu;
            f.size = 4;
            f.ty = TypeName::UnsignedInt;
        } else if flags & FL_COMM != 0 {
            // 6.16's is a char[] of MAX_FILTER_STR_VAL bytes: this one
            // fills a char[16] field and keys on 16 bytes.
            f.fetch = Fetch::Comm;
            f.size = TASK_COMM_LEN;
            f.ty = TypeName::Comm;
        } else if let Some(field) = field {
            if is_string_field(field) && field.storage != FieldStorage::PtrString {
                f.flags |= FL_STRING;
                f.size = MAX_FILTER_STR_VAL;
                f.fetch = match field.storage {
                    FieldStorage::StaticString => {
                        f.size = field.size;
                        Fetch::String { at: field.offset }
                    }
                    FieldStorage::DynString => Fetch::DynString { at: field.offset },
                    FieldStorage::RelString => Fetch::RelDynString { at: field.offset },
                    _ => {
                        // A string behind a pointer.
                        self.defer();
                        Fetch::PString
                    }
                };
            } else if field.storage == FieldStorage::Stacktrace {
                f.flags |= FL_STACKTRACE;
                f.size = MAX_FILTER_STR_VAL;
                f.fetch = Fetch::Stack { at: field.offset };
            } else {
                f.size = field.size;
                f.signed = field.signed;
                f.fetch = match field.size {
                    1 | 2 | 4 | 8 => Fetch::Num {
                        at: field.offset,
                        size: field.size as u8,
                        signed: field.signed,
                    },
                    _ => return Err(HistError::silent(ENOMEM)),
                };
            }
        }
        self.push(f)
    }
}
