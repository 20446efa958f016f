// SPDX-License-Identifier: GPL-2.0

//! Declarations of the C shim in `include/rhist_shim.c`: wrappers for the
//! kernel inline functions that bindgen cannot see.

use kernel::bindings;

// The bindings contain opaque structs (e.g. `sched_statistics`) that the
// lint cannot see through; the functions take and return plain pointers.
//
// SAFETY: each declaration matches its definition in
// `include/rhist_shim.c` (name, argument and return types). Those marked
// `safe` have no precondition on memory: they take no raw pointer (only
// `rhist_current_comm()` takes one, as a reference to the 16 bytes it
// fills), and any argument of their types is valid. A pointer one
// returns (`rhist_map_alloc()`) is its caller's to use. Some sleep
// (their docs say so): that the types do not prevent, and a sleep inside
// an RCU read-side critical section would end it while the reader still
// uses what it protects. The event path must not call them: an
// obligation of `trigger_cmd::Command`'s implementations, checked by
// review, not by the compiler.
#[allow(improper_ctypes)]
unsafe extern "C" {
    /// `event_file_file()`: the event file behind an open tracefs file, or
    /// null once the event is being removed. Needs `event_mutex`.
    pub(crate) fn rhist_event_file_file(
        filp: *mut bindings::file,
    ) -> *mut bindings::trace_event_file;
    /// `trace_event_name()`.
    pub(crate) fn rhist_trace_event_name(
        call: *mut bindings::trace_event_call,
    ) -> *const kernel::ffi::c_char;
    /// `trace_event_try_get_ref()`: pins the event (its module, or the
    /// dynamic event itself); false if it is going away.
    pub(crate) fn rhist_pin_event(call: *mut bindings::trace_event_call) -> bool;
    /// `trace_event_put_ref()`: releases what `rhist_pin_event()` took.
    pub(crate) fn rhist_unpin_event(call: *mut bindings::trace_event_call);
    /// `list_add_rcu()`.
    pub(crate) fn rhist_list_add_rcu(new: *mut bindings::list_head, head: *mut bindings::list_head);
    /// `list_add_tail_rcu()`.
    pub(crate) fn rhist_list_add_tail_rcu(
        new: *mut bindings::list_head,
        head: *mut bindings::list_head,
    );
    /// `list_del_rcu()`.
    pub(crate) fn rhist_list_del_rcu(entry: *mut bindings::list_head);
    /// `lockdep_assert_held(&event_mutex)`.
    pub(crate) safe fn rhist_lockdep_assert_event_mutex_held();
    /// `tracepoint_synchronize_unregister()`: waits for running probes.
    pub(crate) safe fn rhist_tracepoint_synchronize_unregister();
    /// `trace_get_fields()`: the head of the event's field list.
    pub(crate) fn rhist_trace_get_fields(
        call: *mut bindings::trace_event_call,
    ) -> *mut bindings::list_head;
    /// `raw_smp_processor_id()`.
    pub(crate) safe fn rhist_smp_processor_id() -> kernel::ffi::c_uint;
    /// `offsetof(struct task_struct, comm)`, as C lays it out (the
    /// bindings' layout of `task_struct` is not C's).
    pub(crate) safe static rhist_task_comm_at: usize;
    /// Copies `current->comm` (16 bytes) to `comm`.
    pub(crate) safe fn rhist_current_comm(comm: &mut [u8; 16]);
    /// `current->pid`.
    pub(crate) safe fn rhist_current_pid() -> kernel::ffi::c_int;
    /// `trace_synth()`: calls the probes of `event`'s tracepoint, which
    /// read `var_ref_vals[var_ref_idx[i]]` for each field `i` of the event.
    pub(crate) fn rhist_trace_synth(
        event: *mut bindings::synth_event,
        var_ref_vals: *mut u64,
        var_ref_idx: *mut kernel::ffi::c_uint,
    );
    /// Enters one more level of rhist's event path on this CPU (an
    /// action's synthetic event runs its triggers inside); false, having
    /// entered nothing, at hist's limit of four. Event path only (on
    /// one CPU until the level is left). Safe: it reads and changes a
    /// per-CPU counter with `this_cpu` operations, sound in any context.
    pub(crate) safe fn rhist_nesting_enter() -> bool;
    /// Leaves the level `rhist_nesting_enter()` entered.
    pub(crate) safe fn rhist_nesting_exit();
    /// `poll_wait()` on the queue of the hist files' pollers.
    pub(crate) fn rhist_poll_wait(
        filp: *mut bindings::file,
        wait: *mut bindings::poll_table_struct,
    );
    /// `wq_has_sleeper()` of the pollers' queue: whether a poller waits,
    /// after a full barrier. In any context.
    pub(crate) safe fn rhist_poll_has_sleeper() -> bool;
    /// `wake_up_all()` of the pollers' queue: any context but NMI.
    pub(crate) safe fn rhist_poll_wake_all();
    /// `tracing_snapshot_cond()`; on a CPU going offline, also runs the
    /// irq_work the swap queued there, which would never run otherwise.
    pub(crate) fn rhist_snapshot_cond(
        tr: *mut bindings::trace_array,
        cond_data: *mut kernel::ffi::c_void,
    );
    /// `in_nmi()`.
    pub(crate) safe fn rhist_in_nmi() -> bool;
    /// `cpumask_any_but(cpu_online_mask, cpu)`: `nr_cpu_ids` or more if
    /// there is none.
    pub(crate) safe fn rhist_any_online_cpu_but(cpu: kernel::ffi::c_uint) -> kernel::ffi::c_uint;
    /// `sched_set_fifo_low()` of the worker's thread.
    pub(crate) fn rhist_kthread_worker_set_fifo_low(worker: *mut bindings::kthread_worker);
    /// Adds the CPU hotplug callbacks that call `rhist_ask_missed()`; an
    /// errno on failure. Sleeps.
    pub(crate) fn rhist_cpuhp_init() -> kernel::ffi::c_int;
    /// Removes what `rhist_cpuhp_init()` added, waiting for the
    /// callbacks; sleeps.
    pub(crate) fn rhist_cpuhp_exit();
    /// `tracepoint_synchronize_unregister()`, expedited: waits for the
    /// running probes; sleeps.
    pub(crate) safe fn rhist_grow_synchronize();

    /// `nr_cpu_ids`: one more than the highest possible CPU number (the
    /// copies of per-CPU sums, and the KUnit suite's kthreads).
    pub(crate) safe fn rhist_nr_cpu_ids() -> kernel::ffi::c_uint;
    /// `cpu_online()`; false for a `cpu` not below `nr_cpu_ids`.
    pub(crate) safe fn rhist_cpu_online(cpu: kernel::ffi::c_uint) -> bool;
    /// `vmalloc()` of `size` bytes for a histogram's map, without an
    /// allocation report or the OOM killer; null on failure. May sleep.
    pub(crate) safe fn rhist_map_alloc(size: usize) -> *mut kernel::ffi::c_void;
    /// `vfree()` of what `rhist_map_alloc()` returned.
    pub(crate) fn rhist_map_free(addr: *mut kernel::ffi::c_void);
    /// `smp_mb()`.
    pub(crate) safe fn rhist_smp_mb();
    /// `smp_mb__after_atomic()`: x86-64's is written in Rust.
    #[cfg(not(target_arch = "x86_64"))]
    pub(crate) safe fn rhist_smp_mb__after_atomic();
    /// `cond_resched()`: may sleep.
    pub(crate) safe fn rhist_cond_resched();
}
