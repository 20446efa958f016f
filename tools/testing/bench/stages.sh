#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Where one event's instructions go, stage by stage, counted by callgrind
# on the host: the core's compiled event path (rust/core/examples/
# event_cost.rs) for three trigger shapes, and the map alone, C's
# tracing_map.c against the core's (cmap/examples/stages.rs). Each figure
# is (Ir(2N) - Ir(N)) / N, so start-up costs drop out.
#
# Usage: stages.sh    (about a minute after the builds)
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
. "$top/tools/testing/vm/lib.sh"
n=100000

(cd "$top/rust/core" && CARGO_PROFILE_RELEASE_DEBUG=1 \
	cargo build -q --release --example event_cost)
(cd "$top/tools/testing/bench/cmap" && cargo build -q --release --example stages)
event_cost=$top/rust/core/target/release/examples/event_cost
stages=$top/tools/testing/bench/cmap/target/release/examples/stages

ir() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 |
	awk '/Collected/ { print $4 }'; }
# Instructions per event of a command whose last argument is N.
per_event() {
	local a b
	a=$(ir "$@" "$n")
	b=$(ir "$@" $((2 * n)))
	echo $(((b - a) / n))
}

echo "The core's compiled event path, instructions per event (stages added"
echo "one at a time; 64 distinct keys, all found). probe: finding the entry"
echo "once hashed; update(): the whole Histogram::update(), laid out apart:"
printf '%-26s %6s %6s %7s %6s %7s %9s\n' shape "key" hash "probe" sums stages "update()"
for shape in keys=a keys=a,b,c:vals=a,b keys=s; do
	s=()
	for stage in 0 1 2 3 4 5; do
		# event_cost TEXT N KEYS STAGE: N comes before the rest.
		a=$(ir "$event_cost" "$shape" "$n" 64 "$stage")
		b=$(ir "$event_cost" "$shape" $((2 * n)) 64 "$stage")
		s+=($(((b - a) / n)))
	done
	printf '%-26s %6d %6d %7d %6d %7d %9d\n' "$shape" \
		$((s[1] - s[0])) $((s[2] - s[1])) $((s[3] - s[2])) \
		$((s[4] - s[3])) $((s[4] - s[0])) $((s[5] - s[0]))
done
echo
echo "The map alone (u64 key, hitcount, 64 keys in a map of 2048),"
echo "instructions per update:"
printf '%-6s %6s %16s %6s %6s\n' map hash "probe+compare" sums total
for side in c rust; do
	s=()
	for stage in 1 2 3 4; do
		s+=($(per_event "$stages" "$side" "$stage"))
	done
	printf '%-6s %6d %16d %6d %6d\n' "$side" $((s[1] - s[0])) \
		$((s[2] - s[1])) $((s[3] - s[2])) $((s[3] - s[0]))
done
