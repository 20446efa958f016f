// SPDX-License-Identifier: GPL-2.0

//! What the host benches and examples share: a task that fires events.

use rhist_core::hist::event::EventContext;
use rhist_core::hist::histogram::TaskContext;

/// A fixed task on CPU 0, for `Histogram::update()`.
pub struct Task;

impl EventContext for Task {
    fn cpu(&self) -> u32 {
        0
    }
    fn timestamp(&self) -> u64 {
        1_000_000
    }
    fn clock_in_ns(&self) -> bool {
        true
    }
    fn stacktrace(&self, out: &mut [u64]) {
        out.fill(0);
    }

    fn comm(&self) -> [u8; 16] {
        *b"bench\0\0\0\0\0\0\0\0\0\0\0"
    }
}

impl TaskContext for Task {
    fn pid(&self) -> i32 {
        42
    }
}
