// SPDX-License-Identifier: GPL-2.0

//! The online CPUs, kept online while they are used (`cpus_read_lock()`),
//! and work run on them: one kthread bound to each CPU given, all
//! starting together, joined before [`OnlineCpus::run_on()`] returns, so
//! that they may borrow from its caller (as `std::thread::scope()`'s
//! threads do). The 6.12 kernel crate has none of it.
//!
//! # Examples
//!
//! Each online CPU says which CPU it ran on:
//!
//! ```ignore
//! use crate::kernel_ext::{cpus::OnlineCpus, percpu};
//!
//! let cpus = OnlineCpus::get()?;
//! let mut seen = KVVec::from_elem(u32::MAX, cpus.ids().len(), GFP_KERNEL)?;
//! cpus.run_on(cpus.ids(), &mut seen, &|_, seen: &mut u32| {
//!     *seen = percpu::raw_smp_processor_id();
//! })?;
//! assert!(seen.iter().eq(cpus.ids().iter()));
//! ```

use core::marker::PhantomData;
use core::sync::atomic::{AtomicBool, Ordering};

use kernel::bindings;
use kernel::error::{code::EINVAL, from_err_ptr};
use kernel::ffi::{c_int, c_void};
use kernel::prelude::*;
use kernel::sync::{new_condvar, new_spinlock, CondVar, SpinLock};
use kernel::task::Task;
use kernel::types::ARef;

use super::{percpu, task};

/// The CPUs online when it was made, kept online (`cpus_read_lock()`)
/// until it is dropped.
///
/// # Invariants
///
/// The task that made it holds `cpus_read_lock()` for it; `ids` are the
/// CPUs online then, in increasing order.
pub(crate) struct OnlineCpus {
    ids: KVVec<u32>,
    /// Not `Send`: the task that took the lock releases it.
    _not_send: PhantomData<*mut ()>,
}

impl OnlineCpus {
    /// Takes `cpus_read_lock()` and lists the online CPUs. May sleep.
    pub(crate) fn get() -> Result<Self> {
        // SAFETY: `cpus_read_lock()` has no precondition on memory. The
        // `Self` made next releases it when dropped, on every path from
        // here, on this task (`Self` is not `Send`).
        unsafe { bindings::cpus_read_lock() };
        // INVARIANT: the lock is held; `ids` are filled in below, in
        // increasing order, before `Self` is returned.
        let mut cpus = OnlineCpus {
            ids: KVVec::new(),
            _not_send: PhantomData,
        };
        for cpu in 0..percpu::nr_cpu_ids() as u32 {
            if percpu::cpu_online(cpu) {
                cpus.ids.push(cpu, GFP_KERNEL)?;
            }
        }
        if cpus.ids.is_empty() {
            return Err(EINVAL);
        }
        Ok(cpus)
    }

    /// The CPUs, in increasing order: at least one.
    pub(crate) fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// Runs `work(i, &mut states[i])` on a kthread bound to `cpus[i]`,
    /// for every `i`, all starting together, and returns once every
    /// thread has exited. A CPU may be listed more than once; each must
    /// be one of [`ids()`](Self::ids), and there must be one state per
    /// CPU, or it is `EINVAL`. On an error no thread has run `work`.
    ///
    /// The threads are named `rhist_kunit/<cpu>`. `work` runs in process
    /// context; the test kernel does not preempt kernel code, so a long
    /// `work` calls [`task::cond_resched()`] now and then.
    pub(crate) fn run_on<S: Send, F: Fn(usize, &mut S) + Sync>(
        &self,
        cpus: &[u32],
        states: &mut [S],
        work: &F,
    ) -> Result {
        if cpus.len() != states.len() || cpus.iter().any(|cpu| self.ids.binary_search(cpu).is_err())
        {
            return Err(EINVAL);
        }
        let shared = KBox::pin_init(
            pin_init!(Shared {
                go: AtomicBool::new(false),
                finished <- new_spinlock!(0),
                all_finished <- new_condvar!(),
            }),
            GFP_KERNEL,
        )?;
        let count = states.len();
        let mut jobs = KVVec::with_capacity(count, GFP_KERNEL)?;
        for (index, state) in states.iter_mut().enumerate() {
            let shared = &*shared;
            jobs.push(
                Job {
                    work,
                    state,
                    index,
                    shared,
                },
                GFP_KERNEL,
            )?;
        }

        // Dropped before `jobs` and `shared` (declared after them) on
        // every path: each thread is stopped before its job goes away.
        let mut threads = KVVec::with_capacity(count, GFP_KERNEL)?;
        for (job, &cpu) in jobs.iter_mut().zip(cpus) {
            // SAFETY: `cpu` is one of `self.ids`, so below `nr_cpu_ids`.
            // The thread goes into `threads`, or is dropped at once if the
            // push fails; `threads` is dropped below, or on an error
            // return, before `jobs`, and nothing here leaks it.
            let thread = unsafe { Thread::new(job, cpu) }?;
            threads.push(thread, GFP_KERNEL)?;
        }
        // Nothing can fail from here on: every thread is woken, and `go`
        // set before any of them is stopped.
        for thread in threads.iter() {
            thread.wake();
        }
        shared.go.store(true, Ordering::Release);
        // Joined by the count first: `kthread_stop()` alone does not wait
        // for `work`, as a thread that has not started running when it is
        // called exits without running its function (and a thread bound
        // to this task's CPU does not start before this task sleeps).
        let mut finished = shared.finished.lock();
        while *finished < count {
            shared.all_finished.wait(&mut finished);
        }
        drop(finished);
        // Stops each thread: returns once they have all exited.
        drop(threads);
        Ok(())
    }
}

impl Drop for OnlineCpus {
    fn drop(&mut self) {
        // SAFETY: the task that made `self` holds `cpus_read_lock()` for
        // it (invariant), and is the one dropping it (`Self` is not
        // `Send`); `drop` runs once, releasing it once.
        unsafe { bindings::cpus_read_unlock() };
    }
}

/// What the threads of one `run_on()` share.
#[pin_data]
struct Shared {
    /// Set once every thread is awake: they start together.
    go: AtomicBool,
    /// How many threads' `work` has returned.
    #[pin]
    finished: SpinLock<usize>,
    /// Notified, under `finished`, as it grows.
    #[pin]
    all_finished: CondVar,
}

/// What the thread of one state gets, and uses alone.
struct Job<'a, S, F> {
    work: &'a F,
    /// The thread's own state, one element of the caller's `states`.
    state: &'a mut S,
    index: usize,
    shared: &'a Shared,
}

/// The function of the thread of `data`, a `Job<S, F>`.
///
/// # Safety
///
/// `data` points to a `Job<S, F>` that stays where it is, alive, and
/// used by this thread alone, until the thread has exited.
unsafe extern "C" fn job_main<S: Send, F: Fn(usize, &mut S) + Sync>(data: *mut c_void) -> c_int {
    // SAFETY: `data` is a `Job<S, F>` that outlives the thread and that
    // only this thread uses meanwhile (the function's safety contract,
    // which `Thread::new()` passes on: it is lent the job `mut`). What
    // the job borrows may be used here: its state, one element of the
    // `states` lent to `run_on()`, as `S: Send` allows; `work`, shared
    // with the other threads, as `F: Sync` allows; `shared`, made to be
    // shared.
    let job = unsafe { &mut *data.cast::<Job<'_, S, F>>() };
    // Start together, once all threads are awake. Yield meanwhile: the
    // task waking the threads may be waiting for this CPU.
    while !job.shared.go.load(Ordering::Acquire) {
        task::cond_resched();
        core::hint::spin_loop();
    }
    (job.work)(job.index, job.state);
    let mut finished = job.shared.finished.lock();
    *finished += 1;
    // Under the lock: `run_on()` reads the count, and may then free
    // `shared`, only once the unlock, this thread's last use of it, is
    // done.
    job.shared.all_finished.notify_all();
    drop(finished);
    0
}

/// A kthread bound to a CPU that runs `job_main()` on a job lent to it
/// for `'a`, stopped when dropped.
///
/// # Invariants
///
/// `task` is a kthread made by `kthread_create_on_cpu()`, not stopped
/// yet; `task` holds a reference to it.
struct Thread<'a> {
    task: ARef<Task>,
    _job: PhantomData<&'a mut ()>,
}

impl<'a> Thread<'a> {
    /// Makes the thread of `job`, bound to `cpu`, asleep until
    /// [`wake()`](Self::wake).
    ///
    /// # Safety
    ///
    /// `cpu` is below `nr_cpu_ids`. The thread is dropped, not leaked:
    /// its drop, which stops it, is what ends its use of `job`.
    unsafe fn new<S: Send, F: Fn(usize, &mut S) + Sync>(
        job: &'a mut Job<'_, S, F>,
        cpu: u32,
    ) -> Result<Self> {
        let data: *mut Job<'_, S, F> = job;
        // SAFETY: `job_main::<S, F>` takes a `Job<S, F>`, which `data`
        // points to: lent `mut` for `'a`, so alive, not moved and used by
        // no one else for as long as the thread, which does not outlive
        // `'a` (the lifetime of `Self`, which is dropped, not leaked: this
        // function's contract). `cpu` is below
        // `nr_cpu_ids`, as `cpu_to_node()` within needs (this function's
        // contract). The name is a format with one `%u`, for the one
        // argument the call passes, `cpu`.
        let task = unsafe {
            bindings::kthread_create_on_cpu(
                Some(job_main::<S, F>),
                data.cast(),
                cpu,
                c"rhist_kunit/%u".as_ptr().cast(),
            )
        };
        let task = from_err_ptr(task)?;
        // SAFETY: `task`, just made and not woken, has not run, so has
        // not exited: its `task_struct` is valid, and `Task` is a
        // transparent `task_struct`. `ARef::from()` takes a reference
        // (`get_task_struct()`), which keeps it valid once it has exited.
        let task: ARef<Task> = unsafe { &*task.cast::<Task>() }.into();
        // INVARIANT: made by `kthread_create_on_cpu()`, not stopped; the
        // reference is `task`'s.
        Ok(Self {
            task,
            _job: PhantomData,
        })
    }

    /// Wakes the thread: it runs `job_main()`, which waits for its job's
    /// `go` before it runs `work`, and returns once it has; stopping it
    /// before then waits for as long.
    fn wake(&self) {
        self.task.wake_up();
    }
}

impl Drop for Thread<'_> {
    fn drop(&mut self) {
        let task: *const Task = &*self.task;
        // SAFETY: `task` is a kthread not stopped yet (invariant), stopped
        // here once; the reference `self.task` holds, dropped after this,
        // keeps its `task_struct` valid through the call. It returns once
        // the thread has exited: after `job_main()` if woken, without
        // running it if not. Either way the thread no longer uses its job.
        unsafe { bindings::kthread_stop(task.cast_mut().cast()) };
    }
}
