#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A trigger that reads timestamps sets the instance's trace clock, as
# hist's does: to its clock= or to "global"; a clock the kernel does not
# know is rejected with hist's errno and error_log entry.
. /test/lib.sh.inc

current_clock() { sed 's/.*\[\(.*\)\].*/\1/' trace_clock; }

for cmd in hist rhist; do
	echo local > trace_clock
	# A trigger without timestamps leaves the clock alone.
	expect_write "$cmd:keys=a" $EV/trigger
	[ "$(current_clock)" = local ] || fail "$cmd:keys=a set the clock to $(current_clock)"
	expect_write "!$cmd:keys=a" $EV/trigger
	expect_write "$cmd:keys=a:vals=common_timestamp" $EV/trigger
	[ "$(current_clock)" = global ] || fail "$cmd: clock $(current_clock), expected global"
	expect_write "$cmd:keys=b:vals=common_timestamp.usecs:clock=mono" $EV/trigger
	[ "$(current_clock)" = mono ] || fail "$cmd: clock $(current_clock), expected mono"
	fire count=100 seed=3 keys=8
	expect_write "!$cmd:keys=a:vals=common_timestamp" $EV/trigger
	expect_write "!$cmd:keys=b:vals=common_timestamp.usecs:clock=mono" $EV/trigger
	echo > error_log
	expect_reject 'Invalid argument' "$cmd:keys=a:vals=common_timestamp:clock=nosuch" $EV/trigger
	expect_grep "error: Couldn't set trace_clock" error_log
	sed -n '/\^/p' error_log > /tmp/caret-$cmd
	[ "$(current_clock)" = mono ] || fail "$cmd: a failed clock= changed the clock"
	grep -q "^$cmd:" $EV/trigger && { cat $EV/trigger; fail "$cmd: triggers left behind"; }
done
# The caret is under "nosuch": one column further right for "rhist:".
c=$(awk '{ print length($0) }' /tmp/caret-hist)
r=$(awk '{ print length($0) }' /tmp/caret-rhist)
[ "$r" = $((c + 1)) ] || { cat /tmp/caret-hist /tmp/caret-rhist; fail "carets differ"; }
echo local > trace_clock
echo PASS
