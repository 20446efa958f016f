// SPDX-License-Identifier: GPL-2.0

//! Symbol names from kallsyms: `sprint_symbol()` and
//! `sprint_symbol_no_offset()`, which the 6.12 kernel crate lacks.
//!
//! # Examples
//!
//! ```ignore
//! use crate::kernel_ext::kallsyms::{sprint_symbol, SymbolBuf};
//!
//! let mut buf = SymbolBuf::new();
//! // "schedule+0x0/0xd0", or the address in hex if kallsyms lacks it.
//! let text = sprint_symbol(&mut buf, schedule as usize, true);
//! ```

use kernel::bindings;
use kernel::ffi::c_ulong;

/// What `sprint_symbol()` may write, NUL included: `KSYM_SYMBOL_LEN`.
const SYMBOL_LEN: usize = bindings::KSYM_SYMBOL_LEN as usize;

/// Room for one symbol's text, as kallsyms writes it.
pub(crate) struct SymbolBuf([u8; SYMBOL_LEN]);

impl SymbolBuf {
    /// An empty buffer.
    pub(crate) const fn new() -> Self {
        SymbolBuf([0; SYMBOL_LEN])
    }
}

/// The text of the symbol at `addr`, written into `buf`, without its NUL:
/// `name+0x12/0x80 [module]` with the offset and size, `name [module]`
/// without; the address in hex where kallsyms knows no symbol. Any
/// context.
pub(crate) fn sprint_symbol(buf: &mut SymbolBuf, addr: usize, with_offset: bool) -> &[u8] {
    let (out, addr) = (buf.0.as_mut_ptr().cast(), addr as c_ulong);
    // SAFETY: both functions write at most `KSYM_SYMBOL_LEN` bytes, NUL
    // included, at `out`, which has that many (`SymbolBuf`); they only
    // read kallsyms' tables and the module list under RCU.
    let len = unsafe {
        if with_offset {
            bindings::sprint_symbol(out, addr)
        } else {
            bindings::sprint_symbol_no_offset(out, addr)
        }
    };
    &buf.0[..(len.max(0) as usize).min(SYMBOL_LEN)]
}
