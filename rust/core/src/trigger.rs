// SPDX-License-Identifier: GPL-2.0

//! Checking a trigger's parameter text before the module attaches it.
//! (Interim: accepts any text with keys until the grammar lands.)

/// Number of error_log messages.
pub const ERROR_COUNT: usize = 2;
/// error_log messages, NUL-terminated for the kernel's error log.
pub const C_MESSAGES: [&str; ERROR_COUNT] = ["No error\0", "Hist trigger already exists\0"];
/// Index of "Hist trigger already exists".
pub const ERR_TRIGGER_EEXIST: usize = 1;

/// Why a trigger was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TriggerError {
    kind: usize,
    pos: usize,
    errno: i32,
}

impl TriggerError {
    /// Index into [`C_MESSAGES`].
    pub fn kind_index(&self) -> usize {
        self.kind
    }
    /// Caret position within the parameter text.
    pub fn pos(&self) -> usize {
        self.pos
    }
    /// Positive errno.
    pub fn errno(&self) -> i32 {
        self.errno
    }
}

/// Checks a trigger's parameter text.
pub fn check(param: &[u8]) -> Result<(), TriggerError> {
    let has_keys = param
        .split(|&b| b == b':')
        .any(|attr| attr.starts_with(b"keys=") || attr.starts_with(b"key="));
    if has_keys {
        Ok(())
    } else {
        Err(TriggerError {
            kind: 0,
            pos: 0,
            errno: 22,
        })
    }
}
