// SPDX-License-Identifier: GPL-2.0

//! Fields and expressions: a field's name and modifier, and the tree of
//! an expression as `parse_expr()` reads it.

use super::*;

/// What kind of field an expression is parsed for: C's `flags` argument of
/// `parse_expr()`.  It only matters for a field that is the whole
/// expression (operands are parsed with no flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldContext {
    /// A key (`HIST_FIELD_FL_KEY`).
    Key,
    /// A value (no flags).
    Val,
    /// A variable (`HIST_FIELD_FL_VAR`).
    Var,
    /// An operand of an operator (no flags).
    Operand,
}

/// A field modifier; C allows at most one per field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldModifier {
    /// `.hex`
    Hex,
    /// `.sym`
    Sym,
    /// `.sym-offset`
    SymOffset,
    /// `.execname` (only on `common_pid`)
    Execname,
    /// `.syscall`
    Syscall,
    /// `.stacktrace` (only on stacktrace fields)
    Stacktrace,
    /// `.log2`
    Log2,
    /// `.usecs`
    Usecs,
    /// `.buckets=N` (or `.bucket=N`), N > 0
    Buckets(u64),
    /// `.percent` (anything starting with `percent`), not on keys or
    /// variables
    Percent,
    /// `.graph` (anything starting with `graph`), not on keys or variables
    Graph,
}

impl FieldModifier {
    /// The name C prints (`get_hist_field_flags()`).
    #[cfg(not(MODULE))]
    pub const fn name(self) -> &'static str {
        match self {
            FieldModifier::Hex => "hex",
            FieldModifier::Sym => "sym",
            FieldModifier::SymOffset => "sym-offset",
            FieldModifier::Execname => "execname",
            FieldModifier::Syscall => "syscall",
            FieldModifier::Stacktrace => "stacktrace",
            FieldModifier::Log2 => "log2",
            FieldModifier::Usecs => "usecs",
            FieldModifier::Buckets(_) => "buckets",
            FieldModifier::Percent => "percent",
            FieldModifier::Graph => "graph",
        }
    }
}

/// The field names `parse_field()` knows without the event.
///
/// `cpu` and `stacktrace` also mean `common_cpu` and `common_stacktrace`,
/// but only when the event has no field of that name, so they are left to
/// the build step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecialField {
    /// `common_timestamp`
    CommonTimestamp,
    /// `common_stacktrace`
    CommonStacktrace,
    /// `common_cpu`
    CommonCpu,
    /// `common_comm`: rhist's extension (as in Linux 6.16), the current
    /// task's command name.
    CommonComm,
    /// `hitcount`
    Hitcount,
}

impl SpecialField {
    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "common_timestamp" => SpecialField::CommonTimestamp,
            "common_stacktrace" => SpecialField::CommonStacktrace,
            "common_cpu" => SpecialField::CommonCpu,
            "common_comm" => SpecialField::CommonComm,
            "hitcount" => SpecialField::Hitcount,
            _ => return None,
        })
    }

    /// The name.
    #[cfg(not(MODULE))]
    pub const fn name(self) -> &'static str {
        match self {
            SpecialField::CommonTimestamp => "common_timestamp",
            SpecialField::CommonStacktrace => "common_stacktrace",
            SpecialField::CommonCpu => "common_cpu",
            SpecialField::CommonComm => "common_comm",
            SpecialField::Hitcount => "hitcount",
        }
    }
}

/// A field name with its modifier, as `parse_field()` reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldSpec<'a> {
    text: &'a str,
    name: &'a str,
    modifier_text: Option<&'a str>,
    modifier: Result<Option<FieldModifier>, HistError>,
    special: Option<SpecialField>,
}

impl<'a> FieldSpec<'a> {
    /// The whole text (C's `field_str`, the caret for some errors).
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The field name (before the first `.`).
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// What follows the first `.`.
    #[cfg(not(MODULE))]
    pub fn modifier_text(&self) -> Option<&'a str> {
        self.modifier_text
    }

    /// The modifier, or `BAD_FIELD_MODIFIER`, which C reports before it
    /// looks the name up.
    pub fn modifier(&self) -> Result<Option<FieldModifier>, HistError> {
        self.modifier
    }

    /// The special field this names, if any.  Other names are looked up
    /// in the event (C fails with `FIELD_NOT_FOUND` at `errpos(name)`).
    pub fn special(&self) -> Option<SpecialField> {
        self.special
    }

    /// Whether `__create_val_field()` rejects this on a variable.
    pub(super) fn modifier_forbidden_on_var(&self) -> bool {
        matches!(
            self.modifier,
            Ok(Some(
                FieldModifier::Graph
                    | FieldModifier::Percent
                    | FieldModifier::Buckets(_)
                    | FieldModifier::Log2
            ))
        )
    }

    /// Whether `__create_val_field()` rejects this on a value.
    pub(super) fn forbidden_on_val(&self) -> bool {
        self.special == Some(SpecialField::CommonStacktrace)
            || matches!(
                self.modifier,
                Ok(Some(
                    FieldModifier::Buckets(_)
                        | FieldModifier::Log2
                        | FieldModifier::Sym
                        | FieldModifier::SymOffset
                        | FieldModifier::Syscall
                        | FieldModifier::Stacktrace
                ))
            )
    }
}

/// The four operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Mult,
    /// `/`
    Div,
}

impl BinaryOp {
    /// The operator character.
    #[cfg(not(MODULE))]
    pub const fn symbol(self) -> char {
        match self {
            BinaryOp::Plus => '+',
            BinaryOp::Minus => '-',
            BinaryOp::Mult => '*',
            BinaryOp::Div => '/',
        }
    }
}

/// The index of a node in an [`Expr`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeId(pub(super) u8);

/// A non-constant atom: a field, or a variable reference.
///
/// C splits `system.event.rest` (two dots or more) and keeps `rest` as the
/// name; with fewer dots the whole text is the name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Atom<'a> {
    text: &'a str,
    pub(super) system: Option<&'a str>,
    event: Option<&'a str>,
    name: &'a str,
    context: FieldContext,
}

impl<'a> Atom<'a> {
    /// The whole atom.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The subsystem of `system.event.name`.
    pub fn system(&self) -> Option<&'a str> {
        self.system
    }

    /// The event of `system.event.name`.
    pub fn event(&self) -> Option<&'a str> {
        self.event
    }

    /// The name: a field with its modifier (for
    /// [`TriggerSpec::parse_field`]), or `$var`.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The flags the atom is parsed with.
    pub fn context(&self) -> FieldContext {
        self.context
    }

    /// For a variable reference (`$` and at least one more byte), the
    /// variable name.  C resolves it (`VAR_NOT_FOUND` at `errpos(var)`)
    /// and, if that fails, parses the name as a field anyway.
    pub fn var_ref(&self) -> Option<&'a str> {
        is_var_ref(self.name).then(|| &self.name[1..])
    }
}

/// One node of an expression, in the shape of C's recursion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node<'a> {
    /// A numeric constant (the text starts with a digit).
    Const {
        /// The text.
        text: &'a str,
        /// Its value (`kstrtoull()`, base 0).
        value: u64,
    },
    /// A field or variable reference.
    Atom(Atom<'a>),
    /// `-(operand)`.
    Neg {
        /// The operand text (the caret of `INVALID_STR_OPERAND`).
        text: &'a str,
        /// The operand.
        operand: NodeId,
    },
    /// `lhs op rhs`.  C parses `lhs`, checks it, then parses `rhs`.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// The left text (the caret of `INVALID_STR_OPERAND`).
        lhs_text: &'a str,
        /// The right text (the caret of `INVALID_STR_OPERAND` and
        /// `DIVISION_BY_ZERO`).
        rhs_text: &'a str,
        /// The left operand.
        lhs: NodeId,
        /// The right operand.
        rhs: NodeId,
    },
    /// The syntax error at which C stops.
    Error(HistError),
}

impl Default for Node<'_> {
    fn default() -> Self {
        Node::Error(HistError::silent(errno::EINVAL))
    }
}

/// An expression parsed as `parse_expr()` does.
///
/// The tree keeps what C parses (and resolves) before a syntax error; the
/// error is a [`Node::Error`] where C meets it.  When the left operand of
/// an operator fails, the operator node is left out (C does nothing for it
/// before).  So walking the tree depth first, left to right, visits nodes
/// in C's order and stops at the error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expr<'a> {
    text: &'a str,
    context: FieldContext,
    pub(super) nodes: BoundedVec<Node<'a>, EXPR_NODES_MAX>,
    root: NodeId,
    error: Option<NodeId>,
    pub(super) full: bool,
}

const BAD_NODE: Node<'static> = Node::Error(HistError::silent(errno::EINVAL));

impl<'a> Expr<'a> {
    /// The text.
    #[cfg(not(MODULE))]
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The kind of field this is.
    #[cfg(not(MODULE))]
    pub fn context(&self) -> FieldContext {
        self.context
    }

    /// The root node.
    pub fn root(&self) -> NodeId {
        self.root
    }

    /// A node.
    pub fn node(&self, id: NodeId) -> &Node<'a> {
        self.nodes.get(usize::from(id.0)).unwrap_or(&BAD_NODE)
    }

    /// The syntax error in the expression, if any.
    #[cfg(not(MODULE))]
    pub fn error(&self) -> Option<HistError> {
        if self.full {
            return Some(HistError::silent(errno::EINVAL));
        }
        match self.node(self.error?) {
            Node::Error(e) => Some(*e),
            _ => None,
        }
    }

    /// What is left of the text in C's buffer after a successful
    /// `parse_expr()`: C splits the text in place, writing a NUL at each
    /// binary operator it splits at, at the `)` closing a unary minus and
    /// at the dots of `system.event.var`, so the buffer ends at the first
    /// of those.  C's variable definitions keep that buffer:
    /// `field_name_from_var()` reads it when a later variable or key names
    /// the variable (`x=b+1` then stands for the field `b`).
    pub fn c_remains(&self) -> &'a str {
        let base = self.text.as_ptr() as usize;
        let end_of = |s: &str| (s.as_ptr() as usize + s.len()).checked_sub(base);
        let cut = self
            .nodes
            .iter()
            .filter_map(|n| match n {
                Node::Binary { lhs_text, .. } => end_of(lhs_text),
                Node::Neg { text, .. } => end_of(text),
                Node::Atom(Atom {
                    system: Some(system),
                    ..
                }) => end_of(system),
                _ => None,
            })
            .min();
        match cut {
            Some(at) => self.text.get(..at).unwrap_or(self.text),
            None => self.text,
        }
    }

    /// The number of operators (C's `n_subexprs` when parsing succeeds).
    #[cfg(not(MODULE))]
    pub fn operators(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| matches!(n, Node::Neg { .. } | Node::Binary { .. }))
            .count()
    }
}

struct ExprBuilder<'s, 'a> {
    src: &'s Source<'a>,
    nodes: BoundedVec<Node<'a>, EXPR_NODES_MAX>,
    subexprs: u32,
    error: Option<NodeId>,
    full: bool,
}

impl<'a> ExprBuilder<'_, 'a> {
    fn push(&mut self, node: Node<'a>) -> NodeId {
        match self.nodes.push(node) {
            // EXPR_NODES_MAX < 256.
            Ok(at) => NodeId(at as u8),
            Err(_) => {
                // Not reachable: the subexpression limit bounds the nodes.
                self.full = true;
                NodeId(0)
            }
        }
    }

    fn fail(&mut self, e: HistError) -> NodeId {
        let id = self.push(Node::Error(e));
        self.error = Some(id);
        id
    }

    fn silent(&mut self) -> NodeId {
        self.fail(HistError::silent(errno::EINVAL))
    }

    /// `parse_expr()`.
    fn expr(&mut self, s: &'a str, ctx: FieldContext) -> NodeId {
        if self.subexprs > HIST_SUBEXPRS_MAX {
            return self.fail(self.src.error(HistErrorKind::TooManySubexpr, s));
        }
        match self.src.contains_operator(s) {
            Operator::None => self.atom(s, ctx),
            Operator::UnaryMinus => self.unary(s),
            Operator::Binary(op, at) => {
                self.subexprs += 1;
                let (lhs_text, rhs_text) = (&s[..at], &s[at + 1..]);
                if lhs_text.is_empty() || rhs_text.is_empty() {
                    return self.silent();
                }
                let lhs = self.expr(lhs_text, FieldContext::Operand);
                if self.error.is_some() {
                    return lhs;
                }
                let rhs = self.expr(rhs_text, FieldContext::Operand);
                self.push(Node::Binary {
                    op,
                    lhs_text,
                    rhs_text,
                    lhs,
                    rhs,
                })
            }
        }
    }

    /// `parse_unary()`: only `-(...)` with nothing after the last `)`.
    fn unary(&mut self, s: &'a str) -> NodeId {
        self.subexprs += 1;
        if self.subexprs > HIST_SUBEXPRS_MAX {
            return self.fail(self.src.error(HistErrorKind::TooManySubexpr, s));
        }
        let s = &s[1..];
        if !s.contains('(') {
            return self.silent();
        }
        // C skips one byte, assuming it is the '('.
        let Some(s) = s.get(1..) else {
            return self.silent();
        };
        let Some(close) = s.rfind(')') else {
            return self.silent();
        };
        if close + 1 != s.len() {
            return self.fail(self.src.error(HistErrorKind::UnaryMinusSubexpr, s));
        }
        let text = &s[..close];
        let operand = self.expr(text, FieldContext::Operand);
        if self.error.is_some() {
            return operand;
        }
        self.push(Node::Neg { text, operand })
    }

    /// `parse_atom()` up to the look-ups.
    fn atom(&mut self, s: &'a str, ctx: FieldContext) -> NodeId {
        if s.starts_with(|c: char| c.is_ascii_digit()) {
            return match kstrtoull(s) {
                Ok(value) => self.push(Node::Const { text: s, value }),
                Err(_) => self.fail(self.src.error(HistErrorKind::ExpectNumber, s)),
            };
        }
        let (mut system, mut event, mut name) = (None, None, s);
        if let Some((sys, rest)) = s.split_once('.') {
            if let Some((ev, rest)) = rest.split_once('.') {
                (system, event, name) = (Some(sys), Some(ev), rest);
            }
        }
        self.push(Node::Atom(Atom {
            text: s,
            system,
            event,
            name,
            context: ctx,
        }))
    }
}

impl<'a> TriggerSpec<'a> {
    /// `parse_expr()` of `s` (a piece of the text) as a field of kind `ctx`.
    pub fn parse_expr(&self, s: &'a str, ctx: FieldContext) -> Expr<'a> {
        let mut b = ExprBuilder {
            src: &self.src,
            nodes: BoundedVec::new(),
            subexprs: 0,
            error: None,
            full: false,
        };
        let root = b.expr(s, ctx);
        Expr {
            text: s,
            context: ctx,
            nodes: b.nodes,
            root,
            error: b.error,
            full: b.full,
        }
    }

    /// The syntactic part of `parse_field()`: the name and the modifier of
    /// `s` (the text after any `system.event.`), for a field of kind `ctx`.
    pub fn parse_field(&self, s: &'a str, ctx: FieldContext) -> FieldSpec<'a> {
        let (name, modifier_text) = strsep(s, '.');
        let modifier = match modifier_text {
            None => Ok(None),
            Some(m) => self.parse_modifier(name, m, ctx).map(Some),
        };
        FieldSpec {
            text: s,
            name,
            modifier_text,
            modifier,
            special: SpecialField::from_name(name),
        }
    }

    pub(super) fn parse_modifier(
        &self,
        name: &str,
        m: &'a str,
        ctx: FieldContext,
    ) -> Result<FieldModifier, HistError> {
        let bad = |at: &str| self.src.error(HistErrorKind::BadFieldModifier, at);
        let key_or_var = matches!(ctx, FieldContext::Key | FieldContext::Var);
        Ok(match m {
            "hex" => FieldModifier::Hex,
            "sym" => FieldModifier::Sym,
            _ if self.src.c_eq(m, "symXoffset") => FieldModifier::SymOffset,
            "execname" if name == "common_pid" => FieldModifier::Execname,
            "syscall" => FieldModifier::Syscall,
            "stacktrace" => FieldModifier::Stacktrace,
            "log2" => FieldModifier::Log2,
            "usecs" => FieldModifier::Usecs,
            _ if m.starts_with("bucket") => {
                let rest = &m["bucket".len()..];
                let rest = rest.strip_prefix('s').unwrap_or(rest);
                let Some(number) = rest.strip_prefix('=') else {
                    return Err(bad(rest));
                };
                match kstrtoull(number) {
                    Ok(n) if n != 0 => FieldModifier::Buckets(n),
                    _ => return Err(bad(number)),
                }
            }
            _ if m.starts_with("percent") && !key_or_var => FieldModifier::Percent,
            _ if m.starts_with("graph") && !key_or_var => FieldModifier::Graph,
            _ => return Err(bad(m)),
        })
    }
}
