// SPDX-License-Identifier: GPL-2.0

//! The text files `rhist` and `rhist_debug`: single-record seq_files, as
//! hist's, the whole text written into the seq_file's buffer, which grows
//! to hold it; and the `rhist` file's poll(), as `event_hist_poll()`.

use core::fmt;
use core::ptr;
use kernel::ffi::c_void;

use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::{KVVec, KVec};
use kernel::bindings;
use kernel::error::code;
use kernel::prelude::*;

use super::open::{event_hits, EventSeqFile, OpenFile, Poll, ShowWhole};
use crate::command::{self, Detached};
use crate::event::KernelSymbols;
use crate::hist::histogram::{Histogram, Snapshot, KEY_SIZE_MAX};
use crate::kernel_ext::seq_file::SeqFile;
use crate::tracefs::{EventMutexGuard, EventMutexHeld};
use crate::tracing::EventFile;

// The poll bits of include/uapi/linux/eventpoll.h (casts, to bindgen).
const EPOLLIN: bindings::__poll_t = 0x1;
const EPOLLPRI: bindings::__poll_t = 0x2;
const EPOLLRDNORM: bindings::__poll_t = 0x40;

/// The `rhist` file: every rhist histogram of the event.
pub(super) struct HistFile;

/// The `rhist_debug` file: each rhist trigger's hist data.
pub(super) struct DebugFile;

impl EventSeqFile for HistFile {
    type Reader = ();

    fn reader() {}
}

impl EventSeqFile for DebugFile {
    type Reader = ();

    fn reader() {}
}

impl Poll for HistFile {
    /// As `event_hist_poll()`: readable once the event's histograms
    /// changed since the file was last read, `EPOLLPRI` once they changed
    /// since it was last read or polled.
    fn poll(
        held: EventMutexHeld<'_>,
        state: &OpenFile<()>,
        file: &EventFile,
    ) -> bindings::__poll_t {
        let hits = event_hits(held, file);
        let mut mask = 0;
        if state.last_read.get(held) != hits {
            mask |= EPOLLIN | EPOLLRDNORM;
        }
        if state.last_act.replace(held, hits) != hits {
            mask |= EPOLLPRI;
        }
        mask
    }
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

/// Writes into `out`, for every rhist trigger of the event of the file of
/// `state`, the header C's hist file starts each histogram with, then
/// what `each` writes.
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
fn for_each_trigger(state: &OpenFile<()>, out: &mut SeqFile, each: &mut Each<'_>) -> Result {
    // A retry with a larger buffer: the text is written already.
    let guard = EventMutexGuard::lock();
    if let Some(too_large) = state.too_large.take(guard.held()) {
        if out.overflow_below(too_large.need) {
            state.too_large.set(guard.held(), Some(too_large));
            return Ok(());
        }
        drop(guard);
        too_large.text.copy_to(out);
        return Ok(());
    }
    drop(guard);
    let text = write_text(state, each)?;
    // One byte more: a buffer exactly full counts as overflowed.
    let need = text.len().saturating_add(1);
    if out.overflow_below(need) {
        let guard = EventMutexGuard::lock();
        state
            .too_large
            .set(guard.held(), Some(TooLarge { need, text }));
        return Ok(());
    }
    text.copy_to(out);
    Ok(())
}

/// [`for_each_trigger`]'s text. The histograms detached are released
/// with the lock held, or, on an error while it is not, dropped (each
/// then takes it).
fn write_text(state: &OpenFile<()>, each: &mut Each<'_>) -> Result<Text> {
    for attempt in 0..=DETACHED_TRIES {
        // Before the guard: on an early return, dropped after it.
        let mut later = KVec::new();
        let guard = EventMutexGuard::lock();
        let held = guard.held();
        let file = state.event_file(held).ok_or(code::ENODEV)?;
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
        let mut guard = EventMutexGuard::lock();
        let mut scope = guard.scope();
        let held = scope.held();
        let stands = later.iter().all(|(_, d)| d.unchanged(held));
        if stands {
            // A read counts for poll() from now on (`hist_show()`).
            state.last_read.set(held, hits);
            state.last_act.set(held, hits);
        }
        for (_, detached) in later {
            detached.release(&mut scope);
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

impl ShowWhole for HistFile {
    /// Every rhist histogram of the event, as `hist_show()`.
    fn show(state: &OpenFile<()>, out: &mut SeqFile) -> Result {
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
        for_each_trigger(state, out, &mut each)
    }
}

impl ShowWhole for DebugFile {
    /// Each rhist trigger's hist data, as `hist_debug_show()`.
    fn show(state: &OpenFile<()>, out: &mut SeqFile) -> Result {
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
        for_each_trigger(state, out, &mut each)
    }
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
