// SPDX-License-Identifier: GPL-2.0

//! The compiled trigger program: the event path of the common histogram
//! shapes, flattened at attach into a few typed loads.
//!
//! [`super::histogram::Histogram::update`] runs a [`Program`] when the
//! trigger has one: keys that are numbers of the record (or their
//! `.log2` or `.buckets`) or strings of the record, sums that are
//! hitcount or numbers of the record, and nothing else to do per event
//! (no variables, references, actions or saved comm). A key of numbers
//! only is built as words, with no zeroing of a byte buffer, and hashed
//! and compared as words; no expression tree is walked. Every other trigger takes the general path, which
//! [`super::hist_data::HistData`] interprets; both give the same key and
//! sums for every record (see the tests).

use core::num::NonZeroU64;

use super::grammar::{TRACING_MAP_KEYS_MAX, TRACING_MAP_VALS_MAX};
use super::hist_data::{order_base_2, rec_num, rec_u32, strncpy_from, HistData};

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

/// A [`Load`] as a program runs it: the size and signedness of a plain
/// number folded into the variant, so that one jump picks the code. Its
/// own tag byte (`repr(u8)`): with the tag in a niche of [`Load`]'s,
/// decoding it took more instructions than the load (callgrind: 330 to
/// 299 per event for `keys=a,b,c:vals=a,b`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Op {
    One,
    U8(u32),
    S8(u32),
    U16(u32),
    S16(u32),
    U32(u32),
    S32(u32),
    U64(u32),
    Other(Load),
}

/// The `N` bytes at `at` of `rec`, if they are all there.
#[inline(always)]
fn bytes<const N: usize>(rec: &[u8], at: u32) -> Option<[u8; N]> {
    rec.get(at as usize..)?.first_chunk::<N>().copied()
}

impl Op {
    fn new(load: Load) -> Self {
        match load {
            Load::One => Op::One,
            Load::Num(Num { at, size, signed }) => match (size, signed) {
                (1, false) => Op::U8(at),
                (1, true) => Op::S8(at),
                (2, false) => Op::U16(at),
                (2, true) => Op::S16(at),
                (4, false) => Op::U32(at),
                (4, true) => Op::S32(at),
                (8, _) => Op::U64(at),
                _ => Op::Other(load),
            },
            _ => Op::Other(load),
        }
    }

    /// What the load gives for `rec` (as [`Load::eval`]).
    #[inline(always)]
    fn eval(self, rec: &[u8]) -> u64 {
        match self {
            Op::One => 1,
            Op::U8(at) => bytes(rec, at).map_or(0, |b| u64::from(u8::from_ne_bytes(b))),
            Op::S8(at) => bytes(rec, at).map_or(0, |b| i8::from_ne_bytes(b) as u64),
            Op::U16(at) => bytes(rec, at).map_or(0, |b| u64::from(u16::from_ne_bytes(b))),
            Op::S16(at) => bytes(rec, at).map_or(0, |b| i16::from_ne_bytes(b) as u64),
            Op::U32(at) => bytes(rec, at).map_or(0, |b| u64::from(u32::from_ne_bytes(b))),
            Op::S32(at) => bytes(rec, at).map_or(0, |b| i32::from_ne_bytes(b) as u64),
            Op::U64(at) => bytes(rec, at).map_or(0, u64::from_ne_bytes),
            Op::Other(load) => load.eval(rec),
        }
    }
}

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
}

/// One key: what it loads (a [`KeyLoad`] as the program runs it), and
/// its slot in the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct KeyOp {
    load: KeyPart,
    offset: u16,
    size: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KeyPart {
    Word(Op),
    Str(KeyStr),
}

const NO_KEY: KeyOp = KeyOp {
    load: KeyPart::Word(Op::One),
    offset: 0,
    size: 0,
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
    key_size: u16,
    /// Hitcount (always 1) first.
    sums: [Op; TRACING_MAP_VALS_MAX],
    n_sums: u8,
}

impl Program {
    /// Compiles `data`'s event path, if it has one of the shapes a
    /// program covers; `None` sends its events down the general path.
    pub fn compile(data: &HistData<'_>) -> Option<Self> {
        if data.n_event_vars() != 0
            || data.n_var_refs() != 0
            || data.n_actions() != 0
            || data.needs_comm()
        {
            return None;
        }
        let key_size = data.key_size();
        let mut p = Program {
            keys: [NO_KEY; TRACING_MAP_KEYS_MAX],
            word_keys: [Op::One; TRACING_MAP_KEYS_MAX],
            n_keys: 0,
            words: true,
            key_size: u16::try_from(key_size).ok()?,
            sums: [Op::One; TRACING_MAP_VALS_MAX],
            n_sums: 0,
        };
        for slot in data.key_slots() {
            let (id, offset, size) = slot?;
            if offset.checked_add(size)? > key_size {
                return None;
            }
            let load = match data.key_load(id)? {
                KeyLoad::Word(Load::One) => return None,
                KeyLoad::Word(l) if !l.num()?.readable() => return None,
                load => load,
            };
            let is_word = offset == usize::from(p.n_keys) * 8 && size == 8;
            p.words &= is_word && matches!(load, KeyLoad::Word(_));
            let part = match load {
                KeyLoad::Word(l) => KeyPart::Word(Op::new(l)),
                KeyLoad::Str(s) => KeyPart::Str(s),
            };
            if let KeyPart::Word(op) = part {
                *p.word_keys.get_mut(usize::from(p.n_keys))? = op;
            }
            *p.keys.get_mut(usize::from(p.n_keys))? = KeyOp {
                load: part,
                offset: u16::try_from(offset).ok()?,
                size: u16::try_from(size).ok()?,
            };
            p.n_keys += 1;
        }
        if p.n_keys == 0 {
            return None;
        }
        p.words &= usize::from(p.n_keys) * 8 == key_size;
        for &id in data.sum_ids() {
            let load = data.load(id)?;
            if load.num().is_some_and(|n| !n.readable()) {
                return None;
            }
            *p.sums.get_mut(usize::from(p.n_sums))? = Op::new(load);
            p.n_sums += 1;
        }
        if usize::from(p.n_sums) != data.n_sums() || p.sums[0] != Op::One {
            return None;
        }
        Some(p)
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

    /// The key size in bytes.
    #[inline(always)]
    pub fn key_size(&self) -> usize {
        usize::from(self.key_size)
    }

    /// The key of `rec` as the `N` words of a key of `N` numbers (see
    /// [`words`](Self::words)); `N` is [`n_keys`](Self::n_keys).
    #[inline(always)]
    pub fn key_words<const N: usize>(&self, rec: &[u8]) -> [u64; N] {
        let mut key = [0u64; N];
        for (word, op) in key.iter_mut().zip(self.word_keys.iter()) {
            *word = op.eval(rec);
        }
        key
    }

    /// Writes the key of `rec` into `key`, zeroed and
    /// [`key_size`](Self::key_size) long.
    #[inline(always)]
    pub fn write_key(&self, rec: &[u8], key: &mut [u8]) {
        for op in self.keys.iter().take(usize::from(self.n_keys)) {
            let start = usize::from(op.offset);
            let Some(slot) = key.get_mut(start..start + usize::from(op.size)) else {
                continue;
            };
            match op.load {
                KeyPart::Word(load) => {
                    let value = load.eval(rec).to_ne_bytes();
                    let n = slot.len().min(8);
                    slot[..n].copy_from_slice(&value[..n]);
                }
                KeyPart::Str(s) => {
                    let (src, size) = s.locate(rec);
                    strncpy_from(slot, rec, src, size);
                }
            }
        }
    }

    /// The number of sums, hitcount included.
    #[inline(always)]
    pub fn n_sums(&self) -> usize {
        usize::from(self.n_sums)
    }

    /// The value `rec` adds to sum `i` (hitcount, sum 0, adds 1).
    #[inline(always)]
    pub fn value(&self, i: usize, rec: &[u8]) -> u64 {
        self.sums.get(i).map_or(0, |l| l.eval(rec))
    }
}
