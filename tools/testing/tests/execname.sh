#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# .execname names an entry after the task that created it, as hist does:
# the idle task (pid 0) is "<idle>", not its comm "swapper/N". The idle
# task fires sched_switch each time it hands a CPU over.
. /test/lib.sh.inc

SW=events/sched/sched_switch
expect_write 'hist:keys=common_pid.execname' $SW/trigger
expect_write 'rhist:keys=common_pid.execname' $SW/trigger
sleep 1
cat $SW/hist > /tmp/hist
cat $SW/rhist > /tmp/rhist
expect_write '!hist:keys=common_pid.execname' $SW/trigger
expect_write '!rhist:keys=common_pid.execname' $SW/trigger

# The same key text for pid 0 in both (the counts differ: the triggers
# were not attached at the same instant).
IDLE='^{ common_pid: <idle>          \[         0\] } hitcount: '
expect_grep "$IDLE" /tmp/hist
expect_grep "$IDLE" /tmp/rhist
expect_no_grep 'swapper' /tmp/rhist
echo PASS
