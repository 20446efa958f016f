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
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::ffi::{c_char, c_int, c_void};

use kernel::alloc::flags::GFP_KERNEL;
use kernel::bindings;
use kernel::error::{code, Error};
use kernel::prelude::*;
use kernel::str::CStr;

use crate::hist;
use crate::hist::error::{errno::EEXIST, HistError, HistErrorKind};
use crate::shim;
use crate::tracefs::{self, ErrText, EventMutexGuard, SeqWriter};

/// The state of one rhist trigger, owned by its `event_trigger_data`
/// through `private_data`.
pub(crate) struct Trigger {
    /// The parameter text (without `rhist:` and the filter), NUL-free.
    param: KVec<u8>,
    /// The event file the trigger sits on; pinned while the trigger lives.
    file: *mut bindings::trace_event_file,
    /// Events seen.
    pub(crate) hits: AtomicU64,
}

impl Trigger {
    /// The parameter text, as the trigger file shows it.
    pub(crate) fn param(&self) -> &[u8] {
        &self.param
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

/// Finds the rhist trigger on `file` with the same parameter text.
///
/// # Safety
///
/// `file` must be live and `event_mutex` held.
unsafe fn find(
    file: *mut bindings::trace_event_file,
    param: &[u8],
) -> Option<*mut bindings::event_trigger_data> {
    // SAFETY: the caller's contract; we only look.
    unsafe { tracefs::triggers(file) }
        // SAFETY: the triggers are live under `event_mutex`.
        .find(|&d| unsafe { is_ours(d) && state(d).param() == param })
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
    let Ok(text_str) = core::str::from_utf8(text) else {
        return code::EINVAL.to_errno();
    };
    let spec = match hist::trigger::parse(text_str) {
        Ok(spec) => spec,
        // SAFETY: `file` is live.
        Err(err) => return unsafe { reject(file, text, &err) },
    };
    let param = spec.param().as_bytes();

    if remove {
        // Like hist, removing a trigger that is not there is no error.
        // SAFETY: `event_mutex` is held by the tracing core.
        if let Some(data) = unsafe { find(file, param) } {
            // SAFETY: `data` is a live rhist trigger on `file`.
            unsafe { unregister_one(data) };
        }
        return 0;
    }

    // SAFETY: as above.
    if unsafe { find(file, param) }.is_some() {
        let err = HistError::with_errno(HistErrorKind::TriggerEexist, 0, EEXIST);
        // SAFETY: `file` is live.
        return unsafe { reject(file, text, &err) };
    }

    // SAFETY: `cmd_ops` and `file` come from the tracing core.
    match unsafe { create(cmd_ops, file, param, spec.filter()) } {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// Creates, filters and attaches a new trigger.
///
/// # Safety
///
/// Called from `parse()` with its arguments and `event_mutex` held.
unsafe fn create(
    cmd_ops: *mut bindings::event_command,
    file: *mut bindings::trace_event_file,
    param: &[u8],
    filter: Option<&str>,
) -> Result {
    let mut text = KVec::new();
    text.extend_from_slice(param, GFP_KERNEL)?;
    // `set_trigger_filter()` cuts its argument up: give it a copy.
    let mut filter_buf = KVec::new();
    if let Some(filter) = filter {
        filter_buf.extend_from_slice(filter.as_bytes(), GFP_KERNEL)?;
        filter_buf.push(0, GFP_KERNEL)?;
    }
    // Room in the registry first: after attaching, nothing may fail.
    // SAFETY: `event_mutex` is held.
    let registry = unsafe { REGISTRY.get() };
    registry.push(ptr::null_mut(), GFP_KERNEL)?;
    // SAFETY: shrinking by one: the slot is only reserved.
    unsafe { registry.set_len(registry.len() - 1) };

    // SAFETY: `file` is live; its call is live.
    if !unsafe { shim::rhist_pin_event((*file).event_call) } {
        return Err(code::ENODEV);
    }
    let state = KBox::new(
        Trigger {
            param: text,
            file,
            hits: AtomicU64::new(0),
        },
        GFP_KERNEL,
    );
    let state = match state {
        Ok(state) => state,
        Err(e) => {
            // SAFETY: pinned just above.
            unsafe { shim::rhist_unpin_event((*file).event_call) };
            return Err(e.into());
        }
    };
    // SAFETY: `file` is live; the reference is dropped in `free()`.
    unsafe { bindings::event_file_get(file) };

    // SAFETY: `cmd_ops` is our command; `param` is only used to decide on a
    // count, which we have none of.
    let data = unsafe {
        bindings::trigger_data_alloc(cmd_ops, ptr::null_mut(), ptr::null_mut(), ptr::null_mut())
    };
    if data.is_null() {
        // SAFETY: undoes the pin and reference taken above.
        unsafe { release(file) };
        return Err(code::ENOMEM);
    }
    // SAFETY: `data` is ours until attached.
    unsafe { (*data).private_data = KBox::into_raw(state).cast::<c_void>() };
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
    let ret = if ret < 0 {
        ret
    } else {
        // SAFETY: `data` is set up; `event_mutex` is held.
        unsafe { reg(ptr::null_mut(), data, file) }
    };
    // SAFETY: drops the setup reference; on failure this frees everything.
    unsafe { free(data) };
    if ret < 0 {
        return Err(Error::from_errno(ret));
    }
    Ok(())
}

/// Releases the pin and event file reference a trigger holds.
///
/// # Safety
///
/// `file` must have been pinned and referenced for one trigger.
unsafe fn release(file: *mut bindings::trace_event_file) {
    // SAFETY: the caller's contract.
    unsafe {
        shim::rhist_unpin_event((*file).event_call);
        bindings::event_file_put(file);
    }
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
        shim::rhist_list_add_rcu(
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
        if let Some(found) = find(file, state(data).param()) {
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
            let state = KBox::from_raw(state);
            release(state.file);
        }
    }
}

/// `trigger()`: the probe path, run for every event the trigger sees.
/// It must not allocate, lock or sleep.
unsafe extern "C" fn on_event(
    data: *mut bindings::event_trigger_data,
    _buffer: *mut bindings::trace_buffer,
    _rec: *mut c_void,
    _rbe: *mut bindings::ring_buffer_event,
) {
    // SAFETY: the tracing core calls this only for attached triggers, which
    // stay live until an RCU-sched grace period after detaching.
    let state = unsafe { state(data) };
    state.hits.fetch_add(1, Ordering::Relaxed);
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

/// Writes the trigger info line: `rhist:<param>[ if <filter>] [active]`.
///
/// # Safety
///
/// `data` must be a live rhist trigger, with `event_mutex` held.
pub(crate) unsafe fn write_info(out: &mut SeqWriter, data: *mut bindings::event_trigger_data) {
    // SAFETY: the caller's contract.
    let (state, filter, paused) =
        unsafe { (state(data), c_bytes((*data).filter_str), (*data).paused) };
    out.bytes(b"rhist:");
    out.bytes(state.param());
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
