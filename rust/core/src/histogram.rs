// SPDX-License-Identifier: GPL-2.0

//! A histogram: the resolved trigger ([`HistData`]) and its map
//! ([`TracingMap`]) together. The event path is [`Histogram::update`]; the
//! `hist` file's text is [`Histogram::print`]. The kernel shell owns the
//! memory both borrow.

use core::fmt::{self, Write};
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicU64, Ordering};

use super::event::EventContext;
use super::grammar::ActionKind;
use super::hist_data::{self, ActionSink, HistData, Tracking};
use super::map::{self, First, Inserter, MapError, MapKey, MapParams, TracingMap};
use super::output::{self, Resolver, ValStat};
use super::program::{Applied, CompactKey, Here, Program, StrKey};
use super::sketch::{self, MapSketches, Quantile, SketchPool, PERCENTILES, PERCENTILE_NAMES};
use super::stats::SlotOp;
use super::var_ref::VAR_REFS_MAX;
use super::vars;

mod print;
mod refs;
mod shapes;
mod update;

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
        found().unwrap_or(LastSketch::NONE)
    }

    /// No sketch: the event path records none.
    const NONE: LastSketch = LastSketch {
        stride: 0,
        first: 0,
        from: u32::MAX,
    };
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
    /// `common_comm` alone: the task's name
    /// ([`Program::comm_key`]).
    Comm,
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
            (false, _, _) if p.comm_only() && cfg!(target_endian = "little") => Shape::Comm,
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

impl<'a> Histogram<'a> {
    /// Puts `data` and `map` together; `map` must have been built with
    /// [`map_params`] of `data` (for any number of CPUs), or, when `data`
    /// has `:grow`, [`map_params_sized`] of any size.
    #[cfg(not(MODULE))]
    pub fn new(data: &'a HistData<'a>, map: TracingMap<'a>) -> Result<Self, MapError> {
        Self::with_sketches(data, map, None)
    }

    /// [`new`](Self::new) of a histogram that may have `.quantiles`
    /// values: `pool` must then be a pool made with
    /// [`HistData::sketch_params`] of `data`, and cleared and freed with
    /// the map; it must be `None` otherwise.
    #[cfg(not(MODULE))]
    pub fn with_sketches(
        data: &'a HistData<'a>,
        map: TracingMap<'a>,
        pool: Option<SketchPool<'a>>,
    ) -> Result<Self, MapError> {
        let sketches = Self::checked_sketches(data, &map, pool)?;
        let mut hist = Self::uncompiled(data, map, sketches);
        hist.compile();
        Ok(hist)
    }

    /// [`with_sketches`](Self::with_sketches) written into `slot`, for
    /// callers that keep the histogram on the heap and have little stack
    /// (the kernel builds some triggers inside the building of another):
    /// the histogram and its program are built where they are to live,
    /// not on the stack first (`tools/testing/lint/frames.py` checks).
    pub fn with_sketches_in<'s>(
        slot: &'s mut MaybeUninit<Self>,
        data: &'a HistData<'a>,
        map: TracingMap<'a>,
        pool: Option<SketchPool<'a>>,
    ) -> Result<&'s mut Self, MapError> {
        let hist = Self::uncompiled_in(slot, data, map, pool)?;
        hist.compile();
        Ok(hist)
    }

    /// The histogram without its program, written into `slot`. Out of
    /// line: the compiler may build the value in its frame first, which
    /// then is not under [`compile`](Self::compile)'s.
    #[inline(never)]
    fn uncompiled_in<'s>(
        slot: &'s mut MaybeUninit<Self>,
        data: &'a HistData<'a>,
        map: TracingMap<'a>,
        pool: Option<SketchPool<'a>>,
    ) -> Result<&'s mut Self, MapError> {
        let sketches = Self::checked_sketches(data, &map, pool)?;
        Ok(slot.write(Self::uncompiled(data, map, sketches)))
    }

    /// The sketches of `pool`, once `map` and `pool` are checked to be
    /// what [`with_sketches`](Self::with_sketches) asks of them.
    fn checked_sketches(
        data: &HistData<'_>,
        map: &TracingMap<'_>,
        pool: Option<SketchPool<'a>>,
    ) -> Result<MapSketches<'a>, MapError> {
        let mut shape = map.params().with_cpus(1);
        if data.spec().grow() {
            shape.bits = data.map_bits();
        }
        if shape != map_params(data, 1) || pool.map(|p| p.params()) != data.sketch_params() {
            return Err(MapError::StorageTooSmall);
        }
        match pool {
            Some(pool) => {
                MapSketches::new(pool, data.n_percentiles()).map_err(|_| MapError::StorageTooSmall)
            }
            None => Ok(MapSketches::empty()),
        }
    }

    /// The histogram without its program: events take the general path
    /// until [`compile`](Self::compile) gives it one.
    #[inline(always)]
    fn uncompiled(data: &'a HistData<'a>, map: TracingMap<'a>, sketches: MapSketches<'a>) -> Self {
        let mut ops = [SlotOp::Add; SKETCHED_MAX];
        for (i, op) in ops.iter_mut().enumerate().take(data.n_sums()) {
            *op = data.slot_op(i);
        }
        let mut sketch_of = [0u8; SKETCHED_MAX];
        for (i, j) in sketch_of.iter_mut().enumerate() {
            *j = data.sketch_index(i).unwrap_or(0) as u8;
        }
        Histogram {
            hot: Hot {
                data,
                map,
                needs_comm: data.needs_comm(),
                has_copies: data.n_event_var_copies() > 0,
                event_copies: data.n_event_var_copies(),
                has_stats: data.has_stats(),
                shape: Shape::None,
                program: Program::NONE,
            },
            sums_index: map::SumsIndex::NONE,
            sketches,
            ops,
            sketch_of,
            last_sketch: LastSketch::NONE,
        }
    }

    /// Compiles the event path into the histogram, if its trigger has
    /// one ([`HistData::program`]), and the constants it runs with. Out
    /// of line: its temporaries stay out of its callers' frames.
    #[inline(never)]
    fn compile(&mut self) {
        let compiled = self.hot.data.program_in(&mut self.hot.program);
        let program = compiled.then_some(&self.hot.program);
        // The string shapes add their sums inline (`add_sums_of()`),
        // without statistics: theirs take the general path. So do
        // sketches of a map whose element is not found from its sums
        // (never, for the few sums a program has).
        let sums_index = self.hot.map.sums_index();
        let has_sketches = self.sketches.n_values() > 0;
        let shape = |p: &Program| match Shape::of(p) {
            Shape::String | Shape::Compact if p.has_stats() => Shape::None,
            _ if p.has_stats() && has_sketches && sums_index.is_none() => Shape::None,
            shape => shape,
        };
        let shape = program.map_or(Shape::None, shape);
        let last_sketch = LastSketch::new(self.hot.data, program, &self.sketches, sums_index);
        self.hot.shape = shape;
        self.last_sketch = last_sketch;
        self.sums_index = sums_index.unwrap_or(map::SumsIndex::NONE);
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

    /// Whether events take a compiled program.
    pub fn compiled(&self) -> bool {
        self.shape != Shape::None
    }

    /// The compiled program, if events take it.
    #[cfg(not(MODULE))]
    pub fn program(&self) -> Option<&Program> {
        (self.shape != Shape::None).then_some(&self.program)
    }

    /// The histogram with its events sent down the general path: also
    /// the kernel shell's histogram of a `:grow` trigger, which no event
    /// updates, so that its probe leaves the compiled path for the
    /// current generation's.
    #[cfg(not(MODULE))]
    pub fn interpreted(mut self) -> Self {
        self.interpret();
        self
    }

    /// [`interpreted`](Self::interpreted), for a histogram built in place.
    pub fn interpret(&mut self) {
        self.hot.shape = Shape::None;
    }

    /// Empties the histogram (hist's `clear`). The caller makes sure no
    /// event updates it meanwhile (the trigger is paused).
    pub fn clear(&self) {
        self.map.clear();
        if let Some(s) = self.sketches() {
            s.clear();
        }
    }

    /// C's `map->hits`, the hits since the last clear: every hit adds 1
    /// to its entry's hitcount, and nothing else does.
    pub fn hits(&self) -> u64 {
        self.map
            .iter()
            .fold(0, |n, elt| n.wrapping_add(elt.read_sum(0)))
    }
}

#[cfg(test)]
mod tests;

#[cfg(all(test, not(loom)))]
mod action_tests;
