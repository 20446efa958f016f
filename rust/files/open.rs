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

/// The operations of a seq_file-backed file, owned by this module.
const fn seq_fops(
    open: unsafe extern "C" fn(*mut bindings::inode, *mut bindings::file) -> c_int,
    release: unsafe extern "C" fn(*mut bindings::inode, *mut bindings::file) -> c_int,
    poll: Option<
        unsafe extern "C" fn(
            *mut bindings::file,
            *mut bindings::poll_table_struct,
        ) -> bindings::__poll_t,
    >,
) -> bindings::file_operations {
    bindings::file_operations {
        owner: &raw mut bindings::__this_module,
        open: Some(open),
        read: Some(bindings::seq_read),
        llseek: Some(bindings::seq_lseek),
        release: Some(release),
        poll,
        // SAFETY: all-zero is a valid `file_operations` (no ops).
        ..unsafe { core::mem::zeroed() }
    }
}

/// Opens a file: pins the event file and trace array, then a seq_file
/// whose private data is an [`OpenFile`] with the reader of an `F`.
///
/// # Safety
///
/// Called in the `open()` of a file of an event directory, with the
/// inode and file the VFS passed; `seq` is how `F`'s adapter shows it,
/// whose callbacks find an `OpenFile<F::Reader>`, and whose `release()`
/// drops it.
unsafe fn open<F: EventSeqFile>(
    inode: *mut bindings::inode,
    filp: *mut bindings::file,
    seq: Seq,
) -> c_int {
    // SAFETY: the inode is of a file of an event directory, whose private
    // data is the event file (eventfs), and `filp` is being opened on it
    // (this function's contract).
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
            reader: UnsafeCell::new(F::reader()),
        };
        let last_act = {
            let guard = EventMutexGuard::lock();
            let file = state.event_file(guard.held()).ok_or(code::ENODEV)?;
            event_hits(guard.held(), file)
        };
        *state.last_act.get_mut() = last_act;
        let state = Owned::<F::Reader>::new(state, GFP_KERNEL)?.into_foreign();
        // `tracing_open_file_tr()` left the event file in `private_data`,
        // where `single_open()` and `seq_open()` want to put the seq_file.
        // SAFETY: `filp` is being opened; `show` and `ops` match the
        // seq_file contract; `seq_open()` succeeded, so `private_data` is
        // its seq_file.
        let ret = unsafe {
            (*filp).private_data = ptr::null_mut();
            match seq {
                Seq::Single(show) => bindings::single_open(filp, Some(show), state.cast_mut()),
                Seq::Records(ops) => {
                    let ret = bindings::seq_open(filp, ops);
                    if ret == 0 {
                        (*(*filp).private_data.cast::<bindings::seq_file>()).private =
                            state.cast_mut();
                    }
                    ret
                }
            }
        };
        if ret != 0 {
            // SAFETY: `state` came from `into_foreign()` above and was not
            // kept: the open failed.
            drop(unsafe { Owned::<F::Reader>::from_foreign(state) });
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

/// Takes back the [`OpenFile`] that [`open`] left as the seq_file's
/// private data.
///
/// # Safety
///
/// Called in the `release()` of a file that `F`'s adapter opened: the
/// VFS calls it once, for the last reference of the file, when no other
/// callback of it runs or will.
unsafe fn take_state<F: EventSeqFile>(filp: *mut bindings::file) -> Owned<F::Reader> {
    // SAFETY: `open()` made `filp` a seq_file (its `private_data`) whose
    // private data, which seq_file leaves as it is, came from
    // `into_foreign()` of an `Owned<F::Reader>`; this is the last callback
    // of the file (this function's contract), so it is taken back once,
    // and the borrows of it, each for one callback, are over.
    unsafe {
        let m = (*filp).private_data.cast::<bindings::seq_file>();
        Owned::<F::Reader>::from_foreign((*m).private)
    }
}

/// The state of the open `F` file whose seq_file is `m`, and its reader,
/// for one seq_file callback.
///
/// # Safety
///
/// `m` must be the seq_file of a file that `F`'s adapter opened, in a
/// show function or seq_operations callback made by seq_file, under the
/// seq_file's lock (`m->lock`, which `seq_read_iter()` and `traverse()`
/// hold around every call), and `'a` must end with that callback.
unsafe fn reading<'a, F: EventSeqFile>(
    m: *mut bindings::seq_file,
) -> (&'a OpenFile<F::Reader>, &'a mut F::Reader) {
    // SAFETY: `open()` set the seq_file's private data, which seq_file
    // leaves as it is, from `into_foreign()` of an `Owned<F::Reader>`; it
    // is taken back only by `release()`, which the VFS calls once no read
    // of the file is under way, after `'a` (this function's contract).
    let state = unsafe { Owned::<F::Reader>::borrow((*m).private) };
    // SAFETY: the reader is used only here, by seq_file's callbacks for
    // the file (invariant of `OpenFile`), which hold the seq_file's lock
    // for `'a` (this function's contract): this is its only use for `'a`.
    let reader = unsafe { &mut *state.reader.get() };
    (state, reader)
}

/// The callbacks of a [`ShowWhole`] file `F`: a single-record seq_file.
pub(super) struct SingleAdapter<F>(PhantomData<F>);

impl<F: ShowWhole> SingleAdapter<F> {
    /// The file's operations.
    pub(super) const FOPS: bindings::file_operations = seq_fops(Self::open, Self::release, None);

    /// `open()`.
    ///
    /// # Safety
    ///
    /// Called by the VFS only, for the inode of a file with these
    /// operations and `filp`, the file being opened.
    unsafe extern "C" fn open(inode: *mut bindings::inode, filp: *mut bindings::file) -> c_int {
        // SAFETY: these operations are only those of files the module adds
        // to every event directory (`files::ExtraFile`), so `inode` is
        // of such a file, and `filp` is being opened on it; `show()` below
        // finds the `OpenFile<F::Reader>` that `open()` makes, and
        // `release()` drops it.
        unsafe { open::<F>(inode, filp, Seq::Single(Self::show)) }
    }

    /// `release()`: drops the state, then the seq_file and the pins.
    ///
    /// # Safety
    ///
    /// Called by the VFS only, for the last reference of `filp`, opened
    /// by [`open`](Self::open), and its inode.
    unsafe extern "C" fn release(inode: *mut bindings::inode, filp: *mut bindings::file) -> c_int {
        // SAFETY: `open()` opened `filp` for `F`, and the VFS calls
        // `release()` once, for its last reference, when no other callback
        // of it runs or will.
        drop(unsafe { take_state::<F>(filp) });
        // SAFETY: undoes `open()`'s `single_open()` and
        // `tracing_open_file_tr()`, once.
        unsafe { bindings::tracing_single_release_file_tr(inode, filp) }
    }

    /// `show()` of the seq_file.
    ///
    /// # Safety
    ///
    /// Called by seq_file only, for `m`, the seq_file of a file opened by
    /// [`open`](Self::open).
    unsafe extern "C" fn show(m: *mut bindings::seq_file, _v: *mut c_void) -> c_int {
        // SAFETY: `single_open()` in `open()` made `m` the seq_file of an
        // `F` file, whose show function only seq_file calls, under its
        // lock, for this call.
        let (state, _) = unsafe { reading::<F>(m) };
        // SAFETY: seq_file calls `show()` with `m` being shown, under its
        // lock (`seq_read_iter()`, `traverse()`), for this call; the
        // state borrowed is another object.
        let out = unsafe { SeqFile::from_raw(m) };
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
    pub(super) const POLLED_FOPS: bindings::file_operations =
        seq_fops(Self::open, Self::release, Some(Self::poll));

    /// `poll()`, as `event_hist_poll()`: `EPOLLERR` once the event is
    /// being removed.
    ///
    /// # Safety
    ///
    /// Called by the VFS only, for `filp`, a file opened by
    /// [`open`](Self::open), and `wait`, the caller's poll table or null.
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

impl<F: Records> RecordsAdapter<F> {
    /// The file's operations.
    pub(super) const FOPS: bindings::file_operations = seq_fops(Self::open, Self::release, None);

    /// The seq_file's operations.
    const SEQ_OPS: bindings::seq_operations = bindings::seq_operations {
        start: Some(Self::start),
        stop: Some(Self::stop),
        next: Some(Self::next),
        show: Some(Self::show),
    };

    /// `open()`.
    ///
    /// # Safety
    ///
    /// Called by the VFS only, for the inode of a file with these
    /// operations and `filp`, the file being opened.
    unsafe extern "C" fn open(inode: *mut bindings::inode, filp: *mut bindings::file) -> c_int {
        // SAFETY: these operations are only those of files the module adds
        // to every event directory (`files::ExtraFile`), so `inode` is
        // of such a file, and `filp` is being opened on it; the seq
        // operations below find the `OpenFile<F::Reader>` that `open()`
        // makes, and `release()` drops it.
        unsafe { open::<F>(inode, filp, Seq::Records(&Self::SEQ_OPS)) }
    }

    /// `release()`: drops the state, then the seq_file and the pins.
    ///
    /// # Safety
    ///
    /// Called by the VFS only, for the last reference of `filp`, opened
    /// by [`open`](Self::open), and its inode.
    unsafe extern "C" fn release(inode: *mut bindings::inode, filp: *mut bindings::file) -> c_int {
        // SAFETY: `open()` opened `filp` for `F`, and the VFS calls
        // `release()` once, for its last reference, when no other callback
        // of it runs or will.
        drop(unsafe { take_state::<F>(filp) });
        // SAFETY: undoes `open()`'s `seq_open()`, then
        // `tracing_open_file_tr()`, once each.
        unsafe {
            bindings::seq_release(inode, filp);
            bindings::tracing_release_file_tr(inode, filp)
        }
    }

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
    /// [`open`](Self::open), and `pos`, its position.
    unsafe extern "C" fn start(
        m: *mut bindings::seq_file,
        pos: *mut bindings::loff_t,
    ) -> *mut c_void {
        // SAFETY: `seq_open()` in `open()` made `m` the seq_file of an `F`
        // file, whose operations only seq_file calls, under its lock, for
        // this call.
        let (state, reader) = unsafe { reading::<F>(m) };
        // SAFETY: `pos` is the seq_file's position, `&m->index`, which
        // seq_file passes to `start()` under its lock.
        let pos = unsafe { *pos };
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
    /// the seq_file of a file opened by [`open`](Self::open), and `pos`,
    /// its position.
    unsafe extern "C" fn next(
        m: *mut bindings::seq_file,
        _v: *mut c_void,
        pos: *mut bindings::loff_t,
    ) -> *mut c_void {
        // SAFETY: seq_file calls `next()` between a `start()` and its
        // `stop()`, in their task; this `start()` takes the lock with
        // `lock_for_read()` and this `stop()` alone releases it.
        let held = unsafe { SeqReadHeld::assume() };
        // SAFETY: `seq_open()` in `open()` made `m` the seq_file of an `F`
        // file, whose operations only seq_file calls, under its lock, for
        // this call.
        let (state, reader) = unsafe { reading::<F>(m) };
        // SAFETY: `pos` is the seq_file's position, `&m->index`, which
        // seq_file passes to `next()` under its lock and reads after it.
        let pos = unsafe { &mut *pos };
        Self::record_ptr(F::next(held, state, reader, pos), reader)
    }

    /// `show()`.
    ///
    /// # Safety
    ///
    /// Called by seq_file only, between `start()` and `stop()`, for `m`,
    /// the seq_file of a file opened by [`open`](Self::open).
    unsafe extern "C" fn show(m: *mut bindings::seq_file, _v: *mut c_void) -> c_int {
        // SAFETY: seq_file calls `show()` between a `start()` and its
        // `stop()`, in their task; this `start()` takes the lock with
        // `lock_for_read()` and this `stop()` alone releases it.
        let held = unsafe { SeqReadHeld::assume() };
        // SAFETY: `seq_open()` in `open()` made `m` the seq_file of an `F`
        // file, whose operations only seq_file calls, under its lock, for
        // this call.
        let (state, reader) = unsafe { reading::<F>(m) };
        // SAFETY: seq_file calls `show()` with `m` being shown, under its
        // lock (`seq_read_iter()`, `traverse()`), for this call; the
        // reader borrowed is another object.
        let out = unsafe { SeqFile::from_raw(m) };
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
    /// file opened by [`open`](Self::open).
    unsafe extern "C" fn stop(_m: *mut bindings::seq_file, _v: *mut c_void) {
        // SAFETY: seq_file calls `stop()` after every `start()`, whatever
        // it returned, in its task; this `start()` took the lock with
        // `lock_for_read()`.
        unsafe { SeqReadHeld::unlock_after_read() };
    }
}
