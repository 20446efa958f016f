#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# rmmod while a truncation of a trigger file is removing rhist's triggers:
# the truncation walks the trigger commands and rhist unregisters its
# own, so the walk must hold the command list's lock (without it, the
# walk followed rhist's unlinked node forever, holding event_mutex).
. /test/lib.sh.inc

round() {
	# Sixteen triggers: removing each waits for running probes, so
	# rhist's part of the truncation lasts a while.
	for n in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
		expect_write "rhist:keys=a if b > $n" $EV/trigger
	done
	( : > $EV/trigger ) &
	trunc=$!
	sleep 0.1
	rmmod rhist || fail "rmmod rhist failed"
	wait $trunc
	expect_no_grep '^rhist:' $EV/trigger
	insmod /lib/rhist/rhist.ko || fail "reloading rhist failed"
}
for r in 1 2 3 4 5; do
	round
done
echo PASS
