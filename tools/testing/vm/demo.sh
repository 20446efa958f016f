#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make run` without a terminal: a short demo of rhist next to hist, or,
# on the drop-in kernel, of rhist as hist; then, on the test kernel, the
# wakeup latency per pid with its percentiles (rhist's extension).
# run.sh: single-threaded TCG
set -e
. /test/lib.sh.inc
ev=events/rhist_test/rhist_sample
fire() {
	echo "# echo 'count=1000 seed=1 keys=8' > /sys/kernel/debug/rhist_test/fire"
	echo 'count=1000 seed=1 keys=8' > /sys/kernel/debug/rhist_test/fire
}
if [ ! -e $ev/rhist ]; then
	echo "# (drop-in kernel: no C hist, rhist.ko is hist)"
	echo "# echo 'hist:keys=a' >> $ev/trigger"
	echo 'hist:keys=a' >> $ev/trigger
	fire
	echo "# cat $ev/hist"
	cat $ev/hist
	exit 0
fi
echo "# echo 'rhist:keys=a' >> $ev/trigger"
echo 'rhist:keys=a' >> $ev/trigger
echo 'hist:keys=a' >> $ev/trigger
echo "# cat $ev/trigger"
cat $ev/trigger
fire
echo "# cat $ev/rhist"
cat $ev/rhist
echo "# cat $ev/hist"
cat $ev/hist

# histogram.rst's wakeup-latency pipeline on the scheduler's events, the
# last histogram with rhist's percentiles per pid (.quantiles, which hist
# rejects): three shells each waking 200 times from a millisecond's wait
# for input that does not come (a read with a timeout: no new process).
run() {
	echo "# $1"
	eval "$1"
}
echo
echo "# The wakeup latency per pid, p50 to p999 (Documentation/trace/rhist.rst):"
run "echo 'rv_wakeup_latency u64 lat; pid_t pid' >> synthetic_events"
run "echo 'rhist:keys=pid:ts0=common_timestamp.usecs' >> events/sched/sched_waking/trigger"
run "echo 'rhist:keys=next_pid:wlat=common_timestamp.usecs-\$ts0:onmatch(sched.sched_waking).rv_wakeup_latency(\$wlat,next_pid)' >> events/sched/sched_switch/trigger"
run "echo 'rhist:keys=pid:vals=lat.quantiles,lat.max:sort=pid' >> events/synthetic/rv_wakeup_latency/trigger"
wakers
echo "# (three shells waiting a millisecond 200 times: pids$WAKERS)"
run "cat events/synthetic/rv_wakeup_latency/rhist"
