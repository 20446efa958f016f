// SPDX-License-Identifier: GPL-2.0

//! Variable references across triggers: `$var` and `system.event.$var`
//! naming a variable another registered trigger of the instance defines,
//! as `parse_var_ref()` resolves them (`kernel/trace/trace_events_hist.c`).
//!
//! The core cannot see the other triggers: the shell answers
//! [`VarLookup::find_var`], C's `find_event_var()` (`find_var_file()` then
//! `find_file_var()`), with a [`VarTarget`] it gets from the owner's
//! [`HistData::var_target`](super::hist_data::HistData::var_target) and an
//! opaque `u64` identity of the owner's histogram.  The build copies what
//! C's `init_var_ref()` copies into the reference (`create_var_ref()`),
//! keeps one reference per (histogram, variable) in C's `var_refs[]`
//! order, and numbers the referenced histograms ([`RefTable::hists`]), so
//! that the event path gets the histogram of slot `i` as `refs[i]`
//! ([`Histogram::update_with_refs`](super::histogram::Histogram::update_with_refs)).

use super::grammar::TRACING_MAP_VARS_MAX;

/// The most references a trigger has: C refuses more than
/// `TRACING_MAP_VARS_MAX` in `create_var_ref()`.
pub const VAR_REFS_MAX: usize = TRACING_MAP_VARS_MAX;

/// The longest type name a reference keeps (C `kstrdup()`s the
/// variable's); longer ones are cut, which only shows in `hist_debug`.
pub const TYPE_NAME_MAX: usize = 32;

/// A variable of a registered trigger, as the shell found it: what C's
/// reference field copies from the variable's hist field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VarTarget<'t> {
    /// The identity of the owner's histogram, chosen by the shell (C's
    /// `var.hist_data`): references to the same histogram share a slot.
    pub hist: u64,
    /// The variable's index, its slot in the owner's entries (`var.idx`).
    pub var_idx: usize,
    /// The variable's `size`.
    pub size: u32,
    /// The variable's `is_signed`.
    pub signed: bool,
    /// The variable's `type`.
    pub type_name: &'t str,
    /// The variable's `HIST_FIELD_FL_*` flags: `init_var_ref()` copies
    /// the timestamp and stack trace ones, `check_expr_operands()` reads
    /// `TIMESTAMP_USECS` and `CONST`.
    pub flags: u32,
    /// The variable's `constant` (when `flags` has `CONST`).
    pub constant: u64,
    /// The variable keeps a copy in each entry (a string or a stack
    /// trace, see [`super::vars`]): its value is the copy's slot there,
    /// which the event path turns into the copy's address, C's value.
    pub copy: bool,
    /// The owner's system (`call->class->system`).
    pub system: &'t str,
    /// The owner's event name.
    pub event: &'t str,
}

/// What [`VarLookup::find_var`] finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found<'t> {
    /// No trigger defines it (or the named event does not exist).
    None,
    /// Triggers on two or more events define it, and no event was named:
    /// C's `VAR_NOT_UNIQUE`.
    NotUnique,
    /// The variable.
    One(VarTarget<'t>),
}

/// The shell's view of the instance's registered triggers, for the build.
pub trait VarLookup {
    /// C's `find_event_var()` without `onmatch()`: with `event` =
    /// `Some((system, event))`, the first trigger of that event defining
    /// `name` (`find_file_var()`; [`Found::None`] if there is no such
    /// event); with `None`, among the registered triggers that have
    /// variables or references (C's `tr->hist_vars`), those defining
    /// `name`: [`Found::NotUnique`] if they are on two or more events,
    /// else the first one of the single event's triggers.
    fn find_var(&self, event: Option<(&str, &str)>, name: &str) -> Found<'_>;
}

/// The slot of a reference to a variable of the trigger itself (an
/// action's parameter): resolved from its own entry, after the update.
pub(super) const OWN_SLOT: u8 = u8::MAX;

/// A type name copied into fixed storage.
#[derive(Clone, Copy, Debug)]
pub(super) struct TypeBuf {
    bytes: [u8; TYPE_NAME_MAX],
    len: u8,
}

impl TypeBuf {
    pub(super) const EMPTY: Self = TypeBuf {
        bytes: [0; TYPE_NAME_MAX],
        len: 0,
    };

    /// `s`, cut at a character boundary to fit.
    pub(super) fn new(s: &str) -> Self {
        let mut len = s.len().min(TYPE_NAME_MAX);
        while !s.is_char_boundary(len) {
            len -= 1;
        }
        let mut t = TypeBuf::EMPTY;
        if let (Some(d), Some(src)) = (t.bytes.get_mut(..len), s.as_bytes().get(..len)) {
            d.copy_from_slice(src);
        }
        t.len = len as u8;
        t
    }

    pub(super) fn as_str(&self) -> &str {
        let bytes = self.bytes.get(..usize::from(self.len)).unwrap_or(&[]);
        core::str::from_utf8(bytes).unwrap_or("")
    }
}

/// One reference, C's `var_refs[i]`: a `HIST_FIELD_FL_VAR_REF` field.
#[derive(Clone, Copy, Debug)]
pub(super) struct VarRef<'a> {
    /// Its hist field.
    pub(super) node: u8,
    /// The slot of the referenced histogram in [`RefTable::hists`].
    pub(super) slot: u8,
    /// `var.idx`: the variable in the referenced histogram's entries.
    pub(super) var_idx: u8,
    /// `read_once`: an operand of a binary expression consumes the value.
    pub(super) read_once: bool,
    /// The variable keeps a copy in its entry ([`VarTarget::copy`]).
    pub(super) copy: bool,
    /// Written `system.event.$name` (C's `system` and `event_name`).
    qualified: bool,
    /// The text: `$name` or `system.event.$name` (what
    /// `hist_field_name()` prints for a reference with a system).
    pub(super) full: &'a str,
    /// A reference to the variable `synthetic_<full>` of a hidden
    /// histogram (`create_field_var_hist()`).
    hidden: bool,
    /// For a hidden histogram's variable, the system and event its action
    /// parameter was written with (`system.event.field`), if any: what C
    /// gives `create_var_ref()`, not the event of the hidden histogram.
    hidden_written: Option<(&'a str, &'a str)>,
    /// The variable's flags and constant (`check_expr_operands()`).
    pub(super) var_flags: u32,
    pub(super) var_constant: u64,
    /// `type`.
    pub(super) ty: TypeBuf,
}

impl<'a> VarRef<'a> {
    /// What C's `name` has before [`name`](Self::name): `synthetic_` for
    /// a hidden histogram's variable.
    pub(super) fn name_prefix(&self) -> &'static str {
        if self.hidden {
            "synthetic_"
        } else {
            ""
        }
    }

    /// C's `name`: the variable's name (after
    /// [`name_prefix`](Self::name_prefix)).
    pub(super) fn name(&self) -> &'a str {
        if self.hidden {
            return self.full;
        }
        let name = match self.system() {
            Some(_) => self.full.splitn(3, '.').nth(2).unwrap_or(""),
            None => self.full,
        };
        name.strip_prefix('$').unwrap_or(name)
    }

    /// C's `system` and `event_name`, when written with them.
    pub(super) fn system(&self) -> Option<(&'a str, &'a str)> {
        if self.hidden {
            return self.hidden_written;
        }
        let mut parts = self.full.splitn(3, '.');
        match (self.qualified, parts.next(), parts.next()) {
            (true, Some(system), Some(event)) => Some((system, event)),
            _ => None,
        }
    }
}

impl VarRef<'static> {
    const BLANK: Self = VarRef {
        node: 0,
        slot: 0,
        var_idx: 0,
        read_once: false,
        copy: false,
        qualified: false,
        full: "",
        hidden: false,
        hidden_written: None,
        var_flags: 0,
        var_constant: 0,
        ty: TypeBuf::EMPTY,
    };
}

/// A trigger's references and the histograms they name.
#[derive(Clone, Copy, Debug)]
pub(super) struct RefTable<'a> {
    refs: [VarRef<'a>; VAR_REFS_MAX],
    n_refs: usize,
    hists: [u64; VAR_REFS_MAX],
    n_hists: usize,
}

impl RefTable<'static> {
    pub(super) const EMPTY: Self = RefTable {
        refs: [VarRef::BLANK; VAR_REFS_MAX],
        n_refs: 0,
        hists: [0; VAR_REFS_MAX],
        n_hists: 0,
    };
}

impl<'a> RefTable<'a> {
    /// The references, in C's `var_refs[]` order.
    pub(super) fn refs(&self) -> &[VarRef<'a>] {
        self.refs.get(..self.n_refs).unwrap_or(&[])
    }

    /// The identities of the referenced histograms, by slot.
    pub(super) fn hists(&self) -> &[u64] {
        self.hists.get(..self.n_hists).unwrap_or(&[])
    }

    pub(super) fn get(&self, i: usize) -> Option<&VarRef<'a>> {
        self.refs().get(i)
    }

    pub(super) fn get_mut(&mut self, i: usize) -> Option<&mut VarRef<'a>> {
        self.refs.get_mut(..self.n_refs)?.get_mut(i)
    }

    /// How many references and histograms there are: what
    /// [`truncate`](Self::truncate) goes back to.
    pub(super) fn len(&self) -> (usize, usize) {
        (self.n_refs, self.n_hists)
    }

    /// Drops the references and histograms added since [`len`](Self::len)
    /// gave `len`.
    pub(super) fn truncate(&mut self, len: (usize, usize)) {
        self.n_refs = self.n_refs.min(len.0);
        self.n_hists = self.n_hists.min(len.1);
    }

    /// `create_var_ref()`'s check: the reference to this variable this
    /// trigger already has, if any (its index).
    pub(super) fn find(&self, target: &VarTarget<'_>) -> Option<usize> {
        self.refs().iter().position(|r| {
            usize::from(r.var_idx) == target.var_idx
                && r.slot != OWN_SLOT
                && self.hists.get(usize::from(r.slot)) == Some(&target.hist)
        })
    }

    /// [`find`](Self::find) for the trigger's own variable `var_idx`.
    pub(super) fn find_own(&self, var_idx: usize) -> Option<usize> {
        self.refs()
            .iter()
            .position(|r| r.slot == OWN_SLOT && usize::from(r.var_idx) == var_idx)
    }

    /// Adds a reference to `target` whose hist field is `node`
    /// (`init_var_ref()`), written `full` (`$name`, or
    /// `system.event.$name` when `qualified`); `None` when there are
    /// [`VAR_REFS_MAX`] already (C's `create_var_ref()` returns NULL).
    pub(super) fn add(
        &mut self,
        node: u8,
        target: &VarTarget<'_>,
        full: &'a str,
        qualified: bool,
    ) -> Option<usize> {
        if self.n_refs >= VAR_REFS_MAX {
            return None;
        }
        let slot = match self.hists().iter().position(|&h| h == target.hist) {
            Some(slot) => slot,
            None => {
                *self.hists.get_mut(self.n_hists)? = target.hist;
                self.n_hists += 1;
                self.n_hists - 1
            }
        };
        self.push(node, slot as u8, target, full, qualified)
    }

    /// [`add`](Self::add) for the variable `synthetic_<field>` of a
    /// hidden histogram, for a parameter written `system.event.field`
    /// (`written`) or `field` (`None`).
    pub(super) fn add_hidden(
        &mut self,
        node: u8,
        target: &VarTarget<'_>,
        field: &'a str,
        written: Option<(&'a str, &'a str)>,
    ) -> Option<usize> {
        let i = self.add(node, target, field, false)?;
        if let Some(r) = self.refs.get_mut(i) {
            r.hidden = true;
            r.hidden_written = written;
        }
        Some(i)
    }

    /// [`add`](Self::add) for a variable of the trigger itself, whose
    /// `hist` is not looked at.
    pub(super) fn add_own(
        &mut self,
        node: u8,
        target: &VarTarget<'_>,
        full: &'a str,
        qualified: bool,
    ) -> Option<usize> {
        if self.n_refs >= VAR_REFS_MAX {
            return None;
        }
        self.push(node, OWN_SLOT, target, full, qualified)
    }

    fn push(
        &mut self,
        node: u8,
        slot: u8,
        target: &VarTarget<'_>,
        full: &'a str,
        qualified: bool,
    ) -> Option<usize> {
        let var_idx = u8::try_from(target.var_idx).ok()?;
        let i = self.n_refs;
        *self.refs.get_mut(i)? = VarRef {
            node,
            slot,
            var_idx,
            read_once: false,
            copy: target.copy,
            qualified,
            full,
            hidden: false,
            hidden_written: None,
            var_flags: target.flags,
            var_constant: target.constant,
            ty: TypeBuf::new(target.type_name),
        };
        self.n_refs += 1;
        Some(i)
    }
}

/// One reference as the shell sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefInfo {
    /// The slot of the referenced histogram: `refs[slot]` on the event
    /// path, [`HistData::ref_hists`](super::hist_data::HistData::ref_hists)`[slot]`
    /// its identity.
    pub slot: usize,
    /// The variable's index in that histogram's entries.
    pub var_idx: usize,
    /// Whether the event path consumes it (`read_once`).
    pub read_once: bool,
    /// The variable is the trigger's own (an action's parameter): `slot`
    /// means nothing, the value is read from the trigger's own entry
    /// after the update.
    pub own: bool,
    /// The variable keeps a copy in its entry: the value the event path
    /// passes on is the copy's address ([`VarTarget::copy`]).
    pub copy: bool,
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn target(hist: u64, var_idx: usize) -> VarTarget<'static> {
        VarTarget {
            hist,
            var_idx,
            size: 8,
            signed: false,
            type_name: "u64",
            flags: 0,
            constant: 0,
            copy: false,
            system: "sched",
            event: "sched_waking",
        }
    }

    #[test]
    fn slots_dedup_by_histogram() {
        let mut t = RefTable::EMPTY;
        assert_eq!(t.add(1, &target(7, 0), "$a", false), Some(0));
        assert_eq!(t.add(2, &target(9, 0), "s.e.$b", true), Some(1));
        assert_eq!(t.add(3, &target(7, 1), "$c", false), Some(2));
        assert_eq!((t.refs()[0].name(), t.refs()[0].system()), ("a", None));
        assert_eq!(
            (t.refs()[1].name(), t.refs()[1].system()),
            ("b", Some(("s", "e")))
        );
        assert_eq!(t.hists(), &[7, 9]);
        let slots: [u8; 3] = core::array::from_fn(|i| t.refs()[i].slot);
        assert_eq!(slots, [0, 1, 0]);
        assert_eq!(t.find(&target(7, 1)), Some(2));
        assert_eq!(t.find(&target(9, 1)), None);
        for i in 3..VAR_REFS_MAX {
            assert!(t.add(4, &target(i as u64, 0), "$x", false).is_some());
        }
        assert_eq!(t.add(5, &target(100, 0), "$y", false), None);
    }

    #[test]
    fn type_names_are_cut_at_a_character_boundary() {
        assert_eq!(TypeBuf::new("u64").as_str(), "u64");
        let long = "é".repeat(40);
        let t = TypeBuf::new(&long);
        assert_eq!(t.as_str().len(), TYPE_NAME_MAX);
        assert!(long.starts_with(t.as_str()));
    }
}

/// Building triggers with references, against a few registered triggers.
#[cfg(all(test, not(loom)))]
mod build_tests {
    use super::super::error::{HistError, HistErrorKind};
    use super::super::event::{EventDesc, EventField, FieldStorage};
    use super::super::grammar::parse_trigger;
    use super::super::hist_data::{BuildOptions, HistData};
    use super::*;
    use crate::testing::{event, Task, TASK};
    use std::format;
    use std::string::String;
    use std::vec::Vec;

    static WAKING: [EventField<'static>; 3] = [
        EventField::new("pid", "pid_t", 8, 4, true, FieldStorage::Other),
        EventField::new("prio", "int", 12, 4, true, FieldStorage::Other),
        EventField::new(
            "comm",
            "char[16]",
            16,
            16,
            false,
            FieldStorage::StaticString,
        ),
    ];

    static SWITCH: [EventField<'static>; 2] = [
        EventField::new("next_pid", "pid_t", 8, 4, true, FieldStorage::Other),
        EventField::new("prev_prio", "int", 12, 4, true, FieldStorage::Other),
    ];

    static SAMPLE: [EventField<'static>; 2] = [
        EventField::new("a", "u64", 8, 8, false, FieldStorage::Other),
        EventField::new("b", "u32", 16, 4, false, FieldStorage::Other),
    ];

    /// Registered triggers: identity, event, hist data.
    struct Instance(Vec<(u64, EventDesc<'static>, HistData<'static>)>);

    impl VarLookup for Instance {
        fn find_var(&self, event: Option<(&str, &str)>, name: &str) -> Found<'_> {
            let mut found: Option<VarTarget<'_>> = None;
            for (id, ev, hd) in &self.0 {
                if event.is_some_and(|e| e != (ev.system, ev.name)) {
                    continue;
                }
                let Some(t) = hd.var_target(name, *id, ev.system, ev.name) else {
                    continue;
                };
                match found {
                    None => found = Some(t),
                    Some(f) if (f.system, f.event) != (t.system, t.event) => {
                        return Found::NotUnique
                    }
                    Some(_) => {}
                }
            }
            found.map_or(Found::None, Found::One)
        }
    }

    fn instance() -> Instance {
        let waking = event("sched", "sched_waking", &WAKING);
        let switch = event("sched", "sched_switch", &SWITCH);
        let reg = |id, ev: EventDesc<'static>, text: &'static str| {
            let spec = parse_trigger(text).unwrap();
            (id, ev, HistData::build(&spec, &ev).unwrap())
        };
        Instance(std::vec![
            reg(
                0x100,
                waking,
                "keys=pid:ts0=common_timestamp.usecs,p=prio,s=comm,c=4,z=0,st=common_stacktrace"
            ),
            reg(0x200, switch, "keys=next_pid:p=prev_prio,q=next_pid*2"),
        ])
    }

    fn try_build(text: &'static str) -> Result<HistData<'static>, HistError> {
        let spec = parse_trigger(text).unwrap();
        let ev = event("rhist_test", "rhist_sample", &SAMPLE);
        let mut hd = HistData::empty(&spec);
        let inst = instance();
        let options = BuildOptions {
            vars: Some(&inst),
            ..Default::default()
        };
        HistData::build_into_with(&mut hd, &spec, &ev, options).map(|()| hd)
    }

    fn build(text: &'static str) -> HistData<'static> {
        try_build(text).unwrap_or_else(|e| panic!("{text}: {e:?}"))
    }

    fn err(text: &'static str) -> HistError {
        match try_build(text) {
            Ok(_) => panic!("{text}: built"),
            Err(e) => e,
        }
    }

    /// C's caret on the first occurrence of `s` in `hist:` + text.
    fn at(text: &str, s: &str) -> usize {
        format!("hist:{text}").find(s).unwrap()
    }

    fn refs(hd: &HistData<'_>) -> Vec<(usize, usize, bool)> {
        (0..hd.n_var_refs())
            .map(|i| hd.var_ref(i).unwrap())
            .map(|r| (r.slot, r.var_idx, r.read_once))
            .collect()
    }

    fn info(hd: &HistData<'_>) -> String {
        let mut s = String::new();
        hd.write_info(&mut s, "hist:").unwrap();
        s
    }

    /// A task of no name at 5 ms.
    const CTX: Task = Task {
        ts: 5_000_000,
        comm: [0; 16],
        ..TASK
    };

    #[test]
    fn the_target_is_what_init_var_ref_copies() {
        let inst = instance();
        let (_, ev, hd) = &inst.0[0];
        let t = hd.var_target("p", 7, ev.system, ev.name).unwrap();
        assert_eq!(
            (t.hist, t.var_idx, t.size, t.signed, t.type_name),
            (7, 1, 4, true, "int")
        );
        assert_eq!((t.system, t.event), ("sched", "sched_waking"));
        let c = hd.var_target("c", 7, "", "").unwrap();
        assert_eq!((c.var_idx, c.constant, c.type_name), (3, 4, "u64"));
        assert!(hd.var_target("nope", 7, "", "").is_none());
    }

    #[test]
    fn a_unique_or_qualified_name_resolves() {
        let hd = build("keys=common_pid:vals=$ts0");
        assert_eq!(refs(&hd), [(0, 0, false)]);
        assert_eq!(hd.ref_hists(), &[0x100]);
        // Several events define p: the system and event say which.
        let hd = build("keys=common_pid:vals=sched.sched_switch.$p");
        assert_eq!(refs(&hd), [(0, 0, false)]);
        assert_eq!(hd.ref_hists(), &[0x200]);
        // One reference per variable, one slot per histogram; operands
        // of a binary expression are read once.
        let hd = build("keys=common_pid:vals=$q*sched.sched_waking.$p,b+$c:x=$q");
        assert_eq!(refs(&hd), [(0, 1, true), (1, 1, true), (1, 3, true)]);
        assert_eq!(hd.ref_hists(), &[0x200, 0x100]);
        let hd = build("keys=common_pid:vals=$ts0:x=$q");
        assert_eq!(refs(&hd), [(0, 0, false), (1, 1, false)]);
    }

    #[test]
    fn c_errors_of_references() {
        use HistErrorKind::*;
        // No trigger defines it: VAR_NOT_FOUND, then the field error of
        // the text.
        let t = "keys=common_pid:vals=$nope";
        let e = err(t);
        assert_eq!(e.earlier(), Some((VarNotFound, at(t, "nope"))));
        assert_eq!(e.kind(), Some(FieldNotFound));
        // Two events define it: VAR_NOT_UNIQUE first.
        let t = "keys=common_pid:vals=$p";
        let e = err(t);
        let p = at(t, "p");
        assert_eq!(
            e.logged_before().collect::<Vec<_>>(),
            [(VarNotUnique, p), (VarNotFound, p)]
        );
        assert_eq!(e.kind(), Some(FieldNotFound));
        // A qualified name on an event that has none.
        let t = "keys=common_pid:vals=sched.sched_wakeup.$p";
        assert_eq!(
            err(t).logged_before().collect::<Vec<_>>(),
            [(VarNotFound, at(t, "p"))]
        );
        // A variable of this trigger that is not a plain field: the
        // trigger is not registered yet, C does not find it.
        let t = "keys=common_pid:x=a+1:vals=$x";
        assert_eq!(err(t).earlier(), Some((VarNotFound, at(t, "x"))));
        // One that is a plain field is that field, no reference.
        assert_eq!(build("keys=common_pid:x=a:vals=$x").n_var_refs(), 0);
        // No reference in a key, even in an expression.
        let t = "keys=$ts0";
        assert_eq!(err(t), HistError::new(InvalidRefKey, at(t, "$ts0")));
        let t = "keys=b+$q:vals=a";
        assert_eq!(err(t), HistError::new(InvalidRefKey, at(t, "b+$q")));
        // A stack trace variable is no value.
        let t = "keys=common_pid:vals=$st";
        assert_eq!(err(t), HistError::new(BadFieldModifier, at(t, "$st")));
    }

    /// C's `create_var_ref()` refuses a 17th reference: `VAR_NOT_FOUND`.
    #[test]
    fn at_most_sixteen_references() {
        let defs: Vec<String> = (0..16).map(|i| format!("v{i}=next_pid")).collect();
        let owner: &'static str = format!("keys=prev_prio:{}", defs.join(",")).leak();
        let switch = event("sched", "sched_switch", &SWITCH);
        let inst = Instance(std::vec![
            (
                1,
                switch,
                HistData::build(&parse_trigger(owner).unwrap(), &switch).unwrap()
            ),
            (2, switch, {
                let spec = parse_trigger("keys=next_pid:w=prev_prio").unwrap();
                HistData::build(&spec, &switch).unwrap()
            }),
        ]);
        let uses: Vec<String> = (0..16).map(|i| format!("x{i}=$v{i}")).collect();
        let text: &'static str = format!("keys=common_pid:vals=$w:{}", uses.join(",")).leak();
        let spec = parse_trigger(text).unwrap();
        let ev = event("rhist_test", "rhist_sample", &SAMPLE);
        let mut hd = HistData::empty(&spec);
        let options = BuildOptions {
            vars: Some(&inst),
            ..Default::default()
        };
        let e = HistData::build_into_with(&mut hd, &spec, &ev, options).unwrap_err();
        assert_eq!(
            e.earlier(),
            Some((HistErrorKind::VarNotFound, at(text, "v15")))
        );
        // One less is fine.
        let text: &'static str = format!("keys=common_pid:{}", uses.join(",")).leak();
        let spec = parse_trigger(text).unwrap();
        let mut hd = HistData::empty(&spec);
        HistData::build_into_with(&mut hd, &spec, &ev, options).unwrap();
        assert_eq!(hd.n_var_refs(), 16);
        assert_eq!(hd.ref_hists(), &[1]);
    }

    #[test]
    fn expressions_type_check_with_the_variable() {
        use HistErrorKind::*;
        let hd = build("keys=common_pid:vals=common_timestamp.usecs-$ts0");
        assert_eq!(
            info(&hd),
            "hist:keys=common_pid:vals=hitcount,common_timestamp.usecs-$ts0\
             :sort=hitcount:size=2048:clock=global"
        );
        assert_eq!(refs(&hd), [(0, 0, true)]);
        // 5000 us less the variable's 1200.
        assert_eq!(hd.sum_value_refs(1, &[0; 24], &CTX, &[1200]), 3800);
        for t in [
            "keys=common_pid:vals=common_timestamp-$ts0",
            "keys=common_pid:vals=$ts0+1",
            "keys=common_pid:vals=$ts0-$q",
        ] {
            assert_eq!(err(t), HistError::new(TimestampMismatch, 0), "{t}");
        }
        // A string variable's reference is no string: C lets it through.
        build("keys=common_pid:vals=$s+1");
        // A constant variable divides as a constant, whatever the value
        // read.
        let hd = build("keys=common_pid:vals=a/$c");
        let mut rec = [0u8; 24];
        rec[8] = 12;
        assert_eq!(hd.sum_value_refs(1, &rec, &CTX, &[999]), 3);
        let t = "keys=common_pid:vals=a/$z";
        assert_eq!(err(t), HistError::new(DivisionByZero, at(t, "$z")));
        // Two constants fold; the reference stays, read once.
        let hd = build("keys=common_pid:vals=$c*2");
        assert_eq!(refs(&hd), [(0, 3, true)]);
        assert_eq!(hd.sum_value_refs(1, &rec, &CTX, &[999]), 8);
    }

    #[test]
    fn printed_like_c() {
        let hd = build("keys=common_pid:vals=$ts0,sched.sched_switch.$q:x=sched.sched_waking.$p");
        assert_eq!(
            info(&hd),
            "hist:keys=common_pid:vals=hitcount,$ts0,sched.sched_switch.$q\
             :x=sched.sched_waking.$p:sort=hitcount:size=2048"
        );
        assert_eq!(hd.sum_value_refs(1, &[0; 24], &CTX, &[7, 8, 9]), 7);
        assert_eq!(hd.sum_value_refs(2, &[0; 24], &CTX, &[7, 8, 9]), 8);
        assert_eq!(hd.var_value_refs(0, &[0; 24], &CTX, &[7, 8, 9]), 9);
        let mut s = String::new();
        hd.write_debug_with(&mut s, &"00000000deadbeef", &|out, hist| {
            write!(out, "<{:x}>", hist.unwrap_or(0))
        })
        .unwrap();
        let lines = |from: &str, n: usize| -> Vec<String> {
            let at = s.find(from).unwrap_or_else(|| panic!("{from}: {s}"));
            s[at..].lines().skip(1).take(n).map(String::from).collect()
        };
        assert_eq!(
            lines("hist_data->fields[1]:", 9),
            [
                "      flags:",
                "        HIST_FIELD_FL_VAR_REF",
                "      name: ts0",
                "      var.idx (into tracing_map_elt.vars[]): 0",
                "      var.hist_data: <100>",
                "      var_ref_idx (into hist_data->var_refs[]): 0",
                "      type: u64",
                "      size: 8",
                "      is_signed: 0",
            ]
        );
        assert_eq!(
            lines("hist_data->fields[3]:", 9),
            [
                "      flags:",
                "        HIST_FIELD_FL_VAR",
                "        HIST_FIELD_FL_ALIAS",
                "      var.name: x",
                "      var.idx (into tracing_map_elt.vars[]): 0",
                "      var_ref_idx (into hist_data->var_refs[]): 2",
                "      type: int",
                "      size: 4",
                "      is_signed: 1",
            ]
        );
        assert!(s.contains("\n  key fields:\n"));
        assert!(s.contains("\n  variable reference fields:\n\n    hist_data->var_refs[0]:\n"));
        assert_eq!(
            lines("hist_data->var_refs[1]:", 11),
            [
                "      flags:",
                "        HIST_FIELD_FL_VAR_REF",
                "      name: q",
                "      var.idx (into tracing_map_elt.vars[]): 1",
                "      var.hist_data: <200>",
                "      var_ref_idx (into hist_data->var_refs[]): 1",
                "      system: sched",
                "      event_name: sched_switch",
                "      type: pid_t",
                "      size: 4",
                "      is_signed: 1",
            ]
        );
        assert!(s.ends_with("      is_signed: 1\n"), "{s}");
        assert_eq!(s.matches("\n    hist_data->var_refs[").count(), 3);
    }
}
