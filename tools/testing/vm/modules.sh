#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds rhist.ko and the test modules (rhist_test_events.ko,
# rhist_test_race.ko) against a flavour's kernel and
# copies them to build/modules-FLAVOUR/. Kbuild rebuilds only what changed.
# Also stages the guest's real clients, the bench's eBPF peer and its
# pingpong workload in build/clients/.
#
# Usage: modules.sh [test|bench|kasan|dropin]   (default: $RHIST_FLAVOUR, or test)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

flavour=${1:-${RHIST_FLAVOUR:-test}}
tree=$(kernel_tree "$flavour")
out=$RHIST_BUILD/modules-$flavour
mkdir -p "$out"

# The test flavour builds in the clone. The others build in a copy of the
# modules' sources (mtimes kept) under build/src-FLAVOUR, so that objects
# built for one kernel neither overwrite nor race with another's.
src=$RHIST_TOP
if [ "$flavour" != test ]; then
	src=$RHIST_BUILD/src-$flavour
	mkdir -p "$src"
	(cd "$RHIST_TOP" &&
	 find Kbuild rust include tools/testing/rhist_test_events -path rust/core/target -prune -o \
		-type f \( -name Kbuild -o -name '*.rs' -o -name '*.[ch]' \) -print |
	 tar -cf - -T -) | tar -xf - -C "$src"
fi

build_module() {
	local dir=$1
	"${RHIST_KMAKE[@]}" -s -C "$tree" M="$dir" -j"$RHIST_JOBS" modules
}

step "modules: rhist.ko ($flavour)" build_module "$src"
step "modules: test modules ($flavour)" build_module "$src/tools/testing/rhist_test_events"
cp "$src/rhist.ko" "$src"/tools/testing/rhist_test_events/rhist_test_{events,race}.ko "$out/"
# The real clients the guest puts on PATH (trace-cmd, hist_client), for
# every flavour.
step "clients: trace-cmd and hist_client" "$RHIST_TOP/tools/testing/clients/stage.sh" "$RHIST_BUILD/clients"
step "clients: the bench's eBPF peer (rhist_bpf) and pingpong" "$RHIST_TOP/tools/testing/bench/bpf/build.sh" "$RHIST_BUILD/clients"
