// SPDX-License-Identifier: GPL-2.0

//! The tests of the histogram: its update, printing and sorting.

use super::super::event::{EventDesc, EventField, FieldStorage};
use super::super::trigger;
use super::*;
use crate::testing::{
    map_storage, print_of, record, sample_event, zeros, NoSink, Task, VarsOf, EVENT, FIELD_A,
    FIELD_B, FIELD_C, TASK,
};
use core::sync::atomic::AtomicU64;
use std::string::String;
use std::vec::Vec;

use super::super::program::At;

/// Where the events run, for the keys that read none of it.
const NOWHERE: At = At {
    cpu: 0,
    comm: [0; 16],
};

/// A task of pid 42 named `bash`, on CPU 1.
const CTX: Task = Task { cpu: 1, ..TASK };

/// Runs `text` over `records` and returns the entries and Totals.
fn run(text: &str, records: &[[u8; 24]]) -> String {
    run_as(&CTX, text, records)
}

/// Runs `text` over `records` fired by the task `ctx`.
fn run_as(ctx: &Task, text: &str, records: &[[u8; 24]]) -> String {
    with_hist(text, |hist| {
        for r in records {
            hist.update(r, ctx);
        }
        print_of(hist)
    })
}

/// Calls `f` with a histogram of `text` on the test event.
fn with_hist<R>(text: &str, f: impl FnOnce(&Histogram<'_>) -> R) -> R {
    let spec = trigger::parse(text).unwrap();
    let data = HistData::build(&spec, &EVENT).unwrap();
    let params = map_params(&data, 1);
    let storage = map_storage(&params);
    let map = TracingMap::new(params, &storage).unwrap();
    f(&Histogram::new(&data, map).unwrap())
}

/// The event of the program tests: the test event's numbers, then
/// strings of every kind.
const STR_FIELDS: [EventField<'static>; 6] = [
    FIELD_A,
    FIELD_B,
    FIELD_C,
    EventField::new("s", "char[12]", 24, 12, true, FieldStorage::StaticString),
    EventField::new(
        "d",
        "__data_loc char[]",
        36,
        4,
        true,
        FieldStorage::DynString,
    ),
    EventField::new(
        "r",
        "__rel_loc char[]",
        40,
        4,
        true,
        FieldStorage::RelString,
    ),
];

const STR_EVENT: EventDesc<'static> = sample_event(&STR_FIELDS);

/// A record of [`STR_EVENT`]: `a`, `b`, `c`, then 52 bytes from
/// `tail` (the strings and what the locations point at).
fn str_record(a: u64, b: u32, c: i32, tail: &[u8; 52]) -> [u8; 76] {
    let mut r = [0u8; 76];
    r[..24].copy_from_slice(&record(a, b, c));
    r[24..].copy_from_slice(tail);
    r
}

/// The entries, sums and Totals of `text` over `records`, each cut
/// to its length, by the compiled program and by the general path;
/// whether `text` was compiled. The compiled program's map keeps its
/// sums per CPU, for 3 CPUs, and the records come from 4 in turn;
/// the general path's prints the same, whether per CPU or not.
fn both_paths(text: &str, records: &[([u8; 76], usize)]) -> (String, String, bool) {
    let spec = trigger::parse(text).unwrap();
    let data = HistData::build(&spec, &STR_EVENT).expect(text);
    let mut outs = [String::new(), String::new(), String::new()];
    let mut compiled = false;
    let ways = [(false, 3), (true, 1), (true, 3)];
    for ((interpret, n_cpus), out) in ways.into_iter().zip(outs.iter_mut()) {
        let params = map_params(&data, n_cpus);
        assert_eq!(params.n_cpus, n_cpus, "{text}");
        let storage = map_storage(&params);
        // The `.quantiles` values' sketches, if any.
        let words = data
            .sketch_params()
            .map_or(0, |p| p.storage_words().unwrap());
        let pool_storage = zeros(words);
        let pool = (data.sketch_params()).map(|p| SketchPool::new(p, &pool_storage).unwrap());
        let map = TracingMap::new(params, &storage).unwrap();
        let mut hist = Histogram::with_sketches(&data, map, pool).unwrap();
        if interpret {
            hist = hist.interpreted();
        } else {
            compiled = hist.program().is_some();
        }
        for (i, (r, len)) in records.iter().enumerate() {
            hist.update(&r[..*len], &CTX.on(i as u32 % 4));
        }
        let mut order = std::vec![0u32; hist.map().max_elts()];
        hist.print(out, &output::NoSymbols, &mut order).unwrap();
    }
    let [compiled_out, interpreted_out, interpreted_per_cpu] = outs;
    assert_eq!(interpreted_out, interpreted_per_cpu, "{text}");
    (compiled_out, interpreted_out, compiled)
}

/// The shapes the program compiles, and some it leaves to the
/// general path; with statistics (of signed and unsigned numbers of
/// 4 and 8 bytes, last or not, after plain sums or not, two of them;
/// three are more sums than a program has) and `.quantiles` (in
/// small maps: pools of 512 pages).
const PROGRAM_SHAPES: [(&str, bool); 42] = [
    ("keys=a:vals=b.max", true),
    ("keys=a:vals=b.min", true),
    ("keys=a:vals=c.max", true),
    ("keys=a:vals=c.min", true),
    ("keys=c:vals=a.max", true),
    ("keys=b:vals=a.min", true),
    ("keys=a:vals=c.avg", true),
    ("keys=a:vals=b,c.min", true),
    ("keys=a:vals=c.max,b", true),
    ("keys=a:vals=b.min,c.max", true),
    ("keys=a,b:vals=c.min", true),
    ("keys=s:vals=c.max", true),
    ("keys=a.log2:vals=c.max", true),
    ("keys=a:vals=b.quantiles:size=128", true),
    ("keys=c:vals=a.quantiles:size=128", true),
    ("keys=a:vals=c.min,b.quantiles:size=128", true),
    ("keys=a:vals=b.quantiles,a.quantiles:size=128", true),
    ("keys=d:vals=b.max", false),
    ("keys=a:vals=b.max,c.min,c.max", false),
    ("keys=a", true),
    ("keys=b", true),
    ("keys=c", true),
    ("keys=common_pid", true),
    ("keys=a,b,c:vals=a,b", true),
    ("keys=c,b:vals=c:sort=c", true),
    ("keys=a.log2:vals=b", true),
    ("keys=c.log2:vals=c", true),
    ("keys=b.buckets=100:vals=a,c", true),
    ("keys=c.hex,a.sym:vals=b.hex", true),
    ("keys=a:vals=b:nohitcount", true),
    ("keys=s", true),
    ("keys=s,a,b:vals=c", true),
    ("keys=c,s:vals=a", true),
    ("keys=b,s,a.buckets=3", true),
    ("keys=a.log2,b.buckets=10:vals=b,c", true),
    ("keys=d:vals=a", true),
    ("keys=r,c", true),
    ("keys=s,a,d:vals=b", true),
    ("keys=common_pid.execname", false),
    ("keys=a:x=b:vals=b", false),
    ("keys=a:vals=b+c", false),
    ("keys=stacktrace", false),
];

/// A compact key (a long string slot as its used words), and a string
/// key of one string alone, hash as their bytes do, store them, and
/// find what they insert; they are built for the same records.
#[test]
fn compact_keys_are_their_bytes() {
    use super::super::map::{key_hash, MapKey};
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    // Keys too long for a compact key (the whole key is built then).
    let mut too_long = 0;
    for text in ["keys=d", "keys=d:vals=a", "keys=r,c", "keys=s,a,d:vals=b"] {
        let spec = trigger::parse(text).unwrap();
        let data = HistData::build(&spec, &STR_EVENT).unwrap();
        let p = data.program().unwrap();
        let words = p.key_words();
        let params = map_params(&data, 1);
        let storage = map_storage(&params);
        let map = TracingMap::new(params, &storage).unwrap();
        let mut compact = 0;
        let mut strings = 0;
        let mut seen: Vec<Vec<u64>> = Vec::new();
        for _ in 0..2000 {
            // Strings of 0 to 55 letters after the record, both
            // locations on them, their lengths counting the NUL, or
            // not, or cutting the string. Half the strings are
            // prefixes of each other, so that one cut at a word is met
            // with its longer kin.
            let n = rand() % 56;
            let regular = rand() % 2 == 0;
            let mut rec = [0u8; 136];
            let mut tail = [0u8; 52];
            let len = match rand() % 3 {
                0 => n + 1,
                1 => n,
                _ => n.saturating_sub(rand() % 9),
            };
            let item = (76 | len << 16) as u32;
            tail[12..16].copy_from_slice(&item.to_ne_bytes());
            let rel = (32 | len << 16) as u32;
            tail[16..20].copy_from_slice(&rel.to_ne_bytes());
            rec[..76].copy_from_slice(&str_record(rand() % 4, 0, (rand() % 3) as i32, &tail));
            for (i, b) in rec[76..76 + n as usize].iter_mut().enumerate() {
                *b = match regular {
                    true => b'a' + (i % 3) as u8,
                    false => b'a' + (rand() % 3) as u8 + i as u8 % 2,
                };
            }
            let full = p.key::<KEY_WORDS_MAX>(&rec, NOWHERE);
            let bytes: Vec<u8> = full[..words].iter().flat_map(|w| w.to_ne_bytes()).collect();
            let mut key = CompactKey::EMPTY;
            let compacted = p.compact_key(&rec, NOWHERE, &mut key);
            if !compacted && p.one_string() {
                let mut one = StrKey::EMPTY;
                assert!(!p.string_key(&rec, &mut one), "{text}");
            }
            if seen.len() < 300 {
                seen.push(full[..words].to_vec());
            }
            if !compacted {
                continue;
            }
            compact += 1;
            assert_eq!((&key).hash(words), key_hash(&bytes, words * 8), "{text}");
            if p.one_string() {
                let mut one = StrKey::EMPTY;
                assert!(p.string_key(&rec, &mut one), "{text}");
                assert_eq!((&one).hash(words), key_hash(&bytes, words * 8), "{text}");
                for other in &seen {
                    let slots: Vec<AtomicU64> = other.iter().map(|&w| AtomicU64::new(w)).collect();
                    assert_eq!((&one).matches(&slots), *other == full[..words], "{text}");
                }
                let stored: Vec<AtomicU64> = (0..words).map(|_| AtomicU64::new(7)).collect();
                (&one).store(&stored);
                let stored: Vec<u64> = stored.iter().map(|w| w.load(Ordering::Relaxed)).collect();
                assert_eq!(stored, full[..words], "{text}");
                strings += 1;
            }
            // It matches exactly the stored keys equal to it, whatever
            // their hash.
            for other in &seen {
                let slots: Vec<AtomicU64> = other.iter().map(|&w| AtomicU64::new(w)).collect();
                assert_eq!((&key).matches(&slots), *other == full[..words], "{text}");
            }
            let elt = map.elt(map.event_insert_key(&key, Inserter::ANYWHERE).unwrap());
            let elt = elt.unwrap();
            assert!(elt.key_eq(&bytes), "{text}");
            assert_eq!(map.lookup(&bytes).unwrap().index(), elt.index(), "{text}");
            assert_eq!(map.insert(&bytes).unwrap().index(), elt.index(), "{text}");
        }
        assert!(compact > 1000, "{text}: {compact}");
        assert_eq!(strings > 0, text.starts_with("keys=d"), "{text}");
        too_long += 2000 - compact;
        assert!(map.len() > 20, "{text}: {}", map.len());
    }
    assert!(too_long > 0);
}

/// The compiled program's sketches are the general path's when the
/// pool runs dry: the same values are placed, in the same pages, and
/// the same are left unplaced; a `.quantiles` value last alone, and
/// after another statistic.
#[test]
fn sketches_match_the_general_path_in_a_dry_pool() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let records: Vec<([u8; 76], usize)> = (0..3000u64)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // 100 entries, values over 30 powers of two: 3000 pages
            // wanted, 512 in the pool.
            let b = (x >> 16) as u32 >> (x % 31);
            (str_record(i % 100, b, x as i32, &[0; 52]), 76)
        })
        .collect();
    for text in [
        "keys=a:vals=b.quantiles:size=128",
        "keys=a:vals=c.min,b.quantiles:size=128",
        "keys=a:vals=b.quantiles,c.max:size=128",
    ] {
        let (compiled, interpreted, was) = both_paths(text, &records);
        assert!(was, "{text}");
        assert_eq!(compiled, interpreted, "{text}");
        assert!(compiled.contains("pages: 512/512"), "{text}: {compiled}");
        assert!(!compiled.contains("unplaced: 0"), "{text}: {compiled}");
    }
}

/// What the event path runs with, in a form to compare: the program,
/// its shape and constants.
fn event_path_of(hist: &Histogram<'_>) -> String {
    std::format!(
        "{:?} {:?} {:?} {:?} {:?} {:?} {} {} {} {}",
        hist.program,
        hist.shape,
        hist.sums_index,
        hist.last_sketch,
        hist.ops,
        hist.sketch_of,
        hist.needs_comm,
        hist.has_copies,
        hist.event_copies,
        hist.has_stats,
    )
}

#[test]
fn histogram_built_in_place_is_the_one_built_on_the_stack() {
    for (text, _) in PROGRAM_SHAPES {
        let spec = trigger::parse(text).unwrap();
        let data = HistData::build(&spec, &STR_EVENT).expect(text);
        let params = map_params(&data, 3);
        let words = data
            .sketch_params()
            .map_or(0, |p| p.storage_words().unwrap());
        let (storage, pool_storage) = (map_storage(&params), zeros(words));
        let pool = || (data.sketch_params()).map(|p| SketchPool::new(p, &pool_storage).unwrap());
        let map = || TracingMap::new(params, &storage).unwrap();
        let on_stack = Histogram::with_sketches(&data, map(), pool()).unwrap();
        let mut slot = MaybeUninit::uninit();
        let in_place = Histogram::with_sketches_in(&mut slot, &data, map(), pool()).unwrap();
        assert_eq!(event_path_of(in_place), event_path_of(&on_stack), "{text}");
        in_place.interpret();
        assert_eq!(
            event_path_of(in_place),
            event_path_of(&on_stack.interpreted()),
            "{text}"
        );
    }
}

#[test]
fn program_compiled_in_place_is_none_when_it_does_not_compile() {
    fn compiled(text: &'static str) -> HistData<'static> {
        let spec = trigger::parse(text).unwrap();
        HistData::build(&spec, &STR_EVENT).expect(text)
    }
    let mut program = Program::NONE;
    assert!(compiled("keys=a:vals=b").program_in(&mut program));
    assert_ne!(program, Program::NONE);
    // A compiled program is overwritten, whether or not the next one
    // compiles, and by the general path's none if it does not.
    let mut none = 0;
    for (text, _) in PROGRAM_SHAPES {
        assert!(compiled("keys=a:vals=b").program_in(&mut program));
        let data = compiled(text);
        let want = data.program();
        assert_eq!(data.program_in(&mut program), want.is_some(), "{text}");
        assert_eq!(program, want.unwrap_or(Program::NONE), "{text}");
        none += usize::from(want.is_none());
    }
    assert!(none > 0);
}

#[test]
fn program_compiles_the_common_shapes() {
    for (text, want) in PROGRAM_SHAPES {
        let (_, _, compiled) = both_paths(text, &[]);
        assert_eq!(compiled, want, "{text}");
    }
}

proptest::proptest! {
    /// The compiled program and the general path give the same
    /// histogram, for records cut short and string locations that
    /// point anywhere included.
    #[test]
    fn program_matches_the_general_path(
        recs in proptest::collection::vec(
            (proptest::prop_oneof![0u64..8, proptest::num::u64::ANY],
             proptest::prop_oneof![0u32..4, proptest::num::u32::ANY],
             proptest::prop_oneof![-2i32..2, proptest::num::i32::ANY],
             proptest::collection::vec(
                 proptest::prop_oneof![0u8..1, 97u8..100, proptest::num::u8::ANY], 52),
             proptest::prop_oneof![76usize..77, 0usize..76]),
            0..100),
    ) {
        let records: Vec<([u8; 76], usize)> = recs
            .iter()
            .map(|(a, b, c, tail, len)| {
                (str_record(*a, *b, *c, tail.as_slice().try_into().unwrap()), *len)
            })
            .collect();
        for (text, _) in PROGRAM_SHAPES {
            let (compiled, interpreted, _) = both_paths(text, &records);
            proptest::prop_assert_eq!(compiled, interpreted, "{}", text);
        }
    }
}

#[test]
fn execname_of_idle_and_negative_pids_like_hist() {
    let records = [record(1, 10, -1)];
    for (pid, name) in [(42, "bash"), (0, "<idle>"), (-1, "<XXX>")] {
        let out = run_as(&Task { pid, ..CTX }, "keys=common_pid.execname", &records);
        let line = out.lines().find(|l| l.starts_with("{ ")).unwrap();
        assert!(
            line.starts_with(&std::format!("{{ common_pid: {name:<16}[")),
            "pid {pid}: {line}"
        );
    }
}

/// A task named `bash` whose stack is two frames deep.
const DEEP: Task = Task {
    pid: 7,
    ts: 0,
    stack: [0xffff_ffff_8100_0010, 0xffff_ffff_8100_0020, 0],
    ..TASK
};

/// An event with a number `a` and a `char s[8]`.
fn string_event() -> EventDesc<'static> {
    static STR_FIELDS: [EventField<'static>; 2] = [
        FIELD_A,
        EventField::new("s", "char[8]", 16, 8, false, FieldStorage::StaticString),
    ];
    EventDesc {
        fields: &STR_FIELDS,
        ..EVENT
    }
}

/// String, stack trace and `.execname` variables copy into the entry
/// (after the saved comm), and the variable holds the copy's slot.
#[test]
fn variables_copy_strings_into_the_entry() {
    let event = string_event();
    let text = "keys=a:n=a,x=s,t=common_stacktrace,e=common_pid.execname";
    let spec = trigger::parse(text).unwrap();
    let data = HistData::build(&spec, &event).unwrap();
    let params = map_params(&data, 1);
    assert_eq!(params.n_private, COMM_WORDS + 3 * vars::STR_VAR_WORDS);
    let storage = map_storage(&params);
    let hist = Histogram::new(&data, TracingMap::new(params, &storage).unwrap()).unwrap();
    // s is not NUL-terminated: strscpy() stops at the bound, 7 bytes.
    let mut rec = [0u8; 24];
    rec[8] = 5;
    rec[16..24].copy_from_slice(b"abcdefgh");
    hist.update(&rec, &DEEP);
    let elt = hist.map().lookup(&5u64.to_ne_bytes()).unwrap();
    let words: Vec<u64> = elt
        .private_words()
        .iter()
        .map(|w| w.load(Ordering::Relaxed))
        .collect();
    let copy =
        |slot: usize| &words[COMM_WORDS + slot * vars::STR_VAR_WORDS..][..vars::STR_VAR_WORDS];
    let bytes = |w: &[u64]| w.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
    assert_eq!(&bytes(copy(0))[..9], b"abcdefg\0\0");
    assert_eq!(
        &copy(1)[..4],
        &[2, 0xffff_ffff_8100_0010, 0xffff_ffff_8100_0020, 0]
    );
    assert_eq!(&bytes(copy(2))[..6], b"bash\0\0");
    assert!(bytes(copy(0))[8..].iter().all(|&b| b == 0));
    assert_eq!(
        (0..4).map(|i| elt.read_var(i)).collect::<Vec<_>>(),
        [5, 0, 1, 2]
    );
}

#[test]
fn counts_and_sums_like_hist() {
    let records = [record(1, 10, -1), record(2, 5, 3), record(1, 7, -2)];
    assert_eq!(
        run("keys=a:vals=b,c", &records),
        "{ a:          2 } hitcount:          1  b:          5  c:          3\n\
         { a:          1 } hitcount:          2  b:         17  c: 18446744073709551613\n\
         \nTotals:\n    Hits: 3\n    Entries: 2\n    Dropped: 0\n"
    );
}

#[test]
fn nohitcount_still_spaces_values() {
    let records = [record(1, 10, 0)];
    assert_eq!(
        run("keys=a:vals=b:nohitcount", &records),
        "{ a:          1 }  b:         10\n\
         \nTotals:\n    Hits: 1\n    Entries: 1\n    Dropped: 0\n"
    );
}

#[test]
fn execname_keys_keep_the_comm() {
    let records = [record(1, 10, 0)];
    assert_eq!(
        run("keys=common_pid.execname", &records),
        "{ common_pid: bash            [        42] } hitcount:          1\n\
         \nTotals:\n    Hits: 1\n    Entries: 1\n    Dropped: 0\n"
    );
}

/// `common_comm` keys hold the task's name, on the general path;
/// a `common_comm` variable copies it into the entry.
#[test]
fn common_comm_keys_and_variables() {
    let records = [record(1, 10, 0), record(2, 5, 0), record(1, 7, 0)];
    assert_eq!(
        run("keys=common_comm:vals=b", &records),
        std::format!(
            "{{ common_comm: {:<50} }} hitcount:          3  b:         22\n\
             \nTotals:\n    Hits: 3\n    Entries: 1\n    Dropped: 0\n",
            "bash"
        )
    );
    with_hist("keys=a:c=common_comm", |hist| {
        assert!(!hist.needs_comm);
        hist.update(&record(1, 10, 0), &CTX);
        let elt = hist.map().lookup(&1u64.to_ne_bytes()).unwrap();
        let words: Vec<u64> = elt
            .private_words()
            .iter()
            .map(|w| w.load(Ordering::Relaxed))
            .collect();
        assert_eq!(words.len(), vars::STR_VAR_WORDS);
        assert_eq!(words[0].to_ne_bytes(), *b"bash\0\0\0\0");
        assert!(words[1..].iter().all(|&w| w == 0));
        assert_eq!(elt.read_var(0), 0);
    });
}

/// `common_comm` keys take the compiled path, alone (its own shape,
/// with plain sums and statistics) and beside numbers and strings of
/// the record (a compact key), and count what the general path counts:
/// names of every length, one of 16 bytes with no NUL (15 kept), and
/// names with bytes after their NUL, from 4 CPUs.
#[test]
fn common_comm_keys_are_compiled() {
    let names: [&[u8; 16]; 7] = [
        b"bash\0\0\0\0\0\0\0\0\0\0\0\0",
        b"\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
        b"0123456789abcdef",
        b"0123456789abcde\0",
        b"01234567\089abcde",
        b"ab\0garbage123456",
        b"kworker/0:1\0\0\0\0\0",
    ];
    let mut tail = [0u8; 52];
    tail[..12].copy_from_slice(b"rec\0\0\0\0\0\0\0\0\0");
    tail[12..16].copy_from_slice(&(60u32 | 9 << 16).to_ne_bytes());
    tail[36..45].copy_from_slice(b"dstring!\0");
    for text in [
        "keys=common_comm",
        "keys=common_comm:vals=b",
        "keys=a,common_comm",
        "keys=common_comm,c,a:vals=b,a",
        "keys=s,common_comm",
        "keys=common_comm,d",
        "keys=d,common_comm,a:vals=b",
        "keys=common_comm:vals=b.max,c",
    ] {
        let spec = trigger::parse_ext_as(&trigger::RHIST, text).unwrap();
        let data = HistData::build(&spec, &STR_EVENT).expect(text);
        let shape = Shape::of(&data.program().unwrap());
        let alone = matches!(text, "keys=common_comm" | "keys=common_comm:vals=b")
            || text.starts_with("keys=common_comm:vals=b.max");
        assert_eq!(shape == Shape::Comm, alone, "{text}");
        let mut outs = [String::new(), String::new()];
        for (compiled, out) in [true, false].into_iter().zip(outs.iter_mut()) {
            let params = map_params(&data, 4);
            let storage = map_storage(&params);
            let map = TracingMap::new(params, &storage).unwrap();
            let mut hist = Histogram::new(&data, map).unwrap();
            if !compiled {
                hist = hist.interpreted();
            }
            assert_eq!(hist.program().is_some(), compiled, "{text}");
            for i in 0..70u32 {
                let rec = str_record(u64::from(i % 5), i % 3, 0, &tail);
                let comm = *names[i as usize % names.len()];
                let cpu = i % 4;
                match compiled {
                    true => assert!(hist.update_compiled(&rec, At { cpu, comm }, || {})),
                    false => hist.update_general(&rec, &Task { cpu, comm, ..TASK }),
                }
            }
            let mut order = std::vec![0u32; hist.map().max_elts()];
            hist.print(out, &output::NoSymbols, &mut order).unwrap();
        }
        assert_eq!(outs[0], outs[1], "{text}");
        assert!(outs[0].contains("Entries: "), "{text}");
    }
}

/// The general path builds each key in a buffer of zeros (`write_key()`
/// writes only its fields' bytes): a 4-byte key's other 4 bytes, and a
/// string key's bytes past its NUL, are 0 in every entry, so that equal
/// fields make one entry, the entry the compiled program finds.
#[test]
fn general_path_keys_are_zero_past_their_fields() {
    with_hist("keys=b", |hist| {
        for i in 0..60u64 {
            hist.update_general(
                &record(i.wrapping_mul(0x9e37_79b9), (i % 3) as u32, -1),
                &CTX,
            );
        }
        let map = hist.map();
        let mut entries = 0;
        for idx in 0..map.max_elts() as u32 {
            let Some(elt) = map.elt(idx) else { break };
            if elt.read_sum(0) == 0 {
                continue;
            }
            entries += 1;
            assert_eq!(elt.key_size(), 8);
            for at in 4..8 {
                assert_eq!(elt.key_byte(at), Some(0), "entry {idx} byte {at}");
            }
            assert_eq!(elt.read_sum(0), 20);
        }
        assert_eq!(entries, 3);
    });
    let mut tail = [0u8; 52];
    tail[12..16].copy_from_slice(&(60u32 | 9 << 16).to_ne_bytes());
    let names: [&[u8; 12]; 3] = [b"ab\0xxxxxxxxx", b"abcdefghijk\0", b"ab\0yyyyyyyyy"];
    let records: Vec<_> = (0..30)
        .map(|i| {
            tail[..12].copy_from_slice(names[i % 3]);
            (str_record(i as u64, 0, 0, &tail), 76)
        })
        .collect();
    let (compiled, general, _) = both_paths("keys=s", &records);
    assert_eq!(compiled, general);
    assert!(general.contains("Entries: 2\n"), "{general}");
}

#[test]
fn hits_are_the_totals_hits() {
    for (text, n, hits) in [("keys=a:size=128", 300, 128), ("keys=b:vals=c", 50, 50)] {
        with_hist(text, |hist| {
            assert_eq!(hist.hits(), 0);
            for i in 0..n {
                hist.update(&record(i, (i % 7) as u32, 1), &CTX);
            }
            assert_eq!(hist.hits(), hits, "{text}");
            let out = print_of(hist);
            assert!(out.contains(&std::format!("Hits: {hits}\n")), "{out}");
        });
    }
}

#[test]
fn a_full_map_drops() {
    let records: Vec<[u8; 24]> = (0..300).map(|i| record(i, 0, 0)).collect();
    let out = run("keys=a:size=128", &records);
    assert!(
        out.ends_with("Totals:\n    Hits: 128\n    Entries: 128\n    Dropped: 172\n"),
        "{out}"
    );
}

#[test]
fn expressions_and_variables() {
    let records = [record(1, 10, -1), record(2, 5, 3), record(1, 7, -2)];
    // Expression keys are named by their text; expression values are
    // summed but not shown; constant values are shown without a name;
    // variables are neither sums nor shown.
    assert_eq!(
        run("keys=a*2+1:vals=b/2,3:x=c-1:sort=a*2+1", &records),
        "{ a*2+1:          3 } hitcount:          2  :          6\n\
         { a*2+1:          5 } hitcount:          1  :          3\n\
         \nTotals:\n    Hits: 3\n    Entries: 2\n    Dropped: 0\n"
    );
    let spec = trigger::parse("keys=a:vals=b/2,c:x=c-1").unwrap();
    let data = HistData::build(&spec, &EVENT).unwrap();
    assert_eq!(map_params(&data, 1).n_sums, 3);
    assert_eq!(data.var_value(0, &record(1, 10, -1), &CTX), (-2i64) as u64);
    assert_eq!(
        run("keys=a:vals=b-a,c:sort=b-a", &records),
        "{ a:          2 } hitcount:          1  c:          3\n\
         { a:          1 } hitcount:          2  c: 18446744073709551613\n\
         \nTotals:\n    Hits: 3\n    Entries: 2\n    Dropped: 0\n"
    );
}

#[test]
fn sorts_descending_on_a_value() {
    let records = [record(1, 1, 0), record(2, 3, 0), record(3, 2, 0)];
    let out = run("keys=a:vals=b:sort=b.descending", &records);
    let keys: Vec<&str> = out.lines().take(3).map(|l| &l[..16]).collect();
    assert_eq!(
        keys,
        ["{ a:          2 ", "{ a:          3 ", "{ a:          1 "]
    );
}

/// Builds `text` against the histogram of `owner`.
fn build_with<'h>(text: &'h str, owner: &'h HistData<'h>) -> HistData<'h> {
    let spec = trigger::parse(text).unwrap();
    let mut hd = HistData::empty(&spec);
    let lookup = VarsOf(owner);
    let options = hist_data::BuildOptions {
        vars: Some(&lookup),
        ..Default::default()
    };
    HistData::build_into_with(&mut hd, &spec, &EVENT, options).unwrap();
    hd
}

fn storage(data: &HistData<'_>) -> Vec<AtomicU64> {
    map_storage(&map_params(data, 1))
}

/// `(key a, sum 1)` of each entry, sorted.
fn sums(h: &Histogram<'_>) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = h
        .map()
        .iter()
        .map(|e| (e.key_word(0), e.read_sum(1)))
        .collect();
    v.sort();
    v
}

/// The second trigger's events are dropped unless the first has set
/// the variable for the same key; a plain reference reads it, an
/// operand consumes it.
#[test]
fn references_resolve_against_the_other_histogram() {
    let ctx = CTX;
    let spec = trigger::parse("keys=a:t=b").unwrap();
    let d1 = HistData::build(&spec, &EVENT).unwrap();
    let s1 = storage(&d1);
    let h1 = Histogram::new(&d1, TracingMap::new(map_params(&d1, 1), &s1).unwrap()).unwrap();

    let d2 = build_with("keys=a:vals=$t", &d1);
    let d3 = build_with("keys=a:vals=b+$t", &d1);
    let d4 = build_with("keys=a:x=$t", &d1);
    assert_eq!(d2.var_ref(0).map(|r| r.read_once), Some(false));
    assert_eq!(d3.var_ref(0).map(|r| r.read_once), Some(true));
    assert_eq!(d2.ref_hists(), &[1]);
    let (s2, s3, s4) = (storage(&d2), storage(&d3), storage(&d4));
    let h2 = Histogram::new(&d2, TracingMap::new(map_params(&d2, 1), &s2).unwrap()).unwrap();
    let h3 = Histogram::new(&d3, TracingMap::new(map_params(&d3, 1), &s3).unwrap()).unwrap();
    let h4 = Histogram::new(&d4, TracingMap::new(map_params(&d4, 1), &s4).unwrap()).unwrap();
    let refs = [&h1];

    // Nothing set yet: dropped, not even a hit.
    h2.update_with_refs(&record(1, 5, 0), &ctx, &refs, &NoSink);
    assert!(h2.map().is_empty());
    assert_eq!(h2.map().hits(), 0);

    h1.update(&record(1, 10, 0), &ctx);
    h2.update_with_refs(&record(1, 5, 0), &ctx, &refs, &NoSink);
    h2.update_with_refs(&record(1, 5, 0), &ctx, &refs, &NoSink);
    // Another key: not set for it.
    h2.update_with_refs(&record(2, 5, 0), &ctx, &refs, &NoSink);
    assert_eq!(sums(&h2), [(1, 20)]);
    h4.update_with_refs(&record(1, 5, 0), &ctx, &refs, &NoSink);
    let elt = h4.map().lookup(&1u64.to_ne_bytes()).unwrap();
    assert_eq!(elt.read_var(0), 10);

    // Read once: the first event consumes the variable.
    h3.update_with_refs(&record(1, 5, 0), &ctx, &refs, &NoSink);
    h3.update_with_refs(&record(1, 6, 0), &ctx, &refs, &NoSink);
    assert_eq!(sums(&h3), [(1, 15)]);
    let elt = h1.map().lookup(&1u64.to_ne_bytes()).unwrap();
    assert!(!elt.var_is_set(0));
    // ... for every reader.
    h2.update_with_refs(&record(1, 5, 0), &ctx, &refs, &NoSink);
    assert_eq!(sums(&h2), [(1, 20)]);

    // Set again: read again.
    h1.update(&record(1, 3, 0), &ctx);
    h3.update_with_refs(&record(1, 6, 0), &ctx, &refs, &NoSink);
    assert_eq!(sums(&h3), [(1, 24)]);

    // A slot the shell did not pass: dropped.
    h1.update(&record(1, 3, 0), &ctx);
    h3.update_with_refs(&record(1, 6, 0), &ctx, &[], &NoSink);
    assert_eq!(sums(&h3), [(1, 24)]);
    assert!(h1.map().lookup(&1u64.to_ne_bytes()).unwrap().var_is_set(0));

    // No references: update_with_refs() is update().
    h1.update_with_refs(&record(5, 1, 0), &ctx, &[], &NoSink);
    assert!(h1.map().lookup(&5u64.to_ne_bytes()).is_some());
}

/// A reference to a string variable resolves to the address of the
/// copy in the other entry, as C's does (its variable holds that
/// pointer); the owner's variable holds the copy's slot.
#[test]
fn a_string_reference_reads_the_copy_slot() {
    let event = string_event();
    let ctx = CTX;
    let spec = trigger::parse("keys=a:n=a,x=s,y=s").unwrap();
    let d1 = HistData::build(&spec, &event).unwrap();
    let s1 = storage(&d1);
    let h1 = Histogram::new(&d1, TracingMap::new(map_params(&d1, 1), &s1).unwrap()).unwrap();
    let d2 = build_with("keys=a:v=$y", &d1);
    assert_eq!(d2.var_ref(0).map(|r| r.var_idx), Some(2));
    let s2 = storage(&d2);
    let h2 = Histogram::new(&d2, TracingMap::new(map_params(&d2, 1), &s2).unwrap()).unwrap();
    let mut rec = [0u8; 24];
    rec[8] = 3;
    rec[16..20].copy_from_slice(b"abc\0");
    h1.update(&rec, &ctx);
    h2.update_with_refs(&rec, &ctx, &[&h1], &NoSink);
    let owner = h1.map().lookup(&3u64.to_ne_bytes()).unwrap();
    assert_eq!(owner.read_var(2), 1);
    let copy = &owner.private_words()[vars::STR_VAR_WORDS..];
    assert_eq!(
        copy[0].load(Ordering::Relaxed).to_ne_bytes()[..4],
        *b"abc\0"
    );
    let elt = h2.map().lookup(&3u64.to_ne_bytes()).unwrap();
    assert_eq!(elt.read_var(0), copy[0].as_ptr() as u64);
}
