// SPDX-License-Identifier: GPL-2.0

//! The names rhist registers under.

use crate::hist::trigger::{Names, HIST, RHIST};

/// The names rhist registers under: its own beside C's hist triggers, or
/// hist's on a kernel built without them, so that the tools and tests
/// written for hist use rhist unchanged.
pub(crate) const NAMES: &Names = if cfg!(CONFIG_HIST_TRIGGERS) {
    &RHIST
} else {
    &HIST
};
