#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# :grow (issue 30, rhist.rst "A map that grows"): size= is the initial
# size of a map that grows rather than drops. Texts hist rejects and
# grow may not be combined with are rejected as hist rejects them;
# accepted ones grow from 128 entries to the cap, their histograms exact
# against hist's and rhist's of one large map; removal, instances and
# rmmod with a grow pending.
. /test/lib.sh.inc
NOW=/sys/kernel/debug/rhist_test/now_ns
read -r t0 < $NOW
ms() { read -r t < $NOW; echo "$(((t - t0) / 1000000)) ms"; }

DBG=$EV/rhist_debug

# --- rejected as hist rejects them -------------------------------------------
for text in \
	'keys=a:grow:x=b' \
	'keys=a:x=:grow' \
	'keys=a:grow:x=' \
	'keys=a:vals=b.quantiles:grow' \
	'name=g:keys=a:grow' \
	'keys=a:grow:onmax(b).save(a)' \
	'keys=nosuch:grow' \
	'keys=a:grow:sort=nosuch' \
	'keys=a:grow:size=0' \
	'keys=a:grow:bogus'; do
	compare_hist_rhist "$text"
done
compare_hist_rhist 'keys=b:grow:clear'
# A duplicate: hist stops at grow, so rhist does not say "exists".
expect_write 'rhist:keys=a:grow' $EV/trigger
compare_hist_rhist 'keys=a:grow'
expect_write '!rhist:keys=a:grow' $EV/trigger
[ -z "$(grep -v '^#' $EV/trigger)" ] || { cat $EV/trigger; fail "a trigger was left"; }
echo "ok grow: rejected as hist rejects it ($(ms))"

# --- grown on all CPUs against one large map -----------------------------------
ncpu=$(grep -c '^processor' /proc/cpuinfo)
G1='rhist:keys=a:sort=a:size=128:grow'
G2='rhist:keys=a:vals=b.max,c.min,b.avg,c:sort=a:size=128:grow'
R2='rhist:keys=a:vals=b.max,c.min,b.avg,c:sort=a:size=2048'

# The size of the current map of the (one) :grow histogram.
size_now() { sed -n 's/^  grow: generation [0-9]* size \([0-9]*\) .*/\1/p' $DBG | head -1; }
# Its entries: the first histogram of the rhist file.
entries_now() { sed -n 's/^    Entries: //p' $EV/rhist | head -1; }

# wait_grow SIZE: waits until the map is no longer of SIZE entries: the
# grow runs in rhist's worker, after the event that asked for it.
wait_grow() {
	local i=0
	while [ "$(size_now)" = $1 ]; do
		i=$((i + 1))
		[ $i -lt 2000 ] || { cat $DBG; fail "no grow past $1 entries"; }
		sleep 0.01
	done
}

# paced TOTAL KEYS SEED: TOTAL events of keys from [0, KEYS) in rounds on
# every CPU at once, each round at most half the room the :grow map has
# left (an upper bound of its entries: the events fired so far), so that
# none can drop; once the map may be half full, the grow it asked for is
# waited for.
paced() {
	local total=$1 keys=$2 seed=$3 fired=0 bound=0 size c
	rounds=0 waited=0
	while [ $fired -lt $total ]; do
		size=$(size_now)
		if [ $bound -ge $((size / 2)) ] && [ $size -lt 131072 ]; then
			bound=$(entries_now)
			if [ $bound -ge $((size / 2)) ]; then
				wait_grow $size
				waited=$((waited + 1))
				continue
			fi
		fi
		c=$(((size - bound) / 2 / ncpu))
		[ $c -ge 1 ] || c=1
		[ $((fired + c * ncpu)) -le $total ] || c=$(((total - fired + ncpu - 1) / ncpu))
		rounds=$((rounds + 1))
		fire count=$c seed=$((seed + rounds * 64)) keys=$keys cpu=all
		fired=$((fired + c * ncpu))
		bound=$((bound + c * ncpu))
	done
	# A grow the last round asked for is done before the caller looks.
	size=$(size_now)
	if [ $size -lt 131072 ] && [ $(entries_now) -ge $((size / 2)) ]; then
		wait_grow $size
		waited=$((waited + 1))
	fi
	fired_total=$fired
}
# hist_nth FILE N: the N-th histogram's body (after its header).
hist_nth() { awk -v n=$2 '/^# event histogram/ { i++; body = 0 } i == n && /^[{T]/ { body = 1 } i == n && body && NF' $1; }

# About 20,400 distinct keys of a million: five grows, to the cap.
expect_write 'hist:keys=a:sort=a:size=32768' $EV/trigger
expect_write "$G1" $EV/trigger
expect_grep "^rhist:keys=a:vals=hitcount:sort=a:size=128:grow \[active\]" $EV/trigger
paced 20600 1000000 0
echo "fired $fired_total events in $rounds rounds, $waited grows waited for ($(ms))"
cat $EV/hist > /tmp/hist
cat $EV/rhist > /tmp/rhist
hist_nth /tmp/hist 1 > /tmp/h1
hist_nth /tmp/rhist 1 > /tmp/g1
grep -q 'Dropped: 0$' /tmp/h1 || fail "hist dropped events"
grep -q "Hits: $fired_total\$" /tmp/h1 || fail "hist: not $fired_total hits"
ent=$(sed -n 's/^    Entries: //p' /tmp/h1)
[ $ent -ge 20000 ] || fail "only $ent distinct keys"
cmp -s /tmp/h1 /tmp/g1 || { diff /tmp/h1 /tmp/g1 | head; fail "size=128:grow differs from hist's size=32768"; }
grep 'grow: generation' $DBG
# 128, then the spare of at least 8192 (the core's SPARE_BITS_MIN), then
# four times larger each time.
grep -q '^  grow: generation 3 size 131072 grows 3 failed 0$' $DBG ||
	{ cat $DBG; fail "not grown to the cap in three generations"; }
grep -q "^# trigger info: rhist:keys=a:vals=hitcount:sort=a:size=128:grow \[active\]" /tmp/rhist ||
	fail "the trigger info does not show the initial size"
echo "ok grow: $ent keys, $fired_total events on $ncpu CPUs: size=128:grow as hist's size=32768, Dropped: 0 ($(ms))"
expect_write "!$G1" $EV/trigger
expect_write '!hist:keys=a:sort=a:size=32768' $EV/trigger

# Statistics and sums: two grows, against the same text of one map.
expect_write "$G2" $EV/trigger
expect_write "$R2" $EV/trigger
paced 3000 1000 7
cat $EV/rhist > /tmp/rhist
hist_nth /tmp/rhist 1 > /tmp/g2
hist_nth /tmp/rhist 2 > /tmp/r2
grep -q 'Dropped: 0$' /tmp/g2 || { tail -4 /tmp/g2; cat $DBG; fail "statistics: dropped"; }
cmp -s /tmp/r2 /tmp/g2 || { diff /tmp/r2 /tmp/g2 | head; fail "statistics: size=128:grow differs from size=2048"; }
grep -q '^  grow: generation 1 size 8192 grows 1 failed 0$' $DBG || { cat $DBG; fail "statistics: not one grow"; }
echo "ok grow: statistics as one map's ($(ms))"

# A string key (the record's length asked of the ring buffer): against
# hist's of one map.
expect_write "!$R2" $EV/trigger
# Of 700 keys on 2 CPUs, hist's map now and then loses a count of a key
# the other CPU is publishing (rhist.rst, "Differences from hist"): then
# the histogram is compared with rhist's of one map, R3, alone.
G3='rhist:keys=d:sort=d:size=128:grow'
R3='rhist:keys=d:sort=d:size=2048'
expect_write 'hist:keys=d:sort=d:size=2048' $EV/trigger
expect_write "$G3" $EV/trigger
expect_write "!$G2" $EV/trigger
expect_write "$R3" $EV/trigger
paced 1500 700 11
cat $EV/hist > /tmp/hist
cat $EV/rhist > /tmp/rhist
hist_nth /tmp/hist 1 > /tmp/h3
hist_nth /tmp/rhist 1 > /tmp/g3
hist_nth /tmp/rhist 2 > /tmp/r3
grep -q 'Dropped: 0$' /tmp/g3 || { tail -4 /tmp/g3; cat $DBG; fail "strings: dropped"; }
cmp -s /tmp/r3 /tmp/g3 || { diff /tmp/r3 /tmp/g3 | head; fail "strings: size=128:grow differs from size=2048"; }
if grep -q 'Dropped: 0$' /tmp/h3; then
	cmp -s /tmp/h3 /tmp/g3 || { diff /tmp/h3 /tmp/g3 | head; fail "strings: size=128:grow differs from hist's size=2048"; }
	echo "ok grow: a string key as hist's and one map's ($(ms))"
else
	# What it lost is counted: its hits and drops are the events.
	hh=$(sed -n 's/^    Hits: //p' /tmp/h3)
	hd=$(sed -n 's/^    Dropped: //p' /tmp/h3)
	[ $((hh + hd)) = $fired_total ] || fail "strings: hist's $hh hits and $hd drops are not $fired_total"
	echo "ok grow: a string key as one map's; hist's dropped $hd in its race ($(ms))"
fi
grep -q '^  grow: generation 1 size 8192 grows 1 failed 0$' $DBG || { cat $DBG; fail "strings: not one grow"; }
expect_write "!$G3" $EV/trigger
expect_write "!$R3" $EV/trigger
expect_write '!hist:keys=d:sort=d:size=2048' $EV/trigger
expect_write "$G2" $EV/trigger
expect_write "$R2" $EV/trigger
paced 600 1000 3
grep -q '^  grow: generation 1 size 8192 grows 1 failed 0$' $DBG || { cat $DBG; fail "clear: not one grow before"; }

# clear: the map keeps its size and asks again when half full. The
# match ignores size= and grow, as hist's ignores size=: the first
# trigger of the same fields, G2, is cleared, and R2 is not.
expect_write "$G2:clear" $EV/trigger
cat $EV/rhist > /tmp/rhist
hist_nth /tmp/rhist 1 | grep -q '^    Hits: 0$' || fail "clear left hits in G2"
hist_nth /tmp/rhist 2 | grep -q '^    Hits: 0$' && fail "clear cleared R2"
grep -q '^  grow: generation 1 size 8192 grows 1 failed 0$' $DBG || { cat $DBG; fail "clear changed the size"; }
# The cleared map asks again once 4096 of its 8192 entries are taken.
paced 4500 100000 7
grep -q '^  grow: generation 2 size 32768 grows 2 failed 0$' $DBG || { cat $DBG; fail "no grow after clear"; }
cat $EV/rhist > /tmp/rhist
hist_nth /tmp/rhist 1 | grep -q '^    Dropped: 0$' || fail "clear: dropped"
hist_nth /tmp/rhist 1 | grep -q "^    Hits: $fired_total\$" || fail "clear: not $fired_total hits"
echo "ok grow: clear keeps the size and grows again ($(ms))"
expect_write "!$G2" $EV/trigger
expect_write "!$R2" $EV/trigger

# --- bursts on every CPU: none dropped within the spare's room ----------------
# The event path switches to the spare itself: no allocation, no lock, no
# wait for the worker. The test loop reschedules every 4096 events on
# each CPU, and the worker runs only then (PREEMPT_NONE): within fewer
# events on every CPU it may not run at all. 8000 events of keys from a
# range of a million (about 7,960 distinct) fill a map of 128 entries at
# once and then nearly all of the spare of 8192, whose threshold (4096)
# comes with no spare behind it: none is dropped, whatever the worker's
# timing, and the histogram is hist's of 32768 entries. The worker then
# makes the next spare and switches to it: generation 2.
# Both maps may drop an event that waits too long for another CPU to
# publish the same new key (a vCPU the host preempted), which C leaves to
# timing: one or two such drops fire the burst again, up to three times.
per_cpu=$((8000 / ncpu))
[ $per_cpu -lt 4096 ] || fail "burst: $per_cpu events a CPU is not within one batch"
expect_write 'hist:keys=a:sort=a:size=32768' $EV/trigger
for try in 1 2 3; do
	expect_write "$G1" $EV/trigger
	fire count=$per_cpu seed=9 keys=1000000 cpu=all
	wait_grow 8192
	cat $EV/hist > /tmp/hist
	cat $EV/rhist > /tmp/rhist
	hist_nth /tmp/hist 1 > /tmp/h1
	hist_nth /tmp/rhist 1 > /tmp/g1
	grep '^  grow:' $DBG > /tmp/grew
	expect_write "!$G1" $EV/trigger
	expect_write "hist:keys=a:sort=a:size=32768:clear" $EV/trigger
	grep -q '^    Dropped: [12]$' /tmp/g1 || break
	echo "burst: $(grep Dropped /tmp/g1), in the publishing race; again"
done
expect_write '!hist:keys=a:sort=a:size=32768' $EV/trigger
grep -q 'Dropped: 0$' /tmp/g1 || { tail -4 /tmp/g1; fail "burst: dropped"; }
grep -q "Hits: $((per_cpu * ncpu))\$" /tmp/g1 || fail "burst: not $((per_cpu * ncpu)) hits"
grep -q '^  grow: generation 2 size 32768 grows 2 failed 0$' /tmp/grew || { cat /tmp/grew; fail "burst: not grown to 32768"; }
if grep -q 'Dropped: 0$' /tmp/h1; then
	cmp -s /tmp/h1 /tmp/g1 || { diff /tmp/h1 /tmp/g1 | head; fail "burst: size=128:grow differs from hist's size=32768"; }
	same="as hist's size=32768"
else
	same="hist's size=32768 lost $(sed -n 's/^    Dropped: //p' /tmp/h1) in its race"
fi
echo "ok grow: a burst of $((per_cpu * ncpu)) events, $(sed -n 's/^    Entries: //p' /tmp/g1) keys, from 128 entries: Dropped: 0, $same ($(ms))"

# Past the spare's room (some 16,000 new keys in the first 4096 events of
# each CPU): drops are counted, never lost.
expect_write "$G1" $EV/trigger
fire count=8192 seed=99 keys=1000000 cpu=all
cat $EV/rhist > /tmp/rhist
hits=$(sed -n 's/^    Hits: //p' /tmp/rhist)
drop=$(sed -n 's/^    Dropped: //p' /tmp/rhist)
sum=$(awk '$1 == "{" { s += $NF } END { print s + 0 }' /tmp/rhist)
[ "$sum" = "$hits" ] || fail "burst: entries $sum, hits $hits"
[ $((hits + drop)) = $((8192 * ncpu)) ] || fail "burst: hits $hits + dropped $drop != $((8192 * ncpu))"
echo "ok grow: a burst of $((8192 * ncpu)) events: $hits hits, $drop dropped; $(grep 'grow:' $DBG) ($(ms))"
expect_write "!$G1" $EV/trigger

# --- removal, an instance's removal and rmmod with a grow pending --------------
for i in 1 2 3; do
	expect_write "$G1" $EV/trigger
	fire count=2000 seed=$i keys=20000 cpu=all
	expect_write "!$G1" $EV/trigger
done
mkdir instances/grow || fail "mkdir"
echo 1 > instances/grow/$EV/enable
expect_write "$G1" instances/grow/$EV/trigger
fire count=3000 seed=5 keys=20000 cpu=all
rmdir instances/grow || fail "rmdir with a :grow trigger"
expect_write "$G1" $EV/trigger
fire count=3000 seed=6 keys=20000 cpu=all
rmmod rhist || fail "rmmod with a :grow trigger"
insmod /lib/rhist/rhist.ko || fail "insmod"
[ -z "$(grep '^rhist' $EV/trigger)" ] || fail "a trigger survived rmmod"
echo "ok grow: removal, rmdir and rmmod with a grow pending ($(ms))"
read -r t1 < $NOW
echo "grow.sh: $(((t1 - t0) / 1000000)) ms"
