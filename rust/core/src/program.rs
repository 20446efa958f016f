// SPDX-License-Identifier: GPL-2.0

//! The compiled trigger program: the event path of the common histogram
//! shapes, flattened at attach into a few typed loads.
//!
//! [`super::histogram::Histogram::update`] runs a [`Program`] when the
//! trigger has one: keys that are numbers of the record (or their
//! `.log2` or `.buckets`), strings of the record or `common_comm` (the
//! task's name, read through [`Here`]), sums that are
//! hitcount or numbers of the record, and nothing else to do per event
//! (no variables, references, actions or saved comm). The key is built
//! as words (C's key slots are whole words), strings copied a word at a
//! time, and hashed and compared as words; no expression tree is walked.
//! Every other trigger takes the general path, which
//! [`super::hist_data::HistData`] interprets; both give the same key and
//! sums for every record (see the tests).
//!
//! Values with a statistic ([`super::stats`]) compile too: each value's
//! slot operation ([`SlotOp`]) is part of the program. The quick loop
//! of the plain sums ([`Program::add_values_fast`]) takes a value with a
//! `.min`, `.max` or `.quantiles` as one whose load is not quick, so that
//! it stops there and leaves it, and the values after it, to the
//! histogram's code out of line: [`Program::last_stat`] for the commonest
//! case (one statistic of a number, last), else [`Program::add_values`],
//! which applies each value's operation. The programs without
//! statistics run the quick loop they ran before, not one instruction
//! more.

use core::num::NonZeroU64;

use super::grammar::{TRACING_MAP_KEYS_MAX, TRACING_MAP_VALS_MAX};
use core::sync::atomic::{AtomicU64, Ordering};

use super::map::{hash_finish, hash_word, raise, MapKey};
use super::record::{rec_num, rec_u32};
use super::stats::SlotOp;

mod keys;
mod values;

/// What a program reads of where the event runs, beside its record:
/// the CPU, whose copy of the sums the event adds to (see
/// [`MapParams::per_cpu`](super::map::MapParams::per_cpu)), and the
/// current task's name, for a `common_comm` key. In the kernel a type
/// of no size whose reads are a few instructions each, no call, no lock.
pub trait Here: Copy {
    /// The CPU the event runs on.
    fn cpu(self) -> u32;
    /// Word `i` (0 or 1) of the current task's name: its 16 bytes
    /// (`current->comm`, `TASK_COMM_LEN`), read as native-endian words.
    /// The name may change meanwhile; the bytes up to a NUL are taken.
    fn comm_word(self, i: usize) -> u64;
}

/// A [`Here`] of given values, for the host's tests and benches.
#[cfg(not(MODULE))]
#[derive(Clone, Copy, Debug)]
pub struct At {
    /// The CPU.
    pub cpu: u32,
    /// The current task's name.
    pub comm: [u8; 16],
}

#[cfg(not(MODULE))]
impl Here for At {
    #[inline(always)]
    fn cpu(self) -> u32 {
        self.cpu
    }

    #[inline(always)]
    fn comm_word(self, i: usize) -> u64 {
        comm_word_of(&self.comm, i)
    }
}

/// Word `i` of a task name's 16 bytes (0 past them).
#[cfg(not(MODULE))]
#[inline(always)]
pub fn comm_word_of(comm: &[u8; 16], i: usize) -> u64 {
    let at = i.wrapping_mul(8);
    comm.get(at..at.wrapping_add(8))
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_ne_bytes)
}

/// The 16 bytes of a task name, from [`Here::comm_word`].
#[inline]
fn comm_bytes(here: impl Here) -> [u8; 16] {
    let mut comm = [0u8; 16];
    for (i, b) in comm.chunks_exact_mut(8).enumerate() {
        b.copy_from_slice(&here.comm_word(i).to_ne_bytes());
    }
    comm
}

/// The size of a `common_comm` key's slot (C's `TASK_COMM_LEN`): it
/// keeps 15 bytes, and a NUL.
pub const COMM_SLOT: usize = 16;

/// A number of the record: C's `hist_field_{s,u}{8,16,32,64}()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Num {
    /// Offset in the record.
    pub at: u32,
    /// 1, 2, 4 or 8 bytes.
    pub size: u8,
    /// Sign-extended to 64 bits.
    pub signed: bool,
}

impl Num {
    /// Whether [`read`](Self::read) can read it: a size of 1, 2, 4 or 8.
    fn readable(self) -> bool {
        matches!(self.size, 1 | 2 | 4 | 8)
    }

    /// The number in `rec` (0 unless all of it is there).
    #[inline(always)]
    fn read(self, rec: &[u8]) -> u64 {
        rec_num(rec, self.at, self.size, self.signed)
    }
}

/// What one key or sum of a program loads from the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    /// Hitcount: 1.
    One,
    /// A number.
    Num(Num),
    /// `.log2`: `order_base_2()` of a number.
    Log2(Num),
    /// `.buckets=N`: a number rounded down to a multiple of N.
    Bucket(Num, u64),
}

impl Load {
    /// The number it reads, if any.
    fn num(self) -> Option<Num> {
        match self {
            Load::One => None,
            Load::Num(n) | Load::Log2(n) | Load::Bucket(n, _) => Some(n),
        }
    }

    #[inline(always)]
    fn eval(self, rec: &[u8]) -> u64 {
        match self {
            Load::One => 1,
            Load::Num(n) => n.read(rec),
            Load::Log2(n) => order_base_2(n.read(rec)),
            Load::Bucket(n, b) => match NonZeroU64::new(b) {
                Some(b) => (n.read(rec) / b).wrapping_mul(b.get()),
                None => n.read(rec),
            },
        }
    }
}

/// What [`Program::last_stat`] did with the last value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// Raised its slot.
    Done,
    /// Nothing: it is this `.quantiles` value, for its sketch.
    Sketch(u64),
    /// Nothing: it is not such a value, or its number is not in the
    /// record.
    NotQuick,
}

/// `order_base_2()`: 0 and 1 give 0.
pub const fn order_base_2(n: u64) -> u64 {
    if n > 1 {
        (u64::BITS - (n - 1).leading_zeros()) as u64
    } else {
        0
    }
}

/// A [`Load`] as a program runs it. A number is one read of the
/// record's word at its offset ([`NumOp`]), without a branch on its
/// type: an 8-byte one is that word (`whole`), a shorter one that word
/// shifted and masked to its size and sign (`value`). What follows, if
/// anything, is `then`. Tests of fields rather than a `match` on one
/// enum, which compiled to a jump table: a plain 8-byte number, the
/// commonest key, is a load and one test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Op {
    num: NumOp,
    /// Whether the number is its whole word.
    whole: bool,
    /// Whether the number is the value (`then` is [`Then::Value`]).
    value: bool,
    then: Then,
    /// The `N` of [`Then::Bucket`] (1 otherwise).
    bucket: NonZeroU64,
    /// The load, for [`eval_slow`](Op::eval_slow).
    load: Load,
}

/// What an [`Op`] does with its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Then {
    /// Nothing: it is the value.
    Value,
    /// `.log2`.
    Log2,
    /// `.buckets`.
    Bucket,
    /// No quick load ([`Op::eval_slow`]): hitcount, or a number
    /// [`NumOp`] cannot read.
    Slow,
}

/// A number of 1, 2, 4 or 8 bytes, as an [`Op`] reads it: the record's
/// word at `word_at`, which holds it, shifted left by `lshift` to put
/// the number at the top of the word, then right by `rshift`, which
/// sign-extends, then masked to the number's bits unless it is signed.
/// On a little-endian machine the word is the one that ends with the
/// number, if there is one, so that it is all in the record just when
/// the number is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct NumOp {
    word_at: u32,
    lshift: u8,
    rshift: u8,
    mask: u64,
}

impl NumOp {
    fn new(Num { at, size, signed }: Num) -> Option<Self> {
        if !matches!(size, 1 | 2 | 4 | 8) {
            return None;
        }
        let rshift = 64 - 8 * size;
        let ends_word = at.checked_add(u32::from(size))?.checked_sub(8);
        let (word_at, lshift) = match ends_word {
            Some(word_at) if cfg!(target_endian = "little") => (word_at, 0),
            _ if cfg!(target_endian = "little") => (at, rshift),
            _ => (at, 0),
        };
        let mask = match signed {
            true => u64::MAX,
            false => u64::MAX >> rshift,
        };
        Some(NumOp {
            word_at,
            lshift,
            rshift,
            mask,
        })
    }

    /// The number in `word`, the record's word at `word_at`.
    #[inline(always)]
    fn of(self, word: u64) -> u64 {
        // Both shifts are below 64.
        let top = word.wrapping_shl(self.lshift.into()) as i64;
        top.wrapping_shr(self.rshift.into()) as u64 & self.mask
    }
}

/// The record's word at `at`, if it is all there: one bounds check.
#[inline(always)]
fn read_word(rec: &[u8], at: u32) -> Option<u64> {
    let at = at as usize;
    // No overflow: `at` is below 2^32.
    let bytes = rec.get(at..at.wrapping_add(8))?;
    Some(u64::from_ne_bytes(bytes.try_into().ok()?))
}

impl Op {
    fn new(load: Load) -> Self {
        let (num, then, bucket) = match load {
            Load::One => (None, Then::Slow, 1),
            Load::Num(n) => (Some(n), Then::Value, 1),
            Load::Log2(n) => (Some(n), Then::Log2, 1),
            Load::Bucket(n, 0) => (Some(n), Then::Value, 1),
            Load::Bucket(n, b) => (Some(n), Then::Bucket, b),
        };
        let op = num.and_then(|n| Some((n, NumOp::new(n)?)));
        let slow = NumOp {
            word_at: 0,
            lshift: 0,
            rshift: 0,
            mask: 0,
        };
        let then = if op.is_some() { then } else { Then::Slow };
        Op {
            num: op.map_or(slow, |(_, op)| op),
            whole: op.is_some_and(|(n, _)| n.size == 8 && then == Then::Value),
            value: then == Then::Value,
            then,
            bucket: NonZeroU64::new(bucket).unwrap_or(NonZeroU64::MIN),
            load,
        }
    }

    /// An op of `load` that is never quick: its word is never in the
    /// record, so [`eval_fast`](Self::eval_fast) gives `None` at once,
    /// and [`eval`](Self::eval) evaluates `load`.
    fn not_quick(load: Load) -> Self {
        Op {
            num: NO_NUM,
            whole: false,
            value: false,
            then: Then::Slow,
            bucket: NonZeroU64::MIN,
            load,
        }
    }

    /// What the load gives for `rec` (as [`Load::eval`]), when that is
    /// quick: `None` for a number whose word is not all in the record,
    /// or a load of no quick kind, which [`eval`](Self::eval) evaluates.
    #[inline(always)]
    fn eval_fast(&self, rec: &[u8]) -> Option<u64> {
        let word = read_word(rec, self.num.word_at)?;
        if self.whole {
            return Some(word);
        }
        let n = self.num.of(word);
        if self.value {
            return Some(n);
        }
        match self.then {
            Then::Value => Some(n),
            Then::Log2 => Some(order_base_2(n)),
            Then::Bucket => Some((n / self.bucket).wrapping_mul(self.bucket.get())),
            Then::Slow => None,
        }
    }

    /// What the load gives for `rec` (as [`Load::eval`]).
    #[inline(always)]
    fn eval(&self, rec: &[u8]) -> u64 {
        match self.eval_fast(rec) {
            Some(v) => v,
            None => self.eval_slow(rec),
        }
    }

    /// [`eval`](Self::eval) when [`eval_fast`](Self::eval_fast) gives
    /// nothing: out of line. A number whose word is not all in the
    /// record is read as [`rec_num`] does: its bytes may still be there,
    /// at the start of a short record, or on a machine that is not
    /// little-endian.
    #[inline(never)]
    #[cold]
    fn eval_slow(&self, rec: &[u8]) -> u64 {
        self.load.eval(rec)
    }
}

/// The hitcount's [`Op`].
const ONE: Op = Op {
    num: NumOp {
        word_at: 0,
        lshift: 0,
        rshift: 0,
        mask: 0,
    },
    whole: false,
    value: false,
    then: Then::Slow,
    bucket: NonZeroU64::MIN,
    load: Load::One,
};

/// Where a string of the record starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrFrom {
    /// A `char[size]` at `at`.
    Array {
        /// Offset in the record.
        at: u32,
        /// The array's size.
        size: u32,
    },
    /// A `__data_loc` at `at`: offset and length from the record's start.
    DataLoc {
        /// Offset in the record.
        at: u32,
    },
    /// A `__rel_loc` at `at`: offset from its own end, and length.
    RelLoc {
        /// Offset in the record.
        at: u32,
    },
}

/// A string key: where it is, and the most bytes the key keeps (its
/// slot less one, for the NUL; C's `add_to_key()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyStr {
    /// Where the string starts.
    pub from: StrFrom,
    /// The most bytes kept.
    pub max: u32,
}

impl KeyStr {
    /// Where the string starts in `rec` and the most bytes to copy.
    #[inline]
    pub fn locate(self, rec: &[u8]) -> (usize, usize) {
        let (src, size) = match self.from {
            StrFrom::Array { at, size } => (at as usize, size as usize),
            StrFrom::DataLoc { at } => {
                let item = rec_u32(rec, at as usize);
                ((item & 0xffff) as usize, (item >> 16) as usize)
            }
            StrFrom::RelLoc { at } => {
                let item = rec_u32(rec, at as usize);
                let base = (at as usize).wrapping_add(4);
                (
                    base.wrapping_add((item & 0xffff) as usize),
                    (item >> 16) as usize,
                )
            }
        };
        (src, size.min(self.max as usize))
    }
}

/// What one key of a program loads from the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyLoad {
    /// A number, the whole u64 in the key (C's numeric keys take 8
    /// bytes).
    Word(Load),
    /// A string, `strncpy()`'d into its slot.
    Str(KeyStr),
    /// `common_comm`: the current task's name ([`Here::comm_word`]),
    /// `strncpy()`'d into its slot of [`COMM_SLOT`] bytes.
    Comm,
}

/// One key: what it loads (a [`KeyLoad`] as the program runs it), and
/// its slot in the key, in words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct KeyOp {
    load: KeyPart,
    word: u8,
    words: u8,
}

/// One word of a short key ([`Program::short_key_fast`]). Its own tag
/// byte, as [`Op`]'s in a niche took more to decode than a word costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum KeyWord {
    /// A number.
    Num(Op),
    /// A word of a `char[]` string: the record's word at `at`, masked
    /// with `mask`, then cut at its first NUL, if the string has not
    /// ended in a word before (`first`: the string's first word).
    /// `mask` is all ones but in the slot's last word, where it clears
    /// the bytes past the most the key keeps (C's `size`): they read as
    /// NULs. That is `strncpy()` into the slot when the most kept ends
    /// in its last word, which holds for a slot that is the array's size
    /// rounded up to words, keeping one byte less.
    Str { at: u32, mask: u64, first: bool },
    /// No key's: 0.
    Zero,
}

impl KeyWord {
    /// The words of a `char[]` string key `s` in a slot of `words`
    /// words, if [`KeyWord::Str`] can build them (on a little-endian
    /// machine).
    fn string(s: KeyStr, words: usize) -> Option<impl Iterator<Item = KeyWord>> {
        let StrFrom::Array { at, size } = s.from else {
            return None;
        };
        let kept = size.min(s.max) as usize;
        if !cfg!(target_endian = "little") || words == 0 || kept / 8 != words - 1 {
            return None;
        }
        // Where the slot's words are read: below 2^32.
        at.checked_add(u32::try_from(words * 8).ok()?)?;
        let last_mask = (1u64 << (8 * (kept % 8))) - 1;
        Some((0..words).map(move |i| KeyWord::Str {
            at: at.wrapping_add(8 * i as u32),
            mask: if i + 1 == words { last_mask } else { u64::MAX },
            first: i == 0,
        }))
    }
}

/// Each byte 1, and each byte's top bit: finding a NUL in a word.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KeyPart {
    Word(Op),
    Str(KeyStr),
    Comm,
}

const NO_KEY: KeyOp = KeyOp {
    load: KeyPart::Word(ONE),
    word: 0,
    words: 0,
};

/// A trigger's event path as typed loads; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Program {
    keys: [KeyOp; TRACING_MAP_KEYS_MAX],
    /// The keys' loads, when they are all numbers ([`words`](Self::words)).
    word_keys: [Op; TRACING_MAP_KEYS_MAX],
    n_keys: u8,
    /// Whether every key is a number, key `i` being word `i`.
    words: bool,
    /// Whether the keys' slots follow each other from word 0 to the end
    /// of the key ([`compact_key`](Self::compact_key)).
    tiled: bool,
    key_words: u8,
    /// Whether `short_words` builds the key ([`short`](Self::short)).
    short: bool,
    /// The words of a key of up to [`SHORT_WORDS`] words, one by one.
    short_words: [KeyWord; SHORT_WORDS],
    /// Hitcount (always 1) first, as [`add_values_fast`] runs them: a
    /// value whose operation is not an add is never quick there
    /// ([`Op::not_quick`]).
    ///
    /// [`add_values_fast`]: Self::add_values_fast
    sums: [Op; TRACING_MAP_VALS_MAX],
    n_sums: u8,
    /// How each sum updates its slot.
    ops: [SlotOp; TRACING_MAP_VALS_MAX],
    /// The number each sum reads, if it is one ([`NO_NUM`] if not): how
    /// [`apply`](Self::apply) reads one whose op is not quick.
    nums: [NumOp; TRACING_MAP_VALS_MAX],
    /// Whether some operation is not an add.
    stats: bool,
    /// The last sum, when it is a `.min`, `.max` or `.quantiles` of a
    /// number ([`last_stat`](Self::last_stat)).
    last: LastStat,
}

/// The last sum of a program, a `.min`, `.max` or `.quantiles` of a
/// number, as [`Program::last_stat`] applies it: the number as an
/// [`Op`] reads it (shifted and masked even when it is its whole word:
/// no test), and what is done with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LastStat {
    /// The `from` of [`Program::add_values`] at which it applies, the
    /// values before it being plain sums, done: `u8::MAX` for none.
    from: u8,
    num: NumOp,
    /// The slot is raised to the number `^ xor`, unless `sketch`.
    xor: u64,
    /// Whether it is a `.quantiles` value, for its sketch.
    sketch: bool,
}

/// No [`LastStat`].
const NO_LAST: LastStat = LastStat {
    from: u8::MAX,
    num: NO_NUM,
    xor: 0,
    sketch: false,
};

/// No number: its word is never in the record.
const NO_NUM: NumOp = NumOp {
    word_at: u32::MAX,
    lshift: 0,
    rshift: 0,
    mask: 0,
};

/// The most words of a key [`Program::short_key_fast`] builds.
pub const SHORT_WORDS: usize = 4;

impl Program {
    /// A program of no key that nothing runs: what a histogram without
    /// one holds in its place.
    pub const NONE: Program = Program {
        keys: [NO_KEY; TRACING_MAP_KEYS_MAX],
        word_keys: [ONE; TRACING_MAP_KEYS_MAX],
        n_keys: 0,
        words: false,
        tiled: false,
        key_words: 0,
        short: false,
        short_words: [KeyWord::Zero; SHORT_WORDS],
        sums: [ONE; TRACING_MAP_VALS_MAX],
        n_sums: 0,
        ops: [SlotOp::Add; TRACING_MAP_VALS_MAX],
        nums: [NO_NUM; TRACING_MAP_VALS_MAX],
        stats: false,
        last: NO_LAST,
    };

    /// Compiles a trigger's event path from its keys, in order (what each
    /// loads, and its offset and size in the key of `key_size` bytes),
    /// and its `n_sums` sums (hitcount first), if they have one of the
    /// shapes a program covers; `None` (also for a key or sum that is
    /// `None`, not a load) sends its events down the general path. Each
    /// sum comes with how it updates its slot (hitcount's is an add). The
    /// caller has checked that the trigger has nothing else to do per
    /// event ([`HistData::program`](super::hist_data::HistData::program)).
    #[cfg(not(MODULE))]
    pub fn compile(
        key_size: usize,
        keys: impl Iterator<Item = Option<(KeyLoad, usize, usize)>>,
        sums: impl Iterator<Item = (Option<Load>, SlotOp)>,
        n_sums: usize,
    ) -> Option<Self> {
        let mut p = Program::NONE;
        p.compile_in(key_size, keys, sums, n_sums).then_some(p)
    }

    /// [`compile`](Self::compile) into `self`, for a program that lives in
    /// a histogram built in place (a program is large, the kernel's stack
    /// small): whether it compiled; if not, `self` is [`Program::NONE`].
    pub fn compile_in(
        &mut self,
        key_size: usize,
        keys: impl Iterator<Item = Option<(KeyLoad, usize, usize)>>,
        sums: impl Iterator<Item = (Option<Load>, SlotOp)>,
        n_sums: usize,
    ) -> bool {
        let compiled = self.compile_parts(key_size, keys, sums, n_sums).is_some();
        if !compiled {
            *self = Program::NONE;
        }
        compiled
    }

    /// The body of [`compile_in`](Self::compile_in), which may leave
    /// `self` half written when it fails.
    fn compile_parts(
        &mut self,
        key_size: usize,
        keys: impl Iterator<Item = Option<(KeyLoad, usize, usize)>>,
        sums: impl Iterator<Item = (Option<Load>, SlotOp)>,
        n_sums: usize,
    ) -> Option<()> {
        let key_words = u8::try_from(key_size / 8).ok()?;
        // From the constant, field by field: a struct expression would be
        // built on the stack first.
        let p = self;
        *p = Program::NONE;
        p.words = true;
        p.tiled = true;
        p.key_words = key_words;
        let mut tiled_to = 0;
        for key in keys {
            let (load, offset, size) = key?;
            // C's key slots are whole words (strings are aligned); the
            // program builds keys as words.
            if offset.checked_add(size)? > key_size
                || !offset.is_multiple_of(8)
                || !size.is_multiple_of(8)
            {
                return None;
            }
            let load = match load {
                KeyLoad::Word(Load::One) => return None,
                KeyLoad::Word(l) if !l.num()?.readable() => return None,
                KeyLoad::Comm if size != COMM_SLOT => return None,
                load => load,
            };
            let is_word = offset == usize::from(p.n_keys) * 8 && size == 8;
            p.tiled &= offset == tiled_to;
            tiled_to = offset + size;
            p.words &= is_word && matches!(load, KeyLoad::Word(_));
            let part = match load {
                KeyLoad::Word(l) => KeyPart::Word(Op::new(l)),
                KeyLoad::Str(s) => KeyPart::Str(s),
                KeyLoad::Comm => KeyPart::Comm,
            };
            if let KeyPart::Word(op) = part {
                *p.word_keys.get_mut(usize::from(p.n_keys))? = op;
            }
            *p.keys.get_mut(usize::from(p.n_keys))? = KeyOp {
                load: part,
                word: u8::try_from(offset / 8).ok()?,
                words: u8::try_from(size / 8).ok()?,
            };
            p.n_keys += 1;
        }
        if p.n_keys == 0 {
            return None;
        }
        if !key_size.is_multiple_of(8) {
            return None;
        }
        p.tiled &= tiled_to == key_size;
        p.words &= usize::from(p.n_keys) * 8 == key_size;
        for (load, op) in sums {
            let load = load?;
            if load.num().is_some_and(|n| !n.readable()) {
                return None;
            }
            let i = usize::from(p.n_sums);
            *p.ops.get_mut(i)? = op;
            if let Load::Num(n) = load {
                *p.nums.get_mut(i)? = NumOp::new(n).unwrap_or(NO_NUM);
            }
            *p.sums.get_mut(i)? = match op {
                SlotOp::Add => Op::new(load),
                _ => Op::not_quick(load),
            };
            p.stats |= op != SlotOp::Add;
            p.n_sums += 1;
        }
        if usize::from(p.n_sums) != n_sums || p.sums[0] != ONE || p.ops[0] != SlotOp::Add {
            return None;
        }
        p.last = p.last_plan().unwrap_or(NO_LAST);
        if let Some(words) = p.short_plan() {
            p.short = true;
            p.short_words = words;
        }
        Some(())
    }

    /// The [`LastStat`] of the last sum, if it is a `.min`, `.max` or
    /// `.quantiles` of a number, after plain sums only.
    fn last_plan(&self) -> Option<LastStat> {
        let last = usize::from(self.n_sums).checked_sub(1)?;
        let ops = self.ops.get(..last)?;
        if last == 0 || ops.iter().any(|&op| op != SlotOp::Add) {
            return None;
        }
        let Load::Num(n) = self.sums.get(last)?.load else {
            return None;
        };
        let (xor, sketch) = match *self.ops.get(last)? {
            SlotOp::Max { xor } => (xor, false),
            SlotOp::Sketch => (0, true),
            SlotOp::Add => return None,
        };
        Some(LastStat {
            from: u8::try_from(last - 1).ok()?,
            num: NumOp::new(n)?,
            xor,
            sketch,
        })
    }

    /// The words of the key, as [`short_key_fast`](Self::short_key_fast)
    /// builds them, if it can: a key of up to [`SHORT_WORDS`] words, of
    /// numbers and `char[]` strings [`KeyWord::string`] takes.
    fn short_plan(&self) -> Option<[KeyWord; SHORT_WORDS]> {
        let mut words = [KeyWord::Zero; SHORT_WORDS];
        if self.key_words() > SHORT_WORDS {
            return None;
        }
        for op in self.keys.iter().take(self.n_keys()) {
            let at = usize::from(op.word);
            match op.load {
                KeyPart::Word(load) => *words.get_mut(at)? = KeyWord::Num(load),
                KeyPart::Str(s) => {
                    let n = usize::from(op.words);
                    let slot = words.get_mut(at..at + n)?;
                    for (w, kw) in slot.iter_mut().zip(KeyWord::string(s, n)?) {
                        *w = kw;
                    }
                }
                // Built by its own shape alone (`comm_key()`), in a
                // compact key beside others.
                KeyPart::Comm => return None,
            }
        }
        Some(words)
    }

    /// The number of keys.
    #[inline(always)]
    pub fn n_keys(&self) -> usize {
        usize::from(self.n_keys)
    }

    /// Whether every key is a number, key `i` being word `i` of the key:
    /// then [`key_words`](Self::key_words) builds the key.
    #[inline(always)]
    pub fn words(&self) -> bool {
        self.words
    }

    /// The key size in words.
    #[inline(always)]
    pub fn key_words(&self) -> usize {
        usize::from(self.key_words)
    }

    /// Whether some value has a statistic that is not a plain sum
    /// (`.min`, `.max`, `.quantiles`).
    #[inline(always)]
    pub fn has_stats(&self) -> bool {
        self.stats
    }

    /// The number of sums, hitcount included.
    #[inline(always)]
    pub fn n_sums(&self) -> usize {
        usize::from(self.n_sums)
    }

    /// The value `rec` gives sum `i` (hitcount, sum 0, adds 1).
    #[inline(always)]
    pub fn value(&self, i: usize, rec: &[u8]) -> u64 {
        self.sums.get(i).map_or(0, |l| l.eval(rec))
    }
}

/// `strncpy(dst, rec + src, size)` into the zeroed words `dst`, as C's
/// key bytes: stops at the first NUL, the end of the record or `size`
/// bytes. A word of 8 bytes without a NUL is copied whole. Returns how
/// many words it wrote (those after are 0), the last of them holding a
/// NUL unless they are all of `dst`; `None` when `dst` was too short for
/// the string.
#[inline]
fn str_words(dst: &mut [u64], rec: &[u8], src: usize, size: usize) -> Option<usize> {
    let mut at = src;
    let mut left = size;
    for (n, word) in dst.iter_mut().enumerate() {
        if left == 0 {
            // The string ends at a word: the next one, 0, is its NUL.
            return Some(n + 1);
        }
        if let Some(b) = rec.get(at..).and_then(|r| r.first_chunk::<8>()) {
            let v = u64::from_ne_bytes(*b);
            // Non-zero when some byte is NUL; its lowest bit marks the
            // first NUL on a little-endian CPU.
            let nul = v.wrapping_sub(ONES) & !v & HIGHS;
            if nul == 0 && left >= 8 {
                *word = v;
                at += 8;
                left -= 8;
                continue;
            }
            if cfg!(target_endian = "little") {
                // The bytes before the NUL or the limit, at most 7.
                let keep = (nul.trailing_zeros() / 8).min(left as u32);
                *word = v & 1u64.wrapping_shl(8 * keep).wrapping_sub(1);
                return Some(n + 1);
            }
        }
        // The last bytes, one at a time.
        let mut b = [0u8; 8];
        for (d, &c) in b.iter_mut().zip(rec.get(at..).unwrap_or(&[])).take(left) {
            if c == 0 {
                break;
            }
            *d = c;
        }
        *word = u64::from_ne_bytes(b);
        return Some(n + 1);
    }
    (left == 0).then_some(dst.len())
}

/// Words a [`CompactKey`] holds.
const COMPACT_WORDS: usize = 8;

/// A key with string keys as the words their strings fill (up to the
/// word with the NUL), and the map's key as what they stand for: each
/// key's slot holds its words, then zeros. A short string in a long slot
/// (a `__data_loc` key takes 32 words) is then built, hashed and compared
/// at the cost of its own words, with no large buffer to zero. Its slots
/// tile the key (see [`Program::compact_key`]).
#[derive(Clone, Copy, Debug)]
pub struct CompactKey {
    words: [u64; COMPACT_WORDS],
    slots: [Slot; TRACING_MAP_KEYS_MAX],
    n_slots: u8,
}

/// A key of one string, as its words up to the one with its NUL, or all
/// of its slot (at most [`COMPACT_WORDS`]), and the sum of their hashes,
/// taken as it is built: a [`CompactKey`] of one slot, with no slots to
/// walk. A `__data_loc` name, 32 words in the map, costs its own words.
#[derive(Clone, Copy, Debug)]
pub struct StrKey {
    words: [u64; COMPACT_WORDS],
    used: usize,
    sum: u64,
}

impl StrKey {
    /// An empty key, for [`Program::string_key`] to build into.
    pub const EMPTY: Self = StrKey {
        words: [0; COMPACT_WORDS],
        used: 0,
        sum: 0,
    };
}

impl MapKey for &StrKey {
    #[inline]
    fn word(self, i: usize) -> u64 {
        match i < self.used {
            true => self.words.get(i).copied().unwrap_or(0),
            false => 0,
        }
    }

    /// The words past `used` are 0, and add 0 to the sum.
    #[inline(always)]
    fn hash(self, _words: usize) -> u32 {
        hash_finish(self.sum)
    }

    /// Only the words up to the NUL's are compared: a stored string slot
    /// is its bytes then zeros, as for a [`CompactKey`].
    #[inline(always)]
    fn matches(self, slots: &[AtomicU64]) -> bool {
        let words = self.words.get(..self.used).unwrap_or(&[]);
        slots.get(..words.len()).is_some_and(|stored| {
            stored
                .iter()
                .zip(words)
                .all(|(w, &k)| w.load(Ordering::Relaxed) == k)
        })
    }
}

/// A key's slot in a [`CompactKey`]: its first word and size in the key,
/// where its words are in the compact key, and how many there are.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    start: u8,
    size: u8,
    at: u8,
    used: u8,
}

impl CompactKey {
    /// An empty key, for [`Program::compact_key`] to build into.
    pub const EMPTY: Self = CompactKey {
        words: [0; COMPACT_WORDS],
        slots: [Slot {
            start: 0,
            size: 0,
            at: 0,
            used: 0,
        }; TRACING_MAP_KEYS_MAX],
        n_slots: 0,
    };

    #[inline(always)]
    fn slots(&self) -> &[Slot] {
        self.slots.get(..usize::from(self.n_slots)).unwrap_or(&[])
    }

    /// The words of `slot` in the compact key.
    #[inline(always)]
    fn used(&self, slot: &Slot) -> &[u64] {
        let at = usize::from(slot.at);
        self.words
            .get(at..at + usize::from(slot.used))
            .unwrap_or(&[])
    }
}

impl MapKey for &CompactKey {
    fn word(self, i: usize) -> u64 {
        self.slots()
            .iter()
            .find_map(|s| {
                let j = i.checked_sub(usize::from(s.start))?;
                (j < usize::from(s.size)).then(|| self.used(s).get(j).copied().unwrap_or(0))
            })
            .unwrap_or(0)
    }

    #[inline(always)]
    fn hash(self, _words: usize) -> u32 {
        let mut sum = 0u64;
        for s in self.slots() {
            for (j, &w) in self.used(s).iter().enumerate() {
                sum = sum.wrapping_add(hash_word(w, usize::from(s.start) + j));
            }
        }
        hash_finish(sum)
    }

    /// Only the words each slot holds are compared: a number's one word,
    /// or a string's words up to the one with its NUL, or all of the slot.
    /// A stored string slot is its bytes then zeros (C's `strncpy()` into
    /// a zeroed key, and `str_words()`), so a stored slot that equals
    /// those words has the NUL where this key does, and zeros after it.
    #[inline(always)]
    fn matches(self, slots: &[AtomicU64]) -> bool {
        self.slots().iter().all(|s| {
            let start = usize::from(s.start);
            let used = self.used(s);
            slots.get(start..start + used.len()).is_some_and(|stored| {
                stored
                    .iter()
                    .zip(used)
                    .all(|(w, &k)| w.load(Ordering::Relaxed) == k)
            })
        })
    }

    #[inline]
    fn store(self, slots: &[AtomicU64]) {
        for (i, slot) in slots.iter().enumerate() {
            slot.store(self.word(i), Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::record::strncpy_from;
    use super::*;

    /// Where the tests' events run, for the keys that read none of it.
    const NOWHERE: At = At {
        cpu: 0,
        comm: [0; 16],
    };

    /// A program's number is `rec_num()`'s, for every size, sign and
    /// offset, at the start and the end of the record and past it.
    #[test]
    fn numbers_read_as_rec_num() {
        let rec: [u8; 24] = core::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ 0x85);
        for len in [0, 1, 7, 8, 9, 16, 23, 24] {
            let rec = &rec[..len];
            for size in [1u8, 2, 4, 8] {
                for signed in [false, true] {
                    for at in 0..26u32 {
                        let op = Op::new(Load::Num(Num { at, size, signed }));
                        assert_eq!(op.then, Then::Value);
                        assert_eq!(
                            op.eval(rec),
                            rec_num(rec, at, size, signed),
                            "len {len} at {at} size {size} signed {signed}"
                        );
                    }
                }
            }
        }
        let odd = Op::new(Load::Num(Num {
            at: 0,
            size: 3,
            signed: false,
        }));
        assert_eq!(odd.then, Then::Slow);
    }

    /// `str_words()` gives the bytes `strncpy_from()` gives, for every
    /// start, limit and record end over strings with NULs anywhere.
    #[test]
    fn string_words_are_strncpy() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Mostly letters, a NUL now and then.
            let rec: [u8; 40] = core::array::from_fn(|i| match (seed >> (i % 60)) % 11 {
                0 => 0,
                n => b'a' + n as u8,
            });
            for len in 0..=rec.len() {
                for src in 0..=len + 1 {
                    for size in 0..=23 {
                        let mut words = [0u64; 3];
                        let used = str_words(&mut words, &rec[..len], src, size);
                        // The words up to the one with the NUL, or all.
                        let used = used.unwrap();
                        assert!(used == 3 || words[used - 1].to_ne_bytes().contains(&0));
                        assert!(words[used..].iter().all(|&w| w == 0));
                        let mut bytes = [0u8; 24];
                        strncpy_from(&mut bytes, &rec[..len], src, size);
                        let mut got = [0u8; 24];
                        for (g, w) in got.chunks_exact_mut(8).zip(words) {
                            g.copy_from_slice(&w.to_ne_bytes());
                        }
                        assert_eq!(got, bytes, "len {len} src {src} size {size}");
                    }
                }
            }
        }
    }

    /// A short key built a word at a time is the key [`Program::key`]
    /// builds, whenever it is built: for `char[]` strings of every size
    /// up to 32 bytes, after a number or before one, over bytes with
    /// NULs anywhere and records cut anywhere.
    #[test]
    fn short_keys_are_keys() {
        fn check<const N: usize>(p: &Program, rec: &[u8]) -> bool {
            let fast = p.short_key_fast::<N>(rec);
            if let Some(fast) = fast {
                assert_eq!(fast, p.key::<N>(rec, NOWHERE), "{p:?} {rec:?}");
            }
            fast.is_some()
        }
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut built = 0;
        for size in 1..=32u32 {
            let slot = size.next_multiple_of(8) as usize;
            let s = KeyStr {
                from: StrFrom::Array { at: 12, size },
                max: slot as u32 - 1,
            };
            let num = Load::Num(Num {
                at: 4,
                size: 4,
                signed: true,
            });
            for first in [false, true] {
                let keys = match first {
                    true => [(KeyLoad::Word(num), 0, 8), (KeyLoad::Str(s), 8, slot)],
                    false => [(KeyLoad::Str(s), 0, slot), (KeyLoad::Word(num), slot, 8)],
                };
                let key_size = slot + 8;
                let p = Program::compile(
                    key_size,
                    keys.map(Some).into_iter(),
                    [(Some(Load::One), SlotOp::Add)].into_iter(),
                    1,
                );
                let p = p.unwrap();
                assert_eq!(p.short(), key_size <= 32, "size {size}");
                for _ in 0..50 {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    // Mostly letters, a NUL now and then.
                    let rec: [u8; 48] = core::array::from_fn(|i| match (seed >> (i % 60)) % 7 {
                        0 => 0,
                        n => b'a' + n as u8,
                    });
                    for len in 0..=rec.len() {
                        let fast = match key_size / 8 {
                            2 => check::<2>(&p, &rec[..len]),
                            3 => check::<3>(&p, &rec[..len]),
                            4 => check::<4>(&p, &rec[..len]),
                            _ => false,
                        };
                        built += usize::from(fast);
                    }
                }
            }
        }
        assert!(built > 10_000, "{built}");
    }
}
