// SPDX-License-Identifier: GPL-2.0

//! What the core needs from the kernel about events: the fields of an
//! event's records, the context of the event being traced (CPU, timestamp,
//! stack, task), and symbol names for output.

use core::fmt::{self, Write};
use core::marker::PhantomData;
use core::mem::offset_of;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};

use kernel::alloc::flags::GFP_KERNEL;
use kernel::bindings;
use kernel::ffi::{c_char, c_int, c_ulong};
use kernel::prelude::*;

use crate::hist::event::{EventContext, EventField, FieldStorage};
use crate::hist::histogram::TaskContext;
use crate::hist::output::Resolver;
use crate::hist::program::Here;
use crate::kernel_ext::kallsyms::{sprint_symbol, SymbolBuf};
use crate::kernel_ext::list::ListIter;
use crate::kernel_ext::{c_bytes, task};
use crate::shim;
use crate::tracing::{EventFile, TraceArray};

/// A kernel string that lives as long as the event it belongs to.
///
/// # Safety
///
/// `p` must be null or a NUL-terminated string that lives for `'a`.
unsafe fn event_str<'a>(p: *const c_char) -> &'a str {
    // SAFETY: `p` is null or a NUL-terminated string that lives for `'a`
    // (the caller's promise).
    let bytes = unsafe { c_bytes(p) }.unwrap_or(b"");
    core::str::from_utf8(bytes).unwrap_or("")
}

/// The fields of the event behind `file`, in the order of its format file,
/// as the core describes them. The common fields are not included: the core
/// knows their fixed layout. The names and types borrow the event's
/// strings, for as long as `file` is borrowed.
pub(crate) fn fields(file: &EventFile) -> Result<KVec<EventField<'_>>> {
    let mut out = KVec::new();
    // SAFETY: the event is registered while `file` is borrowed (invariant
    // of `EventFile`), so its call is live.
    let head = unsafe { shim::rhist_trace_get_fields(file.call()) };
    // SAFETY: each node on the event's field list is the `link` of an
    // `ftrace_event_field`; the list is made as the event is registered and
    // freed as it is unregistered (`trace_destroy_fields()`), not changed
    // in between, and the event stays registered while `file` is borrowed
    // (invariant of `EventFile`), for as long as this walk.
    let list: ListIter<'_, bindings::ftrace_event_field, false> =
        unsafe { ListIter::new(head, offset_of!(bindings::ftrace_event_field, link)) };
    for field in list {
        // SAFETY: the field's strings are NUL-terminated and live as long
        // as the event, which stays registered while `file` is borrowed
        // (invariant of `EventFile`): for the result's lifetime.
        let (name, type_name) = unsafe { (event_str(field.name), event_str(field.type_)) };
        out.push(
            EventField {
                name,
                type_name,
                offset: field.offset as u32,
                size: field.size as u32,
                signed: field.is_signed() != 0,
                storage: FieldStorage::from_filter_type(field.filter_type),
            },
            GFP_KERNEL,
        )?;
    }
    // The kernel keeps the list newest first: the format file reverses it.
    out.as_mut_slice().reverse();
    Ok(out)
}

pub(crate) use crate::kernel_ext::percpu::{nr_cpu_ids, raw_smp_processor_id as this_cpu};

/// Word `i` (0 or 1) of the current task's name, `current->comm`, as
/// the bytes are now: on x86-64 three loads (the name's offset in the
/// task, the task, `current` as `get_current()` reads it, and the
/// word), no call, no lock. The task may rename itself (or be renamed)
/// meanwhile; as `%s` of `current->comm` anywhere in the kernel, the
/// bytes are read without the task's lock, and a word may be of the old
/// name or the new one.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn current_comm_word(i: usize) -> u64 {
    const CURRENT_TASK: usize = core::mem::offset_of!(
        bindings::pcpu_hot,
        __bindgen_anon_1.__bindgen_anon_1.current_task
    );
    let comm_at = shim::rhist_task_comm_at;
    let at = comm_at.wrapping_add(i.min(1) * 8);
    let word: u64;
    // SAFETY: the first instruction reads the pointer
    // `pcpu_hot.current_task` of this CPU's per-CPU area, as
    // `this_cpu_read_stable()` does in `get_current()`: in 6.12, x86-64
    // per-CPU symbols are offsets from 0, and %gs points at the CPU's
    // area, in any context. `current` is a live task in any context,
    // whose `comm`, at `comm_at` as C lays it out, is 16 bytes
    // (`TASK_COMM_LEN`): the second reads its first or second 8 bytes
    // (x86-64 reads a word at any alignment). The name's writer
    // (`__set_task_comm()`) may store it meanwhile: the word is then
    // bytes of either name, a value all the same, read once. Nothing is
    // written; neither the stack nor the flags are used.
    unsafe {
        core::arch::asm!(
            "movq %gs:{hot}+{off}, {word}",
            "movq ({word},{at}), {word}",
            hot = sym bindings::pcpu_hot,
            off = const CURRENT_TASK,
            at = in(reg) at,
            word = out(reg) word,
            options(att_syntax, nostack, preserves_flags, readonly, pure)
        );
    }
    word
}

/// Word `i` of the current task's name (see the x86-64 version).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn current_comm_word(i: usize) -> u64 {
    let comm = task::current_comm();
    let at = i.min(1) * 8;
    let mut word = [0u8; 8];
    word.copy_from_slice(&comm[at..at + 8]);
    u64::from_ne_bytes(word)
}

/// Where the probe runs, as a compiled program reads it
/// ([`Here`]): the CPU ([`this_cpu`]) and the current task's name, each
/// read where a program needs it. Of no size: it takes no register.
#[derive(Clone, Copy)]
pub(crate) struct OnThisCpu;

impl Here for OnThisCpu {
    #[inline(always)]
    fn cpu(self) -> u32 {
        this_cpu()
    }

    #[inline(always)]
    fn comm_word(self, i: usize) -> u64 {
        current_comm_word(i)
    }
}

/// The ring buffer event being traced, in its ring buffer, as the tracing
/// core passes them to a trigger.
///
/// # Invariants
///
/// `rbe` is the ring buffer event of the event being traced, and `buffer`
/// the ring buffer it is written to, both live for `'a`.
#[derive(Clone, Copy)]
pub(crate) struct RingEvent<'a> {
    buffer: *mut bindings::trace_buffer,
    rbe: NonNull<bindings::ring_buffer_event>,
    _traced: PhantomData<&'a bindings::ring_buffer_event>,
}

impl<'a> RingEvent<'a> {
    /// The event `rbe` of `buffer`.
    ///
    /// # Safety
    ///
    /// `rbe` must be the ring buffer event being traced, and `buffer` its
    /// ring buffer, both live for `'a`.
    #[inline(always)]
    pub(crate) unsafe fn new(
        buffer: *mut bindings::trace_buffer,
        rbe: NonNull<bindings::ring_buffer_event>,
    ) -> Self {
        // INVARIANT: the caller's promise.
        RingEvent {
            buffer,
            rbe,
            _traced: PhantomData,
        }
    }

    /// The length the ring buffer gives its record
    /// (`ring_buffer_event_length()`).
    #[inline(always)]
    pub(crate) fn length(self) -> usize {
        // SAFETY: `rbe` is live for `'a` (invariant), and is only read.
        unsafe { bindings::ring_buffer_event_length(self.rbe.as_ptr()) as usize }
    }

    /// The event's time stamp in its buffer's clock
    /// (`tracing_event_time_stamp()`).
    fn timestamp(self) -> u64 {
        // SAFETY: `rbe` and its ring buffer `buffer` are live for `'a`
        // (invariant), and are only read.
        unsafe { bindings::tracing_event_time_stamp(self.buffer, self.rbe.as_ptr()) }
    }
}

/// The event being traced, as the general path reads it: its ring buffer
/// event, and the trace array of the trigger's file.
pub(crate) struct ProbeContext<'a> {
    event: RingEvent<'a>,
    instance: &'a TraceArray,
}

impl<'a> ProbeContext<'a> {
    /// The context of `event`, traced in `instance`.
    #[inline(always)]
    pub(crate) fn new(event: RingEvent<'a>, instance: &'a TraceArray) -> Self {
        ProbeContext { event, instance }
    }
}

impl EventContext for ProbeContext<'_> {
    fn cpu(&self) -> u32 {
        this_cpu()
    }

    fn timestamp(&self) -> u64 {
        self.event.timestamp()
    }

    fn clock_in_ns(&self) -> bool {
        self.instance.clock_in_ns()
    }

    fn stacktrace(&self, out: &mut [u64]) {
        out.fill(0);
        let mut raw = [0u64; RAW_FRAMES];
        // SAFETY: `raw` is valid for `RAW_FRAMES` entries of unsigned long
        // (u64 on 64-bit kernels).
        let n = unsafe {
            bindings::stack_trace_save(raw.as_mut_ptr().cast::<c_ulong>(), RAW_FRAMES as u32, 0)
        } as usize;
        let raw = &raw[..n.min(RAW_FRAMES)];
        let first = first_frame_shown(raw);
        let shown = raw.get(first..).unwrap_or(&[]);
        let len = shown.len().min(out.len());
        out[..len].copy_from_slice(&shown[..len]);
    }

    fn comm(&self) -> [u8; 16] {
        task::current_comm()
    }
}

/// Frames saved before picking what hist shows: hist's 16, and room for
/// the tracing core's and rhist's own frames above them.
const RAW_FRAMES: usize = 32;

/// How many frames hist leaves out from the return into
/// `event_triggers_call()` on: hist skips a fixed count from its own
/// frame, which `event_triggers_call()` calls, so the same frames as
/// rhist's, whatever they are. For a tracepoint they are that return,
/// `trace_event_buffer_commit()`, the event's `trace_event_raw_event_*()`
/// probe, and `__traceiter_*()` or, when the probe is the tracepoint's
/// only one and its static call goes straight to it, the code that
/// traced the event.
const FRAMES_HIDDEN_FROM_TRIGGERS_CALL: usize = 4;

/// The size of `event_triggers_call()`'s code, from kallsyms at load;
/// 0 if unknown.
static TRIGGERS_CALL_SIZE: AtomicUsize = AtomicUsize::new(0);

/// Looks up the size of `event_triggers_call()`, which anchors the frames
/// a stack trace key shows (see [`first_frame_shown`]).
pub(crate) fn find_stack_anchor() {
    let start = bindings::event_triggers_call as *const () as usize;
    let mut buf = SymbolBuf::new();
    let text = core::str::from_utf8(sprint_symbol(&mut buf, start, true)).unwrap_or("");
    // "event_triggers_call+0x0/0x1a0": the size follows the slash.
    let size = text
        .split_once('/')
        .and_then(|(_, size)| size.split(' ').next())
        .and_then(|size| size.strip_prefix("0x"))
        .and_then(|size| usize::from_str_radix(size, 16).ok())
        .unwrap_or(0);
    if size == 0 {
        pr_warn!("stack trace keys: cannot find event_triggers_call in kallsyms\n");
    }
    TRIGGERS_CALL_SIZE.store(size, Ordering::Relaxed);
}

/// The index of the first frame of `raw` that hist shows. hist skips a
/// count fixed for its own call depth; rhist's depth differs (and moves
/// with inlining), so it finds the return into `event_triggers_call()`,
/// which calls both, and skips what hist skips from there.
fn first_frame_shown(raw: &[u64]) -> usize {
    let start = bindings::event_triggers_call as *const () as usize as u64;
    let size = TRIGGERS_CALL_SIZE.load(Ordering::Relaxed) as u64;
    raw.iter()
        .position(|&addr| addr.wrapping_sub(start) < size)
        .map_or(HIST_STACKTRACE_SKIP, |i| {
            i + FRAMES_HIDDEN_FROM_TRIGGERS_CALL
        })
}

/// hist's own skip count (`HIST_STACKTRACE_SKIP`): the fallback when the
/// anchor is unknown.
const HIST_STACKTRACE_SKIP: usize = 5;

impl TaskContext for ProbeContext<'_> {
    /// Not `current!().pid()`: the 6.12 kernel crate's `Task::pid()`
    /// reads the field at bindgen's offset in `task_struct` (0x3f0 on the
    /// test kernel), where C's `current->pid` is at 0x400, and reads 0 for
    /// every task (every execname key became `<idle>`). The shim reads it
    /// with C's layout, as `current_comm_word()` takes `comm`'s offset.
    fn pid(&self) -> i32 {
        shim::rhist_current_pid()
    }
}

/// Symbols through kallsyms.
pub(crate) struct KernelSymbols;

impl Resolver for KernelSymbols {
    fn symbol(&self, addr: u64, with_offset: bool, out: &mut dyn Write) -> fmt::Result {
        let mut buf = SymbolBuf::new();
        match core::str::from_utf8(sprint_symbol(&mut buf, addr as usize, with_offset)) {
            Ok(s) => out.write_str(s),
            Err(_) => write!(out, "0x{addr:x}"),
        }
    }

    fn syscall_name(&self, nr: u64) -> Option<&str> {
        // C's hist passes the key to get_syscall_name() as an int.
        // SAFETY: get_syscall_name() range-checks `nr` and returns NULL or
        // the name in the syscall metadata, a NUL-terminated string that
        // lives as long as the kernel and never changes after boot.
        let name = unsafe { c_bytes(bindings::get_syscall_name(nr as c_int)) }?;
        core::str::from_utf8(name).ok()
    }

    /// Files are written in process context, with at most
    /// `event_mutex` held: they may reschedule.
    fn pause(&self) {
        // It may sleep, which a file's write may (the only user of
        // `KernelSymbols`).
        task::cond_resched();
    }
}
