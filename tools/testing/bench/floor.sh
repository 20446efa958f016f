#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench-floor`: where an event's instructions go, function by
# function, for no trigger, the rhist_noop trigger (the trigger
# framework's floor), rhist, hist and the eBPF peer's per-CPU map (keys=a,
# 64 keys): perf's cpu-clock samples in a boot of the bench kernel whose
# clock counts retired instructions (RHIST_ICOUNT=1), so that a sample
# stands for a fixed number of instructions. Prints each mode's profile
# (the guest part is floor-guest.sh).
set -euo pipefail
. "$(dirname "$0")/../vm/lib.sh"

"$RHIST_TOP/tools/testing/vm/setup.sh"
"$RHIST_TOP/tools/testing/vm/kernel.sh" bench
"$RHIST_TOP/tools/testing/vm/modules.sh" bench
"$RHIST_TOP/tools/testing/perf/stage.sh" "$RHIST_BUILD/perf"
RHIST_ICOUNT=1 "$RHIST_TOP/tools/testing/vm/run.sh" --flavour bench --timeout 1200 \
	--overlay "$RHIST_BUILD/perf" --overlay "$RHIST_BUILD/clients" \
	"$(dirname "$0")/floor-guest.sh" | sed -n '/^PROFILE /,/^PROFILE-END /p'
