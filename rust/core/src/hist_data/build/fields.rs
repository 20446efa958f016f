// SPDX-License-Identifier: GPL-2.0

//! The builder's fields: an event field, a special field or a
//! variable as a hist field (`parse_field()`, `create_hist_field()`).

use super::*;

impl<'a> Builder<'_, '_, 'a> {
    /// `parse_field()` and `create_hist_field()`.
    pub(in super::super) fn parse_field(
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
    pub(super) fn create_hist_field(
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
