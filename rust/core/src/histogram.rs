// SPDX-License-Identifier: GPL-2.0

//! A histogram: the resolved trigger ([`HistData`]) and its map
//! ([`TracingMap`]) together. The event path is [`Histogram::update`]; the
//! `hist` file's text is [`Histogram::print`]. The kernel shell owns the
//! memory both borrow.

use core::fmt::{self, Write};
use core::sync::atomic::Ordering;

use super::hist_data::{self, EventContext, HistData};
use super::map::{self, MapError, MapParams, TracingMap};
use super::output::{self, Resolver, ValStat};
use super::vars;

/// Largest key a histogram builds (C's `HIST_KEY_SIZE_MAX`).
pub const KEY_SIZE_MAX: usize = 256 + 16 * 8;

/// Words of saved command name per element, for `.execname` keys.
const COMM_WORDS: usize = 2;

/// The map parameters a histogram needs.
/// The private words of each element: the saved command name when some
/// field has `.execname`, then the variables' copies ([`vars`]).
pub fn map_params(data: &HistData<'_>) -> MapParams {
    let params = MapParams::new(
        data.map_bits(),
        data.key_size(),
        data.n_sums(),
        data.n_vars(),
    );
    let copies = (0..data.n_vars())
        .filter(|&i| data.var_copy(i).is_some())
        .count();
    let words = comm_words(data.needs_comm()) + copies * vars::STR_VAR_WORDS;
    if words == 0 {
        params
    } else {
        params.with_private_words(words)
    }
}

/// The private words the saved command name takes.
fn comm_words(needs_comm: bool) -> usize {
    if needs_comm {
        COMM_WORDS
    } else {
        0
    }
}

/// A histogram over memory the caller owns.
pub struct Histogram<'a> {
    data: &'a HistData<'a>,
    map: TracingMap<'a>,
    /// `data.needs_comm()`, looked up once rather than on every event.
    needs_comm: bool,
    /// Whether a variable keeps a copy in the entry ([`vars`]).
    has_copies: bool,
}

/// `Histogram<'a>` is covariant in `'a`: a `&'s Histogram<'static>`
/// shortens to `&'s Histogram<'s>`. Owners rely on that to tie every
/// borrow they hand out to themselves; this fails to compile otherwise.
#[allow(dead_code)]
fn histogram_is_covariant<'s>(h: &'s Histogram<'static>) -> &'s Histogram<'s> {
    h
}

/// What the event path needs from the task and the event that the core
/// cannot see, beyond [`EventContext`].
pub trait TaskContext: EventContext {
    /// The current task's pid (`current->pid`).
    fn pid(&self) -> i32;
    /// The current task's command name (`current->comm`).
    fn comm(&self) -> [u8; 16];
}

/// The task name hist keeps with a new entry (its `save_comm()`): the
/// idle task (pid 0) is `<idle>`, whatever its comm says, and a
/// negative pid is `<XXX>`.
fn saved_comm(ctx: &dyn TaskContext) -> [u8; 16] {
    let name: &[u8] = match ctx.pid() {
        0 => b"<idle>",
        pid if pid < 0 => b"<XXX>",
        _ => return ctx.comm(),
    };
    let mut comm = [0u8; 16];
    comm[..name.len()].copy_from_slice(name);
    comm
}

impl<'a> Histogram<'a> {
    /// Puts `data` and `map` together; `map` must have been built with
    /// [`map_params`] of `data`.
    pub fn new(data: &'a HistData<'a>, map: TracingMap<'a>) -> Result<Self, MapError> {
        if map.params() != map_params(data) {
            return Err(MapError::StorageTooSmall);
        }
        Ok(Histogram {
            data,
            map,
            needs_comm: data.needs_comm(),
            has_copies: (0..data.n_vars()).any(|i| data.var_copy(i).is_some()),
        })
    }

    /// The resolved trigger, borrowed no longer than the histogram: an
    /// owner that keeps a `Histogram<'static>` over memory of its own
    /// can then hand out `&Histogram<'_>` (see the variance check below)
    /// without any borrow outliving it.
    pub fn data(&self) -> &HistData<'a> {
        self.data
    }

    /// The map.
    pub fn map(&self) -> &TracingMap<'a> {
        &self.map
    }

    /// Accounts one event record: builds its key, finds or inserts its
    /// entry, adds its values and sets its variables. Lock-free; no
    /// allocation.
    #[inline]
    pub fn update(&self, rec: &[u8], ctx: &dyn TaskContext) {
        // The key is built on the stack, in a buffer no larger than it
        // needs: most keys are a word or two, and zeroing the largest
        // possible key on every event would cost more than the rest.
        match self.data.key_size() {
            0..=8 => self.update_with::<8>(rec, ctx),
            9..=32 => self.update_with::<32>(rec, ctx),
            _ => self.update_with::<KEY_SIZE_MAX>(rec, ctx),
        }
    }

    fn update_with<const N: usize>(&self, rec: &[u8], ctx: &dyn TaskContext) {
        let mut key_buf = [0u8; N];
        let key = &mut key_buf[..self.data.key_size().min(N)];
        self.data.write_key(rec, ctx, key);
        let key = &*key;
        let elt = if self.needs_comm {
            self.map.insert_with(key, |elt| {
                let comm = saved_comm(ctx);
                for (word, chunk) in elt.private_words().iter().zip(comm.chunks_exact(8)) {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(chunk);
                    word.store(u64::from_ne_bytes(b), Ordering::Relaxed);
                }
            })
        } else {
            self.map.insert(key)
        };
        let Some(elt) = elt else {
            return;
        };
        for i in 0..self.data.n_sums() {
            elt.update_sum(i, self.data.sum_value(i, rec, ctx));
        }
        if self.has_copies {
            self.set_vars_with_copies(&elt, rec, ctx);
        } else {
            for i in 0..self.data.n_vars() {
                elt.set_var(i, self.data.var_value(i, rec, ctx));
            }
        }
    }

    /// Sets the variables of `elt` where some keep a copy in the entry:
    /// each such variable is given its slot's number.
    #[inline(never)]
    fn set_vars_with_copies(&self, elt: &map::Elt<'a>, rec: &[u8], ctx: &dyn TaskContext) {
        let words = elt.private_words();
        let start = comm_words(self.needs_comm);
        let mut comm = [0u8; 16];
        for (chunk, word) in comm
            .chunks_exact_mut(8)
            .zip(words.get(..start).unwrap_or(&[]))
        {
            chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes());
        }
        let mut slot = 0;
        let mut copy = [0u8; vars::STR_VAR_LEN_MAX];
        for i in 0..self.data.n_vars() {
            if self.data.var_copy(i).is_none() {
                elt.set_var(i, self.data.var_value(i, rec, ctx));
                continue;
            }
            vars::write_copy(self.data, i, rec, ctx, &comm, &mut copy);
            let at = start + slot * vars::STR_VAR_WORDS;
            let dst = words.get(at..at + vars::STR_VAR_WORDS).unwrap_or(&[]);
            for (word, chunk) in dst.iter().zip(copy.chunks_exact(8)) {
                let mut b = [0u8; 8];
                b.copy_from_slice(chunk);
                word.store(u64::from_ne_bytes(b), Ordering::Relaxed);
            }
            elt.set_var(i, slot as u64);
            slot += 1;
        }
    }

    /// Empties the histogram (hist's `clear`). The caller makes sure no
    /// event updates it meanwhile (the trigger is paused).
    pub fn clear(&self) {
        self.map.clear();
    }

    /// The map's sort keys for this histogram.
    fn sort_keys(&self) -> ([map::SortKey; map::SORT_KEYS_MAX], usize) {
        let mut keys = [map::SortKey::ascending(map::SortField::Sum(0)); map::SORT_KEYS_MAX];
        let mut n = 0;
        for (slot, key) in keys.iter_mut().zip(self.data.sort_keys()) {
            let field = match key.field {
                hist_data::SortField::Sum(i) => map::SortField::Sum(i),
                hist_data::SortField::Key { offset, size, cmp } => match cmp {
                    hist_data::KeyCmp::Unsigned | hist_data::KeyCmp::Signed => {
                        map::SortField::KeyNum {
                            offset: offset as usize,
                            size: size as usize,
                            signed: cmp == hist_data::KeyCmp::Signed,
                        }
                    }
                    hist_data::KeyCmp::String => map::SortField::KeyStr {
                        offset: offset as usize,
                    },
                    hist_data::KeyCmp::None => map::SortField::None,
                },
            };
            *slot = map::SortKey {
                field,
                descending: key.descending,
            };
            n += 1;
        }
        (keys, n)
    }

    /// Writes the histogram's entries and Totals (everything after the
    /// header), sorted as C sorts them. `order` must hold at least
    /// `max_elts` indices; it is scratch space.
    pub fn print(
        &self,
        out: &mut dyn Write,
        resolver: &dyn Resolver,
        order: &mut [u32],
    ) -> fmt::Result {
        let (keys, n_keys) = self.sort_keys();
        let n = self.map.sort_entries(&keys[..n_keys], order);
        let entries = &order[..n];

        let mut stats = [ValStat::default(); map::SUMS_MAX];
        for (i, stat) in stats.iter_mut().enumerate().take(self.data.n_sums()) {
            for &idx in entries {
                if let Some(elt) = self.map.elt(idx) {
                    let v = elt.read_sum(i);
                    stat.total = stat.total.wrapping_add(v);
                    stat.max = stat.max.max(v);
                }
            }
        }

        let mut key_buf = [0u8; KEY_SIZE_MAX];
        for &idx in entries {
            let Some(elt) = self.map.elt(idx) else {
                continue;
            };
            let key_size = elt.copy_key(&mut key_buf);
            let key = &key_buf[..key_size.min(KEY_SIZE_MAX)];
            let mut comm = [0u8; 16];
            for (chunk, word) in comm.chunks_exact_mut(8).zip(elt.private_words()) {
                chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes());
            }
            let mut parts = [output::KeyPart {
                name: output::KeyName::Text(""),
                display: output::KeyDisplay::Plain,
                bytes: &[],
            }; 3];
            let mut n_parts = 0;
            for (slot, part) in parts.iter_mut().zip(self.data.key_parts(key)) {
                *slot = part;
                n_parts += 1;
            }
            output::write_keys(out, &parts[..n_parts], &comm, resolver)?;
            for (i, name, display) in self.data.printed_vals() {
                // C writes an extra space before every value but hitcount.
                if i != 0 {
                    out.write_char(' ')?;
                }
                output::write_val(out, name, display, elt.read_sum(i), stats[i])?;
            }
            out.write_char('\n')?;
        }
        output::write_totals(out, self.map.hits(), n as u32, self.map.drops())
    }
}

#[cfg(test)]
mod tests {
    use super::super::event::{EventDesc, EventField, FieldStorage, COMMON_FIELDS};
    use super::super::trigger;
    use super::*;
    use core::sync::atomic::AtomicU64;
    use std::string::String;
    use std::vec::Vec;

    const fn field(
        name: &'static str,
        offset: u32,
        size: u32,
        signed: bool,
    ) -> EventField<'static> {
        EventField::new(name, "u64", offset, size, signed, FieldStorage::Other)
    }

    const FIELDS: [EventField<'static>; 3] = [
        field("a", 8, 8, false),
        field("b", 16, 4, false),
        field("c", 20, 4, true),
    ];

    const EVENT: EventDesc<'static> = EventDesc {
        system: "rhist_test",
        name: "rhist_sample",
        fields: &FIELDS,
        common_fields: &COMMON_FIELDS,
    };

    /// A task of the given pid, named `bash`.
    struct Ctx {
        pid: i32,
    }

    impl EventContext for Ctx {
        fn cpu(&self) -> u32 {
            1
        }
        fn timestamp(&self) -> u64 {
            1_000_000
        }
        fn clock_in_ns(&self) -> bool {
            true
        }
        fn stacktrace(&self, out: &mut [u64]) {
            out.fill(0);
        }
    }

    impl TaskContext for Ctx {
        fn pid(&self) -> i32 {
            self.pid
        }
        fn comm(&self) -> [u8; 16] {
            *b"bash\0\0\0\0\0\0\0\0\0\0\0\0"
        }
    }

    fn record(a: u64, b: u32, c: i32) -> [u8; 24] {
        let mut r = [0u8; 24];
        r[4..8].copy_from_slice(&42i32.to_ne_bytes());
        r[8..16].copy_from_slice(&a.to_ne_bytes());
        r[16..20].copy_from_slice(&b.to_ne_bytes());
        r[20..24].copy_from_slice(&c.to_ne_bytes());
        r
    }

    /// Runs `text` over `records` and returns the entries and Totals.
    fn run(text: &str, records: &[[u8; 24]]) -> String {
        run_as(&Ctx { pid: 42 }, text, records)
    }

    /// Runs `text` over `records` fired by the task `ctx`.
    fn run_as(ctx: &Ctx, text: &str, records: &[[u8; 24]]) -> String {
        let spec = trigger::parse(text).unwrap();
        let data = HistData::build(&spec, &EVENT).unwrap();
        let params = map_params(&data);
        let storage: Vec<AtomicU64> = (0..params.storage_words().unwrap())
            .map(|_| AtomicU64::new(0))
            .collect();
        let map = TracingMap::new(params, &storage).unwrap();
        let hist = Histogram::new(&data, map).unwrap();
        for r in records {
            hist.update(r, ctx);
        }
        let mut order = std::vec![0u32; hist.map().max_elts()];
        let mut out = String::new();
        hist.print(&mut out, &output::NoSymbols, &mut order)
            .unwrap();
        out
    }

    #[test]
    fn execname_of_idle_and_negative_pids_like_hist() {
        let records = [record(1, 10, -1)];
        for (pid, name) in [(42, "bash"), (0, "<idle>"), (-1, "<XXX>")] {
            let out = run_as(&Ctx { pid }, "keys=common_pid.execname", &records);
            let line = out.lines().find(|l| l.starts_with("{ ")).unwrap();
            assert!(
                line.starts_with(&std::format!("{{ common_pid: {name:<16}[")),
                "pid {pid}: {line}"
            );
        }
    }

    /// A task named `bash` whose stack is two frames deep.
    struct Deep;

    impl EventContext for Deep {
        fn cpu(&self) -> u32 {
            0
        }
        fn timestamp(&self) -> u64 {
            0
        }
        fn clock_in_ns(&self) -> bool {
            true
        }
        fn stacktrace(&self, out: &mut [u64]) {
            out.fill(0);
            out[..2].copy_from_slice(&[0xffff_ffff_8100_0010, 0xffff_ffff_8100_0020]);
        }
    }

    impl TaskContext for Deep {
        fn pid(&self) -> i32 {
            7
        }
        fn comm(&self) -> [u8; 16] {
            *b"bash\0\0\0\0\0\0\0\0\0\0\0\0"
        }
    }

    /// String, stack trace and `.execname` variables copy into the entry
    /// (after the saved comm), and the variable holds the copy's slot.
    #[test]
    fn variables_copy_strings_into_the_entry() {
        const STR_FIELDS: [EventField<'static>; 2] = [
            field("a", 8, 8, false),
            EventField::new("s", "char[8]", 16, 8, false, FieldStorage::StaticString),
        ];
        let event = EventDesc {
            fields: &STR_FIELDS,
            ..EVENT
        };
        let text = "keys=a:n=a,x=s,t=common_stacktrace,e=common_pid.execname";
        let spec = trigger::parse(text).unwrap();
        let data = HistData::build(&spec, &event).unwrap();
        let params = map_params(&data);
        assert_eq!(params.n_private, COMM_WORDS + 3 * vars::STR_VAR_WORDS);
        let storage: Vec<AtomicU64> = (0..params.storage_words().unwrap())
            .map(|_| AtomicU64::new(0))
            .collect();
        let hist = Histogram::new(&data, TracingMap::new(params, &storage).unwrap()).unwrap();
        // s is not NUL-terminated: strscpy() stops at the bound, 7 bytes.
        let mut rec = [0u8; 24];
        rec[8] = 5;
        rec[16..24].copy_from_slice(b"abcdefgh");
        hist.update(&rec, &Deep);
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
        assert_eq!(map_params(&data).n_sums, 3);
        assert_eq!(
            data.var_value(0, &record(1, 10, -1), &Ctx { pid: 42 }),
            (-2i64) as u64
        );
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
}
