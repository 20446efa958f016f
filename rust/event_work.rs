// SPDX-License-Identifier: GPL-2.0

//! The work the event path asks for and cannot do itself (it runs in any
//! context, NMI included): the pollers' wakeup ([`crate::poll`]) and the
//! grow ([`crate::command`]'s `grow.rs`), each through an irq_work on the
//! CPU the event runs on.
//!
//! A CPU that is not online (going offline, or not yet up) runs no
//! irq_work queued after its last flush on the way down: the work would
//! wait for the CPU's return, and `irq_work_sync()` at unload with it.
//! There the work is queued on another CPU; but not from NMI, which must
//! not send the IPI (on x86, every kprobe that is not jump-optimised runs
//! in NMI context): the request is then kept in [`MISSED`], and asked
//! again by the CPU hotplug callbacks (`include/rhist_shim.c`), once the
//! CPU is dead or up (`rhist_ask_missed()`, in `rhist_main.rs`, which
//! knows the works).

use core::sync::atomic::{AtomicU32, Ordering};

use crate::kernel_ext::irq_work::{IrqWork, IrqWorkItem};
use crate::kernel_ext::percpu;

/// What the event path asks for.
#[derive(Clone, Copy)]
pub(crate) enum Asked {
    /// The pollers' wakeup.
    Poll = 1 << 0,
    /// The grow work.
    Grow = 1 << 1,
}

/// The requests made where they could not be queued ([`Asked`] bits).
static MISSED: AtomicU32 = AtomicU32::new(0);

/// Queues `work` on this CPU, or where it will run (see the module
/// documentation); `asked` says what it is. From the event path, in any
/// context.
pub(crate) fn queue_where_it_runs<T: IrqWorkItem>(work: &'static IrqWork<T>, asked: Asked) {
    let cpu = percpu::raw_smp_processor_id();
    if percpu::cpu_online(cpu) {
        work.queue();
        return;
    }
    if percpu::in_nmi() {
        // Release: what the event path stored before asking (a grow's
        // `pending`) before the callback that takes the bit.
        MISSED.fetch_or(asked as u32, Ordering::Release);
        return;
    }
    if let Some(other) = percpu::any_online_cpu_but(cpu) {
        work.queue_on(other);
    }
}

/// Takes the requests [`queue_where_it_runs()`] could not queue, for the
/// CPU hotplug callbacks to ask again (`rhist_ask_missed()`): whether
/// the pollers' wakeup and whether the grow work were asked for.
pub(crate) fn take_missed() -> (bool, bool) {
    let missed = MISSED.swap(0, Ordering::AcqRel);
    (
        missed & Asked::Poll as u32 != 0,
        missed & Asked::Grow as u32 != 0,
    )
}
