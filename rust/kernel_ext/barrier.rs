// SPDX-License-Identifier: GPL-2.0

//! Memory barriers of the Linux kernel memory model
//! (`Documentation/memory-barriers.txt`), as C has them: the 6.12 kernel
//! crate has none, and Rust's own fences are not defined against C's
//! (`Documentation/atomic_t.txt`'s rules are written for C's barriers).
//!
//! # Examples
//!
//! Two CPUs each store, then load what the other stored: with a full
//! barrier between the store and the load on each side, at least one of
//! them sees the other's store (the "store buffering" pattern).
//!
//! ```ignore
//! use core::sync::atomic::{AtomicU32, Ordering};
//! use crate::kernel_ext::barrier::{smp_mb, smp_mb_after_atomic};
//!
//! static HITS: AtomicU32 = AtomicU32::new(0);
//! static WAITERS: AtomicU32 = AtomicU32::new(0);
//!
//! fn hit() -> bool {
//!     HITS.fetch_add(1, Ordering::Relaxed);
//!     // Pairs with the `smp_mb()` in `wait()`.
//!     smp_mb_after_atomic();
//!     WAITERS.load(Ordering::Relaxed) != 0
//! }
//!
//! fn wait() -> u32 {
//!     WAITERS.store(1, Ordering::Relaxed);
//!     // Pairs with the `smp_mb_after_atomic()` in `hit()`.
//!     smp_mb();
//!     HITS.load(Ordering::Relaxed)
//! }
//! ```

use crate::shim;

/// `smp_mb()`: a full memory barrier. Every load and store before it
/// (in program order) is ordered before every load and store after it,
/// as every other CPU sees them.
#[inline]
pub(crate) fn smp_mb() {
    shim::rhist_smp_mb();
}

/// `smp_mb__after_atomic()`: after an atomic read-modify-write that
/// returns no ordering of its own (such as a `fetch_add()` with
/// [`Relaxed`](core::sync::atomic::Ordering::Relaxed) ordering), makes
/// it a full barrier, as [`smp_mb()`] after it would be.
///
/// On x86-64 every read-modify-write is a `lock`-prefixed instruction,
/// itself a full barrier: as in C (`arch/x86/include/asm/barrier.h`), this
/// is only a compiler barrier, which keeps the compiler from moving the
/// accesses after it before the atomic. Elsewhere it is C's, which is
/// `smp_mb()` on most architectures.
#[inline(always)]
pub(crate) fn smp_mb_after_atomic() {
    #[cfg(target_arch = "x86_64")]
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    #[cfg(not(target_arch = "x86_64"))]
    shim::rhist_smp_mb__after_atomic();
}
