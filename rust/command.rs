// SPDX-License-Identifier: GPL-2.0

//! The `rhist` trigger command: parsing what users write to an event's
//! `trigger` file, attaching and removing rhist triggers, and the callback
//! the tracing core runs on every event.
//!
//! Every trigger this module attaches is also kept in [`REGISTRY`], so that
//! unloading the module can remove them all (the tracing core does not know
//! that a command can go away).

use core::cell::UnsafeCell;
use core::ptr;
use kernel::ffi::{c_char, c_int, c_void};

use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::VVec;
use kernel::bindings;
use kernel::error::{code, Error};
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::Arc;

use crate::event::{self, ProbeContext};
use crate::hist;
use crate::hist::error::{
    errno::{EEXIST, ENOENT},
    HistError, HistErrorKind,
};
use crate::hist::event::{EventDesc, EventField, COMMON_FIELDS};
use crate::hist::grammar::TriggerSpec;
use crate::hist::hist_data::{BuildOptions, HistData};
use crate::hist::histogram::{self, Histogram};
use crate::hist::map::TracingMap;
use crate::shim;
use crate::tracefs::{self, ErrText, EventMutexGuard, SeqWriter};

/// A histogram and everything it borrows. Named triggers on several
/// events share one (as hist's named triggers share their hist data).
///
/// # Invariants
///
/// `hist` borrows `data`, `text`, `fields` and `map_memory` (with a
/// `'static` lifetime the borrow checker cannot see), and `data` borrows
/// `text` and `fields`, whose strings belong to the event `_origin` pins:
/// none of them is touched again once `hist` is built, and the borrowers
/// are declared first, so they are dropped first.
pub(crate) struct Hist {
    hist: Histogram<'static>,
    /// On the heap: it is large, and the kernel's stack is small.
    data: KBox<HistData<'static>>,
    text: KVec<u8>,
    fields: KVec<EventField<'static>>,
    map_memory: VVec<u8>,
    /// The event the histogram was resolved against.
    _origin: EventPin,
}

// SAFETY: the raw pointers inside refer to the pinned event and to memory
// the value owns; the histogram itself is lock-free and made for
// concurrent use from any CPU.
unsafe impl Send for Hist {}
// SAFETY: as above; shared access only reads or updates atomics.
unsafe impl Sync for Hist {}

/// The state of one rhist trigger, owned by its `event_trigger_data`
/// through `private_data`. The event behind `file` is pinned and `file`
/// referenced for as long as the trigger lives.
pub(crate) struct Trigger {
    hist: Arc<Hist>,
    /// The canonical trigger info without filter and state: what hist
    /// compares to tell triggers apart.
    info: KVec<u8>,
    file: *mut bindings::trace_event_file,
    /// How many bytes of this event's records the histogram reads, when
    /// it reads only the fixed part (see `HistData::record_span()`);
    /// `None`: the event path asks the ring buffer for each record's
    /// length.
    record_span: Option<usize>,
    _pin: EventPin,
}

/// Why a trigger could not be built.
enum BuildError {
    /// Rejected as hist would reject it.
    Hist(HistError),
    /// Out of memory, or the event is going away.
    Kernel(Error),
}

impl From<Error> for BuildError {
    fn from(e: Error) -> Self {
        BuildError::Kernel(e)
    }
}

impl From<kernel::alloc::AllocError> for BuildError {
    fn from(_: kernel::alloc::AllocError) -> Self {
        BuildError::Kernel(code::ENOMEM)
    }
}

impl From<HistError> for BuildError {
    fn from(e: HistError) -> Self {
        BuildError::Hist(e)
    }
}

/// Views a vector's contents as `'static`.
///
/// # Safety
///
/// The vector's buffer must not be changed or freed while the result is
/// used (see the invariants of [`Trigger`]).
unsafe fn forever<T>(v: &[T]) -> &'static [T] {
    // SAFETY: the caller's contract: the heap buffer stays put and
    // unchanged for as long as the result is used.
    unsafe { core::slice::from_raw_parts(v.as_ptr(), v.len()) }
}

impl Trigger {
    /// Builds the trigger `rhist:<text>` for `file`: parses the text,
    /// resolves it against the event and sets up the map.
    ///
    /// # Safety
    ///
    /// `file` must be a live event file; `event_mutex` held.
    // Not inlined: its frame would add to `parse()`'s, on a small stack.
    #[inline(never)]
    unsafe fn new(
        file: *mut bindings::trace_event_file,
        text: &[u8],
        remove: bool,
    ) -> Result<KBox<Self>, BuildError> {
        // SAFETY: `file` is live and `event_mutex` held.
        let (hist, info) = unsafe { Hist::new(file, text, remove) }?;
        // SAFETY: as above.
        let pin = unsafe { EventPin::new(file) }?;
        // The histogram was resolved against this very event.
        let record_span = hist.hist.data().record_span();
        Ok(KBox::new(
            Trigger {
                hist,
                info,
                file,
                record_span,
                _pin: pin,
            },
            GFP_KERNEL,
        )?)
    }

    /// The histogram.
    pub(crate) fn hist(&self) -> &Histogram<'static> {
        &self.hist.hist
    }

    /// The canonical trigger info, without filter and state.
    pub(crate) fn info(&self) -> &[u8] {
        &self.info
    }

    /// The `name=...` piece of a named trigger.
    fn name(&self) -> Option<&str> {
        self.hist.data.spec().name_attr()
    }
}

impl Hist {
    /// Parses `rhist:<text>`, resolves it against the event behind `file`
    /// and sets up the map; returns it with its canonical trigger info.
    ///
    /// # Safety
    ///
    /// `file` must be a live event file; `event_mutex` held.
    // Not inlined: its frame would add to `parse()`'s, on a small stack.
    #[inline(never)]
    unsafe fn new(
        file: *mut bindings::trace_event_file,
        text: &[u8],
        remove: bool,
    ) -> Result<(Arc<Self>, KVec<u8>), BuildError> {
        // SAFETY: `file` is live.
        let origin = unsafe { EventPin::new(file) }?;

        let mut owned_text = KVec::new();
        owned_text.extend_from_slice(text, GFP_KERNEL)?;
        // SAFETY: `owned_text` is never changed after this and outlives
        // every borrower (the invariants of `Hist`).
        let text_str = core::str::from_utf8(unsafe { forever(&owned_text) })
            .map_err(|_| BuildError::Kernel(code::EINVAL))?;
        let spec = hist::trigger::parse(text_str)?;

        // SAFETY: `file` is live and its event pinned.
        let fields = unsafe { event::fields(file) }?;
        // SAFETY: `file` is live.
        let (system, name) = unsafe { tracefs::event_names(file) };
        let desc = EventDesc {
            system: core::str::from_utf8(system).unwrap_or(""),
            name: core::str::from_utf8(name).unwrap_or(""),
            // SAFETY: `fields` is never changed after this (invariants).
            fields: unsafe { forever(&fields) },
            common_fields: &COMMON_FIELDS,
        };
        let mut data = empty_hist_data(&spec)?;
        // C's find_var() also looks at the variables of the event's other
        // triggers (of the same command).
        let defined_elsewhere = |name: &str| {
            // SAFETY: `file` is live and `event_mutex` held: its trigger
            // list and our triggers on it stay as they are meanwhile.
            unsafe { tracefs::triggers(file) }
                // SAFETY: as above.
                .filter(|&d| unsafe { is_ours(d) })
                .any(|d| {
                    // SAFETY: `d` is a live rhist trigger.
                    let other = unsafe { state(d) }.hist().data();
                    (0..other.n_vars()).any(|i| other.var_name(i) == Some(name))
                })
        };
        let options = BuildOptions {
            remove,
            defined_elsewhere: Some(&defined_elsewhere),
        };
        HistData::build_into_with(&mut data, &spec, &desc, options)?;
        // SAFETY: `data` is never changed after this and outlives `hist`
        // (the invariants of `Hist`).
        let data_ref: &'static HistData<'static> =
            unsafe { &*(&*data as *const HistData<'static>) };

        let mut info = KVec::new();
        let mut w = VecWriter(&mut info, false);
        let _ = data_ref.write_info(&mut w, hist::trigger::PREFIX);
        if w.1 {
            return Err(code::ENOMEM.into());
        }

        let params = histogram::map_params(data_ref);
        let bytes = params
            .storage_bytes()
            .map_err(|e| BuildError::Kernel(Error::from_errno(-e.errno())))?;
        // vmalloc(): kvmalloc() would try kmalloc() first, which rounds
        // maps of up to a few MB up to a power of two of pages.
        let mut map_memory = VVec::<u8>::new();
        map_memory.reserve(bytes, GFP_KERNEL)?;
        // SAFETY: the spare capacity is never touched again through the
        // vector, whose buffer outlives `hist` (invariants).
        let memory = unsafe {
            let spare = map_memory.spare_capacity_mut();
            core::slice::from_raw_parts_mut(spare.as_mut_ptr(), spare.len())
        };
        let map = TracingMap::new_uninit(params, memory)
            .map_err(|e| BuildError::Kernel(Error::from_errno(-e.errno())))?;
        let hist = Histogram::new(data_ref, map)
            .map_err(|e| BuildError::Kernel(Error::from_errno(-e.errno())))?;

        let hist = Arc::new(
            Hist {
                hist,
                data,
                text: owned_text,
                fields,
                map_memory,
                _origin: origin,
            },
            GFP_KERNEL,
        )?;
        Ok((hist, info))
    }
}

/// A heap [`HistData`] to build into. Not inlined: the (large) value is
/// made on this function's frame, which is gone before the build, deeper
/// down the stack, begins.
#[inline(never)]
fn empty_hist_data<'a>(spec: &TriggerSpec<'a>) -> Result<KBox<HistData<'a>>, BuildError> {
    Ok(KBox::new(HistData::empty(spec), GFP_KERNEL)?)
}

impl Drop for Hist {
    fn drop(&mut self) {
        // The borrowed buffers are dropped after this, with the fields.
        let _ = (&self.data, &self.text, &self.fields, &self.map_memory);
    }
}

/// A pinned and referenced event file; releases both when dropped.
struct EventPin(*mut bindings::trace_event_file);

impl EventPin {
    /// Pins the event behind `file` and takes a reference on `file`.
    ///
    /// # Safety
    ///
    /// `file` must be a live event file.
    unsafe fn new(file: *mut bindings::trace_event_file) -> Result<Self> {
        // SAFETY: `file` is live; its call is live.
        if !unsafe { shim::rhist_pin_event((*file).event_call) } {
            return Err(code::ENODEV);
        }
        // SAFETY: `file` is live; released in `drop`.
        unsafe { bindings::event_file_get(file) };
        Ok(EventPin(file))
    }
}

impl Drop for EventPin {
    fn drop(&mut self) {
        // SAFETY: made only after pinning the event and taking a reference
        // on the file, each released exactly once here.
        unsafe {
            shim::rhist_unpin_event((*self.0).event_call);
            bindings::event_file_put(self.0);
        }
    }
}

/// `core::fmt::Write` into a vector; remembers an allocation failure.
struct VecWriter<'a>(&'a mut KVec<u8>, bool);

impl core::fmt::Write for VecWriter<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        if self.0.extend_from_slice(s.as_bytes(), GFP_KERNEL).is_err() {
            self.1 = true;
            return Err(core::fmt::Error);
        }
        Ok(())
    }
}

/// The trigger command; the tracing core links it into its command list.
struct Command(UnsafeCell<bindings::event_command>);

// SAFETY: the tracing core mutates the command (its list node) only under
// its own lock; rhist never writes to it after registration.
unsafe impl Sync for Command {}

static COMMAND: Command = Command(UnsafeCell::new(bindings::event_command {
    list: bindings::list_head {
        next: ptr::null_mut(),
        prev: ptr::null_mut(),
    },
    name: c"rhist".as_ptr().cast::<c_char>().cast_mut(),
    trigger_type: bindings::event_trigger_type_ETT_NONE,
    flags: bindings::event_command_flags_EVENT_CMD_FL_NEEDS_REC as c_int,
    parse: Some(parse),
    reg: Some(reg),
    unreg: Some(unreg),
    unreg_all: Some(unreg_all),
    set_filter: Some(bindings::set_trigger_filter),
    trigger: Some(on_event),
    count_func: None,
    init: Some(init),
    free: Some(free),
    print: Some(print),
}));

fn command() -> *mut bindings::event_command {
    COMMAND.0.get()
}

/// Whether `data` is an rhist trigger.
///
/// # Safety
///
/// `data` must be a live trigger.
pub(crate) unsafe fn is_ours(data: *mut bindings::event_trigger_data) -> bool {
    // SAFETY: `data` is live.
    unsafe { (*data).cmd_ops == command() }
}

/// The rhist state of an rhist trigger.
///
/// # Safety
///
/// `data` must be a live rhist trigger (see [`is_ours`]).
pub(crate) unsafe fn state<'a>(data: *mut bindings::event_trigger_data) -> &'a Trigger {
    // SAFETY: rhist triggers own a `Trigger` in `private_data` until freed.
    unsafe { &*(*data).private_data.cast::<Trigger>() }
}

/// The triggers rhist has attached, guarded by `event_mutex`.
struct Registry(UnsafeCell<KVec<*mut bindings::event_trigger_data>>);

// SAFETY: the vector is only touched with `event_mutex` held.
unsafe impl Sync for Registry {}

static REGISTRY: Registry = Registry(UnsafeCell::new(KVec::new()));

impl Registry {
    /// # Safety
    ///
    /// `event_mutex` must be held while the result is used.
    #[allow(clippy::mut_from_ref)]
    unsafe fn get(&self) -> &mut KVec<*mut bindings::event_trigger_data> {
        tracefs::assert_event_mutex_held();
        // SAFETY: `event_mutex` serialises all access (the caller's contract).
        unsafe { &mut *self.0.get() }
    }

    /// # Safety
    ///
    /// `event_mutex` must be held.
    unsafe fn remove(&self, data: *mut bindings::event_trigger_data) {
        // SAFETY: the caller holds `event_mutex`.
        let list = unsafe { self.get() };
        if let Some(at) = list.iter().position(|&d| d == data) {
            let last = list.len() - 1;
            list.as_mut_slice().swap(at, last);
            // SAFETY: shrinking by one drops nothing (raw pointers).
            unsafe { list.set_len(last) };
        }
    }
}

/// The registration of the command with the tracing core.
pub(crate) struct Registration(());

impl Registration {
    /// Registers the `rhist` trigger command.
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: `COMMAND` is static and fully initialised.
        let ret = unsafe { bindings::register_event_command(command()) };
        if ret != 0 {
            pr_err!("cannot register the trigger command 'rhist' (error {ret}): is another rhist loaded?\n");
            return Err(Error::from_errno(ret));
        }
        Ok(Self(()))
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: the command was registered by `new()`. Once this returns,
        // no parse of it runs or can start.
        unsafe { bindings::unregister_event_command(command()) };

        let _guard = EventMutexGuard::lock();
        let mut detached = KVec::new();
        // SAFETY: `event_mutex` is held.
        core::mem::swap(unsafe { REGISTRY.get() }, &mut detached);
        for &data in detached.iter() {
            // SAFETY: registered triggers are live and on their file's list;
            // `event_mutex` is held.
            unsafe { detach(data) };
        }
        for &data in detached.iter() {
            // SAFETY: `data` is detached and holds the list's reference;
            // `free()` waits for running probes before it frees.
            unsafe { free(data) };
        }
    }
}

/// Unlinks `data` from its event file, as the tracing core's own
/// unregistration does.
///
/// # Safety
///
/// `data` must be a live rhist trigger on its file's list, with
/// `event_mutex` held.
unsafe fn detach(data: *mut bindings::event_trigger_data) {
    // SAFETY: the caller's contract.
    unsafe {
        let file = state(data).file;
        shim::rhist_list_del_rcu(ptr::addr_of_mut!((*data).list));
        bindings::trace_event_trigger_enable_disable(file, 0);
        bindings::update_cond_flag(file);
        if state(data).hist().data().uses_timestamps() {
            // Taken in `attach()`.
            bindings::tracing_set_filter_buffering((*file).tr, false);
        }
    }
}

/// error_log messages of the trigger command, NUL-terminated, indexed as
/// C's `err_text[]`.
static ERRORS: [ErrText; hist::trigger::ERROR_COUNT] = {
    let mut table = [const { ErrText(ptr::null()) }; hist::trigger::ERROR_COUNT];
    let mut i = 0;
    while i < table.len() {
        table[i] = ErrText(hist::trigger::C_MESSAGES[i].as_ptr().cast());
        i += 1;
    }
    table
};

/// Logs `err` for the command `rhist:<text>` to tracing/error_log, if C
/// would log one, and returns its negative errno.
///
/// # Safety
///
/// `file` must be a live event file.
unsafe fn reject(file: *mut bindings::trace_event_file, text: &[u8], err: &HistError) -> c_int {
    let Some(kind) = err.kind() else {
        return -err.errno();
    };
    let prefix = hist::trigger::PREFIX.as_bytes();
    // SAFETY: `file` is live.
    let (system, event) = unsafe { tracefs::event_names(file) };
    let mut loc = KVec::new();
    let mut cmd = KVec::new();
    let built = (|| -> Result<(), kernel::alloc::AllocError> {
        for part in [prefix, system, b":", event, b"\0"] {
            loc.extend_from_slice(part, GFP_KERNEL)?;
        }
        for part in [prefix, text, b"\0"] {
            cmd.extend_from_slice(part, GFP_KERNEL)?;
        }
        Ok(())
    })();
    if built.is_ok() {
        // SAFETY: `file` is live; both strings are NUL-terminated.
        unsafe { tracefs::log_error(file, &loc, &cmd, &ERRORS, kind.c_index().into(), err.pos()) };
    }
    -err.errno()
}

/// Borrows a C string argument.
///
/// # Safety
///
/// `p` must be null or a NUL-terminated string valid for `'a`.
unsafe fn c_bytes<'a>(p: *const c_char) -> Option<&'a [u8]> {
    // SAFETY: the caller's contract.
    (!p.is_null()).then(|| unsafe { CStr::from_char_ptr(p) }.as_bytes())
}

/// Finds the rhist trigger on `file` that hist would take for the same
/// one: same canonical info, same filter.
///
/// # Safety
///
/// `file` must be live and `event_mutex` held.
unsafe fn find(
    file: *mut bindings::trace_event_file,
    info: &[u8],
    filter: Option<&str>,
) -> Option<*mut bindings::event_trigger_data> {
    let filter = filter.map(str::as_bytes);
    // SAFETY: the caller's contract; we only look.
    unsafe { tracefs::triggers(file) }.find(|&d| {
        // SAFETY: the triggers are live under `event_mutex`.
        unsafe { is_ours(d) && state(d).info() == info && c_bytes((*d).filter_str) == filter }
    })
}

/// The first rhist trigger named `name` (`name=...`), on any event.
///
/// # Safety
///
/// `event_mutex` must be held.
unsafe fn find_named<'a>(name: &str) -> Option<&'a Trigger> {
    // SAFETY: the caller holds `event_mutex`; registered triggers are live.
    unsafe { REGISTRY.get() }
        .iter()
        // SAFETY: as above.
        .map(|&d| unsafe { state(d) })
        .find(|t| t.name() == Some(name))
}

/// `parse()`: handles `[!]rhist:<param> [if <filter>]` written to `file`'s
/// trigger file, as hist's parse does. Called with `event_mutex` held.
unsafe extern "C" fn parse(
    cmd_ops: *mut bindings::event_command,
    file: *mut bindings::trace_event_file,
    glob: *mut c_char,
    _cmd: *mut c_char,
    param_and_filter: *mut c_char,
) -> c_int {
    // SAFETY: the tracing core passes valid strings and a live file.
    let (glob, text) = unsafe { (c_bytes(glob).unwrap_or(b""), c_bytes(param_and_filter)) };
    let remove = glob.first() == Some(&b'!');
    let Some(text) = text else {
        return code::EINVAL.to_errno();
    };
    // SAFETY: `file` is live and `event_mutex` held.
    let mut trigger = match unsafe { Trigger::new(file, text, remove) } {
        Ok(trigger) => trigger,
        // SAFETY: `file` is live.
        Err(BuildError::Hist(err)) => return unsafe { reject(file, text, &err) },
        Err(BuildError::Kernel(e)) => return e.to_errno(),
    };
    let spec = *trigger.hist().data().spec();

    // SAFETY: `event_mutex` is held by the tracing core.
    let existing = unsafe { find(file, trigger.info(), spec.filter_expr()) };
    if remove {
        // Like hist, removing a trigger that is not there is no error.
        if let Some(data) = existing {
            // SAFETY: `data` is a live rhist trigger on `file`.
            unsafe { unregister_one(data) };
        }
        return 0;
    }

    if let Some(data) = existing {
        // SAFETY: `data` is a live rhist trigger; `event_mutex` is held.
        unsafe {
            if spec.pause() {
                (*data).paused = true;
            } else if spec.cont() {
                (*data).paused = false;
            } else if spec.clear() {
                clear(data);
            } else {
                let err = HistError::with_errno(HistErrorKind::TriggerEexist, 0, EEXIST);
                return reject(file, text, &err);
            }
        }
        return 0;
    }
    if spec.cont() || spec.clear() {
        let err = HistError::with_errno(HistErrorKind::TriggerEnoentClear, 0, ENOENT);
        // SAFETY: `file` is live.
        return unsafe { reject(file, text, &err) };
    }
    // A named trigger shares the histogram of the first trigger of that
    // name, on whichever event, if they match.
    if let Some(name) = trigger.name() {
        // SAFETY: `event_mutex` is held.
        if let Some(named) = unsafe { find_named(name) } {
            if named.info() != trigger.info() {
                let pos = spec.errpos(name);
                let err = HistError::new(HistErrorKind::NamedMismatch, pos);
                // SAFETY: `file` is live.
                return unsafe { reject(file, text, &err) };
            }
            trigger.hist = named.hist.clone();
            // Resolved against another event, maybe: its offsets say
            // nothing of this event's records.
            trigger.record_span = None;
        }
    }

    // hist sets the instance's trace clock for a trigger that reads
    // timestamps.
    let clock = trigger
        .hist()
        .data()
        .uses_timestamps()
        .then(|| (spec.clock(), spec.errpos(spec.clock())));
    // SAFETY: `cmd_ops` and `file` come from the tracing core.
    match unsafe { attach(cmd_ops, file, trigger, spec.filter(), spec.pause(), clock) } {
        Ok(()) => 0,
        // SAFETY: `file` is live.
        Err(BuildError::Hist(err)) => unsafe { reject(file, text, &err) },
        Err(BuildError::Kernel(e)) => e.to_errno(),
    }
}

/// Empties a trigger's histogram as hist's `clear` does: with the trigger
/// paused and running probes waited for.
///
/// # Safety
///
/// `data` must be a live rhist trigger, `event_mutex` held.
unsafe fn clear(data: *mut bindings::event_trigger_data) {
    // SAFETY: the caller's contract.
    unsafe {
        let paused = (*data).paused;
        core::ptr::write_volatile(ptr::addr_of_mut!((*data).paused), true);
        shim::rhist_tracepoint_synchronize_unregister();
        state(data).hist().clear();
        core::ptr::write_volatile(ptr::addr_of_mut!((*data).paused), paused);
    }
}

/// Filters and attaches a new trigger. With `clock`, sets the instance's
/// trace clock and has events written straight to the ring buffer while
/// the trigger lives, as hist does for triggers that read timestamps; a
/// clock the instance does not know fails with hist's `SET_CLOCK_FAIL` at
/// the position given with it.
///
/// # Safety
///
/// Called from `parse()` with its arguments and `event_mutex` held.
unsafe fn attach(
    cmd_ops: *mut bindings::event_command,
    file: *mut bindings::trace_event_file,
    trigger: KBox<Trigger>,
    filter: Option<&str>,
    paused: bool,
    clock: Option<(&str, usize)>,
) -> Result<(), BuildError> {
    // `set_trigger_filter()` cuts its argument up: give it a copy.
    let mut filter_buf = KVec::new();
    if let Some(filter) = filter {
        filter_buf.extend_from_slice(filter.as_bytes(), GFP_KERNEL)?;
        filter_buf.push(0, GFP_KERNEL)?;
    }
    let mut clock_buf = KVec::new();
    if let Some((clock, _)) = clock {
        clock_buf.extend_from_slice(clock.as_bytes(), GFP_KERNEL)?;
        clock_buf.push(0, GFP_KERNEL)?;
    }
    // Room in the registry first: after attaching, nothing may fail.
    // SAFETY: `event_mutex` is held.
    let registry = unsafe { REGISTRY.get() };
    registry.push(ptr::null_mut(), GFP_KERNEL)?;
    // SAFETY: shrinking by one: the slot is only reserved.
    unsafe { registry.set_len(registry.len() - 1) };

    // SAFETY: `cmd_ops` is our command; no count parameter.
    let data = unsafe {
        bindings::trigger_data_alloc(cmd_ops, ptr::null_mut(), ptr::null_mut(), ptr::null_mut())
    };
    if data.is_null() {
        return Err(code::ENOMEM.into());
    }
    // SAFETY: `data` is ours until attached; it owns the trigger from here.
    unsafe {
        (*data).private_data = KBox::into_raw(trigger).cast::<c_void>();
        (*data).paused = paused;
    }
    // Hold a reference while setting up, so a failure frees exactly once.
    // SAFETY: `data` is a valid trigger.
    unsafe { init(data) };

    // SAFETY: the filter copy is NUL-terminated and writable; `data` and
    // `file` are live.
    let ret = unsafe {
        if filter_buf.is_empty() {
            0
        } else {
            bindings::set_trigger_filter(filter_buf.as_mut_ptr().cast(), data, file)
        }
    };
    let mut result = if ret < 0 {
        Err(BuildError::Kernel(Error::from_errno(ret)))
    } else {
        Ok(())
    };
    if result.is_ok() && !clock_buf.is_empty() {
        // SAFETY: `file` is live; the clock name is NUL-terminated.
        let ret = unsafe { bindings::tracing_set_clock((*file).tr, clock_buf.as_ptr().cast()) };
        if ret < 0 {
            let pos = clock.map_or(0, |(_, pos)| pos);
            let err = HistError::with_errno(HistErrorKind::SetClockFail, pos, -ret);
            result = Err(BuildError::Hist(err));
        } else {
            // SAFETY: `file` is live; `detach()` (or the failure below)
            // drops this reference.
            unsafe { bindings::tracing_set_filter_buffering((*file).tr, true) };
        }
    }
    if result.is_ok() {
        // SAFETY: `data` is set up; `event_mutex` is held.
        let ret = unsafe { reg(ptr::null_mut(), data, file) };
        if ret < 0 {
            if !clock_buf.is_empty() {
                // SAFETY: taken above.
                unsafe { bindings::tracing_set_filter_buffering((*file).tr, false) };
            }
            result = Err(BuildError::Kernel(Error::from_errno(ret)));
        }
    }
    // SAFETY: drops the setup reference; on failure this frees everything.
    unsafe { free(data) };
    result
}

/// Detaches and drops one trigger.
///
/// # Safety
///
/// `data` must be a live rhist trigger on its file, `event_mutex` held.
unsafe fn unregister_one(data: *mut bindings::event_trigger_data) {
    // SAFETY: the caller's contract.
    unsafe {
        detach(data);
        free(data);
    }
}

/// `reg()`: attaches `data` to `file`.
unsafe extern "C" fn reg(
    _glob: *mut c_char,
    data: *mut bindings::event_trigger_data,
    file: *mut bindings::trace_event_file,
) -> c_int {
    tracefs::assert_event_mutex_held();
    // SAFETY: the registry has room (reserved in `create()`); `event_mutex`
    // is held; `data` and `file` are live.
    unsafe {
        init(data);
        // At the tail, as hist does: the files list triggers in that order.
        shim::rhist_list_add_tail_rcu(
            ptr::addr_of_mut!((*data).list),
            ptr::addr_of_mut!((*file).triggers),
        );
        bindings::update_cond_flag(file);
        let ret = bindings::trace_event_trigger_enable_disable(file, 1);
        if ret < 0 {
            shim::rhist_list_del_rcu(ptr::addr_of_mut!((*data).list));
            bindings::update_cond_flag(file);
            free(data);
            return ret;
        }
        // Cannot fail: `create()` reserved the slot.
        let _ = REGISTRY.get().push(data, GFP_KERNEL);
    }
    0
}

/// `unreg()`: removes the rhist trigger of `file` with `data`'s text.
unsafe extern "C" fn unreg(
    _glob: *mut c_char,
    data: *mut bindings::event_trigger_data,
    file: *mut bindings::trace_event_file,
) {
    // SAFETY: `data` is an rhist trigger; `event_mutex` is held.
    unsafe {
        let filter = c_bytes((*data).filter_str).and_then(|f| core::str::from_utf8(f).ok());
        if let Some(found) = find(file, state(data).info(), filter) {
            unregister_one(found);
        }
    }
}

/// `unreg_all()`: removes every rhist trigger of `file` (the trigger file
/// was opened with O_TRUNC).
unsafe extern "C" fn unreg_all(file: *mut bindings::trace_event_file) {
    // SAFETY: `event_mutex` is held by the caller; the next node is read
    // before the current one is unlinked.
    loop {
        let next = unsafe { tracefs::triggers(file) }.find(|&d| unsafe { is_ours(d) });
        match next {
            // SAFETY: `data` is a live rhist trigger on `file`.
            Some(data) => unsafe { unregister_one(data) },
            None => break,
        }
    }
}

/// `init()`: takes a reference on `data`.
unsafe extern "C" fn init(data: *mut bindings::event_trigger_data) -> c_int {
    // SAFETY: `data` is live; references are changed under `event_mutex`
    // or before the trigger is published.
    unsafe { (*data).ref_ += 1 };
    0
}

/// `free()`: drops a reference on `data`, freeing it with the last one.
/// Called with `event_mutex` held: from our own paths, and from the
/// tracing core when it clears the triggers of an instance being removed.
unsafe extern "C" fn free(data: *mut bindings::event_trigger_data) {
    // SAFETY: `data` is live and holds at least one reference; the caller
    // holds `event_mutex`.
    unsafe {
        if (*data).ref_ <= 0 {
            pr_warn!("unbalanced trigger reference\n");
            return;
        }
        (*data).ref_ -= 1;
        if (*data).ref_ > 0 {
            return;
        }
        REGISTRY.remove(data);
        let state = (*data).private_data.cast::<Trigger>();
        // Clears the filter and waits for running probes before freeing.
        bindings::trigger_data_free(data);
        if !state.is_null() {
            drop(KBox::from_raw(state));
        }
    }
}

/// `trigger()`: the probe path, run for every event the trigger sees.
/// It must not allocate, lock or sleep.
unsafe extern "C" fn on_event(
    data: *mut bindings::event_trigger_data,
    buffer: *mut bindings::trace_buffer,
    rec: *mut c_void,
    rbe: *mut bindings::ring_buffer_event,
) {
    if rec.is_null() || rbe.is_null() {
        return;
    }
    // SAFETY: the tracing core calls this only for attached triggers, which
    // stay live until an RCU-sched grace period after detaching; `rec` is
    // the record of `rbe`, `ring_buffer_event_length()` bytes long, and at
    // least as long as its event's fixed part.
    unsafe {
        let trigger = state(data);
        // A record holds at least the fixed part of its event, which holds
        // every field (`record_span` is only set for the trigger's own
        // event).
        let len = match trigger.record_span {
            Some(span) => span,
            None => bindings::ring_buffer_event_length(rbe) as usize,
        };
        let rec = core::slice::from_raw_parts(rec.cast::<u8>(), len);
        let ctx = ProbeContext {
            buffer,
            rbe,
            tr: (*trigger.file).tr,
        };
        trigger.hist().update(rec, &ctx);
    }
}

/// `print()`: shows the trigger in the event's trigger file.
unsafe extern "C" fn print(
    m: *mut bindings::seq_file,
    data: *mut bindings::event_trigger_data,
) -> c_int {
    // SAFETY: `m` is being shown; `data` is a live rhist trigger.
    unsafe { write_info(&mut SeqWriter::new(m), data) };
    0
}

/// Writes the trigger info line as hist does, `rhist:` for `hist:`:
/// `rhist:keys=...:size=N[ if <filter>] [active]`.
///
/// # Safety
///
/// `data` must be a live rhist trigger, with `event_mutex` held.
pub(crate) unsafe fn write_info(out: &mut SeqWriter, data: *mut bindings::event_trigger_data) {
    // SAFETY: the caller's contract.
    let (state, filter, paused) =
        unsafe { (state(data), c_bytes((*data).filter_str), (*data).paused) };
    out.bytes(state.info());
    if let Some(filter) = filter {
        out.bytes(b" if ");
        out.bytes(filter);
    }
    out.bytes(if paused {
        b" [paused]\n"
    } else {
        b" [active]\n"
    });
}

#[cfg(CONFIG_KUNIT)]
pub(crate) mod test_support {
    //! Hooks the KUnit suite uses to probe the registration.

    /// Tries to register the command a second time.
    pub(crate) fn register_again() -> kernel::ffi::c_int {
        // SAFETY: registering an already registered command only compares
        // names and fails; the command is not modified.
        unsafe { kernel::bindings::register_event_command(super::command()) }
    }
}
