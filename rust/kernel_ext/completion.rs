// SPDX-License-Identifier: GPL-2.0

//! A completion (`include/linux/completion.h`): one task sleeps until
//! another says something is done. The 6.12 kernel crate has none (later
//! kernels have `kernel::sync::Completion`, which this follows).
//!
//! A completion's wait queue points at itself, so it is pinned: it is
//! made in place by [`Completion::new()`].
//!
//! # Examples
//!
//! ```ignore
//! use kernel::prelude::*;
//! use crate::kernel_ext::completion::Completion;
//!
//! let done = KBox::pin_init(Completion::new(), GFP_KERNEL)?;
//! // On another task, once its work is done:
//! done.complete();
//! // Here, until then:
//! done.wait();
//! ```

use kernel::bindings;
use kernel::prelude::*;
use kernel::types::Opaque;

use crate::shim;

/// A `struct completion`.
///
/// # Invariants
///
/// `inner` was initialised by `init_completion()`, and has not moved
/// since (it is pinned).
#[pin_data]
pub(crate) struct Completion {
    #[pin]
    inner: Opaque<bindings::completion>,
}

// SAFETY: a completion may be completed and waited for from any task; it
// holds no reference to the task that made it.
unsafe impl Send for Completion {}
// SAFETY: `complete()` and `wait_for_completion()` may be called on one
// completion from several tasks at once: its own lock serialises them.
unsafe impl Sync for Completion {}

impl Completion {
    /// A completion not done yet (`init_completion()`).
    pub(crate) fn new() -> impl PinInit<Self> {
        // INVARIANT: initialised in place, where it stays (pinned).
        pin_init!(Self {
            inner <- Opaque::ffi_init(|slot: *mut bindings::completion| {
                // SAFETY: `slot` is valid for writes (`ffi_init()` gives
                // the place of the value being made), and nothing else
                // uses it before the initialiser returns.
                unsafe { shim::rhist_init_completion(slot) }
            }),
        })
    }

    /// Marks it done, waking one waiter (`complete()`). In any context.
    pub(crate) fn complete(&self) {
        // SAFETY: `self.inner` is an initialised completion that does not
        // move (invariant), alive while `self` is borrowed.
        unsafe { bindings::complete(self.inner.get()) };
    }

    /// Sleeps until it is done (`wait_for_completion()`), and consumes
    /// that done. May sleep: process context only.
    pub(crate) fn wait(&self) {
        // SAFETY: `self.inner` is an initialised completion that does not
        // move (invariant), alive while `self` is borrowed. (A sleep in
        // atomic context is a bug C reports, `might_sleep()`, not a
        // memory-safety one, as for the kernel crate's sleeping calls.)
        unsafe { bindings::wait_for_completion(self.inner.get()) };
    }
}
