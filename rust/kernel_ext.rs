// SPDX-License-Identifier: GPL-2.0

//! Abstractions the 6.12 kernel crate lacks and the shell needs, each
//! written as an abstraction of the kernel crate would be: the unsafe
//! calls into C and their safety arguments here, safe functions and
//! types for the shell's logic.
//!
//! - [`barrier`]: `smp_mb()` and `smp_mb__after_atomic()`.
//! - [`percpu`]: the CPU the caller runs on, `nr_cpu_ids`, online CPUs.
//! - [`seq_file`]: the seq_file being shown, written to.
//! - [`workqueue`]: the wait for a work item, `flush_work()`.

pub(crate) mod barrier;
pub(crate) mod percpu;
pub(crate) mod seq_file;
pub(crate) mod workqueue;
