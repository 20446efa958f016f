// SPDX-License-Identifier: GPL-2.0

//! The keys a program builds from a record: numbers, short keys,
//! strings and compact keys.

use super::*;

/// A word of a string, `v`: its bytes below its first NUL, if it has
/// one, and then `ended` (on a little-endian machine).
#[inline(always)]
fn cut_at_nul(v: u64, ended: &mut bool) -> u64 {
    // Non-zero when some byte is NUL; its lowest bit marks the first NUL
    // (little-endian).
    let nul = v.wrapping_sub(ONES) & !v & HIGHS;
    *ended = nul != 0;
    // The bytes below the first NUL, if any.
    v & ((nul & nul.wrapping_neg()) >> 7).wrapping_sub(1)
}

impl Program {
    /// The key of `rec` as the `N` words of a key of `N` numbers (see
    /// [`words`](Self::words)); `N` is [`n_keys`](Self::n_keys).
    #[inline(always)]
    pub fn number_key<const N: usize>(&self, rec: &[u8]) -> [u64; N] {
        let mut key = [0u64; N];
        for (word, op) in key.iter_mut().zip(self.word_keys.iter()) {
            *word = op.eval(rec);
        }
        key
    }

    /// [`number_key`](Self::number_key) when its loads are quick
    /// ([`Op::eval_fast`]); `None` when one is not.
    #[inline(always)]
    pub fn number_key_fast<const N: usize>(&self, rec: &[u8]) -> Option<[u64; N]> {
        let mut key = [0u64; N];
        for (word, op) in key.iter_mut().zip(self.word_keys.iter()) {
            *word = op.eval_fast(rec)?;
        }
        Some(key)
    }

    /// Whether [`short_key_fast`](Self::short_key_fast) builds the key:
    /// a key of numbers and `char[]` strings, of up to 4 words.
    #[inline(always)]
    pub fn short(&self) -> bool {
        self.short
    }

    /// [`key`](Self::key) of a key of `N` words, `N` being
    /// [`key_words`](Self::key_words), when [`short`](Self::short) says
    /// so and its loads are quick ([`Op::eval_fast`], and the words of
    /// its strings in the record); `None` when one is not. Built a word
    /// at a time: one test of the word's kind, and a load.
    #[inline(always)]
    pub fn short_key_fast<const N: usize>(&self, rec: &[u8]) -> Option<[u64; N]> {
        let mut key = [0u64; N];
        // Whether the string whose words these are has ended.
        let mut ended = false;
        for (word, kw) in key.iter_mut().zip(self.short_words.iter()) {
            *word = match *kw {
                KeyWord::Num(op) => op.eval_fast(rec)?,
                KeyWord::Str { at, mask, first } => {
                    ended &= !first;
                    match ended {
                        true => 0,
                        false => cut_at_nul(read_word(rec, at)? & mask, &mut ended),
                    }
                }
                KeyWord::Zero => 0,
            };
        }
        Some(key)
    }

    /// Whether the key is `common_comm` alone, which
    /// [`comm_key`](Self::comm_key) builds.
    #[inline(always)]
    pub fn comm_only(&self) -> bool {
        self.n_keys == 1 && self.key_words == 2 && self.keys[0].load == KeyPart::Comm
    }

    /// The key of `common_comm` alone (see [`comm_only`](Self::comm_only)):
    /// the task's name, [`COMM_SLOT`] bytes, as C's `strncpy()` into the
    /// slot leaves it: the bytes up to its first NUL, at most 15.
    #[inline(always)]
    pub fn comm_key(&self, here: impl Here) -> [u64; 2] {
        let mut ended = false;
        let first = cut_at_nul(here.comm_word(0), &mut ended);
        let second = match ended {
            true => 0,
            // The slot's last byte is its NUL (on a little-endian
            // machine, the top one).
            false => cut_at_nul(here.comm_word(1) & (u64::MAX >> 8), &mut ended),
        };
        [first, second]
    }

    /// The key of `rec` in the first [`key_words`](Self::key_words)
    /// words of `key`, the rest 0: the words of C's key bytes.
    #[inline(always)]
    pub fn key<const N: usize>(&self, rec: &[u8], here: impl Here) -> [u64; N] {
        let mut key = [0u64; N];
        for op in self.keys.iter().take(usize::from(self.n_keys)) {
            let start = usize::from(op.word);
            match op.load {
                KeyPart::Word(load) => {
                    if let Some(w) = key.get_mut(start) {
                        *w = load.eval(rec);
                    }
                }
                KeyPart::Str(s) => {
                    let end = start + usize::from(op.words);
                    if let Some(slot) = key.get_mut(start..end) {
                        let (src, size) = s.locate(rec);
                        // A slot is longer than its longest string.
                        let _ = str_words(slot, rec, src, size);
                    }
                }
                KeyPart::Comm => {
                    if let Some(slot) = key.get_mut(start..start + COMM_SLOT / 8) {
                        let _ = str_words(slot, &comm_bytes(here), 0, COMM_SLOT - 1);
                    }
                }
            }
        }
        key
    }

    /// Whether the key is one string alone, which
    /// [`string_key`](Self::string_key) builds.
    #[inline(always)]
    pub fn one_string(&self) -> bool {
        self.n_keys == 1 && self.tiled && matches!(self.keys[0].load, KeyPart::Str(_))
    }

    /// Builds the key of `rec`, one string alone (see
    /// [`one_string`](Self::one_string)), into `key`, if its words fit in
    /// a [`StrKey`]; `false` if not.
    #[inline(always)]
    pub fn string_key(&self, rec: &[u8], key: &mut StrKey) -> bool {
        let op = self.keys[0];
        let KeyPart::Str(s) = op.load else {
            return false;
        };
        let (src, size) = s.locate(rec);
        let slot = usize::from(op.words);
        let fits = slot.min(COMPACT_WORDS);
        let Some(dst) = key.words.get_mut(..fits) else {
            return false;
        };
        match str_words(dst, rec, src, size) {
            Some(n) if n < fits || fits == slot => key.used = n,
            _ => return false,
        }
        key.sum = 0;
        for (i, &w) in key.words.iter().enumerate().take(key.used) {
            key.sum = key.sum.wrapping_add(hash_word(w, i));
        }
        true
    }

    /// Builds the key of `rec` into `key` as a [`CompactKey`], if its words
    /// fit in one (and the keys' slots tile the key, as C lays them out);
    /// `false` if not. Built in place: returned, the key was copied on
    /// every event (`rep movsq`, ten words).
    #[inline(always)]
    pub fn compact_key(&self, rec: &[u8], here: impl Here, key: &mut CompactKey) -> bool {
        self.tiled && self.fill_compact_key(rec, here, key).is_some()
    }

    #[inline(always)]
    pub(super) fn fill_compact_key(
        &self,
        rec: &[u8],
        here: impl Here,
        key: &mut CompactKey,
    ) -> Option<()> {
        key.n_slots = self.n_keys;
        let mut at = 0;
        for (op, slot) in self
            .keys
            .iter()
            .zip(key.slots.iter_mut())
            .take(self.n_keys())
        {
            let room = key.words.get_mut(at..)?;
            let used = match op.load {
                KeyPart::Word(load) => {
                    *room.first_mut()? = load.eval(rec);
                    1
                }
                KeyPart::Str(s) => {
                    let (src, size) = s.locate(rec);
                    let slot = usize::from(op.words);
                    let fits = room.len().min(slot);
                    // The words up to the string's NUL, or the whole slot.
                    match str_words(room.get_mut(..fits)?, rec, src, size)? {
                        n if n == fits && fits < slot => return None,
                        n => n,
                    }
                }
                KeyPart::Comm => {
                    let slot = COMM_SLOT / 8;
                    let fits = room.len().min(slot);
                    let comm = comm_bytes(here);
                    match str_words(room.get_mut(..fits)?, &comm, 0, COMM_SLOT - 1)? {
                        n if n == fits && fits < slot => return None,
                        n => n,
                    }
                }
            };
            *slot = Slot {
                start: op.word,
                size: op.words,
                at: at as u8,
                used: used as u8,
            };
            at += used;
        }
        Some(())
    }
}
