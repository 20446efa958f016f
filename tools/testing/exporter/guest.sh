#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The guest side of prometheus.sh: rhist's histograms of the wakeup
# latency per pid and of rhist_sample, with rhist-exporter serving them
# on eth0 (port 9464, forwarded to the host); events fired in phases
# the host checks against what Prometheus scraped. Waits at the end for
# the host's "done" on the port that /test/signal-port names, at
# 10.0.2.2 (QEMU's address of the host).
set -e
. /test/lib.sh.inc
D=/sys/kernel/debug/rhist_test
EV=events/rhist_test/rhist_sample
ifconfig eth0 10.0.2.15 netmask 255.255.255.0 up
route add default gw 10.0.2.2
echo 'rhist:keys=a' >> $EV/trigger
# rhist as hist on the drop-in kernel: its file is hist_json there.
/test/rhist-exporter --listen 0.0.0.0:9464 2> /tmp/exporter.err &
until wget -q -O /tmp/m http://127.0.0.1:9464/metrics; do usleep 100000; done
echo EXPORTER-READY

# Phase 0: rhist.rst's wakeup latency per pid with its percentiles, on
# the scheduler's events, woken by lib.sh.inc's wakers (as in demo.sh).
# Once they have exited, their pids' entries no longer change: the host
# compares them with Prometheus's.
echo 'rv_wakeup_latency u64 lat; pid_t pid' >> synthetic_events
echo 'rhist:keys=pid:ts0=common_timestamp.usecs' >> events/sched/sched_waking/trigger
echo 'rhist:keys=next_pid:wlat=common_timestamp.usecs-$ts0:onmatch(sched.sched_waking).rv_wakeup_latency($wlat,next_pid)' >> events/sched/sched_switch/trigger
echo 'rhist:keys=pid:vals=lat.quantiles,lat.max:sort=pid' >> events/synthetic/rv_wakeup_latency/trigger
wakers
echo "WAKEUP-START$WAKERS"
for p in $WAKERS; do
	grep "^{ pid: *$p }" events/synthetic/rv_wakeup_latency/rhist
done
echo WAKEUP-END

# Phase 0b: the scheduler's stack traces, folded for a flame graph: every
# line "frames weight", the frames root first (the first entry's line
# ends in the innermost frame the rhist file shows first), the weights
# adding up to the histogram's hits (its map has room for every stack).
SW=events/sched/sched_switch
echo 'rhist:keys=stacktrace' >> $SW/trigger
wakers
echo 'rhist:keys=stacktrace:pause' >> $SW/trigger
# All of them first (each line under the histogram's name), then the
# one by that name.
wget -q -O /tmp/folded-all http://127.0.0.1:9464/folded || echo "FOLDED FAIL: GET /folded"
base=$(sed -n '1s/;.*//p' /tmp/folded-all)
wget -q -O /tmp/folded "http://127.0.0.1:9464/folded?histogram=$base" ||
	echo "FOLDED FAIL: GET /folded?histogram=$base"
awk '/^# trigger info: rhist:keys=(common_)?stacktrace:/ { on = 1 } on && /^\{ [a-z_]*stacktrace:/ { getline f; on = 2 }
	on == 2 && f != "" { sub(/^[ \t]*/, "", f); sub(/\+.*/, "", f); print f; exit }' $SW/rhist > /tmp/inner
awk '/^# trigger info: rhist:keys=(common_)?stacktrace:/ { on = 1 } on && /^    Hits:/ { print $2; exit }' $SW/rhist > /tmp/hits
awk -v inner="$(cat /tmp/inner)" -v hits="$(cat /tmp/hits)" '
	!/^[^ ]+ [0-9]+$/ { print "FOLDED FAIL: line " NR ": " $0; bad = 1; exit }
	{ w += $2 }
	NR == 1 { n = split($1, fr, ";"); if (fr[n] != inner) { print "FOLDED FAIL: the first line ends in " fr[n] ", the rhist file begins with " inner; bad = 1; exit } }
	END { if (bad) exit
		if (NR == 0 || w != hits) print "FOLDED FAIL: " NR " lines weigh " w ", the histogram has " hits " hits"
		else print "FOLDED ok: " NR " lines, weights " w " = hits " hits ", root first (last frame " inner ")" }' /tmp/folded
echo '!rhist:keys=stacktrace' >> $SW/trigger

# Phase 1: a known count per key, then the file as rhist prints it.
echo 'count=1000 seed=1 keys=8' > $D/fire
echo COUNTS-START
grep '^{ a:' $EV/rhist
echo COUNTS-END
# Scrapes of these counts (every 10 s, once Prometheus is up) before the
# next events.
sleep 25

# Phase 2: 50 events every half second, the total after each burst.
fired=1000
done_url=http://10.0.2.2:$(cat /test/signal-port)/done
while ! wget -q -O /dev/null "$done_url" 2> /dev/null; do
	echo 'count=50 seed=2 keys=8' > $D/fire
	fired=$((fired + 50))
	echo "FIRED $fired"
	usleep 500000
done
echo '!rhist:keys=a' >> $EV/trigger
echo '!rhist:keys=pid:vals=lat.quantiles,lat.max:sort=pid' >> events/synthetic/rv_wakeup_latency/trigger
echo '!rhist:keys=next_pid:wlat=common_timestamp.usecs-$ts0:onmatch(sched.sched_waking).rv_wakeup_latency($wlat,next_pid)' >> events/sched/sched_switch/trigger
echo '!rhist:keys=pid:ts0=common_timestamp.usecs' >> events/sched/sched_waking/trigger
echo '!rv_wakeup_latency' >> synthetic_events
cat /tmp/exporter.err
