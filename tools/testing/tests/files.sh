#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Every event directory, in every instance, has rhist, rhist_debug and
# rhist_json, and reading them shows the hist header for each rhist
# trigger.
. /test/lib.sh.inc

for d in $EV events/sched/sched_waking events/ftrace/print; do
	[ -e $d/rhist ] || fail "$d/rhist missing"
	[ -e $d/rhist_debug ] || fail "$d/rhist_debug missing"
	[ -e $d/rhist_json ] || fail "$d/rhist_json missing"
done
ls $EV | grep -qx rhist || fail "rhist not listed in $EV"

mkdir instances/rhist_test
[ -e instances/rhist_test/$EV/rhist ] || fail "instance has no rhist file"
expect_write 'rhist:keys=a' instances/rhist_test/$EV/trigger
rmdir instances/rhist_test || fail "instance with an rhist trigger could not be removed"

# An event without triggers shows nothing, as hist does.
[ -z "$(cat $EV/rhist)" ] || fail "rhist of an event without triggers is not empty"

expect_write 'rhist:keys=a' $EV/trigger
expect_write 'rhist:keys=s' $EV/trigger
fire count=100 seed=1 keys=4
cat $EV/rhist > /tmp/out
cat /tmp/out
[ "$(grep -c '^# event histogram$' /tmp/out)" = 2 ] || fail "expected two histograms"
expect_grep '^# trigger info: rhist:keys=a:vals=hitcount:sort=hitcount:size=2048 \[active\]$' /tmp/out
expect_grep '^    Hits: 100$' /tmp/out
cat $EV/rhist_debug > /tmp/debug
expect_grep '^# trigger info: rhist:keys=s:vals=hitcount:sort=hitcount:size=2048 \[active\]$' /tmp/debug
echo PASS
