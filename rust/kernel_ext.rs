// SPDX-License-Identifier: GPL-2.0

//! Abstractions the 6.12 kernel crate lacks and the shell needs, each
//! written as an abstraction of the kernel crate would be: the unsafe
//! calls into C and their safety arguments here, safe functions and
//! types for the shell's logic.
//!
//! - [`barrier`]: `smp_mb()` and `smp_mb__after_atomic()`.
//! - [`cpus`]: the online CPUs, kept online, and work run on a kthread
//!   bound to each.
//! - [`irq_work`]: a function run soon in hard interrupt context, asked
//!   for from any context.
//! - [`kallsyms`]: a symbol's name, as `sprint_symbol()` writes it.
//! - [`kthread`]: a kthread worker and its works.
//! - [`kunit`]: a KUnit suite of safe functions.
//! - [`list`]: the entries of a C `list_head` list, walked under its
//!   lock or as an RCU reader.
//! - [`percpu`]: the CPU the caller runs on, `nr_cpu_ids`, online CPUs.
//! - [`seq_file`]: the seq_file being shown, written to.
//! - [`task`]: the current task's name, `cond_resched()`.
//! - [`workqueue`]: the wait for a work item, `flush_work()`.

pub(crate) mod barrier;
pub(crate) mod cpus;
pub(crate) mod irq_work;
pub(crate) mod kallsyms;
pub(crate) mod kthread;
pub(crate) mod kunit;
pub(crate) mod list;
pub(crate) mod percpu;
pub(crate) mod seq_file;
pub(crate) mod task;
pub(crate) mod workqueue;
