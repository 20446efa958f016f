#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A snapshot() action taken on a CPU going offline. The swap of the
# buffers wakes the old buffer's readers through irq_work on that CPU,
# which, past its CPU_DYING flush, runs no more: the instance's removal
# then spins for ever in irq_work_sync() (ring_buffer_free()), and so
# does hist's (it is not run here: it would hang the guest). The kprobe
# on sched_cpu_dying must be jump-optimized, as it is by default: from
# an int3 (NMI), no snapshot is taken.
. /test/lib.sh.inc

CPU1=/sys/devices/system/cpu/cpu1/online
LIST=/sys/kernel/debug/kprobes/list
[ -e $CPU1 ] || fail "no CPU hotplug"
[ -e $LIST ] || fail "no $LIST"
[ "$(cat /proc/sys/debug/kprobes-optimization)" = 1 ] || fail "kprobes-optimization is not 1"

expect_write 'p:kp/dying sched_cpu_dying' kprobe_events
mkdir instances/off || fail "mkdir instances/off"
EV=instances/off/events/kp/dying
T='rhist:keys=common_pid:v1=common_pid:onmax($v1).snapshot()'
expect_write "$T" $EV/trigger

# The optimizer works a few jiffies after the kprobe is armed.
n=0
until grep -q 'sched_cpu_dying.*\[OPTIMIZED\]' $LIST; do
	n=$((n + 1))
	[ $n -lt 100 ] || { cat $LIST; fail "the kprobe was not optimized"; }
	sleep 0.1
done

echo 0 > $CPU1 || fail "cpu1 offline"
echo 1 > $CPU1 || fail "cpu1 online"
expect_grep '^    Hits: 1$' $EV/rhist
expect_grep '^Snapshot taken' $EV/rhist

# The removal, with a time limit: without the irq_work run on the dying
# CPU, rmdir never returns.
expect_write "!$T" $EV/trigger
rmdir instances/off &
pid=$!
n=0
while kill -0 $pid 2> /dev/null; do
	n=$((n + 1))
	[ $n -lt 100 ] || fail "rmdir of the instance still running after 10 s"
	sleep 0.1
done
wait $pid || fail "rmdir of the instance failed"
expect_write '-:kp/dying' kprobe_events
echo PASS
