// SPDX-License-Identifier: GPL-2.0

//! What the core knows of an event: its name and the fields of its record,
//! as its `format` file describes them. The kernel shell builds this from
//! the event's field lists; host tests write it down by hand. What the
//! record does not hold (the CPU, the time, the stack) the shell tells
//! the core as each event fires ([`EventContext`]).

/// How a field's bytes are stored, after the kernel's `filter_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldStorage {
    /// A number (or anything else the filter code treats as one).
    Other,
    /// `char name[N]` inside the record.
    StaticString,
    /// `__data_loc char[]`: a u32 whose low half is the string's offset in
    /// the record and whose high half its length.
    DynString,
    /// `__rel_loc char[]`: as `DynString`, but the offset counts from the
    /// end of the u32 itself.
    RelString,
    /// A `char *` pointing outside the record.
    PtrString,
    /// `char comm[16]` filtered as a comm.
    Comm,
    /// `common_cpu`-like CPU fields.
    Cpu,
    /// A stack trace field.
    Stacktrace,
}

impl FieldStorage {
    /// The storage for the kernel's `filter_type` value.
    pub fn from_filter_type(filter_type: i32) -> Self {
        match filter_type {
            1 => FieldStorage::StaticString,
            2 => FieldStorage::DynString,
            3 => FieldStorage::RelString,
            4 => FieldStorage::PtrString,
            7 => FieldStorage::Comm,
            8 => FieldStorage::Cpu,
            9 => FieldStorage::Stacktrace,
            _ => FieldStorage::Other,
        }
    }

    /// Whether C's `is_string_field()` holds.
    pub fn is_string(self) -> bool {
        matches!(
            self,
            FieldStorage::StaticString
                | FieldStorage::DynString
                | FieldStorage::RelString
                | FieldStorage::PtrString
        )
    }
}

/// One field of an event record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventField<'a> {
    /// Field name, as in the format file.
    pub name: &'a str,
    /// C type, as in the format file (`u64`, `char[16]`, `__data_loc char[]`).
    pub type_name: &'a str,
    /// Byte offset in the record.
    pub offset: u32,
    /// Byte size in the record.
    pub size: u32,
    /// Whether the type is signed.
    pub signed: bool,
    /// How the bytes are stored.
    pub storage: FieldStorage,
}

impl<'a> EventField<'a> {
    /// A field with these properties.
    pub const fn new(
        name: &'a str,
        type_name: &'a str,
        offset: u32,
        size: u32,
        signed: bool,
        storage: FieldStorage,
    ) -> Self {
        EventField {
            name,
            type_name,
            offset,
            size,
            signed,
            storage,
        }
    }
}

/// An event: its system, name and fields, the common ones included.
#[derive(Debug, Clone, Copy)]
pub struct EventDesc<'a> {
    /// The event's system (`sched`).
    pub system: &'a str,
    /// The event's name (`sched_waking`).
    pub name: &'a str,
    /// The event's own fields.
    pub fields: &'a [EventField<'a>],
    /// The fields every event has (`common_pid`, ...).
    pub common_fields: &'a [EventField<'a>],
}

impl<'a> EventDesc<'a> {
    /// Finds a field by name, the event's own first, as C's
    /// `trace_find_event_field()` does.
    #[cfg(not(MODULE))]
    pub fn field(&self, name: &str) -> Option<&'a EventField<'a>> {
        self.fields
            .iter()
            .chain(self.common_fields.iter())
            .find(|f| f.name == name)
    }
}

/// The fields every event record starts with (`struct trace_entry`).
pub const COMMON_FIELDS: [EventField<'static>; 4] = [
    EventField::new(
        "common_type",
        "unsigned short",
        0,
        2,
        false,
        FieldStorage::Other,
    ),
    EventField::new(
        "common_flags",
        "unsigned char",
        2,
        1,
        false,
        FieldStorage::Other,
    ),
    EventField::new(
        "common_preempt_count",
        "unsigned char",
        3,
        1,
        false,
        FieldStorage::Other,
    ),
    EventField::new("common_pid", "int", 4, 4, true, FieldStorage::Other),
];

/// What the shell knows about the event being traced, for the fields that
/// do not come from the record.
pub trait EventContext {
    /// The CPU the event fires on (`smp_processor_id()`).
    fn cpu(&self) -> u32;
    /// The event's ring-buffer timestamp, raw (ns for ns clocks).
    fn timestamp(&self) -> u64;
    /// Whether the trace clock counts nanoseconds (trace_clock_in_ns()).
    fn clock_in_ns(&self) -> bool;
    /// Fills `out` with the current stack (zero-terminated if shorter).
    fn stacktrace(&self, out: &mut [u64]);
    /// The current task's command name (`current->comm`), for
    /// `common_comm`.
    fn comm(&self) -> [u8; 16];
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: [EventField<'static>; 1] = [EventField {
        name: "common_pid",
        type_name: "u64",
        offset: 8,
        size: 8,
        signed: false,
        storage: FieldStorage::Other,
    }];

    #[test]
    fn own_fields_shadow_common_ones() {
        let ev = EventDesc {
            system: "s",
            name: "e",
            fields: &OWN,
            common_fields: &COMMON_FIELDS,
        };
        assert_eq!(ev.field("common_pid").unwrap().offset, 8);
        assert_eq!(ev.field("common_flags").unwrap().offset, 2);
        assert!(ev.field("nope").is_none());
    }

    #[test]
    fn filter_types_map_to_storage() {
        assert!(FieldStorage::from_filter_type(1).is_string());
        assert!(FieldStorage::from_filter_type(2).is_string());
        assert!(!FieldStorage::from_filter_type(0).is_string());
        assert_eq!(FieldStorage::from_filter_type(9), FieldStorage::Stacktrace);
    }
}
