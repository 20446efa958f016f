// SPDX-License-Identifier: GPL-2.0

//! The tracing core's locking and output as the shell uses them: the
//! event mutex (a guard, and [`EventMutexHeld`], the proof that it is
//! held), the event file behind an open tracefs file and tracing/error_log's
//! messages. The objects themselves are handles of
//! [`crate::tracing`].

use core::cell::Cell;
use core::marker::PhantomData;
use core::ptr;
use kernel::ffi::c_char;

use kernel::bindings;

use crate::shim;

/// Holds `event_mutex`, the lock of every event file's trigger list.
///
/// # Invariants
///
/// This task holds `event_mutex` until the guard is dropped.
pub(crate) struct EventMutexGuard {
    _not_send: PhantomData<*mut ()>,
}

impl EventMutexGuard {
    /// Takes `event_mutex`; sleeps.
    pub(crate) fn lock() -> Self {
        // SAFETY: `event_mutex` is a static, initialised mutex of the kernel.
        unsafe { bindings::mutex_lock(ptr::addr_of_mut!(bindings::event_mutex)) };
        // INVARIANT: taken just above; released only by `drop()`.
        Self {
            _not_send: PhantomData,
        }
    }

    /// The proof that the lock is held, for as long as the guard is
    /// borrowed.
    pub(crate) fn held(&self) -> EventMutexHeld<'_> {
        // INVARIANT: the guard holds the lock until it is dropped, which
        // the borrow rules out for `'_` (invariant of `Self`).
        EventMutexHeld(PhantomData)
    }
}

impl Drop for EventMutexGuard {
    fn drop(&mut self) {
        // SAFETY: this task holds `event_mutex` (invariant).
        unsafe { bindings::mutex_unlock(ptr::addr_of_mut!(bindings::event_mutex)) };
    }
}

/// Proof that this task holds `event_mutex` for `'a`: what a function
/// that needs the lock takes, as the kernel crate's locked data takes a
/// guard. From [`EventMutexGuard::held`], or [`EventMutexHeld::assume`]
/// in a callback that the tracing core calls with the lock held.
///
/// # Invariants
///
/// This task holds `event_mutex` for all of `'a`.
#[derive(Clone, Copy)]
pub(crate) struct EventMutexHeld<'a>(PhantomData<(&'a (), *mut ())>);

impl<'a> EventMutexHeld<'a> {
    /// The proof, for a caller that knows the lock is held; checked under
    /// lockdep.
    ///
    /// # Safety
    ///
    /// This task must hold `event_mutex` for all of `'a`.
    pub(crate) unsafe fn assume() -> Self {
        assert_event_mutex_held();
        // INVARIANT: the caller's contract.
        EventMutexHeld(PhantomData)
    }
}

/// Asserts (under lockdep) that `event_mutex` is held.
pub(crate) fn assert_event_mutex_held() {
    shim::rhist_lockdep_assert_event_mutex_held();
}

/// A value read and written by the holder of `event_mutex` only: a
/// [`Cell`] whose every access through a shared reference shows the lock
/// held. What a task reads it may not keep a reference into, so a caller
/// that holds the lock may use it again while its value is in use.
///
/// # Invariants
///
/// The value is accessed through `&self` only with `event_mutex` held.
pub(crate) struct EventMutexCell<T>(Cell<T>);

// SAFETY: an access through `&self` takes an `EventMutexHeld`, so the
// lock orders the accesses of all tasks (invariant); the value may be
// moved in and out by any of them, hence `T: Send`.
unsafe impl<T: Send> Sync for EventMutexCell<T> {}

impl<T> EventMutexCell<T> {
    /// A cell holding `value`.
    pub(crate) const fn new(value: T) -> Self {
        Self(Cell::new(value))
    }

    /// Stores `value` and returns the value it replaced.
    pub(crate) fn replace(&self, _held: EventMutexHeld<'_>, value: T) -> T {
        // INVARIANT: with the lock held (`_held`).
        self.0.replace(value)
    }

    /// Stores `value`, dropping the value it replaced.
    pub(crate) fn set(&self, held: EventMutexHeld<'_>, value: T) {
        drop(self.replace(held, value));
    }

    /// The value, for the cell's only user.
    pub(crate) fn get_mut(&mut self) -> &mut T {
        self.0.get_mut()
    }
}

impl<T: Copy> EventMutexCell<T> {
    /// A copy of the value.
    pub(crate) fn get(&self, _held: EventMutexHeld<'_>) -> T {
        // INVARIANT: with the lock held (`_held`).
        self.0.get()
    }
}

impl<T: Default> EventMutexCell<T> {
    /// Takes the value, leaving its default.
    pub(crate) fn take(&self, held: EventMutexHeld<'_>) -> T {
        self.replace(held, T::default())
    }
}

/// A pointer to a static NUL-terminated message, as error_log tables hold.
#[repr(transparent)]
pub(crate) struct ErrText(pub(crate) *const c_char);

// SAFETY: the pointers refer to immutable static strings.
unsafe impl Sync for ErrText {}
