// SPDX-License-Identifier: GPL-2.0

//! The tests of `hist_data.rs`: triggers built against sample events,
//! and the keys, values, names, trigger info, `hist_debug` text and
//! errors they give, as C gives them.

use super::*;
use crate::testing::{comm, Task, TASK};
use std::format;
use std::string::String;
use std::vec::Vec;
use support::*;

use super::super::error::errno::{EDOM, EINVAL, ENOENT};
use super::super::grammar::{parse_trigger, parse_trigger_in};
use super::super::output::{write_keys, write_val, NoSymbols, Resolver, ValStat};

/// What [`HistData::printed_vals`] gives, the names written out.
fn printed(hd: &HistData<'_>) -> Vec<(usize, String, ValDisplay)> {
    hd.printed_vals()
        .map(|(i, name, display)| (i, format!("{name}"), display))
        .collect()
}

/// `vals` as [`printed`] gives them.
fn owned(vals: &[(usize, &str, ValDisplay)]) -> Vec<(usize, String, ValDisplay)> {
    vals.iter()
        .map(|&(i, name, display)| (i, String::from(name), display))
        .collect()
}

/// Event descriptions and records for the tests.
mod support {
    use super::super::super::event::{EventDesc, EventField, FieldStorage};
    pub use crate::testing::event;
    use crate::testing::{FIELD_A, FIELD_B, FIELD_C};
    use std::vec;
    use std::vec::Vec;

    use FieldStorage::{DynString, Other, RelString, Stacktrace, StaticString};

    pub static SAMPLE: [EventField<'static>; 6] = [
        FIELD_A,
        FIELD_B,
        FIELD_C,
        EventField::new("s", "char[16]", 24, 16, false, StaticString),
        EventField::new("d", "__data_loc char[]", 40, 4, false, DynString),
        EventField::new("ip", "unsigned long", 48, 8, false, Other),
    ];

    pub fn sample() -> EventDesc<'static> {
        event("rhist_test", "rhist_sample", &SAMPLE)
    }

    pub static WAKING: [EventField<'static>; 4] = [
        EventField::new("comm", "char[16]", 8, 16, false, StaticString),
        EventField::new("pid", "pid_t", 24, 4, true, Other),
        EventField::new("prio", "int", 28, 4, true, Other),
        EventField::new("target_cpu", "int", 32, 4, true, Other),
    ];

    pub fn waking() -> EventDesc<'static> {
        event("sched", "sched_waking", &WAKING)
    }

    /// Odd fields: signed small numbers, a `__rel_loc` string, a
    /// 3-byte array, a pointer string, an own `cpu` field, a
    /// synthetic stack trace.
    pub static ODD: [EventField<'static>; 8] = [
        EventField::new("s8", "s8", 8, 1, true, Other),
        EventField::new("s16", "s16", 10, 2, true, Other),
        EventField::new("rel", "__rel_loc char[]", 12, 4, false, RelString),
        EventField::new("arr", "u8[3]", 16, 3, false, Other),
        EventField::new("cpu", "u32", 20, 4, false, Other),
        EventField::new("p", "const char *", 24, 8, false, FieldStorage::PtrString),
        EventField::new(
            "stack",
            "__data_loc unsigned long[]",
            32,
            8,
            false,
            Stacktrace,
        ),
        EventField::new("name", "char[20]", 40, 20, false, StaticString),
    ];

    pub fn odd() -> EventDesc<'static> {
        event("rhist_test", "odd", &ODD)
    }

    /// A record of rhist_sample; `d` goes after the fixed part.
    pub fn sample_rec(pid: i32, a: u64, b: u32, c: i32, s: &[u8], d: &str, ip: u64) -> Vec<u8> {
        let mut r = vec![0u8; 56];
        r[0..2].copy_from_slice(&7u16.to_ne_bytes());
        r[4..8].copy_from_slice(&pid.to_ne_bytes());
        r[8..16].copy_from_slice(&a.to_ne_bytes());
        r[16..20].copy_from_slice(&b.to_ne_bytes());
        r[20..24].copy_from_slice(&c.to_ne_bytes());
        r[24..24 + s.len()].copy_from_slice(s);
        let loc = (((d.len() + 1) as u32) << 16) | 56;
        r[40..44].copy_from_slice(&loc.to_ne_bytes());
        r[48..56].copy_from_slice(&ip.to_ne_bytes());
        r.extend_from_slice(d.as_bytes());
        r.push(0);
        r
    }

    /// A record with `(offset, bytes)` pieces.
    pub fn rec(len: usize, pieces: &[(usize, &[u8])]) -> Vec<u8> {
        let mut r = vec![0u8; len];
        for &(at, bytes) in pieces {
            if r.len() < at + bytes.len() {
                r.resize(at + bytes.len(), 0);
            }
            r[at..at + bytes.len()].copy_from_slice(bytes);
        }
        r
    }
}

/// `tester` on CPU 3 at 1.234567 ms, two frames deep.
const CTX: Task = Task {
    cpu: 3,
    ts: 1_234_567,
    comm: comm(b"tester"),
    stack: [0x10, 0x20, 0],
    ..TASK
};

/// A resolver that knows one syscall.
struct Sys;

impl Resolver for Sys {
    fn symbol(&self, addr: u64, with_offset: bool, out: &mut dyn Write) -> fmt::Result {
        NoSymbols.symbol(addr, with_offset, out)
    }
    fn syscall_name(&self, nr: u64) -> Option<&str> {
        (nr == 16).then_some("sys_ioctl")
    }
}

fn build<'a>(text: &'a str, event: &EventDesc<'a>) -> HistData<'a> {
    let spec = parse_trigger(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    HistData::build(&spec, event).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn build_err(text: &str, event: &EventDesc<'_>) -> HistError {
    let spec = parse_trigger(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    match HistData::build(&spec, event) {
        Ok(_) => panic!("{text}: built"),
        Err(e) => e,
    }
}

/// A lookup that finds every variable, a `u64` of another event.
struct Everything;

impl VarLookup for Everything {
    fn find_var(&self, _: Option<(&str, &str)>, _: &str) -> Found<'_> {
        Found::One(VarTarget {
            hist: 1,
            var_idx: 0,
            size: 8,
            signed: false,
            type_name: "u64",
            flags: FL_VAR,
            constant: 0,
            copy: false,
            system: "rhist_test",
            event: "other",
        })
    }
}

/// [`build_err`] with every variable defined by some trigger of the
/// instance.
fn build_err_vars_defined(text: &str, event: &EventDesc<'_>) -> HistError {
    let spec = parse_trigger(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let mut hd = HistData::empty(&spec);
    let options = BuildOptions {
        vars: Some(&Everything),
        ..Default::default()
    };
    match HistData::build_into_with(&mut hd, &spec, event, options) {
        Ok(()) => panic!("{text}: built"),
        Err(e) => e,
    }
}

/// The caret C puts on the first occurrence of `s` in `hist:` + text.
fn at(text: &str, s: &str) -> usize {
    format!("hist:{text}").find(s).unwrap()
}

fn key_of(hd: &HistData<'_>, rec: &[u8], ctx: &dyn EventContext) -> Vec<u8> {
    let mut key = std::vec![0u8; hd.key_size()];
    hd.write_key(rec, ctx, &mut key);
    key
}

fn keys_text(hd: &HistData<'_>, key: &[u8], resolver: &dyn Resolver) -> String {
    let parts: Vec<_> = hd.key_parts(key).collect();
    let mut s = String::new();
    write_keys(&mut s, &parts, b"bash\0", resolver).unwrap();
    s
}

/// The `{ ... }` of one record with the trigger `text`.
fn show(text: &str, event: &EventDesc<'_>, rec: &[u8]) -> String {
    let hd = build(text, event);
    keys_text(&hd, &key_of(&hd, rec, &CTX), &NoSymbols)
}

fn info(text: &str, event: &EventDesc<'_>) -> String {
    let hd = build(text, event);
    let mut s = String::new();
    hd.write_info(&mut s, "hist:").unwrap();
    s
}

fn u64s(key: &[u8]) -> Vec<u64> {
    key.chunks(8).map(super::super::output::read_u64).collect()
}

fn sample_default() -> Vec<u8> {
    sample_rec(1234, 42, 1000, -5, b"hi", "hello", 0xffff_ffff_8100_0000)
}

// --- keys ---------------------------------------------------------------

#[test]
fn numeric_keys() {
    let ev = sample();
    let r = sample_default();
    assert_eq!(show("keys=a", &ev, &r), "{ a:         42 }");
    assert_eq!(show("keys=b", &ev, &r), "{ b:       1000 }");
    // Signed fields sign-extend to u64.
    assert_eq!(show("keys=c", &ev, &r), "{ c: 18446744073709551611 }");
    assert_eq!(
        show("keys=common_pid", &ev, &r),
        "{ common_pid:       1234 }"
    );
    assert_eq!(
        show("keys=common_type", &ev, &r),
        "{ common_type:          7 }"
    );
    assert_eq!(
        show("keys=common_flags", &ev, &r),
        "{ common_flags:          0 }"
    );
    let hd = build("keys=b,c,a", &ev);
    assert_eq!(hd.key_size(), 24);
    let key = key_of(&hd, &r, &CTX);
    assert_eq!(u64s(&key), [1000, (-5i64) as u64, 42]);
    assert_eq!(
        keys_text(&hd, &key, &NoSymbols),
        "{ b:       1000, c: 18446744073709551611, a:         42 }"
    );
    // Small signed fields.
    let ev = odd();
    let r = rec(
        64,
        &[(8, &(-2i8).to_ne_bytes()), (10, &(-300i16).to_ne_bytes())],
    );
    let hd = build("keys=s8,s16", &ev);
    assert_eq!(
        u64s(&key_of(&hd, &r, &CTX)),
        [(-2i64) as u64, (-300i64) as u64]
    );
}

#[test]
fn key_modifiers() {
    let ev = sample();
    let r = sample_default();
    assert_eq!(show("keys=a.hex", &ev, &r), "{ a: 2a }");
    assert_eq!(
        show("keys=ip.sym", &ev, &r),
        format!("{{ ip: [ffffffff81000000] {:<45} }}", "0xffffffff81000000")
    );
    assert_eq!(
        show("keys=ip.sym-offset", &ev, &r),
        format!("{{ ip: [ffffffff81000000] {:<55} }}", "0xffffffff81000000")
    );
    assert_eq!(
        show("keys=common_pid.execname", &ev, &r),
        "{ common_pid: bash            [      1234] }"
    );
    assert_eq!(
        show("keys=b.syscall", &ev, &r),
        format!("{{ b: {:<30}[1000] }}", "unknown_syscall")
    );
    // order_base_2(1000) = 10.
    assert_eq!(show("keys=b.log2", &ev, &r), "{ b: ~ 2^10 }");
    assert_eq!(
        show("keys=a.log2", &ev, &r),
        "{ b: ~ 2^6  }".replace('b', "a")
    );
    assert_eq!(show("keys=b.buckets=100", &ev, &r), "{ b: ~ 1000-1099 }");
    assert_eq!(show("keys=a.bucket=0x10", &ev, &r), "{ a: ~ 32-47 }");
    // .usecs on another field only shows in the trigger info.
    assert_eq!(show("keys=b.usecs", &ev, &r), "{ b:       1000 }");
    assert!(build("keys=common_pid.execname", &ev).needs_comm());
    assert!(build("keys=b:vals=common_pid.execname", &ev).needs_comm());
    assert!(!build("keys=common_pid", &ev).needs_comm());
    // Key slots keep the value as a u64, whatever the field size.
    let hd = build("keys=b.log2,c.hex", &ev);
    assert_eq!(u64s(&key_of(&hd, &r, &CTX)), [10, (-5i64) as u64]);
    assert_eq!(
        keys_text(&hd, &key_of(&hd, &r, &CTX), &NoSymbols),
        "{ b: ~ 2^10, c: fffffffffffffffb }"
    );
}

#[test]
fn doc_key_lines() {
    // histogram.rst: raw_syscalls:sys_enter and sys_enter_recvfrom.
    static SYS_ENTER: [EventField<'static>; 2] = [
        EventField::new("id", "long", 8, 8, true, FieldStorage::Other),
        EventField::new(
            "args",
            "unsigned long[6]",
            16,
            48,
            false,
            FieldStorage::Other,
        ),
    ];
    let ev = event("raw_syscalls", "sys_enter", &SYS_ENTER);
    let hd = build(
        "key=id.syscall,common_pid.execname:val=hitcount:sort=id,hitcount",
        &ev,
    );
    let r = rec(
        64,
        &[(4, &2781i32.to_ne_bytes()), (8, &16i64.to_ne_bytes())],
    );
    let key = key_of(&hd, &r, &CTX);
    let parts: Vec<_> = hd.key_parts(&key).collect();
    let mut s = String::new();
    write_keys(&mut s, &parts, b"gmain\0", &Sys).unwrap();
    assert_eq!(
        s,
        "{ id: sys_ioctl                     [ 16], common_pid: gmain           [      2781] }"
    );

    static RECVFROM: [EventField<'static>; 2] = [
        EventField::new("__syscall_nr", "int", 8, 4, true, FieldStorage::Other),
        EventField::new("size", "size_t", 32, 8, false, FieldStorage::Other),
    ];
    let ev = event("syscalls", "sys_enter_recvfrom", &RECVFROM);
    let hd = build(
        "key=common_pid.execname,size:val=hitcount:sort=common_pid,size",
        &ev,
    );
    let r = rec(
        64,
        &[(4, &8822i32.to_ne_bytes()), (32, &160u64.to_ne_bytes())],
    );
    let key = key_of(&hd, &r, &CTX);
    let parts: Vec<_> = hd.key_parts(&key).collect();
    let mut s = String::new();
    write_keys(&mut s, &parts, b"firefox\0", &Sys).unwrap();
    assert_eq!(
        s,
        "{ common_pid: firefox         [      8822], size:        160 }"
    );

    // net:netif_receive_skb with a value.
    let ev = event("net", "netif_receive_skb", &NETIF);
    let hd = build("keys=len:vals=common_preempt_count", &ev);
    let r = rec(64, &[(3, &[0u8]), (16, &46u32.to_ne_bytes())]);
    let key = key_of(&hd, &r, &CTX);
    let mut line = keys_text(&hd, &key, &NoSymbols);
    let sums = [221u64, 0];
    for (i, name, display) in hd.printed_vals() {
        if i > 0 {
            line.push(' ');
        }
        write_val(&mut line, name, display, sums[i], ValStat::default()).unwrap();
    }
    assert_eq!(
        line,
        "{ len:         46 } hitcount:        221  common_preempt_count:          0"
    );
    let hd = build("keys=skbaddr.hex:vals=len", &ev);
    let r = rec(64, &[(8, &0xffff_8800_baee_5e00u64.to_ne_bytes())]);
    assert_eq!(
        keys_text(&hd, &key_of(&hd, &r, &CTX), &NoSymbols),
        "{ skbaddr: ffff8800baee5e00 }"
    );
}

static NETIF: [EventField<'static>; 3] = [
    EventField::new("skbaddr", "void *", 8, 8, false, FieldStorage::Other),
    EventField::new("len", "unsigned int", 16, 4, false, FieldStorage::Other),
    EventField::new(
        "name",
        "__data_loc char[]",
        20,
        4,
        false,
        FieldStorage::DynString,
    ),
];

#[test]
fn static_string_keys() {
    let ev = sample();
    // A full 16-byte static string loses its last byte (strncpy of
    // size - 1 into a 16-byte slot).
    let r = sample_rec(1, 0, 0, 0, b"0123456789abcdef", "x", 0);
    let hd = build("keys=s", &ev);
    assert_eq!(hd.key_size(), 16);
    let key = key_of(&hd, &r, &CTX);
    assert_eq!(&key[..], b"0123456789abcde\0");
    assert_eq!(
        keys_text(&hd, &key, &NoSymbols),
        format!("{{ s: {:<50} }}", "0123456789abcde")
    );
    // Shorter strings stop at the NUL; the rest stays zero.
    let r = sample_rec(1, 0, 0, 0, b"hi\0zz", "x", 0);
    assert_eq!(
        &key_of(&hd, &r, &CTX)[..],
        b"hi\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
    );
    // sched_waking's comm.
    let ev = waking();
    let r = rec(40, &[(8, b"kworker/0:1\0")]);
    assert_eq!(
        show("keys=comm", &ev, &r),
        format!("{{ comm: {:<50} }}", "kworker/0:1")
    );
    let r = rec(
        40,
        &[
            (8, b"sshd\0"),
            (24, &(-1i32).to_ne_bytes()),
            (28, &120i32.to_ne_bytes()),
        ],
    );
    let hd = build("keys=comm,pid,prio:vals=target_cpu:sort=pid", &ev);
    assert_eq!(hd.key_size(), 32);
    assert_eq!(
        keys_text(&hd, &key_of(&hd, &r, &CTX), &NoSymbols),
        format!(
            "{{ comm: {:<50}, pid: 18446744073709551615, prio:        120 }}",
            "sshd"
        )
    );
    assert_eq!(
        hd.sort_keys(),
        [SortKey {
            field: SortField::Key {
                offset: 16,
                size: 4,
                cmp: KeyCmp::Signed
            },
            descending: false
        }]
    );
    assert_eq!(
        info("keys=comm,pid,prio:vals=target_cpu:sort=pid", &ev),
        "hist:keys=comm,pid,prio:vals=hitcount,target_cpu:sort=pid:size=2048"
    );
    // A char[20] gets a 24-byte slot and keeps all 20 bytes.
    let ev = odd();
    let r = rec(64, &[(40, b"abcdefghijklmnopqrst")]);
    let hd = build("keys=name", &ev);
    assert_eq!(hd.key_size(), 24);
    assert_eq!(&key_of(&hd, &r, &CTX)[..], b"abcdefghijklmnopqrst\0\0\0\0");
    // .hex on a string shows its first 8 bytes as a number.
    let ev = sample();
    let r = sample_rec(1, 0, 0, 0, b"0123456789abcdef", "x", 0);
    let v = u64::from_ne_bytes(*b"01234567");
    assert_eq!(show("keys=s.hex", &ev, &r), format!("{{ s: {v:x} }}"));
}

/// `common_comm` (rhist's extension, Linux 6.16's): the current task's
/// command name, a 16-byte string key named `common_comm`.
#[test]
fn common_comm_keys() {
    let ev = sample();
    let r = sample_rec(1, 0, 0, 0, b"record\0", "x", 0);
    let hd = build("keys=common_comm", &ev);
    assert_eq!(hd.key_size(), 16);
    let key = key_of(&hd, &r, &CTX);
    assert_eq!(&key[..], b"tester\0\0\0\0\0\0\0\0\0\0");
    assert_eq!(
        keys_text(&hd, &key, &NoSymbols),
        format!("{{ common_comm: {:<50} }}", "tester")
    );
    // The compiled path builds it: a key of two words, read from the
    // task, no record (see histogram's `common_comm_keys_are_compiled`).
    let p = hd.program().unwrap();
    assert!(p.comm_only() && p.key_words() == 2 && !p.short());
    assert_eq!(
        info("keys=common_comm", &ev),
        "hist:keys=common_comm:vals=hitcount:sort=hitcount:size=2048"
    );
    // The generic comm and COMM of an event without its own are
    // common_comm, named as written in the hist file, common_comm in the
    // trigger info (as 6.16 does; as cpu and common_cpu).
    for name in ["comm", "COMM"] {
        let t = format!("keys={name},a:vals=b:sort={name}");
        assert_eq!(
            show(&t, &ev, &r),
            format!("{{ {name}: {:<50}, a:          0 }}", "tester")
        );
        assert_eq!(
            info(&t, &ev),
            "hist:keys=common_comm,a:vals=hitcount,b:sort=common_comm:size=2048"
        );
    }
    // An event's own comm stays its field; common_comm is the task's.
    let ev = waking();
    let r = rec(40, &[(8, b"kworker/0:1\0")]);
    assert_eq!(
        show("keys=comm,common_comm", &ev, &r),
        format!(
            "{{ comm: {:<50}, common_comm: {:<50} }}",
            "kworker/0:1", "tester"
        )
    );
    // Sorted as names (6.16 leaves them unsorted).
    let hd = build("keys=pid,common_comm:sort=common_comm.descending", &ev);
    assert_eq!(
        hd.sort_keys(),
        [SortKey {
            field: SortField::Key {
                offset: 8,
                size: 16,
                cmp: KeyCmp::String
            },
            descending: true
        }]
    );
    // The modifiers of a string key: .hex shows its first 8 bytes.
    let ev = sample();
    let v = u64::from_ne_bytes(*b"tester\0\0");
    assert_eq!(
        show("keys=common_comm.hex", &ev, &r),
        format!("{{ common_comm: {v:x} }}")
    );
    assert_eq!(
        info("keys=common_comm.hex", &ev),
        "hist:keys=common_comm.hex:vals=hitcount:sort=hitcount:size=2048"
    );
    // The kernel's names end within 16 bytes; one that did not would
    // keep 15, as a char[16] field key does.
    let long = Task {
        cpu: 0,
        ts: 0,
        comm: *b"0123456789abcdef",
        ..TASK
    };
    let hd = build("keys=common_comm", &ev);
    assert_eq!(&key_of(&hd, &r, &long)[..], b"0123456789abcde\0");
}

/// `common_comm` variables copy the name into the entry; it is no
/// number, so no value, operand, `.log2` or `.buckets`.
#[test]
fn common_comm_variables_and_errors() {
    let ev = sample();
    let hd = build("keys=a:c=common_comm,d=COMM", &ev);
    assert_eq!(hd.var_copy(0), Some(VarCopy::Comm));
    assert_eq!(hd.var_copy(1), Some(VarCopy::Comm));
    assert_eq!(
        info("keys=a:c=common_comm,d=COMM", &ev),
        "hist:keys=a:vals=hitcount:c=common_comm,d=common_comm:sort=hitcount:size=2048"
    );
    let dbg = debug_fields("keys=a:c=common_comm", &ev);
    assert_eq!(
        dbg[1],
        block(&[
            "        HIST_FIELD_FL_VAR",
            "      var.name: c",
            "      var.idx (into tracing_map_elt.vars[]): 0",
            "      type: char[16]",
            "      size: 16",
            "      is_signed: 0",
        ])
    );
    let mut copy = [0xffu8; crate::hist::vars::STR_VAR_LEN_MAX];
    crate::hist::vars::write_copy(
        Some(VarCopy::Comm),
        || (&[][..], 0),
        &CTX,
        b"saved\0\0\0\0\0\0\0\0\0\0\0",
        &mut copy,
    );
    assert_eq!(&copy[..7], b"tester\0");
    assert!(copy[7..].iter().all(|&b| b == 0));

    // What fails with common_comm too gets hist's error: its field is
    // not found, where hist meets it first.
    let err = |t: &str, kind, s: &str| {
        assert_eq!(build_err(t, &ev), HistError::new(kind, at(t, s)), "{t}");
    };
    use HistErrorKind::{BadFieldModifier, FieldNotFound};
    for (t, first) in [
        // 6.16 would read a string at the number's address.
        ("keys=common_comm.log2", "common_comm"),
        ("keys=a,comm.buckets=10", "comm"),
        ("keys=a:x=common_comm.log2", "common_comm"),
        ("keys=common_comm.stacktrace", "common_comm"),
        // A sum of 6.16's address means nothing.
        ("keys=a:vals=common_comm", "common_comm"),
        ("keys=a:vals=b,COMM.hex", "COMM"),
        ("keys=a:x=common_comm+1", "common_comm"),
        ("keys=a:x=-(common_comm)", "common_comm"),
        ("keys=a:vals=b-comm", "comm"),
        // Later errors too: hist stops at the first.
        ("keys=common_comm,common_comm.log2", "common_comm"),
        ("keys=common_comm,nosuch", "common_comm"),
        ("keys=nosuch:vals=common_comm", "common_comm"),
        ("keys=common_commx", "common_commx"),
    ] {
        err(t, FieldNotFound, first);
    }
    // Modifiers are parsed before the name is looked up; .execname is
    // common_pid's.
    err("keys=common_comm.foo", BadFieldModifier, "foo");
    err(
        "keys=a:e=common_comm.execname",
        BadFieldModifier,
        "execname",
    );
    err(
        "keys=nosuch.foo:vals=common_comm",
        FieldNotFound,
        "common_comm",
    );
}

#[test]
fn record_span() {
    let ev = sample();
    assert_eq!(build("keys=a", &ev).record_span(), Some(16));
    assert_eq!(build("keys=common_pid", &ev).record_span(), Some(8));
    assert_eq!(build("keys=cpu", &ev).record_span(), Some(0));
    assert_eq!(build("keys=s:vals=b", &ev).record_span(), Some(40));
    assert_eq!(build("keys=a:vals=ip", &ev).record_span(), Some(56));
    assert_eq!(build("keys=d", &ev).record_span(), None);
    assert_eq!(build("keys=a:vals=d", &ev).record_span(), None);
}

#[test]
fn dynamic_string_keys() {
    let ev = sample();
    let hd = build("keys=d", &ev);
    assert_eq!(hd.key_size(), 256);
    let r = sample_rec(1, 0, 0, 0, b"", "hello", 0);
    let key = key_of(&hd, &r, &CTX);
    assert_eq!(&key[..6], b"hello\0");
    assert!(key[6..].iter().all(|&b| b == 0));
    assert_eq!(
        keys_text(&hd, &key, &NoSymbols),
        format!("{{ d: {:<50} }}", "hello")
    );
    // The length in the __data_loc word bounds the copy.
    let mut r = sample_rec(1, 0, 0, 0, b"", "hello world", 0);
    r[40..44].copy_from_slice(&((5u32 << 16) | 56).to_ne_bytes());
    assert_eq!(&key_of(&hd, &r, &CTX)[..6], b"hello\0");
    // At most 255 bytes.
    let long = "x".repeat(300);
    let r = sample_rec(1, 0, 0, 0, b"", &long, 0);
    let key = key_of(&hd, &r, &CTX);
    assert!(key[..255].iter().all(|&b| b == b'x'));
    assert_eq!(key[255], 0);
    // __rel_loc: the offset counts from the end of the u32.
    let ev = odd();
    let hd = build("keys=rel", &ev);
    let loc = (4u32 << 16) | 8; // string at 12 + 4 + 8 = 24
    let r = rec(64, &[(12, &loc.to_ne_bytes()), (24, b"abcdef\0")]);
    let key = key_of(&hd, &r, &CTX);
    // The length in the word (4) bounds the copy.
    assert_eq!(&key[..5], b"abcd\0");
    assert_eq!(hd.key_size(), 256);
}

#[test]
fn cpu_timestamp_and_hitcount_keys() {
    let ev = sample();
    let r = sample_default();
    let hd = build("keys=common_cpu", &ev);
    assert_eq!(hd.key_size(), 8);
    assert_eq!(
        keys_text(&hd, &key_of(&hd, &r, &CTX), &NoSymbols),
        "{ common_cpu:          3 }"
    );
    // "cpu" and "CPU" are common_cpu, but keep their name in the hist.
    assert_eq!(show("keys=cpu", &ev, &r), "{ cpu:          3 }");
    assert_eq!(show("keys=CPU", &ev, &r), "{ CPU:          3 }");
    // An own field named cpu is a field.
    let ev2 = odd();
    let r2 = rec(64, &[(20, &77u32.to_ne_bytes())]);
    assert_eq!(show("keys=cpu", &ev2, &r2), "{ cpu:         77 }");

    assert_eq!(
        show("keys=common_timestamp", &ev, &r),
        "{ common_timestamp:    1234567 }"
    );
    assert_eq!(
        show("keys=common_timestamp.usecs", &ev, &r),
        "{ common_timestamp:       1235 }"
    );
    // Not converted with a clock that does not count ns.
    let hd = build("keys=common_timestamp.usecs", &ev);
    let ctx = Task { ns: false, ..CTX };
    assert_eq!(u64s(&key_of(&hd, &r, &ctx)), [1_234_567]);
    // .usecs anywhere converts every timestamp.
    let hd = build("keys=common_timestamp:vals=common_timestamp.usecs", &ev);
    assert!(hd.uses_timestamps() && hd.ts_in_usecs());
    assert_eq!(u64s(&key_of(&hd, &r, &CTX)), [1235]);
    assert_eq!(hd.sum_value(1, &r, &CTX), 1235);
    let hd = build("keys=common_timestamp", &ev);
    assert!(hd.uses_timestamps() && !hd.ts_in_usecs());
    assert!(!build("keys=b.usecs", &ev).uses_timestamps());
    assert!(!build("keys=b.usecs", &ev).ts_in_usecs());

    // hitcount as a key: always 1.  With .log2 C makes no operand, so
    // the key has no name.
    assert_eq!(show("keys=hitcount", &ev, &r), "{ hitcount:          1 }");
    assert_eq!(show("keys=hitcount.log2", &ev, &r), "{ : ~ 2^1  }");
    assert_eq!(
        show("keys=common_cpu.log2", &ev, &r),
        "{ common_cpu: ~ 2^2  }"
    );
    assert_eq!(show("keys=cpu.buckets=2", &ev, &r), "{ cpu: ~ 2-3 }");
}

#[test]
fn stacktrace_keys() {
    let ev = sample();
    let r = sample_default();
    let want = "{ common_stacktrace:\n         0x10\n         0x20\n}";
    for t in [
        "keys=stacktrace",
        "keys=common_stacktrace",
        "keys=STACKTRACE",
    ] {
        let hd = build(t, &ev);
        assert_eq!(hd.key_size(), 128, "{t}");
        let key = key_of(&hd, &r, &CTX);
        assert_eq!(u64s(&key)[..3], [0x10, 0x20, 0], "{t}");
        assert_eq!(keys_text(&hd, &key, &NoSymbols), want, "{t}");
    }
    // With another key.
    let hd = build("keys=b,stacktrace", &ev);
    assert_eq!(hd.key_size(), 136);
    let key = key_of(&hd, &r, &CTX);
    assert_eq!(u64s(&key)[..3], [1000, 0x10, 0x20]);

    // A stack trace field of a synthetic event: a count, then frames.
    let ev = odd();
    let loc = (24u32 << 16) | 64;
    let mut frames = Vec::new();
    for v in [2u64, 0xa, 0xb, 0xc] {
        frames.extend_from_slice(&v.to_ne_bytes());
    }
    let r = rec(64, &[(32, &loc.to_ne_bytes()), (64, &frames)]);
    let hd = build("keys=stack.stacktrace", &ev);
    assert_eq!(hd.key_size(), 128);
    let key = key_of(&hd, &r, &CTX);
    assert_eq!(u64s(&key)[..3], [0xa, 0xb, 0]);
    assert_eq!(
        keys_text(&hd, &key, &NoSymbols),
        "{ stack.stacktrace         0xa\n         0xb\n}"
    );
    // Without the modifier C gives it a MAX_FILTER_STR_VAL slot.
    let hd = build("keys=stack", &ev);
    assert_eq!(hd.key_size(), 256);
    assert_eq!(u64s(&key_of(&hd, &r, &CTX))[..3], [0xa, 0xb, 0]);
    // A count beyond the record or above 16 is bounded.
    let loc = (24u32 << 16) | 56;
    let r = rec(
        72,
        &[
            (32, &loc.to_ne_bytes()),
            (56, &1000u64.to_ne_bytes()),
            (64, &5u64.to_ne_bytes()),
        ],
    );
    let hd = build("keys=stack.stacktrace", &ev);
    assert_eq!(u64s(&key_of(&hd, &r, &CTX))[..3], [5, 0, 0]);
}

// --- values -------------------------------------------------------------

#[test]
fn values_and_sums() {
    let ev = sample();
    let r = sample_rec(1, 10, 7, -3, b"", "", 0);
    let hd = build("keys=b:vals=a,c", &ev);
    assert_eq!(hd.n_sums(), 3);
    assert_eq!(hd.sum_value(0, &r, &CTX), 1);
    assert_eq!(hd.sum_value(1, &r, &CTX), 10);
    assert_eq!(hd.sum_value(2, &r, &CTX), (-3i64) as u64);
    assert_eq!(hd.sum_value(3, &r, &CTX), 0);
    let vals = printed(&hd);
    assert_eq!(
        vals,
        owned(&[
            (0, "hitcount", ValDisplay::Plain),
            (1, "a", ValDisplay::Plain),
            (2, "c", ValDisplay::Plain)
        ])
    );
    // Sums wrap: the map adds these with wrapping arithmetic.
    assert_eq!(10u64.wrapping_add(hd.sum_value(2, &r, &CTX)), 7);

    let hd = build("keys=b:vals=a.hex,hitcount.percent:nohitcount", &ev);
    assert_eq!(hd.sum_value(2, &r, &CTX), 1);
    let vals = printed(&hd);
    assert_eq!(
        vals,
        owned(&[
            (1, "a", ValDisplay::Hex),
            (2, "hitcount", ValDisplay::Percent)
        ])
    );
    let hd = build("keys=b:vals=c.graph,common_cpu", &ev);
    let vals = printed(&hd);
    assert_eq!(
        vals,
        owned(&[
            (0, "hitcount", ValDisplay::Plain),
            (1, "c", ValDisplay::Graph),
            (2, "common_cpu", ValDisplay::Plain)
        ])
    );
    assert_eq!(hd.sum_value(2, &r, &CTX), 3);
    // A second hitcount is a value.
    let hd = build("keys=b:vals=hitcount,hitcount", &ev);
    assert_eq!(hd.n_sums(), 2);
    assert_eq!(hd.sum_value(1, &r, &CTX), 1);
    // Only hitcount.
    let hd = build("keys=b:vals=hitcount", &ev);
    assert_eq!(hd.n_sums(), 1);
    // .execname and .usecs are fine on values.
    let hd = build("keys=b:vals=common_pid.execname,b.usecs", &ev);
    assert_eq!(hd.sum_value(1, &r, &CTX), 1);
    assert_eq!(hd.sum_value(2, &r, &CTX), 7);
    // Timestamps as values.
    let hd = build("keys=b:vals=common_timestamp", &ev);
    assert_eq!(hd.sum_value(1, &r, &CTX), 1_234_567);
}

#[test]
fn value_functions() {
    for (n, log) in [
        (0, 0),
        (1, 0),
        (2, 1),
        (3, 2),
        (4, 2),
        (5, 3),
        (1 << 63, 63),
    ] {
        assert_eq!(order_base_2(n), log, "{n}");
    }
    assert_eq!(order_base_2((1 << 63) + 1), 64);
    assert_eq!(order_base_2(u64::MAX), 64);
    assert_eq!(ns2usecs(1499), 1);
    assert_eq!(ns2usecs(1500), 2);
    assert_eq!(ns2usecs(u64::MAX), 499 / 1000);
    // .buckets above LONG_MAX.
    let ev = sample();
    let r = sample_rec(1, u64::MAX, 0, 0, b"", "", 0);
    let hd = build("keys=a.buckets=10", &ev);
    assert_eq!(u64s(&key_of(&hd, &r, &CTX)), [u64::MAX / 10 * 10]);
    let hd = build("keys=c.log2", &ev);
    let r = sample_rec(1, 0, 0, -1, b"", "", 0);
    assert_eq!(u64s(&key_of(&hd, &r, &CTX)), [64]);
}

// --- sort keys ----------------------------------------------------------

#[test]
fn sort_key_resolution() {
    let ev = sample();
    let sort = |t: &str| build(t, &ev).sort_keys().to_vec();
    let key = |offset, size, cmp| SortField::Key { offset, size, cmp };
    let asc = |field| SortKey {
        field,
        descending: false,
    };
    let desc = |field| SortKey {
        field,
        descending: true,
    };
    assert_eq!(sort("keys=b"), [asc(SortField::Sum(0))]);
    assert_eq!(
        sort("keys=b:sort=hitcount.descending"),
        [desc(SortField::Sum(0))]
    );
    assert_eq!(
        sort("keys=b,c,s:vals=a:sort=a.descending,c"),
        [desc(SortField::Sum(1)), asc(key(8, 4, KeyCmp::Signed))]
    );
    assert_eq!(sort("keys=b:sort=b"), [asc(key(0, 4, KeyCmp::Unsigned))]);
    assert_eq!(
        sort("keys=a,s:sort=s.ascending"),
        [asc(key(8, 16, KeyCmp::String))]
    );
    assert_eq!(sort("keys=d:sort=d"), [asc(key(0, 256, KeyCmp::String))]);
    assert_eq!(
        sort("keys=common_stacktrace:sort=common_stacktrace"),
        [asc(key(0, 128, KeyCmp::None))]
    );
    assert_eq!(
        sort("keys=cpu:sort=cpu"),
        [asc(key(0, 8, KeyCmp::Unsigned))]
    );
    assert_eq!(sort("keys=c.log2:sort=c"), [asc(key(0, 4, KeyCmp::Signed))]);
    assert_eq!(
        sort("keys=common_pid.execname:sort=common_pid"),
        [asc(key(0, 4, KeyCmp::Signed))]
    );
    assert_eq!(
        sort("keys=common_flags:sort=common_flags"),
        [asc(key(0, 1, KeyCmp::Unsigned))]
    );
    assert_eq!(
        sort("keys=common_timestamp:sort=common_timestamp"),
        [asc(key(0, 8, KeyCmp::Unsigned))]
    );
    // A value of the same name comes first.
    assert_eq!(sort("keys=b:vals=b:sort=b"), [asc(SortField::Sum(1))]);
    // A pointer string is a number, compared as a string.
    let ev2 = odd();
    let hd = build("keys=p:sort=p", &ev2);
    assert_eq!(hd.sort_keys(), [asc(key(0, 8, KeyCmp::String))]);
    assert_eq!(hd.key_size(), 8);
}

#[test]
fn sort_key_errors() {
    let ev = sample();
    let t = "keys=b:vals=a:sort=b,junk";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::InvalidSortField, at(t, "junk"))
    );
    let t = "keys=b:vals=a:sort=junk.foo";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::InvalidSortField, at(t, "junk"))
    );
    let t = "keys=b:vals=a:sort=a.foo";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::InvalidSortModifier, at(t, "foo"))
    );
    let t = "keys=b:sort=hitcount.up";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::InvalidSortModifier, at(t, "up"))
    );
    let t = "keys=b:vals=a:sort=b,a,";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::TooManySortFields, at(t, "sort="))
    );
    // The first key is matched before the count is checked.
    let t = "keys=b:vals=a:sort=x,a,b";
    assert_eq!(
        build_err(t, &ev).kind(),
        Some(HistErrorKind::InvalidSortField)
    );
    let t = "keys=b:sort=b,";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::EmptySortField, at(t, "sort="))
    );
    // cpu is not named common_cpu, a stack trace key is.
    let t = "keys=cpu:sort=common_cpu";
    assert_eq!(
        build_err(t, &ev).kind(),
        Some(HistErrorKind::InvalidSortField)
    );
    let t = "keys=stacktrace:sort=stacktrace";
    assert_eq!(
        build_err(t, &ev).kind(),
        Some(HistErrorKind::InvalidSortField)
    );
    // From the selftests (trigger-hist-syntax-errors.tc).
    let t = "keys=common_pid:vals=hitcount:sort=common_pid,junk";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::InvalidSortField, at(t, "junk"))
    );
}

// --- the trigger info line ---------------------------------------------

static KMALLOC: [EventField<'static>; 6] = [
    EventField::new(
        "call_site",
        "unsigned long",
        8,
        8,
        false,
        FieldStorage::Other,
    ),
    EventField::new("ptr", "const void *", 16, 8, false, FieldStorage::Other),
    EventField::new("bytes_req", "size_t", 24, 8, false, FieldStorage::Other),
    EventField::new("bytes_alloc", "size_t", 32, 8, false, FieldStorage::Other),
    EventField::new(
        "gfp_flags",
        "unsigned long",
        40,
        8,
        false,
        FieldStorage::Other,
    ),
    EventField::new("node", "int", 48, 4, true, FieldStorage::Other),
];
static SYS_READ: [EventField<'static>; 4] = [
    EventField::new("__syscall_nr", "int", 8, 4, true, FieldStorage::Other),
    EventField::new("fd", "unsigned int", 16, 8, false, FieldStorage::Other),
    EventField::new("buf", "char *", 24, 8, false, FieldStorage::Other),
    EventField::new("count", "size_t", 32, 8, false, FieldStorage::Other),
];
static SYS_ENTER: [EventField<'static>; 2] = [
    EventField::new("id", "long", 8, 8, true, FieldStorage::Other),
    EventField::new(
        "args",
        "unsigned long[6]",
        16,
        48,
        false,
        FieldStorage::Other,
    ),
];
static RECVFROM: [EventField<'static>; 2] = [
    EventField::new("__syscall_nr", "int", 8, 4, true, FieldStorage::Other),
    EventField::new("size", "size_t", 32, 8, false, FieldStorage::Other),
];
static FORK: [EventField<'static>; 4] = [
    EventField::new(
        "parent_comm",
        "char[16]",
        8,
        16,
        false,
        FieldStorage::StaticString,
    ),
    EventField::new("parent_pid", "pid_t", 24, 4, true, FieldStorage::Other),
    EventField::new(
        "child_comm",
        "char[16]",
        28,
        16,
        false,
        FieldStorage::StaticString,
    ),
    EventField::new("child_pid", "pid_t", 44, 4, true, FieldStorage::Other),
];
static WAKEUP_LATENCY: [EventField<'static>; 3] = [
    EventField::new("lat", "u64", 8, 8, false, FieldStorage::Other),
    EventField::new("pid", "pid_t", 16, 4, true, FieldStorage::Other),
    EventField::new("prio", "int", 24, 4, true, FieldStorage::Other),
];
static BLOCK_LAT: [EventField<'static>; 3] = [
    EventField::new("pid", "pid_t", 8, 4, true, FieldStorage::Other),
    EventField::new("delta", "u64", 16, 8, false, FieldStorage::Other),
    EventField::new(
        "stack",
        "__data_loc unsigned long[]",
        24,
        8,
        false,
        FieldStorage::Stacktrace,
    ),
];
static LATENCY: [EventField<'static>; 1] = [EventField::new(
    "lat",
    "u64",
    8,
    8,
    false,
    FieldStorage::Other,
)];

/// The "trigger info:" lines of histogram.rst whose events we can
/// describe, without the " [active]"/filter suffix.
#[test]
fn doc_info_lines() {
    let kmalloc = event("kmem", "kmalloc", &KMALLOC);
    let read = event("syscalls", "sys_enter_read", &SYS_READ);
    let sys_enter = event("raw_syscalls", "sys_enter", &SYS_ENTER);
    let recvfrom = event("syscalls", "sys_enter_recvfrom", &RECVFROM);
    let fork = event("sched", "sched_process_fork", &FORK);
    let netif = event("net", "netif_receive_skb", &NETIF);
    let wakeup = event("synthetic", "wakeup_latency", &WAKEUP_LATENCY);
    let block = event("synthetic", "block_lat", &BLOCK_LAT);
    let latency = event("synthetic", "latency", &LATENCY);
    let cases: [(&str, &EventDesc<'_>, &str); 17] = [
        (
            "key=id.syscall:val=hitcount",
            &sys_enter,
            "hist:keys=id.syscall:vals=hitcount:sort=hitcount:size=2048",
        ),
        (
            "key=id.syscall,common_pid.execname:val=hitcount:sort=id,hitcount",
            &sys_enter,
            "hist:keys=id.syscall,common_pid.execname:vals=hitcount:sort=id.syscall,hitcount:size=2048",
        ),
        (
            "key=id.syscall,common_pid.execname:val=hitcount:sort=id,hitcount if id == 16",
            &sys_enter,
            "hist:keys=id.syscall,common_pid.execname:vals=hitcount:sort=id.syscall,hitcount:size=2048",
        ),
        (
            "key=common_pid.execname,size:val=hitcount:sort=common_pid,size",
            &recvfrom,
            "hist:keys=common_pid.execname,size:vals=hitcount:sort=common_pid.execname,size:size=2048",
        ),
        (
            "key=child_comm:val=hitcount:size=256",
            &fork,
            "hist:keys=child_comm:vals=hitcount:sort=hitcount:size=256",
        ),
        (
            "keys=len:vals=common_preempt_count",
            &netif,
            "hist:keys=len:vals=hitcount,common_preempt_count:sort=hitcount:size=2048",
        ),
        (
            "keys=skbaddr.hex:vals=len",
            &netif,
            "hist:keys=skbaddr.hex:vals=hitcount,len:sort=hitcount:size=2048",
        ),
        (
            "keys=skbaddr.hex:vals=len if len == 256",
            &netif,
            "hist:keys=skbaddr.hex:vals=hitcount,len:sort=hitcount:size=2048",
        ),
        (
            "name=foo:keys=skbaddr.hex:vals=len",
            &netif,
            "hist:name=foo:keys=skbaddr.hex:vals=hitcount,len:sort=hitcount:size=2048",
        ),
        (
            "name=bar:key=common_stacktrace:val=hitcount",
            &netif,
            "hist:name=bar:keys=common_stacktrace:vals=hitcount:sort=hitcount:size=2048",
        ),
        (
            "keys=pid,prio,lat.log2:sort=lat",
            &wakeup,
            "hist:keys=pid,prio,lat.log2:vals=hitcount:sort=lat.log2:size=2048",
        ),
        (
            "keys=pid,prio,lat.buckets=10:sort=lat",
            &wakeup,
            "hist:keys=pid,prio,lat.buckets=10:vals=hitcount:sort=lat.buckets=10:size=2048",
        ),
        (
            "keys=delta.buckets=100,stack.stacktrace:sort=delta",
            &block,
            "hist:keys=delta.buckets=100,stack.stacktrace:vals=hitcount:sort=delta.buckets=100:size=2048",
        ),
        (
            "keys=lat,common_pid:sort=lat",
            &latency,
            "hist:keys=lat,common_pid:vals=hitcount:sort=lat:size=2048",
        ),
        // Older examples of histogram.rst predate the hitcount that
        // 6.12 always shows first; these are the 6.12 lines.
        (
            "key=call_site.sym-offset:val=bytes_req:sort=bytes_req.descending",
            &kmalloc,
            "hist:keys=call_site.sym-offset:vals=hitcount,bytes_req:sort=bytes_req.descending:size=2048",
        ),
        (
            "keys=call_site.sym:values=bytes_req,bytes_alloc:sort=bytes_alloc.descending",
            &kmalloc,
            "hist:keys=call_site.sym:vals=hitcount,bytes_req,bytes_alloc:sort=bytes_alloc.descending:size=2048",
        ),
        (
            "key=common_pid.execname:val=count:sort=count.descending",
            &read,
            "hist:keys=common_pid.execname:vals=hitcount,count:sort=count.descending:size=2048",
        ),
    ];
    for (text, ev, want) in cases {
        assert_eq!(info(text, ev), want, "{text}");
    }
    assert_eq!(
        info("keys=common_stacktrace:values=bytes_req,bytes_alloc:sort=bytes_alloc", &kmalloc),
        "hist:keys=common_stacktrace:vals=hitcount,bytes_req,bytes_alloc:sort=bytes_alloc:size=2048"
    );
    assert_eq!(
        info("key=common_stacktrace:vals=len:pause", &netif),
        "hist:keys=common_stacktrace:vals=hitcount,len:sort=hitcount:size=2048"
    );
    assert_eq!(
        info("key=call_site.hex:val=bytes_req", &kmalloc),
        "hist:keys=call_site.hex:vals=hitcount,bytes_req:sort=hitcount:size=2048"
    );
}

#[test]
fn more_info_lines() {
    let ev = sample();
    let cases = [
        ("keys=cpu", "hist:keys=common_cpu:vals=hitcount:sort=hitcount:size=2048"),
        ("keys=cpu.hex:sort=cpu", "hist:keys=common_cpu.hex:vals=hitcount:sort=common_cpu.hex:size=2048"),
        ("keys=stacktrace", "hist:keys=common_stacktrace:vals=hitcount:sort=hitcount:size=2048"),
        (
            "keys=common_timestamp.usecs",
            "hist:keys=common_timestamp.usecs:vals=hitcount:sort=hitcount:size=2048:clock=global",
        ),
        (
            "keys=b:vals=common_timestamp:clock= mono ",
            "hist:keys=b:vals=hitcount,common_timestamp:sort=hitcount:size=2048:clock=mono",
        ),
        ("keys=b:clock=mono", "hist:keys=b:vals=hitcount:sort=hitcount:size=2048"),
        ("keys=b:vals=a:nohitcount", "hist:keys=b:vals=a:sort=hitcount:size=2048:nohitcount"),
        (
            "keys=b:vals=hitcount.percent,a.graph:NOHC:sort=a",
            "hist:keys=b:vals=hitcount.percent,a.graph:sort=a.graph:size=2048:nohitcount",
        ),
        ("keys=b.usecs:size=100", "hist:keys=b.usecs:vals=hitcount:sort=hitcount:size=128"),
        (
            "keys=hitcount.log2,s,d:vals=c.hex:size=0x20000:sort=c.descending,s",
            "hist:keys=.log2,s,d:vals=hitcount,c.hex:sort=c.hex.descending,s:size=131072",
        ),
        (
            "keys=b.buckets=18446744073709551615",
            "hist:keys=b.buckets=-1:vals=hitcount:sort=hitcount:size=2048",
        ),
        (
            "keys=rhist_test.rhist_sample.b:pause:cont:clear",
            "hist:keys=b:vals=hitcount:sort=hitcount:size=2048",
        ),
        (
            "keys=common_pid.execname,ip.sym-offset,c.syscall:vals=a,b:sort=c,hitcount.descending",
            "hist:keys=common_pid.execname,ip.sym-offset,c.syscall:vals=hitcount,a,b:sort=c.syscall,hitcount.descending:size=2048",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(info(text, &ev), want, "{text}");
    }
    // Another prefix.
    let spec = parse_trigger_in("rhist:", "name=x:keys=b").unwrap();
    let hd = HistData::build(&spec, &ev).unwrap();
    let mut s = String::new();
    hd.write_info(&mut s, "rhist:").unwrap();
    assert_eq!(
        s,
        "rhist:name=x:keys=b:vals=hitcount:sort=hitcount:size=2048"
    );
    assert_eq!(hd.spec().name(), Some("x"));
    assert_eq!(hd.map_bits(), 11);
    // A stack trace field without .stacktrace still prints with it.
    let ev = odd();
    assert_eq!(
        info("keys=stack", &ev),
        "hist:keys=stack.stacktrace:vals=hitcount:sort=hitcount:size=2048"
    );
}

// --- build errors -------------------------------------------------------

#[test]
fn field_errors() {
    let ev = sample();
    let t = "keys=nope";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::FieldNotFound, at(t, "nope"))
    );
    // The generic comm is common_comm (rhist's extension, as in 6.16;
    // 6.12 has no such field), but an unknown COMM-like name is not.
    let t = "keys=Comm";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::FieldNotFound, at(t, "Comm"))
    );
    // Values come before keys.
    let t = "keys=nope:vals=zz";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::FieldNotFound, at(t, "zz"))
    );
    // An empty key: caret 0.
    assert_eq!(
        build_err("keys=b,", &ev),
        HistError::new(HistErrorKind::FieldNotFound, 0)
    );
    // A modifier error comes before the look-up.
    let t = "keys=nope.foo";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::BadFieldModifier, at(t, "foo"))
    );
    // A numeric field of a size other than 1, 2, 4, 8.
    let ev2 = odd();
    assert_eq!(build_err("keys=arr", &ev2), HistError::silent(ENOMEM));
    assert_eq!(build_err("keys=arr.log2", &ev2), HistError::silent(ENOMEM));
}

#[test]
fn modifier_errors() {
    let ev = sample();
    let bad = |t: &str, s: &str| HistError::new(HistErrorKind::BadFieldModifier, at(t, s));
    for (t, s) in [
        ("keys=b:vals=a.log2", "a.log2"),
        ("keys=b:vals=a.buckets=10", "a.buckets=10"),
        ("keys=b:vals=ip.sym", "ip.sym"),
        ("keys=b:vals=b.syscall", "b.syscall"),
        ("keys=b:vals=common_stacktrace", "common_stacktrace"),
        ("keys=b:vals=stacktrace", "stacktrace"),
        ("keys=b:vals=a,STACKTRACE", "STACKTRACE"),
        ("keys=a.stacktrace", "a.stacktrace"),
        ("keys=stacktrace.stacktrace", "stacktrace.stacktrace"),
        (
            "keys=common_stacktrace.stacktrace",
            "common_stacktrace.stacktrace",
        ),
        ("keys=b.percent", "percent"),
        ("keys=b.graph", "graph"),
        ("keys=b.execname", "execname"),
    ] {
        assert_eq!(build_err(t, &ev), bad(t, s), "{t}");
    }
    // With two dots, C takes "b.hex." for a system and an event.
    let t = "keys=b.hex.sym";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::FieldNotFound, at(t, "sym"))
    );
    // C looks for its rewritten "symXoffset": caret 0.
    assert_eq!(
        build_err("keys=b:vals=ip.sym-offset", &ev),
        HistError::new(HistErrorKind::BadFieldModifier, 0)
    );
    // A stack trace field as a value.
    let ev2 = odd();
    let t = "keys=s8:vals=stack";
    assert_eq!(
        build_err(t, &ev2),
        HistError::new(HistErrorKind::BadFieldModifier, at(t, "stack"))
    );
}

#[test]
fn count_and_size_errors() {
    let ev = sample();
    let nohc = HistError::new(HistErrorKind::NeedNohcVal, 0);
    assert_eq!(build_err("keys=b:nohitcount", &ev), nohc);
    assert_eq!(build_err("keys=b:vals=hitcount:nohitcount", &ev), nohc);
    assert_eq!(nohc.errno(), ENOENT);
    let einval = HistError::silent(EINVAL);
    // A fourth key is rhist's extension (`morefields`); hist never looks
    // at it, so one that fails gets hist's error.
    assert_eq!(build("keys=a,b,c,common_pid", &ev).key_ids().len(), 4);
    assert_eq!(build_err("keys=a,b,c,nope", &ev), einval);
    assert_eq!(
        build_err("keys=a,b,nope,c", &ev).kind(),
        Some(HistErrorKind::FieldNotFound)
    );
    assert_eq!(build("keys=b:vals=a,b,c", &ev).n_sums(), 4);
    assert_eq!(build_err("keys=b:vals=a,b,nope", &ev), einval);
    assert_eq!(
        build_err("keys=b:vals=nope,b,c", &ev).kind(),
        Some(HistErrorKind::FieldNotFound)
    );
    // HIST_KEY_SIZE_MAX is 384.
    assert_eq!(build_err("keys=d,d", &ev), einval);
    assert_eq!(build("keys=d,stacktrace", &ev).key_size(), 384);
    assert_eq!(build_err("keys=d,stacktrace,a", &ev), einval);
    assert_eq!(build_err("keys=s,d,stacktrace", &ev), einval);
    assert_eq!(build("keys=s,d,a", &ev).key_size(), 16 + 256 + 8);
}

/// Variables C gives a `var_str_idx`: a copy in each entry.
#[test]
fn string_variables() {
    let ev = sample();
    for (t, copy) in [
        ("keys=b:x=s", Some(VarCopy::String)),
        ("keys=b:x=d", Some(VarCopy::String)),
        ("keys=b:x=s.hex", Some(VarCopy::String)),
        ("keys=b:x=common_pid.execname", Some(VarCopy::Execname)),
        ("keys=b:x=stacktrace", Some(VarCopy::Stack)),
        ("keys=b:x=common_stacktrace", Some(VarCopy::Stack)),
        ("keys=b:x=a", None),
        ("keys=b:x=common_pid", None),
    ] {
        let hd = build(t, &ev);
        assert_eq!((hd.n_vars(), hd.var_copy(0)), (1, copy), "{t}");
    }
    // update_var_execname(): a string, whatever the field was.
    let debug = debug_fields("keys=b:x=common_pid.execname", &ev);
    let var = debug.iter().find(|f| f.contains("var.name: x")).unwrap();
    assert!(
        var.contains("type: char[]\n      size: 256\n      is_signed: 0"),
        "{var}"
    );
    assert!(build("keys=b:x=common_pid.execname", &ev).needs_comm());
    // strscpy()'s bound: the field's size for a char[N], else 256.
    let hd = build("keys=b:x=s,y=d", &ev);
    let mut rec = std::vec![0u8; 512];
    let (s, d) = (field_of(&ev, "s"), field_of(&ev, "d"));
    rec[d.offset as usize..][..4].copy_from_slice(&(400u32 | (5 << 16)).to_ne_bytes());
    rec[400..405].copy_from_slice(b"dyn\0\0");
    let (src, size) = hd.var_string(0, &rec);
    assert_eq!(
        (src.len(), size),
        (512 - s.offset as usize, s.size as usize)
    );
    let (src, size) = hd.var_string(1, &rec);
    assert_eq!((&src[..4], size), (&b"dyn\0"[..], 256));
}

fn field_of<'e>(ev: &'e EventDesc<'static>, name: &str) -> &'e EventField<'static> {
    ev.fields.iter().find(|f| f.name == name).unwrap()
}

#[test]
fn not_supported_yet() {
    let ev = sample();
    let ns = not_supported();
    // Handlers build; their actions come after (actions.rs).
    for t in [
        "keys=b:x=a:onmax($x).save(comm)",
        "keys=b:x=a:onchange($x).save(common_pid)",
    ] {
        build(t, &ev);
    }
    // onmatch() looks its event up first.
    let t = "keys=b:vals=nope:onmatch(sched.sched_waking).trace(foo,$x)";
    assert_eq!(
        build_err_vars_defined(t, &ev),
        HistError::new(HistErrorKind::InvalidSubsysEvent, at(t, "sched_waking"))
    );
    // What C finds once the reference resolves: a key may not be one.
    assert_eq!(
        build_err_vars_defined("keys=$x", &ev),
        HistError::new(HistErrorKind::InvalidRefKey, at("keys=$x", "$x"))
    );
    // A stack trace field: as an operand, or a variable.
    let ev2 = odd();
    // As operands they are addresses, as in C.
    for t in [
        "keys=s8:vals=stack+1",
        "keys=s8:vals=-(stack)",
        "keys=s8:vals=1+stack.stacktrace",
        "keys=s8+stack",
    ] {
        build(t, &ev2);
    }
    for t in ["keys=s8:x=stack", "keys=s8:x=stack.stacktrace"] {
        assert_eq!(build(t, &ev2).var_copy(0), Some(VarCopy::Stack), "{t}");
    }
    // A pointer string is just a number, fine.
    assert!(HistData::build(&parse_trigger("keys=p:vals=p").unwrap(), &ev2).is_ok());
    assert!(HistData::build(&parse_trigger("keys=p+1:x=p").unwrap(), &ev2).is_ok());
    // FILTER_COMM fields with a size hold a pointer.
    static COMMS: [EventField<'static>; 1] = [EventField::new(
        "who",
        "char *",
        8,
        8,
        false,
        FieldStorage::Comm,
    )];
    assert_eq!(build_err("keys=who", &event("x", "y", &COMMS)), ns);

    // Errors C reports before it gets there.
    let t = "keys=b:vals=a.foo+$x";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::BadFieldModifier, at(t, "foo"))
    );
    let t = "keys=b:vals=zz+$x";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::FieldNotFound, at(t, "zz"))
    );
    let t = "keys=b:vals=s+$x";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::InvalidStrOperand, 2)
    );
    // A definition that names itself finds its text as C's buffer
    // holds it then: cut at each operator split so far (found by the
    // guest fuzzer, seed 109).
    let t = "keys=a:x=16-8-$x-2";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::FieldNotFound, at(t, "16"))
    );
    let t = "keys=a:x=rhist_test.rhist_sample.$x";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::FieldNotFound, at(t, "rhist_test"))
    );
    let t = "keys=a:x=$x-2";
    let e = build_err(t, &ev);
    assert_eq!(
        (e.kind(), e.pos()),
        (Some(HistErrorKind::FieldNotFound), at(t, "$x"))
    );
    assert_eq!(
        e.logged_before().collect::<Vec<_>>(),
        [(HistErrorKind::VarNotFound, at(t, "x"))]
    );
    // Values before variables, variables before keys.
    let t = "keys=b:x=$y:vals=zz";
    assert_eq!(build_err(t, &ev).kind(), Some(HistErrorKind::FieldNotFound));
    let t = "keys=$y:x=zz";
    assert_eq!(build_err(t, &ev).kind(), Some(HistErrorKind::FieldNotFound));
    // Handlers without onmatch() do not stop the fields.
    let t = "keys=b:vals=zz:onmax($x).save(comm)";
    assert_eq!(build_err(t, &ev).kind(), Some(HistErrorKind::FieldNotFound));
    let t = "keys=b:x=a.log2:onmax($x).save(comm)";
    assert_eq!(
        build_err(t, &ev).kind(),
        Some(HistErrorKind::BadFieldModifier)
    );
    let t = "keys=b:vals=s:sort=junk";
    assert_eq!(
        build_err(t, &ev).kind(),
        Some(HistErrorKind::InvalidSortField)
    );
    let t = "keys=b:x=s:sort=junk";
    assert_eq!(
        build_err(t, &ev).kind(),
        Some(HistErrorKind::InvalidSortField)
    );
}

/// Errors of expressions, as C reports them.
#[test]
fn expression_errors() {
    let ev = sample();
    let t = "keys=b:vals=a.foo+c";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::BadFieldModifier, at(t, "foo"))
    );
    let t = "keys=b:vals=zz+c";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::FieldNotFound, at(t, "zz"))
    );
    let t = "keys=b:vals=c+zz";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::FieldNotFound, at(t, "zz"))
    );
    // The left operand is resolved before a syntax error on the right.
    let t = "keys=b:vals=zz+1e";
    assert_eq!(build_err(t, &ev).kind(), Some(HistErrorKind::FieldNotFound));
    // "s" first occurs in "hist".
    let t = "keys=b:vals=s+a";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::InvalidStrOperand, 2)
    );
    let t = "keys=b:vals=a-d";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::InvalidStrOperand, at(t, "d"))
    );
    // The right operand is resolved before the left one's check... no:
    // C checks the left operand before parsing the right one.
    let t = "keys=b:vals=d-zz";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::InvalidStrOperand, at(t, "d-"))
    );
    let t = "keys=b:vals=-(d)";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::InvalidStrOperand, at(t, "d)"))
    );
    let t = "keys=b:x=-(s)";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::InvalidStrOperand, 2)
    );
    let t = "keys=s+1";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::InvalidStrOperand, 2)
    );
    let t = "keys=b:vals=a-common_timestamp.usecs";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::TimestampMismatch, 0)
    );
    // A constant has no unit: a time in us cannot even be divided by
    // one.
    for t in [
        "keys=b:x=common_timestamp.usecs-1",
        "keys=b:x=common_timestamp.usecs/1000",
        "keys=b:x=1000*common_timestamp.usecs",
    ] {
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::TimestampMismatch, 0),
            "{t}"
        );
    }
    // The unit of an expression is its first operand's.
    let t = "keys=b:x=common_timestamp.usecs-b.usecs-a";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::TimestampMismatch, 0)
    );
    let t = "keys=b:x=a-common_timestamp.usecs+b.usecs";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::TimestampMismatch, 0)
    );
    // -(x-y) splits on its inner minus: a syntax error.
    assert_eq!(
        build_err("keys=b:vals=-(a-b)", &ev),
        HistError::silent(EINVAL)
    );
    // Both in ns, or both in us, is fine; a constant has no unit.
    assert!(HistData::build(&parse_trigger("keys=b:x=common_timestamp-1").unwrap(), &ev).is_ok());
    assert!(HistData::build(
        &parse_trigger("keys=b:x=common_timestamp.usecs-b.usecs").unwrap(),
        &ev
    )
    .is_ok());
    // The unit check comes before the zero divisor.
    let t = "keys=b:x=common_timestamp.usecs/0";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::TimestampMismatch, 0)
    );
    let t = "keys=b:vals=a/0";
    let e = build_err(t, &ev);
    assert_eq!(
        e,
        HistError::with_errno(HistErrorKind::DivisionByZero, at(t, "0"), EDOM)
    );
    assert_eq!(e.errno(), EDOM);
    for t in ["keys=b:vals=a/0x0", "keys=b:vals=a/00", "keys=b:x=4/2/0"] {
        assert_eq!(
            build_err(t, &ev).kind(),
            Some(HistErrorKind::DivisionByZero),
            "{t}"
        );
    }
    // A zero divisor that is not a literal divides to -1 (below).
    assert!(HistData::build(&parse_trigger("keys=b:vals=a/b").unwrap(), &ev).is_ok());
    let t = "keys=b:vals=a+1e";
    assert_eq!(build_err(t, &ev).kind(), Some(HistErrorKind::ExpectNumber));
    let t = "keys=b:vals=a*b*c*d*a";
    assert_eq!(
        build_err(t, &ev).kind(),
        Some(HistErrorKind::TooManySubexpr)
    );
    // parse_unary() prints -(a.log2) with expr_str(), which fails on a
    // field with an operand but no operator: a silent -EINVAL.
    for t in [
        "keys=b:vals=-(a.log2)",
        "keys=b:x=-(b.buckets=10)",
        "keys=-(c.log2)",
    ] {
        assert_eq!(build_err(t, &ev), HistError::silent(EINVAL), "{t}");
    }
    // As operands of a binary operator they are fine.
    assert!(HistData::build(&parse_trigger("keys=b:vals=a.log2+1").unwrap(), &ev).is_ok());
    // Operands may have modifiers a value or variable may not have,
    // but the whole may not.
    for (t, s) in [
        ("keys=b:x=a.log2", "a.log2"),
        ("keys=b:x=b.buckets=10", "b.buckets=10"),
        ("keys=b:x=hitcount.log2", "hitcount.log2"),
        ("keys=b:y=a,x=c.log2", "c.log2"),
    ] {
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::BadFieldModifier, at(t, s)),
            "{t}"
        );
    }
    let t = "keys=b:x=a.percent";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::BadFieldModifier, at(t, "percent"))
    );
    for t in [
        "keys=b:x=a.sym+1",
        "keys=b:x=a.percent+1",
        "keys=b:vals=a.graph+b.syscall",
        "keys=b:x=ip.sym:vals=ip.hex",
    ] {
        assert!(
            HistData::build(&parse_trigger(t).unwrap(), &ev).is_ok(),
            "{t}"
        );
    }
}

/// The error cases of the ftrace selftest trigger-hist-expressions.tc,
/// as `hist:...` with a `^` at C's caret.
#[test]
fn selftest_expression_errors() {
    static FORK: [EventField<'static>; 4] = [
        EventField::new(
            "parent_comm",
            "char[16]",
            8,
            16,
            false,
            FieldStorage::StaticString,
        ),
        EventField::new("parent_pid", "pid_t", 24, 4, true, FieldStorage::Other),
        EventField::new(
            "child_comm",
            "char[16]",
            28,
            16,
            false,
            FieldStorage::StaticString,
        ),
        EventField::new("child_pid", "pid_t", 44, 4, true, FieldStorage::Other),
    ];
    let ev = event("sched", "sched_process_fork", &FORK);
    for (cmd, kind) in [
        (
            "hist:keys=common_pid:x=32+^10*3/20-4",
            HistErrorKind::TooManySubexpr,
        ),
        (
            "hist:keys=common_pid:x=^1+2+3+4+5",
            HistErrorKind::TooManySubexpr,
        ),
        (
            "hist:keys=common_pid:x=-(^1)+2",
            HistErrorKind::UnaryMinusSubexpr,
        ),
        ("hist:keys=common_pid:x=3/^0", HistErrorKind::DivisionByZero),
    ] {
        let pos = cmd.find('^').unwrap();
        let text = cmd.replacen('^', "", 1);
        let text = text.strip_prefix("hist:").unwrap();
        assert_eq!(build_err(text, &ev), HistError::new(kind, pos), "{cmd}");
    }
}

// --- expressions and variables ----------------------------------------

/// The values of trigger-hist-expressions.tc, read back from the
/// trigger info as the selftest does (`x=[[:digit:]]*`).
#[test]
fn selftest_expression_values() {
    let ev = waking();
    for (expr, want) in [
        ("123", 123),
        ("16-8-4-2", 2),
        ("64/8/4/2", 1),
        ("16-8+4+2", 14),
        ("4*3/2*2", 12),
        ("4+3*2-2", 8),
        ("4+6/2-2", 5),
    ] {
        let text = format!("keys=common_pid:x={expr}");
        let hd = build(&text, &ev);
        let mut line = String::new();
        hd.write_info(&mut line, "hist:").unwrap();
        assert_eq!(
            line,
            format!("hist:keys=common_pid:vals=hitcount:x={want}:sort=hitcount:size=2048"),
            "{expr}"
        );
        assert_eq!(hd.n_vars(), 1);
        assert_eq!(hd.var_name(0), Some("x"));
        assert_eq!(hd.var_value(0, &[], &CTX), want, "{expr}");
        // Folded: one constant, no operands left behind.
        assert_eq!(hd.n_nodes, 3, "{expr}");
    }
}

#[test]
fn constant_folding() {
    let ev = sample();
    let var = |expr: &str| {
        let text = format!("keys=b:x={expr}");
        let hd = build(&text, &ev);
        (hd.var_value(0, &[], &CTX), info(&text, &ev))
    };
    // C folds a division by a constant with the function it would use
    // at run time: 10/3 multiplies by (1 << 20) / 3 and rounds up.
    assert_eq!(var("10/3").0, 4);
    assert_eq!(var("9/3").0, 3);
    assert_eq!(var("11/3").0, 4);
    assert_eq!(var("12/3").0, 4);
    assert_eq!(var("1048577/3").0, 349525);
    assert_eq!(var("7/2").0, 3);
    assert_eq!(var("0x10/0x10").0, 1);
    // Wrapping arithmetic, printed as C's %llu.
    assert_eq!(
        var("1-2"),
        (
            u64::MAX,
            "hist:keys=b:vals=hitcount:x=18446744073709551615:sort=hitcount:size=2048".into()
        )
    );
    assert_eq!(var("0xffffffffffffffff*2").0, u64::MAX - 1);
    assert_eq!(
        var("0x10").1,
        "hist:keys=b:vals=hitcount:x=16:sort=hitcount:size=2048"
    );
    // A constant operand is folded into the expression's name.
    assert_eq!(
        var("a+3*4").1,
        "hist:keys=b:vals=hitcount:x=a+12:sort=hitcount:size=2048"
    );
    // Unary minus is never folded.
    assert_eq!(
        var("-(5)"),
        (
            (-5i64) as u64,
            "hist:keys=b:vals=hitcount:x=-(5):sort=hitcount:size=2048".into()
        )
    );
    assert_eq!(
        var("-(3+4)"),
        (
            (-7i64) as u64,
            "hist:keys=b:vals=hitcount:x=-(7):sort=hitcount:size=2048".into()
        )
    );
}

#[test]
fn expression_values() {
    let ev = sample();
    // a = 10, b = 7, c = -3.
    let r = sample_rec(1, 10, 7, -3, b"", "", 0);
    let val = |expr: &str| {
        let text = format!("keys=b:vals={expr}");
        let hd = build(&text, &ev);
        assert_eq!(hd.n_sums(), 2);
        hd.sum_value(1, &r, &CTX)
    };
    assert_eq!(val("a+b"), 17);
    assert_eq!(val("a-b"), 3);
    assert_eq!(val("b-a"), (-3i64) as u64);
    assert_eq!(val("a*c"), (-30i64) as u64);
    assert_eq!(val("a-b-c"), 6);
    assert_eq!(val("a+b*c"), (-11i64) as u64);
    assert_eq!(val("-(a)"), (-10i64) as u64);
    assert_eq!(val("-(c)"), 3);
    assert_eq!(val("-(a+b)"), (-17i64) as u64);
    assert_eq!(val("a/b"), 1);
    // By a constant: 10/3 is 4 in C (multiply and shift).
    assert_eq!(val("a/3"), 4);
    assert_eq!(val("a/4"), 2);
    assert_eq!(val("a/1048577"), 0);
    // Signed fields are sign-extended, then divided as u64.
    assert_eq!(val("c/2"), ((-3i64) as u64) >> 1);
    assert_eq!(val("c/3"), ((-3i64) as u64) / 3);
    assert_eq!(val("b.log2+1"), 4);
    assert_eq!(val("b.buckets=5+1"), 6);
    assert_eq!(val("common_cpu*10"), 30);
    assert_eq!(val("cpu+hitcount"), 4);
    assert_eq!(val("common_timestamp-common_timestamp"), 0);
    assert_eq!(val("common_stacktrace+1"), 1);
    assert_eq!(val("common_timestamp.usecs/b.usecs"), 176);
    assert_eq!(val("common_pid.execname+1"), 2);
    assert_eq!(val("ip.sym-offset+1"), 1);
    assert_eq!(val("5"), 5);
    assert_eq!(val("2*3"), 6);
    // A zero divisor at run time gives (u64)-1; a power of two shifts.
    let r0 = sample_rec(1, 10, 0, -3, b"", "", 0);
    let hd = build("keys=b:vals=a/b", &ev);
    assert_eq!(hd.sum_value(1, &r0, &CTX), u64::MAX);
    let r8 = sample_rec(1, 100, 8, -3, b"", "", 0);
    assert_eq!(hd.sum_value(1, &r8, &CTX), 12);
    // .usecs converts every timestamp of the trigger.
    let hd = build("keys=b:x=common_timestamp.usecs:y=common_timestamp+0", &ev);
    assert!(hd.uses_timestamps() && hd.ts_in_usecs());
    assert_eq!(hd.var_value(0, &r, &CTX), 1235);
    assert_eq!(hd.var_value(1, &r, &CTX), 1235);
}

/// Expressions and constants as keys.
#[test]
fn expression_keys() {
    let ev = sample();
    let r = sample_rec(1, 10, 7, -3, b"", "", 0);
    assert_eq!(show("keys=a+b", &ev, &r), "{ a+b:         17 }");
    assert_eq!(show("keys=-(b)", &ev, &r), "{ -(b): 18446744073709551609 }");
    assert_eq!(show("keys=5", &ev, &r), "{ :          5 }");
    assert_eq!(show("keys=2*0x10", &ev, &r), "{ :         32 }");
    assert_eq!(show("keys=b.hex*2", &ev, &r), "{ b.hex*2:         14 }");
    let hd = build("keys=b,c*2,a-1", &ev);
    assert_eq!(hd.key_size(), 24);
    let key = key_of(&hd, &r, &CTX);
    assert_eq!(u64s(&key), [7, (-6i64) as u64, 9]);
    assert_eq!(
        keys_text(&hd, &key, &NoSymbols),
        "{ b:          7, c*2: 18446744073709551610, a-1:          9 }"
    );
    assert_eq!(
        info("keys=b,c*2,a-1", &ev),
        "hist:keys=b,c*2,a-1:vals=hitcount:sort=hitcount:size=2048"
    );
    // Sorting on an expression key: compared as C's cmp of its size
    // (8 once aligned) and signedness (the first operand's).
    let sort = |t: &str| build(t, &ev).sort_keys().to_vec();
    let key = |offset, size, cmp| SortKey {
        field: SortField::Key { offset, size, cmp },
        descending: false,
    };
    assert_eq!(sort("keys=b,c*2:sort=c*2"), [key(8, 8, KeyCmp::Signed)]);
    assert_eq!(sort("keys=b+c:sort=b+c"), [key(0, 8, KeyCmp::Unsigned)]);
    assert_eq!(sort("keys=-(c):sort=-(c)"), [key(0, 8, KeyCmp::Signed)]);
    assert_eq!(
        sort("keys=5"),
        [SortKey {
            field: SortField::Sum(0),
            descending: false
        }]
    );
    // Values sort by their expression's name too.
    let hd = build("keys=b:vals=a+c:sort=a+c.descending", &ev);
    assert_eq!(
        hd.sort_keys(),
        [SortKey {
            field: SortField::Sum(1),
            descending: true
        }]
    );
    assert_eq!(
        info("keys=b:vals=a+c:sort=a+c.descending", &ev),
        "hist:keys=b:vals=hitcount,a+c:sort=a+c.descending:size=2048"
    );
    // A constant has no name to sort on.
    let t = "keys=b:vals=5:sort=5";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::InvalidSortField, at(t, "5:"))
    );
}

/// Expression and constant values: summed; constants are shown with
/// an empty name, expressions not at all.
#[test]
fn expression_and_constant_vals() {
    let ev = sample();
    let hd = build("keys=b:vals=a+c,10", &ev);
    assert_eq!(hd.n_sums(), 3);
    let vals = printed(&hd);
    assert_eq!(
        vals,
        owned(&[
            (0, "hitcount", ValDisplay::Plain),
            (2, "", ValDisplay::Plain)
        ])
    );
    assert_eq!(
        info("keys=b:vals=a+c,10", &ev),
        "hist:keys=b:vals=hitcount,a+c,10:sort=hitcount:size=2048"
    );
    assert_eq!(
        info("keys=b:vals=a.hex*2,c.percent-1:nohitcount", &ev),
        "hist:keys=b:vals=a.hex*2,c.percent-1:sort=hitcount:size=2048:nohitcount"
    );
}

/// Expression names, as `expr_str()` writes them.
#[test]
fn expression_names() {
    let ev = sample();
    let vals = |expr: &str| {
        let line = info(&format!("keys=b:vals={expr}"), &ev);
        let rest = line.strip_prefix("hist:keys=b:vals=hitcount,").unwrap();
        String::from(&rest[..rest.find(":sort=").unwrap()])
    };
    assert_eq!(vals("a+b"), "a+b");
    assert_eq!(vals("a+0x10"), "a+16");
    assert_eq!(vals("a+010"), "a+8");
    assert_eq!(vals("a*b/c"), "a*b/c");
    assert_eq!(vals("a-b*c+4"), "a-b*c+4");
    assert_eq!(vals("ip.sym-offset+1"), "ip.sym-offset+1");
    assert_eq!(vals("b.log2*2"), "b.log2*2");
    // No "=10": expr_field_str() does not print buckets.
    assert_eq!(vals("b.buckets=10+1"), "b.buckets+1");
    assert_eq!(vals("cpu+common_cpu"), "cpu+common_cpu");
    assert_eq!(vals("hitcount+1"), "hitcount+1");
    assert_eq!(
        vals("common_stacktrace+1"),
        "common_stacktrace.stacktrace+1"
    );
    assert_eq!(vals("common_pid.execname-1"), "common_pid.execname-1");
    assert_eq!(vals("-(a*b)"), "-(a*b)");
    assert_eq!(vals("-(a*b+c)"), "-(a*b+c)");
    assert_eq!(
        vals("common_timestamp.usecs-common_timestamp.usecs"),
        "common_timestamp.usecs-common_timestamp.usecs"
    );
    // An operand expression has the .usecs of its first operand, and
    // expr_field_str() prints it.
    assert_eq!(
        vals("a.usecs+b.usecs+c.usecs"),
        "a.usecs+b.usecs.usecs+c.usecs"
    );
    assert_eq!(
        vals("-(common_timestamp.usecs+b.usecs)"),
        "-(common_timestamp.usecs+b.usecs)"
    );
    // A variable standing for a plain field is that field.
    assert_eq!(
        info("keys=b:vals=$y*2:y=a", &ev),
        "hist:keys=b:vals=hitcount,a*2:y=a:sort=hitcount:size=2048"
    );
    assert_eq!(
        info("keys=b:y=a:x=$y+1", &ev),
        "hist:keys=b:vals=hitcount:y=a,x=a+1:sort=hitcount:size=2048"
    );
    assert_eq!(
        info("keys=rhist_test.rhist_sample.$y:y=c", &ev),
        "hist:keys=c:vals=hitcount:y=c:sort=hitcount:size=2048"
    );
}

/// `expr_str()` writes into MAX_FILTER_STR_VAL bytes: a longer name
/// is -E2BIG.
#[test]
fn expression_name_limit() {
    let a: &'static str = "a".repeat(127).leak();
    let b: &'static str = "b".repeat(127).leak();
    let fields: &'static [EventField<'static>] = std::vec![
        EventField::new(a, "u64", 8, 8, false, FieldStorage::Other),
        EventField::new(b, "u64", 16, 8, false, FieldStorage::Other),
        EventField::new("c", "u64", 24, 8, false, FieldStorage::Other),
    ]
    .leak();
    let ev = event("x", "long", fields);
    // 127 + 1 + 127 = 255 bytes: fits.
    let t = format!("keys=c:vals={a}+{b}");
    let hd = build(&t, &ev);
    assert_eq!(hd.sum_value(1, &[0; 32], &CTX), 0);
    // 256 bytes: does not.
    let e2big = HistError::silent(7);
    assert_eq!(build_err(&format!("keys=c:vals={a}+{b}.hex"), &ev), e2big);
    assert_eq!(build_err(&format!("keys=c:x={a}+{b}*c"), &ev), e2big);
    assert_eq!(build_err(&format!("keys={a}*10+{b}"), &ev), e2big);
    assert_eq!(build_err(&format!("keys=c:vals=-({a}+{b})"), &ev), e2big);
    // Folded constants are short.
    assert!(HistData::build(&parse_trigger(&format!("keys=c:vals={a}+1")).unwrap(), &ev).is_ok());
}

#[test]
fn variables() {
    let ev = sample();
    let r = sample_rec(1, 10, 7, -3, b"", "", 0);
    let t = "keys=b:vals=a:x=a+b,y=c:z=common_timestamp.usecs,w=cpu,v=a.hex,u=hitcount";
    let hd = build(t, &ev);
    // Variables are not sums.
    assert_eq!(hd.n_sums(), 2);
    assert_eq!(hd.n_vars(), 6);
    let names: Vec<_> = (0..7).map(|i| hd.var_name(i)).collect();
    assert_eq!(
        names,
        [
            Some("x"),
            Some("y"),
            Some("z"),
            Some("w"),
            Some("v"),
            Some("u"),
            None
        ]
    );
    let values: Vec<_> = (0..7).map(|i| hd.var_value(i, &r, &CTX)).collect();
    assert_eq!(values, [17, (-3i64) as u64, 1235, 3, 10, 1, 0]);
    assert_eq!(
        info(t, &ev),
        "hist:keys=b:vals=hitcount,a:x=a+b,y=c,z=common_timestamp.usecs,w=common_cpu,\
         v=a.hex,u=hitcount:sort=hitcount:size=2048:clock=global"
    );
    let vals = printed(&hd);
    assert_eq!(
        vals,
        owned(&[
            (0, "hitcount", ValDisplay::Plain),
            (1, "a", ValDisplay::Plain)
        ])
    );
    // Without other values, and with nohitcount.
    assert_eq!(
        info("keys=b:x=a:nohitcount:vals=c", &ev),
        "hist:keys=b:vals=c:x=a:sort=hitcount:size=2048:nohitcount"
    );
    // sym, syscall, usecs and execname-free modifiers are fine on a
    // variable; the name may be anything C takes.
    assert_eq!(
        info("keys=b:x=ip.sym,hitcount=b.syscall:y=b.usecs", &ev),
        "hist:keys=b:vals=hitcount:x=ip.sym,hitcount=b.syscall,y=b.usecs:sort=hitcount:size=2048"
    );
    // Variables are not sort keys, even named like a field.
    let t = "keys=b:x=a:sort=a";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::InvalidSortField, at(t, "a:sort"))
    );
    let t = "keys=b:x=a:sort=x";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::InvalidSortField, at(t, "x"))
    );
    // Sort keys after variables still index the sums.
    let hd = build("keys=b:vals=c:x=a:sort=c,b", &ev);
    assert_eq!(hd.sort_keys()[0].field, SortField::Sum(1));
    assert_eq!(
        info("keys=b:vals=c:x=a:sort=c,b", &ev),
        "hist:keys=b:vals=hitcount,c:x=a:sort=c,b:size=2048"
    );
    // needs_comm() counts variables (none can have .execname yet).
    assert!(!hd.needs_comm());
}

#[test]
fn duplicate_variables() {
    let ev = sample();
    for (t, name) in [
        ("keys=b:x=a,x=c", "x"),
        ("keys=b:xx=a:yy=1:xx=2", "xx"),
        ("keys=b:ts=a,tx=c,ts=a", "ts"),
    ] {
        // The caret is on the first occurrence of the name.
        assert_eq!(
            build_err(t, &ev),
            HistError::new(HistErrorKind::DuplicateVar, at(t, name)),
            "{t}"
        );
    }
    assert_eq!(build_err("keys=b:x=a,x=c", &ev).errno(), EINVAL);
    // A variable named like a field or value is fine.
    assert!(HistData::build(&parse_trigger("keys=b:vals=a:a=a").unwrap(), &ev).is_ok());
    // The definition after the duplicate is never parsed.
    let t = "keys=b:x=a,x=zz";
    assert_eq!(build_err(t, &ev).kind(), Some(HistErrorKind::DuplicateVar));
    // Removing (`!hist:`) skips the check, as C's hist_data->remove.
    let spec = parse_trigger("keys=b:x=a,x=c").unwrap();
    let mut hd = HistData::empty(&spec);
    let remove = BuildOptions {
        remove: true,
        ..Default::default()
    };
    HistData::build_into_with(&mut hd, &spec, &ev, remove).unwrap();
    assert_eq!(hd.n_vars(), 2);
    // A variable another trigger of the event defines.
    let t = "keys=b:y=a:x=c";
    let spec = parse_trigger(t).unwrap();
    let taken = |name: &str| name == "x";
    let mut hd = HistData::empty(&spec);
    let options = BuildOptions {
        defined_elsewhere: Some(&taken),
        ..Default::default()
    };
    assert_eq!(
        HistData::build_into_with(&mut hd, &spec, &ev, options),
        Err(HistError::new(HistErrorKind::DuplicateVar, at(t, "x=c")))
    );
    let mut hd = HistData::empty(&spec);
    let options = BuildOptions {
        remove: true,
        defined_elsewhere: Some(&taken),
        ..Default::default()
    };
    HistData::build_into_with(&mut hd, &spec, &ev, options).unwrap();
}

/// Texts with two errors: C stops at the first one in its order of
/// work (attributes, then values, variables, keys and sort keys, each
/// parsed and looked up together), so a look-up failing early wins
/// over a syntax error further on.  `(text, kind, caret at, errno)`;
/// `None` for a silent failure.
#[test]
fn error_precedence() {
    use HistErrorKind::*;
    let ev = sample();
    type Logged = Option<(HistErrorKind, &'static str)>;
    let cases: &[(&str, Logged, i32)] = &[
        // Sort key: the name is looked up before the modifier is read.
        (
            "keys=a:vals=b:sort=zz.foo",
            Some((InvalidSortField, "zz")),
            EINVAL,
        ),
        (
            "keys=a:sort=a.foo,zz",
            Some((InvalidSortModifier, "foo")),
            EINVAL,
        ),
        ("keys=a:sort=zz,b,c", Some((InvalidSortField, "zz")), EINVAL),
        ("keys=zz:sort=a.foo", Some((FieldNotFound, "zz")), EINVAL),
        (
            "keys=a:vals=b:sort=zz,",
            Some((InvalidSortField, "zz")),
            EINVAL,
        ),
        // Values before variables before keys before sort keys.
        ("keys=a.foo:vals=zz", Some((FieldNotFound, "zz")), EINVAL),
        ("keys=a:vals=zz,b.foo", Some((FieldNotFound, "zz")), EINVAL),
        (
            "keys=a:vals=b.foo,zz",
            Some((BadFieldModifier, "foo")),
            EINVAL,
        ),
        ("keys=zz:x=b.foo", Some((BadFieldModifier, "foo")), EINVAL),
        (
            "keys=a:x=zz:vals=b.foo",
            Some((BadFieldModifier, "foo")),
            EINVAL,
        ),
        ("keys=a.log2:x=zz", Some((FieldNotFound, "zz")), EINVAL),
        ("keys=zz:x=1:x=2", Some((DuplicateVar, "x")), EINVAL),
        (
            "keys=a:x=1:x=2:vals=zz",
            Some((FieldNotFound, "zz")),
            EINVAL,
        ),
        ("keys=zz:nohitcount", Some((NeedNohcVal, "")), ENOENT),
        ("keys=zz:sort=b", Some((FieldNotFound, "zz")), EINVAL),
        // Modifier before name within one field.
        ("keys=zz.foo", Some((BadFieldModifier, "foo")), EINVAL),
        // Division by the constant zero: where the expression is.
        ("keys=zz:vals=b/0", Some((DivisionByZero, "0")), EDOM),
        ("keys=a:vals=zz,b/0", Some((FieldNotFound, "zz")), EINVAL),
        ("keys=a:vals=zz/0", Some((FieldNotFound, "zz")), EINVAL),
        ("keys=a:vals=zz+b/0", Some((FieldNotFound, "zz")), EINVAL),
        ("keys=a:vals=b/0+zz", Some((DivisionByZero, "0")), EDOM),
        ("keys=a/0:vals=zz", Some((FieldNotFound, "zz")), EINVAL),
        ("keys=a:x=b/0:vals=zz", Some((FieldNotFound, "zz")), EINVAL),
        // errpos("s"): the s of "rhist".
        ("keys=a:vals=s+zz", Some((InvalidStrOperand, "s")), EINVAL),
        // Silent syntax errors after a failed look-up.
        ("keys=a+:vals=zz", Some((FieldNotFound, "zz")), EINVAL),
        ("keys=a,b,c,d:vals=zz", Some((FieldNotFound, "zz")), EINVAL),
        ("keys=zz,b,c,d", Some((FieldNotFound, "zz")), EINVAL),
        ("keys=a:vals=a,zz,c", Some((FieldNotFound, "zz")), EINVAL),
        ("keys=a:vals=-(zz", None, EINVAL),
        ("keys=zz:vals=a,b,c", None, EINVAL),
        ("keys=a,b,c,d.foo", None, EINVAL),
        // An empty value: "" is not a field (the caret is at 0).
        ("keys=a:vals=b,,c", Some((FieldNotFound, "")), EINVAL),
        ("keys=a:vals=,b", Some((FieldNotFound, "")), EINVAL),
        ("keys=a,,b", Some((FieldNotFound, "")), EINVAL),
        // Attributes before any field.
        ("keys=zz:size=abc", None, EINVAL),
        ("keys=zz:bogus", None, EINVAL),
        ("keys=zz:x=", Some((EmptyAssignment, "x=")), EINVAL),
        ("keys=a:vals=zz:y", None, EINVAL),
        (
            "keys=a:vals=zz:x=1,y",
            Some((MalformedAssignment, "y")),
            EINVAL,
        ),
    ];
    for &(text, logged, errno) in cases {
        let spec = crate::hist::trigger::parse(text);
        let err = spec.and_then(|spec| HistData::build(&spec, &ev).map(|_| ()));
        let err = err.expect_err(text);
        let prefix = crate::hist::trigger::PREFIX;
        let expected = match logged {
            // The caret is C's errpos(): the first occurrence, or 0.
            Some((kind, s)) => {
                let pos = format!("{prefix}{text}").find(s).filter(|_| !s.is_empty());
                let pos = pos.unwrap_or(0);
                HistError::with_errno(kind, pos, errno)
            }
            None => HistError::silent(errno),
        };
        assert_eq!(err, expected, "{text}");
    }
}

/// A `$var` that no trigger defines: C logs `VAR_NOT_FOUND`, then
/// parses `$var` as a field, which logs again.
#[test]
fn unknown_variable_references() {
    use HistErrorKind::*;
    let ev = sample();
    let cases = [
        ("keys=a:vals=$zz", (FieldNotFound, "$zz"), "zz"),
        ("keys=a:vals=$zz.foo", (BadFieldModifier, "foo"), "zz.foo"),
        ("keys=a:vals=b+$zz", (FieldNotFound, "$zz"), "zz"),
        // A variable of the same trigger is made after the values, and
        // only a plain field stands for itself.
        ("keys=a:x=b+1:vals=$x", (FieldNotFound, "$x"), "x"),
        ("keys=$zz", (FieldNotFound, "$zz"), "zz"),
        (
            "keys=a:vals=rhist_test.other.$zz",
            (FieldNotFound, "$zz"),
            "zz",
        ),
        // Before the later modifier error.
        ("keys=a.foo:vals=$zz", (FieldNotFound, "$zz"), "zz"),
    ];
    for (text, (kind, at_s), var) in cases {
        let err = build_err(text, &ev);
        let expected = HistError::new(kind, at(text, at_s)).after(VarNotFound, at(text, var));
        assert_eq!(err, expected, "{text}");
    }
    // A plain field of a variable of this trigger stands for it.
    build("keys=a:x=b:vals=$x", &ev);
}

/// C parses a variable's expression in place, cutting its text at
/// the operators: afterwards `$x` of a later variable or key finds a
/// plain field there (`x=b+1` is then `b`), as `field_name_from_var()`
/// reads it.
#[test]
fn parsed_definitions_are_cut() {
    let ev = sample();
    assert_eq!(
        info("keys=a:x=b+1:y=$x", &ev),
        "hist:keys=a:vals=hitcount:x=b+1,y=b:sort=hitcount:size=2048"
    );
    assert_eq!(
        info("keys=$x:x=b+1", &ev),
        "hist:keys=b:vals=hitcount:x=b+1:sort=hitcount:size=2048"
    );
    // Cut at the first operator C split at, the leftmost.
    assert_eq!(
        info("keys=a:x=b*2+c-1:y=$x", &ev),
        "hist:keys=a:vals=hitcount:x=b*2+c-1,y=b:sort=hitcount:size=2048"
    );
    // A unary minus keeps its '-': still an operator, a reference.
    let t = "keys=a:x=-(b):y=$x";
    assert_eq!(
        build_err(t, &ev),
        HistError::new(HistErrorKind::FieldNotFound, at(t, "$x"))
            .after(HistErrorKind::VarNotFound, at(t, "x"))
    );
    // Values come before variables: not cut yet.
    let t = "keys=a:vals=$x:x=b+1";
    assert_eq!(build_err(t, &ev).kind(), Some(HistErrorKind::FieldNotFound));
}

/// A trigger needing more hist fields than the arena holds.
#[test]
fn arena_limit() {
    let ev = sample();
    let var = "a.log2+b.log2*c.log2-a.log2";
    let defs: Vec<String> = (0..16).map(|i| format!("v{i}={var}")).collect();
    let t = format!("keys=b:{}", defs.join(","));
    assert_eq!(build_err(&t, &ev), not_supported());
    let t = format!("keys=b:{}", defs[..11].join(","));
    let hd = build(&t, &ev);
    assert_eq!(hd.n_vars(), 11);
    // Sixteen variables of three operators fit.
    let defs: Vec<String> = (0..16).map(|i| format!("v{i}=a+b*c-a")).collect();
    let t = format!("keys=b+c,a:vals=a*b,b:{}", defs.join(","));
    let hd = build(&t, &ev);
    assert_eq!(hd.n_nodes, 1 + 3 + 1 + 16 * 7 + 3 + 1);
    assert_eq!(hd.n_vars(), 16);
    let r = sample_rec(1, 10, 7, -3, b"", "", 0);
    assert_eq!(hd.var_value(15, &r, &CTX), (-21i64) as u64);
    // Folded operands give their room back.
    let defs: Vec<String> = (0..16).map(|i| format!("v{i}=1+2*3-4")).collect();
    let t = format!("keys=b:{}", defs.join(","));
    let hd = build(&t, &ev);
    assert_eq!(hd.n_nodes, 1 + 16 + 1);
    assert_eq!(hd.var_value(15, &[], &CTX), 3);
}

/// C's division functions against plain division.
#[test]
fn division_functions() {
    assert_eq!(hist_div(10, 0), u64::MAX);
    assert_eq!(hist_div(u64::MAX, 1), u64::MAX);
    assert_eq!(hist_div(100, 8), 12);
    assert_eq!(hist_div(100, 7), 14);
    assert_eq!(div_fetch(1), Fetch::DivPower2 { shift: 0 });
    assert_eq!(div_fetch(1 << 63), Fetch::DivPower2 { shift: 63 });
    assert_eq!(div_fetch(3), Fetch::DivMultShift { mult: 349_525 });
    assert_eq!(div_fetch((1 << 20) - 1), Fetch::DivMultShift { mult: 1 });
    assert_eq!(div_fetch((1 << 20) + 1), Fetch::DivNotPower2);
    // Below 2^20 the multiplication rounds up; from 2^20 it divides.
    assert_eq!(div_mult_shift(10, 349_525, 3), 4);
    assert_eq!(div_mult_shift((1 << 20) - 1, 349_525, 3), 349_525);
    assert_eq!(div_mult_shift(1 << 20, 349_525, 3), 349_525);
    assert_eq!(div_mult_shift(0, 349_525, 3), 0);
    assert_eq!(div_mult_shift(u64::MAX, 1, 1_000_000), u64::MAX / 1_000_000);
    assert_eq!(apply_op(Fetch::DivPower2 { shift: 64 }, 5, || 0, 0), 0);
    assert_eq!(apply_op(Fetch::DivNotPower2, 5, || 0, 0), u64::MAX);
}

proptest::proptest! {
    #[test]
    fn strncpy_from_is_strncpy(
        rec in proptest::collection::vec(proptest::prop_oneof![0u8..1, 1u8..=255], 0..80),
        src in 0usize..90,
        size in 0usize..90,
        dst_len in 0usize..70,
    ) {
        let mut want = std::vec![0xaau8; dst_len];
        for (i, d) in want.iter_mut().enumerate().take(size) {
            match rec.get(src + i) {
                Some(&b) if b != 0 => *d = b,
                _ => break,
            }
        }
        let mut got = std::vec![0xaau8; dst_len];
        strncpy_from(&mut got, &rec, src, size);
        proptest::prop_assert_eq!(got, want);
    }

    /// hist_field_div() is division, -1 for 0.
    #[test]
    fn prop_hist_div(a: u64, b: u64) {
        let want = a.checked_div(b).unwrap_or(u64::MAX);
        proptest::prop_assert_eq!(hist_div(a, b), want);
    }

    /// A division by a constant, built and evaluated, is C's: exact
    /// except multiply-and-shift below 2^20, which is the ceiling of
    /// a * floor(2^20 / d) / 2^20: the quotient, or one more when d
    /// does not divide a.
    #[test]
    fn prop_div_by_constant(
        a in proptest::prop_oneof![0u64..(1 << 21), proptest::num::u64::ANY],
        d in proptest::prop_oneof![1u64..(1 << 21), proptest::num::u64::ANY],
    ) {
        proptest::prop_assume!(d != 0);
        let ev = sample();
        let text = format!("keys=b:vals=a/{d}");
        let spec = parse_trigger(&text).unwrap();
        let hd = HistData::build(&spec, &ev).unwrap();
        let r = sample_rec(1, a, 0, 0, b"", "", 0);
        let got = hd.sum_value(1, &r, &CTX);
        let q = a / d;
        let model = if d.is_power_of_two() || d > 1 << 20 || a >= 1 << 20 {
            q
        } else {
            let mult = (1u128 << 20) / u128::from(d);
            (u128::from(a) * mult).div_ceil(1 << 20) as u64
        };
        proptest::prop_assert_eq!(got, model);
        proptest::prop_assert!(got == q || (got == q + 1 && a % d != 0));
        // Folded at build time, the same.
        let text = format!("keys=b:x={a}/{d}");
        let spec = parse_trigger(&text).unwrap();
        let hd = HistData::build(&spec, &ev).unwrap();
        proptest::prop_assert_eq!(hd.var_value(0, &[], &CTX), model);
    }

    /// Any expression of up to three operators over fields and small
    /// constants evaluates as the model does (C's left-to-right
    /// precedence, wrapping u64 arithmetic).
    #[test]
    fn prop_expressions(
        ops in proptest::collection::vec(0usize..4, 0..4),
        atoms in proptest::collection::vec(0usize..5, 4),
        a: u64, b: u32, c: i32,
    ) {
        let names = ["a", "b", "c", "3", "16"];
        let vals = [a, u64::from(b), c as i64 as u64, 3, 16];
        let syms = ['+', '-', '*', '/'];
        let mut text = String::from(names[atoms[0]]);
        for (i, &op) in ops.iter().enumerate() {
            text.push(syms[op]);
            text.push_str(names[atoms[i + 1]]);
        }
        // The model: products and quotients first, left to right.
        let div = |x: u64, y: u64, konst: bool| {
            if konst && !y.is_power_of_two() && y <= 1 << 20 && x < 1 << 20 {
                (u128::from(x) * ((1u128 << 20) / u128::from(y))).div_ceil(1 << 20) as u64
            } else {
                x.checked_div(y).unwrap_or(u64::MAX)
            }
        };
        let mut terms: Vec<(char, u64)> = Vec::new();
        let mut cur = vals[atoms[0]];
        let mut sign = '+';
        for (i, &op) in ops.iter().enumerate() {
            let v = vals[atoms[i + 1]];
            match syms[op] {
                '*' => cur = cur.wrapping_mul(v),
                '/' => cur = div(cur, v, atoms[i + 1] >= 3),
                s => {
                    terms.push((sign, cur));
                    sign = s;
                    cur = v;
                }
            }
        }
        terms.push((sign, cur));
        let want = terms.iter().fold(0u64, |acc, &(s, v)| {
            if s == '+' { acc.wrapping_add(v) } else { acc.wrapping_sub(v) }
        });
        let ev = sample();
        let r = sample_rec(1, a, b, c, b"", "", 0);
        for t in [format!("keys=b:vals={text}"), format!("keys=b:x={text}")] {
            let spec = parse_trigger(&t).unwrap();
            let hd = HistData::build(&spec, &ev).unwrap();
            let got = if hd.n_vars() == 1 {
                hd.var_value(0, &r, &CTX)
            } else {
                hd.sum_value(1, &r, &CTX)
            };
            // Constant subexpressions that C folds may divide a
            // folded dividend: the model folds the same way.
            proptest::prop_assert_eq!(got, want, "{}", t);
        }
    }
}

// --- hist_debug -----------------------------------------------------------

fn debug(text: &str, event: &EventDesc<'_>) -> String {
    let hd = build(text, event);
    let mut s = String::new();
    hd.write_debug(&mut s, &"00000000deadbeef").unwrap();
    s
}

/// The blocks of the fields in `hist_debug`, by C's field index.
fn debug_fields(text: &str, event: &EventDesc<'_>) -> Vec<String> {
    let s = debug(text, event);
    let mut out = Vec::new();
    for part in s.split("    hist_data->fields[").skip(1) {
        let body = &part[part.find(":\n").unwrap() + 2..];
        let end = body.find("\n\n").map_or(body.len(), |e| e + 1);
        out.push(String::from(&body[..end]));
    }
    out
}

/// One field's block, from its lines after `flags:`.
fn block(lines: &[&str]) -> String {
    let mut s = String::from("      flags:\n");
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    s
}

const HITCOUNT_BLOCK: [&str; 4] = [
    "        VAL: HIST_FIELD_FL_HITCOUNT",
    "      type: u64",
    "      size: 8",
    "      is_signed: 0",
];

/// histogram-design.rst, "Basic histogram test".  The document
/// shows the `n_vals:`, `val fields:` and `key fields:` lines two
/// columns left of where 6.12's hist_trigger_debug_show() puts them;
/// this is C's text.
#[test]
fn doc_debug_kmalloc() {
    let ev = event("kmem", "kmalloc", &KMALLOC);
    let t = "keys=common_pid,call_site.sym:values=bytes_req,bytes_alloc,hitcount";
    assert_eq!(
        info(t, &ev),
        "hist:keys=common_pid,call_site.sym:vals=hitcount,bytes_req,bytes_alloc:sort=hitcount:size=2048"
    );
    let hd = build(t, &ev);
    let mut s = String::new();
    hd.write_debug(&mut s, &"000000005e48c9a5").unwrap();
    assert_eq!(
        s,
        "hist_data: 000000005e48c9a5

  n_vals: 3
  n_keys: 2
  n_fields: 5

  val fields:

    hist_data->fields[0]:
      flags:
        VAL: HIST_FIELD_FL_HITCOUNT
      type: u64
      size: 8
      is_signed: 0

    hist_data->fields[1]:
      flags:
        VAL: normal u64 value
      ftrace_event_field name: bytes_req
      type: size_t
      size: 8
      is_signed: 0

    hist_data->fields[2]:
      flags:
        VAL: normal u64 value
      ftrace_event_field name: bytes_alloc
      type: size_t
      size: 8
      is_signed: 0

  key fields:

    hist_data->fields[3]:
      flags:
        HIST_FIELD_FL_KEY
      ftrace_event_field name: common_pid
      type: int
      size: 8
      is_signed: 1

    hist_data->fields[4]:
      flags:
        HIST_FIELD_FL_KEY
      ftrace_event_field name: call_site
      type: unsigned long
      size: 8
      is_signed: 0
"
    );
}

/// histogram-design.rst, "Variable and variable reference test" (the
/// sched_waking side) and "Test of field variables on other
/// histograms" (the histogram C makes for `prio`, written here by
/// hand).
#[test]
fn doc_debug_variables() {
    let ev = waking();
    let t = "keys=pid:ts0=common_timestamp.usecs";
    assert_eq!(
        info(t, &ev),
        "hist:keys=pid:vals=hitcount:ts0=common_timestamp.usecs:sort=hitcount:size=2048:clock=global"
    );
    let hd = build(t, &ev);
    let mut s = String::new();
    hd.write_debug(&mut s, &"000000009536f554").unwrap();
    assert_eq!(
        s,
        "hist_data: 000000009536f554

  n_vals: 2
  n_keys: 1
  n_fields: 3

  val fields:

    hist_data->fields[0]:
      flags:
        VAL: HIST_FIELD_FL_HITCOUNT
      type: u64
      size: 8
      is_signed: 0

    hist_data->fields[1]:
      flags:
        HIST_FIELD_FL_VAR
      var.name: ts0
      var.idx (into tracing_map_elt.vars[]): 0
      type: u64
      size: 8
      is_signed: 0

  key fields:

    hist_data->fields[2]:
      flags:
        HIST_FIELD_FL_KEY
      ftrace_event_field name: pid
      type: pid_t
      size: 8
      is_signed: 1
"
    );

    let t = "keys=pid:synthetic_prio=prio";
    assert_eq!(
        info(t, &ev),
        "hist:keys=pid:vals=hitcount:synthetic_prio=prio:sort=hitcount:size=2048"
    );
    let hd = build(t, &ev);
    let mut s = String::new();
    hd.write_debug(&mut s, &"000000006920cf38").unwrap();
    assert_eq!(
        s,
        "hist_data: 000000006920cf38

  n_vals: 2
  n_keys: 1
  n_fields: 3

  val fields:

    hist_data->fields[0]:
      flags:
        VAL: HIST_FIELD_FL_HITCOUNT
      type: u64
      size: 8
      is_signed: 0

    hist_data->fields[1]:
      flags:
        HIST_FIELD_FL_VAR
      ftrace_event_field name: prio
      var.name: synthetic_prio
      var.idx (into tracing_map_elt.vars[]): 0
      type: int
      size: 4
      is_signed: 1

  key fields:

    hist_data->fields[2]:
      flags:
        HIST_FIELD_FL_KEY
      ftrace_event_field name: pid
      type: pid_t
      size: 8
      is_signed: 1
"
    );
}

/// Field indices: values, then variables, then keys.
#[test]
fn debug_layout() {
    let ev = sample();
    let s = debug("keys=b,c:vals=a:x=a,y=c:z=1", &ev);
    assert!(s.starts_with(
        "hist_data: 00000000deadbeef\n\n  n_vals: 5\n  n_keys: 2\n  n_fields: 7\n\n  val fields:\n\n    hist_data->fields[0]:\n"
    ));
    let heads: Vec<_> = s
        .lines()
        .filter(|l| {
            l.contains("hist_data->fields[") || l.ends_with(" fields:") || l.contains("var.")
        })
        .collect();
    assert_eq!(
        heads,
        [
            "  val fields:",
            "    hist_data->fields[0]:",
            "    hist_data->fields[1]:",
            "    hist_data->fields[2]:",
            "      var.name: x",
            "      var.idx (into tracing_map_elt.vars[]): 0",
            "    hist_data->fields[3]:",
            "      var.name: y",
            "      var.idx (into tracing_map_elt.vars[]): 1",
            "    hist_data->fields[4]:",
            "      var.name: z",
            "      var.idx (into tracing_map_elt.vars[]): 2",
            "  key fields:",
            "    hist_data->fields[5]:",
            "    hist_data->fields[6]:",
        ]
    );
    assert!(s.ends_with("      is_signed: 1\n"));
    // Without values or variables.
    let s = debug("keys=b", &ev);
    assert_eq!(debug_fields("keys=b", &ev).len(), 2);
    assert!(s.contains("  n_vals: 1\n  n_keys: 1\n  n_fields: 2\n"));
    assert!(s.contains("      is_signed: 0\n\n  key fields:\n\n    hist_data->fields[1]:\n"));
}

/// The block of each kind of field: flags, event field, variable,
/// constant, C's type string, size (keys: aligned) and signedness.
#[test]
fn debug_field_kinds() {
    let ev = sample();
    let ev2 = odd();
    let waking = waking();
    let key = |t: &str, e: &EventDesc<'_>| debug_fields(t, e).pop().unwrap();
    let f = |t: &str, e: &EventDesc<'_>, i: usize| debug_fields(t, e)[i].clone();
    assert_eq!(f("keys=b", &ev, 0), block(&HITCOUNT_BLOCK));
    let kf = |name: Option<&str>, ty: &str, size: u32, signed: u32| {
        let mut lines = std::vec![String::from("        HIST_FIELD_FL_KEY")];
        if let Some(n) = name {
            lines.push(format!("      ftrace_event_field name: {n}"));
        }
        lines.push(format!("      type: {ty}"));
        lines.push(format!("      size: {size}"));
        lines.push(format!("      is_signed: {signed}"));
        let lines: Vec<&str> = lines.iter().map(|l| l.as_str()).collect();
        block(&lines)
    };
    // Keys.
    assert_eq!(key("keys=b", &ev), kf(Some("b"), "u32", 8, 0));
    assert_eq!(key("keys=c.hex", &ev), kf(Some("c"), "s32", 8, 1));
    assert_eq!(key("keys=s", &ev), kf(Some("s"), "char[16]", 16, 0));
    assert_eq!(
        key("keys=d", &ev),
        kf(Some("d"), "__data_loc char[]", 256, 0)
    );
    assert_eq!(
        key("keys=comm", &waking),
        kf(Some("comm"), "char[16]", 16, 0)
    );
    assert_eq!(key("keys=name", &ev2), kf(Some("name"), "char[20]", 24, 0));
    assert_eq!(
        key("keys=rel", &ev2),
        kf(Some("rel"), "__rel_loc char[]", 256, 0)
    );
    assert_eq!(key("keys=s8", &ev2), kf(Some("s8"), "s8", 8, 1));
    assert_eq!(key("keys=p", &ev2), kf(Some("p"), "const char *", 8, 0));
    assert_eq!(
        key("keys=common_pid.execname", &ev),
        kf(Some("common_pid"), "int", 8, 1)
    );
    assert_eq!(
        key("keys=ip.sym-offset", &ev),
        kf(Some("ip"), "unsigned long", 8, 0)
    );
    // .log2 and .buckets= take the operand's type and size, not its
    // signedness.
    assert_eq!(key("keys=c.log2", &ev), kf(Some("c"), "s32", 8, 0));
    assert_eq!(
        key("keys=s16.buckets=3", &ev2),
        kf(Some("s16"), "s16", 8, 0)
    );
    assert_eq!(
        key("keys=stacktrace", &ev),
        kf(None, "unsigned long[]", 128, 0)
    );
    assert_eq!(
        key("keys=common_stacktrace", &ev),
        kf(None, "unsigned long[]", 128, 0)
    );
    assert_eq!(
        key("keys=STACKTRACE", &ev),
        kf(None, "unsigned long[]", 128, 0)
    );
    assert_eq!(
        key("keys=stack.stacktrace", &ev2),
        kf(Some("stack"), "unsigned long[]", 128, 0)
    );
    assert_eq!(
        key("keys=stack", &ev2),
        kf(Some("stack"), "__data_loc unsigned long[]", 256, 0)
    );
    // "cpu" keeps the generic field; common_cpu has none.
    assert_eq!(key("keys=cpu", &ev), kf(Some("cpu"), "unsigned int", 8, 0));
    assert_eq!(
        key("keys=CPU.hex", &ev),
        kf(Some("CPU"), "unsigned int", 8, 0)
    );
    assert_eq!(key("keys=common_cpu", &ev), kf(None, "unsigned int", 8, 0));
    assert_eq!(key("keys=cpu", &ev2), kf(Some("cpu"), "u32", 8, 0));
    assert_eq!(
        key("keys=common_timestamp.usecs", &ev),
        kf(None, "u64", 8, 0)
    );
    assert_eq!(key("keys=hitcount", &ev), kf(None, "u64", 8, 0));
    assert_eq!(key("keys=hitcount.log2", &ev), kf(None, "u64", 8, 0));
    // Expressions: the first operand's type and signedness.
    assert_eq!(key("keys=c*2", &ev), kf(None, "s32", 8, 1));
    assert_eq!(key("keys=2*c", &ev), kf(None, "u64", 8, 0));
    assert_eq!(key("keys=-(s16)", &ev2), kf(None, "s16", 8, 1));
    assert_eq!(key("keys=b.log2+c", &ev), kf(None, "u32", 8, 0));
    assert_eq!(
        key("keys=common_cpu+1", &ev),
        kf(None, "unsigned int", 8, 0)
    );
    assert_eq!(
        key("keys=5", &ev),
        block(&[
            "        HIST_FIELD_FL_KEY",
            "        HIST_FIELD_FL_CONST",
            "      constant: 5",
            "      type: u64",
            "      size: 8",
            "      is_signed: 0",
        ])
    );

    // Values.
    let t = "keys=b:vals=c.hex,10";
    assert_eq!(
        f(t, &ev, 1),
        block(&[
            "        VAL: normal u64 value",
            "      ftrace_event_field name: c",
            "      type: s32",
            "      size: 4",
            "      is_signed: 1",
        ])
    );
    assert_eq!(
        f(t, &ev, 2),
        block(&[
            "        VAL: normal u64 value",
            "        HIST_FIELD_FL_CONST",
            "      constant: 10",
            "      type: u64",
            "      size: 8",
            "      is_signed: 0",
        ])
    );
    let t = "keys=s8:vals=s16-1,common_timestamp";
    assert_eq!(
        f(t, &ev2, 1),
        block(&[
            "        VAL: normal u64 value",
            "      type: s16",
            "      size: 2",
            "      is_signed: 1",
        ])
    );
    assert_eq!(
        f(t, &ev2, 2),
        block(&[
            "        VAL: normal u64 value",
            "      type: u64",
            "      size: 8",
            "      is_signed: 0",
        ])
    );
    // A second hitcount.
    assert_eq!(
        f("keys=b:vals=hitcount,hitcount", &ev, 1),
        block(&HITCOUNT_BLOCK)
    );

    // Variables.
    let t = "keys=b:x=16-8-4-2,y=hitcount,z=cpu,w=-(c),v=common_cpu";
    assert_eq!(
        f(t, &ev, 1),
        block(&[
            "        HIST_FIELD_FL_VAR",
            "        HIST_FIELD_FL_CONST",
            "      var.name: x",
            "      var.idx (into tracing_map_elt.vars[]): 0",
            "      constant: 2",
            "      type: u64",
            "      size: 8",
            "      is_signed: 0",
        ])
    );
    // Hitcount is shown before the variable.
    assert_eq!(
        f(t, &ev, 2),
        block(&[
            "        VAL: HIST_FIELD_FL_HITCOUNT",
            "      var.name: y",
            "      var.idx (into tracing_map_elt.vars[]): 1",
            "      type: u64",
            "      size: 8",
            "      is_signed: 0",
        ])
    );
    assert_eq!(
        f(t, &ev, 3),
        block(&[
            "        HIST_FIELD_FL_VAR",
            "      ftrace_event_field name: cpu",
            "      var.name: z",
            "      var.idx (into tracing_map_elt.vars[]): 2",
            "      type: unsigned int",
            "      size: 4",
            "      is_signed: 0",
        ])
    );
    assert_eq!(
        f(t, &ev, 4),
        block(&[
            "        HIST_FIELD_FL_VAR",
            "      var.name: w",
            "      var.idx (into tracing_map_elt.vars[]): 3",
            "      type: s32",
            "      size: 4",
            "      is_signed: 1",
        ])
    );
    assert_eq!(
        f(t, &ev, 5),
        block(&[
            "        HIST_FIELD_FL_VAR",
            "      var.name: v",
            "      var.idx (into tracing_map_elt.vars[]): 4",
            "      type: unsigned int",
            "      size: 4",
            "      is_signed: 0",
        ])
    );
}

#[test]
fn fixed_size() {
    // No allocation: everything is inline (about 10 KiB, 1.7 of them
    // the variable references, 2 the actions).
    assert!(core::mem::size_of::<HistData<'_>>() < 11 * 1024);
    assert!(core::mem::size_of::<HistField<'_>>() <= 40);
}

/// Any record, however short or odd, gives a key without panicking.
#[test]
fn write_key_never_panics() {
    let ev = sample();
    let ev2 = odd();
    let triggers: [(&str, &EventDesc<'_>); 13] = [
        (
            "keys=a+b*c,-(c),b/a:vals=a/c,c/7:x=a/3,y=b/1048577,z=c/16",
            &ev,
        ),
        (
            "keys=s,b.log2*c:vals=-(a.hex+b):w=common_timestamp.usecs+b.usecs",
            &ev,
        ),
        ("keys=s8-s16,rel:vals=s16/s8:x=-(s8),y=cpu*2", &ev2),
        ("keys=5,c.buckets=3/b:x=16-8-4-2,y=1-2", &ev),
        ("keys=common_cpu-cpu:vals=hitcount*common_pid", &ev),
        ("keys=a,b,c", &ev),
        ("keys=s,d", &ev),
        ("keys=d,stacktrace", &ev),
        ("keys=ip.sym,common_pid.execname,c.log2", &ev),
        ("keys=rel,s16,s8", &ev2),
        ("keys=stack.stacktrace,name", &ev2),
        ("keys=stack", &ev2),
        ("keys=common_timestamp.usecs,cpu,b.buckets=3", &ev),
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for (t, e) in triggers {
        let hd = build(t, e);
        for _ in 0..2000 {
            let len = (next() % 96) as usize;
            let r: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let mut key = std::vec![0u8; hd.key_size()];
            hd.write_key(&r, &CTX, &mut key);
            let _ = keys_text(&hd, &key, &NoSymbols);
            for i in 0..hd.n_sums() + 1 {
                let _ = hd.sum_value(i, &r, &CTX);
            }
            for i in 0..hd.n_vars() + 1 {
                let _ = hd.var_value(i, &r, &CTX);
            }
            // A key of the wrong size.
            let mut short = std::vec![0u8; (next() % 40) as usize];
            hd.write_key(&r, &CTX, &mut short);
            let _ = hd.key_parts(&short).count();
        }
    }
}

#[test]
fn matches_like_hist_trigger_match() {
    let (ev, odd) = (sample(), odd());
    let same = |a: &str, ea: &EventDesc<'_>, b: &str, eb: &EventDesc<'_>| {
        build(a, ea).matches(&build(b, eb))
    };
    // size= and clock= do not count; the order of vals does.
    assert!(same("keys=a:vals=b", &ev, "keys=a:vals=b:size=4096", &ev));
    assert!(same("keys=a", &ev, "keys=a:clock=global", &ev));
    assert!(!same("keys=a:vals=b,c", &ev, "keys=a:vals=c,b", &ev));
    // Keys of the same name must have the same type, size and sign.
    assert!(same("keys=cpu", &odd, "keys=cpu", &odd));
    assert!(!same("keys=s8", &odd, "keys=s16", &odd));
    static OTHER: [EventField<'static>; 1] =
        [EventField::new("a", "s64", 8, 8, true, FieldStorage::Other)];
    let other = event("rhist_test", "other", &OTHER);
    assert!(!same("keys=a", &ev, "keys=a", &other));
    // Modifiers are flags; sort keys and variable names count.
    assert!(!same("keys=a", &ev, "keys=a.hex", &ev));
    assert!(!same("keys=a:sort=a", &ev, "keys=a:sort=hitcount", &ev));
    assert!(!same("keys=a:x=b", &ev, "keys=a:y=b", &ev));
    // As in C, an expression's operands are not compared.
    assert!(same("keys=a:vals=b+c", &ev, "keys=a:vals=b-c", &ev));
}

#[test]
fn names_keep_cs_sym_offset_rewrite() {
    // C rewrites ".sym-offset" in its copy before it takes names out.
    let ev = sample();
    assert_eq!(
        info("keys=a:.sym-offset=b.usecs:vals=b", &ev),
        "hist:keys=a:vals=hitcount,b:.symXoffset=b.usecs:sort=hitcount:size=2048"
    );
    assert_eq!(
        info("name=n.sym-offset:keys=ip.sym-offset", &ev),
        "hist:name=n.symXoffset:keys=ip.sym-offset:vals=hitcount:sort=hitcount:size=2048"
    );
}

#[test]
fn carets_under_rhist_prefix_are_cs_moved_right() {
    // C finds the "r" of ".r" at 22 in "hist:..."; "rhist:" has an
    // "r" of its own at 0, which must not be found instead.
    let t = "keys=a:vals=b:x=.r";
    let hist = parse_trigger(t).unwrap();
    let rhist = parse_trigger_in("rhist:", t).unwrap();
    let e = HistData::build(&hist, &sample()).unwrap_err();
    assert_eq!(
        (e.kind(), e.pos()),
        (Some(HistErrorKind::BadFieldModifier), 22)
    );
    let e = HistData::build(&rhist, &sample()).unwrap_err();
    assert_eq!(
        (e.kind(), e.pos()),
        (Some(HistErrorKind::BadFieldModifier), 23)
    );
    // Not found is 0 for both.
    assert_eq!(rhist.errpos("nowhere"), 0);
}
