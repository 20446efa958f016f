// SPDX-License-Identifier: GPL-2.0

//! A kthread worker (`include/linux/kthread.h`): a kernel thread of the
//! module's own that runs the works queued on it, one at a time, in
//! process context. The 6.12 kernel crate has no abstraction of it.
//!
//! A [`KthreadWork`] is a static, made ready with
//! [`KthreadWork::init()`] (once: later calls do nothing); the
//! [`KthreadWorker`] it is queued on waits for it as it is dropped.
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
//! TIDY.init();
//! let worker = KthreadWorker::new(c_str!("tidy"))?;
//! worker.queue(&TIDY);
//! // Dropping the worker waits for the work, then stops the thread.
//! drop(worker);
//! ```

use core::marker::PhantomData;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU8, Ordering};

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
/// `work` is written only by the task that moved `state` from `NEW` to
/// `INIT`, before it sets `READY`; once `state` is `READY`, `work` is
/// initialised, its function the one that calls `T::run()`.
pub(crate) struct KthreadWork<T: KthreadWorkItem> {
    work: Opaque<bindings::kthread_work>,
    state: AtomicU8,
    _item: PhantomData<T>,
}

/// The states of a [`KthreadWork`]: not ready, being made ready, ready.
const NEW: u8 = 0;
const INIT: u8 = 1;
const READY: u8 = 2;

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
            state: AtomicU8::new(NEW),
            _item: PhantomData,
        }
    }

    /// Makes the work ready (C's `kthread_init_work()`), not queued; a
    /// call that finds it made ready, or being made so, does nothing.
    pub(crate) fn init(&'static self) {
        if self
            .state
            .compare_exchange(NEW, INIT, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        let work = self.work.get();
        // SAFETY: `work` is valid for writes ('static), and used by no one
        // else: the exchange above made this task the one that writes it
        // (invariant), and the work is neither queued nor running, for
        // it is not ready yet (`queue()` checks). `kthread_init_work()`
        // zeroes it, makes its node an empty list and sets its function.
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
        self.state.store(READY, Ordering::Release);
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
        if work.state.load(Ordering::Acquire) != READY {
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
