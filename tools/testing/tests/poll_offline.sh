#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A poller of an rhist file is woken by an event on a CPU going offline
# (an rhist trigger on a kprobe of sched_cpu_dying), although that CPU
# runs no more irq_work; and rmmod then does not wait for it.
. /test/lib.sh.inc

CPU1=/sys/devices/system/cpu/cpu1/online
[ -e $CPU1 ] || fail "no CPU hotplug"
expect_write 'p:kp/dying sched_cpu_dying' kprobe_events
expect_write 'rhist:keys=common_pid' events/kp/dying/trigger
for round in 1 2; do
	hist_client poll events/kp/dying/rhist read 20000 > /tmp/got &
	sleep 1
	t0=$(cat /sys/kernel/debug/rhist_test/now_ns)
	echo 0 > $CPU1 || fail "cpu1 offline"
	wait
	t1=$(cat /sys/kernel/debug/rhist_test/now_ns)
	got=$(cat /tmp/got)
	[ "$got" = "poll: IN PRI" ] || fail "round $round: the poller got '$got'"
	[ $(((t1 - t0) / 1000000)) -lt 10000 ] || fail "round $round: woken at the timeout"
	# The second time, cpu1 stays offline for the unloading.
	[ $round = 2 ] || echo 1 > $CPU1 || fail "cpu1 online"
done
expect_grep '^    Hits: 2$' events/kp/dying/rhist
: > events/kp/dying/trigger
rmmod rhist || fail "rmmod rhist"
echo 1 > $CPU1 || fail "cpu1 online"
echo PASS
