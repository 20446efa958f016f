#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The kernel's own ftrace selftests about histograms, untranslated, on the
# drop-in kernel, where rhist is the only hist: every selftest of 6.12
# that mentions hist (DROPIN_SELFTESTS to pick), run once by ftracetest.
# Prints ftracetest's results, one line per test, "[n] description
# [PASS|FAIL|...]".
#
# run.sh: single-threaded TCG
. /test/ftrace.sh.inc
[ ! -e /sys/kernel/tracing/events/sched/sched_switch/rhist ] ||
	{ echo "ftrace-dropin: rhist kept its own names: not the drop-in kernel"; exit 1; }
mkdir -p $work/test.d/dropin
for t in ${DROPIN_SELFTESTS:-$HIST_TESTS}; do
	cp $T/$t $work/test.d/dropin/
done

# What check.sh must find as many results of.
echo "selftests: asked $(echo ${DROPIN_SELFTESTS:-$HIST_TESTS} | wc -w)"
cd $work
rc=0
sh ./ftracetest test.d/dropin/ || rc=1
[ $rc = 0 ] || for f in logs/*/*.log; do grep -q "FAIL\|fail" "$f" && tail -25 "$f"; done
exit $rc
