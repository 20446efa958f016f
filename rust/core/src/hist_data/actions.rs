// SPDX-License-Identifier: GPL-2.0

//! Handlers and their actions, C's `struct action_data`: what
//! `create_actions()` makes of `onmatch(system.event)`, `onmax($var)` and
//! `onchange($var)` with their actions `trace(synth,...)` (or the
//! `.synth(...)` shorthand), `save(field,...)` and `snapshot()`, and the
//! variables the actions create: field variables (`field_vars[]`), save
//! variables (`save_vars[]`) and tracking variables (`track_var`).
//!
//! Each `trace()` parameter becomes a reference, as in
//! `trace_action_create()`:
//!
//! * `$var`: a variable of this trigger, else one of a trigger on the
//!   `onmatch()` event (or on the event a `system.event.$var` names);
//! * a field of this trigger's event: C makes it a *field variable*, a
//!   map variable after this trigger's own, set on every event, and
//!   references that.
//!
//! The event path resolves the references (a reference to this trigger's
//! own variables after the update).  `onmatch()` then traces; `onmax()`
//! and `onchange()` first compare the tracked variable with the entry's
//! tracking variable ([`Tracking::passes`]) and act only when it passes:
//! they set the save variables, or have the shell's [`ActionSink`] trace
//! or take a snapshot.  A value that is a string or a stack trace is the
//! address of its copy in the owner's entry, as in C.
//!
//! Not supported yet ([`not_supported`]): a parameter naming a field of
//! another event, for which C makes a hidden histogram on that event
//! (`create_field_var_hist()`).

use super::build::Builder;
use super::*;
use crate::hist::grammar::{ActionKind, ActionSpec, HandlerSpec, SYNTH_FIELDS_MAX};
use crate::hist::var_ref::TypeBuf;

/// A field of a synthetic event, C's `struct synth_field`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynthField<'s> {
    /// Its type, e.g. `u64` or `char[16]`.
    pub type_name: &'s str,
    /// Its size in bytes.
    pub size: u32,
    /// Whether it is signed.
    pub signed: bool,
    /// Whether it is a string (`char[N]` or `char[]`).
    pub string: bool,
    /// Whether it is a dynamic string or stack (`char[]`, `long[]`).
    pub dynamic: bool,
    /// Whether it is a stack trace.
    pub stack: bool,
}

/// The kernel's synthetic events, as the shell finds them.
pub trait SynthLookup {
    /// `find_synth_event()`: how many fields the synthetic event `name`
    /// has; `None` if there is no such event.
    fn n_fields(&self, name: &str) -> Option<usize>;

    /// Field `pos` of the synthetic event `name`.
    fn field(&self, name: &str, pos: usize) -> Option<SynthField<'_>>;
}

/// What the event path asks of the shell for the actions.  Neither
/// method may allocate, lock or sleep.
pub trait ActionSink {
    /// `trace_synth()` for the trigger's action `action`: field `i` of its
    /// synthetic event takes `vals[var_ref_idx[i]]`.
    fn trace(&self, action: usize, vals: &[u64], var_ref_idx: &[u32]);

    /// `tracing_snapshot_cond()` for the trigger's `snapshot()` action:
    /// the entry of `key`, whose saved command name is `comm`, has just
    /// tracked `val`.  The shell takes the snapshot if `val` also passes
    /// the snapshot's own tracked value ([`Tracking::passes`]).
    fn snapshot(&self, val: u64, key: &[u8], comm: &[u8; 16]);
}

/// What `onmax()` or `onchange()` tracks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tracking {
    /// `onmax()`: a new maximum.
    Max,
    /// `onchange()`: a new value.
    Change,
}

impl Tracking {
    /// `check_track_val_max()` and `check_track_val_changed()`: whether
    /// `new` replaces the tracked value `old`.
    #[inline]
    pub fn passes(self, old: u64, new: u64) -> bool {
        match self {
            Tracking::Max => new > old,
            Tracking::Change => new != old,
        }
    }

    /// The handler's name, as in `onmax`.
    pub fn handler_name(self) -> &'static str {
        match self {
            Tracking::Max => "onmax",
            Tracking::Change => "onchange",
        }
    }
}

/// An `onmax()` or `onchange()` action's tracking, as the event path
/// uses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Track {
    /// What is tracked.
    pub how: Tracking,
    /// The reference to the tracked variable (C's
    /// `track_data.var_ref->var_ref_idx`).
    pub var_ref: usize,
    /// The tracking variable's map variable.
    pub var_idx: usize,
}

/// An action's tracking as `track_data_create()` made it.
#[derive(Clone, Copy, Debug)]
struct TrackData {
    how: Tracking,
    var_ref: u8,
    /// Among the tracking variables.
    slot: u8,
    /// C's `track_var->var.idx`.
    c_idx: u8,
}

/// One action as `create_actions()` made it.
#[derive(Clone, Copy, Debug)]
pub(super) struct ActionData {
    kind: ActionKind,
    track: Option<TrackData>,
    /// The parameters' references (C's `var_ref_idx[]`).
    var_ref_idx: [u32; SYNTH_FIELDS_MAX],
    n_params: u8,
}

impl ActionData {
    pub(super) const BLANK: Self = ActionData {
        kind: ActionKind::Trace,
        track: None,
        var_ref_idx: [0; SYNTH_FIELDS_MAX],
        n_params: 0,
    };
}

/// The variable an action's parameter names.
enum ParamVar<'t> {
    /// Variable `i` of this trigger (a field variable if `i >= n_vars`).
    Own(usize),
    /// Another trigger's.
    Other(VarTarget<'t>),
    /// `synthetic_<field>` of a hidden histogram on an event.
    Hidden(VarTarget<'t>),
}

impl<'a> HistData<'a> {
    /// `create_actions()`: makes the handlers' actions, after the build
    /// and before the trigger is registered, as C does (not for a
    /// trigger that joins a named histogram, nor for a command that
    /// pauses, continues, clears or removes one).  `options` are those
    /// of the build.  On error the data is left as it was built; a
    /// snapshot the options enabled stays enabled, for the caller to
    /// disable.
    pub fn create_actions(
        &mut self,
        event: &EventDesc<'a>,
        options: BuildOptions<'_>,
    ) -> Result<(), HistError> {
        // A common_comm parameter is this event's (as in 6.16), tried
        // first: hist's way would look for it on the matching event, in
        // a hidden histogram, which fails in hist. If that fails, hist's
        // way, for hist's error and entries.
        let comm_param = self.spec.actions().any(|h| {
            h.and_then(|h| h.action())
                .is_ok_and(|a| a.params().iter().any(|p| p.trim() == "common_comm"))
        });
        if comm_param && !self.comm {
            self.comm = true;
            let quiet = BuildOptions {
                log: None,
                field_var_hist: None,
                enable_snapshot: None,
                ..options
            };
            if self.create_actions_as(event, quiet).is_ok() {
                return Ok(());
            }
            self.comm = false;
        }
        self.create_actions_as(event, options)
    }

    /// [`create_actions`](Self::create_actions), once.
    fn create_actions_as(
        &mut self,
        event: &EventDesc<'a>,
        options: BuildOptions<'_>,
    ) -> Result<(), HistError> {
        let spec = self.spec;
        let (n_nodes, n_refs) = (self.n_nodes, self.refs.len());
        let mut b = Builder::new(self, event, options)?;
        // A generic comm parameter stays hist's: a field of the matching
        // event when that has one (6.16 takes the task's name instead).
        b.generic_comm = false;
        let made = (|| {
            for handler in spec.actions() {
                let handler = handler?;
                match handler.handler() {
                    Handler::OnMatch { system, event } => {
                        b.trace_action_create(&handler, Some((system, event)), None)?
                    }
                    Handler::OnMax { var } => b.track_data_create(&handler, Tracking::Max, var)?,
                    Handler::OnChange { var } => {
                        b.track_data_create(&handler, Tracking::Change, var)?
                    }
                }
            }
            Ok(())
        })();
        if made.is_err() {
            self.n_nodes = n_nodes;
            self.refs.truncate(n_refs);
            self.n_field_vars = 0;
            self.n_save_vars = 0;
            self.n_track_vars = 0;
            self.n_field_var_hists = 0;
            self.n_actions = 0;
        }
        made
    }

    /// The number of actions [`create_actions`](Self::create_actions)
    /// made.
    pub fn n_actions(&self) -> usize {
        self.n_actions
    }

    fn action(&self, i: usize) -> Option<&ActionData> {
        self.actions.get(..self.n_actions)?.get(i)
    }

    /// What action `i` does.
    pub fn action_kind(&self, i: usize) -> Option<ActionKind> {
        self.action(i).map(|a| a.kind)
    }

    /// Action `i`'s tracking, if its handler is `onmax()` or
    /// `onchange()`.
    pub fn action_track(&self, i: usize) -> Option<Track> {
        let t = self.action(i)?.track?;
        Some(Track {
            how: t.how,
            var_ref: usize::from(t.var_ref),
            var_idx: self.n_event_vars() + self.n_save_vars + usize::from(t.slot),
        })
    }

    /// The synthetic event action `i` emits.
    #[cfg(not(MODULE))]
    pub fn action_synth_event(&self, i: usize) -> Option<&'a str> {
        if i >= self.n_actions {
            return None;
        }
        let handler = self.spec.actions().nth(i)?.ok()?;
        handler.action().ok()?.synth_event()
    }

    /// Action `i`'s `var_ref_idx[]`: the reference each field of its
    /// synthetic event takes its value from.
    pub fn action_var_ref_idx(&self, i: usize) -> &[u32] {
        self.action(i)
            .and_then(|a| a.var_ref_idx.get(..usize::from(a.n_params)))
            .unwrap_or(&[])
    }

    /// C's `snapshot_action()`: the first `snapshot()` action, its
    /// tracking and the tracked variable as written (`$var`).
    pub fn snapshot_action(&self) -> Option<(Tracking, &'a str)> {
        let i = (0..self.n_actions).find(|&i| self.action_kind(i) == Some(ActionKind::Snapshot))?;
        let how = self.action(i)?.track?.how;
        match self.spec.actions().nth(i)?.ok()?.handler() {
            Handler::OnMax { var } | Handler::OnChange { var } => Some((how, var)),
            Handler::OnMatch { .. } => None,
        }
    }

    /// `compatible_keys()`: whether `other`'s keys have the types and
    /// sizes of this trigger's, one for one.
    pub fn keys_compatible(&self, other: &HistData<'_>) -> bool {
        let (mine, theirs) = (self.key_ids(), other.key_ids());
        mine.len() == theirs.len()
            && mine.iter().zip(theirs).all(|(&a, &b)| {
                let (f, g) = (self.node(a), other.node(b));
                self.type_name(a) == other.type_name(b) && f.size == g.size && f.signed == g.signed
            })
    }

    /// The text of the trigger `create_field_var_hist()` makes on this
    /// trigger's event for a field variable of another trigger: this
    /// one's keys, and the variable `synthetic_<field>`.
    pub fn write_field_var_hist_cmd(&self, out: &mut dyn Write, field: &str) -> fmt::Result {
        out.write_str("keys=")?;
        for (i, &id) in self.key_ids().iter().enumerate() {
            if i > 0 {
                out.write_char(',')?;
            }
            self.write_expr_field_str(out, id)?;
        }
        write!(out, ":synthetic_{field}={field}")
    }

    /// The number of save variables.
    pub fn n_save_vars(&self) -> usize {
        self.n_save_vars
    }

    /// Save variable `k`: its name and its map variable.
    pub fn save_var(&self, k: usize) -> Option<(&'a str, usize)> {
        let name = self.save_names.get(..self.n_save_vars)?.get(k)?;
        Some((name, self.n_event_vars() + k))
    }

    /// The `var.idx` C gives map variable `i`: C numbers the variables
    /// the actions make in the order it makes them, the field, save and
    /// tracking variables mixed.
    pub(super) fn c_var_idx(&self, i: usize) -> usize {
        let c = |idx: Option<&u8>| idx.map_or(i, |&c| usize::from(c));
        let Some(j) = i.checked_sub(self.n_vars) else {
            return i;
        };
        let Some(k) = j.checked_sub(self.n_field_vars) else {
            return c(self.field_var_c_idx.get(j));
        };
        let Some(t) = k.checked_sub(self.n_save_vars) else {
            return c(self.save_var_c_idx.get(k));
        };
        let track = (0..self.n_actions)
            .filter_map(|a| self.action(a)?.track)
            .find(|d| usize::from(d.slot) == t);
        c(track.as_ref().map(|d| &d.c_idx))
    }

    /// `print_actions_spec()`: the handlers as the trigger info shows
    /// them, after `:nohitcount`.
    pub(super) fn write_actions_info(&self, out: &mut dyn Write) -> fmt::Result {
        for handler in self.spec.actions() {
            let Ok(handler) = handler else { continue };
            let Ok(action) = handler.action() else {
                continue;
            };
            match handler.handler() {
                Handler::OnMatch { system, event } => write!(out, ":onmatch({system}.{event}).")?,
                Handler::OnMax { var } => write!(out, ":onmax({var}).")?,
                Handler::OnChange { var } => write!(out, ":onchange({var}).")?,
            }
            write!(out, "{}(", action.name())?;
            match action.kind() {
                ActionKind::Trace => {
                    let synth = action.params().synth_name();
                    let mut sep = false;
                    for p in synth.into_iter().chain(action.params().iter()) {
                        if sep {
                            out.write_char(',')?;
                        }
                        out.write_str(p)?;
                        sep = true;
                    }
                }
                // C prints the save variables made, none if the actions
                // were not made.
                ActionKind::Save => {
                    let names = self.save_names.get(..self.n_save_vars).unwrap_or(&[]);
                    for (k, name) in names.iter().enumerate() {
                        if k > 0 {
                            out.write_char(',')?;
                        }
                        out.write_str(name)?;
                    }
                }
                ActionKind::Snapshot => {}
            }
            out.write_char(')')?;
        }
        Ok(())
    }

    /// `actions_match()`: the same handlers, actions, parameters and
    /// events.
    pub(super) fn actions_match(&self, other: &HistData<'_>) -> bool {
        let mut mine = self.spec.actions();
        let mut theirs = other.spec.actions();
        loop {
            match (mine.next(), theirs.next()) {
                (None, None) => return true,
                (Some(Ok(a)), Some(Ok(b))) if same_handler(&a, &b) => {}
                _ => return false,
            }
        }
    }

    /// C's `field_var_debug_show()` of field or save variable `j`, map
    /// variable `idx`; `false` where C stops the file (a value with no
    /// event field).
    fn write_field_var_debug(
        &self,
        out: &mut dyn Write,
        vars: &str,
        j: usize,
        (name, idx, id): (&str, usize, u8),
    ) -> Result<bool, fmt::Error> {
        let f = self.node(id);
        write!(out, "\n    hist_data->{vars}[{j}]:\n")?;
        write!(out, "\n      {vars}[{j}].var:\n")?;
        out.write_str("      flags:\n        HIST_FIELD_FL_VAR\n")?;
        writeln!(out, "      var.name: {name}")?;
        let c_idx = self.c_var_idx(idx);
        writeln!(out, "      var.idx (into tracing_map_elt.vars[]): {c_idx}")?;
        write!(out, "\n      {vars}[{j}].val:\n")?;
        let Some(field) = f.field else {
            return Ok(false);
        };
        writeln!(out, "      ftrace_event_field name: {}", field.name)?;
        writeln!(out, "      type: {}", self.type_name(id))?;
        writeln!(out, "      size: {}", f.size)?;
        writeln!(out, "      is_signed: {}", u32::from(f.signed))?;
        Ok(true)
    }

    /// The field variables and actions of `hist_trigger_debug_show()`,
    /// after the variable references; `var_hist_data` as for them.
    pub(super) fn write_actions_debug(
        &self,
        out: &mut dyn Write,
        var_hist_data: HistPtr<'_>,
    ) -> fmt::Result {
        if self.n_field_vars > 0 {
            out.write_str("\n  field variables:\n")?;
        }
        for j in 0..self.n_field_vars {
            let idx = self.n_vars + j;
            let (Some(&id), Some(&name)) = (self.vars.get(idx), self.var_names.get(idx)) else {
                break;
            };
            if !self.write_field_var_debug(out, "field_vars", j, (name, idx, id))? {
                return Ok(());
            }
        }
        let n = self.spec.actions().count();
        if n > 0 {
            out.write_str("\n  action tracking variables (for onmax()/onchange()/onmatch()):\n")?;
        }
        for (i, handler) in self.spec.actions().enumerate() {
            let Ok(handler) = handler else { continue };
            match handler.handler() {
                Handler::OnMatch { system, event } => {
                    write!(
                        out,
                        "\n    hist_data->actions[{i}].match_data.event_system: {system}\n"
                    )?;
                    writeln!(out, "    hist_data->actions[{i}].match_data.event: {event}")?;
                }
                Handler::OnMax { .. } | Handler::OnChange { .. } => {
                    let Some(t) = self.action(i).and_then(|a| a.track) else {
                        continue;
                    };
                    let Some(r) = self.refs.get(usize::from(t.var_ref)) else {
                        continue;
                    };
                    write!(out, "\n    hist_data->actions[{i}].track_data.var_ref:\n")?;
                    self.debug_field(out, r.node, var_hist_data)?;
                    write!(out, "\n    hist_data->actions[{i}].track_data.track_var:\n")?;
                    out.write_str("      flags:\n        HIST_FIELD_FL_VAR\n")?;
                    let name = match t.how {
                        Tracking::Max => "__max",
                        Tracking::Change => "__change",
                    };
                    writeln!(out, "      var.name: {name}")?;
                    writeln!(
                        out,
                        "      var.idx (into tracing_map_elt.vars[]): {}",
                        t.c_idx
                    )?;
                    out.write_str("      type: u64\n      size: 8\n      is_signed: 0\n")?;
                }
            }
        }
        if self.n_save_vars > 0 {
            out.write_str("\n  save action variables (save() params):\n")?;
        }
        for k in 0..self.n_save_vars {
            let (Some(&id), Some((name, idx))) = (self.save_vars.get(k), self.save_var(k)) else {
                break;
            };
            if !self.write_field_var_debug(out, "save_vars", k, (name, idx, id))? {
                return Ok(());
            }
        }
        Ok(())
    }
}

/// Two handlers `actions_match()` takes for the same.
fn same_handler(a: &HandlerSpec<'_>, b: &HandlerSpec<'_>) -> bool {
    let (Ok(x), Ok(y)) = (a.action(), b.action()) else {
        return false;
    };
    fn name<'s>(s: &ActionSpec<'s>) -> &'s str {
        s.params().synth_name().unwrap_or(s.name())
    }
    let same_kind = matches!(
        (a.handler(), b.handler()),
        (Handler::OnMatch { .. }, Handler::OnMatch { .. })
            | (Handler::OnMax { .. }, Handler::OnMax { .. })
            | (Handler::OnChange { .. }, Handler::OnChange { .. })
    );
    same_kind
        && a.handler() == b.handler()
        && x.kind() == y.kind()
        && x.params().len() == y.params().len()
        && x.params().iter().eq(y.params().iter())
        && name(&x) == name(&y)
}

/// `synthetic_<field>`, the variable of a hidden histogram, written into
/// `buf`; empty if it does not fit (C's `-E2BIG`).
fn synthetic_var_name<'b>(buf: &'b mut [u8], field: &str) -> &'b str {
    const PREFIX: &str = "synthetic_";
    let len = PREFIX.len() + field.len();
    let Some(out) = buf.get_mut(..len) else {
        return "";
    };
    let (p, f) = out.split_at_mut(PREFIX.len());
    p.copy_from_slice(PREFIX.as_bytes());
    f.copy_from_slice(field.as_bytes());
    core::str::from_utf8(out).unwrap_or("")
}

/// `parse_atom()` of a field variable's text `name`: a
/// `system.event.field` is the field (of whatever event it names), and
/// the variable, which C names with the text it cut in place, is named
/// `system`.  The field's text and the variable's name.
fn split_atom(name: &str) -> (&str, &str) {
    match name.split_once('.') {
        Some((system, rest)) => match rest.split_once('.') {
            Some((_, field)) => (field, system),
            None => (name, name),
        },
        None => (name, name),
    }
}

/// `check_synth_field()`: whether `var` may fill `field`.
///
/// One deliberate difference: C lets a number of a string field's size
/// fill it (a `u64` for a `char[8]`), and then reads the number as the
/// address of the string, so that any kernel memory can be copied into
/// the trace. rhist refuses a number for a string field.
fn check_synth_field(field: &SynthField<'_>, var: &VarTarget<'_>) -> bool {
    if var.type_name.contains("char[") && field.string && field.dynamic {
        return true;
    }
    if (var.flags & FL_STACKTRACE != 0) != field.stack {
        return false;
    }
    if field.stack {
        return true;
    }
    if field.string && !is_string(var) {
        return false;
    }
    field.type_name == var.type_name
        || (field.size == var.size && (field.string || field.signed == var.signed))
}

/// Whether `var`'s value is the address of a string: a copy it keeps, or
/// a string field's.
fn is_string(var: &VarTarget<'_>) -> bool {
    var.copy || var.type_name.contains("char[") || var.type_name.contains("char *")
}

impl<'h, 'a> Builder<'h, '_, 'a> {
    /// `track_data_create()` and `action_create()` for the `onmax()` or
    /// `onchange()` handler `handler` of `$var`.
    fn track_data_create(
        &mut self,
        handler: &HandlerSpec<'a>,
        how: Tracking,
        var: &'a str,
    ) -> Result<(), HistError> {
        let Some(name) = var.strip_prefix('$') else {
            return Err(self.error(HistErrorKind::OnxNotVar, var));
        };
        // find_target_event_var(): a variable of this trigger.
        let names = self.hd.var_names.get(..self.hd.n_vars).unwrap_or(&[]);
        let Some(i) = names.iter().position(|&n| n == name) else {
            return Err(self.error(HistErrorKind::OnxVarNotFound, name));
        };
        let track_name = match how {
            Tracking::Max => "__max",
            Tracking::Change => "__change",
        };
        let taken =
            names.contains(&track_name) || self.defined_elsewhere.is_some_and(|f| f(track_name));
        let id = self.hd.map_var_ids().get(i).copied().unwrap_or(0);
        let own_type = TypeBuf::new(self.hd.type_name(id));
        let target = self.own_target(i, own_type.as_str());
        let var_ref = self
            .var_ref(Some(i), &target, var, false)?
            .ok_or(HistError::silent(ENOMEM))?;
        // create_var() of `__max` or `__change`: not a variable's name,
        // and room in the map.
        if taken || self.hd.n_map_vars() >= TRACING_MAP_VARS_MAX {
            return Err(HistError::new(HistErrorKind::OnxVarCreateFail, 0));
        }
        let track = TrackData {
            how,
            var_ref: var_ref as u8,
            slot: self.hd.n_track_vars as u8,
            c_idx: self.hd.n_map_vars() as u8,
        };
        self.hd.n_track_vars += 1;
        let action = handler.action()?;
        match action.kind() {
            ActionKind::Trace => self.trace_action_create(handler, None, Some(track)),
            ActionKind::Snapshot => {
                match self.enable_snapshot {
                    Some(enable) => enable().map_err(HistError::silent)?,
                    None => return Err(HistError::silent(errno::ENODEV)),
                }
                self.add_action(ActionData {
                    kind: ActionKind::Snapshot,
                    track: Some(track),
                    ..ActionData::BLANK
                })
            }
            ActionKind::Save => {
                if self.hd.n_save_vars > 0 {
                    return Err(HistError::new(HistErrorKind::TooManySaveActions, 0));
                }
                for param in action.params().iter() {
                    self.create_save_var(param)?;
                }
                self.add_action(ActionData {
                    kind: ActionKind::Save,
                    track: Some(track),
                    ..ActionData::BLANK
                })
            }
        }
    }

    /// Counts `data` as the next action.
    fn add_action(&mut self, data: ActionData) -> Result<(), HistError> {
        let slot = self
            .hd
            .actions
            .get_mut(self.hd.n_actions)
            .ok_or(not_supported())?;
        *slot = data;
        self.hd.n_actions += 1;
        Ok(())
    }

    /// `create_target_field_var()` for a `save()` parameter: a save
    /// variable of the field `name` of this event.
    fn create_save_var(&mut self, name: &'a str) -> Result<(), HistError> {
        let (id, var_name) = self.field_var_node(name).map_err(|e| {
            let fail = HistError::with_errno(
                HistErrorKind::FieldVarCreateFail,
                self.spec().errpos(split_atom(name).1),
                e.errno(),
            );
            let fail = match e.kind() {
                Some(kind) => fail.after(kind, e.pos()),
                None => fail,
            };
            match e.earlier() {
                Some((kind, pos)) => fail.after(kind, pos),
                None => fail,
            }
        })?;
        let k = self.hd.n_save_vars;
        let c_idx = self.hd.n_map_vars() as u8;
        match (
            self.hd.save_vars.get_mut(k),
            self.hd.save_names.get_mut(k),
            self.hd.save_var_c_idx.get_mut(k),
        ) {
            (Some(slot), Some(n), Some(c)) => {
                *slot = id;
                *n = var_name;
                *c = c_idx;
            }
            _ => return Err(self.error(HistErrorKind::VarCreateFindFail, name)),
        }
        self.hd.n_save_vars += 1;
        Ok(())
    }

    /// `trace_action_create()` for `handler`, whose `onmatch()` event is
    /// `matching`; `track` for `onmax().trace()` and `onchange().trace()`.
    fn trace_action_create(
        &mut self,
        handler: &HandlerSpec<'a>,
        matching: Option<(&'a str, &'a str)>,
        track: Option<TrackData>,
    ) -> Result<(), HistError> {
        let action = handler.action()?;
        if action.kind() != ActionKind::Trace {
            return Err(HistError::new(
                HistErrorKind::ActionMismatch,
                self.spec().errpos(action.name()),
            ));
        }
        let synth = action.synth_event().unwrap_or("");
        let synths = self.synths;
        let Some(n_fields) = synths.and_then(|s| s.n_fields(synth)) else {
            return Err(self.error(HistErrorKind::SynthEventNotFound, synth));
        };
        let mut data = ActionData {
            kind: ActionKind::Trace,
            track,
            ..ActionData::BLANK
        };
        let mut field_pos = 0;
        for (i, param) in action.params().iter().enumerate() {
            // strsep() on '.': `name` or `system.event.name`.
            let (qualified, name) = match param.split_once('.') {
                None => (None, param),
                Some((system, rest)) => match rest.split_once('.') {
                    Some((event, name)) => (Some((system, event)), name),
                    None => return Err(HistError::silent(errno::EINVAL)),
                },
            };
            let var = if name.starts_with('$') {
                self.action_find_var(qualified, name, matching)?
            } else {
                self.action_create_field_var(qualified, name, matching)?
            };
            let own_type;
            let (own, target, hidden) = match var {
                ParamVar::Own(i) => {
                    let id = self.hd.map_var_node(i).unwrap_or(0);
                    own_type = TypeBuf::new(self.hd.type_name(id));
                    (Some(i), self.own_target(i, own_type.as_str()), false)
                }
                ParamVar::Other(target) => (None, target, false),
                ParamVar::Hidden(target) => (None, target, true),
            };
            let field = synths.and_then(|s| s.field(synth, field_pos));
            if !field.is_some_and(|f| check_synth_field(&f, &target)) {
                return Err(self.error(HistErrorKind::SynthTypeMismatch, name));
            }
            let full = if qualified.is_some() { param } else { name };
            // C's create_var_ref() takes the system and event written in
            // the parameter, for a hidden histogram's variable too.
            let idx = match hidden {
                true => self.hidden_var_ref(&target, name, qualified)?,
                false => self.var_ref(own, &target, full, qualified.is_some())?,
            };
            let idx = idx.ok_or(HistError::silent(ENOMEM))?;
            if let Some(slot) = data.var_ref_idx.get_mut(i) {
                *slot = idx as u32;
            }
            data.n_params = (i + 1) as u8;
            field_pos += 1;
        }
        if field_pos != n_fields {
            return Err(self.error(HistErrorKind::SynthCountMismatch, synth));
        }
        self.add_action(data)
    }

    /// `trace_action_find_var()`: `$var` among this trigger's variables
    /// (if `qualified` names its event), else on the event `qualified`
    /// names or the `onmatch()` event.
    fn action_find_var(
        &mut self,
        qualified: Option<(&'a str, &'a str)>,
        name: &'a str,
        matching: Option<(&'a str, &'a str)>,
    ) -> Result<ParamVar<'h>, HistError> {
        let var = name.get(1..).unwrap_or("");
        let here = qualified.is_none_or(|q| q == (self.event.system, self.event.name));
        if here {
            let names = self.hd.var_names.get(..self.hd.n_vars).unwrap_or(&[]);
            if let Some(i) = names.iter().position(|&n| n == var) {
                return Ok(ParamVar::Own(i));
            }
        }
        let lookup = self.vars;
        let event = qualified.or(matching);
        match lookup.map(|l| l.find_var(event, var)) {
            Some(Found::One(target)) => Ok(ParamVar::Other(target)),
            _ => Err(self.error(HistErrorKind::ParamNotFound, var)),
        }
    }

    /// `trace_action_create_field_var()`: a field variable of this
    /// trigger for the field `name` of its event (if `qualified` names
    /// it). For a field of another event, a hidden histogram there that
    /// saves it (the caller's [`BuildOptions::field_var_hist`]).
    fn action_create_field_var(
        &mut self,
        qualified: Option<(&'a str, &'a str)>,
        name: &'a str,
        matching: Option<(&'a str, &'a str)>,
    ) -> Result<ParamVar<'h>, HistError> {
        let here = qualified.is_none_or(|q| q == (self.event.system, self.event.name));
        let mut logged = None;
        if here {
            match self.create_field_var(name) {
                Ok(i) => return Ok(ParamVar::Own(i)),
                Err(e) => logged = Some(e),
            }
        }
        // create_field_var_hist() on the other event; C logged the
        // field's errors, which stay in the log whatever happens next.
        let Some((system, event)) = qualified.or(matching) else {
            return Err(logged.unwrap_or(HistError::silent(errno::EINVAL)));
        };
        if let (Some(l), Some(log)) = (logged, self.log) {
            for (kind, pos) in l.logged_before().chain(l.kind().map(|k| (k, l.pos()))) {
                log(kind, pos);
            }
        }
        let pos = self.spec().errpos(name);
        if self.hd.n_field_var_hists >= SYNTH_FIELDS_MAX {
            return Err(HistError::new(HistErrorKind::TooManyFieldVars, pos));
        }
        if !self.event_exists.is_some_and(|f| f(system, event)) {
            return Err(HistError::new(HistErrorKind::EventFileNotFound, pos));
        }
        let Some(create) = self.field_var_hist else {
            return Err(not_supported());
        };
        if create(&*self.hd, system, event, name)? {
            self.hd.n_field_var_hists += 1;
        }
        // find_synthetic_field_var().
        let mut buf = [0u8; MAX_FILTER_STR_VAL as usize];
        let var = synthetic_var_name(&mut buf, name);
        let found = self.vars.map(|l| l.find_var(Some((system, event)), var));
        match found {
            Some(Found::One(target)) if !var.is_empty() => Ok(ParamVar::Hidden(target)),
            _ => Err(HistError::new(HistErrorKind::SynthVarNotFound, pos)),
        }
    }

    /// `create_field_var()`: parses `name` as a field of this event
    /// (`parse_atom()`) and makes a field variable of it; its index among
    /// the map variables.
    fn create_field_var(&mut self, name: &'a str) -> Result<usize, HistError> {
        let (id, name) = self.field_var_node(name)?;
        let i = self.hd.n_event_vars();
        let c_idx = self.hd.n_map_vars() as u8;
        let j = self.hd.n_field_vars;
        match (
            self.hd.vars.get_mut(i),
            self.hd.var_names.get_mut(i),
            self.hd.field_var_c_idx.get_mut(j),
        ) {
            (Some(slot), Some(n), Some(c)) => {
                *slot = id;
                *n = name;
                *c = c_idx;
            }
            _ => return Err(self.error(HistErrorKind::VarCreateFindFail, name)),
        }
        self.hd.n_field_vars += 1;
        Ok(i)
    }

    /// The checks and parsing of `create_field_var()` and `create_var()`
    /// for the field `name`: the value's hist field and the variable's
    /// name ([`split_atom`]).
    fn field_var_node(&mut self, name: &'a str) -> Result<(u8, &'a str), HistError> {
        if self.hd.n_field_vars >= SYNTH_FIELDS_MAX {
            return Err(self.error(HistErrorKind::TooManyFieldVars, name));
        }
        // C reports the errors after parse_atom() at the text it cut.
        let (field, name) = split_atom(name);
        let spec = self.spec().parse_field(field, FieldContext::Var);
        let id = match self.parse_field(spec, FieldContext::Var) {
            Ok(id) => id,
            Err(e) => {
                let fail = HistError::with_errno(
                    HistErrorKind::FieldVarParseFail,
                    self.spec().errpos(name),
                    e.errno(),
                );
                return Err(match e.kind() {
                    Some(kind) => fail.after(kind, e.pos()),
                    None => fail,
                });
            }
        };
        // create_var(): not a variable's name, here or on the event's
        // other triggers, and room in the map.
        let names = self.hd.var_names.get(..self.hd.n_vars).unwrap_or(&[]);
        let elsewhere = self.defined_elsewhere.is_some_and(|f| f(name));
        let taken = !self.remove && (names.contains(&name) || elsewhere);
        if taken || self.hd.n_map_vars() >= TRACING_MAP_VARS_MAX {
            return Err(self.error(HistErrorKind::VarCreateFindFail, name));
        }
        Ok((id, name))
    }

    /// Variable `i` of this trigger, of type `type_name`, as a parameter
    /// sees it: a field variable has its value's type and size, and is
    /// unsigned (C's `create_var()` does not copy `is_signed`).
    fn own_target<'t>(&self, i: usize, type_name: &'t str) -> VarTarget<'t>
    where
        'a: 't,
    {
        let id = self.hd.map_var_node(i).unwrap_or(0);
        let f = self.node(id);
        let field_var = i >= self.hd.n_vars;
        VarTarget {
            hist: 0,
            var_idx: i,
            size: f.size,
            signed: f.signed && !field_var,
            type_name,
            flags: if field_var {
                FL_VAR | f.flags & FL_STACKTRACE
            } else {
                f.flags
            },
            constant: f.constant(),
            copy: self.hd.var_copy(i).is_some(),
            system: self.event.system,
            event: self.event.name,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::super::event::{EventField, FieldStorage, COMMON_FIELDS};
    use super::super::super::grammar::parse_trigger;
    use super::*;
    use std::format;
    use std::string::String;
    use std::vec::Vec;

    static COMMON: [EventField<'static>; 4] = COMMON_FIELDS;

    static WAKING: [EventField<'static>; 3] = [
        EventField::new("comm", "char[16]", 8, 16, false, FieldStorage::StaticString),
        EventField::new("pid", "pid_t", 24, 4, true, FieldStorage::Other),
        EventField::new("prio", "int", 28, 4, true, FieldStorage::Other),
    ];

    static SWITCH: [EventField<'static>; 4] = [
        EventField::new("prev_pid", "pid_t", 8, 4, true, FieldStorage::Other),
        EventField::new(
            "next_comm",
            "char[16]",
            12,
            16,
            false,
            FieldStorage::StaticString,
        ),
        EventField::new("next_pid", "pid_t", 28, 4, true, FieldStorage::Other),
        EventField::new("next_prio", "int", 32, 4, true, FieldStorage::Other),
    ];

    fn waking() -> EventDesc<'static> {
        EventDesc {
            system: "sched",
            name: "sched_waking",
            fields: &WAKING,
            common_fields: &COMMON,
        }
    }

    fn switch() -> EventDesc<'static> {
        EventDesc {
            system: "sched",
            name: "sched_switch",
            fields: &SWITCH,
            common_fields: &COMMON,
        }
    }

    /// The sched_waking trigger of the examples, identity 0x100.
    struct Waking(HistData<'static>);

    impl VarLookup for Waking {
        fn find_var(&self, event: Option<(&str, &str)>, name: &str) -> Found<'_> {
            if event.is_some_and(|e| e != ("sched", "sched_waking")) {
                return Found::None;
            }
            self.0
                .var_target(name, 0x100, "sched", "sched_waking")
                .map_or(Found::None, Found::One)
        }
    }

    /// synthetic_events: `wakeup_latency u64 lat; pid_t pid; char
    /// comm[16]`, `prio_lat int prio; u64 lat` and `dyn char name[]`.
    struct Synths;

    const fn num(type_name: &'static str, size: u32, signed: bool) -> SynthField<'static> {
        SynthField {
            type_name,
            size,
            signed,
            string: false,
            dynamic: false,
            stack: false,
        }
    }

    const WAKEUP_LATENCY: [SynthField<'static>; 3] = [
        num("u64", 8, false),
        num("pid_t", 4, true),
        SynthField {
            type_name: "char[16]",
            size: 16,
            signed: false,
            string: true,
            dynamic: false,
            stack: false,
        },
    ];
    const PRIO_LAT: [SynthField<'static>; 2] = [num("int", 4, true), num("u64", 8, false)];
    const DYN: [SynthField<'static>; 1] = [SynthField {
        type_name: "char[]",
        size: 0,
        signed: false,
        string: true,
        dynamic: true,
        stack: false,
    }];

    impl Synths {
        fn fields(name: &str) -> Option<&'static [SynthField<'static>]> {
            match name {
                "wakeup_latency" => Some(&WAKEUP_LATENCY),
                "prio_lat" => Some(&PRIO_LAT),
                "dyn" => Some(&DYN),
                _ => None,
            }
        }
    }

    impl SynthLookup for Synths {
        fn n_fields(&self, name: &str) -> Option<usize> {
            Synths::fields(name).map(|f| f.len())
        }
        fn field(&self, name: &str, pos: usize) -> Option<SynthField<'_>> {
            Synths::fields(name)?.get(pos).copied()
        }
    }

    fn waking_hist() -> Waking {
        let spec = parse_trigger("keys=pid:ts0=common_timestamp.usecs,wcomm=comm").unwrap();
        Waking(HistData::build(&spec, &waking()).unwrap())
    }

    /// Builds `text` on sched_switch and creates its actions.
    fn create(text: &'static str) -> Result<HistData<'static>, HistError> {
        let spec = parse_trigger(text).unwrap();
        let event = switch();
        let w = waking_hist();
        let exists =
            |s: &str, e: &str| s == "sched" && (e == "sched_waking" || e == "sched_switch");
        let options = BuildOptions {
            vars: Some(&w),
            synths: Some(&Synths),
            event_exists: Some(&exists),
            ..Default::default()
        };
        let mut hd = HistData::empty(&spec);
        HistData::build_into_with(&mut hd, &spec, &event, options)?;
        hd.create_actions(&event, options)?;
        Ok(hd)
    }

    fn at(text: &str, s: &str) -> usize {
        "hist:".len() + text.find(s).unwrap()
    }

    const LATENCY: &str = "keys=next_pid:wakeup_lat=common_timestamp.usecs-$ts0:\
        onmatch(sched.sched_waking).wakeup_latency($wakeup_lat,next_pid,next_comm)";

    /// histogram.rst's wakeup latency: the parameters are a reference
    /// made by the expression, one to this trigger's variable and two
    /// field variables.
    #[test]
    fn wakeup_latency_pipeline() {
        let hd = create(LATENCY).unwrap();
        let mut info = String::new();
        hd.write_info(&mut info, "hist:").unwrap();
        assert_eq!(
            info,
            "hist:keys=next_pid:vals=hitcount:wakeup_lat=common_timestamp.usecs-$ts0:\
             sort=hitcount:size=2048:clock=global:\
             onmatch(sched.sched_waking).wakeup_latency($wakeup_lat,next_pid,next_comm)"
        );
        assert_eq!(hd.n_actions(), 1);
        assert_eq!(hd.action_synth_event(0), Some("wakeup_latency"));
        assert_eq!(hd.action_var_ref_idx(0), &[1, 2, 3]);
        assert_eq!((hd.n_vars(), hd.n_map_vars()), (1, 3));
        let refs: Vec<RefInfo> = (0..hd.n_var_refs()).filter_map(|i| hd.var_ref(i)).collect();
        let shape: Vec<(bool, usize, bool)> =
            refs.iter().map(|r| (r.own, r.var_idx, r.copy)).collect();
        assert_eq!(
            shape,
            [
                (false, 0, false),
                (true, 0, false),
                (true, 1, false),
                (true, 2, true)
            ]
        );
        assert_eq!(hd.ref_hists(), &[0x100]);
        // next_comm is copied into the entry.
        assert_eq!(hd.n_var_copies(), 1);

        // The `.trace()` form prints as written.
        let t = "keys=next_pid:lat=common_timestamp.usecs-$ts0:\
                 onmatch(sched.sched_waking).trace(wakeup_latency, $lat ,next_pid,next_comm)";
        let hd = create(t).unwrap();
        let mut info = String::new();
        hd.write_info(&mut info, "hist:").unwrap();
        assert!(info.ends_with(
            ":onmatch(sched.sched_waking).trace(wakeup_latency,$lat,next_pid,next_comm)"
        ));
    }

    /// hist_debug's variable references, field variables and actions.
    #[test]
    fn debug_shows_field_variables_and_actions() {
        let hd = create(LATENCY).unwrap();
        let mut s = String::new();
        hd.write_debug(&mut s, &"HD").unwrap();
        let tail = &s[s.find("  variable reference fields:").unwrap()..];
        let own_ref =
            "\n    hist_data->var_refs[2]:\n      flags:\n        HIST_FIELD_FL_VAR_REF\n      \
                       name: next_pid\n      var.idx (into tracing_map_elt.vars[]): 1\n      \
                       var.hist_data: HD\n      var_ref_idx (into hist_data->var_refs[]): 2\n      \
                       type: pid_t\n      size: 4\n      is_signed: 0\n";
        assert!(tail.contains(own_ref), "{tail}");
        assert!(tail.contains("var.hist_data: 0x100\n"), "{tail}");
        let field_vars = "\n  field variables:\n\n    hist_data->field_vars[0]:\n\n      \
            field_vars[0].var:\n      flags:\n        HIST_FIELD_FL_VAR\n      var.name: next_pid\n      \
            var.idx (into tracing_map_elt.vars[]): 1\n\n      field_vars[0].val:\n      \
            ftrace_event_field name: next_pid\n      type: pid_t\n      size: 4\n      is_signed: 1\n";
        assert!(tail.contains(field_vars), "{tail}");
        assert!(tail.ends_with(
            "\n  action tracking variables (for onmax()/onchange()/onmatch()):\n\n    \
             hist_data->actions[0].match_data.event_system: sched\n    \
             hist_data->actions[0].match_data.event: sched_waking\n"
        ));
    }

    /// A number never fills a string field, though C lets one of the
    /// string's size do it (and reads it as an address); a string and a
    /// stack trace fill what they filled.
    #[test]
    fn a_number_is_no_string() {
        let var = |type_name, size, copy, flags| VarTarget {
            hist: 0,
            var_idx: 0,
            size,
            signed: false,
            type_name,
            flags,
            constant: 0,
            copy,
            system: "s",
            event: "e",
        };
        let field = |type_name, size, string, dynamic, stack| SynthField {
            type_name,
            size,
            signed: false,
            string,
            dynamic,
            stack,
        };
        let char8 = field("char[8]", 8, true, false, false);
        assert!(!check_synth_field(&char8, &var("u64", 8, false, 0)));
        assert!(!check_synth_field(
            &char8,
            &var("unsigned long", 8, false, 0)
        ));
        assert!(check_synth_field(&char8, &var("char[8]", 8, true, 0)));
        assert!(check_synth_field(&char8, &var("char[8]", 8, false, 0)));
        let char16 = field("char[16]", 16, true, false, false);
        assert!(check_synth_field(&char16, &var("char[16]", 16, true, 0)));
        let dynamic = field("char[]", 0, true, true, false);
        assert!(check_synth_field(&dynamic, &var("char[16]", 16, true, 0)));
        assert!(check_synth_field(
            &dynamic,
            &var("__data_loc char[]", 4, true, 0)
        ));
        assert!(!check_synth_field(&dynamic, &var("u64", 8, false, 0)));
        let u64_field = field("u64", 8, false, false, false);
        assert!(check_synth_field(&u64_field, &var("u64", 8, false, 0)));
        let stack = field("unsigned long[]", 0, false, true, true);
        assert!(check_synth_field(
            &stack,
            &var("unsigned long[]", 8, true, FL_STACKTRACE)
        ));
    }

    /// A `common_comm` variable (rhist's extension, 6.16's) is a
    /// `char[16]` copy: it fills a `char[16]` field (6.16's `char[]` of
    /// 256 bytes does not) and a dynamic string field.
    #[test]
    fn common_comm_variables_fill_string_fields() {
        let text = "keys=pid:ts0=common_timestamp.usecs,waker=common_comm";
        let w = Waking(HistData::build(&parse_trigger(text).unwrap(), &waking()).unwrap());
        let target = w.0.var_target("waker", 0x100, "sched", "sched_waking");
        let target = target.unwrap();
        assert_eq!(
            (target.type_name, target.size, target.copy),
            ("char[16]", 16, true)
        );
        let create = |text: &'static str| {
            let spec = parse_trigger(text).unwrap();
            let event = switch();
            let exists = |s: &str, e: &str| s == "sched" && e == "sched_waking";
            let options = BuildOptions {
                vars: Some(&w),
                synths: Some(&Synths),
                event_exists: Some(&exists),
                ..Default::default()
            };
            let mut hd = HistData::empty(&spec);
            HistData::build_into_with(&mut hd, &spec, &event, options)?;
            hd.create_actions(&event, options)?;
            Ok::<_, HistError>(hd)
        };
        let hd = create("keys=next_pid:w=$waker:onmatch(sched.sched_waking).dyn($w)").unwrap();
        assert_eq!(hd.n_actions(), 1);
        // A field variable of this event's common_comm.
        create("keys=next_pid:onmatch(sched.sched_waking).dyn(common_comm)").unwrap();
        // A generic comm parameter stays hist's: the matching event's
        // comm, through a hidden histogram (none here), not the task's
        // name, which 6.16 takes.
        for t in [
            "keys=next_pid:onmatch(sched.sched_waking).dyn(comm)",
            "keys=common_comm:onmatch(sched.sched_waking).dyn(comm)",
        ] {
            let e = create(t).map(|_| ()).unwrap_err();
            assert_eq!(e, not_supported(), "{t}");
        }
        let t = "keys=next_pid:w=$waker:lat=common_timestamp.usecs-$ts0:\
                 onmatch(sched.sched_waking).wakeup_latency($lat,next_pid,$w)";
        create(t).unwrap();
    }

    /// The errors of create_actions(), with C's carets.
    #[test]
    fn action_errors() {
        let cases: [(&str, Result<HistErrorKind, HistError>, &str); 7] = [
            (
                "keys=next_pid:onmatch(sched.sched_waking).nope($ts0)",
                Ok(HistErrorKind::SynthEventNotFound),
                "nope",
            ),
            (
                "keys=next_pid:onmatch(sched.sched_waking).trace(nope,$ts0)",
                Ok(HistErrorKind::SynthEventNotFound),
                "nope",
            ),
            (
                "keys=next_pid:onmatch(sched.sched_waking).prio_lat($xyz,$ts0)",
                Ok(HistErrorKind::ParamNotFound),
                "xyz",
            ),
            // next_prio is an int, which prio is, but next_pid a pid_t, and
            // a field variable is unsigned.
            (
                "keys=next_pid:onmatch(sched.sched_waking).prio_lat(next_pid,$ts0)",
                Ok(HistErrorKind::SynthTypeMismatch),
                "next_pid",
            ),
            (
                "keys=next_pid:onmatch(sched.sched_waking).prio_lat(next_prio)",
                Ok(HistErrorKind::SynthCountMismatch),
                "prio_lat",
            ),
            (
                "keys=next_pid:onmatch(sched.sched_waking).prio_lat(next_prio,$ts0,$ts0)",
                Ok(HistErrorKind::SynthTypeMismatch),
                "$ts0,$ts0)",
            ),
            // `a.b` is not `system.event.field`: a silent -EINVAL.
            (
                "keys=next_pid:onmatch(sched.sched_waking).prio_lat(next_prio.hex,$ts0)",
                Err(HistError::silent(errno::EINVAL)),
                "",
            ),
        ];
        for (text, want, at_str) in cases {
            let want = want.map_or_else(|e| e, |k| HistError::new(k, at(text, at_str)));
            assert_eq!(create(text).err(), Some(want), "{text}");
        }
        // The only $ts0 of the text is the first: C's errpos() finds that.
        let t = "keys=next_pid:onmatch(sched.sched_waking).prio_lat(next_prio,$ts0,$ts0)";
        assert_eq!(create(t).unwrap_err().pos(), at(t, "$ts0"));
        // A string field fills a dynamic string field.
        assert!(create("keys=next_pid:onmatch(sched.sched_waking).dyn(next_comm)").is_ok());
        // A field of neither event: C tries a hidden histogram on the
        // matching event, which these options cannot make.
        assert_eq!(
            create("keys=next_pid:onmatch(sched.sched_waking).prio_lat(nope,$ts0)").err(),
            Some(not_supported())
        );
        // A field of an event that does not exist: C tries no field
        // variable here (the event is not this one), one entry.
        let t = "keys=next_pid:onmatch(sched.sched_waking).prio_lat(sched.nope.x,$ts0)";
        let e = create(t).unwrap_err();
        assert_eq!(e.kind(), Some(HistErrorKind::EventFileNotFound));
        // errpos() finds the first `x` of the text, in next_pid.
        assert_eq!(e.pos(), at(t, "x"));
        assert_eq!(e.logged_before().count(), 0);
        // A field variable may not take a variable's name: C logs
        // VAR_CREATE_FIND_FAIL, then goes to the matching event.
        let t =
            "keys=next_pid:next_prio=next_pid:onmatch(sched.sched_waking).prio_lat(next_prio,$ts0)";
        assert_eq!(create(t).err(), Some(not_supported()));
    }

    /// onmax() and onchange(): the errors of track_data_create() and of
    /// the save() action, with C's carets and earlier entries.
    #[test]
    fn handler_errors() {
        let e = |t: &'static str| create(t).unwrap_err();
        let t = "keys=next_pid:x=next_prio:onmax(x).save(next_pid)";
        // errpos() finds the first `x` of the text, in next_pid.
        assert_eq!(e(t), HistError::new(HistErrorKind::OnxNotVar, at(t, "x")));
        let t = "keys=next_pid:x=next_prio:onchange($nope).save(next_pid)";
        assert_eq!(
            e(t),
            HistError::new(HistErrorKind::OnxVarNotFound, at(t, "nope"))
        );
        // A variable of another trigger is not one of this trigger's.
        let t = "keys=next_pid:x=next_prio:onmax($ts0).save(next_pid)";
        assert_eq!(e(t).kind(), Some(HistErrorKind::OnxVarNotFound));
        // A user variable takes the tracking variable's name.
        let t = "keys=next_pid:__max=next_prio:onmax($__max).save(next_pid)";
        assert_eq!(e(t), HistError::new(HistErrorKind::OnxVarCreateFail, 0));
        // save() of no field: three entries.
        let t = "keys=next_pid:x=next_prio:onmax($x).save(nope)";
        let err = e(t);
        assert_eq!(err.kind(), Some(HistErrorKind::FieldVarCreateFail));
        let logged: Vec<_> = err.logged_before().collect();
        assert_eq!(
            logged,
            [
                (HistErrorKind::FieldNotFound, at(t, "nope")),
                (HistErrorKind::FieldVarParseFail, at(t, "nope"))
            ]
        );
        // onmax().trace(): the synthetic event's checks, no onmatch()
        // event to look in.
        let t = "keys=next_pid:x=next_prio:onmax($x).prio_lat(next_prio)";
        assert_eq!(e(t).kind(), Some(HistErrorKind::SynthCountMismatch));
        // No snapshot buffer.
        let spec = parse_trigger("keys=next_pid:x=next_prio:onmax($x).snapshot()").unwrap();
        let mut hd = HistData::empty(&spec);
        HistData::build_into(&mut hd, &spec, &switch()).unwrap();
        let options = BuildOptions::default();
        let err = hd.create_actions(&switch(), options).unwrap_err();
        assert_eq!(err, HistError::silent(errno::ENODEV));
        let busy = || Err(16);
        let options = BuildOptions {
            enable_snapshot: Some(&busy),
            ..Default::default()
        };
        assert_eq!(
            hd.create_actions(&switch(), options).unwrap_err(),
            HistError::silent(16)
        );
        assert_eq!(
            (hd.n_actions(), hd.n_map_vars(), hd.n_var_refs()),
            (0, 1, 0)
        );
    }

    /// onmax().save() and onchange().trace(): the map variables C makes,
    /// numbered in its order, the info line and hist_debug's sections.
    #[test]
    fn handlers_make_track_and_save_variables() {
        let t = "keys=next_pid:lat=common_timestamp.usecs-$ts0:\
                 onmax($lat).save(next_comm,prev_pid):\
                 onchange($lat).prio_lat(next_prio,$lat)";
        let hd = create(t).unwrap();
        let mut info = String::new();
        hd.write_info(&mut info, "hist:").unwrap();
        assert!(info.ends_with(
            ":clock=global:onmax($lat).save(next_comm,prev_pid):\
             onchange($lat).prio_lat(next_prio,$lat)"
        ));
        // lat; C's __max (1), the save variables (2, 3), __change (4),
        // the field variable next_prio (5).  Here: lat, next_prio, the
        // save variables, the tracking variables.
        assert_eq!((hd.n_vars(), hd.n_event_vars(), hd.n_map_vars()), (1, 2, 6));
        let c: Vec<usize> = (0..6).map(|i| hd.c_var_idx(i)).collect();
        assert_eq!(c, [0, 5, 2, 3, 1, 4]);
        assert_eq!(hd.save_var(1), Some(("prev_pid", 3)));
        assert_eq!(
            hd.action_track(0),
            Some(Track {
                how: Tracking::Max,
                var_ref: 1,
                var_idx: 4
            })
        );
        assert_eq!(
            hd.action_track(1).map(|t| (t.how, t.var_idx)),
            Some((Tracking::Change, 5))
        );
        assert_eq!(hd.action_kind(0), Some(ActionKind::Save));
        // $lat once: the tracked variable's reference serves the trace.
        assert_eq!(hd.action_var_ref_idx(1), &[2, 1]);
        // Only the variables every event sets keep copies there.
        assert_eq!((hd.n_var_copies(), hd.n_event_var_copies()), (1, 0));

        let mut s = String::new();
        hd.write_debug(&mut s, &"HD").unwrap();
        let tail = &s[s.find("\n  action tracking variables").unwrap()..];
        let want = "\n  action tracking variables (for onmax()/onchange()/onmatch()):\n\
            \n    hist_data->actions[0].track_data.var_ref:\n      flags:\n        \
            HIST_FIELD_FL_VAR_REF\n      name: lat\n      \
            var.idx (into tracing_map_elt.vars[]): 0\n      var.hist_data: HD\n      \
            var_ref_idx (into hist_data->var_refs[]): 1\n      type: u64\n      size: 8\n      \
            is_signed: 0\n\
            \n    hist_data->actions[0].track_data.track_var:\n      flags:\n        \
            HIST_FIELD_FL_VAR\n      var.name: __max\n      \
            var.idx (into tracing_map_elt.vars[]): 1\n      type: u64\n      size: 8\n      \
            is_signed: 0\n";
        assert!(tail.starts_with(want), "{tail}");
        assert!(
            tail.contains("var.name: __change\n      var.idx (into tracing_map_elt.vars[]): 4\n")
        );
        let save = "\n  save action variables (save() params):\n\
            \n    hist_data->save_vars[0]:\n\n      save_vars[0].var:\n      flags:\n        \
            HIST_FIELD_FL_VAR\n      var.name: next_comm\n      \
            var.idx (into tracing_map_elt.vars[]): 2\n\n      save_vars[0].val:\n      \
            ftrace_event_field name: next_comm\n      type: char[16]\n      size: 16\n      \
            is_signed: 0\n";
        assert!(tail.contains(save), "{tail}");
        assert!(tail.ends_with("var.idx (into tracing_map_elt.vars[]): 3\n\n      save_vars[1].val:\n      \
            ftrace_event_field name: prev_pid\n      type: pid_t\n      size: 4\n      is_signed: 1\n"));
        // The field variable's block and the reference to it give C's
        // index.
        assert!(s.contains("var.name: next_prio\n      var.idx (into tracing_map_elt.vars[]): 5\n"));
    }

    /// A field of the onmatch() event: the shell's hidden histogram
    /// (C's create_field_var_hist()) has `synthetic_<field>`, which the
    /// parameter references; its errors come after the field's own.
    #[test]
    fn fields_of_the_matching_event_use_a_hidden_histogram() {
        let spec =
            parse_trigger("keys=pid:ts0=common_timestamp.usecs,wcomm=comm,synthetic_prio=prio")
                .unwrap();
        let waking = Waking(HistData::build(&spec, &waking()).unwrap());
        let t = "keys=next_pid:l=common_timestamp.usecs-$ts0:\
                 onmatch(sched.sched_waking).prio_lat(sched.sched_waking.prio,$l)";
        let spec = parse_trigger(t).unwrap();
        let exists = |_: &str, _: &str| true;
        let asked = core::cell::RefCell::new(Vec::new());
        let hidden = |target: &HistData<'_>, system: &str, event: &str, field: &str| {
            assert!(target.keys_compatible(&waking.0));
            let mut cmd = String::new();
            waking.0.write_field_var_hist_cmd(&mut cmd, field).unwrap();
            asked.borrow_mut().push(format!("{system}.{event}: {cmd}"));
            Ok(true)
        };
        let options = BuildOptions {
            vars: Some(&waking),
            synths: Some(&Synths),
            event_exists: Some(&exists),
            field_var_hist: Some(&hidden),
            ..Default::default()
        };
        let mut hd = HistData::empty(&spec);
        HistData::build_into_with(&mut hd, &spec, &switch(), options).unwrap();
        hd.create_actions(&switch(), options).unwrap();
        assert_eq!(
            *asked.borrow(),
            ["sched.sched_waking: keys=pid:synthetic_prio=prio"]
        );
        // The reference names the hidden histogram's variable, qualified.
        assert_eq!(hd.action_var_ref_idx(0), &[1, 2]);
        let r = hd.var_ref(1).unwrap();
        assert!(!r.own);
        assert_eq!(r.var_idx, 2);
        assert_eq!((hd.n_field_vars, hd.n_field_var_hists), (0, 1));
        // hist_debug names the system and event written in the parameter.
        let mut s = String::new();
        hd.write_debug(&mut s, &"HD").unwrap();
        assert!(
            s.contains("name: synthetic_prio\n")
                && s.contains("      system: sched\n      event_name: sched_waking\n"),
            "{s}"
        );

        // No compatible histogram: the shell's error, after the field's
        // own (an unqualified field is tried on this event first).
        let t = "keys=next_pid:l=common_timestamp.usecs-$ts0:\
                 onmatch(sched.sched_waking).prio_lat(prio,$l)";
        let spec = parse_trigger(t).unwrap();
        let none = |_: &HistData<'_>, _: &str, _: &str, field: &str| {
            Err(HistError::new(HistErrorKind::HistNotFound, at(t, field)))
        };
        let logged = core::cell::RefCell::new(Vec::new());
        let log = |kind, pos| logged.borrow_mut().push((kind, pos));
        let options = BuildOptions {
            field_var_hist: Some(&none),
            log: Some(&log),
            ..options
        };
        let mut hd = HistData::empty(&spec);
        HistData::build_into_with(&mut hd, &spec, &switch(), options).unwrap();
        let e = hd.create_actions(&switch(), options).unwrap_err();
        assert_eq!(e.kind(), Some(HistErrorKind::HistNotFound));
        assert_eq!(e.logged_before().count(), 0);
        let prio = at(t, "prio");
        assert_eq!(
            *logged.borrow(),
            [
                (HistErrorKind::FieldNotFound, prio),
                (HistErrorKind::FieldVarParseFail, prio)
            ]
        );

        // Found there: the command succeeds, and the entries stay.
        logged.borrow_mut().clear();
        let options = BuildOptions {
            field_var_hist: Some(&hidden),
            ..options
        };
        let mut hd = HistData::empty(&spec);
        HistData::build_into_with(&mut hd, &spec, &switch(), options).unwrap();
        hd.create_actions(&switch(), options).unwrap();
        assert_eq!(logged.borrow().len(), 2);
        // Unqualified, as histogram-design.rst's `onmatch(sched.sched_waking)
        // .wakeup_latency(..,prio)`: no system or event, as in hist_debug
        // (the onmatch() event is not the parameter's).
        let mut s = String::new();
        hd.write_debug(&mut s, &"HD").unwrap();
        assert!(s.contains("name: synthetic_prio\n"), "{s}");
        assert!(
            !s.contains("\n      system:") && !s.contains("\n      event_name:"),
            "{s}"
        );
    }

    /// find_match_var(): an unqualified `$var` is looked for on the
    /// onmatch() events first; two handlers naming its event make it not
    /// unique (C's three entries).
    #[test]
    fn onmatch_events_are_searched_first() {
        let one = "keys=next_pid:l=common_timestamp.usecs-$ts0:\
                   onmatch(sched.sched_waking).prio_lat(next_prio,$l)";
        assert!(create(one).is_ok());
        let two = "keys=next_pid:l=common_timestamp.usecs-$ts0:\
                   onmatch(sched.sched_waking).prio_lat(next_prio,$l):\
                   onmatch(sched.sched_waking).prio_lat(next_prio,$l)";
        let e = create(two).unwrap_err();
        assert_eq!(e.kind(), Some(HistErrorKind::FieldNotFound));
        let logged: Vec<_> = e.logged_before().collect();
        let pos = at(two, "ts0");
        assert_eq!(
            logged,
            [
                (HistErrorKind::VarNotUnique, pos),
                (HistErrorKind::VarNotFound, pos)
            ]
        );
    }

    /// A failed create_actions() leaves the data as it was built.
    #[test]
    fn failure_leaves_the_build() {
        let spec = parse_trigger(
            "keys=next_pid:onmatch(sched.sched_waking).wakeup_latency($ts0,next_pid,nope)",
        )
        .unwrap();
        let event = switch();
        let w = waking_hist();
        let exists = |_: &str, _: &str| true;
        let options = BuildOptions {
            vars: Some(&w),
            synths: Some(&Synths),
            event_exists: Some(&exists),
            ..Default::default()
        };
        let mut hd = HistData::empty(&spec);
        HistData::build_into_with(&mut hd, &spec, &event, options).unwrap();
        let before = (hd.n_nodes, hd.n_var_refs(), hd.n_map_vars());
        assert!(hd.create_actions(&event, options).is_err());
        assert_eq!(
            (hd.n_nodes, hd.n_var_refs(), hd.n_map_vars(), hd.n_actions()),
            (before.0, before.1, before.2, 0)
        );
    }
}
