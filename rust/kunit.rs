// SPDX-License-Identifier: GPL-2.0

//! rhist's KUnit suite, run by KUnit when the module loads: the cases
//! are the functions listed in [`kunit_suite!`] at the end.

use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::{KBox, KVVec, KVec, VVec};
use kernel::bindings;
use kernel::error::{code::EINVAL, Error, Result};
use kernel::init::InPlaceInit;
use kernel::time::{ktime_ms_delta, Ktime};

use crate::command::test_support;
use crate::files::ExtraFile;
use crate::hist;
use crate::hist::error::{HistError, HistErrorKind};
use crate::hist::map::{Elt, Inserter, MapError, MapParams, SortField, SortKey, TracingMap};
use crate::kernel_ext::cpus::OnlineCpus;
use crate::kernel_ext::kunit::kunit_suite;
use crate::kernel_ext::percpu;
use crate::kernel_ext::task::{self, cond_resched};
use crate::tied::{Family, Tied};
use crate::tracefs::EventMutexGuard;
use crate::tracing::Refs;

/// Fails the running test unless `$cond` holds.
macro_rules! check {
    ($cond:expr) => {
        kernel::kunit_assert!("rhist", "rust/kunit.rs", 0, $cond)
    };
}

fn command_name_is_taken() {
    // The module registered its command before KUnit ran: a second
    // registration of the same name must be refused.
    check!(test_support::register_again() == -(bindings::EBUSY as i32));
}

fn extra_file_name_is_taken() {
    static TWIN: ExtraFile = ExtraFile::without_ops(crate::names::NAMES.command);
    // Were it added, it would be removed at once (dropped); meanwhile an
    // open of it fails (`ENODEV`).
    let ret = TWIN.add().err().map(Error::to_errno);
    check!(ret == Some(-(bindings::EBUSY as i32)));
}

/// What a trigger's handle reads and changes, as C does for its own: a
/// new trigger fires without end, is counted down when given a count,
/// keeps its pause across a `clear`, and counts its references.
fn trigger_data_as_c_does() {
    // Every check after the lock is dropped: a failed assertion ends the
    // test's task without running destructors.
    let mut seen = [false; 9];
    {
        let guard = EventMutexGuard::lock();
        let held = guard.held();
        let Ok(mut data) = test_support::new_trigger() else {
            drop(guard);
            check!(false);
            return;
        };
        seen[0] = data.count() == !0 && data.take_count() && data.count() == !0;
        data.set_count(2);
        seen[1] = data.take_count() && data.take_count() && !data.take_count();
        seen[2] = data.count() == 0 && data.filter(held).is_none();
        // Never attached: no state, though it is of the `rhist` command.
        seen[3] = crate::command::is_ours(&data) && crate::command::state(held, &data).is_none();
        seen[4] = !data.paused();
        data.set_paused(true);
        data.save_and_pause(held);
        data.set_paused(false);
        data.restore_paused(held);
        seen[5] = data.paused();
        data.get_ref(held);
        data.get_ref(held);
        seen[6] = matches!(data.put_ref(held), Refs::Left);
        seen[7] = matches!(data.put_ref(held), Refs::Last);
        seen[8] = matches!(data.put_ref(held), Refs::Unbalanced);
        // Never listed: freed, with its filter, as it is dropped.
        drop(data);
    }
    for (i, ok) in seen.iter().enumerate() {
        if !ok {
            kernel::kunit::err(format_args!("    # trigger_data_as_c_does: check {i}\n"));
        }
    }
    check!(seen.iter().all(|&ok| ok));
}

fn core_rejects_bad_triggers() {
    let parse = |text| hist::trigger::parse_as(crate::names::NAMES, text).map(|_| ());
    check!(parse("keys=pid").is_ok());
    check!(parse("vals=hitcount").is_err());
    // The caret counts from the start of the command's prefix.
    let at = crate::names::NAMES.prefix.len() + "keys=pid:".len();
    check!(parse("keys=pid:sort=") == Err(HistError::new(HistErrorKind::EmptyAssignment, at)));
}

// ---------------------------------------------------------------------
// The map under concurrency: one kthread bound to each online CPU, all
// updating one map through the calls the event path makes, then exact
// totals once they have all been joined.
//
// No check in these cases aborts (KUnit's assertions end the test's task
// without running destructors, which would free nothing and leave threads
// on its stack): failures are counted in `Checks` while the map and the
// threads exist, and the case asserts once everything has been joined and
// freed.

/// Counts and prints the failed expectations of one case.
struct Checks {
    case: &'static str,
    failed: u32,
}

/// Failures printed per case; the rest are only counted.
const FAILURES_SHOWN: u32 = 8;

impl Checks {
    fn new(case: &'static str) -> Self {
        Checks { case, failed: 0 }
    }

    fn fail(&mut self, line: u32, what: core::fmt::Arguments<'_>) {
        self.failed += 1;
        if self.failed <= FAILURES_SHOWN {
            kernel::kunit::err(format_args!(
                "    # {}: rust/kunit.rs:{}: {}\n",
                self.case, line, what
            ));
        }
    }

    /// A diagnostic line in the KTAP output.
    fn note(&self, what: core::fmt::Arguments<'_>) {
        kernel::kunit::info(format_args!("    # {}: {}\n", self.case, what));
    }
}

/// Counts a failure in `$checks` unless `$cond` holds; the rest is a
/// format string and arguments saying what was seen.
macro_rules! expect {
    ($checks:expr, $cond:expr, $($arg:tt)+) => {
        if !$cond {
            $checks.fail(
                line!(),
                format_args!("{} is false: {}", stringify!($cond), format_args!($($arg)+)),
            );
        }
    };
}

/// Runs one case's body, reports its time, and asserts (after the body has
/// returned, so with its threads joined and its memory freed) that nothing
/// failed.
fn run_case(case: &'static str, body: fn(&mut Checks) -> Result) {
    let mut checks = Checks::new(case);
    let start = Ktime::ktime_get();
    if let Err(e) = body(&mut checks) {
        checks.fail(line!(), format_args!("error {e:?}"));
    }
    let ms = ktime_ms_delta(Ktime::ktime_get(), start);
    checks.note(format_args!("{} ms", ms));
    let failed = checks.failed;
    check!(failed == 0);
}

fn map_error(e: MapError) -> Error {
    Error::from_errno(-e.errno())
}

/// Memory for a map, from vmalloc() as `Hist::new()` (`command/state.rs`) takes it.
fn map_memory(params: &MapParams) -> Result<VVec<u8>> {
    let mut memory = VVec::new();
    memory.reserve(params.storage_bytes().map_err(map_error)?, GFP_KERNEL)?;
    Ok(memory)
}

/// How the cases' key ids become map keys.
#[derive(Clone, Copy)]
enum Keys {
    /// 8 bytes: the id, like a `pid` key.
    Word,
    /// 24 bytes: the id and two words derived from it, so that a torn or
    /// misplaced key shows.
    Triple,
}

const KEY_MIX: u64 = 0x9e37_79b9_7f4a_7c15;

impl Keys {
    fn size(self) -> usize {
        match self {
            Keys::Word => 8,
            Keys::Triple => 24,
        }
    }

    /// The key of `id`, in the first [`Self::size`] bytes.
    fn encode(self, id: usize) -> [u8; 24] {
        let id = id as u64;
        let mut key = [0u8; 24];
        key[..8].copy_from_slice(&id.to_ne_bytes());
        key[8..16].copy_from_slice(&id.wrapping_mul(KEY_MIX).to_ne_bytes());
        key[16..].copy_from_slice(&(!id).to_ne_bytes());
        key
    }

    /// The id of an element's key, if it is a whole key of an id below
    /// `universe`.
    fn decode(self, e: &Elt<'_>, universe: usize) -> Option<usize> {
        let id = e.key_word(0);
        if let Keys::Triple = self {
            if e.key_word(1) != id.wrapping_mul(KEY_MIX) || e.key_word(2) != !id {
                return None;
            }
        }
        usize::try_from(id).ok().filter(|&id| id < universe)
    }
}

/// What a writer thread counted of its own updates, per key id.
struct Tally {
    hits: KVVec<u64>,
    drops: KVVec<u64>,
    /// Drops of a key this thread had already found or inserted: never
    /// right, as nothing leaves the map.
    late_drops: u64,
    /// How often updates of other threads showed between two of this
    /// thread's (see [`hot_key`]): how finely the threads interleaved.
    interleaved: u64,
}

impl Tally {
    fn new(universe: usize) -> Result<Self> {
        Ok(Tally {
            hits: KVVec::from_elem(0, universe, GFP_KERNEL)?,
            drops: KVVec::from_elem(0, universe, GFP_KERNEL)?,
            late_drops: 0,
            interleaved: 0,
        })
    }

    /// `n` tallies.
    fn many(n: usize, universe: usize) -> Result<KVVec<Tally>> {
        let mut v = KVVec::with_capacity(n, GFP_KERNEL)?;
        for _ in 0..n {
            v.push(Tally::new(universe)?, GFP_KERNEL)?;
        }
        Ok(v)
    }

    /// One event as the event path accounts it (`Histogram::update()`):
    /// find or insert the entry of `id`, add 1 to sum 0 (the hitcount) and
    /// [`value_of`]`(id)` to sum 1.
    #[inline]
    fn update<'m>(&mut self, map: &TracingMap<'m>, keys: Keys, id: usize) -> Option<Elt<'m>> {
        let key = keys.encode(id);
        // The thread is bound to its CPU.
        let cpu = crate::event::this_cpu();
        let elt = map.insert_on(&key[..keys.size()], Inserter::on_cpu(cpu));
        match elt {
            Some(e) => {
                e.update_sum_on(cpu, 0, 1);
                e.update_sum_on(cpu, 1, value_of(id));
                self.hits[id] += 1;
            }
            None => {
                if self.hits[id] != 0 {
                    self.late_drops += 1;
                }
                self.drops[id] += 1;
            }
        }
        elt
    }

    fn total_hits(&self) -> u64 {
        self.hits.iter().sum()
    }

    fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
}

/// The value an update of key `id` adds to sum 1 in most cases.
fn value_of(id: usize) -> u64 {
    id as u64 + 1
}

/// What [`audit`] found.
struct Audit {
    /// Elements in the map.
    entries: usize,
    /// A key id in the map, and one not in it.
    present: Option<usize>,
    absent: Option<usize>,
}

/// Checks the map against the writers' tallies once they have all exited:
/// the map's hit and drop counters are the sums of theirs; it holds each
/// key they counted a hit for exactly once, whole, found again by
/// `lookup()`, with sum 0 equal to the hits counted and sum 1 to
/// `value_of(id)` times that; and no other key.
fn audit<'t>(
    c: &mut Checks,
    map: &TracingMap<'_>,
    keys: Keys,
    universe: usize,
    tallies: impl IntoIterator<Item = &'t Tally>,
) -> Result<Audit> {
    let mut want = KVVec::from_elem(0u64, universe, GFP_KERNEL)?;
    let (mut hits, mut drops, mut late) = (0u64, 0u64, 0u64);
    for t in tallies {
        for (w, h) in want.iter_mut().zip(t.hits.iter()) {
            *w += h;
        }
        hits += t.total_hits();
        drops += t.total_drops();
        late += t.late_drops;
    }
    expect!(c, map.hits() == hits, "map {} counted {}", map.hits(), hits);
    expect!(
        c,
        map.drops() == drops,
        "map {} counted {}",
        map.drops(),
        drops
    );
    expect!(c, late == 0, "{} drops of keys already in the map", late);

    let mut seen = KVVec::from_elem(false, universe, GFP_KERNEL)?;
    let mut entries = 0;
    for e in map.iter() {
        entries += 1;
        let Some(id) = keys.decode(&e, universe) else {
            expect!(c, false, "element {}: a key nobody inserted", e.index());
            continue;
        };
        expect!(c, !seen[id], "key {} in the map twice", id);
        seen[id] = true;
        expect!(c, want[id] != 0, "key {} in the map without a hit", id);
        let (s0, s1) = (e.read_sum(0), e.read_sum(1));
        expect!(
            c,
            s0 == want[id],
            "key {}: hitcount {} counted {}",
            id,
            s0,
            want[id]
        );
        let v = want[id] * value_of(id);
        expect!(c, s1 == v, "key {}: sum {} expected {}", id, s1, v);
        let key = keys.encode(id);
        let found = map.lookup(&key[..keys.size()]).map(|f| f.index());
        expect!(
            c,
            found == Some(e.index()),
            "key {}: lookup gives {:?}, not element {}",
            id,
            found,
            e.index()
        );
    }
    for (id, (&w, &s)) in want.iter().zip(seen.iter()).enumerate() {
        expect!(
            c,
            w == 0 || s,
            "key {} with {} hits is not in the map",
            id,
            w
        );
    }
    let keys_hit = want.iter().filter(|&&w| w != 0).count();
    expect!(
        c,
        entries == keys_hit,
        "{} entries, {} keys hit",
        entries,
        keys_hit
    );
    expect!(
        c,
        entries == map.len(),
        "{} entries, len() {}",
        entries,
        map.len()
    );
    Ok(Audit {
        entries,
        present: seen.iter().position(|&s| s),
        absent: seen.iter().position(|&s| !s),
    })
}

/// xorshift64.
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn seed(thread: usize) -> u64 {
    KEY_MIX ^ (thread as u64 + 1).wrapping_mul(0x1234_5678_9abc)
}

/// Updates per thread of the hot key, in each of the two rounds.
const HOT_UPDATES: usize = 100_000;
const HOT_ID: usize = 42;

/// Every CPU updates one key `HOT_UPDATES` times, in two rounds: first
/// into an empty map, all racing to insert the key, then with the key in
/// place. Neither drops any: C's map drops an update that waited too long
/// for the key another CPU was publishing, this one waits for it (see
/// `Inserter`); the key's hitcount grows by exactly `ncpus * HOT_UPDATES`
/// each round.
fn hot_key(c: &mut Checks) -> Result {
    let cpus = OnlineCpus::get()?;
    let n = cpus.ids().len();
    // Sums per CPU, as the event path keeps them.
    let params = MapParams::new(7, 8, 2, 0).per_cpu(crate::event::nr_cpu_ids());
    let mut memory = map_memory(&params)?;
    let map = TracingMap::new_uninit(params, memory.spare_capacity_mut()).map_err(map_error)?;
    let universe = HOT_ID + 1;
    let updates = (n * HOT_UPDATES) as u64;
    let mut tallies = Tally::many(2 * n, universe)?;
    let work = |_: usize, t: &mut Tally| {
        let mut last = None;
        for j in 0..HOT_UPDATES {
            if let Some(e) = t.update(&map, Keys::Word, HOT_ID) {
                // More than this thread's own update since its last one:
                // another thread's came in between.
                let now = e.read_sum(0);
                if last.is_some_and(|last| now > last + 1) {
                    t.interleaved += 1;
                }
                last = Some(now);
            }
            if j % 256 == 255 {
                cond_resched();
            }
        }
    };

    let mut hitcount = [0u64; 2];
    let mut drops = [0u64; 2];
    for round in 0..2 {
        let mine = &mut tallies[round * n..(round + 1) * n];
        cpus.run_on(cpus.ids(), mine, &work)?;
        let hits: u64 = mine.iter().map(Tally::total_hits).sum();
        drops[round] = mine.iter().map(Tally::total_drops).sum();
        expect!(
            c,
            hits + drops[round] == updates,
            "round {}: {} hits, {} drops",
            round,
            hits,
            drops[round]
        );
        let so_far = tallies[..(round + 1) * n].iter();
        let a = audit(c, &map, Keys::Word, universe, so_far)?;
        expect!(c, a.entries == 1, "round {}: {} entries", round, a.entries);
        let key = Keys::Word.encode(HOT_ID);
        hitcount[round] = map.lookup(&key[..8]).map_or(0, |e| e.read_sum(0));
    }
    expect!(
        c,
        drops[0] == 0,
        "{} drops while the key was published",
        drops[0]
    );
    expect!(c, drops[1] == 0, "{} drops with the key in place", drops[1]);
    expect!(
        c,
        hitcount[1].wrapping_sub(hitcount[0]) == updates,
        "hitcount {} -> {}, {} updates",
        hitcount[0],
        hitcount[1],
        updates
    );
    expect!(
        c,
        hitcount[1] + drops[0] == 2 * updates,
        "hitcount {}, {} updates, {} drops",
        hitcount[1],
        2 * updates,
        drops[0]
    );
    let interleaved: u64 = tallies.iter().map(|t| t.interleaved).sum();
    c.note(format_args!(
        "{} cpus x {} updates x 2 rounds: hitcount {}, {} dropped while the key was published, \
         {} interleavings seen",
        n, HOT_UPDATES, hitcount[1], drops[0], interleaved
    ));
    Ok(())
}

/// Keys every thread of [`many_keys`] updates, and keys each has alone.
const SHARED_KEYS: usize = 256;
const OWN_KEYS: usize = 64;
/// Rounds over its keys each thread makes, in an order of its own.
const ROUNDS: usize = 100;

/// Every CPU updates `SHARED_KEYS` keys common to all and `OWN_KEYS` keys
/// of its own, `ROUNDS` times each, in orders that differ between threads
/// and rounds. The map has room for all: each key ends up in it once,
/// with all its updates (none is dropped while it is being published, see
/// [`hot_key`]).
fn many_keys(c: &mut Checks) -> Result {
    let cpus = OnlineCpus::get()?;
    let n = cpus.ids().len();
    let per_thread = SHARED_KEYS + OWN_KEYS;
    let universe = SHARED_KEYS + n * OWN_KEYS;
    let mut bits = 10;
    while (1usize << bits) < universe {
        bits += 1;
    }
    let params = MapParams::new(bits, 8, 2, 0).per_cpu(crate::event::nr_cpu_ids());
    let mut memory = map_memory(&params)?;
    let map = TracingMap::new_uninit(params, memory.spare_capacity_mut()).map_err(map_error)?;
    let mut tallies = Tally::many(n, universe)?;
    cpus.run_on(cpus.ids(), &mut tallies, &|i: usize, t: &mut Tally| {
        for round in 0..ROUNDS {
            // A step prime to `per_thread` (320) visits each key once.
            let start = (i * 37 + round * 11) % per_thread;
            for j in 0..per_thread {
                let k = (start + j * 7) % per_thread;
                let id = if k < SHARED_KEYS {
                    k
                } else {
                    SHARED_KEYS + i * OWN_KEYS + (k - SHARED_KEYS)
                };
                t.update(&map, Keys::Word, id);
            }
            cond_resched();
        }
    })?;

    // Every scheduled update was counted by its thread, as a hit or a drop.
    for (i, t) in tallies.iter().enumerate() {
        for (id, (&h, &d)) in t.hits.iter().zip(t.drops.iter()).enumerate() {
            let mine = id < SHARED_KEYS || (id - SHARED_KEYS) / OWN_KEYS == i;
            let want = if mine { ROUNDS as u64 } else { 0 };
            expect!(c, h + d == want, "thread {} key {}: {} + {}", i, id, h, d);
        }
    }
    let a = audit(c, &map, Keys::Word, universe, tallies.iter())?;
    expect!(
        c,
        a.entries == universe,
        "{} entries, {} keys",
        a.entries,
        universe
    );
    let drops: u64 = tallies.iter().map(Tally::total_drops).sum();
    expect!(c, drops == 0, "{} dropped while being published", drops);
    c.note(format_args!(
        "{} cpus x {} updates: {} keys, {} dropped while being published",
        n,
        ROUNDS * per_thread,
        a.entries,
        drops
    ));
    Ok(())
}

const READ_KEYS: usize = 300;
const READ_UPDATES: usize = 50_000;

/// What the reader of [`reader_during_writes`] keeps and finds.
struct Reader {
    /// Each key's hitcount in the last walk.
    last: KVVec<u64>,
    seen: KVVec<bool>,
    sorted: KVVec<u32>,
    /// Entries seen in the last walk.
    entries: usize,
    walks: u64,
    walks_during_writes: u64,
    /// Keys not whole, or not of any id.
    torn: u64,
    /// Keys seen twice in one walk, or in one sort.
    twice: u64,
    /// Hitcounts lower than in an earlier walk.
    went_down: u64,
    /// Value sums that are not a multiple of their key's value: some
    /// other key's update landed there.
    misrouted: u64,
    /// Walks that saw fewer entries than the one before.
    shrank: u64,
    /// Sorts missing entries the walk before them saw, or with bad ones.
    bad_sorts: u64,
}

/// A thread of [`reader_during_writes`].
enum Worker {
    Writer(Tally),
    Reader(Reader),
}

const READ_SORT: [SortKey; 2] = [
    SortKey::descending(SortField::Sum(0)),
    SortKey::ascending(SortField::KeyNum {
        offset: 0,
        size: 8,
        signed: false,
    }),
];

impl Reader {
    /// One walk over the map and one sort of it, while writers may run.
    fn walk(&mut self, map: &TracingMap<'_>) {
        self.seen.iter_mut().for_each(|s| *s = false);
        let mut entries = 0;
        for e in map.iter() {
            entries += 1;
            let Some(id) = Keys::Triple.decode(&e, READ_KEYS) else {
                self.torn += 1;
                continue;
            };
            if core::mem::replace(&mut self.seen[id], true) {
                self.twice += 1;
            }
            let hitcount = e.read_sum(0);
            if hitcount < self.last[id] {
                self.went_down += 1;
            }
            self.last[id] = hitcount;
            if e.read_sum(1) % value_of(id) != 0 {
                self.misrouted += 1;
            }
        }
        if entries < self.entries {
            self.shrank += 1;
        }
        self.entries = entries;

        // Sums move as it sorts: the order is approximate, but it holds
        // every element published before the walk, each once.
        let n = map.sort_entries(&READ_SORT, &mut self.sorted);
        if n < entries {
            self.bad_sorts += 1;
        }
        self.seen.iter_mut().for_each(|s| *s = false);
        for &i in &self.sorted[..n] {
            match map.elt(i).and_then(|e| Keys::Triple.decode(&e, READ_KEYS)) {
                Some(id) => {
                    if core::mem::replace(&mut self.seen[id], true) {
                        self.twice += 1;
                    }
                }
                None => self.bad_sorts += 1,
            }
        }
        self.walks += 1;
    }
}

/// Writers on every CPU update random keys of 24 bytes while a reader
/// walks and sorts the map and reads its sums: the reader sees whole keys
/// only, each once per walk and per sort, hitcounts that never go down and
/// entries that never go away; once the writers are done, the totals are
/// exact and the sort is ordered.
fn reader_during_writes(c: &mut Checks) -> Result {
    let online = OnlineCpus::get()?;
    let n = online.ids().len();
    // The writers, then the reader on the first CPU.
    let mut cpus = KVVec::with_capacity(n + 1, GFP_KERNEL)?;
    cpus.extend_from_slice(online.ids(), GFP_KERNEL)?;
    cpus.push(online.ids()[0], GFP_KERNEL)?;
    let params = MapParams::new(9, 24, 2, 0);
    let mut memory = map_memory(&params)?;
    let map = TracingMap::new_uninit(params, memory.spare_capacity_mut()).map_err(map_error)?;
    let mut workers = KVVec::with_capacity(n + 1, GFP_KERNEL)?;
    for _ in 0..n {
        workers.push(Worker::Writer(Tally::new(READ_KEYS)?), GFP_KERNEL)?;
    }
    let reader = Reader {
        last: KVVec::from_elem(0, READ_KEYS, GFP_KERNEL)?,
        seen: KVVec::from_elem(false, READ_KEYS, GFP_KERNEL)?,
        sorted: KVVec::from_elem(0, map.max_elts(), GFP_KERNEL)?,
        entries: 0,
        walks: 0,
        walks_during_writes: 0,
        torn: 0,
        twice: 0,
        went_down: 0,
        misrouted: 0,
        shrank: 0,
        bad_sorts: 0,
    };
    workers.push(Worker::Reader(reader), GFP_KERNEL)?;

    let writers_done = AtomicUsize::new(0);
    online.run_on(&cpus, &mut workers, &|i: usize, w: &mut Worker| match w {
        Worker::Writer(t) => {
            let mut rng = seed(i);
            for j in 0..READ_UPDATES {
                let id = (next_random(&mut rng) % READ_KEYS as u64) as usize;
                t.update(&map, Keys::Triple, id);
                if j % 256 == 255 {
                    cond_resched();
                }
            }
            writers_done.fetch_add(1, Ordering::Release);
        }
        Worker::Reader(r) => loop {
            // Acquire: the last walk, after all writers are done, sees
            // all they wrote.
            let done = writers_done.load(Ordering::Acquire) == n;
            r.walk(&map);
            if !done {
                r.walks_during_writes += 1;
            }
            cond_resched();
            if done {
                break;
            }
        },
    })?;

    let writers = workers.iter().filter_map(|w| match w {
        Worker::Writer(t) => Some(t),
        Worker::Reader(_) => None,
    });
    for t in writers.clone() {
        let ops = t.total_hits() + t.total_drops();
        expect!(c, ops == READ_UPDATES as u64, "a writer counted {}", ops);
    }
    let a = audit(c, &map, Keys::Triple, READ_KEYS, writers)?;
    if let Some(Worker::Reader(r)) = workers.last() {
        expect!(c, r.torn == 0, "{} torn keys", r.torn);
        expect!(c, r.twice == 0, "{} keys seen twice", r.twice);
        expect!(c, r.went_down == 0, "{} hitcounts went down", r.went_down);
        expect!(c, r.misrouted == 0, "{} sums misrouted", r.misrouted);
        expect!(c, r.shrank == 0, "{} walks saw fewer entries", r.shrank);
        expect!(c, r.bad_sorts == 0, "{} bad sorts", r.bad_sorts);
        expect!(
            c,
            r.entries == a.entries,
            "last walk {} of {}",
            r.entries,
            a.entries
        );
        c.note(format_args!(
            "{} writers x {} updates, {} keys; {} walks and sorts, {} during the writes",
            n, READ_UPDATES, a.entries, r.walks, r.walks_during_writes
        ));
    }

    // At rest the sort is exact: by hitcount, largest first, then by id.
    let mut sorted = KVVec::from_elem(0u32, map.max_elts(), GFP_KERNEL)?;
    let n_sorted = map.sort_entries(&READ_SORT, &mut sorted);
    expect!(
        c,
        n_sorted == a.entries,
        "{} sorted of {}",
        n_sorted,
        a.entries
    );
    let row = |i: u32| {
        map.elt(i)
            .map(|e| (e.read_sum(0), Keys::Triple.decode(&e, READ_KEYS)))
    };
    for pair in sorted[..n_sorted].windows(2) {
        let (x, y) = (row(pair[0]), row(pair[1]));
        let ordered = match (x, y) {
            (Some((hx, Some(ix))), Some((hy, Some(iy)))) => hx > hy || (hx == hy && ix < iy),
            _ => false,
        };
        expect!(c, ordered, "{:?} before {:?}", x, y);
    }
    Ok(())
}

const FULL_KEYS: usize = 1000;
const FULL_UPDATES: usize = 20_000;

/// Every CPU inserts all of `FULL_KEYS` keys, then random ones, into a map
/// of 128 elements: the map fills up exactly; every update after that of a
/// key not in the map is dropped and counted; the keys in it are whole,
/// each once, with exact sums, and are still found.
fn map_full(c: &mut Checks) -> Result {
    let cpus = OnlineCpus::get()?;
    let n = cpus.ids().len();
    let params = MapParams::new(7, 24, 2, 0);
    let mut memory = map_memory(&params)?;
    let map = TracingMap::new_uninit(params, memory.spare_capacity_mut()).map_err(map_error)?;
    let mut tallies = Tally::many(n, FULL_KEYS)?;
    cpus.run_on(cpus.ids(), &mut tallies, &|i: usize, t: &mut Tally| {
        // 7 is prime to FULL_KEYS: each key once, from a different start.
        for j in 0..FULL_KEYS {
            t.update(&map, Keys::Triple, (i * 131 + j * 7) % FULL_KEYS);
            if j % 256 == 255 {
                cond_resched();
            }
        }
        let mut rng = seed(i);
        for j in 0..FULL_UPDATES {
            let id = (next_random(&mut rng) % FULL_KEYS as u64) as usize;
            t.update(&map, Keys::Triple, id);
            if j % 256 == 255 {
                cond_resched();
            }
        }
    })?;

    for t in tallies.iter() {
        let ops = t.total_hits() + t.total_drops();
        let want = (FULL_KEYS + FULL_UPDATES) as u64;
        expect!(c, ops == want, "a thread counted {}", ops);
    }
    let a = audit(c, &map, Keys::Triple, FULL_KEYS, tallies.iter())?;
    expect!(c, a.entries == map.max_elts(), "{} entries", a.entries);
    let drops = map.drops();
    expect!(c, drops > 0, "no drops");
    c.note(format_args!(
        "{} cpus x {} updates: {} entries, {} hits, {} drops",
        n,
        FULL_KEYS + FULL_UPDATES,
        a.entries,
        map.hits(),
        drops
    ));

    // Once more, alone: a new key is dropped and counted, a key in the
    // map is found and counted, and nothing else changes.
    let (Some(present), Some(absent)) = (a.present, a.absent) else {
        expect!(c, false, "no key in or out of the map");
        return Ok(());
    };
    let hits = map.hits();
    let absent_key = Keys::Triple.encode(absent);
    expect!(
        c,
        map.insert(&absent_key).is_none(),
        "key {} inserted",
        absent
    );
    expect!(
        c,
        map.drops() == drops + 1,
        "drops {} -> {}",
        drops,
        map.drops()
    );
    let present_key = Keys::Triple.encode(present);
    let found = map.insert(&present_key).map(|e| e.index());
    let looked_up = map.lookup(&present_key).map(|e| e.index());
    expect!(
        c,
        found.is_some() && found == looked_up,
        "{:?} {:?}",
        found,
        looked_up
    );
    expect!(c, map.hits() == hits + 1, "hits {} -> {}", hits, map.hits());
    expect!(c, map.lookup(&absent_key).is_none(), "key {} found", absent);
    expect!(c, map.len() == map.max_elts(), "len() {}", map.len());
    expect!(c, map.iter().count() == map.max_elts(), "entries changed");
    Ok(())
}

// ---------------------------------------------------------------------
// `Tied` (rust/tied.rs): its doc example, a change through `with_mut()`,
// the value built in place, and the value dropped before the owner it
// borrows, or the owner alone when the value could not be made.

/// The words of a text, borrowing it.
struct WordsOf;

impl Family for WordsOf {
    type Of<'a> = KVec<&'a str>;

    fn shorten<'short, 'long: 'short>(long: &'short KVec<&'long str>) -> &'short KVec<&'short str> {
        long
    }
}

/// The words of `text`, split at spaces.
fn words_of(text: &[u8]) -> Result<KVec<&str>> {
    let text = core::str::from_utf8(text).map_err(|_| EINVAL)?;
    let mut words = KVec::new();
    for word in text.split(' ') {
        words.push(word, GFP_KERNEL)?;
    }
    Ok(words)
}

/// An owner that says, when dropped, whether it was dropped before.
struct Owner {
    dropped: AtomicBool,
}

/// How many [`Owner`]s were dropped.
static OWNERS_DROPPED: AtomicUsize = AtomicUsize::new(0);

impl Drop for Owner {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::Relaxed);
        OWNERS_DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}

/// Reads its owner's flag when it is dropped.
struct Watcher<'a>(&'a Owner);

/// Whether the last [`Watcher`] dropped saw its owner still there.
static OWNER_THERE: AtomicBool = AtomicBool::new(false);

impl Drop for Watcher<'_> {
    fn drop(&mut self) {
        OWNER_THERE.store(!self.0.dropped.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

/// [`Watcher`], for every lifetime.
struct WatcherOf;

impl Family for WatcherOf {
    type Of<'a> = Watcher<'a>;

    fn shorten<'short, 'long: 'short>(long: &'short Watcher<'long>) -> &'short Watcher<'short> {
        long
    }
}

fn tied_words() -> Result<bool> {
    let mut text = KVec::new();
    text.extend_from_slice(b"two words", GFP_KERNEL)?;
    let mut words = Tied::<_, WordsOf>::try_new(text, |text| words_of(text))?;
    let read = words.get().len() == 2 && words.get()[1] == "words";
    words.with_mut(|words| words.swap(0, 1));
    let changed = words.get()[0] == "words" && words.get()[1] == "two";
    Ok(read && changed)
}

fn tied_words_in_place() -> Result<bool> {
    let mut text = KVec::new();
    text.extend_from_slice(b"two words", GFP_KERNEL)?;
    let init = Tied::<_, WordsOf>::try_init(text, |text, place| {
        Ok::<_, Error>(place.write(words_of(text)?))
    });
    let words = KBox::try_init(init, GFP_KERNEL)?;
    Ok(words.get().len() == 2 && words.get()[0] == "two" && words.get()[1] == "words")
}

fn tied_drop_order() -> Result<bool> {
    OWNER_THERE.store(false, Ordering::Relaxed);
    let owner = Owner {
        dropped: AtomicBool::new(false),
    };
    let tied = Tied::<_, WatcherOf>::try_new(owner, |owner| Ok::<_, Error>(Watcher(owner)))?;
    let there = !tied.get().0.dropped.load(Ordering::Relaxed);
    drop(tied);
    Ok(there && OWNER_THERE.load(Ordering::Relaxed))
}

fn tied_drop_order_in_place() -> Result<bool> {
    OWNER_THERE.store(false, Ordering::Relaxed);
    let owner = Owner {
        dropped: AtomicBool::new(false),
    };
    let init = Tied::<_, WatcherOf>::try_init(owner, |owner, place| {
        Ok::<_, Error>(place.write(Watcher(owner)))
    });
    let tied = KBox::try_init(init, GFP_KERNEL)?;
    let there = !tied.get().0.dropped.load(Ordering::Relaxed);
    drop(tied);
    Ok(there && OWNER_THERE.load(Ordering::Relaxed))
}

/// A value that cannot be made: its error is returned, and the owner is
/// dropped once, with nothing in the place to drop.
fn tied_in_place_fails() -> bool {
    let before = OWNERS_DROPPED.load(Ordering::Relaxed);
    let owner = Owner {
        dropped: AtomicBool::new(false),
    };
    let init = Tied::<_, WatcherOf>::try_init(owner, |_, _| Err(EINVAL));
    let failed = matches!(KBox::try_init(init, GFP_KERNEL), Err(e) if e == EINVAL);
    failed && OWNERS_DROPPED.load(Ordering::Relaxed) == before + 1
}

fn tied_value_borrows_its_owner() {
    check!(tied_words() == Ok(true));
    check!(tied_words_in_place() == Ok(true));
    check!(tied_drop_order() == Ok(true));
    check!(tied_drop_order_in_place() == Ok(true));
    check!(tied_in_place_fails());
}

/// Every check after the CPUs are let go (`drop(cpus)`): a failed one
/// ends the test's task without running destructors, which would leave
/// `cpu_hotplug_lock` held.
fn this_cpu_is_the_kernels() {
    let Ok(cpus) = OnlineCpus::get() else {
        check!(false);
        return;
    };
    let Ok(mut seen) = KVVec::from_elem((u32::MAX, u32::MAX), cpus.ids().len(), GFP_KERNEL) else {
        drop(cpus);
        check!(false);
        return;
    };
    let ran = cpus.run_on(cpus.ids(), &mut seen, &|_, seen: &mut (u32, u32)| {
        *seen = (
            crate::event::this_cpu(),
            percpu::raw_smp_processor_id_from_c(),
        );
    });
    let mut each = cpus.ids().iter().zip(seen.iter());
    let all_match = each.all(|(&cpu, &(ours, kernels))| ours == cpu && kernels == cpu);
    drop(cpus);
    check!(ran.is_ok());
    check!(all_match);
}

/// The event path's read of the current task's name (`common_comm`
/// keys), two words at the offset C lays `comm` at, is the name the
/// kernel's `current->comm` holds: on every CPU, in a kthread named for
/// the test (no task renames it meanwhile).
fn current_comm_is_the_kernels() {
    use crate::hist::program::Here;
    let Ok(cpus) = OnlineCpus::get() else {
        check!(false);
        return;
    };
    let Ok(mut seen) = KVVec::from_elem(([0u8; 16], [0u8; 16]), cpus.ids().len(), GFP_KERNEL)
    else {
        drop(cpus);
        check!(false);
        return;
    };
    let ran = cpus.run_on(
        cpus.ids(),
        &mut seen,
        &|_, seen: &mut ([u8; 16], [u8; 16])| {
            let here = crate::event::OnThisCpu;
            seen.0[..8].copy_from_slice(&here.comm_word(0).to_ne_bytes());
            seen.0[8..].copy_from_slice(&here.comm_word(1).to_ne_bytes());
            seen.1 = task::current_comm();
        },
    );
    // The checks once the CPUs are let go (see `this_cpu_is_the_kernels`).
    drop(cpus);
    check!(ran.is_ok());
    for (ours, kernels) in seen.iter() {
        check!(ours == kernels && kernels[0] != 0);
    }
}

fn map_hot_key_on_every_cpu() {
    run_case("map_hot_key_on_every_cpu", hot_key);
}

fn map_many_keys_on_every_cpu() {
    run_case("map_many_keys_on_every_cpu", many_keys);
}

fn map_reader_during_writes() {
    run_case("map_reader_during_writes", reader_during_writes);
}

fn map_full_drops_counted() {
    run_case("map_full_drops_counted", map_full);
}

kunit_suite!(
    "rhist",
    [
        command_name_is_taken,
        extra_file_name_is_taken,
        core_rejects_bad_triggers,
        trigger_data_as_c_does,
        this_cpu_is_the_kernels,
        current_comm_is_the_kernels,
        tied_value_borrows_its_owner,
        map_hot_key_on_every_cpu,
        map_many_keys_on_every_cpu,
        map_reader_during_writes,
        map_full_drops_counted,
    ]
);
