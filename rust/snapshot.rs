// SPDX-License-Identifier: GPL-2.0

//! The `snapshot()` action of `onmax()` and `onchange()`: a conditional
//! snapshot of the trigger's trace instance (`tracing_snapshot_cond()`),
//! taken when an entry's tracked value also passes the value of the last
//! snapshot, as hist's `cond_snapshot_update()` decides.  The `rhist` file
//! then shows the details of the last one.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use kernel::ffi::c_void;

use kernel::alloc::flags::GFP_KERNEL;
use kernel::bindings;
use kernel::error::{code, to_result, Error};
use kernel::prelude::*;

use crate::hist::hist_data::Tracking;
use crate::hist::histogram::{Snapshot, KEY_SIZE_MAX};
use crate::shim;
use crate::tracefs::{self, EventMutexHeld};
use crate::tracing::InstanceRef;

const KEY_WORDS: usize = KEY_SIZE_MAX / 8;

/// What the last snapshot was taken for: hist's `struct track_data` of
/// the condition.  Written by [`cond_update`] under the instance's
/// `max_lock`, read by the `rhist` file without it (as hist reads its
/// own): atomics, so a read racing a snapshot sees old or new words.
#[repr(C)]
struct Details {
    /// Zeros where hist's `struct track_data` (96 bytes on 64-bit) has
    /// its fields: hist's code reads the condition's data as its own
    /// when one of its triggers with a `snapshot()` action fails to take
    /// the condition, or shows it, and then finds it not updated and not
    /// its histogram's.
    _hist_layout: [u64; 16],
    how: Tracking,
    key_len: usize,
    updated: AtomicBool,
    val: AtomicU64,
    key: [AtomicU64; KEY_WORDS],
    comm: [AtomicU64; 2],
}

/// What one event hands to [`cond_update`] through
/// `tracing_snapshot_cond()`.
struct Context<'a> {
    details: &'a Details,
    val: u64,
    key: &'a [u8],
    comm: &'a [u8; 16],
}

/// A trigger's conditional snapshot, registered with its trace instance
/// from [`SnapshotCond::enable`] until dropped.
///
/// # Invariants
///
/// `instance` keeps the trace array live.  While `enabled`, its condition
/// (`tr->cond_snapshot`) has `details` as its data and [`cond_update`] as
/// its function; `details` is a heap allocation freed only after the
/// condition is removed.  The value is dropped with `event_mutex` held
/// (by the histogram that owns it).
pub(crate) struct SnapshotCond {
    details: KBox<Details>,
    enabled: AtomicBool,
    /// Dropped last, after the condition is removed.
    instance: InstanceRef,
}

// SAFETY: `instance` keeps the trace array live (invariant); shared use
// reads atomics or calls `tracing_snapshot_cond()`, which any CPU may.
unsafe impl Send for SnapshotCond {}
// SAFETY: shared use reads or writes atomics, or calls
// `tracing_snapshot_cond()` on the trace array `instance` keeps live
// (invariant), which any CPU may, concurrently.
unsafe impl Sync for SnapshotCond {}

impl SnapshotCond {
    /// A condition for `instance`, not yet registered, for an action that
    /// tracks `how` with keys of `key_len` bytes.
    pub(crate) fn new(instance: InstanceRef, how: Tracking, key_len: usize) -> Result<Self> {
        let details = KBox::new(
            Details {
                _hist_layout: [0; 16],
                how,
                key_len: key_len.min(KEY_SIZE_MAX),
                updated: AtomicBool::new(false),
                val: AtomicU64::new(0),
                key: [const { AtomicU64::new(0) }; KEY_WORDS],
                comm: [const { AtomicU64::new(0) }; 2],
            },
            GFP_KERNEL,
        )?;
        Ok(SnapshotCond {
            details,
            enabled: AtomicBool::new(false),
            instance,
        })
    }

    /// `tracing_snapshot_cond_enable()`: allocates the snapshot buffer
    /// and registers the condition; `EBUSY` if the instance has one, this
    /// one included: hist enables a condition for each `snapshot()`
    /// action, and an instance has one at most.
    pub(crate) fn enable(&self, _held: EventMutexHeld<'_>) -> Result<(), i32> {
        if self.enabled.load(Ordering::Relaxed) {
            return Err(-code::EBUSY.to_errno());
        }
        let data = core::ptr::from_ref::<Details>(&self.details).cast_mut();
        // SAFETY: the trace array is live (invariant); `data` stays
        // allocated until `drop()` has removed the condition (invariant).
        let ret = unsafe {
            bindings::tracing_snapshot_cond_enable(
                self.instance.as_ptr(),
                data.cast(),
                Some(cond_update),
            )
        };
        to_result(ret).map_err(|e: Error| -e.to_errno())?;
        self.enabled.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// The event path: `tracing_snapshot_cond()` for the entry of `key`,
    /// whose tracking variable has just taken `val`.  Lock-free on our
    /// side; the tracing core takes the instance's `max_lock`.
    pub(crate) fn take(&self, val: u64, key: &[u8], comm: &[u8; 16]) {
        if !self.enabled.load(Ordering::Relaxed) {
            return;
        }
        let mut ctx = Context {
            details: &self.details,
            val,
            key,
            comm,
        };
        let ctx = core::ptr::from_mut(&mut ctx).cast::<c_void>();
        // SAFETY: the trace array is live (invariant); `ctx` outlives the
        // call, in which `cond_update()` reads it.
        unsafe { shim::rhist_snapshot_cond(self.instance.as_ptr(), ctx) };
    }

    /// The details of the last snapshot, as the `rhist` file shows them
    /// (`track_data_snapshot_print()`); `None` before the first.  The
    /// key is copied into `key`.
    pub(crate) fn last<'k>(&self, key: &'k mut [u8; KEY_SIZE_MAX]) -> Option<Snapshot<'k>> {
        let d = &*self.details;
        if !self.enabled.load(Ordering::Relaxed) || !d.updated.load(Ordering::Acquire) {
            return None;
        }
        for (chunk, word) in key.chunks_exact_mut(8).zip(d.key.iter()) {
            chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes());
        }
        let mut comm = [0u8; 16];
        for (chunk, word) in comm.chunks_exact_mut(8).zip(d.comm.iter()) {
            chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes());
        }
        Some(Snapshot {
            val: d.val.load(Ordering::Relaxed),
            key: &key[..d.key_len],
            comm,
        })
    }
}

impl Drop for SnapshotCond {
    fn drop(&mut self) {
        if !*self.enabled.get_mut() {
            return;
        }
        tracefs::assert_event_mutex_held();
        let data = core::ptr::from_ref::<Details>(&self.details).cast::<c_void>();
        let tr = self.instance.as_ptr();
        // SAFETY: the trace array is live (invariant).  The condition is
        // ours unless the instance lost it, which only its owner's
        // disable does: removed under `max_lock`, after which no
        // `cond_update()` runs on `details`.
        unsafe {
            if bindings::tracing_cond_snapshot_data(tr) == data.cast_mut() {
                bindings::tracing_snapshot_cond_disable(tr);
            }
        }
    }
}

/// hist's `cond_snapshot_update()`: whether the snapshot is taken.
/// Called by `update_max_tr()` with the instance's `max_lock` held and
/// interrupts off, for any snapshot of the instance while the condition
/// is registered.
///
/// # Safety
///
/// A non-NULL `cond_data` is a [`Context`] from [`SnapshotCond::take`]:
/// only that calls `tracing_snapshot_cond()` with data on an instance
/// whose condition is ours (hist calls it for its own `snapshot()`
/// action, which needs a condition of its own, refused while ours is
/// registered); other snapshots pass NULL.
unsafe extern "C" fn cond_update(_tr: *mut bindings::trace_array, cond_data: *mut c_void) -> bool {
    if cond_data.is_null() {
        return false;
    }
    // SAFETY: data that is not null is the `Context` a `SnapshotCond` of
    // ours passed to `tracing_snapshot_cond()` (this function's
    // contract), which lives until that call, in which this one runs,
    // returns.
    let ctx = unsafe { &*cond_data.cast::<Context<'_>>() };
    let d = ctx.details;
    if !d.how.passes(d.val.load(Ordering::Relaxed), ctx.val) {
        return false;
    }
    d.val.store(ctx.val, Ordering::Relaxed);
    let mut key = [0u8; 8];
    for (i, word) in d.key.iter().enumerate().take(d.key_len / 8) {
        let chunk = ctx.key.get(i * 8..i * 8 + 8).unwrap_or(&[0; 8]);
        key.copy_from_slice(chunk);
        word.store(u64::from_ne_bytes(key), Ordering::Relaxed);
    }
    for (chunk, word) in ctx.comm.chunks_exact(8).zip(d.comm.iter()) {
        key.copy_from_slice(chunk);
        word.store(u64::from_ne_bytes(key), Ordering::Relaxed);
    }
    d.updated.store(true, Ordering::Release);
    true
}
