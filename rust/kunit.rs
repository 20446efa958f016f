// SPDX-License-Identifier: GPL-2.0

//! rhist's KUnit suite, run by KUnit when the module loads.
//!
//! The 6.12 kernel crate has no macro for KUnit suites, so the case table,
//! the suite and its entry in the `.kunit_test_suites` section are built
//! here by hand, the way `kunit_test_suite()` lays them out in C.

use core::cell::UnsafeCell;
use core::ffi::CStr;
use core::ptr;
use kernel::ffi::c_char;

use kernel::bindings;

use crate::command::test_support;
use crate::hist;
use crate::hist::error::{HistError, HistErrorKind};

/// Fails the running test unless `$cond` holds.
macro_rules! check {
    ($cond:expr) => {
        kernel::kunit_assert!("rhist", "rust/kunit.rs", 0, $cond)
    };
}

unsafe extern "C" fn split_command_like_the_trigger_framework(_test: *mut bindings::kunit) {
    check!(hist::version::split_command("!rhist:keys=pid") == (true, "rhist", Some("keys=pid")));
    check!(hist::version::split_command("rhist") == (false, "rhist", None));
}

unsafe extern "C" fn command_name_is_taken(_test: *mut bindings::kunit) {
    // The module registered `rhist` before KUnit ran: a second
    // registration of the same name must be refused.
    check!(test_support::register_again() == -(bindings::EBUSY as i32));
}

unsafe extern "C" fn extra_file_name_is_taken(_test: *mut bindings::kunit) {
    let twin = bindings::trace_event_extra_file {
        name: c"rhist".as_ptr().cast(),
        mode: 0o440,
        fops: ptr::null(),
    };
    // SAFETY: `twin` is valid for the call; a refused file is not kept.
    let ret = unsafe { bindings::trace_event_add_extra_file(&twin) };
    check!(ret == -(bindings::EBUSY as i32));
}

unsafe extern "C" fn core_rejects_bad_triggers(_test: *mut bindings::kunit) {
    check!(hist::trigger::parse("keys=pid").is_ok());
    check!(hist::trigger::parse("vals=hitcount").is_err());
    check!(
        hist::trigger::parse("keys=pid:sort=").map(|_| ())
            == Err(HistError::new(HistErrorKind::EmptyAssignment, 15))
    );
}

const fn case(
    run: unsafe extern "C" fn(*mut bindings::kunit),
    name: &'static CStr,
) -> bindings::kunit_case {
    bindings::kunit_case {
        run_case: Some(run),
        name: name.as_ptr().cast(),
        // SAFETY: all-zero is the C initialiser's value for the rest.
        ..unsafe { core::mem::zeroed() }
    }
}

#[repr(transparent)]
struct Cases(UnsafeCell<[bindings::kunit_case; 5]>);
#[repr(transparent)]
struct Suite(UnsafeCell<bindings::kunit_suite>);
#[repr(transparent)]
struct SuiteEntry(*const Suite);

// SAFETY: KUnit alone writes to these (its status fields), from the single
// task that runs the suite.
unsafe impl Sync for Cases {}
// SAFETY: as above.
unsafe impl Sync for Suite {}
// SAFETY: a pointer to a static, never written.
unsafe impl Sync for SuiteEntry {}

static CASES: Cases = Cases(UnsafeCell::new([
    case(
        split_command_like_the_trigger_framework,
        c"split_command_like_the_trigger_framework",
    ),
    case(command_name_is_taken, c"command_name_is_taken"),
    case(extra_file_name_is_taken, c"extra_file_name_is_taken"),
    case(core_rejects_bad_triggers, c"core_rejects_bad_triggers"),
    // SAFETY: the all-zero case ends the table.
    unsafe { core::mem::zeroed() },
]));

const fn suite_name(name: &[u8]) -> [c_char; 256] {
    let mut out = [0 as c_char; 256];
    let mut i = 0;
    while i < name.len() {
        out[i] = name[i] as c_char;
        i += 1;
    }
    out
}

static SUITE: Suite = Suite(UnsafeCell::new(bindings::kunit_suite {
    name: suite_name(b"rhist"),
    test_cases: CASES.0.get().cast(),
    // SAFETY: all-zero is the C initialiser's value for the rest.
    ..unsafe { core::mem::zeroed() }
}));

#[used]
#[link_section = ".kunit_test_suites"]
static SUITE_ENTRY: SuiteEntry = SuiteEntry(ptr::addr_of!(SUITE));
