// SPDX-License-Identifier: GPL-2.0

//! The JSON file `rhist_json` ([`crate::hist::json`]): it streams, one
//! seq_file record per entry ([`JsonCursor`]), so that its buffer stays a
//! page or so whatever the histogram's size.

use core::cell::UnsafeCell;
use core::ptr;
use kernel::ffi::{c_int, c_void};

use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::KVVec;
use kernel::bindings;
use kernel::error::{code, Error};
use kernel::prelude::*;

use super::open::{drop_state, open, OpenFile, Seq};
use crate::command;
use crate::event::KernelSymbols;
use crate::hist::histogram::KEY_SIZE_MAX;
use crate::hist::json;
use crate::hist::map::SUMS_MAX;
use crate::hist::output::ValStat;
use crate::kernel_ext::seq_file::SeqFile;
use crate::tracefs::EventMutexHeld;
use crate::tracing::{EventFile, TriggerData};

/// What an open `rhist_json` file keeps: where a read of it is, used by
/// its seq_operations, which the seq_file calls under its own lock, one
/// reader at a time, and by its release.
type JsonFile = OpenFile<UnsafeCell<JsonCursor>>;

/// `open()` of an `rhist_json` file.
///
/// # Safety
///
/// Called by the VFS only, for the live `inode` of an `rhist_json` file
/// and `filp`, the file being opened.
pub(super) unsafe extern "C" fn open_json(
    inode: *mut bindings::inode,
    filp: *mut bindings::file,
) -> c_int {
    // SAFETY: forwarded from the VFS.
    unsafe {
        open(
            inode,
            filp,
            Seq::Records(&JSON_SEQ_OPS),
            UnsafeCell::new(JsonCursor::new()),
        )
    }
}

/// Releases an `rhist_json` file [`open`] opened.
///
/// # Safety
///
/// Called by the VFS only, for the last reference of `filp`, an
/// `rhist_json` file opened by this module, whose `inode` is live.
pub(super) unsafe extern "C" fn release_json(
    inode: *mut bindings::inode,
    filp: *mut bindings::file,
) -> c_int {
    // SAFETY: as the caller promises, `open_json()` made `filp` a
    // seq_file holding a `JsonFile`, and this is the last reference.
    unsafe { drop_state::<UnsafeCell<JsonCursor>>(filp) };
    // SAFETY: undoes `open()`'s `seq_open()`, then
    // `tracing_open_file_tr()`.
    unsafe {
        bindings::seq_release(inode, filp);
        bindings::tracing_release_file_tr(inode, filp)
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
    /// (Only compared: it may have been freed since.)
    data: *const TriggerData,
    /// Its contents' version when the head was shown: a `clear`, a grow
    /// or another histogram made at the same address changes it.
    version: u64,
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
            data: ptr::null(),
            version: 0,
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

    /// The rhist trigger number `no` of `file`, with its state.
    fn nth_trigger<'a>(
        held: EventMutexHeld<'a>,
        file: &'a EventFile,
        no: usize,
    ) -> Option<(&'a TriggerData, &'a command::Trigger)> {
        file.triggers(held)
            .filter_map(|data| Some((data, command::state(held, data)?)))
            .nth(no)
    }

    /// Moves to the head of histogram `no`, sorting its entries, or to
    /// the document's end when there is none.
    fn enter(&mut self, held: EventMutexHeld<'_>, file: &EventFile, no: usize) -> Result {
        self.order = KVVec::new();
        self.data = ptr::null();
        let Some((data, trigger)) = Self::nth_trigger(held, file, no) else {
            self.step = Step::DocEnd;
            return Ok(());
        };
        let hist = trigger.hist(held);
        self.order
            .extend_with(hist.map().max_elts(), 0, GFP_KERNEL)?;
        self.n = hist.sort_entries(&mut self.order);
        self.stats = hist.column_stats(self.order.get(..self.n).unwrap_or(&[]));
        self.version = trigger.version(held);
        (self.step, self.trig_no, self.data, self.at) = (Step::Head, no, data, 0);
        Ok(())
    }

    /// Moves to the next record; [`holds`](Self::holds) must be true.
    fn advance(&mut self, held: EventMutexHeld<'_>, file: &EventFile) {
        let moved = match self.step {
            Step::DocStart => self.enter(held, file, 0),
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
            Step::Tail => self.enter(held, file, self.trig_no + 1),
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
    /// were sorted: the same trigger at the same place, with the same
    /// contents (neither cleared nor grown, nor another trigger made at
    /// the same address: [`command::Trigger::version`]) and a map of the
    /// same size (so that every sorted index is one of its elements).
    fn holds(&self, held: EventMutexHeld<'_>, file: &EventFile) -> bool {
        if !matches!(self.step, Step::Head | Step::Entry | Step::Tail) {
            return true;
        }
        let Some((data, trigger)) = Self::nth_trigger(held, file, self.trig_no) else {
            return false;
        };
        if !ptr::eq(data, self.data) {
            return false;
        }
        // The same histogram, neither cleared nor grown since its head:
        // the document describes one state of it, or the read fails.
        // (`hist()` first: with `:grow`, a fold it does is a new version.)
        let max_elts = trigger.hist(held).map().max_elts();
        trigger.version(held) == self.version && max_elts == self.order.len()
    }

    /// Writes the record.
    ///
    /// # Safety
    ///
    /// [`holds`](Self::holds) must be true, under the same hold of the
    /// lock: `data` is then an rhist trigger on the file's list.
    unsafe fn show(&self, held: EventMutexHeld<'_>, out: &mut SeqFile) -> Result {
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
            Step::Head | Step::Entry | Step::Tail => {
                // SAFETY: `data` is on the file's list (`holds()`, under this
                // hold of the lock: the caller's promise), so live while the
                // lock is held.
                let data = unsafe { &*self.data };
                match command::state(held, data) {
                    Some(trigger) => (data, trigger),
                    None => return Err(code::EAGAIN),
                }
            }
        };
        let (data, trigger) = trigger;
        let hist = trigger.hist(held);
        let entries = self.order.get(..self.n).unwrap_or(&[]);
        match self.step {
            Step::Head => {
                let info = command::info_parts(held, data, trigger);
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
) -> (&'a mut JsonCursor, Option<&'a EventFile>) {
    // SAFETY: `open_json()` stored a `JsonFile` as the seq_file's
    // private; the seq_file's lock makes this the cursor's only user.
    let state = unsafe { &*(*m).private.cast::<JsonFile>() };
    // SAFETY: the seq_file's lock, held for the call (this function's
    // contract), makes this the cursor's only user.
    let cursor = unsafe { &mut *state.extra.get() };
    // SAFETY: `state.filp` is the file being read, of an event directory.
    (cursor, unsafe { EventFile::of_open_file(held, state.filp) })
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
    let Some(file) = file else {
        return code::ENODEV.to_ptr();
    };
    // SAFETY: `pos` is the seq_file's.
    let pos = unsafe { *pos };
    if pos == 0 || pos < cursor.pos {
        cursor.reset();
    }
    // A read that goes on holds its histogram, or fails: the document
    // cannot go on with another one's entries.
    if !cursor.holds(held, file) {
        cursor.step = Step::Failed(code::EAGAIN);
    }
    // A seek: the records before `pos` again.
    while cursor.pos < pos && cursor.step != Step::Done {
        // `holds()` after each move.
        cursor.advance(held, file);
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
    match file {
        // The record was found by `json_start()` or moved to under the
        // same hold: `holds()`.
        Some(file) => cursor.advance(held, file),
        None => {
            cursor.step = Step::Failed(code::ENODEV);
            cursor.pos += 1;
        }
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
    let out = unsafe { SeqFile::from_raw(m) };
    // SAFETY: `json_start()` checked `holds()`, and every move since
    // was under this hold of the lock.
    match unsafe { cursor.show(held, out) } {
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
