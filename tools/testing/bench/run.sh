#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: boots the benchmark kernel (the test configuration without
# lockdep, atomic-sleep checks and kmemleak, with eBPF) and measures rhist
# against the C hist trigger in the same boot, and against an eBPF peer
# where it has a program for the scenario (bpf/: a tracepoint program
# counting into a BPF hash map or per-CPU hash map, which must count every
# event fired); prints a table and writes CSV, JSON and a PNG chart under
# results/. The first boot also times real workloads (a syscall-heavy
# and a scheduler-heavy one, guest.sh) with no histogram, hist's,
# rhist's and the eBPF peer's. Two more boots measure the event path's
# wall clock again (RHIST_BENCH_BOOTS, 3 in all). Another boot, with the
# guest's clock counting instructions (RHIST_ICOUNT=1), measures the
# single-CPU scenarios and the real workloads again: the report's icount
# columns and table. Last, cmap/run.sh times C's tracing_map.c against
# the core's map on the host CPU, and stages.sh counts where one event's
# instructions go.
#
# Usage: run.sh [--smoke]    (--smoke: one round, tiny counts, no chart)
# The smoke boots the test kernel ($RHIST_BENCH_FLAVOUR overrides); the
# bpf modes run there too, count check included.
set -euo pipefail
. "$(dirname "$0")/../vm/lib.sh"

smoke=
[ "${1:-}" = --smoke ] && smoke=1
flavour=bench
[ -n "$smoke" ] && flavour=${RHIST_BENCH_FLAVOUR:-test}

"$RHIST_TOP/tools/testing/vm/setup.sh"
missing=
[ -n "$smoke" ] || command -v gnuplot >/dev/null || missing+=" gnuplot-nox"
[ -n "$smoke" ] || command -v valgrind >/dev/null || missing+=" valgrind"
if [ -n "$missing" ]; then
	echo "==> installing$missing (the chart, instruction counts per stage)"
	SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null
fi
"$RHIST_TOP/tools/testing/vm/kernel.sh" "$flavour"
"$RHIST_TOP/tools/testing/vm/modules.sh" "$flavour"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$(dirname "$0")/guest.sh" "$work/bench.sh.inc"
if [ -n "$smoke" ]; then
	# Single-threaded TCG: the smoke times nothing, and the real
	# workloads' programs on sched_switch and the syscalls patch call
	# sites that the other vCPU runs (see tools/testing/vm/run.sh).
	# Two rounds of the real workloads: their spread is computed.
	printf '# run.sh: single-threaded TCG\n%s\n. /test/bench.sh.inc\n' \
		'ROUNDS=1 COUNT=2000 SMOKE=1 SIZES=2048 REAL_ROUNDS=2 REAL_READS=20000 REAL_PINGS=2000' \
		> "$work/bench.sh"
else
	printf 'ROUNDS=11 COUNT=50000\n. /test/bench.sh.inc\n' > "$work/bench.sh"
fi

results=$RHIST_TOP/results
mkdir -p "$results"
stamp=$(date -u +%Y-%m-%dT%H%MZ)
raw=$results/bench-$stamp.raw
echo "==> bench: running in the VM ($flavour kernel; takes a few minutes)"
"$RHIST_TOP/tools/testing/vm/run.sh" --flavour "$flavour" --timeout 1500 "$work/bench.sh" > "$raw" 2>&1 || {
	tail -30 "$raw"
	echo "bench: the VM run failed (log: $raw)" >&2
	exit 1
}
grep -q '^BENCH-DONE' "$raw" || { tail -30 "$raw"; echo "bench: incomplete (log: $raw)" >&2; exit 1; }
if grep -q "^BENCH-ERROR" "$raw"; then grep "^BENCH-ERROR" "$raw"; echo "bench: a measurement failed (log: $raw)" >&2; exit 1; fi
# The event path's wall clock again, in more boots. In some boots one of
# rhist's shapes runs some 200 ns per event slower for the whole boot
# while C's figures stay as they were (a property of the boot under
# TCG, not understood): the report gives each boot's ratio and their
# median.
boot_raws=()
boots=$([ -n "$smoke" ] && echo 1 || echo "${RHIST_BENCH_BOOTS:-3}")
for b in $(seq 2 "$boots"); do
	braw=$results/bench-$stamp.boot$b.raw
	printf 'ROUNDS=11 COUNT=50000 PATH_ONLY=1\n. /test/bench.sh.inc\n' > "$work/bench.sh"
	echo "==> bench: the event path again, boot $b of $boots"
	"$RHIST_TOP/tools/testing/vm/run.sh" --flavour "$flavour" --timeout 1500 "$work/bench.sh" \
		> "$braw" 2>&1 || { tail -30 "$braw"; echo "bench: boot $b failed (log: $braw)" >&2; exit 1; }
	grep -q '^BENCH-DONE' "$braw" || { echo "bench: boot $b incomplete (log: $braw)" >&2; exit 1; }
	if grep -q "^BENCH-ERROR" "$braw"; then grep "^BENCH-ERROR" "$braw"; exit 1; fi
	boot_raws+=(--boot "$braw")
done
# The same single-CPU scenarios with the guest's clock counting retired
# instructions: figures that repeat from run to run, to rank changes by.
raw_icount=
if [ -z "$smoke" ]; then
	raw_icount=$results/bench-$stamp.icount.raw
	printf 'ROUNDS=3 COUNT=20000 ICOUNT=1 REAL_ROUNDS=3\n. /test/bench.sh.inc\n' > "$work/bench.sh"
	echo "==> bench: instruction counts in the VM (-icount, one host thread)"
	RHIST_ICOUNT=1 "$RHIST_TOP/tools/testing/vm/run.sh" --flavour "$flavour" --timeout 1500 \
		"$work/bench.sh" > "$raw_icount" 2>&1 || {
		tail -30 "$raw_icount"
		echo "bench: the icount run failed (log: $raw_icount)" >&2
		exit 1
	}
	grep -q '^BENCH-DONE' "$raw_icount" || { echo "bench: icount run incomplete (log: $raw_icount)" >&2; exit 1; }
	if grep -q "^BENCH-ERROR" "$raw_icount"; then
		grep "^BENCH-ERROR" "$raw_icount"
		echo "bench: a measurement failed (log: $raw_icount)" >&2
		exit 1
	fi
fi
python3 "$(dirname "$0")/report.py" "$raw" "$results/bench-$stamp" \
	"kernel: $flavour config ($(kernel_tree "$flavour")), machine: $(nproc) cores, QEMU TCG 2 vCPUs" \
	${smoke:+--no-chart} ${raw_icount:+--icount "$raw_icount"} "${boot_raws[@]}"
[ -n "$smoke" ] && { rm -f "$raw" "$results/bench-$stamp".*; exit 0; }
# The map alone on the real CPU: the kernel's tracing_map.c built in
# userspace against the core's, where atomics and cache lines show.
echo "==> bench: C's tracing_map against the core's, on the host CPU"
"$(dirname "$0")/cmap/run.sh" > "$results/bench-$stamp.cmap.raw" 2>&1 || {
	tail -30 "$results/bench-$stamp.cmap.raw"
	echo "bench: the map bench failed" >&2
	exit 1
}
sed -n '/^ns per update/,$p' "$results/bench-$stamp.cmap.raw" | tee "$results/bench-$stamp.cmap.txt"
echo "==> bench: instructions per stage (callgrind, host)"
"$(dirname "$0")/stages.sh" | tee "$results/bench-$stamp.stages.txt"
exit 0
