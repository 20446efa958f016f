// SPDX-License-Identifier: GPL-2.0

//! A KUnit suite (`include/kunit/test.h`): its cases, safe Rust functions,
//! and the suite's entry in the `.kunit_test_suites` section, from which
//! KUnit runs it when the module loads. The 6.12 kernel crate has the
//! assertions (`kernel::kunit_assert!`) but no way to declare a suite.
//!
//! [`kunit_suite!`] lays the tables out as C's `kunit_test_suite()` does:
//! a table of `struct kunit_case` ended by an all-zero case, a
//! `struct kunit_suite` pointing at it, and a pointer to the suite in the
//! section. Each case is a [`Case`], whose `run()` KUnit calls through
//! one adapter, `run_case::<C>()`.
//!
//! # Examples
//!
//! ```ignore
//! fn adds_up() {
//!     kernel::kunit_assert!("example", "example.rs", 0, 1 + 1 == 2);
//! }
//!
//! fn counts_down() {
//!     kernel::kunit_assert!("example", "example.rs", 0, (0..3).rev().count() == 3);
//! }
//!
//! // The suite "example", with the cases "adds_up" and "counts_down".
//! crate::kernel_ext::kunit::kunit_suite!("example", [adds_up, counts_down]);
//! ```

use core::cell::UnsafeCell;
use core::ffi::CStr;

use kernel::bindings;
use kernel::ffi::c_char;

/// A test case: its name in the KTAP output, and what it runs.
pub(crate) trait Case {
    /// The case's name.
    const NAME: &'static CStr;

    /// Runs the case, in a kthread of KUnit's; a failed assertion ends
    /// that kthread without running destructors.
    fn run();
}

/// What KUnit calls for the case `C`.
extern "C" fn run_case<C: Case>(_test: *mut bindings::kunit) {
    C::run();
}

/// The `struct kunit_case` of a [`Case`].
///
/// # Invariants
///
/// Its function is `run_case::<C>()` of some [`Case`] `C`, its name a
/// static C string, the rest as C's initialiser leaves it.
#[repr(transparent)]
pub(crate) struct CaseEntry(bindings::kunit_case);

impl CaseEntry {
    /// The entry of `C`.
    pub(crate) const fn new<C: Case>() -> Self {
        let run: unsafe extern "C" fn(*mut bindings::kunit) = run_case::<C>;
        // INVARIANT: `run_case::<C>()`, `C::NAME`; the rest what
        // `KUNIT_CASE()` leaves to the zero of a static.
        Self(Self::case(Some(run), C::NAME.as_ptr().cast()))
    }

    /// The all-zero case that ends a table.
    const fn end() -> bindings::kunit_case {
        Self::case(None, core::ptr::null())
    }

    /// A case of `run_case` named `name`, every other field as a static
    /// zeroed by C would have it.
    const fn case(
        run_case: Option<unsafe extern "C" fn(*mut bindings::kunit)>,
        name: *const kernel::ffi::c_char,
    ) -> bindings::kunit_case {
        bindings::kunit_case {
            run_case,
            name,
            generate_params: None,
            attr: bindings::kunit_attributes {
                speed: bindings::kunit_speed_KUNIT_SPEED_UNSET,
            },
            status: bindings::kunit_status_KUNIT_SUCCESS,
            module_name: core::ptr::null_mut(),
            log: core::ptr::null_mut(),
        }
    }
}

/// `N` cases and the all-zero case after them: C's array of
/// `struct kunit_case` (`repr(C)`: the last case follows the array as
/// an `N + 1`-th element would, as an array's size is a multiple of its
/// element's alignment).
#[repr(C)]
struct Table<const N: usize> {
    cases: [CaseEntry; N],
    end: bindings::kunit_case,
}

/// A suite's cases, for [`Suite::new()`].
///
/// Its content is KUnit's to write (each case's status and log) once
/// the suite is in the section; Rust code has no access to it.
pub(crate) struct Cases<const N: usize>(UnsafeCell<Table<N>>);

// SAFETY: `Cases` gives no access to its content, neither to read it nor
// to write it: a `&Cases` shared between tasks lets none of them touch
// it. Only KUnit does, through the pointer in the suite.
unsafe impl<const N: usize> Sync for Cases<N> {}

impl<const N: usize> Cases<N> {
    /// The table of `cases`, in this order.
    pub(crate) const fn new(cases: [CaseEntry; N]) -> Self {
        Self(UnsafeCell::new(Table {
            cases,
            end: CaseEntry::end(),
        }))
    }
}

/// A `struct kunit_suite`, for a [`SuiteEntry`].
///
/// Its content is KUnit's to write (its status and log) once it is in
/// the section; Rust code has no access to it.
pub(crate) struct Suite(UnsafeCell<bindings::kunit_suite>);

// SAFETY: `Suite` gives no access to its content, neither to read it nor
// to write it: a `&Suite` shared between tasks lets none of them touch
// it. Only KUnit does, through the suite's entry in the section.
unsafe impl Sync for Suite {}

impl Suite {
    /// The suite `name` (at most 255 bytes, or the build fails), which
    /// runs `cases`.
    pub(crate) const fn new<const N: usize>(name: &'static CStr, cases: &'static Cases<N>) -> Self {
        let bytes = name.to_bytes();
        assert!(
            bytes.len() < 256,
            "a KUnit suite's name has at most 255 bytes"
        );
        let mut name = [0 as c_char; 256];
        let mut i = 0;
        while i < bytes.len() {
            name[i] = bytes[i] as c_char;
            i += 1;
        }
        Self(UnsafeCell::new(bindings::kunit_suite {
            name,
            suite_init: None,
            suite_exit: None,
            init: None,
            exit: None,
            // `Table` is `repr(C)`, its cases first: its address is the
            // first case's. `CaseEntry` is `repr(transparent)`.
            test_cases: cases.0.get().cast(),
            attr: bindings::kunit_attributes {
                speed: bindings::kunit_speed_KUNIT_SPEED_UNSET,
            },
            status_comment: [0; 256],
            debugfs: core::ptr::null_mut(),
            log: core::ptr::null_mut(),
            suite_init_err: 0,
            is_init: false,
        }))
    }
}

/// The pointer to a suite that, in the `.kunit_test_suites` section,
/// has KUnit run it when the module loads (as [`kunit_suite!`] puts it).
#[repr(transparent)]
pub(crate) struct SuiteEntry(*const bindings::kunit_suite);

// SAFETY: the pointer is never written, and Rust code never reads
// through it: only KUnit does.
unsafe impl Sync for SuiteEntry {}

impl SuiteEntry {
    /// The entry of `suite`.
    pub(crate) const fn new(suite: &'static Suite) -> Self {
        Self(suite.0.get())
    }
}

/// The C string of a case's name: `name` with its NUL (the build fails
/// unless it ends with one NUL, its only one).
pub(crate) const fn c_name(name: &'static str) -> &'static CStr {
    match CStr::from_bytes_with_nul(name.as_bytes()) {
        Ok(name) => name,
        Err(_) => panic!("a case's name is a C string"),
    }
}

/// Declares the KUnit suite `$name`, whose cases are the functions
/// `$case` (each a `fn()`), run in this order under their own names.
///
/// It expands once per suite to its three statics; each case becomes a
/// type implementing [`Case`], with no code of its own but the call.
macro_rules! kunit_suite {
    ($name:literal, [$($case:ident),+ $(,)?]) => {
        const _: () = {
            use $crate::kernel_ext::kunit::{Case, CaseEntry, Cases, Suite, SuiteEntry};

            const N: usize = [$(stringify!($case)),+].len();

            static CASES: Cases<N> = Cases::new([$({
                struct This;

                impl Case for This {
                    const NAME: &'static ::core::ffi::CStr = $crate::kernel_ext::kunit::c_name(
                        concat!(stringify!($case), "\0"),
                    );

                    fn run() {
                        $case()
                    }
                }

                CaseEntry::new::<This>()
            }),+]);

            static SUITE: Suite = Suite::new(
                $crate::kernel_ext::kunit::c_name(concat!($name, "\0")),
                &CASES,
            );

            #[used]
            #[link_section = ".kunit_test_suites"]
            static ENTRY: SuiteEntry = SuiteEntry::new(&SUITE);
        };
    };
}

pub(crate) use kunit_suite;
