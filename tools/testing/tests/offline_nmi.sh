#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Work the event path asks for from NMI on a CPU going offline: the
# grow of a :grow map and a poller's wakeup. On x86 a kprobe that is not
# jump-optimized runs its handler in NMI context, and a CPU going offline
# runs no more irq_work, nor may NMI send the IPI that would queue it
# elsewhere: the request must be asked again (once the CPU is dead), not
# lost. kprobes-optimization is 0, so that the kprobe stays an int3.
. /test/lib.sh.inc

CPU1=/sys/devices/system/cpu/cpu1/online
OPT=/proc/sys/debug/kprobes-optimization
[ -e $CPU1 ] || fail "no CPU hotplug"
[ -e $OPT ] || fail "no $OPT"
DYING=events/kp/dying
NOW=/sys/kernel/debug/rhist_test/now_ns

trap 'echo 1 > $OPT' EXIT
echo 0 > $OPT || fail "kprobes-optimization 0"
expect_write 'p:kp/dying sched_cpu_dying' kprobe_events

# 1. A grow asked for in NMI: 140 events of as many keys in a map of 128
# that grows. Without the request asked again, it never grew, and
# dropped 12.
expect_write 'rhist:keys=common_timestamp:size=128:grow' $DYING/trigger
n=0
while [ $n -lt 140 ]; do
	echo 0 > $CPU1 || fail "cpu1 offline ($n)"
	echo 1 > $CPU1 || fail "cpu1 online ($n)"
	n=$((n + 1))
done
grep -q '^  grow: generation [1-9][0-9]* size [0-9]* grows [1-9]' $DYING/rhist_debug ||
	{ grep 'grow:' $DYING/rhist_debug; fail "the map never grew"; }
expect_grep '^    Hits: 140$' $DYING/rhist
expect_grep '^    Entries: 140$' $DYING/rhist
expect_grep '^    Dropped: 0$' $DYING/rhist
expect_write '!rhist:keys=common_timestamp:size=128:grow' $DYING/trigger
echo "ok grow asked in NMI"

# 2. A poller woken by an event in NMI: at the CPU's death, not at its
# timeout (20 s).
expect_write 'rhist:keys=common_pid' $DYING/trigger
hist_client poll $DYING/rhist read 20000 > /tmp/got &
sleep 1
read -r t0 < $NOW
echo 0 > $CPU1 || fail "cpu1 offline"
wait
read -r t1 < $NOW
echo 1 > $CPU1 || fail "cpu1 online"
got=$(cat /tmp/got)
[ "$got" = "poll: IN PRI" ] || fail "the poller got '$got'"
[ $(((t1 - t0) / 1000000)) -lt 10000 ] || fail "woken after $(((t1 - t0) / 1000000)) ms: at the timeout"
expect_grep '^    Hits: 1$' $DYING/rhist
: > $DYING/trigger
echo "ok poller woken from NMI"
echo PASS
