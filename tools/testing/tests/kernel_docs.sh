#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Examples of the kernel's own Documentation/trace/histogram-design.rst
# (6.12), run once with hist and once with rhist on the same events, each
# pipeline with its own names and synthetic event: what they print must
# agree.
. /test/lib.sh.inc

WAKING=events/sched/sched_waking
SWITCH=events/sched/sched_switch
debug_mask='s/^hist_data: .*/hist_data: (masked)/; s/^\( *var.hist_data:\) .*/\1 (masked)/'

# "A field of the matching event as an action parameter": prio is a
# field of sched_waking, saved for sched_switch by a hidden histogram
# there. An unqualified parameter gives its reference no system or
# event_name lines (6.12's trace_action_create() passes those written in
# the parameter, none here, not the onmatch() event's).
for p in c r; do
	expect_write "${p}_wakeup_latency u64 lat; pid_t pid; int prio" synthetic_events
done
expect_write 'hist:keys=pid:c_ts0=common_timestamp.usecs' $WAKING/trigger
expect_write 'rhist:keys=pid:r_ts0=common_timestamp.usecs' $WAKING/trigger
expect_write 'hist:keys=next_pid:c_wakeup_lat=common_timestamp.usecs-$c_ts0:onmatch(sched.sched_waking).c_wakeup_latency($c_wakeup_lat,next_pid,prio)' $SWITCH/trigger
expect_write 'rhist:keys=next_pid:r_wakeup_lat=common_timestamp.usecs-$r_ts0:onmatch(sched.sched_waking).r_wakeup_latency($r_wakeup_lat,next_pid,prio)' $SWITCH/trigger
wakers
sed "s/\bc_/r_/g; s/^# trigger info: hist:/# trigger info: rhist:/; $debug_mask" $SWITCH/hist_debug > /tmp/c
sed "$debug_mask" $SWITCH/rhist_debug > /tmp/r
grep -q 'name: synthetic_prio$' /tmp/r || { cat /tmp/r; fail "no reference to synthetic_prio"; }
cmp -s /tmp/c /tmp/r || { diff /tmp/c /tmp/r | head -20; fail "$SWITCH/rhist_debug differs"; }
echo PASS
