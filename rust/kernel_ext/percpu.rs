// SPDX-License-Identifier: GPL-2.0

//! The CPUs, as per-CPU data is indexed by them: the CPU the caller runs
//! on (`raw_smp_processor_id()`) and whether it is in an NMI, how many CPU
//! numbers there may be (`nr_cpu_ids`) and which CPUs are online. The
//! 6.12 kernel crate has none of them.
//!
//! [`raw_smp_processor_id()`] is on the event path, where a call costs
//! more than the read it wraps: the probe would save and restore the
//! registers the call clobbers around it. Counted in the benchmark's
//! instruction-counting boot (`RHIST_ICOUNT=1`), a call to C's on
//! x86-64 makes an event of `keys=a` cost 95 instructions over the
//! floor instead of 81, and one of `keys=a,b,c:vals=a,b` 166 instead of
//! 159. On x86-64 it is therefore the one instruction C's
//! `this_cpu_read()` is, written here with the layout it reads checked
//! when the module is built; on the other architectures it calls C's.
//!
//! # Examples
//!
//! A count per CPU, each CPU adding to its own:
//!
//! ```ignore
//! use core::sync::atomic::{AtomicU64, Ordering};
//! use crate::kernel_ext::percpu;
//!
//! let counts = KVec::from_elem(0u64, percpu::nr_cpu_ids(), GFP_KERNEL)?
//!     .into_iter()
//!     .map(AtomicU64::new)
//!     .collect::<KVec<_>>();
//! // With preemption disabled, as on the event path:
//! let cpu = percpu::raw_smp_processor_id() as usize;
//! counts[cpu].fetch_add(1, Ordering::Relaxed);
//! ```

use crate::shim;

/// The CPU the caller runs on: C's `raw_smp_processor_id()`. It stays
/// the caller's CPU only while the caller cannot migrate (preemption or
/// interrupts disabled, as on the event path); otherwise it is a hint.
///
/// On x86-64, the `int` `pcpu_hot.cpu_number` of this CPU's per-CPU
/// area, read as `this_cpu_read()` reads it: one instruction, `%gs`
/// relative, which takes no register but its result.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn raw_smp_processor_id() -> u32 {
    let cpu: u32;
    // SAFETY: the instruction reads the 4-byte `cpu_number` of this CPU's
    // `pcpu_hot` (its offset and type checked below, at build time): on
    // x86-64 `%gs` holds, in every context the kernel runs, the offset of
    // this CPU's per-CPU area from the per-CPU symbols' addresses, which
    // is how C's `this_cpu_read()` addresses them too. It writes nothing
    // and uses neither the stack nor the flags.
    unsafe {
        core::arch::asm!(
            "movl %gs:{hot}+{off}, {cpu:e}",
            hot = sym kernel::bindings::pcpu_hot,
            off = const x86_64::CPU_NUMBER,
            cpu = out(reg) cpu,
            options(att_syntax, nostack, preserves_flags, readonly, pure)
        );
    }
    cpu
}

/// The CPU the caller runs on (see the x86-64 version): C's.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(crate) fn raw_smp_processor_id() -> u32 {
    raw_smp_processor_id_from_c()
}

/// C's `raw_smp_processor_id()` itself, through a call: what the x86-64
/// read is tested against (KUnit's `this_cpu_is_the_kernels`).
pub(crate) fn raw_smp_processor_id_from_c() -> u32 {
    shim::rhist_smp_processor_id()
}

/// The layout [`raw_smp_processor_id()`] reads on x86-64, checked when
/// the module is built: a kernel that moves `cpu_number` out of
/// `pcpu_hot` (as later kernels do), or changes its type, fails to
/// build here rather than reading another field.
#[cfg(target_arch = "x86_64")]
mod x86_64 {
    use kernel::bindings::{pcpu_hot, pcpu_hot__bindgen_ty_1__bindgen_ty_1 as Hot};

    /// Where `cpu_number` is in `pcpu_hot` (an error if it is not there).
    pub(super) const CPU_NUMBER: usize =
        core::mem::offset_of!(pcpu_hot, __bindgen_anon_1.__bindgen_anon_1.cpu_number);

    /// Builds only if `cpu_number` is a C `int`: what `movl` reads.
    #[allow(dead_code)]
    fn cpu_number_is_an_int(hot: &Hot) -> &kernel::ffi::c_int {
        &hot.cpu_number
    }

    const _: () = assert!(core::mem::size_of::<kernel::ffi::c_int>() == 4);
    // The anonymous struct starts the union, which starts `pcpu_hot`: the
    // offset is the field's in the struct bindgen names `Hot`.
    const _: () = assert!(CPU_NUMBER == core::mem::offset_of!(Hot, cpu_number));
}

/// `nr_cpu_ids`: one more than the highest possible CPU number, the size
/// of an array indexed by CPU.
pub(crate) fn nr_cpu_ids() -> usize {
    shim::rhist_nr_cpu_ids() as usize
}

/// Whether `cpu` is online (`cpu_online()`); false for a number not
/// below [`nr_cpu_ids()`].
pub(crate) fn cpu_online(cpu: u32) -> bool {
    shim::rhist_cpu_online(cpu)
}

/// An online CPU other than `cpu`, if there is one
/// (`cpumask_any_but(cpu_online_mask, cpu)`).
pub(crate) fn any_online_cpu_but(cpu: u32) -> Option<u32> {
    // Any context but NMI; `cpu` needs no bound (none matches a number
    // past the mask).
    let other = shim::rhist_any_online_cpu_but(cpu);
    ((other as usize) < nr_cpu_ids()).then_some(other)
}

/// Whether this CPU runs an NMI handler (`in_nmi()`).
pub(crate) fn in_nmi() -> bool {
    shim::rhist_in_nmi()
}
