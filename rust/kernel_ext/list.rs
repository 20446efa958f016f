// SPDX-License-Identifier: GPL-2.0

//! The entries of a C list (`struct list_head`, `include/linux/list.h`),
//! walked as `list_for_each_entry()` walks them, or as
//! `list_for_each_entry_rcu()` does for an RCU reader. The 6.12 kernel
//! crate's `kernel::list` is a list of Rust values; it does not walk a
//! list that C owns.
//!
//! # Examples
//!
//! The triggers of an event file, with `event_mutex` held (which is what
//! keeps the list as it is):
//!
//! ```ignore
//! use core::mem::offset_of;
//! use crate::kernel_ext::list::ListIter;
//!
//! fn triggers<'a>(
//!     file: &'a EventFile,
//!     _held: EventMutexHeld<'a>,
//! ) -> ListIter<'a, TriggerData, false> {
//!     // SAFETY: every node on `file->triggers` is the `list` of an
//!     // `event_trigger_data` (which `TriggerData` wraps), live while it
//!     // is on the list; only the holder of `event_mutex`, held for
//!     // `'a`, changes the list.
//!     unsafe {
//!         ListIter::new(
//!             file.triggers_head(),
//!             offset_of!(bindings::event_trigger_data, list),
//!         )
//!     }
//! }
//! ```

use core::marker::PhantomData;
use core::ptr;

use kernel::bindings;

/// An iterator over the entries of a C list: for each node after `head`,
/// the `T` the node is a member of, up to `head` again. With `RCU`, each
/// `next` pointer is read once, as `rcu_dereference()` reads it (a
/// volatile load: no barrier is needed on the architectures Linux runs
/// Rust on); without, it is a plain load.
///
/// A node's `next` is read when the entry after it is asked for, as
/// `list_for_each_entry()` reads it: the caller takes no entry off the
/// list meanwhile (see [`ListIter::new`]).
///
/// # Invariants
///
/// `head` and `node` are list heads of a list that the constructor's
/// contract keeps walkable for `'a`: `node` is `head`, or the last entry
/// handed out, still linked or (for an RCU reader) not yet freed, the
/// member at byte offset `offset` of a `T` live for `'a`.
pub(crate) struct ListIter<'a, T, const RCU: bool> {
    head: *mut bindings::list_head,
    node: *mut bindings::list_head,
    offset: usize,
    _entries: PhantomData<&'a T>,
}

impl<'a, T, const RCU: bool> ListIter<'a, T, RCU> {
    /// Reads `node.next`: a plain load, or, for an RCU reader, one
    /// volatile load.
    ///
    /// # Safety
    ///
    /// `node` must be the list's head, or an entry's list head still
    /// linked or, for an RCU reader, not yet freed.
    #[inline(always)]
    unsafe fn next_of(node: *mut bindings::list_head) -> *mut bindings::list_head {
        if RCU {
            // SAFETY: `node` is a list head (the caller's promise); a
            // writer may store its `next` meanwhile, which one volatile
            // load reads whole, as `READ_ONCE()` in `rcu_dereference()`.
            unsafe { ptr::read_volatile(ptr::addr_of!((*node).next)) }
        } else {
            // SAFETY: `node` is a list head (the caller's promise) whose
            // `next` no one writes meanwhile (the contract of `new()`).
            unsafe { (*node).next }
        }
    }
}

impl<'a, T> ListIter<'a, T, false> {
    /// The entries of the list at `head`, for a walker the list's lock
    /// keeps it for: `list_for_each_entry()`.
    ///
    /// # Safety
    ///
    /// - `head` must be an initialised list head, and every other node on
    ///   its list the `list_head` at byte offset `offset` of a `T` (the C
    ///   struct, or a `#[repr(transparent)]` wrapper of it).
    /// - For `'a`, the list does not change (its lock is held, and the
    ///   caller does not change it either, or no one changes it while
    ///   `'a` lasts), and each entry on it is live.
    #[inline(always)]
    pub(crate) unsafe fn new(head: *mut bindings::list_head, offset: usize) -> Self {
        // INVARIANT: the caller's contract; `node` is `head`.
        Self {
            head,
            node: head,
            offset,
            _entries: PhantomData,
        }
    }
}

impl<'a, T> ListIter<'a, T, true> {
    /// The entries of the list at `head`, for an RCU reader:
    /// `list_for_each_entry_rcu()`.
    ///
    /// # Safety
    ///
    /// - `head` must be an initialised list head, and every other node on
    ///   its list the `list_head` at byte offset `offset` of a `T` (the C
    ///   struct, or a `#[repr(transparent)]` wrapper of it).
    /// - Writers add entries with `list_add_rcu()` or its kin (which
    ///   publish an entry initialised), remove them with `list_del_rcu()`
    ///   or its kin, and free one only after a grace period of the RCU
    ///   flavour of which the caller is a reader for all of `'a`.
    #[inline(always)]
    pub(crate) unsafe fn new_rcu(head: *mut bindings::list_head, offset: usize) -> Self {
        // INVARIANT: the caller's contract; `node` is `head`.
        Self {
            head,
            node: head,
            offset,
            _entries: PhantomData,
        }
    }
}

impl<'a, T: 'a, const RCU: bool> Iterator for ListIter<'a, T, RCU> {
    type Item = &'a T;

    #[inline(always)]
    fn next(&mut self) -> Option<&'a T> {
        // SAFETY: `self.node` is `head`, or the entry handed out last, still
        // linked or not yet freed (invariant).
        let node = unsafe { Self::next_of(self.node) };
        if node == self.head {
            return None;
        }
        // INVARIANT: the entry handed out next.
        self.node = node;
        // SAFETY: `node` is not `head`, so the member at `offset` of a `T`
        // live for `'a` (the constructor's contract): `container_of()`.
        Some(unsafe { &*node.byte_sub(self.offset).cast::<T>() })
    }
}
