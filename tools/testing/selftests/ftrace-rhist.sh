#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The kernel's own ftrace selftests about plain histograms, run against
# rhist: each test is translated from hist to rhist in command and file
# names ("hist:" -> "rhist:", ".../hist" -> ".../rhist") and otherwise run
# unmodified by ftracetest. Prints ftracetest's results; one line per test
# is "[n] description [PASS|FAIL|...]".
src=/test/ftrace
work=/tmp/ftrace
rm -rf $work
cp -r $src $work
mkdir -p $work/test.d/rhist
for t in ${RHIST_SELFTESTS:-trigger-hist.tc trigger-hist-mod.tc trigger-multihist.tc \
	 trigger-trace-marker-hist.tc trigger-hist-syntax-errors.tc \
	 trigger-hist-expressions.tc}; do
	sed -E -e 's/(^|[^_a-zA-Z])hist:/\1rhist:/g' \
	       -e 's#/hist([^_a-zA-Z]|$)#/rhist\1#g' \
	       $src/test.d/trigger/$t > $work/test.d/rhist/$t
done
cd $work
sh ./ftracetest test.d/rhist/
rc=$?
[ $rc = 0 ] || for f in logs/*/*.log; do grep -q "FAIL\|fail" "$f" && tail -25 "$f"; done
exit $rc
