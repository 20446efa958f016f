// SPDX-License-Identifier: GPL-2.0

//! rhist: the kernel's event histograms (hist triggers) as a Rust module.
//!
//! Loading the module registers the trigger commands `rhist`,
//! `enable_rhist` and `disable_rhist`, and adds the files `rhist` and
//! `rhist_debug` to every event directory in tracefs; unloading removes
//! every trigger of those commands and the files again. On a kernel built
//! without C's hist triggers, the same are registered under hist's names
//! ([`names::NAMES`]). The histogram logic itself is the portable core in
//! `core/src/`.

use kernel::prelude::*;

use names::NAMES;

// The core's `pub` is its host crate's API (tests, fuzzing, benches);
// here it is a private module. What only the host uses is
// `#[cfg(not(MODULE))]` where it is defined.
#[allow(unreachable_pub, reason = "the core's host crate API")]
#[path = "core/src/rhist_core.rs"]
mod hist;

mod command;
mod enable;
mod event;
mod event_work;
mod files;
mod kernel_ext;
#[cfg(CONFIG_KUNIT)]
mod kunit;
mod names;
mod poll;
mod shim;
mod snapshot;
mod synth;
mod tied;
mod tracefs;
mod tracing;
mod trigger_cmd;

module! {
    type: Rhist,
    name: "rhist",
    author: "rhist developers",
    description: "Event histograms (hist triggers) in Rust",
    license: "GPL",
}

struct Rhist {
    // Dropped in this order: the files go before the command and its
    // triggers, so no new reader can reach a trigger being removed; the
    // pollers' last wakeup is waited for once no probe of ours runs.
    _files: files::Registration,
    _enable: enable::Registration,
    _command: command::Registration,
    _poll: poll::PollWakeups,
}

impl kernel::Module for Rhist {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        event::find_stack_anchor();
        let poll = poll::PollWakeups::new();
        // enable_* before the command, as the tracing core registers hist's,
        // so that the trigger files list them in the built-in's order.
        let enable = enable::Registration::new()?;
        let command = command::Registration::new()?;
        let files = files::Registration::new()?;
        pr_info!(
            "loaded: trigger commands '{}', '{}' and '{}', files '{}', '{}' and '{}'\n",
            NAMES.command.to_str().unwrap_or("?"),
            NAMES.enable.to_str().unwrap_or("?"),
            NAMES.disable.to_str().unwrap_or("?"),
            NAMES.command.to_str().unwrap_or("?"),
            NAMES.debug_file.to_str().unwrap_or("?"),
            NAMES.json_file.to_str().unwrap_or("?"),
        );
        Ok(Rhist {
            _files: files,
            _enable: enable,
            _command: command,
            _poll: poll,
        })
    }
}

/// Asks again for what the event path could not queue
/// ([`event_work::take_missed()`]): from the CPU hotplug callbacks of
/// `include/rhist_shim.c`, in process context on an online CPU. The
/// pollers' wakeup and the grow work each serve every request made
/// before them.
#[no_mangle]
extern "C" fn rhist_ask_missed() {
    let (poll, grow) = event_work::take_missed();
    if poll {
        poll::wake_all_now();
    }
    if grow {
        command::grow_queue_work();
    }
}

impl Drop for Rhist {
    fn drop(&mut self) {
        pr_info!("unloading\n");
    }
}
