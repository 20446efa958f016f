#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The guest part of `make bench-floor` (floor.sh): one fire loop of
# 3,000,000 events of 64 keys per mode under `perf record -a -e
# cpu-clock`, and the functions' shares of the samples.
EV=events/rhist_test/rhist_sample
D=/sys/kernel/debug/rhist_test
prof() {
	echo "PROFILE $1"
	perf record -q -e cpu-clock -c 2000 -a -o /tmp/p.data -- \
		sh -c "echo 'count=3000000 seed=1 keys=64' > $D/fire" 2>&1 | tail -3
	perf report -i /tmp/p.data --stdio --sort sym --percent-limit 0.3 2>/dev/null |
		grep -v '^#' | grep .
	perf report -i /tmp/p.data --stdio --sort sym 2>/dev/null | grep 'of event'
	echo "PROFILE-END $1"
}
prof none
echo rhist_noop >> $EV/trigger
prof noop
echo '!rhist_noop' >> $EV/trigger
echo 'rhist:keys=a' >> $EV/trigger
prof rhist
echo '!rhist:keys=a' >> $EV/trigger
echo 'hist:keys=a' >> $EV/trigger
prof hist
echo '!hist:keys=a' >> $EV/trigger
: > /tmp/bpf.out
rhist_bpf /usr/lib/rhist_bpf/percpu.bpf.o keys_a 2048 < /dev/null > /tmp/bpf.out 2> /tmp/bpf.err &
pid=$!
until grep -q '^ready$' /tmp/bpf.out; do
	kill -0 $pid 2> /dev/null || { cat /tmp/bpf.err; exit 1; }
	sleep 0.1
done
prof bpf-percpu
kill -TERM $pid
wait $pid
cat /tmp/bpf.out
