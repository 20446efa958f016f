#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# References to another trigger's variables ($var, sys.event.$var), as
# hist resolves them: the same pipelines are built with hist and with
# rhist on the same events, and must give the same files. An event whose
# key has no set variable in the referenced histogram is not counted; an
# operand of an expression consumes the variable it reads. A trigger
# whose variables are referenced cannot be removed (EBUSY, nothing
# logged), nor cleared away with the file's O_TRUNC.
. /test/lib.sh.inc

WAKING=events/sched/sched_waking
SWITCH=events/sched/sched_switch
debug_mask='s/^# trigger info: hist:/# trigger info: rhist:/; s/^hist_data: .*/hist_data: (masked)/; s/^\( *var.hist_data:\) .*/\1 (masked)/'

# same_files DIR FILE: DIR's hist and rhist FILE (hist/rhist or the
# debug ones) agree, the first sorted (equal counts come in any order).
same_files() {
	if [ "$2" = hist ]; then
		sed 's/^# trigger info: hist:/# trigger info: rhist:/' $1/hist | sort > /tmp/c
		sort $1/rhist > /tmp/r
	else
		sed "$debug_mask" $1/hist_debug > /tmp/c
		sed "$debug_mask" $1/rhist_debug > /tmp/r
	fi
	cmp -s /tmp/c /tmp/r || { diff /tmp/c /tmp/r | head -20; fail "$1/$2 differs from hist's"; }
}

both() { # FILE TEXT: the text as hist and as rhist
	expect_write "hist:$2" $1
	expect_write "rhist:$2" $1
}

# 1. One event: the variable's trigger, filtered, sets it for about half
# of the events; the referencing one, after it in the list, counts only
# events whose key has it set, and consumes it.
both $EV/trigger 'keys=a:ts0=common_timestamp if b < 2000000000'
both $EV/trigger 'keys=a:lat=common_timestamp-$ts0:vals=b'
fire count=500 seed=3 keys=20
same_files $EV hist
same_files $EV debug
hits=$(sed -n 's/^ *Hits: //p' $EV/rhist | tail -1)
[ "$hits" -lt 400 ] && [ "$hits" -gt 100 ] ||
	fail "the referencing trigger counted $hits of 500 events"

# Removal of the variable's trigger: EBUSY, nothing logged, nothing gone.
echo > error_log
expect_reject "Device or resource busy" '!rhist:keys=a:ts0=common_timestamp if b < 2000000000' $EV/trigger
expect_reject "Device or resource busy" '!hist:keys=a:ts0=common_timestamp if b < 2000000000' $EV/trigger
[ ! -s error_log ] || { cat error_log; fail "EBUSY logged something"; }
: > $EV/trigger
grep -q '^rhist:keys=a:.*:ts0=' $EV/trigger || fail "O_TRUNC removed a referenced trigger"
grep -q '^hist:keys=a:.*:ts0=' $EV/trigger || fail "hist's O_TRUNC removed a referenced trigger"
for c in rhist hist; do
	expect_write "!$c:keys=a:lat=common_timestamp-\$ts0:vals=b" $EV/trigger
	expect_write "!$c:keys=a:ts0=common_timestamp if b < 2000000000" $EV/trigger
done

# 2. Across events, by the fully qualified name too: rhist_other reads
# the variable rhist_sample's trigger sets for the same key.
OTHER=events/rhist_test/rhist_other
both $EV/trigger 'keys=a:ts0=common_timestamp.usecs if b < 3000000000'
both $OTHER/trigger 'keys=a:lat=common_timestamp.usecs-rhist_test.rhist_sample.$ts0:vals=b'
fire count=300 seed=5 keys=30
fire count=300 seed=6 keys=30 event=other
fire count=300 seed=7 keys=30
fire count=300 seed=8 keys=30 event=other
same_files $OTHER hist
same_files $OTHER debug
same_files $EV hist
hits=$(sed -n 's/^ *Hits: //p' $OTHER/rhist | tail -1)
[ "$hits" -gt 0 ] && [ "$hits" -lt 600 ] || fail "rhist_other counted $hits of 600 events"
for c in rhist hist; do
	expect_write "!$c:keys=a:lat=common_timestamp.usecs-rhist_test.rhist_sample.\$ts0:vals=b" $OTHER/trigger
done

# The wakeup latency pipeline on the scheduler's own traffic (counts
# are not compared: events go on between reading hist and rhist).
both $WAKING/trigger 'keys=pid:ts0=common_timestamp.usecs'
both $SWITCH/trigger 'keys=next_pid:lat=common_timestamp.usecs-sched.sched_waking.$ts0'
i=0
while [ $i -lt 30 ]; do sleep 0.01; i=$((i + 1)); done
grep -q 'Hits: [1-9]' $SWITCH/rhist || fail "no wakeup latency counted"
same_files $SWITCH debug

# 3. A name that triggers on two events define needs its event: C's
# three entries, in order.
for c in hist rhist; do
	echo > error_log
	expect_reject "Invalid argument" "$c:keys=pid:x=common_timestamp-\$ts0" $SWITCH/trigger
	sed -n 's/.*error: //p' error_log > /tmp/log.$c
done
cmp -s /tmp/log.hist /tmp/log.rhist || { diff /tmp/log.hist /tmp/log.rhist; fail "error_log differs"; }
grep -q 'Variable name not unique' /tmp/log.rhist || fail "no VAR_NOT_UNIQUE"

for c in rhist hist; do
	expect_write "!$c:keys=next_pid:lat=common_timestamp.usecs-sched.sched_waking.\$ts0" $SWITCH/trigger
	expect_write "!$c:keys=pid:ts0=common_timestamp.usecs" $WAKING/trigger
	expect_write "!$c:keys=a:ts0=common_timestamp.usecs if b < 3000000000" $EV/trigger
done
for f in $EV $SWITCH $WAKING $OTHER; do
	! grep -q '^r\?hist:' $f/trigger || { cat $f/trigger; fail "left in $f"; }
done
echo PASS
