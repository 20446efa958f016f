#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A read of a large map of percentiles does not hold event_mutex while it
# computes them: a trigger write made during it waits no longer than a
# read of a plain map of the same size takes, and the kernel reports no
# stall or soft lockup. (It held the lock for all of its three writes of
# the text: 26.6 s, a write waiting 14.6 s.)
. /test/lib.sh.inc

T=$EV/trigger
NOW=/sys/kernel/debug/rhist_test/now_ns
ms_since() { read -r t < $NOW; echo $(((t - $1) / 1000000)); }

# A plain map of 65536 entries: how long its read takes.
P='keys=a:vals=b,a,b:size=65536'
expect_write "rhist:$P" $T
fire count=80000 seed=21 keys=4294967295
read -r t0 < $NOW
cat $EV/rhist > /tmp/plain
plain=$(ms_since $t0)
expect_grep '^    Entries: 65536$' /tmp/plain
expect_write "!rhist:$P" $T

# The same with three percentiles, read while events still come, and a
# trigger written meanwhile.
Q='keys=a:vals=b.quantiles,a.quantiles,b.quantiles:size=65536'
expect_write "rhist:$Q" $T
fire count=80000 seed=21 keys=4294967295
dmesg -c > /dev/null
(fire count=200000 seed=22 keys=4294967295) &
firing=$!
read -r t0 < $NOW
cat $EV/rhist > /tmp/quantiles &
reader=$!
sleep 2
read -r w0 < $NOW
expect_write 'rhist:keys=b' events/rhist_test/rhist_other/trigger
waited=$(ms_since $w0)
wait $reader || fail "the read failed"
took=$(ms_since $t0)
wait $firing
echo "read of the plain map: $plain ms; of the percentiles: $took ms; a write waited $waited ms"
expect_grep '^    Entries: 65536$' /tmp/quantiles
expect_grep '^    Percentiles:' /tmp/quantiles
[ $waited -le $plain ] || fail "the write waited $waited ms, longer than a plain read ($plain ms)"
dmesg > /tmp/dmesg
for report in 'soft lockup' 'stall' 'hung task'; do
	! grep -q "$report" /tmp/dmesg || { cat /tmp/dmesg; fail "the kernel's log has '$report'"; }
done
expect_write '!rhist:keys=b' events/rhist_test/rhist_other/trigger
expect_write "!rhist:$Q" $T
echo PASS
