// SPDX-License-Identifier: GPL-2.0

//! The text files `rhist` and `rhist_debug`: single-record seq_files, as
//! hist's, the whole text written into the seq_file's buffer, which grows
//! to hold it; and the `rhist` file's poll(), as `event_hist_poll()`.

use core::fmt;
use core::ptr;
use kernel::ffi::{c_int, c_void};

use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::{KVVec, KVec};
use kernel::bindings;
use kernel::error::code;
use kernel::prelude::*;

use super::open::{event_hits, open, OpenFile, Seq};
use crate::command::{self, Detached};
use crate::event::KernelSymbols;
use crate::hist::histogram::{Histogram, Snapshot, KEY_SIZE_MAX};
use crate::kernel_ext::seq_file::SeqFile;
use crate::tracefs::{EventMutexGuard, EventMutexHeld};
use crate::tracing::EventFile;

// The poll bits of include/uapi/linux/eventpoll.h (casts, to bindgen).
const EPOLLIN: bindings::__poll_t = 0x1;
const EPOLLPRI: bindings::__poll_t = 0x2;
const EPOLLERR: bindings::__poll_t = 0x8;
const EPOLLRDNORM: bindings::__poll_t = 0x40;

/// `poll()` of the `hist` file, as `event_hist_poll()`.
///
/// # Safety
///
/// Called by the VFS only, for `filp`, an open `rhist` file, and `wait`,
/// the caller's poll table or null.
pub(super) unsafe extern "C" fn poll_hist(
    filp: *mut bindings::file,
    wait: *mut bindings::poll_table_struct,
) -> bindings::__poll_t {
    let guard = EventMutexGuard::lock();
    // SAFETY: `filp` is open (`open()` made it a seq_file with an
    // `OpenFile`), and the VFS keeps it so for the call.
    let state = unsafe {
        &*(*(*filp).private_data.cast::<bindings::seq_file>())
            .private
            .cast::<OpenFile<()>>()
    };
    // SAFETY: `filp` is open, and an `rhist` file is in an event
    // directory.
    let Some(file) = (unsafe { EventFile::of_open_file(guard.held(), filp) }) else {
        return EPOLLERR;
    };
    // SAFETY: `filp` and `wait` come from the VFS for this call.
    unsafe { state.poller.wait(guard.held(), filp, wait) };
    let hits = event_hits(guard.held(), file);
    let mut mask = 0;
    if state.last_read.get(guard.held()) != hits {
        mask |= EPOLLIN | EPOLLRDNORM;
    }
    if state.last_act.replace(guard.held(), hits) != hits {
        mask |= EPOLLPRI;
    }
    mask
}

/// `open()` of an `rhist` file.
///
/// # Safety
///
/// Called by the VFS only, for the live `inode` of an `rhist` file and
/// `filp`, the file being opened.
pub(super) unsafe extern "C" fn open_hist(
    inode: *mut bindings::inode,
    filp: *mut bindings::file,
) -> c_int {
    // SAFETY: forwarded from the VFS.
    unsafe { open(inode, filp, Seq::Single(show_hist), ()) }
}

/// `open()` of an `rhist_debug` file.
///
/// # Safety
///
/// Called by the VFS only, for the live `inode` of an `rhist_debug` file
/// and `filp`, the file being opened.
pub(super) unsafe extern "C" fn open_debug(
    inode: *mut bindings::inode,
    filp: *mut bindings::file,
) -> c_int {
    // SAFETY: forwarded from the VFS.
    unsafe { open(inode, filp, Seq::Single(show_debug), ()) }
}

/// Bytes written into a vector that may be vmalloc()ed; a failed
/// allocation is remembered (the read then fails with `ENOMEM`).
struct Chunk {
    bytes: KVVec<u8>,
    failed: bool,
}

impl Chunk {
    fn new() -> Self {
        Chunk {
            bytes: KVVec::new(),
            failed: false,
        }
    }

    fn bytes(&mut self, b: &[u8]) {
        if !self.failed && self.bytes.extend_from_slice(b, GFP_KERNEL).is_err() {
            self.failed = true;
        }
    }
}

impl fmt::Write for Chunk {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.bytes(s.as_bytes());
        if self.failed {
            return Err(fmt::Error);
        }
        Ok(())
    }
}

/// A text file's text, as pieces: those written with `event_mutex` held,
/// and the bodies of histograms written once it was dropped, each in the
/// place kept for it.
pub(super) struct Text {
    chunks: KVec<Chunk>,
    failed: bool,
}

impl Text {
    pub(super) fn new() -> Self {
        Text {
            chunks: KVec::new(),
            failed: false,
        }
    }

    /// Writes raw bytes at the end.
    fn bytes(&mut self, b: &[u8]) {
        if self.chunks.is_empty() {
            self.new_chunk();
        }
        match self.chunks.last_mut() {
            Some(c) => c.bytes(b),
            None => self.failed = true,
        }
    }

    /// Starts a new piece; its index.
    fn new_chunk(&mut self) -> usize {
        if self.chunks.push(Chunk::new(), GFP_KERNEL).is_err() {
            self.failed = true;
        }
        self.chunks.len().saturating_sub(1)
    }

    fn failed(&self) -> bool {
        self.failed || self.chunks.iter().any(|c| c.failed)
    }

    fn len(&self) -> usize {
        self.chunks.iter().map(|c| c.bytes.len()).sum()
    }

    fn copy_to(&self, out: &mut SeqFile) {
        for c in self.chunks.iter() {
            out.write_bytes(&c.bytes);
        }
    }
}

impl fmt::Write for Text {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.bytes(s.as_bytes());
        if self.failed() {
            return Err(fmt::Error);
        }
        Ok(())
    }
}

/// A text too large for the seq_file's buffer: written once for a read,
/// and copied by the retry whose buffer has room for it.
pub(super) struct TooLarge {
    /// The bytes a buffer must have.
    need: usize,
    text: Text,
}

/// What a file writes for one trigger, after its header, with the lock
/// held: its body, or, when allowed to (`true`), the histogram detached,
/// whose body is then written with the lock dropped
/// ([`write_detached`]).
type Each<'e> =
    dyn FnMut(&mut Text, EventMutexHeld<'_>, &command::Trigger, bool) -> Option<Detached> + 'e;

/// How many times a text with detached histograms is written before it
/// is written with the lock held throughout.
const DETACHED_TRIES: usize = 3;

/// Writes, for every rhist trigger of the event behind `m`, the header
/// C's hist file starts each histogram with, then what `each` writes.
///
/// The text is written once per read, into memory of the open file's,
/// and copied into seq_file's buffer: when it is too small, the retries
/// seq_file makes with buffers twice as large are marked overflowed at
/// once until one holds the text, which is then copied (131,072 entries:
/// eleven retries, one text).
///
/// `event_mutex` is held while the triggers are listed and what must be
/// read under it is written; the histograms that `each` detaches (those
/// with percentiles, whose writing is long) are written after it is
/// dropped, and the text stands if, with it taken again, none of them
/// was cleared or grown meanwhile: it then describes each histogram at
/// one moment, as `hist`'s does. Otherwise it is written again, the last
/// time with the lock held throughout.
///
/// # Safety
///
/// `m` must be a seq_file opened by [`open`], being shown (in its show
/// function) for the whole call.
unsafe fn for_each_trigger(m: *mut bindings::seq_file, each: &mut Each<'_>) -> c_int {
    // SAFETY: `m` is being shown, for as long as this call.
    let out = unsafe { SeqFile::from_raw(m) };
    // SAFETY: `open()` stored an `OpenFile<()>` as the seq_file's
    // private, freed only as the file is released, after every show.
    let state = unsafe { &*out.private().cast::<OpenFile<()>>() };
    // A retry with a larger buffer: the text is written already.
    let guard = EventMutexGuard::lock();
    if let Some(too_large) = state.too_large.take(guard.held()) {
        if out.overflow_below(too_large.need) {
            state.too_large.set(guard.held(), Some(too_large));
            return 0;
        }
        drop(guard);
        too_large.text.copy_to(out);
        return 0;
    }
    drop(guard);
    // SAFETY: `state.filp` is the file being read, of an event directory.
    let text = match unsafe { write_text(state, each) } {
        Ok(text) => text,
        Err(e) => return e.to_errno(),
    };
    // One byte more: a buffer exactly full counts as overflowed.
    let need = text.len().saturating_add(1);
    if out.overflow_below(need) {
        let guard = EventMutexGuard::lock();
        state
            .too_large
            .set(guard.held(), Some(TooLarge { need, text }));
        return 0;
    }
    text.copy_to(out);
    0
}

/// [`for_each_trigger`]'s text. The histograms detached are released
/// with the lock held, or, on an error while it is not, dropped (each
/// then takes it).
///
/// # Safety
///
/// `state.filp` must be an open file of an event directory.
unsafe fn write_text(state: &OpenFile<()>, each: &mut Each<'_>) -> Result<Text> {
    for attempt in 0..=DETACHED_TRIES {
        // Before the guard: on an early return, dropped after it.
        let mut later = KVec::new();
        let guard = EventMutexGuard::lock();
        let held = guard.held();
        // SAFETY: `state.filp` is an open file of an event directory (this
        // function's contract).
        let file = unsafe { EventFile::of_open_file(held, state.filp) }.ok_or(code::ENODEV)?;
        let may_detach = attempt < DETACHED_TRIES;
        let mut text = write_triggers(held, file, each, may_detach, &mut later)?;
        let hits = event_hits(held, file);
        drop(guard);
        for (at, detached) in later.iter() {
            let mut body = Chunk::new();
            write_detached(&mut body, detached)?;
            if let Some(c) = text.chunks.get_mut(*at) {
                *c = body;
            }
        }
        let guard = EventMutexGuard::lock();
        let held = guard.held();
        let stands = later.iter().all(|(_, d)| d.unchanged(held));
        if stands {
            // A read counts for poll() from now on (`hist_show()`).
            state.last_read.set(held, hits);
            state.last_act.set(held, hits);
        }
        for (_, detached) in later {
            detached.release(held);
        }
        drop(guard);
        if text.failed() {
            return Err(code::ENOMEM);
        }
        if stands {
            return Ok(text);
        }
    }
    Err(code::EAGAIN)
}

/// The triggers' part of [`write_text`] with the lock held, into a new
/// text: `later` gets each detached histogram and the index of the piece
/// kept for its body.
fn write_triggers(
    held: EventMutexHeld<'_>,
    file: &EventFile,
    each: &mut Each<'_>,
    may_detach: bool,
    later: &mut KVec<(usize, Detached)>,
) -> Result<Text> {
    let mut text = Text::new();
    let mut n = 0;
    for data in file.triggers(held) {
        let Some(trigger) = command::state(held, data) else {
            continue;
        };
        if n > 0 {
            text.bytes(b"\n\n");
        }
        text.bytes(b"# event histogram\n#\n# trigger info: ");
        for part in command::info_parts(held, data, trigger) {
            text.bytes(part);
        }
        text.bytes(b"\n#\n\n");
        // Room first: a `Detached` dropped here, with the lock held, would
        // take it again; pushed within the capacity, none is.
        later.reserve(1, GFP_KERNEL)?;
        if let Some(detached) = each(&mut text, held, trigger, may_detach) {
            let at = text.new_chunk();
            let _ = later.push((at, detached), GFP_KERNEL);
            text.new_chunk();
        }
        n += 1;
    }
    Ok(text)
}

/// A histogram's entries and totals, with its snapshot's details, into
/// `out`: the body of the `rhist` file's part.
fn write_body(
    out: &mut dyn fmt::Write,
    hist: &Histogram<'_>,
    snapshot: Option<&Snapshot<'_>>,
) -> Result {
    // Scratch for sorting: every element's index.
    let mut order = KVVec::<u32>::new();
    order.extend_with(hist.map().max_elts(), 0, GFP_KERNEL)?;
    let _ = hist.print_with_snapshot(out, &KernelSymbols, order.as_mut_slice(), snapshot);
    Ok(())
}

/// [`write_body`] of a detached histogram, without the lock.
fn write_detached(out: &mut Chunk, detached: &Detached) -> Result {
    let Some(hist) = detached.histogram() else {
        return Ok(());
    };
    let mut key = [0u8; KEY_SIZE_MAX];
    let snapshot = detached.last_snapshot(&mut key);
    write_body(out, hist, snapshot.as_ref())
}

/// `show()` of an `rhist` file: every rhist histogram of the event.
///
/// # Safety
///
/// Called by seq_file only, for `m`, the seq_file of an open `rhist` file.
unsafe extern "C" fn show_hist(m: *mut bindings::seq_file, _v: *mut c_void) -> c_int {
    let mut each = |out: &mut Text,
                    held: EventMutexHeld<'_>,
                    trigger: &command::Trigger,
                    may_detach: bool|
     -> Option<Detached> {
        let hist = trigger.hist(held);
        // Percentiles take long to write: without the lock.
        if may_detach && hist.sketches().is_some() {
            if let Some(detached) = trigger.detach(held) {
                return Some(detached);
            }
        }
        let mut key = [0u8; KEY_SIZE_MAX];
        let snapshot = trigger.last_snapshot(&mut key);
        if write_body(out, hist, snapshot.as_ref()).is_err() {
            out.failed = true;
        }
        None
    };
    // SAFETY: the seq_file core calls this with a file `open()` opened.
    unsafe { for_each_trigger(m, &mut each) }
}

/// `show()` of an `rhist_debug` file: each rhist trigger's hist data.
///
/// # Safety
///
/// Called by seq_file only, for `m`, the seq_file of an open
/// `rhist_debug` file.
unsafe extern "C" fn show_debug(m: *mut bindings::seq_file, _v: *mut c_void) -> c_int {
    let mut each = |out: &mut Text,
                    held: EventMutexHeld<'_>,
                    trigger: &command::Trigger,
                    _may_detach: bool|
     -> Option<Detached> {
        let hist_data = trigger.data();
        let ptr = HashedPointer(ptr::from_ref(hist_data).cast());
        // A reference's `var.hist_data`: the referenced hist data, hashed.
        let var_hist_data = |out: &mut dyn fmt::Write, id: Option<u64>| {
            let data = id.and_then(|id| trigger.referenced_data(id));
            match data {
                Some(d) => write!(out, "{}", HashedPointer(ptr::from_ref(d).cast())),
                None => out.write_str("(null)"),
            }
        };
        let _ = hist_data.write_debug_with(out, &ptr, &var_hist_data);
        let _ = trigger.write_grow_debug(held, out);
        None
    };
    // SAFETY: the seq_file core calls this with a file `open()` opened.
    unsafe { for_each_trigger(m, &mut each) }
}

/// An address shown as `%p` shows it: hashed, so that reading the file
/// does not reveal the kernel's layout.
struct HashedPointer(*const c_void);

impl fmt::Display for HashedPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 32];
        // SAFETY: `buf` is writable for its length, which snprintf() is
        // told; the format takes one pointer, which `%p` never
        // dereferences.
        let len = unsafe {
            bindings::snprintf(
                buf.as_mut_ptr().cast(),
                buf.len(),
                c"%p".as_ptr().cast(),
                self.0,
            )
        };
        let len = (len.max(0) as usize).min(buf.len() - 1);
        f.write_str(core::str::from_utf8(&buf[..len]).unwrap_or("(ptrval)"))
    }
}
