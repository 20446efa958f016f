// SPDX-License-Identifier: GPL-2.0

//! Evaluation on the event path: the nodes of the fields, and what a
//! record's keys and values are.

use super::*;

impl<'a> HistData<'a> {
    /// The value of hist field `id` for this record; 0 for none.
    #[inline]
    pub(super) fn value_of(
        &self,
        id: Option<&u8>,
        rec: &[u8],
        ctx: &dyn EventContext,
        ref_vals: &[u64],
    ) -> u64 {
        let Some(&id) = id else {
            return 0;
        };
        match self.node_ref(id) {
            Some(f) => self.field_value(f, id, rec, ctx, ref_vals),
            None => 0,
        }
    }

    /// The value of hist field `f` (number `id`): the common kinds
    /// straight away, the others through [`Self::eval`].
    #[inline]
    pub(super) fn field_value(
        &self,
        f: &HistField<'a>,
        id: u8,
        rec: &[u8],
        ctx: &dyn EventContext,
        ref_vals: &[u64],
    ) -> u64 {
        match f.fetch {
            Fetch::Counter => 1,
            Fetch::Num { at, size, signed } => rec_num(rec, at, size, signed),
            _ => self.eval(id, rec, ctx, ref_vals, EVAL_DEPTH_MAX),
        }
    }

    /// The value added to sum `i` (0 = hitcount, always 1) for this record.
    #[cfg(not(MODULE))]
    pub fn sum_value(&self, i: usize, rec: &[u8], ctx: &dyn EventContext) -> u64 {
        self.sum_value_refs(i, rec, ctx, &[])
    }

    /// [`sum_value`](Self::sum_value) with the values resolved for the
    /// references (see [`var_value_refs`](Self::var_value_refs)).
    #[inline]
    pub fn sum_value_refs(
        &self,
        i: usize,
        rec: &[u8],
        ctx: &dyn EventContext,
        ref_vals: &[u64],
    ) -> u64 {
        self.value_of(self.val_ids().get(i), rec, ctx, ref_vals)
    }

    /// The compiled event path ([`Program`]) of this trigger, if it has
    /// nothing to do per event beyond its keys and sums (no variables,
    /// references, actions or saved comm) and they have one of the shapes
    /// a program covers; `None` sends its events down the general path.
    /// Its sums' statistics ([`Self::slot_op`]) are compiled with them.
    #[cfg(not(MODULE))]
    pub fn program(&self) -> Option<Program> {
        let mut program = Program::NONE;
        self.program_in(&mut program).then_some(program)
    }

    /// [`program`](Self::program) compiled into `program`, which a
    /// histogram built in place holds: whether there is one; if not,
    /// `program` is [`Program::NONE`].
    pub fn program_in(&self, program: &mut Program) -> bool {
        if self.n_event_vars() != 0
            || self.n_var_refs() != 0
            || self.n_actions() != 0
            || self.needs_comm()
        {
            *program = Program::NONE;
            return false;
        }
        let keys = self.key_slots().map(|slot| {
            let (id, offset, size) = slot?;
            Some((self.key_load(id)?, offset, size))
        });
        let sums =
            (self.sum_ids().iter().enumerate()).map(|(i, &id)| (self.load(id), self.slot_op(i)));
        program.compile_in(self.key_size(), keys, sums, self.n_sums())
    }

    /// How the compiled program reads hist field `id`
    /// ([`program`](super::super::program)): a number of the record, its `.log2` or its
    /// `.buckets`, or hitcount; `None` for anything else.
    pub(super) fn load(&self, id: u8) -> Option<Load> {
        let f = self.node_ref(id)?;
        let num = |id: Option<u8>| match self.node_ref(id?)?.fetch {
            Fetch::Num { at, size, signed } => Some(Num { at, size, signed }),
            _ => None,
        };
        // Operands come before the fields that use them (see `eval()`).
        let operand = f.operand(0).filter(|&op| op < id);
        match f.fetch {
            Fetch::Counter => Some(Load::One),
            Fetch::Num { .. } => num(Some(id)).map(Load::Num),
            Fetch::Log2 => num(operand).map(Load::Log2),
            Fetch::Bucket => num(operand).map(|n| match f.buckets() {
                0 => Load::Num(n),
                b => Load::Bucket(n, b),
            }),
            _ => None,
        }
    }

    /// How the compiled program builds key `id`: a number as [`load`]
    /// gives it, a string, or the task's name (`common_comm`).
    ///
    /// [`load`]: Self::load
    pub(super) fn key_load(&self, id: u8) -> Option<KeyLoad> {
        let f = self.node_ref(id)?;
        if f.flags & FL_STACKTRACE != 0 {
            return None;
        }
        // `common_comm`: the task's name, which the general path copies
        // into a slot of its size (`write_key()`).
        if f.fetch == Fetch::Comm {
            return (f.size as usize == COMM_SLOT).then_some(KeyLoad::Comm);
        }
        match key_str(f) {
            Some(s) => Some(KeyLoad::Str(s)),
            None if f.flags & FL_STRING != 0 => None,
            None => self.load(id).map(KeyLoad::Word),
        }
    }

    /// `hist_fn_call()`: the value of hist field `id` for this record,
    /// `ref_vals` holding the values resolved for the references.
    pub(super) fn eval(
        &self,
        id: u8,
        rec: &[u8],
        ctx: &dyn EventContext,
        ref_vals: &[u64],
        depth: u32,
    ) -> u64 {
        let Some(depth) = depth.checked_sub(1) else {
            return 0;
        };
        let f = self.node(id);
        // Operands are made before the fields that use them.
        let operand = |i: usize| match f.operand(i) {
            Some(op) if op < id => self.eval(op, rec, ctx, ref_vals, depth),
            _ => 0,
        };
        match f.fetch {
            Fetch::Counter => 1,
            Fetch::Const => f.constant(),
            Fetch::Log2 => order_base_2(operand(0)),
            Fetch::Bucket => {
                let val = operand(0);
                match f.buckets() {
                    0 => val,
                    // C divides as unsigned long below LONG_MAX and with
                    // div64_ul() above: the same thing on 64 bits.
                    b => (val / b).wrapping_mul(b),
                }
            }
            Fetch::Timestamp => {
                let ts = ctx.timestamp();
                if self.ts_in_usecs && ctx.clock_in_ns() {
                    ns2usecs(ts)
                } else {
                    ts
                }
            }
            Fetch::Cpu => u64::from(ctx.cpu()),
            // Not a number (C's is the address of current->comm): keys
            // and copies read the name itself.
            Fetch::Comm => 0,
            Fetch::Num { at, size, signed } => rec_num(rec, at, size, signed),
            op @ (Fetch::UMinus
            | Fetch::Minus
            | Fetch::Plus
            | Fetch::Div
            | Fetch::Mult
            | Fetch::DivPower2 { .. }
            | Fetch::DivNotPower2
            | Fetch::DivMultShift { .. }) => {
                // A constant divisor is the operand's `constant` (for a
                // reference, the variable's, copied by parse_expr()).
                let divisor = f.operand(1).map_or(0, |op| self.node(op).param);
                apply_op(op, operand(0), || operand(1), divisor)
            }
            Fetch::VarRef { idx } => ref_vals.get(usize::from(idx)).copied().unwrap_or(0),
            // Addresses in the record, as C computes them: every trigger on
            // an event sees the same record, so sums of them come out as
            // C's.
            Fetch::String { at } => address(rec, at as usize),
            Fetch::DynString { at } | Fetch::Stack { at } => {
                address(rec, (rec_u32(rec, at as usize) & 0xffff) as usize)
            }
            Fetch::RelDynString { at } => {
                let loc = (rec_u32(rec, at as usize) & 0xffff) as usize;
                address(rec, (at as usize).wrapping_add(4).wrapping_add(loc))
            }
            Fetch::PString => match f.field {
                Some(field) => rec_u64(rec, field.offset as usize),
                None => 0,
            },
            Fetch::Nop => 0,
        }
    }

    pub(super) fn node(&self, id: u8) -> HistField<'a> {
        self.node_ref(id).copied().unwrap_or_default()
    }

    #[inline]
    pub(super) fn node_ref(&self, id: u8) -> Option<&HistField<'a>> {
        self.nodes
            .get(..self.n_nodes)
            .and_then(|nodes| nodes.get(usize::from(id)))
    }

    pub(super) fn val_ids(&self) -> &[u8] {
        self.vals.get(..self.n_vals).unwrap_or(&[])
    }

    pub(super) fn var_ids(&self) -> &[u8] {
        self.vars.get(..self.n_vars).unwrap_or(&[])
    }

    /// The variables and then the field variables.
    pub(super) fn map_var_ids(&self) -> &[u8] {
        self.vars.get(..self.n_event_vars()).unwrap_or(&[])
    }

    /// The hist field map variable `i` takes its value from: a variable's,
    /// a field variable's or a save variable's; `None` for a tracking
    /// variable, which the actions set.
    pub(super) fn map_var_node(&self, i: usize) -> Option<u8> {
        match i.checked_sub(self.n_event_vars()) {
            None => self.map_var_ids().get(i).copied(),
            Some(k) => self.save_vars.get(..self.n_save_vars)?.get(k).copied(),
        }
    }

    pub(super) fn key_ids(&self) -> &[u8] {
        self.keys.get(..self.n_keys).unwrap_or(&[])
    }

    /// C's `fields[]`: the values, the variables, the keys.
    pub(super) fn field_ids(&self) -> impl Iterator<Item = u8> + '_ {
        self.val_ids()
            .iter()
            .chain(self.var_ids())
            .chain(self.key_ids())
            .copied()
    }
}
