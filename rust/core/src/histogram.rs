// SPDX-License-Identifier: GPL-2.0

//! A histogram: the resolved trigger ([`HistData`]) and its map
//! ([`TracingMap`]) together. The event path is [`Histogram::update`]; the
//! `hist` file's text is [`Histogram::print`]. The kernel shell owns the
//! memory both borrow.

use core::fmt::{self, Write};
use core::sync::atomic::{AtomicU64, Ordering};

use super::event::EventContext;
use super::grammar::ActionKind;
use super::hist_data::{self, ActionSink, HistData, Tracking};
use super::map::{self, First, Inserter, MapError, MapKey, MapParams, TracingMap};
use super::output::{self, Resolver, ValStat};
use super::program::{Applied, CompactKey, Program, StrKey};
use super::sketch::{self, MapSketches, Quantile, SketchPool, PERCENTILES, PERCENTILE_NAMES};
use super::stats::SlotOp;
use super::var_ref::VAR_REFS_MAX;
use super::vars;

/// Largest key a histogram builds (C's `HIST_KEY_SIZE_MAX`).
pub const KEY_SIZE_MAX: usize = 256 + 16 * 8;

/// [`KEY_SIZE_MAX`] in words.
const KEY_WORDS_MAX: usize = KEY_SIZE_MAX / 8;

/// The sums of a histogram with statistics whose updates it looks up
/// once (`ops`, `sketch_of`); those of further sums (rhist's extension
/// has up to 17) are looked up per event. More would grow the stack
/// frame the histogram is made in.
const SKETCHED_MAX: usize = 8;

/// Words of saved command name per element, for `.execname` keys.
const COMM_WORDS: usize = 2;

/// The map parameters a histogram needs on a machine of `n_cpus` CPUs.
/// The private words of each element: the saved command name when some
/// field has `.execname`, then the variables' copies ([`vars`]). The sums
/// are per CPU when [`MapParams::per_cpu`]'s rule says so.
pub fn map_params(data: &HistData<'_>, n_cpus: usize) -> MapParams {
    map_params_sized(data, data.map_bits(), n_cpus)
}

/// [`map_params`] of a map of `bits` rather than `size=`'s: a `:grow`
/// histogram's next generation ([`super::grow`]).
pub fn map_params_sized(data: &HistData<'_>, bits: u32, n_cpus: usize) -> MapParams {
    let mut params = MapParams::new(bits, data.key_size(), data.n_sums(), data.n_map_vars())
        .with_private_words(
            comm_words(data.needs_comm()) + data.n_var_copies() * vars::STR_VAR_WORDS,
        );
    // Only a sketch finds its element from its sums (`sums_index`).
    if data.sketch_params().is_none() {
        params = params.with_packed_sums();
    }
    params.per_cpu(n_cpus)
}

/// The private words the saved command name takes.
fn comm_words(needs_comm: bool) -> usize {
    if needs_comm {
        COMM_WORDS
    } else {
        0
    }
}

/// The details of the last snapshot a `snapshot()` action took, which
/// the shell keeps (C's `struct track_data` of the condition).
#[derive(Clone, Copy, Debug)]
pub struct Snapshot<'k> {
    /// The tracked value that took it.
    pub val: u64,
    /// The key of the entry whose event took it.
    pub key: &'k [u8],
    /// That entry's saved command name.
    pub comm: [u8; 16],
}

/// A histogram over memory the caller owns.
///
/// `repr(C)` with [`Hot`] first: what the event path's compiled code
/// reads keeps the layout and offsets it has without the fields of
/// rhist's extensions, which come after it.
#[repr(C)]
pub struct Histogram<'a> {
    /// The fields every trigger's event path reads (by `Deref`).
    hot: Hot<'a>,
    /// The sketches of the `.quantiles` values ([`MapSketches::empty`]
    /// if there are none).
    sketches: MapSketches<'a>,
    /// How an event updates each sum of a histogram with statistics
    /// (`data.slot_op()`, looked up once).
    ops: [SlotOp; SKETCHED_MAX],
    /// The sketch of each sum that is a `.quantiles` value
    /// (`data.sketch_index()`, looked up once).
    sketch_of: [u8; SKETCHED_MAX],
    /// Finds the element of its sums, for its sketches (compiled programs
    /// with sketches only; [`map::SumsIndex::NONE`] finds none).
    sums_index: map::SumsIndex,
    /// Where the event path finds the sketch of [`Program::last_sketch`].
    last_sketch: LastSketch,
}

/// Where the sketch of a compiled program's last value, a `.quantiles`
/// value ([`Program::last_sketch`]), is for an element whose sums the
/// histogram's `sums_index` finds: the event path's constants, looked up
/// once. Small: a histogram is built on a small stack.
#[derive(Clone, Copy, Debug)]
struct LastSketch {
    /// Element `e`'s sketch starts at word `e * stride + first` of the
    /// pool's sketches (its slot is `e * n_values + j`): `stride` as
    /// [`map::SumsIndex::times`] gives it.
    stride: usize,
    first: usize,
    /// The `from` of [`Program::last_sketch_value`] for which it
    /// records, `u32::MAX` for none.
    from: u32,
}

impl LastSketch {
    /// That of `program`'s last value, if it is a `.quantiles` one
    /// ([`Program::last_sketch`]) with sketches in `sketches`, and
    /// `index` finds its elements; none if not. Out of line: its
    /// temporaries stay out of the frame of whoever makes a histogram.
    #[inline(never)]
    fn new(
        data: &HistData<'_>,
        program: Option<&Program>,
        sketches: &MapSketches<'_>,
        index: Option<map::SumsIndex>,
    ) -> Self {
        let found = || {
            let i = program?.last_sketch()?;
            let j = data.sketch_index(i)?;
            let n = sketches.n_values();
            (j < n).then_some(())?;
            Some(LastSketch {
                stride: index?.times(n * sketch::SKETCH_WORDS)?,
                first: j * sketch::SKETCH_WORDS,
                from: u32::try_from(i - 1).ok()?,
            })
        };
        found().unwrap_or(LastSketch {
            stride: 0,
            first: 0,
            from: u32::MAX,
        })
    }
}

/// The fields of a [`Histogram`] that every trigger's event path reads.
pub struct Hot<'a> {
    data: &'a HistData<'a>,
    map: TracingMap<'a>,
    /// `data.needs_comm()`, looked up once rather than on every event.
    needs_comm: bool,
    /// Whether a variable every event sets keeps a copy in the entry
    /// ([`vars`]).
    has_copies: bool,
    /// How many copies those variables keep: the save variables' come
    /// after.
    event_copies: usize,
    /// `data.has_stats()`: some sums are statistics.
    has_stats: bool,
    /// The compiled event path, for the shapes it covers (when `shape`
    /// is not [`Shape::None`]).
    program: Program,
    /// The code that runs the program.
    shape: Shape,
}

impl<'a> core::ops::Deref for Histogram<'a> {
    type Target = Hot<'a>;

    #[inline(always)]
    fn deref(&self) -> &Hot<'a> {
        &self.hot
    }
}

/// The code that runs a histogram's compiled program, by the program's
/// key: see [`Histogram::update_compiled`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// No program: events take the general path.
    None,
    /// A key of one, two or three numbers.
    Number1,
    Number2,
    Number3,
    /// A key of numbers and `char[]` strings of one to four words
    /// ([`Program::short`]).
    Short1,
    Short2,
    Short3,
    Short4,
    /// One string alone, of more than four words.
    String,
    /// Any other key with strings.
    Compact,
}

impl Shape {
    fn of(p: &Program) -> Self {
        match (p.words(), p.n_keys(), p.key_words()) {
            (true, 1, _) => Shape::Number1,
            (true, 2, _) => Shape::Number2,
            (true, _, _) => Shape::Number3,
            (false, _, 1) if p.short() => Shape::Short1,
            (false, _, 2) if p.short() => Shape::Short2,
            (false, _, 3) if p.short() => Shape::Short3,
            (false, _, 4) if p.short() => Shape::Short4,
            (false, _, _) if p.one_string() => Shape::String,
            (false, _, _) => Shape::Compact,
        }
    }
}

/// The name of value `i` without its statistic (`lat` of `lat.p99`).
struct Stem<'h, 'a>(&'h HistData<'a>, usize);

impl fmt::Display for Stem<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write_val_stem(f, self.1)
    }
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

// The sections of the event path's code, each page-aligned (the module
// loader keeps a section's alignment). An event's code stays in one page
// of one section: it runs no jump out of the page but its return (under
// QEMU's TCG, each such jump costs a lookup of the code that follows; on
// hardware, fewer pages and cache lines). check.sh's event-text test
// checks that each section holds in a page.
#[cfg(target_os = "none")]
core::arch::global_asm!(
    ".pushsection .text.rhist_event,\"ax\",@progbits\n.balign 4096\n.popsection",
    ".pushsection .text.rhist_event.key3,\"ax\",@progbits\n.balign 4096\n.popsection",
    ".pushsection .text.rhist_event.short,\"ax\",@progbits\n.balign 4096\n.popsection",
    ".pushsection .text.rhist_event.key4,\"ax\",@progbits\n.balign 4096\n.popsection",
    ".pushsection .text.rhist_event.string,\"ax\",@progbits\n.balign 4096\n.popsection",
    ".pushsection .text.rhist_event.compact,\"ax\",@progbits\n.balign 4096\n.popsection",
);

impl<'a> Histogram<'a> {
    /// Puts `data` and `map` together; `map` must have been built with
    /// [`map_params`] of `data` (for any number of CPUs), or, when `data`
    /// has `:grow`, [`map_params_sized`] of any size.
    pub fn new(data: &'a HistData<'a>, map: TracingMap<'a>) -> Result<Self, MapError> {
        Self::with_sketches(data, map, None)
    }

    /// [`new`](Self::new) of a histogram that may have `.quantiles`
    /// values: `pool` must then be a pool made with
    /// [`HistData::sketch_params`] of `data`, and cleared and freed with
    /// the map; it must be `None` otherwise.
    pub fn with_sketches(
        data: &'a HistData<'a>,
        map: TracingMap<'a>,
        pool: Option<SketchPool<'a>>,
    ) -> Result<Self, MapError> {
        let mut shape = map.params().with_cpus(1);
        if data.spec().grow() {
            shape.bits = data.map_bits();
        }
        if shape != map_params(data, 1) || pool.map(|p| p.params()) != data.sketch_params() {
            return Err(MapError::StorageTooSmall);
        }
        let sketches = match pool {
            Some(pool) => Some(
                MapSketches::new(pool, data.n_percentiles())
                    .map_err(|_| MapError::StorageTooSmall)?,
            ),
            None => None,
        };
        let mut ops = [SlotOp::Add; SKETCHED_MAX];
        for (i, op) in ops.iter_mut().enumerate().take(data.n_sums()) {
            *op = data.slot_op(i);
        }
        let mut sketch_of = [0u8; SKETCHED_MAX];
        for (i, j) in sketch_of.iter_mut().enumerate() {
            *j = data.sketch_index(i).unwrap_or(0) as u8;
        }
        // The string shapes add their sums inline (`add_sums_of()`),
        // without statistics: theirs take the general path. So do
        // sketches of a map whose element is not found from its sums
        // (never, for the few sums a program has).
        let sums_index = map.sums_index();
        let shape = |p: &Program| match Shape::of(p) {
            Shape::String | Shape::Compact if p.has_stats() => Shape::None,
            _ if p.has_stats() && sketches.is_some() && sums_index.is_none() => Shape::None,
            shape => shape,
        };
        let program = data.program();
        let sketches = sketches.unwrap_or(MapSketches::empty());
        let last_sketch = LastSketch::new(data, program.as_ref(), &sketches, sums_index);
        let sums_index = sums_index.unwrap_or(map::SumsIndex::NONE);
        Ok(Histogram {
            hot: Hot {
                data,
                map,
                needs_comm: data.needs_comm(),
                has_copies: data.n_event_var_copies() > 0,
                event_copies: data.n_event_var_copies(),
                has_stats: data.has_stats(),
                shape: program.as_ref().map_or(Shape::None, shape),
                program: program.unwrap_or(Program::NONE),
            },
            sums_index,
            sketches,
            ops,
            sketch_of,
            last_sketch,
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

    /// The sketches of the `.quantiles` values, if it has any.
    pub fn sketches(&self) -> Option<&MapSketches<'a>> {
        (self.sketches.n_values() > 0).then_some(&self.sketches)
    }

    /// Accounts one event record: builds its key, finds or inserts its
    /// entry, adds its values and sets its variables. Lock-free; no
    /// allocation.
    #[inline]
    pub fn update(&self, rec: &[u8], ctx: &dyn TaskContext) {
        let cpu = ctx.cpu();
        if !self.update_compiled(rec, move || cpu, || {}) {
            self.update_general(rec, ctx);
        }
    }

    /// [`update`](Self::update) by the general path, whatever the
    /// histogram's program: the probe takes it when there is none (it runs
    /// the program with [`update_compiled`](Self::update_compiled), which
    /// is then its only copy in the kernel).
    #[inline]
    pub fn update_general(&self, rec: &[u8], ctx: &dyn TaskContext) {
        // The key is built on the stack, in a buffer no larger than it
        // needs: most keys are a word or two, and zeroing the largest
        // possible key on every event would cost more than the rest.
        if self.has_stats {
            return self.update_general_stats(rec, ctx);
        }
        match self.data.key_size() {
            0..=8 => self.update_with::<8, false>(rec, ctx),
            9..=32 => self.update_with::<32, false>(rec, ctx),
            _ => self.update_with::<KEY_SIZE_MAX, false>(rec, ctx),
        }
    }

    /// [`update_general`](Self::update_general) of a histogram with
    /// statistics ([`super::stats`]): apart, so that the others ask only
    /// once whether theirs are.
    #[inline(never)]
    fn update_general_stats(&self, rec: &[u8], ctx: &dyn TaskContext) {
        match self.data.key_size() {
            0..=8 => self.update_with::<8, true>(rec, ctx),
            9..=32 => self.update_with::<32, true>(rec, ctx),
            _ => self.update_with::<KEY_SIZE_MAX, true>(rec, ctx),
        }
    }

    /// [`update`](Self::update) by the compiled program, if the histogram
    /// has one (then it has no variables, references or actions, and
    /// reads nothing but the record); `false`, having done nothing,
    /// otherwise.
    ///
    /// In the kernel, the code an event runs is at most a page: the probe,
    /// with this inlined, jumps to the code of the program's shape, each
    /// in a section that starts on a page (see `global_asm!` above). The
    /// probe and the shapes of one and two numbers share theirs.
    ///
    /// `cpu` gives the CPU the caller runs on, whose copy of the sums the
    /// event adds to (see [`MapParams::per_cpu`]), when they are added: in
    /// the kernel, a read of a per-CPU variable that takes no register
    /// before it.
    ///
    /// `after` runs once the entry is updated (the kernel wakes the hist
    /// files' pollers), in the shape's code: the probe's call to it can be
    /// its last, a jump, and the shape returns to the probe's caller.
    ///
    /// Each shape's code calls nothing on its common path (a key whose
    /// loads are all quick, found where its probe starts), and keeps few
    /// values (in the module, a key of one number with no values saves no
    /// register); the rest (a longer probe, an insert, the values, a load
    /// that is not quick) is a jump to code out of line, which saves what
    /// it uses itself.
    #[inline(always)]
    pub fn update_compiled(
        &self,
        rec: &[u8],
        cpu: impl Fn() -> u32 + Copy,
        after: impl FnOnce(),
    ) -> bool {
        if self.shape == Shape::Number1 {
            self.run_number_key1(rec, cpu, after);
            return true;
        }
        // The others after that one test: a key of one number is the
        // commonest (without this, a tree of tests, the kernel building
        // without jump tables).
        core::hint::cold_path();
        match self.shape {
            Shape::Number1 => self.run_number_key1(rec, cpu, after),
            Shape::Number2 => self.run_number_key2(rec, cpu, after),
            Shape::Number3 => self.run_number_key3(rec, cpu, after),
            Shape::Short1 => self.run_short_key1(rec, cpu, after),
            Shape::Short2 => self.run_short_key2(rec, cpu, after),
            Shape::Short3 => self.run_short_key3(rec, cpu, after),
            Shape::Short4 => self.run_short_key4(rec, cpu, after),
            Shape::String => self.run_string_key(rec, cpu, after),
            Shape::Compact => self.run_compact_key(rec, cpu, after),
            Shape::None => return false,
        }
        true
    }

    /// [`update_compiled`](Self::update_compiled) of a key of one number.
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event")]
    fn run_number_key1<C: Fn() -> u32 + Copy, F: FnOnce()>(&self, rec: &[u8], cpu: C, after: F) {
        match self.program.number_key_fast::<1>(rec) {
            Some(key) => self.account_words(key, rec, cpu, after),
            None => self.run_slow(rec, cpu, after),
        }
    }

    /// [`update_compiled`](Self::update_compiled) of a key of two numbers.
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event")]
    fn run_number_key2<C: Fn() -> u32 + Copy, F: FnOnce()>(&self, rec: &[u8], cpu: C, after: F) {
        match self.program.number_key_fast::<2>(rec) {
            Some(key) => self.account_words(key, rec, cpu, after),
            None => self.run_slow(rec, cpu, after),
        }
    }

    /// [`update_compiled`](Self::update_compiled) of a key of three
    /// numbers.
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event.key3")]
    fn run_number_key3<C: Fn() -> u32 + Copy, F: FnOnce()>(&self, rec: &[u8], cpu: C, after: F) {
        match self.program.number_key_fast::<3>(rec) {
            Some(key) => self.account_words(key, rec, cpu, after),
            None => self.run_slow(rec, cpu, after),
        }
    }

    /// [`update_compiled`](Self::update_compiled) of a key of numbers and
    /// `char[]` strings of one word.
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event.short")]
    fn run_short_key1<C: Fn() -> u32 + Copy, F: FnOnce()>(&self, rec: &[u8], cpu: C, after: F) {
        match self.program.short_key_fast::<1>(rec) {
            Some(key) => self.account_words(key, rec, cpu, after),
            None => self.run_slow(rec, cpu, after),
        }
    }

    /// [`run_short_key1`](Self::run_short_key1) of two words.
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event.short")]
    fn run_short_key2<C: Fn() -> u32 + Copy, F: FnOnce()>(&self, rec: &[u8], cpu: C, after: F) {
        match self.program.short_key_fast::<2>(rec) {
            Some(key) => self.account_words(key, rec, cpu, after),
            None => self.run_slow(rec, cpu, after),
        }
    }

    /// [`run_short_key1`](Self::run_short_key1) of three words.
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event.key3")]
    fn run_short_key3<C: Fn() -> u32 + Copy, F: FnOnce()>(&self, rec: &[u8], cpu: C, after: F) {
        match self.program.short_key_fast::<3>(rec) {
            Some(key) => self.account_words(key, rec, cpu, after),
            None => self.run_slow(rec, cpu, after),
        }
    }

    /// [`run_short_key1`](Self::run_short_key1) of four words.
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event.key4")]
    fn run_short_key4<C: Fn() -> u32 + Copy, F: FnOnce()>(&self, rec: &[u8], cpu: C, after: F) {
        match self.program.short_key_fast::<4>(rec) {
            Some(key) => self.account_words(key, rec, cpu, after),
            None => self.run_slow(rec, cpu, after),
        }
    }

    /// Finds or inserts the entry of `key`, built for `rec`, and adds the
    /// sums of `rec` to it, then runs `after`: inline at the entry where
    /// the key's probe starts, out of line from there on.
    #[inline(always)]
    fn account_words<const N: usize, C: Fn() -> u32 + Copy, F: FnOnce()>(
        &self,
        key: [u64; N],
        rec: &[u8],
        cpu: C,
        after: F,
    ) {
        let h = (&key).hash(N);
        match self.map.insert_first_uncounted(&key, h) {
            First::Found(idx) => self.add_sums(rec, cpu, idx, after),
            First::Absent => after(),
            First::Further => self.account_further(key, h, rec, cpu, after),
            First::Probe => self.account_probe(key, h, rec, cpu, after),
        }
    }

    /// [`account_words`](Self::account_words) past the entry where the
    /// key's probe starts, up to a free entry.
    #[inline(never)]
    fn account_further<const N: usize, C: Fn() -> u32 + Copy, F: FnOnce()>(
        &self,
        key: [u64; N],
        h: u32,
        rec: &[u8],
        cpu: C,
        after: F,
    ) {
        match self.map.insert_further_uncounted(&key, h) {
            First::Found(idx) => self.add_sums(rec, cpu, idx, after),
            First::Probe => self.account_probe(key, h, rec, cpu, after),
            First::Absent | First::Further => after(),
        }
    }

    /// [`account_words`](Self::account_words) by the map's probe loop:
    /// an insert, or a wait for an entry being published.
    #[inline(never)]
    fn account_probe<const N: usize, C: Fn() -> u32 + Copy, F: FnOnce()>(
        &self,
        key: [u64; N],
        h: u32,
        rec: &[u8],
        cpu: C,
        after: F,
    ) {
        match self
            .map
            .insert_rest_uncounted(&key, h, Inserter::on_cpu(cpu()))
        {
            Some(idx) => self.add_sums(rec, cpu, idx, after),
            None => after(),
        }
    }

    /// Adds the program's sums of `rec` to element `idx`, in the copy of
    /// the CPU `cpu` gives, then runs `after`: the hitcount inline, the
    /// values, if any, out of line ([`add_values`](Self::add_values)), so
    /// that a histogram of hitcounts keeps none of what they need.
    #[inline(always)]
    fn add_sums<C: Fn() -> u32 + Copy, F: FnOnce()>(&self, rec: &[u8], cpu: C, idx: u32, after: F) {
        let sums = self.map.cpu_sums(idx, cpu()).map(|s| s.words());
        let Some((hits, values)) = sums.and_then(|s| s.split_first()) else {
            return after();
        };
        hits.fetch_add(1, Ordering::Relaxed);
        if values.is_empty() {
            return after();
        }
        self.add_values(rec, values, after)
    }

    /// The values of [`add_sums`](Self::add_sums): inline as long as
    /// their loads are quick and they are plain sums, out of line from
    /// the first that is not ([`add_values_rest`](Self::add_values_rest)),
    /// unless it is the last, a `.quantiles` value: recorded here, from
    /// the histogram's constants ([`LastSketch`]).
    #[inline(never)]
    fn add_values<F: FnOnce()>(&self, rec: &[u8], values: &[AtomicU64], after: F) {
        if let Err(from) = self.program.add_values_fast(rec, values) {
            let last = &self.last_sketch;
            match self
                .program
                .last_sketch_value(rec, from, last.from as usize)
            {
                Some(v) => {
                    // Its slot found with a mask, a multiply and a shift,
                    // and one bounds check.
                    let first = self.sums_index.elt_times(values, last.stride);
                    let first = first.wrapping_add(last.first);
                    self.sketches.pool().record_at(first, v);
                }
                None => self.add_values_rest(rec, values, from),
            }
        }
        after();
    }

    /// The values of [`add_values`](Self::add_values) from value `from`
    /// on, `values` being an element's sums after its hitcount: each as
    /// its statistic says, a `.quantiles` value into the element's sketch
    /// (the element found from where its sums are).
    ///
    /// The last value alone, the common case
    /// ([`Program::last_stat`]), keeps nothing across a call: anything
    /// else is a jump to [`add_values_all`](Self::add_values_all), a
    /// sketch [`add_values`](Self::add_values) did not record a jump to
    /// [`record_sketch`](Self::record_sketch).
    #[inline(never)]
    fn add_values_rest(&self, rec: &[u8], values: &[AtomicU64], from: usize) {
        match self.program.last_stat(rec, values, from) {
            Applied::Done => {}
            Applied::Sketch(v) => self.record_sketch(values, from + 1, v),
            Applied::NotQuick => self.add_values_all(rec, values, from),
        }
    }

    /// [`add_values_rest`](Self::add_values_rest) of several values, or
    /// of a load that is not quick.
    #[inline(never)]
    fn add_values_all(&self, rec: &[u8], values: &[AtomicU64], from: usize) {
        let sketch = |i, v| self.record_sketch(values, i, v);
        self.program.add_values(rec, values, from, sketch);
    }

    /// Records `v` in the sketch of sum `i`, a `.quantiles` value, of the
    /// element whose sums after its hitcount are `values`. Out of line:
    /// the other statistics keep none of what it needs.
    #[inline(never)]
    fn record_sketch(&self, values: &[AtomicU64], i: usize, v: u64) {
        let (Some(s), Some(&j)) = (self.sketches(), self.sketch_of.get(i)) else {
            return;
        };
        if let Some(idx) = self.sums_index.elt(values) {
            s.record(idx, usize::from(j), v);
        }
    }

    /// [`update_compiled`](Self::update_compiled) of an event whose key
    /// has a load that is not quick: the key is built as the program's
    /// shape says, without the quick loads.
    #[inline(never)]
    #[cold]
    fn run_slow<C: Fn() -> u32 + Copy, F: FnOnce()>(&self, rec: &[u8], cpu: C, after: F) {
        let p = &self.program;
        let map = &self.map;
        let who = Inserter::on_cpu(cpu());
        let elt = match self.shape {
            Shape::Number1 => map.insert_exact_uncounted(&p.number_key::<1>(rec), who),
            Shape::Number2 => map.insert_exact_uncounted(&p.number_key::<2>(rec), who),
            Shape::Number3 => map.insert_exact_uncounted(&p.number_key::<3>(rec), who),
            _ => map.insert_words_uncounted(&p.key::<4>(rec), who),
        };
        match elt {
            Some(idx) => self.add_sums(rec, cpu, idx, after),
            None => after(),
        }
    }

    /// [`update_compiled`](Self::update_compiled) of a key of one string
    /// of more than 4 words: a [`StrKey`] when it fits, else the whole
    /// key ([`run_long_key`](Self::run_long_key)).
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event.string")]
    fn run_string_key<C: Fn() -> u32 + Copy, F: FnOnce()>(&self, rec: &[u8], cpu: C, after: F) {
        let p = &self.program;
        let mut key = StrKey::EMPTY;
        let cpu = cpu();
        let who = Inserter::on_cpu(cpu);
        match p.string_key(rec, &mut key) {
            true => self.add_sums_of(rec, cpu, self.map.insert_key_uncounted(&key, who)),
            false => self.run_long_key(rec, cpu),
        }
        after();
    }

    /// [`update_compiled`](Self::update_compiled) of a key with strings
    /// of more than 4 words: a
    /// [`CompactKey`](super::program::CompactKey) when it fits, else the
    /// whole key ([`run_long_key`](Self::run_long_key)).
    #[inline(never)]
    #[cfg_attr(target_os = "none", link_section = ".text.rhist_event.compact")]
    fn run_compact_key<C: Fn() -> u32 + Copy, F: FnOnce()>(&self, rec: &[u8], cpu: C, after: F) {
        let p = &self.program;
        let mut key = CompactKey::EMPTY;
        let cpu = cpu();
        let who = Inserter::on_cpu(cpu);
        match p.compact_key(rec, &mut key) {
            true => self.add_sums_of(rec, cpu, self.map.insert_key_uncounted(&key, who)),
            false => self.run_long_key(rec, cpu),
        }
        after();
    }

    /// [`run_compact_key`](Self::run_compact_key) of a key that a compact
    /// one does not hold: rare, out of the event path's sections.
    #[inline(never)]
    fn run_long_key(&self, rec: &[u8], cpu: u32) {
        let p = &self.program;
        let map = &self.map;
        let who = Inserter::on_cpu(cpu);
        let elt = match p.key_words() {
            0..=8 => map.insert_words_uncounted(&p.key::<8>(rec), who),
            9..=32 => map.insert_words_uncounted(&p.key::<32>(rec), who),
            _ => map.insert_words_uncounted(&p.key::<KEY_WORDS_MAX>(rec), who),
        };
        self.add_sums_of(rec, cpu, elt);
    }

    /// Adds the program's sums of `rec` to the entry found, if any, in
    /// CPU `cpu`'s copy.
    #[inline(always)]
    fn add_sums_of(&self, rec: &[u8], cpu: u32, elt: Option<u32>) {
        let p = &self.program;
        let Some(sums) = elt.and_then(|i| self.map.cpu_sums(i, cpu)) else {
            return;
        };
        sums.add(0, 1);
        for i in 1..p.n_sums() {
            sums.add(i, p.value(i, rec));
        }
    }

    /// The compiled program, if events take it.
    pub fn program(&self) -> Option<&Program> {
        (self.shape != Shape::None).then_some(&self.program)
    }

    /// The histogram with its events sent down the general path: also
    /// the kernel shell's histogram of a `:grow` trigger, which no event
    /// updates, so that its probe leaves the compiled path for the
    /// current generation's.
    pub fn interpreted(mut self) -> Self {
        self.hot.shape = Shape::None;
        self
    }

    fn update_with<const N: usize, const STATS: bool>(&self, rec: &[u8], ctx: &dyn TaskContext) {
        let mut key_buf = [0u8; N];
        let key = &mut key_buf[..self.data.key_size().min(N)];
        self.data.write_key(rec, ctx, key);
        self.account::<STATS>(key, rec, ctx, &[]);
    }

    /// Accounts one event record of a trigger with variable references
    /// or actions, as C's `event_hist_trigger()` does when `n_var_refs`
    /// is not 0: `refs[i]` is the histogram of slot `i` (the one
    /// [`HistData::ref_hists`]`[i]` names), and `sink` emits what the
    /// actions trace.
    ///
    /// Once the key is built, `resolve_var_refs(self = false)` looks each
    /// reference to another histogram up, in C's order, in that map with
    /// *this* trigger's key: a missing entry or an unset variable drops
    /// the event (references before it that consume have consumed, as in
    /// C); a reference with `read_once` (an operand of a binary
    /// expression) consumes the variable (`tracing_map_read_var_once()`),
    /// atomically here, the others read it.  Then the entry is found or
    /// inserted and updated, a reference's value being the one resolved.
    /// Then `resolve_var_refs(self = true)` reads the references to this
    /// trigger's own variables (an action's parameters) from its entry,
    /// and if they are all set the actions run.  A reference to a string
    /// or stack trace resolves to the address of its copy in the owner's
    /// entry.  Without references or actions,
    /// [`update_general`](Self::update_general).  Lock-free; no allocation.
    ///
    /// The referenced map reads as many key bytes as its own keys have:
    /// past this trigger's key they are 0 (C reads what its buffer holds).
    ///
    /// An action may emit a synthetic event whose triggers run inside this
    /// call, up to four deep (the shell's nesting limit): the key is built
    /// in a buffer no larger than the largest key read, most often a word.
    pub fn update_with_refs(
        &self,
        rec: &[u8],
        ctx: &dyn TaskContext,
        refs: &[&Histogram<'_>],
        sink: &dyn ActionSink,
    ) {
        let n = self.data.n_var_refs().min(VAR_REFS_MAX);
        if n == 0 && self.data.n_actions() == 0 {
            return self.update_general(rec, ctx);
        }
        let widest = refs
            .iter()
            .map(|h| h.data.key_size())
            .fold(self.data.key_size(), usize::max);
        match widest {
            0..=8 => self.update_refs_in::<8>(rec, ctx, refs, sink, n),
            9..=32 => self.update_refs_in::<32>(rec, ctx, refs, sink, n),
            _ => self.update_refs_in::<KEY_SIZE_MAX>(rec, ctx, refs, sink, n),
        }
    }

    /// [`update_with_refs`](Self::update_with_refs) with a key buffer of
    /// `N` bytes, at least the widest key read, and `n` references.
    #[inline(never)]
    fn update_refs_in<const N: usize>(
        &self,
        rec: &[u8],
        ctx: &dyn TaskContext,
        refs: &[&Histogram<'_>],
        sink: &dyn ActionSink,
        n: usize,
    ) {
        let mut key_buf = [0u8; N];
        let size = self.data.key_size().min(N);
        self.data.write_key(rec, ctx, &mut key_buf[..size]);
        let mut vals = [0u64; VAR_REFS_MAX];
        let mut own_refs = false;
        for (i, val) in vals.iter_mut().enumerate().take(n) {
            let Some(r) = self.data.var_ref(i) else {
                return;
            };
            if r.own {
                own_refs = true;
                continue;
            }
            let Some(h) = refs.get(r.slot) else {
                return;
            };
            let other = h.data.key_size().min(N);
            let Some(elt) = h.map.lookup(&key_buf[..other]) else {
                return;
            };
            let value = if r.read_once {
                elt.take_var(r.var_idx)
            } else if elt.var_is_set(r.var_idx) {
                Some(elt.read_var(r.var_idx))
            } else {
                None
            };
            match value.and_then(|v| h.ref_value(&elt, v, r.copy)) {
                Some(v) => *val = v,
                None => return,
            }
        }
        let (key, refs) = (&key_buf[..size], &vals[..n]);
        let elt = match self.has_stats {
            false => self.account::<false>(key, rec, ctx, refs),
            true => self.account::<true>(key, rec, ctx, refs),
        };
        let Some(elt) = elt else {
            return;
        };
        if own_refs {
            for (i, val) in vals.iter_mut().enumerate().take(n) {
                let Some(r) = self.data.var_ref(i).filter(|r| r.own) else {
                    continue;
                };
                if !elt.var_is_set(r.var_idx) {
                    return;
                }
                match self.ref_value(&elt, elt.read_var(r.var_idx), r.copy) {
                    Some(v) => *val = v,
                    None => return,
                }
            }
        }
        let vals = &vals[..n];
        for a in 0..self.data.n_actions() {
            // ontrack_action(): only a new maximum or a change acts.
            if let Some(t) = self.data.action_track(a) {
                let new = vals.get(t.var_ref).copied().unwrap_or(0);
                if !t.how.passes(elt.read_var(t.var_idx), new) {
                    continue;
                }
                elt.set_var(t.var_idx, new);
                match self.data.action_kind(a) {
                    Some(ActionKind::Save) => self.set_save_vars(&elt, rec, ctx, vals),
                    Some(ActionKind::Snapshot) => {
                        sink.snapshot(new, &key_buf[..size], &self.entry_comm(&elt))
                    }
                    _ => sink.trace(a, vals, self.data.action_var_ref_idx(a)),
                }
            } else {
                sink.trace(a, vals, self.data.action_var_ref_idx(a));
            }
        }
    }

    /// The command name `elt` saved when it was made, for `.execname`.
    pub(crate) fn entry_comm(&self, elt: &map::Elt<'_>) -> [u8; 16] {
        let mut comm = [0u8; 16];
        if self.needs_comm {
            for (chunk, word) in comm.chunks_exact_mut(8).zip(elt.private_words()) {
                chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes());
            }
        }
        comm
    }

    /// `save_track_data_vars()`: sets the save variables of `elt` from
    /// this record; a string is copied into the entry, after the copies
    /// of the variables every event sets.
    #[inline(never)]
    fn set_save_vars(
        &self,
        elt: &map::Elt<'a>,
        rec: &[u8],
        ctx: &dyn TaskContext,
        ref_vals: &[u64],
    ) {
        let words = elt.private_words();
        let comm = self.entry_comm(elt);
        let mut slot = self.event_copies;
        let mut copy = [0u8; vars::STR_VAR_LEN_MAX];
        for k in 0..self.data.n_save_vars() {
            let Some((_, i)) = self.data.save_var(k) else {
                break;
            };
            if self.data.var_copy(i).is_none() {
                elt.set_var(i, self.data.var_value_refs(i, rec, ctx, ref_vals));
                continue;
            }
            let string = || self.data.var_string(i, rec);
            vars::write_copy(self.data.var_copy(i), string, ctx, &comm, &mut copy);
            let at = comm_words(self.needs_comm) + slot * vars::STR_VAR_WORDS;
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

    /// The value a reference to a variable of this histogram resolves to,
    /// the variable holding `value` in `elt`: for a variable that keeps a
    /// copy (`copy`), the address of the copy, whose slot `value` is;
    /// `None` for a slot the entry does not have.
    fn ref_value(&self, elt: &map::Elt<'_>, value: u64, copy: bool) -> Option<u64> {
        if !copy {
            return Some(value);
        }
        let slot = usize::try_from(value).ok()?;
        let at = comm_words(self.needs_comm) + slot.checked_mul(vars::STR_VAR_WORDS)?;
        let words = elt.private_words().get(at..at + vars::STR_VAR_WORDS)?;
        words.first().map(|w| w.as_ptr() as u64)
    }

    /// `tracing_map_insert()` and `hist_trigger_elt_update()`: finds or
    /// inserts the entry of `key` and updates it, `ref_vals` holding the
    /// values resolved for the references; the entry, if there is room.
    /// `STATS` is `has_stats`: whether some sums are statistics.
    #[inline]
    fn account<const STATS: bool>(
        &self,
        key: &[u8],
        rec: &[u8],
        ctx: &dyn TaskContext,
        ref_vals: &[u64],
    ) -> Option<map::Elt<'a>> {
        let who = Inserter::on_cpu(ctx.cpu());
        let elt = if self.needs_comm {
            self.map.insert_uncounted(key, who, |elt| {
                let comm = saved_comm(ctx);
                for (word, chunk) in elt.private_words().iter().zip(comm.chunks_exact(8)) {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(chunk);
                    word.store(u64::from_ne_bytes(b), Ordering::Relaxed);
                }
            })
        } else {
            self.map.insert_uncounted(key, who, |_| {})
        }?;
        if STATS {
            self.update_stats(&elt, rec, ctx, ref_vals);
        } else {
            for i in 0..self.data.n_sums() {
                let n = self.data.sum_value_refs(i, rec, ctx, ref_vals);
                elt.update_sum_on(ctx.cpu(), i, n);
            }
        }
        if self.has_copies {
            self.set_vars_with_copies(&elt, rec, ctx, ref_vals);
        } else {
            for i in 0..self.data.n_event_vars() {
                elt.set_var(i, self.data.var_value_refs(i, rec, ctx, ref_vals));
            }
        }
        Some(elt)
    }

    /// The sums of `elt` for this record, some of them statistics
    /// ([`super::stats`]): apart, so that the other triggers' loop does
    /// not ask each sum what it is.
    #[inline]
    fn update_stats(
        &self,
        elt: &map::Elt<'a>,
        rec: &[u8],
        ctx: &dyn TaskContext,
        ref_vals: &[u64],
    ) {
        let cpu = ctx.cpu();
        for i in 0..self.data.n_sums() {
            let n = self.data.sum_value_refs(i, rec, ctx, ref_vals);
            let op = match self.ops.get(i) {
                Some(&op) => op,
                None => self.data.slot_op(i),
            };
            match op {
                SlotOp::Add => elt.update_sum_on(cpu, i, n),
                SlotOp::Max { xor } => elt.update_max_on(cpu, i, n ^ xor),
                SlotOp::Sketch => {
                    let j = match self.sketch_of.get(i) {
                        Some(&j) => Some(usize::from(j)),
                        None => self.data.sketch_index(i),
                    };
                    if let (Some(s), Some(j)) = (self.sketches(), j) {
                        s.record(elt.index(), j, n);
                    }
                }
            }
        }
    }

    /// Sets the variables of `elt` where some keep a copy in the entry:
    /// each such variable is given its slot's number.
    #[inline(never)]
    fn set_vars_with_copies(
        &self,
        elt: &map::Elt<'a>,
        rec: &[u8],
        ctx: &dyn TaskContext,
        ref_vals: &[u64],
    ) {
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
        for i in 0..self.data.n_event_vars() {
            if self.data.var_copy(i).is_none() {
                elt.set_var(i, self.data.var_value_refs(i, rec, ctx, ref_vals));
                continue;
            }
            let string = || self.data.var_string(i, rec);
            vars::write_copy(self.data.var_copy(i), string, ctx, &comm, &mut copy);
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
        if let Some(s) = self.sketches() {
            s.clear();
        }
    }

    /// The map's sort keys for this histogram.
    fn sort_keys(&self) -> ([map::SortKey; map::SORT_KEYS_MAX], usize) {
        let mut keys = [map::SortKey::ascending(map::SortField::Sum(0)); map::SORT_KEYS_MAX];
        let mut n = 0;
        for (slot, key) in keys.iter_mut().zip(self.data.sort_keys()) {
            let field = match key.field {
                hist_data::SortField::Sum(i) => match self.data.val_stat(i) {
                    None => map::SortField::Sum(i),
                    Some(stat) => {
                        let signed = self.data.val_signed(i);
                        let (xor, per_hit) = match stat.slot_op(signed) {
                            SlotOp::Max { xor } => (xor, false),
                            SlotOp::Add => (0, true),
                            // The build takes no sort on it; its slot is 0.
                            SlotOp::Sketch => (0, false),
                        };
                        map::SortField::Stat {
                            sum: i,
                            xor,
                            per_hit,
                            signed,
                        }
                    }
                },
                hist_data::SortField::Quantile { val, rank } => map::SortField::External {
                    value: val,
                    which: rank,
                    signed: self.data.val_signed(val),
                },
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

    /// Fills `order` with the indices of the entries, sorted as C sorts
    /// them for the `hist` file, and returns how many there are. `order`
    /// must hold at least `max_elts` indices.
    pub fn sort_entries(&self, order: &mut [u32]) -> usize {
        let (keys, n_keys) = self.sort_keys();
        // `sort=lat.p99`: the quantile of each entry's sketch, computed
        // at each comparison (a few hundred counters read; no memory to
        // keep them in).
        let quantile = |val: usize, rank: usize, idx: u32| {
            let q = self.data.sketch_index(val).and_then(|j| {
                let sketch = self.sketches()?.sketch(idx, j)?;
                Some(sketch.quantile(*PERCENTILES.get(rank)?))
            });
            match q {
                Some(Quantile::Value(v)) => (v, v),
                Some(Quantile::Within { low, high }) => (low, high),
                Some(Quantile::Empty) | None => (0, 0),
            }
        };
        self.map.sort_entries_by(&keys[..n_keys], &quantile, order)
    }

    /// Each sum's total and maximum over `entries`, which `.percent` and
    /// `.graph` scale by (the hitcount's total is the Totals' hits).
    pub fn column_stats(&self, entries: &[u32]) -> [ValStat; map::SUMS_MAX] {
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
        stats
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
        self.print_with_snapshot(out, resolver, order, None)
    }

    /// [`print`](Self::print), with C's details of the last snapshot a
    /// `snapshot()` action took (`track_data_snapshot_print()`) before
    /// the Totals.
    pub fn print_with_snapshot(
        &self,
        out: &mut dyn Write,
        resolver: &dyn Resolver,
        order: &mut [u32],
        snapshot: Option<&Snapshot<'_>>,
    ) -> fmt::Result {
        let n = self.sort_entries(order);
        let entries = &order[..n];
        let stats = self.column_stats(entries);

        let mut key_buf = [0u8; KEY_SIZE_MAX];
        for (n_written, &idx) in entries.iter().enumerate() {
            if n_written % output::PAUSE_EVERY == output::PAUSE_EVERY - 1 {
                resolver.pause();
            }
            let Some(elt) = self.map.elt(idx) else {
                continue;
            };
            let key_size = elt.copy_key(&mut key_buf);
            let key = &key_buf[..key_size.min(KEY_SIZE_MAX)];
            self.write_key(out, key, &self.entry_comm(&elt), resolver)?;
            for (i, name, display) in self.data.printed_vals() {
                // C writes an extra space before every value but hitcount.
                if i != 0 {
                    out.write_char(' ')?;
                }
                if let Some(j) = self.data.sketch_index(i) {
                    let sketch = self.sketches().and_then(|s| s.sketch(idx, j));
                    let p = sketch.map(|s| s.percentiles());
                    self.write_percentiles(out, i, display, p.map(|p| p.p))?;
                    continue;
                }
                let slot = match self.data.slot_op(i) {
                    SlotOp::Add | SlotOp::Sketch => elt.read_sum(i),
                    SlotOp::Max { .. } => elt.read_max(i),
                };
                let val = self.data.val_value(i, slot, || elt.read_sum(0));
                let stat = stats.get(i).copied().unwrap_or_default();
                output::write_val(out, name, display, val, stat)?;
            }
            self.print_actions(out, &elt)?;
            out.write_char('\n')?;
        }
        if let (Some(snap), Some((how, var))) = (snapshot, self.data.snapshot_action()) {
            out.write_str("\nSnapshot taken (see tracing/snapshot).  Details:\n")?;
            let name = how.handler_name();
            write!(
                out,
                "\ttriggering value {{ {name}({var}) }}: {:10}",
                snap.val
            )?;
            out.write_str("\ttriggered by event with key: ")?;
            let mut key_buf = [0u8; KEY_SIZE_MAX];
            let size = self.data.key_size().min(KEY_SIZE_MAX).min(snap.key.len());
            key_buf[..size].copy_from_slice(&snap.key[..size]);
            self.write_key(
                out,
                &key_buf[..self.data.key_size().min(KEY_SIZE_MAX)],
                &snap.comm,
                resolver,
            )?;
            out.write_char('\n')?;
        }
        // Every hit adds 1 to its entry's hitcount, and nothing else does:
        // their total is C's `map->hits`, which the event path does not
        // count apart (see `TracingMap::insert_uncounted()`).
        output::write_totals(out, stats[0].total, n as u32, self.map.drops())?;
        self.write_percentiles_summary(out, entries)
    }

    /// The columns of `.quantiles` value `i` (its `display`), with the
    /// quantiles `p` (none: 0): ` lat.p50: %10llu`, each but the first
    /// after one more space, as C puts before each value.
    fn write_percentiles(
        &self,
        out: &mut dyn Write,
        i: usize,
        display: output::ValDisplay,
        p: Option<[Quantile; 4]>,
    ) -> fmt::Result {
        let p = p.unwrap_or([Quantile::Empty; 4]);
        for (k, (q, label)) in p.iter().zip(PERCENTILE_NAMES).enumerate() {
            if k != 0 {
                out.write_char(' ')?;
            }
            let stem = Stem(self.data, i);
            output::write_quantile(out, stem, label, display, *q)?;
        }
        Ok(())
    }

    /// rhist's line after the Totals of a trigger with `.quantiles`
    /// values: each one's quantiles over all of `entries`, then the
    /// pool's pages used and total, and the values it had no page for.
    fn write_percentiles_summary(&self, out: &mut dyn Write, entries: &[u32]) -> fmt::Result {
        let Some(s) = self.sketches() else {
            return Ok(());
        };
        out.write_str("    Percentiles:")?;
        for (i, _, display) in self.data.printed_vals() {
            let Some(j) = self.data.sketch_index(i) else {
                continue;
            };
            let mut p = [Quantile::Empty; 4];
            let union = s.union(j, entries.iter().copied());
            sketch::quantiles(&union, &PERCENTILES, &mut p);
            out.write_char(' ')?;
            self.write_percentiles(out, i, display, Some(p))?;
        }
        let pool = s.pool().stats();
        writeln!(
            out,
            "  pages: {}/{}  unplaced: {}",
            pool.pages_used, pool.pages, pool.unplaced
        )
    }

    /// C's `map->hits`, the hits since the last clear: every hit adds 1
    /// to its entry's hitcount, and nothing else does.
    pub fn hits(&self) -> u64 {
        self.map
            .iter()
            .fold(0, |n, elt| n.wrapping_add(elt.read_sum(0)))
    }

    /// `hist_trigger_print_key()` of `key`, whose entry saved `comm`.
    fn write_key(
        &self,
        out: &mut dyn Write,
        key: &[u8],
        comm: &[u8; 16],
        resolver: &dyn Resolver,
    ) -> fmt::Result {
        output::write_key_parts(out, self.data.key_parts(key), comm, resolver)
    }

    /// `print_actions()`: what each `onmax()` or `onchange()` action but
    /// `snapshot()` tracked in `elt`, and the save variables.
    fn print_actions(&self, out: &mut dyn Write, elt: &map::Elt<'_>) -> fmt::Result {
        for a in 0..self.data.n_actions() {
            let Some(t) = self.data.action_track(a) else {
                continue;
            };
            if self.data.action_kind(a) == Some(ActionKind::Snapshot) {
                continue;
            }
            let label = match t.how {
                Tracking::Max => "max",
                Tracking::Change => "changed",
            };
            write!(out, "\n\t{label}: {:10}", elt.read_var(t.var_idx))?;
            for k in 0..self.data.n_save_vars() {
                let Some((name, i)) = self.data.save_var(k) else {
                    break;
                };
                let val = elt.read_var(i);
                let copy = self.data.var_copy(i);
                if !matches!(copy, Some(vars::VarCopy::String | vars::VarCopy::Comm)) {
                    write!(out, "  {name}: {val:10}")?;
                    continue;
                }
                // C prints the copy's address: NULL until saved.
                let mut text = [0u8; vars::STR_VAR_LEN_MAX];
                let s: &[u8] = if elt.var_is_set(i) {
                    self.read_copy(elt, val, &mut text)
                } else {
                    b"(null)"
                };
                write!(out, "  {name}: ")?;
                output::write_padded(out, s, 32)?;
            }
        }
        Ok(())
    }

    /// The string in copy slot `slot` of `elt`, read into `buf`.
    pub(crate) fn read_copy<'b>(
        &self,
        elt: &map::Elt<'_>,
        slot: u64,
        buf: &'b mut [u8],
    ) -> &'b [u8] {
        let at = comm_words(self.needs_comm)
            + usize::try_from(slot)
                .unwrap_or(usize::MAX)
                .saturating_mul(vars::STR_VAR_WORDS);
        let words = elt.private_words().get(at..).unwrap_or(&[]);
        for (chunk, word) in buf
            .chunks_exact_mut(8)
            .zip(words.iter().take(vars::STR_VAR_WORDS))
        {
            chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes());
        }
        let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        &buf[..len]
    }
}

#[cfg(test)]
mod tests {
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
                let full = p.key::<KEY_WORDS_MAX>(&rec);
                let bytes: Vec<u8> = full[..words].iter().flat_map(|w| w.to_ne_bytes()).collect();
                let mut key = CompactKey::EMPTY;
                let compacted = p.compact_key(&rec, &mut key);
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
                        let slots: Vec<AtomicU64> =
                            other.iter().map(|&w| AtomicU64::new(w)).collect();
                        assert_eq!((&one).matches(&slots), *other == full[..words], "{text}");
                    }
                    let stored: Vec<AtomicU64> = (0..words).map(|_| AtomicU64::new(7)).collect();
                    (&one).store(&stored);
                    let stored: Vec<u64> =
                        stored.iter().map(|w| w.load(Ordering::Relaxed)).collect();
                    assert_eq!(stored, full[..words], "{text}");
                    strings += 1;
                }
                // It matches exactly the stored keys equal to it, whatever
                // their hash.
                for other in &seen {
                    let slots: Vec<AtomicU64> = other.iter().map(|&w| AtomicU64::new(w)).collect();
                    assert_eq!((&key).matches(&slots), *other == full[..words], "{text}");
                }
                let elt = map.elt(map.insert_key_uncounted(&key, Inserter::ANYWHERE).unwrap());
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
}

/// The event path of actions: references resolved, then the values of
/// each synthetic event's fields handed to the sink.
#[cfg(all(test, not(loom)))]
mod action_tests {
    use super::super::event::{EventDesc, EventField, FieldStorage};
    use super::super::hist_data::{BuildOptions, SynthField, SynthLookup};
    use super::super::trigger;
    use super::*;
    use crate::testing::{build_with_actions, comm, map_storage, sample_event, Task, VarsOf, TASK};
    use core::cell::RefCell;
    use core::sync::atomic::AtomicU64;
    use std::format;
    use std::string::String;
    use std::vec::Vec;

    static FIELDS: [EventField<'static>; 3] = [
        EventField::new("a", "u64", 8, 8, false, FieldStorage::Other),
        EventField::new("bb", "u32", 16, 4, false, FieldStorage::Other),
        EventField::new("ss", "char[8]", 20, 8, false, FieldStorage::StaticString),
    ];

    const EVENT: EventDesc<'static> = sample_event(&FIELDS);

    /// `sh`, pid 7, at `ts`.
    fn at(ts: u64) -> Task {
        Task {
            pid: 7,
            ts,
            comm: comm(b"sh"),
            ..TASK
        }
    }

    fn record(a: u64, b: u32, s: &[u8]) -> [u8; 28] {
        let mut r = [0u8; 28];
        r[8..16].copy_from_slice(&a.to_ne_bytes());
        r[16..20].copy_from_slice(&b.to_ne_bytes());
        r[20..20 + s.len()].copy_from_slice(s);
        r
    }

    /// `lat u64 d; u32 bb; char ss[8]; char nm[8]`.
    struct Lat;

    impl SynthLookup for Lat {
        fn n_fields(&self, name: &str) -> Option<usize> {
            (name == "lat").then_some(4)
        }
        fn field(&self, _: &str, pos: usize) -> Option<SynthField<'_>> {
            let num = |type_name, size| SynthField {
                type_name,
                size,
                signed: false,
                string: false,
                dynamic: false,
                stack: false,
            };
            let string = SynthField {
                type_name: "char[8]",
                size: 8,
                string: true,
                ..num("", 0)
            };
            [num("u64", 8), num("u32", 4), string, string]
                .get(pos)
                .copied()
        }
    }

    /// What the sink got: each event's action and field values.
    #[derive(Default)]
    struct Sink(RefCell<Vec<(usize, Vec<u64>)>>);

    impl ActionSink for Sink {
        fn trace(&self, action: usize, vals: &[u64], idx: &[u32]) {
            let fields = idx.iter().map(|&i| vals[i as usize]).collect();
            self.0.borrow_mut().push((action, fields));
        }
        fn snapshot(&self, _: u64, _: &[u8], _: &[u8; 16]) {}
    }

    /// The string whose copy starts at `addr`, a word of one of `maps`.
    fn string_at(maps: &[&[AtomicU64]], addr: u64) -> Vec<u8> {
        let (map, at) = maps
            .iter()
            .find_map(|m| {
                let at = m.iter().position(|w| w.as_ptr() as u64 == addr)?;
                Some((m, at))
            })
            .expect("the address of a word of an entry");
        let bytes: Vec<u8> = map[at..at + vars::STR_VAR_WORDS]
            .iter()
            .flat_map(|w| w.load(Ordering::Relaxed).to_ne_bytes())
            .collect();
        bytes.into_iter().take_while(|&c| c != 0).collect()
    }

    fn storage(data: &HistData<'_>) -> Vec<AtomicU64> {
        map_storage(&map_params(data, 1))
    }

    #[test]
    fn onmatch_traces_resolved_values() {
        let spec = trigger::parse("keys=a:t0=common_timestamp,nm=ss").unwrap();
        let d1 = HistData::build(&spec, &EVENT).unwrap();
        let s1 = storage(&d1);
        let h1 = Histogram::new(&d1, TracingMap::new(map_params(&d1, 1), &s1).unwrap()).unwrap();

        let text = "keys=a:d=common_timestamp-$t0:\
                    onmatch(rhist_test.rhist_sample).lat($d,bb,ss,$nm)";
        let spec = trigger::parse(text).unwrap();
        let owner = VarsOf(&d1);
        let exists = |_: &str, _: &str| true;
        let options = BuildOptions {
            vars: Some(&owner),
            synths: Some(&Lat),
            event_exists: Some(&exists),
            ..Default::default()
        };
        let mut d2 = HistData::empty(&spec);
        HistData::build_into_with(&mut d2, &spec, &EVENT, options).unwrap();
        d2.create_actions(&EVENT, options).unwrap();
        let s2 = storage(&d2);
        let h2 = Histogram::new(&d2, TracingMap::new(map_params(&d2, 1), &s2).unwrap()).unwrap();

        let sink = Sink::default();
        // No t0 for key 1 yet: nothing.
        h2.update_with_refs(&record(1, 5, b"x"), &at(100), &[&h1], &sink);
        assert!(sink.0.borrow().is_empty());
        h1.update(&record(1, 0, b"waker"), &at(1000));
        h2.update_with_refs(&record(1, 5, b"wakee"), &at(1250), &[&h1], &sink);
        // t0 was consumed: the next one is dropped.
        h2.update_with_refs(&record(1, 6, b"again"), &at(1300), &[&h1], &sink);
        let got = sink.0.borrow();
        assert_eq!(got.len(), 1);
        let (action, fields) = &got[0];
        assert_eq!((*action, fields[..2].to_vec()), (0, std::vec![250, 5]));
        let maps = [&s1[..], &s2[..]];
        assert_eq!(string_at(&maps, fields[2]), b"wakee");
        assert_eq!(string_at(&maps, fields[3]), b"waker");
    }

    /// What the snapshot sink got: each snapshot's value and key.
    #[derive(Default)]
    struct Snaps(RefCell<Vec<(u64, Vec<u8>)>>);

    impl ActionSink for Snaps {
        fn trace(&self, _: usize, _: &[u64], _: &[u32]) {}
        fn snapshot(&self, val: u64, key: &[u8], _: &[u8; 16]) {
            self.0.borrow_mut().push((val, key.to_vec()));
        }
    }

    /// Builds `text` on EVENT with its actions, runs `records` through it
    /// and gives the printed entries (without Totals).
    fn run_actions(text: &str, records: &[(u64, u32, &[u8])], sink: &dyn ActionSink) -> String {
        let data = build_with_actions(text, &EVENT);
        let st = storage(&data);
        let h = Histogram::new(&data, TracingMap::new(map_params(&data, 1), &st).unwrap()).unwrap();
        for &(a, b, s) in records {
            h.update_with_refs(&record(a, b, s), &at(0), &[], sink);
        }
        let mut order = std::vec![0u32; h.map().max_elts()];
        let mut out = String::new();
        h.print(&mut out, &output::NoSymbols, &mut order).unwrap();
        String::from(&out[..out.find("\nTotals:").unwrap()])
    }

    /// onmax().save(): the maximum and the fields of the event that set
    /// it, printed after the values as C prints them; a string never
    /// saved is C's NULL.
    #[test]
    fn onmax_saves_the_fields_of_the_maximum() {
        let recs: [(u64, u32, &[u8]); 4] = [
            (5, 1, b"five"),
            (3, 1, b"three"),
            (9, 1, b"nine"),
            (0, 2, b"zero"),
        ];
        let out = run_actions(
            "keys=bb:v=a:onmax($v).save(ss,bb)",
            &recs,
            &Snaps::default(),
        );
        let pad = |s: &str| format!("{s:<32}");
        assert_eq!(
            out,
            format!(
                "{{ bb:          2 }} hitcount:          1\n\tmax:          0  ss: {}  bb:          0\n\
                 {{ bb:          1 }} hitcount:          3\n\tmax:          9  ss: {}  bb:          1\n",
                pad("(null)"),
                pad("nine")
            )
        );
    }

    /// onchange(): every change acts, the same value does not; a
    /// snapshot() action hands each change to the sink with its key.
    #[test]
    fn onchange_acts_on_changes() {
        let recs: [(u64, u32, &[u8]); 5] = [
            (4, 1, b"a"),
            (4, 1, b"b"),
            (2, 1, b"c"),
            (0, 1, b"d"),
            (7, 3, b"e"),
        ];
        let snaps = Snaps::default();
        let text = "keys=bb:v=a:onchange($v).save(ss):onchange($v).snapshot()";
        let out = run_actions(text, &recs, &snaps);
        assert!(
            out.contains("hitcount:          4\n\tchanged:          0  ss: d "),
            "{out}"
        );
        assert!(
            out.contains("hitcount:          1\n\tchanged:          7  ss: e "),
            "{out}"
        );
        // The snapshot action prints nothing per entry.
        assert_eq!(out.matches("changed:").count(), 2, "{out}");
        let got: Vec<u64> = snaps.0.borrow().iter().map(|s| s.0).collect();
        assert_eq!(got, [4, 2, 0, 7]);
        assert_eq!(snaps.0.borrow()[3].1[..4], 3u32.to_ne_bytes());
    }

    /// The details of the last snapshot, before the Totals.
    #[test]
    fn snapshot_details_are_printed() {
        let data = build_with_actions("keys=bb:v=a:onmax($v).snapshot()", &EVENT);
        let st = storage(&data);
        let h = Histogram::new(&data, TracingMap::new(map_params(&data, 1), &st).unwrap()).unwrap();
        let mut order = std::vec![0u32; h.map().max_elts()];
        let mut out = String::new();
        let key = 12u64.to_ne_bytes();
        let snap = Snapshot {
            val: 42,
            key: &key,
            comm: [0; 16],
        };
        h.print_with_snapshot(&mut out, &output::NoSymbols, &mut order, Some(&snap))
            .unwrap();
        assert_eq!(
            out,
            "\nSnapshot taken (see tracing/snapshot).  Details:\n\
             \ttriggering value { onmax($v) }:         42\t\
             triggered by event with key: { bb:         12 }\n\
             \nTotals:\n    Hits: 0\n    Entries: 0\n    Dropped: 0\n"
        );
        // Without a snapshot action, nothing.
        let mut plain = String::new();
        let spec = trigger::parse("keys=bb").unwrap();
        let d = HistData::build(&spec, &EVENT).unwrap();
        let st = storage(&d);
        let h = Histogram::new(&d, TracingMap::new(map_params(&d, 1), &st).unwrap()).unwrap();
        h.print_with_snapshot(&mut plain, &output::NoSymbols, &mut order, Some(&snap))
            .unwrap();
        assert!(!plain.contains("Snapshot"));
    }
}
