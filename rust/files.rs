// SPDX-License-Identifier: GPL-2.0

//! The per-event files `rhist`, `rhist_debug` and `rhist_json` (`hist`,
//! `hist_debug` and `hist_json` in hist's place, see
//! [`crate::names::NAMES`]): they appear in every event directory while
//! the module is loaded and show the event's rhist triggers, as `hist` and
//! `hist_debug` show its hist triggers, and as one JSON document
//! ([`crate::hist::json`]). The `hist` file can be polled, as hist's:
//! readable once the event's histograms changed since the file was last
//! read, and `EPOLLPRI` once they changed since it was last read or
//! polled.
//!
//! The text files are single-record seq_files, as hist's: the whole text
//! is written into the seq_file's buffer, which grows to hold it. The
//! JSON file streams: one record per entry ([`JsonCursor`]), so that its
//! buffer stays a page or so whatever the histogram's size.

use core::cell::{Cell, UnsafeCell};
use core::fmt;
use core::ptr;
use kernel::ffi::{c_int, c_void};

use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::{KBox, KVVec};
use kernel::bindings;
use kernel::error::{code, Error};
use kernel::prelude::*;

use crate::command;
use crate::event::KernelSymbols;
use crate::hist::histogram::KEY_SIZE_MAX;
use crate::hist::json;
use crate::hist::map::SUMS_MAX;
use crate::hist::output::ValStat;
use crate::poll::Poller;
use crate::tracefs::{self, EventMutexGuard, EventMutexHeld, SeqWriter};

/// A file's operations and its registration record, filled in at load time
/// with the module's owner pointer.
struct EventFile {
    fops: UnsafeCell<bindings::file_operations>,
    entry: UnsafeCell<bindings::trace_event_extra_file>,
}

// SAFETY: written only in `Registration::new()`, before the tracing core
// can see the file; read-only afterwards.
unsafe impl Sync for EventFile {}

impl EventFile {
    const fn new(name: &'static core::ffi::CStr, show: ShowFn) -> Self {
        Self {
            fops: UnsafeCell::new(bindings::file_operations {
                open: Some(show.open()),
                read: Some(bindings::seq_read),
                llseek: Some(bindings::seq_lseek),
                release: match show {
                    ShowFn::Json => Some(release_json),
                    _ => Some(release),
                },
                poll: match show {
                    ShowFn::Hist => Some(poll_hist),
                    ShowFn::Debug | ShowFn::Json => None,
                },
                // SAFETY: all-zero is a valid `file_operations` (no ops).
                ..unsafe { core::mem::zeroed() }
            }),
            entry: UnsafeCell::new(bindings::trace_event_extra_file {
                name: name.as_ptr().cast(),
                mode: 0o440,
                fops: core::ptr::null(),
            }),
        }
    }
}

/// Which show function a file uses.
#[derive(Clone, Copy)]
enum ShowFn {
    Hist,
    Debug,
    /// The JSON file's seq_operations ([`JSON_SEQ_OPS`]).
    Json,
}

impl ShowFn {
    const fn open(
        self,
    ) -> unsafe extern "C" fn(*mut bindings::inode, *mut bindings::file) -> c_int {
        match self {
            ShowFn::Hist => open_hist,
            ShowFn::Debug => open_debug,
            ShowFn::Json => open_json,
        }
    }
}

static HIST_FILE: EventFile = EventFile::new(crate::names::NAMES.command, ShowFn::Hist);
static DEBUG_FILE: EventFile = EventFile::new(crate::names::NAMES.debug_file, ShowFn::Debug);
static JSON_FILE: EventFile = EventFile::new(crate::names::NAMES.json_file, ShowFn::Json);

/// The files, in the order they are added.
static FILES: [&EventFile; 3] = [&HIST_FILE, &DEBUG_FILE, &JSON_FILE];

/// The files, added to every event directory while this lives.
pub(crate) struct Registration(());

impl Registration {
    pub(crate) fn new(module: &'static ThisModule) -> Result<Self> {
        for file in FILES {
            // SAFETY: nothing else accesses the statics before they are added
            // below (see the `Sync` impl).
            unsafe {
                (*file.fops.get()).owner = module.as_ptr();
                (*file.entry.get()).fops = file.fops.get();
            }
        }
        for (i, file) in FILES.iter().enumerate() {
            // SAFETY: `file` is static and initialised.
            let ret = unsafe { bindings::trace_event_add_extra_file(file.entry.get()) };
            if ret == 0 {
                continue;
            }
            // SAFETY: as above; `name` is a static C string.
            let name = unsafe { core::ffi::CStr::from_ptr((*file.entry.get()).name.cast()) };
            pr_err!(
                "cannot add the per-event file '{}' (error {ret})\n",
                name.to_str().unwrap_or("?")
            );
            for added in FILES[..i].iter().rev() {
                // SAFETY: added above.
                unsafe { bindings::trace_event_remove_extra_file(added.entry.get()) };
            }
            return Err(Error::from_errno(ret));
        }
        Ok(Self(()))
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        for file in FILES.iter().rev() {
            // SAFETY: all were added by `new()`. Open files pin the module.
            unsafe { bindings::trace_event_remove_extra_file(file.entry.get()) };
        }
    }
}

/// What an open file keeps, the seq_file's private data (C's
/// `hist_file_data`). The cells are used under `event_mutex` only.
struct OpenFile {
    /// The `struct file`, through which the event file is found.
    filp: *mut bindings::file,
    /// The event's hits when the file was last read.
    last_read: Cell<u64>,
    /// The event's hits when the file was last read or polled.
    last_act: Cell<u64>,
    /// Its part in the count of polled files.
    poller: Poller,
    /// Where a read of the JSON file is (unused by the others). Used by
    /// the JSON file's seq_operations, which the seq_file calls under
    /// its own lock, one reader at a time, and by its release.
    json: UnsafeCell<JsonCursor>,
}

/// The hits of every rhist trigger of `file`, summed: C's
/// `get_hist_hit_count()`.
///
/// # Safety
///
/// `file` must be live.
unsafe fn event_hits(held: EventMutexHeld<'_>, file: *mut bindings::trace_event_file) -> u64 {
    let mut hits = 0u64;
    // SAFETY: `file` is live; nothing is unlinked meanwhile.
    for data in unsafe { tracefs::triggers(held, file) } {
        // SAFETY: `data` is on the list, so live.
        if unsafe { command::is_ours(data) } {
            // SAFETY: as above; `data` is an rhist trigger.
            hits = hits.wrapping_add(unsafe { command::state(held, data) }.hist().hits());
        }
    }
    hits
}

/// How a file's seq_file shows it.
#[derive(Clone, Copy)]
enum Seq {
    /// One record, written by this show function (`single_open()`).
    Single(unsafe extern "C" fn(*mut bindings::seq_file, *mut c_void) -> c_int),
    /// Records, by these operations (`seq_open()`).
    Records(&'static bindings::seq_operations),
}

/// Opens a file: pins the event file and trace array, then a seq_file
/// whose private pointer is an [`OpenFile`].
///
/// # Safety
///
/// Called by the VFS with a valid inode and file of an event directory.
unsafe fn open(inode: *mut bindings::inode, filp: *mut bindings::file, seq: Seq) -> c_int {
    // SAFETY: the inode's private data is the event file (eventfs).
    let ret = unsafe { bindings::tracing_open_file_tr(inode, filp) };
    if ret != 0 {
        return ret;
    }
    let opened = (|| -> Result {
        let last_act = {
            let guard = EventMutexGuard::lock();
            // SAFETY: `filp` is being opened on a file of an event
            // directory.
            let file = unsafe { tracefs::event_file(guard.held(), filp) };
            if file.is_null() {
                return Err(code::ENODEV);
            }
            // SAFETY: `file` is live (`event_file()`).
            unsafe { event_hits(guard.held(), file) }
        };
        let state = KBox::new(
            OpenFile {
                filp,
                last_read: Cell::new(0),
                last_act: Cell::new(last_act),
                poller: Poller::new(),
                json: UnsafeCell::new(JsonCursor::new()),
            },
            GFP_KERNEL,
        )?;
        let state = KBox::into_raw(state);
        // `tracing_open_file_tr()` left the event file in `private_data`,
        // where `single_open()` and `seq_open()` want to put the seq_file.
        // SAFETY: `filp` is being opened; `show` and `ops` match the
        // seq_file contract; `seq_open()` succeeded, so `private_data` is
        // its seq_file.
        let ret = unsafe {
            (*filp).private_data = core::ptr::null_mut();
            match seq {
                Seq::Single(show) => bindings::single_open(filp, Some(show), state.cast()),
                Seq::Records(ops) => {
                    let ret = bindings::seq_open(filp, ops);
                    if ret == 0 {
                        (*(*filp).private_data.cast::<bindings::seq_file>()).private = state.cast();
                    }
                    ret
                }
            }
        };
        if ret != 0 {
            // SAFETY: `state` came from `KBox::into_raw()` above and was
            // not kept.
            drop(unsafe { KBox::from_raw(state) });
            return Err(Error::from_errno(ret));
        }
        Ok(())
    })();
    match opened {
        Ok(()) => 0,
        Err(e) => {
            // SAFETY: undoes `tracing_open_file_tr()`.
            unsafe { bindings::tracing_release_file_tr(inode, filp) };
            e.to_errno()
        }
    }
}

/// Releases a file [`open`] opened.
///
/// # Safety
///
/// Called by the VFS only, for the last reference of `filp`, an `rhist` or
/// `rhist_debug` file opened by this module, whose `inode` is live.
unsafe extern "C" fn release(inode: *mut bindings::inode, filp: *mut bindings::file) -> c_int {
    // SAFETY: `open()` made `filp` a seq_file whose private data is an
    // `OpenFile` from `KBox::into_raw()`; this is its last use.
    let state = unsafe {
        let m = (*filp).private_data.cast::<bindings::seq_file>();
        KBox::from_raw((*m).private.cast::<OpenFile>())
    };
    drop(state);
    // SAFETY: undoes `open()`'s `single_open()` and
    // `tracing_open_file_tr()`.
    unsafe { bindings::tracing_single_release_file_tr(inode, filp) }
}

// The poll bits of include/uapi/linux/eventpoll.h (casts, to bindgen).
const EPOLLIN: bindings::__poll_t = 0x1;
const EPOLLPRI: bindings::__poll_t = 0x2;
const EPOLLERR: bindings::__poll_t = 0x8;
const EPOLLRDNORM: bindings::__poll_t = 0x40;

/// Releases an `rhist_json` file [`open`] opened.
///
/// # Safety
///
/// Called by the VFS only, for the last reference of `filp`, an
/// `rhist_json` file opened by this module, whose `inode` is live.
unsafe extern "C" fn release_json(inode: *mut bindings::inode, filp: *mut bindings::file) -> c_int {
    // SAFETY: `open()` made `filp` a seq_file whose private data is an
    // `OpenFile` from `KBox::into_raw()`; this is its last use.
    let state = unsafe {
        let m = (*filp).private_data.cast::<bindings::seq_file>();
        KBox::from_raw((*m).private.cast::<OpenFile>())
    };
    drop(state);
    // SAFETY: undoes `open()`'s `seq_open()`, then
    // `tracing_open_file_tr()`.
    unsafe {
        bindings::seq_release(inode, filp);
        bindings::tracing_release_file_tr(inode, filp)
    }
}

/// `poll()` of the `hist` file, as `event_hist_poll()`.
///
/// # Safety
///
/// Called by the VFS only, for `filp`, an open `rhist` file, and `wait`,
/// the caller's poll table or null.
unsafe extern "C" fn poll_hist(
    filp: *mut bindings::file,
    wait: *mut bindings::poll_table_struct,
) -> bindings::__poll_t {
    let guard = EventMutexGuard::lock();
    // SAFETY: `filp` is open (`open()` made it a seq_file with an
    // `OpenFile`), and the VFS keeps it so for the call.
    let state = unsafe {
        &*(*(*filp).private_data.cast::<bindings::seq_file>())
            .private
            .cast::<OpenFile>()
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
unsafe extern "C" fn open_hist(inode: *mut bindings::inode, filp: *mut bindings::file) -> c_int {
    // SAFETY: forwarded from the VFS.
    unsafe { open(inode, filp, Seq::Single(show_hist)) }
}

/// `open()` of an `rhist_debug` file.
///
/// # Safety
///
/// Called by the VFS only, for the live `inode` of an `rhist_debug` file
/// and `filp`, the file being opened.
unsafe extern "C" fn open_debug(inode: *mut bindings::inode, filp: *mut bindings::file) -> c_int {
    // SAFETY: forwarded from the VFS.
    unsafe { open(inode, filp, Seq::Single(show_debug)) }
}

/// `open()` of an `rhist_json` file.
///
/// # Safety
///
/// Called by the VFS only, for the live `inode` of an `rhist_json` file
/// and `filp`, the file being opened.
unsafe extern "C" fn open_json(inode: *mut bindings::inode, filp: *mut bindings::file) -> c_int {
    // SAFETY: forwarded from the VFS.
    unsafe { open(inode, filp, Seq::Records(&JSON_SEQ_OPS)) }
}

/// Writes, for every rhist trigger of the event behind `m`, the header
/// C's hist file starts each histogram with, then what `each` writes.
/// Stops at the first error, which becomes the read's.
///
/// # Safety
///
/// `m` must be a seq_file opened by [`open`].
unsafe fn for_each_trigger(
    m: *mut bindings::seq_file,
    mut each: impl FnMut(&mut SeqWriter, &command::Trigger) -> Result,
) -> c_int {
    let guard = EventMutexGuard::lock();
    let held = guard.held();
    // SAFETY: `open()` stored an `OpenFile` as the seq_file's private.
    let state = unsafe { &*(*m).private.cast::<OpenFile>() };
    // SAFETY: `state.filp` is the file being read, of an event directory.
    let file = unsafe { tracefs::event_file(held, state.filp) };
    if file.is_null() {
        return code::ENODEV.to_errno();
    }
    // SAFETY: `m` is being shown, for as long as this call.
    let mut out = unsafe { SeqWriter::new(m) };
    let mut n = 0;
    // SAFETY: `file` is live (`event_file()`); nothing is unlinked
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
        unsafe { command::write_info(held, &mut out, data) };
        out.bytes(b"#\n\n");
        // SAFETY: as above; the borrow ends with this iteration.
        if let Err(e) = each(&mut out, unsafe { command::state(held, data) }) {
            return e.to_errno();
        }
        n += 1;
    }
    // A read counts for poll() from now on (`hist_show()`).
    // SAFETY: `file` is live.
    let hits = unsafe { event_hits(held, file) };
    state.last_read.set(hits);
    state.last_act.set(hits);
    0
}

/// `show()` of an `rhist` file: every rhist histogram of the event.
///
/// # Safety
///
/// Called by seq_file only, for `m`, the seq_file of an open `rhist` file.
unsafe extern "C" fn show_hist(m: *mut bindings::seq_file, _v: *mut c_void) -> c_int {
    let each = |out: &mut SeqWriter, trigger: &command::Trigger| -> Result {
        let hist = trigger.hist();
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
    let each = |out: &mut SeqWriter, trigger: &command::Trigger| -> Result {
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

/// The operations of the JSON file's seq_file: one record per piece of
/// the document (its start, each histogram's head, each entry, each
/// histogram's tail, its end), `event_mutex` held from `start()` to
/// `stop()` as the tracing core's event lists hold it.
static JSON_SEQ_OPS: bindings::seq_operations = bindings::seq_operations {
    start: Some(json_start),
    stop: Some(json_stop),
    next: Some(json_next),
    show: Some(json_show),
};

/// A record of the JSON document.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    /// `{"version":1,"histograms":[`
    DocStart,
    /// A histogram's fields, up to its entries.
    Head,
    /// One entry.
    Entry,
    /// A histogram's snapshot and totals.
    Tail,
    /// `]}`
    DocEnd,
    /// Past the end.
    Done,
    /// Moving here failed: what reading it gives.
    Failed(Error),
}

/// Where a read of an `rhist_json` file is: the record at seq_file
/// position `pos`. A histogram's entries are sorted once, when its head
/// is reached, and kept across `read()`s (C's `hist` file, a single
/// record, sorts them again for each larger buffer it tries).
struct JsonCursor {
    /// The seq_file position of the record.
    pos: i64,
    /// What the record is.
    step: Step,
    /// The histogram of `Head`, `Entry` and `Tail`: its trigger's place
    /// among the event's rhist triggers, and its address, both checked
    /// again by each `start()` (the lock was dropped in between).
    trig_no: usize,
    data: *mut bindings::event_trigger_data,
    /// Its entries, sorted (`order[..n]`; `max_elts` long).
    order: KVVec<u32>,
    n: usize,
    /// The entry of `Entry`.
    at: usize,
    /// Its columns, for `.percent` and `.graph`.
    stats: [ValStat; SUMS_MAX],
}

impl JsonCursor {
    fn new() -> Self {
        Self {
            pos: 0,
            step: Step::DocStart,
            trig_no: 0,
            data: ptr::null_mut(),
            order: KVVec::new(),
            n: 0,
            at: 0,
            stats: [ValStat::default(); SUMS_MAX],
        }
    }

    /// Back to the document's start, the sorted entries freed.
    fn reset(&mut self) {
        *self = Self::new();
    }

    /// The rhist trigger number `no` of `file`.
    ///
    /// # Safety
    ///
    /// `file` must be live.
    unsafe fn nth_trigger(
        held: EventMutexHeld<'_>,
        file: *mut bindings::trace_event_file,
        no: usize,
    ) -> Option<*mut bindings::event_trigger_data> {
        // SAFETY: `file` is live; nothing is unlinked meanwhile.
        let mut ours = unsafe { tracefs::triggers(held, file) }
            // SAFETY: a trigger on the list is live.
            .filter(|&data| unsafe { command::is_ours(data) });
        ours.nth(no)
    }

    /// Moves to the head of histogram `no`, sorting its entries, or to
    /// the document's end when there is none.
    ///
    /// # Safety
    ///
    /// `file` must be live.
    unsafe fn enter(
        &mut self,
        held: EventMutexHeld<'_>,
        file: *mut bindings::trace_event_file,
        no: usize,
    ) -> Result {
        self.order = KVVec::new();
        self.data = ptr::null_mut();
        // SAFETY: the caller's contract.
        let Some(data) = (unsafe { Self::nth_trigger(held, file, no) }) else {
            self.step = Step::DocEnd;
            return Ok(());
        };
        // SAFETY: `data` is a live rhist trigger (`nth_trigger()`).
        let hist = unsafe { command::state(held, data) }.hist();
        self.order
            .extend_with(hist.map().max_elts(), 0, GFP_KERNEL)?;
        self.n = hist.sort_entries(&mut self.order);
        self.stats = hist.column_stats(self.order.get(..self.n).unwrap_or(&[]));
        (self.step, self.trig_no, self.data, self.at) = (Step::Head, no, data, 0);
        Ok(())
    }

    /// Moves to the next record.
    ///
    /// # Safety
    ///
    /// `file` must be live, and [`holds`](Self::holds) true.
    unsafe fn advance(&mut self, held: EventMutexHeld<'_>, file: *mut bindings::trace_event_file) {
        let moved = match self.step {
            // SAFETY: the caller's contract.
            Step::DocStart => unsafe { self.enter(held, file, 0) },
            Step::Head | Step::Entry => {
                self.at = if self.step == Step::Head {
                    0
                } else {
                    self.at + 1
                };
                self.step = if self.at < self.n {
                    Step::Entry
                } else {
                    Step::Tail
                };
                Ok(())
            }
            // SAFETY: the caller's contract.
            Step::Tail => unsafe { self.enter(held, file, self.trig_no + 1) },
            Step::DocEnd | Step::Done | Step::Failed(_) => {
                self.step = Step::Done;
                Ok(())
            }
        };
        if let Err(e) = moved {
            self.step = Step::Failed(e);
        }
        self.pos += 1;
    }

    /// Whether the record's histogram is still the one whose entries
    /// were sorted: the same trigger at the same place, with a map of
    /// the same size (so that every sorted index is one of its
    /// elements).
    ///
    /// # Safety
    ///
    /// `file` must be live.
    unsafe fn holds(
        &self,
        held: EventMutexHeld<'_>,
        file: *mut bindings::trace_event_file,
    ) -> bool {
        if !matches!(self.step, Step::Head | Step::Entry | Step::Tail) {
            return true;
        }
        // SAFETY: the caller's contract.
        if unsafe { Self::nth_trigger(held, file, self.trig_no) } != Some(self.data) {
            return false;
        }
        // SAFETY: `data` is a live rhist trigger (just found).
        let hist = unsafe { command::state(held, self.data) }.hist();
        hist.map().max_elts() == self.order.len()
    }

    /// Writes the record.
    ///
    /// # Safety
    ///
    /// [`holds`](Self::holds) must be true, under the same hold of the
    /// lock.
    unsafe fn show(&self, held: EventMutexHeld<'_>, out: &mut SeqWriter) -> Result {
        // The writes do not fail: the seq_file records an overflow.
        let trigger = match self.step {
            Step::DocStart => {
                let _ = json::write_doc_start(out);
                return Ok(());
            }
            Step::DocEnd => {
                let _ = json::write_doc_end(out);
                return Ok(());
            }
            Step::Done => return Ok(()),
            Step::Failed(e) => return Err(e),
            // SAFETY: `data` is a live rhist trigger (`holds()`).
            Step::Head | Step::Entry | Step::Tail => unsafe { command::state(held, self.data) },
        };
        let hist = trigger.hist();
        let entries = self.order.get(..self.n).unwrap_or(&[]);
        match self.step {
            Step::Head => {
                // SAFETY: as above.
                let info = unsafe { command::info_parts(held, self.data) };
                let _ = hist.write_json_head(out, self.trig_no, &info, &self.stats);
            }
            Step::Entry => {
                if let Some(&idx) = entries.get(self.at) {
                    let mut first = self.at == 0;
                    let _ = hist.write_json_entry(out, idx, &mut first, &KernelSymbols);
                }
            }
            _ => {
                let mut key = [0u8; KEY_SIZE_MAX];
                let snapshot = trigger.last_snapshot(&mut key);
                let _ = hist.write_json_tail(
                    out,
                    entries,
                    &self.stats,
                    &KernelSymbols,
                    snapshot.as_ref(),
                );
            }
        }
        Ok(())
    }
}

/// The cursor and the event file of the JSON file behind `m`.
///
/// # Safety
///
/// `m` must be the seq_file of an open `rhist_json` file, in one of its
/// seq_operations (under the seq_file's lock, with `event_mutex` held
/// for `'a`), and the cursor not otherwise borrowed.
unsafe fn json_cursor<'a>(
    held: EventMutexHeld<'a>,
    m: *mut bindings::seq_file,
) -> (&'a mut JsonCursor, *mut bindings::trace_event_file) {
    // SAFETY: `open()` stored an `OpenFile` as the seq_file's private;
    // the seq_file's lock makes this the cursor's only user.
    let state = unsafe { &*(*m).private.cast::<OpenFile>() };
    // SAFETY: as above.
    let cursor = unsafe { &mut *state.json.get() };
    // SAFETY: `state.filp` is the file being read, of an event directory.
    (cursor, unsafe { tracefs::event_file(held, state.filp) })
}

/// `start()` of the JSON file: takes `event_mutex` (until `stop()`) and
/// finds the record at `*pos`.
///
/// # Safety
///
/// Called by seq_file only, for `m`, the seq_file of an open
/// `rhist_json` file, and its position `pos`.
unsafe extern "C" fn json_start(
    m: *mut bindings::seq_file,
    pos: *mut bindings::loff_t,
) -> *mut c_void {
    // SAFETY: `event_mutex` is a static, initialised mutex; `json_stop()`
    // releases it, which seq_file calls after every `start()`.
    unsafe { bindings::mutex_lock(ptr::addr_of_mut!(bindings::event_mutex)) };
    // SAFETY: taken just above, until `json_stop()`.
    let held = unsafe { EventMutexHeld::assume() };
    // SAFETY: the seq_file's contract (see `json_cursor()`).
    let (cursor, file) = unsafe { json_cursor(held, m) };
    if file.is_null() {
        return code::ENODEV.to_ptr();
    }
    // SAFETY: `pos` is the seq_file's.
    let pos = unsafe { *pos };
    if pos == 0 || pos < cursor.pos {
        cursor.reset();
    }
    // A read that goes on holds its histogram, or fails: the document
    // cannot go on with another one's entries.
    // SAFETY: `file` is live (`event_file()`).
    if !unsafe { cursor.holds(held, file) } {
        cursor.step = Step::Failed(code::EAGAIN);
    }
    // A seek: the records before `pos` again.
    while cursor.pos < pos && cursor.step != Step::Done {
        // SAFETY: `file` is live; `holds()` after each move.
        unsafe { cursor.advance(held, file) };
    }
    match cursor.step {
        Step::Done => ptr::null_mut(),
        Step::Failed(e) => e.to_ptr(),
        _ => ptr::from_mut(cursor).cast(),
    }
}

/// `next()` of the JSON file.
///
/// # Safety
///
/// Called by seq_file only, between `json_start()` and `json_stop()`,
/// for `m`, the seq_file of an open `rhist_json` file, and its position
/// `pos`.
unsafe extern "C" fn json_next(
    m: *mut bindings::seq_file,
    _v: *mut c_void,
    pos: *mut bindings::loff_t,
) -> *mut c_void {
    // SAFETY: `json_start()` took the lock, until `json_stop()`.
    let held = unsafe { EventMutexHeld::assume() };
    // SAFETY: the seq_file's contract (see `json_cursor()`).
    let (cursor, file) = unsafe { json_cursor(held, m) };
    if file.is_null() {
        cursor.step = Step::Failed(code::ENODEV);
        cursor.pos += 1;
    } else {
        // SAFETY: `file` is live; the record was found by `json_start()`
        // or moved to under the same hold.
        unsafe { cursor.advance(held, file) };
    }
    // SAFETY: `pos` is the seq_file's.
    unsafe { *pos = cursor.pos };
    match cursor.step {
        Step::Done => ptr::null_mut(),
        _ => ptr::from_mut(cursor).cast(),
    }
}

/// `show()` of the JSON file: the record the cursor is at.
///
/// # Safety
///
/// Called by seq_file only, between `json_start()` and `json_stop()`,
/// for `m`, the seq_file of an open `rhist_json` file.
unsafe extern "C" fn json_show(m: *mut bindings::seq_file, _v: *mut c_void) -> c_int {
    // SAFETY: `json_start()` took the lock, until `json_stop()`.
    let held = unsafe { EventMutexHeld::assume() };
    // SAFETY: the seq_file's contract (see `json_cursor()`).
    let (cursor, _) = unsafe { json_cursor(held, m) };
    // SAFETY: `m` is being shown.
    let mut out = unsafe { SeqWriter::new(m) };
    // SAFETY: `json_start()` checked `holds()`, and every move since
    // was under this hold of the lock.
    match unsafe { cursor.show(held, &mut out) } {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `stop()` of the JSON file: releases `event_mutex`.
///
/// # Safety
///
/// Called by seq_file only, after `json_start()`.
unsafe extern "C" fn json_stop(_m: *mut bindings::seq_file, _v: *mut c_void) {
    // SAFETY: `json_start()` took the lock.
    unsafe { bindings::mutex_unlock(ptr::addr_of_mut!(bindings::event_mutex)) };
}
