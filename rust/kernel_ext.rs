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
//!
//! And two helpers for C structs: [`field_ptr!`], the address of a field
//! behind a raw pointer, and [`c_bytes`], a C string's bytes.

use kernel::ffi::c_char;
use kernel::str::CStr;

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

/// The address of the field `$field` of the `$type` at `$base` (a
/// `*mut $type`), typed as a pointer to the field: what
/// `ptr::addr_of_mut!((*base).field)` gives, without `unsafe`. It reads
/// nothing and makes no reference, only computes an address
/// (`wrapping_byte_add()` keeps `base`'s provenance), so it is safe for
/// any pointer; using the result is what needs `base` to be valid.
///
/// ```ignore
/// let head: *mut bindings::list_head = field_ptr!(file, bindings::trace_event_file, triggers);
/// ```
macro_rules! field_ptr {
    ($base:expr, $type:ty, $field:ident) => {
        $crate::kernel_ext::field_at::<$type, _>(
            $base,
            core::mem::offset_of!($type, $field),
            |value: &$type| &value.$field,
        )
    };
}
pub(crate) use field_ptr;

/// [`field_ptr!`]'s typed step: `offset` bytes into `base`, as a pointer
/// to `F`, the type of the field that `field` (never called) borrows.
/// Called only by the macro, which takes `offset` and `field` from the
/// same field.
#[doc(hidden)]
#[inline(always)]
pub(crate) fn field_at<T, F>(base: *mut T, offset: usize, _field: fn(&T) -> &F) -> *mut F {
    base.wrapping_byte_add(offset).cast()
}

/// The bytes of the C string at `p` (without its NUL), or `None` for a
/// null `p`.
///
/// # Safety
///
/// `p` must be null or point at a NUL-terminated string that is neither
/// freed nor changed for `'a`.
pub(crate) unsafe fn c_bytes<'a>(p: *const c_char) -> Option<&'a [u8]> {
    // SAFETY: `p` is not null, so it is a NUL-terminated string kept as it
    // is for `'a` (the caller's promise).
    (!p.is_null()).then(|| unsafe { CStr::from_char_ptr(p) }.as_bytes())
}
