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
# rhist as hist on the drop-in kernel: its file is hist_json there. This
# exporter writes .quantiles as summaries (--summary), the two below as
# Prometheus histograms (the default).
/test/rhist-exporter --listen 0.0.0.0:9464 --summary 2> /tmp/exporter.err &
until wget -q -O /tmp/m http://127.0.0.1:9464/metrics; do usleep 100000; done

# Two machines of a fleet, as two instances each served by an exporter of
# its own (ports 9465 and 9466): the same histogram of rhist_other's a
# in both, each instance taking about half of the events (by b), and
# hist's exact counts of all of them at the top level. pair() runs in the
# background, beside the phases below (on other events), paced by the
# host (prometheus.sh, pair_checks).
OT=events/rhist_test/rhist_other
echo 'hist:keys=a:size=8192' >> $OT/trigger
pair_exporters=
for i in 1 2; do
	mkdir instances/pair$i
	case $i in 1) half='b < 2147483648' ;; 2) half='b >= 2147483648' ;; esac
	echo "rhist:keys=common_pid:vals=a,a.quantiles if $half" >> instances/pair$i/$OT/trigger
	/test/rhist-exporter --tracefs /sys/kernel/tracing/instances/pair$i \
		--listen 0.0.0.0:946$((4 + i)) 2> /tmp/exporter$i.err &
	pair_exporters="$pair_exporters $!"
	until wget -q -O /tmp/m http://127.0.0.1:946$((4 + i))/metrics; do usleep 100000; done
done
signal=http://10.0.2.2:$(cat /test/signal-port)
# await NAME: until the host's signal server has NAME.
await() {
	until wget -q -O /dev/null "$signal/$1" 2> /dev/null; do sleep 1; done
}
# pair_fire PHASE WORDS: fires rhist_other, then hist's counts so far,
# "PAIR PHASE a count" a line.
pair_fire() {
	echo "$2 event=other" > $D/fire
	echo "PAIR-FIRE $1 $2"
	sed -n "s/^{ a: *\([0-9]*\) } hitcount: *\([0-9]*\)\$/PAIR $1 \1 \2/p" $OT/hist
	echo "PAIR-END $1"
}
pair() {
	# A few events first, so that each instance's series exist before
	# the phases (a counter's increase is from its first sample).
	pair_fire 0 'count=20 seed=5 keys=1'
	await pair1
	pair_fire 1 'count=4000 seed=6 keys=1000'
	# The shift: five times the events, four times the values.
	await pair2
	pair_fire 2 'count=20000 seed=7 keys=4000'
}
pair &
pair_pid=$!
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

# The pair's phases end first, and once the host has checked them its
# exporters, triggers and instances go: their 24,000 events, hist's files
# of thousands of entries, three exporters' scrapes and the first one's
# reading of two more instances would slow the bursts below, whose rate
# the host compares with Prometheus's.
wait $pair_pid
await pair-done
kill $pair_exporters
wait $pair_exporters || :
for i in 1 2; do
	case $i in 1) half='b < 2147483648' ;; 2) half='b >= 2147483648' ;; esac
	echo "!rhist:keys=common_pid:vals=a,a.quantiles if $half" >> instances/pair$i/$OT/trigger
	# The first exporter reads every instance at each scrape: while it
	# has one of pair$i's files open, rmdir fails with EBUSY (so does
	# hist's, a file open holds its trace_array). Tried again for up to
	# 10 s; a reference rhist left would fail every try.
	n=0
	until rmdir instances/pair$i 2> /tmp/rmdir.err; do
		n=$((n + 1))
		[ $n -lt 100 ] || { cat /tmp/rmdir.err; echo "rmdir pair$i: busy for 10 s"; exit 1; }
		usleep 100000
	done
	[ $n = 0 ] || echo "rmdir pair$i: busy $n times (a scrape)"
done
echo '!hist:keys=a:size=8192' >> $OT/trigger

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
cat /tmp/exporter.err /tmp/exporter1.err /tmp/exporter2.err

# Phase 3: a declarative trigger set (--triggers): five triggers, the
# fourth of which the kernel rejects, one in an instance. The exporter
# adds them, reports the bad one (its line, and the error_log entry on
# stderr), puts back at the next scrape one removed by hand, and at
# SIGTERM removes what it added.
mkdir instances/tset
cat > /tmp/triggers.txt << 'TRIGGERS'
# five triggers, the fourth one bad
events/sched/sched_waking rhist:keys=prio
instances/tset/events/sched/sched_switch rhist:keys=prev_state
instances/tset/events/rhist_test/rhist_other rhist:keys=b.log2
events/rhist_test/rhist_other rhist:keys=nosuch
events/rhist_test/rhist_sample rhist:keys=c:vals=b
TRIGGERS
/test/rhist-exporter --triggers /tmp/triggers.txt --listen 127.0.0.1:9467 2> /tmp/tset.err &
tset=$!
until wget -q -O /tmp/tset.1 http://127.0.0.1:9467/metrics; do usleep 100000; done
# in_place: the four good triggers are listed where they belong.
in_place() {
	grep -q '^rhist:keys=prio:' events/sched/sched_waking/trigger &&
		grep -q '^rhist:keys=prev_state:' instances/tset/events/sched/sched_switch/trigger &&
		grep -q '^rhist:keys=b.log2:' instances/tset/events/rhist_test/rhist_other/trigger &&
		grep -q '^rhist:keys=c:vals=hitcount,b:' $EV/trigger
}
why=
in_place || why="not in place at start"
grep -q '^rhist_exporter_trigger_errors{line="5",event="events/rhist_test/rhist_other",trigger="rhist:keys=nosuch"} [1-9]' /tmp/tset.1 ||
	why="$why; the bad line is not counted"
grep -q 'line 5: .*error_log: .*error: ' /tmp/tset.err || why="$why; the bad line is not logged"
echo '!rhist:keys=prev_state' >> instances/tset/events/sched/sched_switch/trigger
! grep -q '^rhist:' instances/tset/events/sched/sched_switch/trigger || why="$why; the removal by hand failed"
wget -q -O /tmp/tset.2 http://127.0.0.1:9467/metrics
in_place || why="$why; not put back at the next scrape"
kill $tset
rc=0
wait $tset || rc=$?
[ $rc = 0 ] || why="$why; exit status $rc at SIGTERM"
for t in events/sched/sched_waking instances/tset/events/sched/sched_switch \
	instances/tset/events/rhist_test/rhist_other events/rhist_test/rhist_other $EV; do
	! grep -q '^rhist:' $t/trigger || why="$why; $t keeps $(grep '^rhist:' $t/trigger)"
done
rmdir instances/tset
sed 's/^/tset: /' /tmp/tset.err
if [ -z "$why" ]; then
	echo "TRIGGERS ok: four in place, the bad one reported, one put back, none left"
else
	echo "TRIGGERS FAIL:${why#;}"
fi
