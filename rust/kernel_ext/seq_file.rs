// SPDX-License-Identifier: GPL-2.0

//! The `seq_file` being shown, as a show function or a `seq_operations`
//! callback sees it (`include/linux/seq_file.h`): bytes and formatted
//! text written into its buffer, whose overflow seq_file answers by
//! showing the record again with a buffer twice as large. The 6.12
//! kernel crate has no seq_file abstraction.
//!
//! # Examples
//!
//! A show function that writes one line:
//!
//! ```ignore
//! use core::fmt::Write;
//! use crate::kernel_ext::seq_file::SeqFile;
//!
//! /// # Safety
//! ///
//! /// Called by seq_file only, for `m`, a seq_file being shown.
//! unsafe extern "C" fn show(m: *mut bindings::seq_file, _v: *mut c_void) -> c_int {
//!     // SAFETY: seq_file calls `show()` with `m` being shown.
//!     let out = unsafe { SeqFile::from_raw(m) };
//!     let _ = writeln!(out, "{} entries", 42);
//!     0
//! }
//! ```

use core::fmt;

use kernel::bindings;
use kernel::types::Opaque;

/// A `struct seq_file` being shown.
///
/// # Invariants
///
/// The seq_file is being shown, by the task that holds this reference,
/// for as long as the reference lives: `seq_read_iter()` holds its lock
/// around the show, so no one else reads or writes its buffer, count,
/// size and position meanwhile.
#[repr(transparent)]
pub(crate) struct SeqFile(Opaque<bindings::seq_file>);

impl SeqFile {
    /// The seq_file at `m`, for the duration of a show.
    ///
    /// # Safety
    ///
    /// `m` must be a seq_file being shown for all of `'a`: the show
    /// function of a `single_open()` file, or a callback of its
    /// `seq_operations`, called by `seq_read_iter()` (which holds its
    /// lock) or by a caller that holds it likewise; and no other
    /// reference to it may be used for `'a`.
    pub(crate) unsafe fn from_raw<'a>(m: *mut bindings::seq_file) -> &'a mut SeqFile {
        // SAFETY: `SeqFile` is a transparent wrapper of `seq_file`, and
        // `m` is valid and used by no one else for `'a` (the caller's
        // contract).
        // INVARIANT: the caller's contract.
        unsafe { &mut *m.cast::<SeqFile>() }
    }

    /// The raw pointer, for C.
    fn as_raw(&self) -> *mut bindings::seq_file {
        self.0.get()
    }

    /// The fields that the task showing the seq_file alone reads and
    /// writes: its position (`index`), its buffer's `count` and `size`.
    fn fields(&mut self) -> (&mut bindings::loff_t, &mut usize, usize) {
        let m = self.as_raw();
        // SAFETY: the seq_file is being shown by this task (invariant),
        // under its lock, which all that read or write these fields hold
        // (`seq_read_iter()`, `traverse()`, `seq_lseek()`): they are this
        // task's alone for the borrow of `self`.
        unsafe { (&mut (*m).index, &mut (*m).count, (*m).size) }
    }

    /// The position of the read (`m->index`): what seq_file passes to a
    /// `start()` and a `next()` as their `pos`, `&m->index`.
    pub(crate) fn pos(&mut self) -> &mut bindings::loff_t {
        self.fields().0
    }

    /// Writes `bytes` (`seq_write()`). When they do not fit, the buffer
    /// is marked overflowed instead (see [`overflowed()`](Self::overflowed)).
    pub(crate) fn write_bytes(&mut self, bytes: &[u8]) {
        // SAFETY: the seq_file is being shown (invariant), and `bytes` is
        // valid for `bytes.len()` bytes, which `seq_write()` copies.
        unsafe { bindings::seq_write(self.as_raw(), bytes.as_ptr().cast(), bytes.len()) };
    }

    /// Whether the buffer was too small for what was written
    /// (`seq_has_overflowed()`): seq_file then shows the record again
    /// with a buffer twice as large, and what is written after it is
    /// lost.
    pub(crate) fn overflowed(&mut self) -> bool {
        let (_, count, size) = self.fields();
        *count == size
    }

    /// When the buffer is smaller than `need` bytes, marks it
    /// overflowed, as a write past its end does (seq_file's own
    /// `seq_set_overflow()`), without writing: the show is repeated with
    /// a buffer twice as large. Whether it did.
    pub(crate) fn overflow_below(&mut self, need: usize) -> bool {
        let (_, count, size) = self.fields();
        if size >= need {
            return false;
        }
        // `count == size` is how seq_file records an overflow:
        // `seq_read_iter()` then frees the buffer and shows again.
        *count = size;
        true
    }
}

impl fmt::Write for SeqFile {
    /// Fails once the buffer has overflowed: what follows would be lost,
    /// so the writer's caller may stop.
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.write_bytes(s.as_bytes());
        if self.overflowed() {
            return Err(fmt::Error);
        }
        Ok(())
    }
}
