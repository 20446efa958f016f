#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# clear on one trigger of a named histogram must hold every trigger that
# shares the name while the map is emptied, as hist's pause_named_trigger()
# does. A sharer that keeps inserting can publish an entry after the table
# is emptied but before the element counter is reset; the element is then
# handed out again to another key, and the table shows one element under
# two entries: a key printed twice.
#
# Two triggers share the name on the one test event (they differ in their
# filter). Events with 1000 keys are fired without pause on CPU 1; CPU 0
# clears through the first trigger, holds the firing, and checks: no key
# is printed twice, and the hits of the lines add up to "Hits:". Done for
# hist first, which must pass it too.
. /test/lib.sh.inc

T=$EV/trigger
ROUNDS=20

# The firer, on CPU 1: fires until /tmp/stop exists; while /tmp/hold holds
# a round's number R, fires nothing and says so with /tmp/held.R.
firer() {
	taskset 2 sh -c "i=0; while [ ! -e /tmp/stop ]; do
		if [ -e /tmp/hold ]; then read r < /tmp/hold; : > /tmp/held.\$r
		else echo count=5000 seed=\$i keys=1000 > $FIRE; i=\$((i + 1)); fi
	done" &
	firer=$!
}

# check SIDE ROUND: SIDE's histogram is whole.
check() {
	# The file shows the shared map once for each trigger: take the first.
	awk '{ print } /^ *Dropped:/ { exit }' $EV/$1 > /tmp/out
	dups=$(grep '^{ a:' /tmp/out | sort | uniq -d | head -3)
	[ -z "$dups" ] || fail "$1, round $2: keys printed twice: $dups"
	awk '/^\{ a:/ { s += $NF } /^ *Hits:/ { h = $2 }
	     END { if (s != h) { print s, h; exit 1 } }' /tmp/out > /tmp/sums ||
		fail "$1, round $2: the lines' hits and Hits: $(cat /tmp/sums)"
}

# race SIDE: the test with SIDE's triggers, hist or rhist.
race() {
	expect_write "$1:name=race:keys=a" $T
	expect_write "$1:name=race:keys=a if b >= 0" $T
	rm -f /tmp/stop /tmp/hold /tmp/held.*
	firer
	i=0
	while [ $i -lt $ROUNDS ]; do
		i=$((i + 1))
		expect_write "$1:name=race:keys=a:clear" $T
		echo $i > /tmp/hold
		while [ ! -e /tmp/held.$i ]; do :; done
		check $1 $i
		rm /tmp/hold
	done
	touch /tmp/stop
	wait $firer
	expect_write "!$1:name=race:keys=a if b >= 0" $T
	expect_write "!$1:name=race:keys=a" $T
}

taskset -p 1 $$ > /dev/null || fail "cannot pin the shell"
race hist
race rhist
echo PASS
