#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# rhist_test_events: the event has the documented fields, fire is
# deterministic (same seed, same events), and cpu=all fires on every CPU.
. /test/lib.sh.inc

for f in 'u64 a;' 'u32 b;' 's32 c;' 'char s\[16\];' '__data_loc char\[\] d;' 'unsigned long ip;'; do
	expect_grep "field:$f" $EV/format
done

# A C hist of every field for one fire (C allows three keys per trigger).
T1='hist:keys=a,b,c:sort=a,b'
T2='hist:keys=s,d,ip:sort=s,d'
run() { # run SEED NAME
	echo "$T1" >> $EV/trigger || fail "$T1"
	echo "$T2" >> $EV/trigger || fail "$T2"
	fire count=2000 seed=$1 keys=16
	grep -v '^#' $EV/hist > /tmp/hist.$2
	echo "!$T1" >> $EV/trigger
	echo "!$T2" >> $EV/trigger
}
run 7 first
run 7 second
run 8 third
cmp -s /tmp/hist.first /tmp/hist.second || fail "same seed, different events"
! cmp -s /tmp/hist.first /tmp/hist.third || fail "different seeds, same events"
expect_grep 'Hits: 2000$' /tmp/hist.first
[ "$(cat /sys/kernel/debug/rhist_test/last_ns)" -gt 0 ] || fail "last_ns is not positive"

# keys=K bounds the distinct values of a.
echo 'hist:keys=a' >> $EV/trigger
fire count=1000 seed=1 keys=5
expect_grep 'Entries: 5$' $EV/hist
echo '!hist:keys=a' >> $EV/trigger

cpus=$(grep -c '^processor' /proc/cpuinfo)
echo 'hist:keys=common_cpu' >> $EV/trigger
fire count=500 seed=1 keys=4 cpu=all
cat $EV/hist
expect_grep "Hits: $((500 * cpus))\$" $EV/hist
expect_grep "Entries: $cpus\$" $EV/hist
[ "$cpus" -ge 2 ] || fail "the VM has $cpus CPU; cpu=all needs two"
echo PASS
