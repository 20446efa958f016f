#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds rhist.ko and rhist_test_events.ko against the test kernel and
# copies them to build/modules/. Kbuild rebuilds only what changed.
#
# Usage: modules.sh [test|bench]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=$(kernel_tree "${1:-test}")
out=$RHIST_BUILD/modules-${1:-test}
mkdir -p "$out"

build_module() {
	local dir=$1
	"${RHIST_KMAKE[@]}" -s -C "$tree" M="$dir" -j"$RHIST_JOBS" modules
}

step "modules: rhist.ko" build_module "$RHIST_TOP"
step "modules: rhist_test_events.ko" build_module "$RHIST_TOP/tools/testing/rhist_test_events"
cp "$RHIST_TOP/rhist.ko" "$RHIST_TOP/tools/testing/rhist_test_events/rhist_test_events.ko" "$out/"
