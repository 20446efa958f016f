// SPDX-License-Identifier: GPL-2.0

//! Reading an event record: the numbers, strings and stack traces of its
//! fields at their offsets, as C reads `rec + field->offset`. A read that
//! runs past the end of the record gives 0 (or nothing), never a panic,
//! so a record shorter than its event's `format` says costs a wrong
//! value, not the kernel.

use super::output::STACKTRACE_DEPTH;

/// The `N` bytes at `at` of the record, if they are all there.
#[inline]
fn rec_bytes<const N: usize>(rec: &[u8], at: usize) -> Option<[u8; N]> {
    rec.get(at..at.checked_add(N)?)?.try_into().ok()
}

/// The kernel address of byte `at` of the record, as C computes it.
pub(super) fn address(rec: &[u8], at: usize) -> u64 {
    (rec.as_ptr() as u64).wrapping_add(at as u64)
}

/// A u32 of the record (0 when out of range).
#[inline]
pub(super) fn rec_u32(rec: &[u8], at: usize) -> u32 {
    rec_bytes(rec, at).map_or(0, u32::from_ne_bytes)
}

/// A u64 of the record (0 when out of range).
#[inline]
pub(super) fn rec_u64(rec: &[u8], at: usize) -> u64 {
    rec_bytes(rec, at).map_or(0, u64::from_ne_bytes)
}

/// `(u64)*(type *)(rec + at)`: signed types sign-extend.
#[inline]
pub(super) fn rec_num(rec: &[u8], at: u32, size: u8, signed: bool) -> u64 {
    let at = at as usize;
    match (size, signed) {
        (1, false) => rec_bytes(rec, at).map_or(0, |b| u64::from(u8::from_ne_bytes(b))),
        (1, true) => rec_bytes(rec, at).map_or(0, |b| i8::from_ne_bytes(b) as u64),
        (2, false) => rec_bytes(rec, at).map_or(0, |b| u64::from(u16::from_ne_bytes(b))),
        (2, true) => rec_bytes(rec, at).map_or(0, |b| i16::from_ne_bytes(b) as u64),
        (4, false) => rec_bytes(rec, at).map_or(0, |b| u64::from(u32::from_ne_bytes(b))),
        (4, true) => rec_bytes(rec, at).map_or(0, |b| i32::from_ne_bytes(b) as u64),
        (8, _) => rec_u64(rec, at),
        _ => 0,
    }
}

/// `strncpy(dst, rec + src, size)` into a zeroed `dst`: stops at the
/// first NUL, the end of the record or `size` bytes.
pub(super) fn strncpy_from(dst: &mut [u8], rec: &[u8], src: usize, size: usize) {
    let from = rec.get(src..).unwrap_or(&[]);
    let n = size.min(dst.len()).min(from.len());
    let (Some(d), Some(s)) = (dst.get_mut(..n), from.get(..n)) else {
        return;
    };
    let len = nul_position(s).unwrap_or(n);
    if let (Some(d), Some(s)) = (d.get_mut(..len), s.get(..len)) {
        d.copy_from_slice(s);
    }
}

/// The index of the first NUL byte of `s`, a word at a time.
fn nul_position(s: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut words = s.chunks_exact(8);
    let mut at = 0;
    for word in words.by_ref() {
        let mut b = [0u8; 8];
        b.copy_from_slice(word);
        let v = u64::from_ne_bytes(b);
        // Non-zero exactly when some byte of `v` is zero.
        if v.wrapping_sub(ONES) & !v & HIGHS != 0 {
            break;
        }
        at += 8;
    }
    s.get(at..)?.iter().position(|&b| b == 0).map(|p| at + p)
}

/// `hist_field_stack()` and the copy of `event_hist_trigger()`: at the
/// `__data_loc` of the field, a count and the frames. C copies as many
/// frames as the count says, even past the bytes the `__data_loc`'s
/// length gives: a synthetic event's `trace_stack()` stops at
/// [`STACKTRACE_DEPTH`] words, the count's included, so a full stack's
/// last frame is left out of the record but not out of its reserved
/// space, whose stale bytes C then reads as a frame. Here only the frames
/// that the length holds, at most [`STACKTRACE_DEPTH`]; the rest read 0.
pub(super) fn read_stack(rec: &[u8], at: u32, entries: &mut [u64; STACKTRACE_DEPTH]) {
    let data_loc = rec_u32(rec, at as usize);
    let loc = (data_loc & 0xffff) as usize;
    let held = ((data_loc >> 16) as usize / 8).saturating_sub(1);
    let n = rec_u64(rec, loc).min(STACKTRACE_DEPTH as u64) as usize;
    for (i, e) in entries.iter_mut().enumerate().take(n.min(held)) {
        *e = rec_u64(rec, loc + 8 + 8 * i);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    /// A record with a `__data_loc` at 0 for `words` at 8, `len` bytes
    /// long, and `reserved` more words of stale bytes after them.
    fn record(words: &[u64], len: u32, stale: &[u64]) -> Vec<u8> {
        let mut rec = ((len << 16) | 8).to_ne_bytes().to_vec();
        rec.extend_from_slice(&[0; 4]);
        for w in words.iter().chain(stale) {
            rec.extend_from_slice(&w.to_ne_bytes());
        }
        rec
    }

    #[test]
    fn stack_reads_only_the_frames_its_data_loc_holds() {
        let frames: Vec<u64> = (1..=16).map(|i| 0xffff_ffff_8100_0000 + i).collect();
        // A full stack as trace_stack() writes it: the count and 15
        // frames, then the reserved word it did not write.
        let mut words = vec![16];
        words.extend_from_slice(&frames[..15]);
        let rec = record(&words, 16 * 8, &[0x1582_0000_0005]);
        let mut got = [0u64; STACKTRACE_DEPTH];
        read_stack(&rec, 0, &mut got);
        assert_eq!(&got[..15], &frames[..15]);
        assert_eq!(got[15], 0);

        // A shorter one: all its frames, nothing after them.
        let rec = record(&[3, frames[0], frames[1], frames[2]], 4 * 8, &[7; 2]);
        let mut got = [0u64; STACKTRACE_DEPTH];
        read_stack(&rec, 0, &mut got);
        assert_eq!(got[..4], [frames[0], frames[1], frames[2], 0]);

        // An empty one: trace_stack() writes nothing, not even the count.
        let rec = record(&[], 0, &[16, 5, 6]);
        let mut got = [0u64; STACKTRACE_DEPTH];
        read_stack(&rec, 0, &mut got);
        assert_eq!(got, [0; STACKTRACE_DEPTH]);
    }
}
