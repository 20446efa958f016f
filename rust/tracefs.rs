// SPDX-License-Identifier: GPL-2.0

//! The tracing core's locking and output as the shell uses them: the
//! event mutex (a guard, [`EventMutexHeld`], the proof that it is held,
//! and [`SeqReadHeld`], held across a seq_file read), the event file
//! behind an open tracefs file and tracing/error_log's messages. The
//! objects themselves are handles of [`crate::tracing`].

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

    /// The lock's hold, for code that frees triggers: borrowing the guard
    /// `mut` ends every proof [`held`](Self::held) gave.
    pub(crate) fn scope(&mut self) -> EventMutexScope<'_> {
        // INVARIANT: the guard holds the lock for `'_`, and the `mut`
        // borrow of it rules out every other proof from it meanwhile.
        EventMutexScope(PhantomData)
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
    /// This task must hold `event_mutex` for all of `'a`, and not take a
    /// trigger off its list meanwhile, with this or another proof: code
    /// that removes triggers takes an [`EventMutexScope`].
    pub(crate) unsafe fn assume() -> Self {
        assert_event_mutex_held();
        // INVARIANT: the caller's contract.
        EventMutexHeld(PhantomData)
    }
}

/// This task's hold of `event_mutex` for `'a`, from which the proofs
/// ([`EventMutexHeld`]) that walks and look-ups take are borrowed, and
/// which what frees a trigger takes `mut` (`Registry::take()`): a
/// trigger, or its state, that a walk found cannot be freed while the
/// walk's borrow of it lives.
///
/// # Invariants
///
/// This task holds `event_mutex` for all of `'a`. While this value lives,
/// the proofs of it in use are borrowed from it, but for those of frames
/// up the stack (a removal within a removal: a trigger's state dropped
/// removes the hidden triggers it made), none of whose borrows of a
/// trigger is used after a removal made through this value.
pub(crate) struct EventMutexScope<'a>(PhantomData<(&'a (), *mut ())>);

impl<'a> EventMutexScope<'a> {
    /// The hold, for a callback that the tracing core calls with the lock
    /// held; checked under lockdep.
    ///
    /// # Safety
    ///
    /// This task must hold `event_mutex` for all of `'a`, and use no
    /// [`EventMutexHeld`] meanwhile but those borrowed from the result,
    /// or those of frames up the stack that use no borrow of a trigger
    /// after a removal made through the result (see the invariants).
    pub(crate) unsafe fn assume() -> Self {
        assert_event_mutex_held();
        // INVARIANT: the caller's contract.
        EventMutexScope(PhantomData)
    }

    /// The proof that the lock is held, for as long as the hold is
    /// borrowed.
    pub(crate) fn held(&self) -> EventMutexHeld<'_> {
        // INVARIANT: the lock is held for `'a`, which outlives the borrow.
        EventMutexHeld(PhantomData)
    }
}

/// Proof that this task holds `event_mutex` for `'a` and has held it
/// without a break since the `start()` of the seq_file read under way:
/// what `start()` found under the lock is still so in the `next()` and
/// `show()` that follow. The tracing core's own seq_files over the event
/// lists hold `event_mutex` so, from `start()` to `stop()`
/// (`t_start()`/`t_stop()`, `trigger_start()`/`trigger_stop()`).
///
/// seq_file cannot carry a guard from `start()` to `stop()`, so the lock
/// is taken by [`lock_for_read`](Self::lock_for_read) and left held, and
/// released by [`unlock_after_read`](Self::unlock_after_read). seq_file
/// keeps the order they need (`fs/seq_file.c`): for one read, under the
/// seq_file's own lock and in one task, it calls `start()`, then `show()`
/// and `next()` any number of times, then `stop()`, which it calls after
/// every `start()`, whatever `start()` returned (`seq_read_iter()`,
/// `traverse()`).
///
/// # Invariants
///
/// This task holds `event_mutex` for all of `'a`, and has not released it
/// since the `start()` of the read under way took it.
#[derive(Clone, Copy)]
pub(crate) struct SeqReadHeld<'a>(EventMutexHeld<'a>);

impl SeqReadHeld<'_> {
    /// For a seq_file's `start()`: takes `event_mutex`, runs `f` with the
    /// proof, and leaves the lock held when it returns, for the `stop()`
    /// that follows to release with
    /// [`unlock_after_read`](Self::unlock_after_read). Sleeps.
    ///
    /// # Safety
    ///
    /// Called only in the `start()` of a seq_file whose `stop()` calls
    /// [`unlock_after_read`](Self::unlock_after_read): a proof made
    /// anywhere else would not be the hold of one read that readers of
    /// this type rely on (a cursor checked under it), and the lock would
    /// stay held.
    pub(crate) unsafe fn lock_for_read<R>(f: impl FnOnce(SeqReadHeld<'_>) -> R) -> R {
        let guard = EventMutexGuard::lock();
        // INVARIANT: the lock is taken just above, for this read; the
        // guard, which holds it for the call of `f`, is not dropped.
        let ret = f(SeqReadHeld(guard.held()));
        // The lock stays held after the guard: `stop()` releases it.
        core::mem::forget(guard);
        ret
    }

    /// For a seq_file's `next()` and `show()`: the proof, for the call.
    ///
    /// # Safety
    ///
    /// Called in the `next()` or `show()` of a seq_file whose `start()`
    /// took the lock with [`lock_for_read`](Self::lock_for_read) and whose
    /// `stop()` alone releases it, with [`unlock_after_read`]; `'a` must
    /// end with that call.
    ///
    /// [`unlock_after_read`]: Self::unlock_after_read
    pub(crate) unsafe fn assume<'a>() -> SeqReadHeld<'a> {
        assert_event_mutex_held();
        // INVARIANT: seq_file calls `next()` and `show()` between a
        // `start()` and its `stop()`, in the task of both; the lock the
        // `start()` took is held until that `stop()` (the caller's
        // contract), after this call: this task holds it for `'a`. A read
        // takes no trigger off its list, so the proof is not used across
        // a removal (`EventMutexHeld::assume()`'s other condition).
        SeqReadHeld(EventMutexHeld(PhantomData))
    }

    /// For a seq_file's `stop()`: releases the lock its `start()` took.
    ///
    /// # Safety
    ///
    /// Called in the `stop()` of a seq_file whose `start()` took the lock
    /// with [`lock_for_read`](Self::lock_for_read).
    pub(crate) unsafe fn unlock_after_read() {
        assert_event_mutex_held();
        // INVARIANT: seq_file calls `stop()` after every `start()`, in the
        // same task, and the `start()` left the lock held for it (the
        // caller's contract): this task holds it, and the guard's drop
        // releases it, once.
        drop(EventMutexGuard {
            _not_send: PhantomData,
        });
    }
}

impl<'a> SeqReadHeld<'a> {
    /// The lock's proof.
    pub(crate) fn held(self) -> EventMutexHeld<'a> {
        self.0
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
