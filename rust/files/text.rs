// SPDX-License-Identifier: GPL-2.0

//! The text files `rhist` and `rhist_debug`: single-record seq_files, as
//! hist's, the whole text written into the seq_file's buffer, which grows
//! to hold it; and the `rhist` file's poll(), as `event_hist_poll()`.

use core::fmt;
use core::ptr;
use kernel::ffi::{c_int, c_void};

use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::KVVec;
use kernel::bindings;
use kernel::error::code;
use kernel::prelude::*;

use super::open::{event_hits, open, OpenFile, Seq};
use crate::command;
use crate::event::KernelSymbols;
use crate::hist::histogram::KEY_SIZE_MAX;
use crate::tracefs::{self, EventMutexGuard, EventMutexHeld, SeqWriter};

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
    // SAFETY: as above; an `rhist` file is in an event directory.
    let file = unsafe { tracefs::event_file(guard.held(), filp) };
    if file.is_null() {
        return EPOLLERR;
    }
    // SAFETY: `filp` and `wait` come from the VFS for this call.
    unsafe { state.poller.wait(filp, wait) };
    // SAFETY: `file` is live (`event_file()`).
    let hits = unsafe { event_hits(guard.held(), file) };
    let mut mask = 0;
    if state.last_read.get() != hits {
        mask |= EPOLLIN | EPOLLRDNORM;
    }
    if state.last_act.replace(hits) != hits {
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

/// Writes, for every rhist trigger of the event behind `m`, the header
/// C's hist file starts each histogram with, then what `each` writes.
/// Stops at the first error, which becomes the read's.
///
/// A text larger than seq_file's buffer is written once into it, which
/// overflows, then counted: the retries seq_file makes with buffers
/// twice as large are marked overflowed at once until one holds the
/// count, rather than sorting and writing every histogram each time
/// (131,072 entries: eleven retries).
///
/// # Safety
///
/// `m` must be a seq_file opened by [`open`].
unsafe fn for_each_trigger(
    m: *mut bindings::seq_file,
    mut each: impl FnMut(&mut SeqWriter, EventMutexHeld<'_>, &command::Trigger) -> Result,
) -> c_int {
    let guard = EventMutexGuard::lock();
    let held = guard.held();
    // SAFETY: `open()` stored an `OpenFile` as the seq_file's private.
    let state = unsafe { &*(*m).private.cast::<OpenFile<()>>() };
    // SAFETY: `state.filp` is the file being read, of an event directory.
    let file = unsafe { tracefs::event_file(held, state.filp) };
    if file.is_null() {
        return code::ENODEV.to_errno();
    }
    // SAFETY: `m` is being shown, for as long as this call.
    let mut out = unsafe { SeqWriter::new(m) };
    if out.overflow_below(state.need.get()) {
        return 0;
    }
    // SAFETY: `file` is live (`event_file()`).
    if let Err(e) = unsafe { write_triggers(held, file, &mut out, &mut each) } {
        return e.to_errno();
    }
    if out.overflowed() {
        let mut counter = SeqWriter::counter();
        // SAFETY: as above.
        if let Err(e) = unsafe { write_triggers(held, file, &mut counter, &mut each) } {
            return e.to_errno();
        }
        // One byte more: a buffer exactly full counts as overflowed.
        state.need.set(counter.len().saturating_add(1));
        return 0;
    }
    state.need.set(0);
    // A read counts for poll() from now on (`hist_show()`).
    // SAFETY: `file` is live.
    let hits = unsafe { event_hits(held, file) };
    state.last_read.set(hits);
    state.last_act.set(hits);
    0
}

/// [`for_each_trigger`]'s text, into `out`.
///
/// # Safety
///
/// `file` must be live.
unsafe fn write_triggers(
    held: EventMutexHeld<'_>,
    file: *mut bindings::trace_event_file,
    out: &mut SeqWriter,
    each: &mut impl FnMut(&mut SeqWriter, EventMutexHeld<'_>, &command::Trigger) -> Result,
) -> Result {
    let mut n = 0;
    // SAFETY: `file` is live (our contract); nothing is unlinked
    // meanwhile.
    for data in unsafe { tracefs::triggers(held, file) } {
        // SAFETY: `data` is on the list, so live.
        if !unsafe { command::is_ours(data) } {
            continue;
        }
        if n > 0 {
            out.bytes(b"\n\n");
        }
        out.bytes(b"# event histogram\n#\n# trigger info: ");
        // SAFETY: `data` is a live rhist trigger.
        unsafe { command::write_info(held, out, data) };
        out.bytes(b"#\n\n");
        // SAFETY: as above; the borrow ends with this iteration.
        each(out, held, unsafe { command::state(held, data) })?;
        n += 1;
    }
    Ok(())
}

/// `show()` of an `rhist` file: every rhist histogram of the event.
///
/// # Safety
///
/// Called by seq_file only, for `m`, the seq_file of an open `rhist` file.
unsafe extern "C" fn show_hist(m: *mut bindings::seq_file, _v: *mut c_void) -> c_int {
    let each = |out: &mut SeqWriter,
                held: EventMutexHeld<'_>,
                trigger: &command::Trigger|
     -> Result {
        let hist = trigger.hist(held);
        // Scratch for sorting: every element's index.
        let mut order = KVVec::<u32>::new();
        order.reserve(hist.map().max_elts(), GFP_KERNEL)?;
        for _ in 0..hist.map().max_elts() {
            // Cannot fail: reserved above.
            let _ = order.push(0, GFP_KERNEL);
        }
        let mut key = [0u8; KEY_SIZE_MAX];
        let snapshot = trigger.last_snapshot(&mut key);
        let _ =
            hist.print_with_snapshot(out, &KernelSymbols, order.as_mut_slice(), snapshot.as_ref());
        Ok(())
    };
    // SAFETY: the seq_file core calls this with a file `open()` opened.
    unsafe { for_each_trigger(m, each) }
}

/// `show()` of an `rhist_debug` file: each rhist trigger's hist data.
///
/// # Safety
///
/// Called by seq_file only, for `m`, the seq_file of an open
/// `rhist_debug` file.
unsafe extern "C" fn show_debug(m: *mut bindings::seq_file, _v: *mut c_void) -> c_int {
    let each =
        |out: &mut SeqWriter, held: EventMutexHeld<'_>, trigger: &command::Trigger| -> Result {
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
            Ok(())
        };
    // SAFETY: the seq_file core calls this with a file `open()` opened.
    unsafe { for_each_trigger(m, each) }
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
