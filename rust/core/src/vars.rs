// SPDX-License-Identifier: GPL-2.0

//! Variables that keep a copy of their value in each entry: a string, a
//! stack trace, an `.execname` or `common_comm` (C's fields with a `var_str_idx`, whose
//! copies are the strings of `hist_elt_data.field_var_str[]`).
//!
//! A number variable is a word of the entry. A string in the record is
//! gone once the event is, so C copies it into the entry, in a buffer of
//! [`STR_VAR_LEN_MAX`] bytes, and the variable points at the copy; a
//! trigger on another event reads it from there. rhist keeps the copies in
//! the entry's private words, after the saved command name, one
//! [`STR_VAR_WORDS`]-word slot per such variable in the order they are
//! defined; the variable itself holds its slot's number.

use super::event::EventContext;
use super::output::STACKTRACE_DEPTH;

/// The size of one copy (C's `STR_VAR_LEN_MAX`, `MAX_FILTER_STR_VAL`).
pub const STR_VAR_LEN_MAX: usize = 256;

/// The words of one copy.
pub const STR_VAR_WORDS: usize = STR_VAR_LEN_MAX / 8;

/// What a variable copies into its entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarCopy {
    /// A string of the record (`x=s`), NUL-terminated.
    String,
    /// The current stack (`x=common_stacktrace`, or a stack trace field,
    /// for which C too saves the current stack): a count of frames, then
    /// the frames.
    Stack,
    /// The command name saved with the entry (`x=common_pid.execname`).
    Execname,
    /// The current task's command name (`x=common_comm`).
    Comm,
}

/// Writes the copy a variable keeps (`copy`) for one record into `out`,
/// zeroed first, as `hist_trigger_elt_update()` fills the entry's buffer:
/// for a string, `string()` gives the record from the string's start and
/// the most bytes to take, the NUL included
/// ([`HistData::var_string`](super::hist_data::HistData::var_string)),
/// asked only then; `comm` is the command name the entry was saved with.
pub fn write_copy<'r>(
    copy: Option<VarCopy>,
    string: impl FnOnce() -> (&'r [u8], usize),
    ctx: &dyn EventContext,
    comm: &[u8; 16],
    out: &mut [u8; STR_VAR_LEN_MAX],
) {
    out.fill(0);
    match copy {
        Some(VarCopy::String) => {
            let (src, size) = string();
            strscpy(out, src, size);
        }
        Some(VarCopy::Execname) => strscpy(out, comm, STR_VAR_LEN_MAX),
        Some(VarCopy::Comm) => strscpy(out, &ctx.comm(), STR_VAR_LEN_MAX),
        Some(VarCopy::Stack) => {
            let mut frames = [0u64; STACKTRACE_DEPTH];
            ctx.stacktrace(&mut frames);
            let n = frames.iter().position(|&f| f == 0).unwrap_or(frames.len());
            let words = core::iter::once(n as u64).chain(frames);
            for (chunk, word) in out.chunks_exact_mut(8).zip(words) {
                chunk.copy_from_slice(&word.to_ne_bytes());
            }
        }
        None => {}
    }
}

/// C's `strscpy(dst, src, size)` into a zeroed `dst`: at most `size - 1`
/// bytes of `src` up to its first NUL, then a NUL; nothing for size 0. A
/// string that runs past `src` ends there.
fn strscpy(dst: &mut [u8], src: &[u8], size: usize) {
    let limit = size.saturating_sub(1).min(dst.len().saturating_sub(1));
    for (d, &s) in dst.iter_mut().zip(src).take(limit) {
        if s == 0 {
            break;
        }
        *d = s;
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn strscpy_stops_at_nul_size_and_source() {
        // (destination length, source, size, expected destination)
        let cases: [(usize, &[u8], usize, &[u8]); 5] = [
            (8, b"abc\0def", 8, b"abc\0\0\0\0\0"),
            (8, b"abcdefghij", 4, b"abc\0\0\0\0\0"),
            (4, b"abcdefghij", 100, b"abc\0"),
            (8, b"ab", 8, b"ab\0\0\0\0\0\0"),
            (8, b"ab", 0, &[0; 8]),
        ];
        for (len, src, size, want) in cases {
            let mut out = [0u8; 8];
            strscpy(&mut out[..len], src, size);
            assert_eq!(&out[..len], want, "{src:?} size {size}");
        }
    }
}
