// SPDX-License-Identifier: GPL-2.0

//! The portable hist core: everything of rhist that does not touch the
//! kernel. It is compiled by cargo on the host and by Kbuild into the
//! module, so it depends on `core` only.

pub mod enable;
pub mod error;
pub mod event;
pub mod grammar;
pub mod hist_data;
pub mod histogram;
pub mod map;
pub mod output;
pub mod program;
pub mod trigger;
pub mod var_ref;
pub mod vars;
