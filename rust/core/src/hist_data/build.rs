// SPDX-License-Identifier: GPL-2.0

//! The builder of [`HistData`]: `create_hist_data()`'s parsing of the
//! trigger's fields into hist fields, in C's order of work, so that the
//! first error is C's.  Evaluation stays in the parent module.

use super::*;

mod expr;
mod fields;
mod var_refs;

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
}
