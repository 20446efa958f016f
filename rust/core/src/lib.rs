// SPDX-License-Identifier: GPL-2.0

//! Host crate root of the rhist core.
//!
//! The core itself lives in `rhist_core.rs` and its sibling files. Kbuild
//! compiles the same files into `rhist.ko` as the module `hist` of the
//! module crate, so the core refers to its own parts through `super::`,
//! never through `crate::`, and uses nothing beyond `core`.

#![no_std]

#[cfg(any(test, feature = "testing"))]
extern crate std;

#[path = "rhist_core.rs"]
pub mod hist;

pub use hist::*;

#[cfg(any(test, feature = "testing"))]
#[doc(hidden)]
pub mod testing;
