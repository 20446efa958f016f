// SPDX-License-Identifier: GPL-2.0

//! The current task: its name (`current->comm`) and its yield
//! (`cond_resched()`). The 6.12 kernel crate's `kernel::task::Task` has
//! neither.
//!
//! # Examples
//!
//! A long loop in process context that lets other tasks run on its CPU
//! (the test kernel does not preempt kernel code), then says who ran it:
//!
//! ```ignore
//! use crate::kernel_ext::task;
//!
//! for i in 0..1_000_000u32 {
//!     if i % 256 == 255 {
//!         task::cond_resched();
//!     }
//! }
//! let comm = task::current_comm();
//! ```

use crate::shim;

/// The length of a task's name, `TASK_COMM_LEN`, with its NUL.
pub(crate) const COMM_LEN: usize = 16;

/// The current task's name: the 16 bytes of `current->comm`, a C string
/// that `set_task_comm()` pads with NULs. In any context (in an
/// interrupt, the name of the task it interrupted).
pub(crate) fn current_comm() -> [u8; COMM_LEN] {
    let mut comm = [0u8; COMM_LEN];
    shim::rhist_current_comm(&mut comm);
    comm
}

/// `cond_resched()`: lets another task run on this CPU if one should.
/// May sleep: process context only.
pub(crate) fn cond_resched() {
    shim::rhist_cond_resched();
}
