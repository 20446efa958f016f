// SPDX-License-Identifier: GPL-2.0

//! The per-event files `rhist` and `rhist_debug` (`hist` and `hist_debug`
//! in hist's place, see [`crate::names::NAMES`]): they appear in every event
//! directory while the module is loaded and show the event's rhist
//! triggers, as `hist` and `hist_debug` show its hist triggers. The
//! `hist` file can be polled, as hist's: readable once the event's
//! histograms changed since the file was last read, and `EPOLLPRI` once
//! they changed since it was last read or polled.

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
                release: Some(release),
                poll: match show {
                    ShowFn::Hist => Some(poll_hist),
                    ShowFn::Debug => None,
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
}

impl ShowFn {
    const fn open(
        self,
    ) -> unsafe extern "C" fn(*mut bindings::inode, *mut bindings::file) -> c_int {
        match self {
            ShowFn::Hist => open_hist,
            ShowFn::Debug => open_debug,
        }
    }
}

static HIST_FILE: EventFile = EventFile::new(crate::names::NAMES.command, ShowFn::Hist);
static DEBUG_FILE: EventFile = EventFile::new(crate::names::NAMES.debug_file, ShowFn::Debug);

/// The two files, added to every event directory while this lives.
pub(crate) struct Registration(());

impl Registration {
    pub(crate) fn new(module: &'static ThisModule) -> Result<Self> {
        for file in [&HIST_FILE, &DEBUG_FILE] {
            // SAFETY: nothing else accesses the statics before they are added
            // below (see the `Sync` impl).
            unsafe {
                (*file.fops.get()).owner = module.as_ptr();
                (*file.entry.get()).fops = file.fops.get();
            }
        }
        // SAFETY: `HIST_FILE` is static and initialised.
        let ret = unsafe { bindings::trace_event_add_extra_file(HIST_FILE.entry.get()) };
        if ret != 0 {
            pr_err!(
                "cannot add the per-event file '{}' (error {ret})\n",
                crate::names::NAMES.command.to_str().unwrap_or("?")
            );
            return Err(Error::from_errno(ret));
        }
        // SAFETY: as above.
        let ret = unsafe { bindings::trace_event_add_extra_file(DEBUG_FILE.entry.get()) };
        if ret != 0 {
            pr_err!(
                "cannot add the per-event file '{}' (error {ret})\n",
                crate::names::NAMES.debug_file.to_str().unwrap_or("?")
            );
            // SAFETY: added just above.
            unsafe { bindings::trace_event_remove_extra_file(HIST_FILE.entry.get()) };
            return Err(Error::from_errno(ret));
        }
        Ok(Self(()))
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: both were added by `new()`. Open files pin the module.
        unsafe {
            bindings::trace_event_remove_extra_file(DEBUG_FILE.entry.get());
            bindings::trace_event_remove_extra_file(HIST_FILE.entry.get());
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

/// Opens a file: pins the event file and trace array, then a single-record
/// seq_file whose private pointer is an [`OpenFile`].
///
/// # Safety
///
/// Called by the VFS with a valid inode and file of an event directory.
unsafe fn open(
    inode: *mut bindings::inode,
    filp: *mut bindings::file,
    show: unsafe extern "C" fn(*mut bindings::seq_file, *mut c_void) -> c_int,
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
            },
            GFP_KERNEL,
        )?;
        let state = KBox::into_raw(state);
        // `tracing_open_file_tr()` left the event file in `private_data`,
        // where `single_open()` wants to put its seq_file.
        // SAFETY: `filp` is being opened; `show` matches the seq_file
        // contract.
        let ret = unsafe {
            (*filp).private_data = core::ptr::null_mut();
            bindings::single_open(filp, Some(show), state.cast())
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
    unsafe { open(inode, filp, show_hist) }
}

/// `open()` of an `rhist_debug` file.
///
/// # Safety
///
/// Called by the VFS only, for the live `inode` of an `rhist_debug` file
/// and `filp`, the file being opened.
unsafe extern "C" fn open_debug(inode: *mut bindings::inode, filp: *mut bindings::file) -> c_int {
    // SAFETY: forwarded from the VFS.
    unsafe { open(inode, filp, show_debug) }
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
