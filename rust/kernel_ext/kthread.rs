// SPDX-License-Identifier: GPL-2.0

//! A kthread worker (`include/linux/kthread.h`): a kernel thread of the
//! module's own that runs the works queued on it, one at a time, in
//! process context. The 6.12 kernel crate has no abstraction of it.
//!
//! A [`KthreadWork`] is a static, made ready once with
//! [`KthreadWork::init()`]; the [`KthreadWorker`] it is queued on waits
//! for it as it is dropped.
//!
//! # Examples
//!
//! ```ignore
//! use crate::kernel_ext::kthread::{KthreadWork, KthreadWorkItem, KthreadWorker};
//!
//! struct Tidy;
//!
//! impl KthreadWorkItem for Tidy {
//!     fn run() {
//!         // Process context: may sleep.
//!     }
//! }
//!
//! static TIDY: KthreadWork<Tidy> = KthreadWork::new();
//!
//! // SAFETY: at load, before anything queues it.
//! unsafe { TIDY.init() };
//! let worker = KthreadWorker::new(c_str!("tidy"))?;
//! worker.queue(&TIDY);
//! // Dropping the worker waits for the work, then stops the thread.
//! drop(worker);
//! ```

use core::marker::PhantomData;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, Ordering};

use kernel::bindings;
use kernel::error::{from_err_ptr, Result};
use kernel::str::CStr;
use kernel::types::Opaque;

use crate::shim;

/// What a [`KthreadWork`] runs.
pub(crate) trait KthreadWorkItem: 'static {
    /// Runs on the worker's thread, in process context: it may sleep.
    fn run();
}

/// A `struct kthread_work` that runs `T::run()`.
///
/// # Invariants
///
/// Once `ready` is true, `work` is initialised, its function the one
/// that calls `T::run()`.
pub(crate) struct KthreadWork<T: KthreadWorkItem> {
    work: Opaque<bindings::kthread_work>,
    ready: AtomicBool,
    _item: PhantomData<T>,
}

// SAFETY: the kthread worker functions may be called on one work from
// any CPU at once (the worker's lock serialises them), and what it runs
// is a function of no data.
unsafe impl<T: KthreadWorkItem> Sync for KthreadWork<T> {}

// The layout of `struct kthread_work` as C sees it (the shim checks the
// same numbers): the Rust and C views of one static agree.
const _: () = assert!(core::mem::size_of::<bindings::kthread_work>() == 40);
const _: () = assert!(core::mem::offset_of!(bindings::kthread_work, func) == 16);

impl<T: KthreadWorkItem> KthreadWork<T> {
    /// A work not yet ready: [`init()`](Self::init) must run before it
    /// is queued.
    pub(crate) const fn new() -> Self {
        // INVARIANT: not ready.
        Self {
            work: Opaque::uninit(),
            ready: AtomicBool::new(false),
            _item: PhantomData,
        }
    }

    /// Makes the work ready (C's `kthread_init_work()`), not queued.
    ///
    /// # Safety
    ///
    /// The work must not be queued nor running, nor used by another task
    /// during the call.
    pub(crate) unsafe fn init(&'static self) {
        let work = self.work.get();
        // SAFETY: `work` is valid for writes and used by no one else (the
        // caller's contract); `kthread_init_work()` zeroes it, makes its
        // node an empty list and sets its function.
        // INVARIANT: initialised, with the function that calls `T::run()`.
        unsafe {
            work.write(core::mem::zeroed());
            let node = core::ptr::addr_of_mut!((*work).node);
            (*node).next = node;
            (*node).prev = node;
            (*work).func = Some(Self::run_raw);
        }
        // INVARIANT: initialised just above. Release: before a queueing
        // that sees it ready.
        self.ready.store(true, Ordering::Release);
    }

    extern "C" fn run_raw(_work: *mut bindings::kthread_work) {
        T::run();
    }
}

/// A kthread worker, its thread stopped when this is dropped.
///
/// # Invariants
///
/// `worker` is a worker `kthread_create_worker()` made, not yet
/// destroyed.
pub(crate) struct KthreadWorker {
    worker: NonNull<bindings::kthread_worker>,
}

// SAFETY: a worker may be used and destroyed from any task.
unsafe impl Send for KthreadWorker {}
// SAFETY: `kthread_queue_work()` may be called on one worker from any
// CPU at once (the worker's lock serialises it).
unsafe impl Sync for KthreadWorker {}

impl KthreadWorker {
    /// Starts a worker whose thread is named `name`
    /// (`kthread_create_worker()`). May sleep.
    pub(crate) fn new(name: &CStr) -> Result<Self> {
        // SAFETY: the format is a NUL-terminated "%s", whose one argument
        // is a NUL-terminated string, copied into the thread's name.
        let worker = unsafe {
            bindings::kthread_create_worker(0, c"%s".as_ptr().cast(), name.as_char_ptr())
        };
        let worker = from_err_ptr(worker)?;
        // INVARIANT: made by `kthread_create_worker()` just above, which
        // returns a valid worker when it returns no error.
        Ok(Self {
            worker: NonNull::new(worker).ok_or(kernel::error::code::ENOMEM)?,
        })
    }

    /// Runs the worker's thread as `SCHED_FIFO` at the lowest priority
    /// (`sched_set_fifo_low()`): it runs at the first point where a busy
    /// CPU can reschedule.
    pub(crate) fn set_fifo_low(&self) {
        // SAFETY: `self.worker` is a live worker (invariant).
        unsafe { shim::rhist_kthread_worker_set_fifo_low(self.worker.as_ptr()) };
    }

    /// Queues `work` (`kthread_queue_work()`); false if it was queued
    /// already, and will run then, or is not ready yet
    /// ([`KthreadWork::init()`]). In any context but NMI.
    pub(crate) fn queue<T: KthreadWorkItem>(&self, work: &'static KthreadWork<T>) -> bool {
        if !work.ready.load(Ordering::Acquire) {
            return false;
        }
        // SAFETY: `self.worker` is a live worker (invariant); `work` is
        // initialised (ready: invariant of `KthreadWork`) and lives for
        // ever.
        unsafe { bindings::kthread_queue_work(self.worker.as_ptr(), work.work.get()) }
    }
}

impl Drop for KthreadWorker {
    fn drop(&mut self) {
        // SAFETY: `self.worker` is a live worker (invariant), destroyed
        // once: `kthread_destroy_worker()` runs what is queued, then
        // stops the thread and frees the worker.
        unsafe { bindings::kthread_destroy_worker(self.worker.as_ptr()) };
    }
}
