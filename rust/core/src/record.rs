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
/// `__data_loc` of the field, a count and the frames.  C copies as many
/// frames as the count says; here at most [`STACKTRACE_DEPTH`], and frames
/// beyond the record read as 0.
pub(super) fn read_stack(rec: &[u8], at: u32, entries: &mut [u64; STACKTRACE_DEPTH]) {
    let loc = (rec_u32(rec, at as usize) & 0xffff) as usize;
    let n = rec_u64(rec, loc).min(STACKTRACE_DEPTH as u64) as usize;
    for (i, e) in entries.iter_mut().enumerate().take(n) {
        *e = rec_u64(rec, loc + 8 + 8 * i);
    }
}
