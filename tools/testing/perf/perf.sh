#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# perf beside rhist (run.sh --overlay with perf staged by stage.sh, and
# --file lib.sh.inc): perf attaches its own probe to the tracepoints
# rhist's triggers are on, and each must count every event, whatever
# the other does meanwhile. Prints "perf: STEP ok" or "perf: STEP FAIL:
# why" for each step (check.sh counts them), "perf-count: STEP what=N"
# lines with the numbers, and "perf: done".
. /test/lib.sh.inc
OTHER=events/rhist_test/rhist_other

PERF=/usr/bin/perf
cpus=$(grep -c '^processor' /proc/cpuinfo)

# Each step runs in a subshell: its fail() fails the step, not the script.
run_step() {
	name=$1
	shift
	if out=$( ("$@") 2>&1); then
		echo "$out" | grep '^perf-count: '
		echo "perf: $name ok"
	else
		echo "$out" | tail -25 | sed 's/^/    /'
		echo "perf: $name FAIL: $(echo "$out" | grep '^FAIL: ' | tail -1)"
	fi
	# Whatever a step left behind goes, so that the next starts clean.
	for p in $(pidof perf); do kill -INT $p; done
	for f in $EV/trigger $OTHER/trigger events/sched/sched_switch/trigger; do
		grep -v '^#' $f | while read -r t; do echo "!${t%% \[*}" >> $f; done
	done
	[ ! -e events/synthetic/p_syn ] || echo '!p_syn u64 a; u32 b' >> synthetic_events
}

# hits FILE [KEYS]: the Hits of a histogram file, or of its histogram
# of keys=KEYS.
hits() {
	awk -v k="${2:-}" '/^# trigger info: / { on = k == "" || index($0, "rhist:keys=" k ":") > 0 }
		on && /^    Hits: / { print $2 }' "$1"
}
# perf_stat_count FILE EVENT: the count perf stat -x, wrote for EVENT.
perf_stat_count() {
	awk -F, -v e="$2" '$3 == e { print $1 }' "$1"
}
# equal WHAT A B
equal() {
	[ "$2" = "$3" ] || fail "$1: $2 != $3"
}

# perf's control FIFOs: a recording that starts disabled (-D -1) and is
# enabled and disabled by command, each acknowledged, so that the steps
# know perf counts from here on.
ctl_start() {
	rm -f /tmp/ctl /tmp/ack
	mkfifo /tmp/ctl /tmp/ack
	exec 8<> /tmp/ctl 7<> /tmp/ack
}
ctl() {
	echo "$1" >&8
	a=
	read -t 60 -r a <&7
	[ "$a" = ack ] || { cat /tmp/perf.err; fail "perf did not acknowledge $1 ($a)"; }
}
ctl_end() {
	exec 8>&- 7>&-
	rm -f /tmp/ctl /tmp/ack
}

# record_start PAGES OUT: perf records rhist_sample on every CPU into OUT
# (a buffer of PAGES pages), enabled when this returns; record_stop ends
# it (SIGINT), its file written.
record_start() {
	ctl_start
	$PERF record -q -a -m $1 -D -1 --control fifo:/tmp/ctl,/tmp/ack \
		-o $2 -e rhist_test:rhist_sample 2> /tmp/perf.err &
	perf_pid=$!
	ctl enable
}
record_stop() {
	kill -INT $perf_pid
	wait $perf_pid
	ctl_end
}

# perf stat counts exactly the events fired, as rhist's histogram does.
step_stat() {
	n=10000
	expect_write 'rhist:keys=a' $EV/trigger
	$PERF stat -x, -o /tmp/stat -e rhist_test:rhist_sample -- \
		sh -c "echo count=$n seed=1 keys=8 > $FIRE" || fail "perf stat failed"
	p=$(perf_stat_count /tmp/stat rhist_test:rhist_sample)
	r=$(hits $EV/rhist)
	echo "perf-count: stat fired=$n perf=$p rhist=$r"
	equal "perf stat" "$p" $n
	equal rhist "$r" $n
	# Every CPU at once, counted system-wide.
	$PERF stat -a -x, -o /tmp/stat -e rhist_test:rhist_sample -- \
		sh -c "echo count=$n seed=2 keys=8 cpu=all > $FIRE" || fail "perf stat -a failed"
	p=$(perf_stat_count /tmp/stat rhist_test:rhist_sample)
	r=$(hits $EV/rhist)
	echo "perf-count: stat-all-cpus fired=$((n * cpus)) perf=$p rhist=$((r - n))"
	equal "perf stat -a" "$p" $((n * cpus))
	equal rhist "$r" $((n + n * cpus))
}

# perf_records DATA OUT PATTERN [ARGS...]: perf's records in DATA (perf
# script ARGS), the lines matching PATTERN, sorted, each once, into OUT;
# sets dups to how many lines perf wrote twice. perf does that now and
# then in this VM, with or without rhist: a recording of a fire of
# 90,000 events and no trigger anywhere had 90,001 lines in 2 runs of 6,
# the extra one a copy of another (same CPU, same time, same fields),
# which no event makes. A copy is counted and shown, not taken for an
# event; a lost or foreign record still fails.
perf_records() {
	local data=$1 out=$2 pattern=$3
	shift 3
	$PERF script -i "$data" "$@" 2> /tmp/script.err | grep -e "$pattern" | sort > "$out.all" ||
		{ cat /tmp/script.err; fail "perf script found no records"; }
	sort -u "$out.all" > "$out"
	dups=$(($(grep -c . "$out.all") - $(grep -c . "$out")))
}

# perf record, then perf script: a record of each event, whose keys
# make the histogram rhist made.
step_record() {
	n=2000
	expect_write 'rhist:keys=a:vals=hitcount:sort=a' $EV/trigger
	$PERF record -q -m 1024 -o /tmp/rec.data -e rhist_test:rhist_sample -- \
		sh -c "echo count=$n seed=3 keys=8 > $FIRE" 2> /tmp/perf.err ||
		{ cat /tmp/perf.err; fail "perf record failed"; }
	perf_records /tmp/rec.data /tmp/rec.txt 'rhist_test:rhist_sample:'
	head -2 /tmp/rec.txt
	p=$(grep -c . /tmp/rec.txt)
	r=$(hits $EV/rhist)
	echo "perf-count: record fired=$n perf-script=$p rhist=$r perf-copies=$dups"
	equal "perf script" "$p" $n
	equal rhist "$r" $n
	# The histogram of perf's records by a, as rhist prints it.
	sed -n 's/.* a=\([0-9]*\) .*/\1/p' /tmp/rec.txt | sort -n | uniq -c |
		awk '{ printf "{ a: %20s } hitcount: %11s\n", $2, $1 }' > /tmp/from-perf
	grep '^{ a:' $EV/rhist | sed 's/  */ /g' > /tmp/from-rhist
	sed -i 's/  */ /g' /tmp/from-perf
	diff /tmp/from-perf /tmp/from-rhist || fail "perf's records and rhist's histogram differ"
	[ "$(wc -l < /tmp/from-rhist)" = 8 ] || fail "not 8 keys"
}

# Triggers come and go while perf records: perf has every event, the
# trigger that stayed has every event, the one removed between fires
# has those before it.
step_remove_while_recording() {
	n=5000
	expect_write 'rhist:keys=a' $EV/trigger
	expect_write 'rhist:keys=b.log2' $EV/trigger
	expect_write 'rhist:keys=c:size=4096' $EV/trigger
	record_start 1024 /tmp/rm.data
	fire count=$n seed=4 keys=64
	r2=$(hits $EV/rhist b.log2)
	expect_write '!rhist:keys=b.log2' $EV/trigger
	fire count=$n seed=5 keys=64
	# One removed while every CPU fires.
	echo "count=$n seed=6 keys=64 cpu=all" > $FIRE &
	fire_pid=$!
	expect_write '!rhist:keys=c:size=4096' $EV/trigger
	wait $fire_pid || fail "fire failed"
	ctl disable
	record_stop
	total=$((2 * n + n * cpus))
	perf_records /tmp/rm.data /tmp/rm.txt 'rhist_test:rhist_sample:'
	p=$(grep -c . /tmp/rm.txt)
	r=$(hits $EV/rhist a)
	echo "perf-count: remove-while-recording fired=$total perf-script=$p rhist-kept=$r rhist-removed-first=$r2 perf-copies=$dups"
	equal "perf script" "$p" $total
	equal "the trigger kept" "$r" $total
	equal "the trigger removed" "$r2" $n
	[ "$(grep -c . $EV/trigger)" = 1 ] || { cat $EV/trigger; fail "triggers left"; }
}

# lost FILE: how many records perf lost, its reader not scheduled before
# its buffer filled (a loaded host can starve a vCPU that long).
lost() {
	$PERF script -i $1 --show-lost-events 2> /dev/null |
		awk '/PERF_RECORD_LOST / { n += $NF } END { print n + 0 }'
}

# perf stops (its probe leaves the tracepoint) on one CPU while the
# other fires through rhist's trigger: rhist counts every event, and
# perf's records are the first events of the sequence, each once (perf's
# own copies aside: perf_records), none lost but those perf says it lost (against a recording of that many
# events to the end). As sets of lines: the firing task may move to the
# other CPU, whose clock under TCG may be a little behind, and perf
# orders records by time.
step_stop_while_firing() {
	n=1000000
	expect_write 'rhist:keys=a' $EV/trigger
	record_start 4096 /tmp/stop.data
	t0=$(cat /sys/kernel/debug/rhist_test/now_ns)
	echo "count=$n seed=7 keys=8" > $FIRE &
	fire_pid=$!
	usleep 500000
	record_stop
	t1=$(cat /sys/kernel/debug/rhist_test/now_ns)
	wait $fire_pid || fail "fire failed"
	t2=$(cat /sys/kernel/debug/rhist_test/now_ns)
	r=$(hits $EV/rhist)
	perf_records /tmp/stop.data /tmp/stop.txt 'a=' -F trace
	m=$(grep -c . /tmp/stop.txt) l=$(lost /tmp/stop.data) copies=$dups
	echo "perf-count: stop-while-firing fired=$n rhist=$r perf-script=$m perf-lost=$l perf-copies=$copies (perf signalled at 500 ms, gone at $(((t1 - t0) / 1000000)) ms; the fire done at $(((t2 - t0) / 1000000)) ms)"
	equal rhist "$r" $n
	[ "$m" -gt 0 ] && [ $((m + l)) -lt $n ] || fail "perf did not stop while the events fired ($m of $n)"
	# The first m + l events again, recorded to the end.
	$PERF record -q -m 4096 -o /tmp/ref.data -e rhist_test:rhist_sample -- \
		sh -c "echo count=$((m + l)) seed=7 keys=8 > $FIRE" 2> /tmp/perf.err ||
		{ cat /tmp/perf.err; fail "perf record failed"; }
	perf_records /tmp/ref.data /tmp/ref.txt 'a=' -F trace
	echo "perf-count: stop-while-firing's reference perf-copies=$dups"
	equal "the reference's losses" "$(lost /tmp/ref.data)" 0
	if [ $l = 0 ]; then
		cmp /tmp/ref.txt /tmp/stop.txt || fail "perf's $m records are not the sequence's first $m"
	else
		[ -z "$(comm -23 /tmp/stop.txt /tmp/ref.txt | head -3)" ] ||
			fail "perf's $m records are not among the sequence's first $((m + l))"
	fi
	equal "rhist after the reference" "$(hits $EV/rhist)" $((n + m + l))
}

# sched_switch: the switches of one task, by rhist and by perf stat -a,
# both filtered to that task, both counting from before it runs to
# after it is gone.
step_sched_switch() {
	rm -f /tmp/go
	mkfifo /tmp/go
	sh -c 'read x < /tmp/go; i=0; while [ $i -lt 40 ]; do usleep 1000; i=$((i + 1)); done' &
	pid=$!
	# Asleep in the FIFO's open before either counts: its switch into
	# that sleep would be rhist's alone.
	st=R
	while [ "$st" != S ]; do
		read -r _ _ st _ < /proc/$pid/stat
		[ "$st" = S ] || usleep 1000
	done
	expect_write "rhist:keys=prev_pid if prev_pid == $pid" events/sched/sched_switch/trigger
	ctl_start
	$PERF stat -a -x, -o /tmp/sw -D -1 --control fifo:/tmp/ctl,/tmp/ack \
		-e sched:sched_switch --filter "prev_pid == $pid" 2> /tmp/perf.err &
	perf_pid=$!
	ctl enable
	echo go > /tmp/go
	wait $pid
	# Its last switch comes after its parent has seen it exit.
	usleep 200000
	ctl disable
	record_stop
	p=$(perf_stat_count /tmp/sw sched:sched_switch)
	r=$(hits events/sched/sched_switch/rhist)
	echo "perf-count: sched_switch perf=$p rhist=$r"
	[ "${r:-0}" -gt 40 ] || fail "rhist saw $r switches of a task that slept 40 times"
	equal "perf stat and rhist" "$p" "$r"
}

# A synthetic event rhist emits (onmatch().trace()): rhist counts it
# exactly, perf lists it but cannot open it (synthetic events have no
# perf probe in 6.12: perf_event_open fails with ENODEV), and the failed
# open leaves the event as it was (it can still be removed).
step_synthetic() {
	n=3000
	expect_write 'p_syn u64 a; u32 b' synthetic_events
	expect_write 'rhist:keys=a:p_ts=common_timestamp:onmatch(rhist_test.rhist_sample).trace(p_syn,rhist_test.rhist_sample.a,rhist_test.rhist_sample.b)' $EV/trigger
	expect_write 'rhist:keys=a' events/synthetic/p_syn/trigger
	$PERF list 2> /dev/null | grep -q 'synthetic:p_syn' || fail "perf list does not show synthetic:p_syn"
	! $PERF stat -x, -o /tmp/syn -e synthetic:p_syn -- true 2> /tmp/syn.err || fail "perf stat opened synthetic:p_syn"
	cat /tmp/syn.err
	grep -q 'No such device' /tmp/syn.err || fail "perf's error is not ENODEV"
	$PERF stat -x, -o /tmp/stat -e rhist_test:rhist_sample -- \
		sh -c "echo count=$n seed=8 keys=8 > $FIRE" || fail "perf stat failed"
	p=$(perf_stat_count /tmp/stat rhist_test:rhist_sample)
	r=$(hits events/synthetic/p_syn/rhist)
	echo "perf-count: synthetic fired=$n perf(rhist_sample)=$p rhist(p_syn)=$r"
	equal "perf stat" "$p" $n
	equal "rhist on p_syn" "$r" $n
	expect_write '!rhist:keys=a' events/synthetic/p_syn/trigger
	expect_write '!rhist:keys=a:p_ts=common_timestamp:onmatch(rhist_test.rhist_sample).trace(p_syn,rhist_test.rhist_sample.a,rhist_test.rhist_sample.b)' $EV/trigger
	expect_write '!p_syn u64 a; u32 b' synthetic_events
}

echo "perf: $($PERF --version)"
run_step stat step_stat
run_step record step_record
run_step remove-while-recording step_remove_while_recording
run_step stop-while-firing step_stop_while_firing
run_step sched_switch step_sched_switch
run_step synthetic step_synthetic
echo "perf: steps stat record remove-while-recording stop-while-firing sched_switch synthetic"
echo "perf: done"
