#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The rhist command is registered, accepts a trigger and lists it.
. /test/lib.sh.inc

expect_grep '^# .* hist rhist' $EV/trigger
expect_write 'rhist:keys=pid' events/sched/sched_waking/trigger
expect_grep '^rhist:keys=pid:vals=hitcount:sort=hitcount:size=2048 \[active\]$' events/sched/sched_waking/trigger
expect_write 'rhist:keys=a' $EV/trigger
expect_write 'rhist:keys=a:vals=b if b > 10' $EV/trigger
expect_grep '^rhist:keys=a:vals=hitcount:sort=hitcount:size=2048 \[active\]$' $EV/trigger
expect_grep '^rhist:keys=a:vals=hitcount,b:sort=hitcount:size=2048 if b > 10 \[active\]$' $EV/trigger
# rhist and hist side by side on one event.
expect_write 'hist:keys=a' $EV/trigger
expect_grep '^hist:keys=a:vals=hitcount:sort=hitcount:size=2048 \[active\]$' $EV/trigger
cat $EV/trigger
echo PASS
