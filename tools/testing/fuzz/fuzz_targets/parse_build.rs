// SPDX-License-Identifier: GPL-2.0

//! Fuzzes the whole host path of an rhist trigger: the command parser and
//! its stage parsers, `HistData::build` on a real-looking event, and a
//! small histogram fed with (possibly truncated) event records and printed.
//!
//! Input layout:
//!
//! * byte 0, the selector: bits 0-2 pick the event ([`EVENTS`], modulo),
//!   bit 3 says whether the clock counts ns, bit 4 turns on "spray" mode
//!   (the records are replayed, varied, until the map is full), bits 5-6
//!   give the map bits (7 + n) when the trigger's own `size=` is not in
//!   7..=10;
//! * the trigger text (what follows `rhist:`, filter included), up to the
//!   first NUL byte or the end; not UTF-8 is rejected;
//! * after the NUL, records: a length byte, then that many bytes (fewer if
//!   the input ends first, so short records are common).
//!
//! Besides "nothing panics", it checks a few invariants:
//!
//! * the `hist:` and `rhist:` prefixes give the same result (error kind and
//!   errno), and error carets lie inside prefix + text;
//! * a trigger that builds passes `check_syntax()`, but for the errors of
//!   its actions, which the build leaves to `create_actions()`, and unless
//!   it is one of rhist's extensions, which hist rejects (statistics,
//!   `.min`, `.max`, `.avg`, `.quantiles`; more keys, values or sort keys);
//! * the trigger info line of a built trigger, if it builds again, gives
//!   the same info line;
//! * single-threaded, every update is a hit (in its entry's hitcount) or a
//!   drop;
//! * a trigger with handlers, built against existing events and a few
//!   synthetic events, hands each action one value index per synthetic
//!   field, each within the resolved values.

#![no_main]

use std::fmt::Write as _;
use std::sync::atomic::AtomicU64;

use libfuzzer_sys::fuzz_target;
use rhist_core::hist::error::{HistError, HistErrorKind};
use rhist_core::hist::event::{EventContext, EventDesc, EventField, FieldStorage, COMMON_FIELDS};
use rhist_core::hist::grammar::{self, FieldContext, KeyField, Node, NodeId, TriggerSpec};
use rhist_core::hist::hist_data::{ActionSink, BuildOptions, HistData, SynthField, SynthLookup};
use rhist_core::hist::histogram::{self, Histogram, TaskContext};
use rhist_core::hist::map::TracingMap;
use rhist_core::hist::output::NoSymbols;
use rhist_core::hist::sketch::SketchPool;
use rhist_core::hist::trigger;

use FieldStorage::{Comm, Cpu, DynString, Other, PtrString, RelString, Stacktrace, StaticString};

/// rhist's own test event (tools/testing/rhist_test_events).
const RHIST_SAMPLE: [EventField<'static>; 6] = [
    EventField::new("a", "u64", 8, 8, false, Other),
    EventField::new("b", "u32", 16, 4, false, Other),
    EventField::new("c", "s32", 20, 4, true, Other),
    EventField::new("s", "char[16]", 24, 16, true, StaticString),
    EventField::new("d", "__data_loc char[]", 40, 4, false, DynString),
    EventField::new("ip", "unsigned long", 48, 8, false, Other),
];

const SCHED_WAKING: [EventField<'static>; 4] = [
    EventField::new("comm", "char[16]", 8, 16, true, StaticString),
    EventField::new("pid", "pid_t", 24, 4, true, Other),
    EventField::new("prio", "int", 28, 4, true, Other),
    EventField::new("target_cpu", "int", 32, 4, true, Other),
];

const SYS_ENTER: [EventField<'static>; 2] = [
    EventField::new("id", "long", 8, 8, true, Other),
    EventField::new("args", "unsigned long[6]", 16, 48, false, Other),
];

const KMALLOC: [EventField<'static>; 6] = [
    EventField::new("call_site", "unsigned long", 8, 8, false, Other),
    EventField::new("ptr", "const void *", 16, 8, false, Other),
    EventField::new("bytes_req", "size_t", 24, 8, false, Other),
    EventField::new("bytes_alloc", "size_t", 32, 8, false, Other),
    EventField::new("gfp_flags", "gfp_t", 40, 4, false, Other),
    EventField::new("node", "int", 44, 4, true, Other),
];

/// Not a real event: one field of each remaining storage kind, and sizes
/// the others lack (3, 2, 1 bytes), to reach the odd paths of the build.
const EXOTIC: [EventField<'static>; 8] = [
    EventField::new("r", "__rel_loc char[]", 8, 4, false, RelString),
    EventField::new("p", "char *", 16, 8, false, PtrString),
    EventField::new("comm", "char[16]", 24, 16, true, Comm),
    EventField::new("cpu", "int", 40, 4, true, Cpu),
    EventField::new("odd", "u8[3]", 44, 3, false, Other),
    EventField::new(
        "stack",
        "__data_loc unsigned long[]",
        48,
        4,
        false,
        Stacktrace,
    ),
    EventField::new("w", "u16", 52, 2, false, Other),
    EventField::new("sc", "signed char", 54, 1, true, Other),
];

const EVENTS: [EventDesc<'static>; 5] = [
    EventDesc {
        system: "rhist_test",
        name: "rhist_sample",
        fields: &RHIST_SAMPLE,
        common_fields: &COMMON_FIELDS,
    },
    EventDesc {
        system: "sched",
        name: "sched_waking",
        fields: &SCHED_WAKING,
        common_fields: &COMMON_FIELDS,
    },
    EventDesc {
        system: "raw_syscalls",
        name: "sys_enter",
        fields: &SYS_ENTER,
        common_fields: &COMMON_FIELDS,
    },
    EventDesc {
        system: "kmem",
        name: "kmalloc",
        fields: &KMALLOC,
        common_fields: &COMMON_FIELDS,
    },
    EventDesc {
        system: "rhist_test",
        name: "rhist_exotic",
        fields: &EXOTIC,
        common_fields: &COMMON_FIELDS,
    },
];

/// What the event path asks of the kernel, made up from the input.
struct Ctx {
    cpu: u32,
    ts: u64,
    ns: bool,
    seed: u64,
}

impl EventContext for Ctx {
    fn cpu(&self) -> u32 {
        self.cpu
    }
    fn timestamp(&self) -> u64 {
        self.ts
    }
    fn clock_in_ns(&self) -> bool {
        self.ns
    }
    fn stacktrace(&self, out: &mut [u64]) {
        // A few frames, then the zero terminator (if there is room).
        let depth = (self.seed % 20) as usize;
        for (i, e) in out.iter_mut().enumerate() {
            *e = if i < depth {
                0xffff_ffff_8100_0000 + self.seed.wrapping_mul(i as u64 + 1) % 0x10000
            } else {
                0
            };
        }
    }

    fn comm(&self) -> [u8; 16] {
        let mut comm = [0u8; 16];
        let name = b"rhist-fuzz";
        comm[..name.len()].copy_from_slice(name);
        comm[11] = b'0' + (self.seed % 10) as u8;
        comm
    }
}

impl TaskContext for Ctx {
    fn pid(&self) -> i32 {
        // The idle task and a negative pid have names of their own.
        (self.seed % 5) as i32 - 1
    }
}

fn check_error(e: &HistError, prefix: &str, text: &str) {
    let mut s = String::new();
    let _ = write!(s, "{e} {:?} {:?}", e.message(), e.pos_in_text(prefix.len()));
    assert!(
        e.pos() <= prefix.len() + text.len(),
        "caret {} past the end of {prefix}{text:?}",
        e.pos()
    );
    assert!(e.errno() > 0, "errno {} for {e:?}", e.errno());
}

/// Walks an expression as C's recursion does; cycles would hang C.
fn walk(expr: &grammar::Expr<'_>, id: NodeId, depth: usize, out: &mut String) {
    assert!(depth <= 16, "expression tree deeper than its node count");
    match *expr.node(id) {
        Node::Const { text, value } => {
            let _ = write!(out, "{text}={value}");
        }
        Node::Atom(a) => {
            let _ = write!(
                out,
                "{} {:?} {:?} {} {:?} {:?}",
                a.text(),
                a.system(),
                a.event(),
                a.name(),
                a.context(),
                a.var_ref()
            );
        }
        Node::Neg { text, operand } => {
            let _ = write!(out, "-({text})");
            walk(expr, operand, depth + 1, out);
        }
        Node::Binary {
            op,
            lhs_text,
            rhs_text,
            lhs,
            rhs,
        } => {
            let _ = write!(out, "{lhs_text}{}{rhs_text}", op.symbol());
            walk(expr, lhs, depth + 1, out);
            walk(expr, rhs, depth + 1, out);
        }
        Node::Error(e) => {
            let _ = write!(out, "{e}");
        }
    }
}

/// Runs every stage parser of `spec`, as far as it goes.
fn stages(spec: &TriggerSpec<'_>) {
    let mut out = String::new();
    let _ = write!(
        out,
        "{} {} {:?} {:?} {} {:?} {:?} {:?} {:?} {} {:?} {} {} {} {} {} {} {:?} {:?}",
        spec.prefix(),
        spec.param(),
        spec.filter(),
        spec.filter_expr(),
        spec.keys_attr(),
        spec.vals_attr(),
        spec.sort_attr(),
        spec.name(),
        spec.name_attr(),
        spec.clock(),
        spec.clock_attr(),
        spec.hist_bits(),
        spec.map_size(),
        spec.pause(),
        spec.cont(),
        spec.clear(),
        spec.no_hitcount(),
        spec.map_bits(),
        spec.assignments(),
    );
    assert!(spec.text().len() >= spec.param().len());
    for piece in spec.action_strs() {
        let _ = spec.errpos(piece);
    }
    for handler in spec.actions() {
        let Ok(handler) = handler else { continue };
        let _ = write!(out, "{} {:?}", handler.text(), handler.handler());
        if let Ok(action) = handler.action() {
            let params = action.params();
            let _ = write!(
                out,
                "{:?} {} {:?} {} {} {} {:?}",
                action.kind(),
                action.name(),
                action.synth_event(),
                params.text(),
                params.len(),
                params.is_empty(),
                params.synth_name()
            );
            let n = params.iter().take(100).count();
            assert!(n <= 100);
        }
    }
    let defs = spec.var_defs();
    let vals = spec.vals();
    let _ = (vals.too_many_error(), vals.nohitcount_error());
    let keys = spec.keys();
    let _ = keys.too_many_error();
    if let Some(sort) = spec.sort_keys() {
        for key in sort.keys() {
            let _ = (key.text(), key.name(), key.modifier(), key.descending());
        }
        let _ = sort.error();
    }

    let mut exprs: Vec<(&str, FieldContext)> = Vec::new();
    exprs.extend(vals.fields().iter().map(|f| (*f, FieldContext::Val)));
    for key in keys.fields() {
        if let KeyField::Expr(text) = key {
            exprs.push((text, FieldContext::Key));
        }
        let _ = key.text();
    }
    if let Ok(defs) = &defs {
        for def in defs.iter() {
            exprs.push((def.expr, FieldContext::Var));
            let _ = spec.field_name_from_var(defs, def.name);
        }
    }
    for (text, ctx) in exprs {
        let expr = spec.parse_expr(text, ctx);
        let _ = (expr.text(), expr.context(), expr.error(), expr.operators());
        walk(&expr, expr.root(), 0, &mut out);
        for ctx in [ctx, FieldContext::Operand] {
            let f = spec.parse_field(text, ctx);
            let _ = (
                f.text(),
                f.name(),
                f.modifier_text(),
                f.modifier(),
                f.special(),
            );
        }
    }
}

/// Per-input records, at most this many.
const RECORDS_MAX: usize = 64;

fn records(mut rest: &[u8]) -> Vec<&[u8]> {
    let mut recs = Vec::new();
    while let Some((&len, tail)) = rest.split_first() {
        if recs.len() == RECORDS_MAX {
            break;
        }
        let n = usize::from(len).min(tail.len());
        recs.push(&tail[..n]);
        rest = &tail[n..];
    }
    recs
}

/// The storage of the sketches of `data`'s `.quantiles` values, if any.
fn sketch_storage(data: &HistData<'_>) -> Vec<AtomicU64> {
    let words = data
        .sketch_params()
        .map_or(0, |p| p.storage_words().expect("a map's pool"));
    (0..words).map(|_| AtomicU64::new(0)).collect()
}

/// The sketches' pool of `data` over `storage` ([`sketch_storage`]).
fn sketch_pool<'a>(data: &HistData<'_>, storage: &'a [AtomicU64]) -> Option<SketchPool<'a>> {
    data.sketch_params()
        .map(|p| SketchPool::new(p, storage).expect("pool over storage_words() words"))
}

/// Builds a histogram for `data`, feeds it the records and prints it.
/// The records come from CPUs 0 to 6 (`cpu`, below), the map keeps sums
/// for three: the others add to CPU 0's.
fn run_histogram(data: HistData<'_>, recs: &[&[u8]], selector: u8) {
    let params = histogram::map_params(&data, 3);
    let Ok(words) = params.storage_words() else {
        return;
    };
    let storage: Vec<AtomicU64> = (0..words).map(|_| AtomicU64::new(0)).collect();
    let map = TracingMap::new(params, &storage).expect("map over storage_words() words");
    let max_elts = map.max_elts();
    let pool_storage = sketch_storage(&data);
    let pool = sketch_pool(&data, &pool_storage);
    let hist = Histogram::with_sketches(&data, map, pool).expect("map built with map_params()");

    let ns = selector & 0x08 != 0;
    let spray = selector & 0x10 != 0;
    let mut updates = 0u64;
    let mut ts = 1_000_000_000u64;
    let mut feed = |rec: &[u8], i: usize| {
        ts = ts.wrapping_add(rec.len() as u64 * 977 + 1);
        let ctx = Ctx {
            cpu: (i % 7) as u32,
            ts,
            ns,
            seed: i as u64 ^ rec.first().copied().unwrap_or(0) as u64,
        };
        hist.update(rec, &ctx);
        updates += 1;
    };
    for (i, rec) in recs.iter().enumerate() {
        feed(rec, i);
    }
    if spray && !recs.is_empty() {
        let mut buf = [0u8; 256];
        for i in 0..max_elts + 64 {
            let rec = recs[i % recs.len()];
            let buf = &mut buf[..rec.len()];
            buf.copy_from_slice(rec);
            for (j, b) in buf.iter_mut().enumerate().skip(8) {
                *b ^= (i as u8).wrapping_mul(j as u8 | 1) ^ (i >> 8) as u8;
            }
            feed(buf, i);
        }
    }

    // The event path counts a hit in its entry's hitcount only (the
    // map's own count stays 0): their total is the Totals' Hits.
    assert_eq!(
        hist.hits() + hist.map().drops(),
        updates,
        "every update is a hit or a drop"
    );

    let mut order = vec![0u32; max_elts];
    let mut out = String::new();
    hist.print(&mut out, &NoSymbols, &mut order)
        .expect("printing to a String");
    assert!(out.contains("Totals:"), "no Totals in {out:?}");
}

/// Synthetic events: `lat u64 lat; pid_t pid; char comm[16]` and
/// `dyn char name[]; unsigned long stack[]`.
struct Synths;

const fn synth_field(
    type_name: &'static str,
    size: u32,
    string: bool,
    dynamic: bool,
    stack: bool,
) -> SynthField<'static> {
    SynthField {
        type_name,
        size,
        signed: false,
        string,
        dynamic,
        stack,
    }
}

const LAT: [SynthField<'static>; 3] = [
    synth_field("u64", 8, false, false, false),
    synth_field("pid_t", 4, false, false, false),
    synth_field("char[16]", 16, true, false, false),
];
const DYN: [SynthField<'static>; 2] = [
    synth_field("char[]", 0, true, true, false),
    synth_field("unsigned long[]", 0, false, true, true),
];

impl Synths {
    fn fields(name: &str) -> Option<&'static [SynthField<'static>]> {
        match name {
            "lat" => Some(&LAT),
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

/// Checks what an action hands the shell.
struct CheckSink<'d>(&'d HistData<'d>);

impl ActionSink for CheckSink<'_> {
    fn trace(&self, action: usize, vals: &[u64], var_ref_idx: &[u32]) {
        let synth = self
            .0
            .action_synth_event(action)
            .expect("an action has its event");
        let n = Synths::fields(synth)
            .expect("a known synthetic event")
            .len();
        assert_eq!(var_ref_idx.len(), n, "one index per field of {synth}");
        assert!(var_ref_idx.iter().all(|&i| (i as usize) < vals.len()));
    }

    fn snapshot(&self, _: u64, key: &[u8], _: &[u8; 16]) {
        assert!(
            self.0.snapshot_action().is_some(),
            "a snapshot needs a snapshot() action"
        );
        assert_eq!(key.len(), self.0.key_size(), "the entry's whole key");
    }
}

/// Builds `spec` with its actions, against existing events and
/// [`Synths`], and feeds its histogram the records.
fn run_actions(spec: &TriggerSpec<'_>, event: &EventDesc<'_>, recs: &[&[u8]]) {
    let exists = |_: &str, _: &str| true;
    let enable = || Ok(());
    let options = BuildOptions {
        synths: Some(&Synths),
        event_exists: Some(&exists),
        enable_snapshot: Some(&enable),
        ..Default::default()
    };
    let mut data = HistData::empty(spec);
    let built = HistData::build_into_with(&mut data, spec, event, options)
        .and_then(|()| data.create_actions(event, options));
    if let Err(e) = built {
        check_error(&e, trigger::PREFIX, spec.text());
        return;
    }
    let mut debug = String::new();
    data.write_debug(&mut debug, &"0")
        .expect("writing to a String");
    let params = histogram::map_params(&data, 1);
    let Ok(words) = params.storage_words() else {
        return;
    };
    if data.map_bits() > 10 {
        return;
    }
    let storage: Vec<AtomicU64> = (0..words).map(|_| AtomicU64::new(0)).collect();
    let map = TracingMap::new(params, &storage).expect("map over storage_words() words");
    let pool_storage = sketch_storage(&data);
    let pool = sketch_pool(&data, &pool_storage);
    let hist = Histogram::with_sketches(&data, map, pool).expect("map built with map_params()");
    for (i, rec) in recs.iter().enumerate() {
        let ctx = Ctx {
            cpu: 0,
            ts: 1_000 + i as u64,
            ns: true,
            seed: i as u64,
        };
        hist.update_with_refs(rec, &ctx, &[], &CheckSink(&data));
    }
}

/// The info line of `data` without `rhist:`.
fn info(data: &HistData<'_>) -> String {
    let mut s = String::new();
    data.write_info(&mut s, trigger::PREFIX)
        .expect("writing to a String");
    s.strip_prefix(trigger::PREFIX)
        .expect("the info line starts with the prefix")
        .to_owned()
}

fuzz_target!(|input: &[u8]| {
    let Some((&selector, rest)) = input.split_first() else {
        return;
    };
    let (text, recs) = match rest.iter().position(|&b| b == 0) {
        Some(nul) => (&rest[..nul], &rest[nul + 1..]),
        None => (rest, &[][..]),
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let event = &EVENTS[usize::from(selector & 7) % EVENTS.len()];

    // The command, as rhist parses it.
    let parsed = trigger::parse(text);
    if let Err(e) = &parsed {
        check_error(e, trigger::PREFIX, text);
    }
    // The same with hist's prefix: only carets may differ.
    let hist = grammar::parse_trigger(text);
    match (&parsed, &hist) {
        (Ok(_), Ok(_)) => {}
        (Err(a), Err(b)) => {
            check_error(b, grammar::HIST_PREFIX, text);
            assert_eq!(
                (a.kind(), a.errno()),
                (b.kind(), b.errno()),
                "rhist: and hist: disagree"
            );
        }
        _ => panic!("rhist: gives {parsed:?}, hist: gives {hist:?}"),
    }

    // The stage parsers, on anything the first stage takes.
    let spec = match grammar::parse_trigger_in(trigger::PREFIX, text) {
        Ok(spec) => spec,
        Err(e) => {
            check_error(&e, trigger::PREFIX, text);
            assert!(
                parsed.is_err(),
                "parse_trigger_in fails, trigger::parse not"
            );
            return;
        }
    };
    stages(&spec);
    let syntax = spec.check_syntax();
    if let Err(e) = &syntax {
        check_error(e, trigger::PREFIX, text);
    }

    if !spec.action_strs().is_empty() {
        run_actions(&spec, event, &records(recs));
    }
    let data = match HistData::build(&spec, event) {
        Ok(data) => data,
        Err(e) => {
            check_error(&e, trigger::PREFIX, text);
            return;
        }
    };
    // What C finds in create_actions(), after registration, the build
    // leaves to HistData::create_actions(); statistics are rhist's.
    let later = matches!(
        syntax.map_err(|e| e.kind()),
        Err(Some(
            HistErrorKind::OnxNotVar | HistErrorKind::TooManySaveActions
        ))
    );
    assert!(
        syntax.is_ok() || later || data.beyond_hist(),
        "builds on {}:{}, but check_syntax() gives {syntax:?}",
        event.system,
        event.name
    );
    let _ = (
        data.spec(),
        data.key_size(),
        data.needs_comm(),
        data.uses_timestamps(),
        data.ts_in_usecs(),
        data.sort_keys(),
        data.printed_vals().count(),
    );

    // The info line, if it reads back (C's does not always: it prints
    // sort keys with their key's modifier, `sort=lat.log2`), must describe
    // the same trigger.
    let line = info(&data);
    if let Ok(again) = trigger::parse(&line).and_then(|s| HistData::build(&s, event)) {
        assert_eq!(info(&again), line, "info line changes when re-read");
    }

    // The histogram, on a small map: triggers asking for more than
    // 2^10 entries are given a size= in 7..=10.
    let recs = records(recs);
    let bits = data.map_bits();
    if (7..=10).contains(&bits) {
        run_histogram(data, &recs, selector);
    } else {
        let small = 1u32 << (7 + u32::from((selector >> 5) & 3));
        let text = format!("{}:size={small}", spec.param());
        let Ok(spec) = grammar::parse_trigger_in(trigger::PREFIX, &text) else {
            return;
        };
        if let Ok(data) = HistData::build(&spec, event) {
            assert!((7..=10).contains(&data.map_bits()));
            run_histogram(data, &recs, selector);
        }
    }
});
