// SPDX-License-Identifier: GPL-2.0

//! What the per-event files share: [`EventSeqFile`], a file of an event
//! directory shown through a seq_file, and its C callbacks, written once
//! as the generic adapters [`SingleAdapter`] (a file of one record,
//! `single_open()`) and [`RecordsAdapter`] (a file of records, by
//! `seq_operations`). They open a file (the event file and trace array
//! pinned, a seq_file whose private data is an [`OpenFile`]), read it,
//! poll it and release it; each file's own part is safe code, the
//! traits' methods.
//!
//! Here too, the event's hits that poll() compares.

use core::cell::UnsafeCell;
use core::marker::PhantomData;
use core::ptr;
use kernel::ffi::{c_int, c_void};

use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::KBox;
use kernel::bindings;
use kernel::error::{code, Error};
use kernel::prelude::*;
use kernel::types::ForeignOwnable;

use super::text::TooLarge;
use crate::command;
use crate::kernel_ext::seq_file::SeqFile;
use crate::poll::Poller;
use crate::tracefs::{EventMutexCell, EventMutexGuard, EventMutexHeld, SeqReadHeld};
use crate::tracing::EventFile;

/// A file of an event directory, shown through a seq_file: what one
/// kind of file keeps. How it is shown is [`ShowWhole`] or [`Records`].
pub(super) trait EventSeqFile: Sized + 'static {
    /// What a read of an open file keeps from one seq_file callback to
    /// the next, besides [`OpenFile`]'s: only those callbacks use it,
    /// which seq_file makes one at a time, so each gets it `&mut`. They
    /// may run in any task that reads the file, and `release()` (which
    /// drops it) in another: hence `Send`.
    type Reader: Send + 'static;

    /// The reader of a file just opened.
    fn reader() -> Self::Reader;
}

/// A file of one record (`single_open()`), written whole by
/// [`show`](Self::show).
pub(super) trait ShowWhole: EventSeqFile {
    /// Writes the file into `out`: seq_file's `show()`. On an overflow of
    /// `out`, seq_file calls it again with a buffer twice as large.
    fn show(state: &OpenFile<Self::Reader>, out: &mut SeqFile) -> Result;
}

/// A [`ShowWhole`] file that can be polled.
pub(super) trait Poll: ShowWhole {
    /// The poll mask of the file of `state`, whose event file is `file`,
    /// counted as polled and waiting on the pollers' queue since the lock
    /// was taken.
    fn poll(
        held: EventMutexHeld<'_>,
        state: &OpenFile<Self::Reader>,
        file: &EventFile,
    ) -> bindings::__poll_t;
}

/// Where a [`Records`] file's read is.
pub(super) enum Record {
    /// At a record, which `show()` writes.
    At,
    /// Past the last.
    End,
    /// Failed: the read returns the error.
    Failed(Error),
}

/// A file of records, read by seq_file's `start()`, `next()`, `show()`
/// and `stop()`, with `event_mutex` held from `start()` to `stop()`
/// ([`SeqReadHeld`]).
pub(super) trait Records: EventSeqFile {
    /// Moves `reader` to the record at seq_file position `pos`: `start()`.
    fn start(
        held: SeqReadHeld<'_>,
        state: &OpenFile<Self::Reader>,
        reader: &mut Self::Reader,
        pos: i64,
    ) -> Record;

    /// Moves `reader` to the next record, `pos` to its position: `next()`.
    fn next(
        held: SeqReadHeld<'_>,
        state: &OpenFile<Self::Reader>,
        reader: &mut Self::Reader,
        pos: &mut i64,
    ) -> Record;

    /// Writes the record `reader` is at into `out`: `show()`.
    fn show(
        held: SeqReadHeld<'_>,
        state: &OpenFile<Self::Reader>,
        reader: &Self::Reader,
        out: &mut SeqFile,
    ) -> Result;
}

/// What an open file keeps, the seq_file's private data (C's
/// `hist_file_data`), with what one kind of file's reads keep (`reader`).
/// Its cells are read and written with `event_mutex` held, as their type
/// says.
///
/// # Invariants
///
/// - `filp` is open, or being opened, on a file of an event directory,
///   for as long as the value lives: an adapter's `open()` makes it for
///   the file it opens, its `release()` drops it before the file is
///   released.
/// - `reader` is used only through [`reading`], by seq_file's callbacks
///   for the file, which seq_file makes one at a time, under its lock.
pub(super) struct OpenFile<T> {
    /// The `struct file`, through which the event file is found.
    filp: *mut bindings::file,
    /// The event's hits when the file was last read.
    pub(super) last_read: EventMutexCell<u64>,
    /// The event's hits when the file was last read or polled.
    pub(super) last_act: EventMutexCell<u64>,
    /// Its part in the count of polled files.
    poller: Poller,
    /// The last text too large for seq_file's buffer, if any (the text
    /// files'): the retries skip writing until a buffer holds it.
    pub(super) too_large: EventMutexCell<Option<TooLarge>>,
    /// What the kind of file's reads keep.
    reader: UnsafeCell<T>,
}

impl<T> OpenFile<T> {
    /// C's `event_file_file()`: the event file of the open file, or
    /// `None` once the event is being removed; live while the lock is
    /// held.
    pub(super) fn event_file<'a>(&'a self, held: EventMutexHeld<'a>) -> Option<&'a EventFile> {
        // SAFETY: `filp` is open, or being opened, on a file of an event
        // directory for as long as `self` lives (invariant).
        unsafe { EventFile::of_open_file(held, self.filp) }
    }
}

/// The hits of every rhist trigger of `file`, summed: C's
/// `get_hist_hit_count()`.
pub(super) fn event_hits(held: EventMutexHeld<'_>, file: &EventFile) -> u64 {
    file.triggers(held)
        .filter_map(|data| command::state(held, data))
        .fold(0u64, |hits, t| hits.wrapping_add(t.hist(held).hits()))
}

/// The owner of an [`OpenFile`] while it is the seq_file's private data.
type Owned<T> = KBox<OpenFile<T>>;

/// How a file's seq_file shows it.
#[derive(Clone, Copy)]
enum Seq {
    /// One record, written by this show function (`single_open()`).
    Single(unsafe extern "C" fn(*mut bindings::seq_file, *mut c_void) -> c_int),
    /// Records, by these operations (`seq_open()`).
    Records(&'static bindings::seq_operations),
}

/// The callbacks of one kind of file, `F`, shown as [`SEQ`](Self::SEQ)
/// says: [`open`] and [`release`] written once for all.
trait Adapter {
    /// The file.
    type F: EventSeqFile;
    /// How its seq_file shows it.
    const SEQ: Seq;
}

/// What a read of an `A` file keeps.
type ReaderOf<A> = <<A as Adapter>::F as EventSeqFile>::Reader;

/// The operations of an `A` file, owned by this module.
const fn seq_fops<A: Adapter>(
    poll: Option<
        unsafe extern "C" fn(
            *mut bindings::file,
            *mut bindings::poll_table_struct,
        ) -> bindings::__poll_t,
    >,
) -> bindings::file_operations {
    bindings::file_operations {
        owner: &raw mut bindings::__this_module,
        open: Some(open::<A>),
        read: Some(bindings::seq_read),
        llseek: Some(bindings::seq_lseek),
        release: Some(release::<A>),
        poll,
        // SAFETY: all-zero is a valid `file_operations` (no ops).
        ..unsafe { core::mem::zeroed() }
    }
}

/// `open()`: pins the event file and trace array, then opens a seq_file
/// whose private data is an [`OpenFile`] with the reader of an `A::F`.
///
/// # Safety
///
/// Called by the VFS only, for the inode of a file with `A`'s operations
/// and `filp`, the file being opened.
unsafe extern "C" fn open<A: Adapter>(
    inode: *mut bindings::inode,
    filp: *mut bindings::file,
) -> c_int {
    // SAFETY: `A`'s operations are only those of files the module adds to
    // every event directory (`files::ExtraFile`), so `inode` is of such a
    // file, whose private data is the event file (eventfs), and `filp` is
    // being opened on it (this function's contract).
    let ret = unsafe { bindings::tracing_open_file_tr(inode, filp) };
    if ret != 0 {
        return ret;
    }
    let opened = (|| -> Result {
        // INVARIANT: `filp` is being opened on a file of an event
        // directory; the state is dropped below if the open fails, or by
        // `release()`, before the file is released.
        let mut state = OpenFile {
            filp,
            last_read: EventMutexCell::new(0),
            last_act: EventMutexCell::new(0),
            poller: Poller::new(),
            too_large: EventMutexCell::new(None),
            reader: UnsafeCell::new(A::F::reader()),
        };
        let last_act = {
            let guard = EventMutexGuard::lock();
            let file = state.event_file(guard.held()).ok_or(code::ENODEV)?;
            event_hits(guard.held(), file)
        };
        *state.last_act.get_mut() = last_act;
        let state = Owned::<ReaderOf<A>>::new(state, GFP_KERNEL)?;
        // `tracing_open_file_tr()` left the event file in `private_data`,
        // where `single_open()` and `seq_open()` want to put the seq_file;
        // the state becomes the seq_file's private data once it is open.
        // SAFETY: `filp` is being opened; `A::SEQ`'s show function or
        // operations are the adapter's, which find the state as an
        // `OpenFile<ReaderOf<A>>`, and which seq_file calls only once the
        // open returned; where the open succeeded, `private_data` is its
        // seq_file.
        let ret = unsafe {
            (*filp).private_data = ptr::null_mut();
            let ret = match A::SEQ {
                Seq::Single(show) => bindings::single_open(filp, Some(show), ptr::null_mut()),
                Seq::Records(ops) => bindings::seq_open(filp, ops),
            };
            if ret == 0 {
                (*(*filp).private_data.cast::<bindings::seq_file>()).private =
                    state.into_foreign().cast_mut();
            }
            ret
        };
        if ret != 0 {
            // The state is dropped: the open failed.
            return Err(Error::from_errno(ret));
        }
        Ok(())
    })();
    match opened {
        Ok(()) => 0,
        Err(e) => {
            // SAFETY: `tracing_open_file_tr()` succeeded above, and this
            // open fails, so the VFS calls no `release()`: the references
            // it took on the instance and the event file are dropped
            // here, once.
            unsafe { bindings::tracing_release_file_tr(inode, filp) };
            e.to_errno()
        }
    }
}

/// `release()`: drops the [`OpenFile`], then the seq_file and the pins.
///
/// # Safety
///
/// Called by the VFS only, for the last reference of `filp`, opened by
/// [`open`], and its inode.
unsafe extern "C" fn release<A: Adapter>(
    inode: *mut bindings::inode,
    filp: *mut bindings::file,
) -> c_int {
    // SAFETY: `open::<A>()` made `filp` a seq_file (its `private_data`)
    // whose private data, which seq_file leaves as it is, came from
    // `into_foreign()` of an `Owned<ReaderOf<A>>`; the VFS calls
    // `release()` once, for the last reference of the file, when no other
    // callback of it runs or will: it is taken back once, and the borrows
    // of it, each for one callback, are over.
    drop(unsafe {
        let m = (*filp).private_data.cast::<bindings::seq_file>();
        Owned::<ReaderOf<A>>::from_foreign((*m).private)
    });
    // SAFETY: undoes `open()`'s `single_open()` or `seq_open()`, and its
    // `tracing_open_file_tr()`, once each.
    unsafe {
        match A::SEQ {
            Seq::Single(_) => bindings::tracing_single_release_file_tr(inode, filp),
            Seq::Records(_) => {
                bindings::seq_release(inode, filp);
                bindings::tracing_release_file_tr(inode, filp)
            }
        }
    }
}

/// The state of the open `F` file whose seq_file is `m`, its reader, and
/// the seq_file, for one seq_file callback.
///
/// # Safety
///
/// `m` must be the seq_file of a file that `F`'s adapter opened, in a
/// show function or seq_operations callback made by seq_file, under the
/// seq_file's lock (`m->lock`, which `seq_read_iter()` and `traverse()`
/// hold around every call), and `'a` must end with that callback.
unsafe fn reading<'a, F: EventSeqFile>(
    m: *mut bindings::seq_file,
) -> (&'a OpenFile<F::Reader>, &'a mut F::Reader, &'a mut SeqFile) {
    // SAFETY: `open()` set the seq_file's private data, which seq_file
    // leaves as it is, from `into_foreign()` of an `Owned<F::Reader>`; it
    // is taken back only by `release()`, which the VFS calls once no read
    // of the file is under way, after `'a` (this function's contract).
    let state = unsafe { Owned::<F::Reader>::borrow((*m).private) };
    // SAFETY: the reader is used only here, by seq_file's callbacks for
    // the file (invariant of `OpenFile`), which hold the seq_file's lock
    // for `'a` (this function's contract): this is its only use for `'a`.
    let reader = unsafe { &mut *state.reader.get() };
    // SAFETY: seq_file makes the callback with `m` being shown, under its
    // lock, for `'a` (this function's contract); the state and reader
    // borrowed are other objects.
    let out = unsafe { SeqFile::from_raw(m) };
    (state, reader, out)
}

/// The callbacks of a [`ShowWhole`] file `F`: a single-record seq_file.
pub(super) struct SingleAdapter<F>(PhantomData<F>);

impl<F: ShowWhole> Adapter for SingleAdapter<F> {
    type F = F;
    const SEQ: Seq = Seq::Single(Self::show);
}

impl<F: ShowWhole> SingleAdapter<F> {
    /// The file's operations.
    pub(super) const FOPS: bindings::file_operations = seq_fops::<Self>(None);

    /// `show()` of the seq_file.
    ///
    /// # Safety
    ///
    /// Called by seq_file only, for `m`, the seq_file of a file opened by
    /// [`open`].
    unsafe extern "C" fn show(m: *mut bindings::seq_file, _v: *mut c_void) -> c_int {
        // SAFETY: `single_open()` in `open()` made `m` the seq_file of an
        // `F` file, whose show function only seq_file calls, under its
        // lock, for this call.
        let (state, _, out) = unsafe { reading::<F>(m) };
        match F::show(state, out) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }
}

/// The poll bit of an error (include/uapi/linux/eventpoll.h).
const EPOLLERR: bindings::__poll_t = 0x8;

impl<F: Poll> SingleAdapter<F> {
    /// The operations of a file that can be polled.
    pub(super) const POLLED_FOPS: bindings::file_operations = seq_fops::<Self>(Some(Self::poll));

    /// `poll()`, as `event_hist_poll()`: `EPOLLERR` once the event is
    /// being removed.
    ///
    /// # Safety
    ///
    /// Called by the VFS only, for `filp`, a file opened by [`open`], and
    /// `wait`, the caller's poll table or null.
    unsafe extern "C" fn poll(
        filp: *mut bindings::file,
        wait: *mut bindings::poll_table_struct,
    ) -> bindings::__poll_t {
        let guard = EventMutexGuard::lock();
        // SAFETY: `open()` made `filp`, open for this call, a seq_file (its
        // `private_data`) whose private data came from `into_foreign()`
        // of an `Owned<F::Reader>`, taken back only by `release()`, which
        // the VFS calls once no `poll()` is under way.
        let state = unsafe {
            let m = (*filp).private_data.cast::<bindings::seq_file>();
            Owned::<F::Reader>::borrow((*m).private)
        };
        let Some(file) = state.event_file(guard.held()) else {
            return EPOLLERR;
        };
        // SAFETY: `filp` and `wait` are the VFS's for this `poll()`.
        unsafe { state.poller.wait(guard.held(), filp, wait) };
        F::poll(guard.held(), state, file)
    }
}

/// The callbacks of a [`Records`] file `F`: a seq_file of records, read
/// with `event_mutex` held from `start()` to `stop()`.
pub(super) struct RecordsAdapter<F>(PhantomData<F>);

impl<F: Records> Adapter for RecordsAdapter<F> {
    type F = F;
    const SEQ: Seq = Seq::Records(&Self::SEQ_OPS);
}

impl<F: Records> RecordsAdapter<F> {
    /// The file's operations.
    pub(super) const FOPS: bindings::file_operations = seq_fops::<Self>(None);

    /// The seq_file's operations.
    const SEQ_OPS: bindings::seq_operations = bindings::seq_operations {
        start: Some(Self::start),
        stop: Some(Self::stop),
        next: Some(Self::next),
        show: Some(Self::show),
    };

    /// What `start()` and `next()` return for `record`: a pointer that is
    /// neither null nor an error (the reader's; seq_file only hands it
    /// back), null, or the error.
    fn record_ptr(record: Record, reader: &mut F::Reader) -> *mut c_void {
        match record {
            Record::At => ptr::from_mut(reader).cast(),
            Record::End => ptr::null_mut(),
            Record::Failed(e) => e.to_ptr(),
        }
    }

    /// `start()`: takes `event_mutex`, until `stop()`.
    ///
    /// # Safety
    ///
    /// Called by seq_file only, for `m`, the seq_file of a file opened by
    /// [`open`], and its position (`&m->index`).
    unsafe extern "C" fn start(
        m: *mut bindings::seq_file,
        _pos: *mut bindings::loff_t,
    ) -> *mut c_void {
        // SAFETY: `seq_open()` in `open()` made `m` the seq_file of an `F`
        // file, whose operations only seq_file calls, under its lock, for
        // this call.
        let (state, reader, m) = unsafe { reading::<F>(m) };
        let pos = *m.pos();
        // SAFETY: this is the `start()` of `F`'s seq_operations, whose
        // `stop()` (below) calls `unlock_after_read()`.
        unsafe {
            SeqReadHeld::lock_for_read(|held| {
                Self::record_ptr(F::start(held, state, reader, pos), reader)
            })
        }
    }

    /// `next()`.
    ///
    /// # Safety
    ///
    /// Called by seq_file only, between `start()` and `stop()`, for `m`,
    /// the seq_file of a file opened by [`open`], and its position
    /// (`&m->index`).
    unsafe extern "C" fn next(
        m: *mut bindings::seq_file,
        _v: *mut c_void,
        _pos: *mut bindings::loff_t,
    ) -> *mut c_void {
        // SAFETY: seq_file calls `next()` between a `start()` and its
        // `stop()`, in their task; this `start()` takes the lock with
        // `lock_for_read()` and this `stop()` alone releases it.
        let held = unsafe { SeqReadHeld::assume() };
        // SAFETY: `seq_open()` in `open()` made `m` the seq_file of an `F`
        // file, whose operations only seq_file calls, under its lock, for
        // this call.
        let (state, reader, m) = unsafe { reading::<F>(m) };
        Self::record_ptr(F::next(held, state, reader, m.pos()), reader)
    }

    /// `show()`.
    ///
    /// # Safety
    ///
    /// Called by seq_file only, between `start()` and `stop()`, for `m`,
    /// the seq_file of a file opened by [`open`].
    unsafe extern "C" fn show(m: *mut bindings::seq_file, _v: *mut c_void) -> c_int {
        // SAFETY: seq_file calls `show()` between a `start()` and its
        // `stop()`, in their task; this `start()` takes the lock with
        // `lock_for_read()` and this `stop()` alone releases it.
        let held = unsafe { SeqReadHeld::assume() };
        // SAFETY: `seq_open()` in `open()` made `m` the seq_file of an `F`
        // file, whose operations only seq_file calls, under its lock, for
        // this call.
        let (state, reader, out) = unsafe { reading::<F>(m) };
        match F::show(held, state, reader, out) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// `stop()`: releases `event_mutex`.
    ///
    /// # Safety
    ///
    /// Called by seq_file only, after `start()`, for the seq_file of a
    /// file opened by [`open`].
    unsafe extern "C" fn stop(_m: *mut bindings::seq_file, _v: *mut c_void) {
        // SAFETY: seq_file calls `stop()` after every `start()`, whatever
        // it returned, in its task; this `start()` took the lock with
        // `lock_for_read()`.
        unsafe { SeqReadHeld::unlock_after_read() };
    }
}
