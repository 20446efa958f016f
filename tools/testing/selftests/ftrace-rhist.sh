#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The kernel's own ftrace selftests about histograms, run by ftracetest
# twice in one boot:
#  - against rhist, every selftest of 6.12 that mentions hist
#    (RHIST_SELFTESTS), each translated from hist to rhist in command and
#    file names ("hist:" -> "rhist:", ".../hist" -> ".../rhist") and
#    otherwise unmodified;
#  - against hist, untranslated, every selftest of 6.12 that mentions hist
#    (HIST_SELFTESTS): the test kernel must run them all, or a failure
#    against rhist could be the kernel's. check.sh keeps their results
#    for one kernel image and selftests (/test/hist-selftests-cached:
#    it has them, and this run leaves them out).
# Prints ftracetest's results, one line per test, "[n] description
# [PASS|FAIL|...]"; the second run's say "[n] (hist) description ...".
#
# The tests add and remove probes on the scheduler's tracepoints all the
# time, which QEMU's multi-threaded TCG does not always survive:
# run.sh: single-threaded TCG
. /test/ftrace.sh.inc
mkdir -p $work/test.d/rhist $work/test.d/hist
for t in ${RHIST_SELFTESTS:-$HIST_TESTS}; do
	mkdir -p $(dirname $work/test.d/rhist/$t)
	sed -E -e 's/(^|[^_a-zA-Z])hist:/\1rhist:/g' \
	       -e 's#/hist([^_a-zA-Z]|$)#/rhist\1#g' \
	       $T/$t > $work/test.d/rhist/$t
done
# check.sh has hist's results of this kernel and these selftests.
[ ! -e /test/hist-selftests-cached ] || HIST_SELFTESTS=none
[ "$HIST_SELFTESTS" = none ] || for t in ${HIST_SELFTESTS:-$HIST_TESTS}; do
	cp $T/$t $work/test.d/hist/
done

# What check.sh must find as many results of.
n_hist=$(echo ${HIST_SELFTESTS:-$HIST_TESTS} | wc -w)
[ "$HIST_SELFTESTS" != none ] || n_hist=0
echo "selftests: asked $(($(echo ${RHIST_SELFTESTS:-$HIST_TESTS} | wc -w) + n_hist))"
cd $work
rc=0
sh ./ftracetest test.d/rhist/ || rc=1
[ $n_hist = 0 ] || { sh ./ftracetest test.d/hist/ 2>&1 || echo 1 > /tmp/hist-failed; } |
	sed -E 's/^\[([0-9]+)\] /[\1] (hist) /'
[ ! -e /tmp/hist-failed ] || rc=1
[ $rc = 0 ] || for f in logs/*/*.log; do grep -q "FAIL\|fail" "$f" && tail -25 "$f"; done
exit $rc
