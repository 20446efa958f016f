// SPDX-License-Identifier: GPL-2.0

//! irq_work (`include/linux/irq_work.h`): a function run soon, in hard
//! interrupt context, asked for from any context, NMI included. The 6.12
//! kernel crate has no abstraction of it.
//!
//! An [`IrqWork`] is a static: the work may run after whatever queued it
//! is gone, so it lives as long as the module, which waits for it with
//! [`IrqWork::sync()`] before it goes.
//!
//! # Examples
//!
//! ```ignore
//! use crate::kernel_ext::irq_work::{IrqWork, IrqWorkItem};
//!
//! struct Wake;
//!
//! impl IrqWorkItem for Wake {
//!     fn run() {
//!         // Hard interrupt context: no sleeping.
//!     }
//! }
//!
//! static WAKE: IrqWork<Wake> = IrqWork::new();
//!
//! // From the event path, in any context:
//! WAKE.queue();
//! // At unload, once nothing queues it any more:
//! WAKE.sync();
//! ```

use core::marker::PhantomData;
use core::ptr;

use kernel::bindings;
use kernel::types::Opaque;

/// What an [`IrqWork`] runs.
pub(crate) trait IrqWorkItem: 'static {
    /// Runs on the CPU the work was queued on, in hard interrupt context
    /// (or with interrupts disabled): it must not sleep.
    fn run();
}

/// A `struct irq_work` that runs `T::run()`.
///
/// # Invariants
///
/// `work` is initialised, its function the one that calls `T::run()`
/// (made only by [`IrqWork::new()`]).
#[repr(transparent)]
pub(crate) struct IrqWork<T: IrqWorkItem> {
    work: Opaque<bindings::irq_work>,
    _item: PhantomData<T>,
}

// SAFETY: the irq_work functions may be called on one work from any
// CPU at once: its state is an atomic word, and what it runs is a
// function of no data.
unsafe impl<T: IrqWorkItem> Sync for IrqWork<T> {}

// The layout of `struct irq_work` as C sees it (the shim checks the same
// numbers): the Rust and C views of one static agree.
const _: () = assert!(core::mem::size_of::<bindings::irq_work>() == 32);
const _: () = assert!(core::mem::offset_of!(bindings::irq_work, func) == 16);

impl<T: IrqWorkItem> IrqWork<T> {
    /// An irq_work not queued: C's `IRQ_WORK_INIT()`.
    pub(crate) const fn new() -> Self {
        // INVARIANT: `IRQ_WORK_INIT(func)`: no flags, not on a list, no
        // waiter, and the function that calls `T::run()`.
        Self {
            work: Opaque::new(bindings::irq_work {
                node: bindings::__call_single_node {
                    llist: bindings::llist_node {
                        next: ptr::null_mut(),
                    },
                    __bindgen_anon_1: bindings::__call_single_node__bindgen_ty_1 { u_flags: 0 },
                    src: 0,
                    dst: 0,
                },
                func: Some(Self::run_raw),
                irqwait: bindings::rcuwait {
                    task: ptr::null_mut(),
                },
            }),
            _item: PhantomData,
        }
    }

    extern "C" fn run_raw(_work: *mut bindings::irq_work) {
        T::run();
    }

    /// Queues the work on this CPU (`irq_work_queue()`); false if it was
    /// queued already, and will run then. In any context, NMI included.
    ///
    /// The CPU must be online: a CPU past its last irq_work flush on the
    /// way down runs it only when it comes back.
    pub(crate) fn queue(&'static self) -> bool {
        // SAFETY: `self.work` is an initialised irq_work (invariant) that
        // lives as long as the module ('static), which waits for it
        // before it goes (see the module documentation).
        unsafe { bindings::irq_work_queue(self.work.get()) }
    }

    /// Queues the work on `cpu` (`irq_work_queue_on()`); false if it was
    /// queued already. Not from NMI context, where the IPI it may send is
    /// not safe.
    pub(crate) fn queue_on(&'static self, cpu: u32) -> bool {
        // SAFETY: as in `queue()`; `irq_work_queue_on()` checks `cpu`.
        unsafe { bindings::irq_work_queue_on(self.work.get(), cpu as i32) }
    }

    /// Waits until the work is neither queued nor running
    /// (`irq_work_sync()`). May sleep.
    pub(crate) fn sync(&self) {
        // SAFETY: `self.work` is an initialised irq_work (invariant).
        unsafe { bindings::irq_work_sync(self.work.get()) };
    }
}
