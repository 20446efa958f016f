// SPDX-License-Identifier: GPL-2.0

//! Handlers and actions: `onmatch()`, `onmax()`, `onchange()` and what
//! each does.

use super::*;

/// What a handler reacts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handler<'a> {
    /// `onmatch(system.event)`: a matching event of another histogram.
    /// `event` is everything after the first `.`.
    OnMatch {
        /// The subsystem.
        system: &'a str,
        /// The event name.
        event: &'a str,
    },
    /// `onmax(var)`: a new maximum of `var` (as written, `$` included;
    /// C checks it is a variable only in `create_actions()`).
    OnMax {
        /// The tracked variable, e.g. `$wakeup_lat`.
        var: &'a str,
    },
    /// `onchange(var)`: a change of `var`.
    OnChange {
        /// The tracked variable, e.g. `$cwnd`.
        var: &'a str,
    },
}

/// One handler piece, as `parse_actions()` parses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HandlerSpec<'a> {
    text: &'a str,
    handler: Handler<'a>,
    action: Result<ActionSpec<'a>, HistError>,
}

impl<'a> HandlerSpec<'a> {
    /// The whole piece, e.g. `onmax($lat).save(comm)`.
    #[cfg(not(MODULE))]
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The handler and its target.
    pub fn handler(&self) -> Handler<'a> {
        self.handler
    }

    /// The action, or the error `action_parse()` logs.  For `onmatch()`, C
    /// looks the event up first and fails with `INVALID_SUBSYS_EVENT`
    /// (caret on `errpos(event)`) if it doesn't exist.
    pub fn action(&self) -> Result<ActionSpec<'a>, HistError> {
        self.action
    }
}

/// The kind of an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionKind {
    /// `save(field,...)`: only for `onmax()` and `onchange()`.
    Save,
    /// `snapshot()`: only for `onmax()` and `onchange()`.
    Snapshot,
    /// `trace(synth,params...)` or `synth(params...)`: generate a
    /// synthetic event.
    Trace,
}

/// An action: `.name(params)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActionSpec<'a> {
    kind: ActionKind,
    name: &'a str,
    params: Params<'a>,
}

impl<'a> ActionSpec<'a> {
    /// The kind (C goes by the start of the name: `save...`, `snapshot...`,
    /// anything else is a synthetic event).
    pub fn kind(&self) -> ActionKind {
        self.kind
    }

    /// The action name as written (`save`, `snapshot`, `trace`, or the
    /// synthetic event's name).
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The parameters.
    pub fn params(&self) -> Params<'a> {
        self.params
    }

    /// For a [`ActionKind::Trace`] action, the synthetic event: the first
    /// parameter after the `trace` keyword, else the action name.
    pub fn synth_event(&self) -> Option<&'a str> {
        match self.kind {
            ActionKind::Trace => self.params.synth_name().or(Some(self.name)),
            _ => None,
        }
    }
}

/// The parameters of an action, as `parse_action_params()` keeps them:
/// split on `,` and stripped, each at least two bytes long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params<'a> {
    text: &'a str,
    trace_keyword: bool,
    count: usize,
}

impl<'a> Params<'a> {
    /// The text inside the parentheses (up to the first `)`).
    #[cfg(not(MODULE))]
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The number of parameters, the `trace` keyword's event not counted.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are no parameters.
    #[cfg(not(MODULE))]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The synthetic event named by a `trace` keyword action.
    pub fn synth_name(&self) -> Option<&'a str> {
        self.trace_keyword.then(|| strip(strsep(self.text, ',').0))
    }

    /// The parameters, in order.
    pub fn iter(&self) -> impl Iterator<Item = &'a str> {
        self.text
            .split(',')
            .map(strip)
            .skip(usize::from(self.trace_keyword))
            .take(self.count)
    }
}

impl<'a> TriggerSpec<'a> {
    /// The handlers, parsed as `parse_actions()` does, in order.
    pub fn actions(&self) -> impl Iterator<Item = Result<HandlerSpec<'a>, HistError>> + '_ {
        self.actions
            .iter()
            .map(move |piece| self.parse_handler(piece))
    }

    /// `onmatch_parse()` / `track_data_parse()` of one handler piece.
    pub(super) fn parse_handler(&self, piece: &'a str) -> Result<HandlerSpec<'a>, HistError> {
        if let Some(rest) = piece.strip_prefix("onmatch(") {
            let (target, after) = strsep(rest, ')');
            let after =
                after.ok_or_else(|| self.src.error(HistErrorKind::NoClosingParen, target))?;
            let (system, event) = strsep(target, '.');
            let event =
                event.ok_or_else(|| self.src.error(HistErrorKind::SubsysNotFound, system))?;
            let handler = Handler::OnMatch { system, event };
            return Ok(HandlerSpec {
                text: piece,
                handler,
                action: self.parse_action(after, handler),
            });
        }
        let (rest, handler): (_, fn(&'a str) -> Handler<'a>) = match piece.strip_prefix("onmax(") {
            Some(rest) => (rest, |var| Handler::OnMax { var }),
            None => match piece.strip_prefix("onchange(") {
                Some(rest) => (rest, |var| Handler::OnChange { var }),
                None => return Err(HistError::silent(errno::EINVAL)),
            },
        };
        let (var, after) = strsep(rest, ')');
        let after = after.ok_or(HistError::silent(errno::EINVAL))?;
        let handler = handler(var);
        Ok(HandlerSpec {
            text: piece,
            handler,
            action: self.parse_action(after, handler),
        })
    }

    /// `action_parse()`: `.name(params)` after the handler.
    pub(super) fn parse_action(
        &self,
        s: &'a str,
        handler: Handler<'a>,
    ) -> Result<ActionSpec<'a>, HistError> {
        let not_found = HistError::new(HistErrorKind::ActionNotFound, 0);
        let (_, rest) = strsep(s, '.');
        let (name, rest) = strsep(rest.ok_or(not_found)?, '(');
        let rest = rest.ok_or(not_found)?;
        let onmatch = matches!(handler, Handler::OnMatch { .. });
        let mismatch = || self.src.error(HistErrorKind::ActionMismatch, name);
        let (kind, params) = if name.starts_with("save") {
            let params = self.parse_params(strsep(rest, ')').0, false)?;
            if onmatch {
                return Err(mismatch());
            }
            (ActionKind::Save, params)
        } else if name.starts_with("snapshot") {
            let (inside, after) = strsep(rest, ')');
            if after.is_none() {
                return Err(self.src.error(HistErrorKind::NoClosingParen, inside));
            }
            if onmatch {
                return Err(mismatch());
            }
            let params = Params {
                text: inside,
                trace_keyword: false,
                count: 0,
            };
            (ActionKind::Snapshot, params)
        } else {
            let trace = name.starts_with("trace");
            (
                ActionKind::Trace,
                self.parse_params(strsep(rest, ')').0, trace)?,
            )
        };
        Ok(ActionSpec { kind, name, params })
    }

    /// `parse_action_params()`.
    pub(super) fn parse_params(
        &self,
        text: &'a str,
        trace_keyword: bool,
    ) -> Result<Params<'a>, HistError> {
        let mut count = 0;
        for (i, param) in text.split(',').enumerate() {
            if count >= SYNTH_FIELDS_MAX {
                return Err(HistError::new(HistErrorKind::TooManyParams, 0));
            }
            let param = strip(param);
            if param.len() < 2 {
                return Err(self.src.error(HistErrorKind::InvalidParam, param));
            }
            if !(trace_keyword && i == 0) {
                count += 1;
            }
        }
        Ok(Params {
            text,
            trace_keyword,
            count,
        })
    }

    /// `parse_var_defs()`: the variables of the assignment pieces.
    pub fn var_defs(&self) -> Result<VarDefs<'a>, HistError> {
        let mut defs = VarDefs {
            defs: BoundedVec::new(),
        };
        for piece in self.assignments.iter() {
            let mut rest = Some(*piece);
            // C takes at most TRACING_MAP_VARS_MAX from one piece and drops
            // the rest of it.
            for _ in 0..TRACING_MAP_VARS_MAX {
                let Some(r) = rest else { break };
                let (def, next) = strsep(r, ',');
                rest = next;
                let (name, expr) = strsep(def, '=');
                let expr =
                    expr.ok_or_else(|| self.src.error(HistErrorKind::MalformedAssignment, name))?;
                if defs.defs.push(VarDef { name, expr }).is_err() {
                    return Err(self.src.error(HistErrorKind::TooManyVars, name));
                }
            }
        }
        Ok(defs)
    }
}
