// SPDX-License-Identifier: GPL-2.0

//! What `kernel::workqueue` of 6.12 lacks for a module's work item: the
//! wait for it to finish (`flush_work()`), which a module must do before
//! its code goes.
//!
//! # Examples
//!
//! A work item that a module queues on the system workqueue, and waits
//! for as it is unloaded:
//!
//! ```ignore
//! use kernel::sync::Arc;
//! use kernel::workqueue::{self, Work, WorkItem};
//! use kernel::{impl_has_work, new_work};
//! use crate::kernel_ext::workqueue::flush_work;
//!
//! #[pin_data]
//! struct Cleanup {
//!     #[pin]
//!     work: Work<Cleanup>,
//! }
//!
//! impl_has_work! {
//!     impl HasWork<Self> for Cleanup { self.work }
//! }
//!
//! impl WorkItem for Cleanup {
//!     type Pointer = Arc<Cleanup>;
//!
//!     fn run(_this: Arc<Cleanup>) {
//!         pr_info!("cleaning up\n");
//!     }
//! }
//!
//! let cleanup = Arc::pin_init(pin_init!(Cleanup { work <- new_work!("Cleanup::work") }),
//!                             GFP_KERNEL)?;
//! let _ = workqueue::system().enqueue(cleanup.clone());
//! // At unload: nothing queues it any more.
//! flush_work(&*cleanup);
//! ```

use kernel::bindings;
use kernel::workqueue::{HasWork, Work};

/// Waits until the work of `item`, if it is queued or running, has run:
/// C's `flush_work()`. Whether it waited. May sleep.
///
/// Queued again meanwhile, the work may run again after this returns:
/// the caller waits for the last time it is queued.
pub(crate) fn flush_work<T: HasWork<T, ID>, const ID: u64>(item: &T) -> bool {
    // SAFETY: `item` is a live `T`, so `raw_get_work()` finds its
    // `Work<T, ID>` field, which `Work::new()` initialised as the item was
    // made (a `Work` is made no other way); `flush_work()` may be called
    // on any initialised work struct, queued or not, from a context that
    // may sleep, which this function's own contract passes on.
    unsafe {
        bindings::flush_work(Work::raw_get(T::raw_get_work(
            core::ptr::from_ref(item).cast_mut(),
        )))
    }
}
