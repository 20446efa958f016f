// SPDX-License-Identifier: GPL-2.0

//! What the per-event files share: opening one (the event file and trace
//! array pinned, a seq_file whose private data is an [`OpenFile`]),
//! releasing it, and the event's hits that poll() compares.

use kernel::ffi::{c_int, c_void};

use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::KBox;
use kernel::bindings;
use kernel::error::{code, Error};
use kernel::prelude::*;

use super::text::TooLarge;
use crate::command;
use crate::poll::Poller;
use crate::tracefs::{EventMutexCell, EventMutexGuard, EventMutexHeld};
use crate::tracing::EventFile;

/// What an open file keeps, the seq_file's private data (C's
/// `hist_file_data`), with what one kind of file adds (`extra`). Its
/// cells are read and written with `event_mutex` held, as their type
/// says.
pub(super) struct OpenFile<T> {
    /// The `struct file`, through which the event file is found.
    pub(super) filp: *mut bindings::file,
    /// The event's hits when the file was last read.
    pub(super) last_read: EventMutexCell<u64>,
    /// The event's hits when the file was last read or polled.
    pub(super) last_act: EventMutexCell<u64>,
    /// Its part in the count of polled files.
    pub(super) poller: Poller,
    /// The last text too large for seq_file's buffer, if any (the text
    /// files'): the retries skip writing until a buffer holds it.
    pub(super) too_large: EventMutexCell<Option<TooLarge>>,
    /// What the kind of file keeps besides.
    pub(super) extra: T,
}

/// The hits of every rhist trigger of `file`, summed: C's
/// `get_hist_hit_count()`.
pub(super) fn event_hits(held: EventMutexHeld<'_>, file: &EventFile) -> u64 {
    file.triggers(held)
        .filter_map(|data| command::state(held, data))
        .fold(0u64, |hits, t| hits.wrapping_add(t.hist(held).hits()))
}

/// How a file's seq_file shows it.
#[derive(Clone, Copy)]
pub(super) enum Seq {
    /// One record, written by this show function (`single_open()`).
    Single(unsafe extern "C" fn(*mut bindings::seq_file, *mut c_void) -> c_int),
    /// Records, by these operations (`seq_open()`).
    Records(&'static bindings::seq_operations),
}

/// Opens a file: pins the event file and trace array, then a seq_file
/// whose private pointer is an [`OpenFile`] with `extra`.
///
/// # Safety
///
/// Called by the VFS with a valid inode and file of an event directory.
pub(super) unsafe fn open<T>(
    inode: *mut bindings::inode,
    filp: *mut bindings::file,
    seq: Seq,
    extra: T,
) -> c_int {
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
            let file =
                unsafe { EventFile::of_open_file(guard.held(), filp) }.ok_or(code::ENODEV)?;
            event_hits(guard.held(), file)
        };
        let state = KBox::new(
            OpenFile {
                filp,
                last_read: EventMutexCell::new(0),
                last_act: EventMutexCell::new(last_act),
                poller: Poller::new(),
                too_large: EventMutexCell::new(None),
                extra,
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

/// Releases a file [`open`] opened with [`Seq::Single`] and no extra.
///
/// # Safety
///
/// Called by the VFS only, for the last reference of `filp`, an `rhist` or
/// `rhist_debug` file opened by this module, whose `inode` is live.
pub(super) unsafe extern "C" fn release(
    inode: *mut bindings::inode,
    filp: *mut bindings::file,
) -> c_int {
    // SAFETY: as the caller promises, `open()` made `filp` a seq_file
    // holding an `OpenFile<()>`, and this is the last reference.
    unsafe { drop_state::<()>(filp) };
    // SAFETY: undoes `open()`'s `single_open()` and
    // `tracing_open_file_tr()`.
    unsafe { bindings::tracing_single_release_file_tr(inode, filp) }
}

/// Frees the [`OpenFile`] that [`open`] left in `filp`'s seq_file.
///
/// # Safety
///
/// `filp` is a seq_file that [`open`] opened with an `OpenFile<T>` (of this
/// `T`) as its private data, released by its last reference: nothing
/// uses the state after this call.
pub(super) unsafe fn drop_state<T>(filp: *mut bindings::file) {
    // SAFETY: `open()` stored the state with `KBox::into_raw()` as the
    // seq_file's private data; as the caller promises, this is its last
    // use, so the box is rebuilt and dropped once.
    drop(unsafe {
        let m = (*filp).private_data.cast::<bindings::seq_file>();
        KBox::from_raw((*m).private.cast::<OpenFile<T>>())
    });
}
