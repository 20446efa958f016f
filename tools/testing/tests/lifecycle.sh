#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# pause, continue and clear act on the matching trigger as they do for
# hist; clearing or continuing a missing trigger fails as with hist;
# several rhist triggers live on one event; an event that is not enabled
# still feeds its triggers.
. /test/lib.sh.inc

[ "$(cat $EV/enable)" = 0 ] || fail "the test event should start disabled"
for cmd in hist rhist; do
	expect_write "$cmd:keys=a:vals=b" $EV/trigger
	expect_write "$cmd:keys=s" $EV/trigger
done
fire count=100 seed=1 keys=4
expect_grep '^    Hits: 100$' $EV/rhist
[ "$(grep -c '^# event histogram' $EV/rhist)" = 2 ] || fail "expected two rhist histograms"

for cmd in hist rhist; do
	expect_write "$cmd:keys=a:vals=b:pause" $EV/trigger
done
expect_grep '^rhist:keys=a:vals=hitcount,b:sort=hitcount:size=2048 \[paused\]$' $EV/trigger
fire count=50 seed=2 keys=4
for cmd in hist rhist; do
	expect_write "$cmd:keys=a:vals=b:cont" $EV/trigger
done
expect_grep '^rhist:keys=a:vals=hitcount,b:sort=hitcount:size=2048 \[active\]$' $EV/trigger
fire count=10 seed=3 keys=4
sed 's/^# trigger info: hist:/# trigger info: rhist:/' $EV/hist > /tmp/c
cmp /tmp/c $EV/rhist || { diff /tmp/c $EV/rhist; fail "hist and rhist differ after pause and continue"; }
grep -q '^    Hits: 110$' $EV/rhist || fail "paused trigger counted events"

for cmd in hist rhist; do
	expect_write "$cmd:keys=a:vals=b:clear" $EV/trigger
done
sed 's/^# trigger info: hist:/# trigger info: rhist:/' $EV/hist > /tmp/c
cmp /tmp/c $EV/rhist || { diff /tmp/c $EV/rhist; fail "hist and rhist differ after clear"; }
grep -q '^    Entries: 0$' /tmp/c || fail "clear left entries"

echo > error_log
for cmd in hist rhist; do
	expect_reject 'No such file' "$cmd:keys=b:clear" $EV/trigger
	expect_reject 'No such file' "$cmd:keys=b:cont" $EV/trigger
done
[ "$(grep -c "error: Can't clear or continue a nonexistent hist trigger" error_log)" = 4 ] ||
	{ cat error_log; fail "missing error_log entries"; }
# Triggers put the event in soft mode ("0*"): it feeds them, but writes
# nothing to the ring buffer.
[ "$(cat $EV/enable)" = "0*" ] || fail "enable is '$(cat $EV/enable)', not '0*'"
[ -z "$(grep -v '^#' trace)" ] || fail "a trigger wrote the event to the ring buffer"
echo PASS
