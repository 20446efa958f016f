#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# onmatch().trace() and synthetic events (histogram.rst section 2.2): the
# same pipeline is built once with hist and once with rhist, on the same
# events, with different variable names, each emitting its own synthetic
# event. A hist trigger on each synthetic event must then read the same,
# and so must the events in the trace. Also: the trigger and debug files,
# C's errors, and a synthetic event an rhist trigger uses cannot be
# deleted.
. /test/lib.sh.inc

OTHER=events/rhist_test/rhist_other
WAKING=events/sched/sched_waking
SWITCH=events/sched/sched_switch
debug_mask='s/^hist_data: .*/hist_data: (masked)/; s/^\( *var.hist_data:\) .*/\1 (masked)/'

# same DIR_C DIR_R FILE: the two files agree (hist_same), once the hist
# pipeline's names are the rhist one's.
same() {
	sed 's/c_/r_/g' "$1/$3" > /tmp/c
	hist_same /tmp/c "$2/$3" || fail "$2/$3 differs from $1/$3"
}

for p in c r; do
	expect_write "${p}_lat u64 lat; u64 a; u32 b; char name[16]" synthetic_events
	expect_write "${p}_own char s[16]; s32 c; char d[]" synthetic_events
done

# 1. Across events: rhist_sample saves a timestamp and a string for key a,
# rhist_other computes the latency and emits it with its fields and the
# saved string (a reference to a string variable). The trigger on
# rhist_sample also emits its own fields (field variables, strings
# included) on every event.
expect_write 'hist:keys=a:c_ts0=common_timestamp,c_name=s:onmatch(rhist_test.rhist_sample).c_own(rhist_test.rhist_sample.s,rhist_test.rhist_sample.c,rhist_test.rhist_sample.d) if b < 3000000000' $EV/trigger
expect_write 'rhist:keys=a:r_ts0=common_timestamp,r_name=s:onmatch(rhist_test.rhist_sample).r_own(rhist_test.rhist_sample.s,rhist_test.rhist_sample.c,rhist_test.rhist_sample.d) if b < 3000000000' $EV/trigger
expect_write 'hist:keys=a:c_lat=common_timestamp-$c_ts0:onmatch(rhist_test.rhist_sample).trace(c_lat,$c_lat,rhist_test.rhist_other.a,rhist_test.rhist_other.b,$c_name)' $OTHER/trigger
expect_write 'rhist:keys=a:r_lat=common_timestamp-$r_ts0:onmatch(rhist_test.rhist_sample).trace(r_lat,$r_lat,rhist_test.rhist_other.a,rhist_test.rhist_other.b,$r_name)' $OTHER/trigger
for p in c r; do
	expect_write 'hist:keys=a,lat,name:vals=b' events/synthetic/${p}_lat/trigger
	expect_write 'hist:keys=s,c,d' events/synthetic/${p}_own/trigger
	echo 1 > events/synthetic/${p}_lat/enable
done
fire count=300 seed=5 keys=30
fire count=300 seed=6 keys=30 event=other
fire count=300 seed=7 keys=30
fire count=300 seed=8 keys=30 event=other
same events/synthetic/c_lat events/synthetic/r_lat hist
same events/synthetic/c_own events/synthetic/r_own hist
grep -q 'Hits: [1-9]' events/synthetic/r_lat/hist || fail "no r_lat event"
grep -q 'Hits: [1-9]' events/synthetic/r_own/hist || fail "no r_own event"
# The trigger and debug files: the same but for the names.
grep '^hist:' $OTHER/trigger | sed 's/c_/r_/g; s/^hist:/rhist:/' > /tmp/c
grep '^rhist:' $OTHER/trigger > /tmp/r
cmp -s /tmp/c /tmp/r || { diff /tmp/c /tmp/r; fail "the trigger lines differ"; }
sed "s/c_/r_/g; s/^# trigger info: hist:/# trigger info: rhist:/; $debug_mask" $OTHER/hist_debug > /tmp/c
sed "$debug_mask" $OTHER/rhist_debug > /tmp/r
cmp -s /tmp/c /tmp/r || { diff /tmp/c /tmp/r | head -20; fail "rhist_debug differs"; }
sed "s/c_/r_/g; s/^# trigger info: hist:/# trigger info: rhist:/; $debug_mask" $EV/hist_debug > /tmp/c
sed "$debug_mask" $EV/rhist_debug > /tmp/r
cmp -s /tmp/c /tmp/r || { diff /tmp/c /tmp/r | head -20; fail "$EV/rhist_debug differs"; }
grep -q 'field_vars\[2\].var' $EV/rhist_debug || fail "no field variables in rhist_debug"

# The events in the trace: the same fields, in the same order.
echo 0 > tracing_on
sed -n 's/.* c_lat: /lat: /p' trace > /tmp/c
sed -n 's/.* r_lat: /lat: /p' trace > /tmp/r
[ -s /tmp/r ] || fail "no r_lat event in the trace"
cmp -s /tmp/c /tmp/r || { diff /tmp/c /tmp/r | head; fail "the traced events differ"; }
echo 1 > tracing_on

# 2. A synthetic event in use cannot be deleted: EBUSY, as for hist's.
expect_reject "Device or resource busy" '!r_lat u64 lat; u64 a; u32 b; char name[16]' synthetic_events
expect_reject "Device or resource busy" '!c_lat u64 lat; u64 a; u32 b; char name[16]' synthetic_events
grep -q '^r_lat' synthetic_events || fail "r_lat was deleted"

# 3. C's errors, the same texts for both (each side sees its own ts0).
expect_write 'hist:keys=a:ts0=common_timestamp,nm=s' $EV/trigger
expect_write 'rhist:keys=a:ts0=common_timestamp,nm=s' $EV/trigger
EV=$OTHER
for t in \
	'keys=a:l=common_timestamp-$ts0:onmatch(rhist_test.rhist_sample).nope($l)' \
	'keys=a:l=common_timestamp-$ts0:onmatch(rhist_test.nope).r_lat($l)' \
	'keys=a:l=common_timestamp-$ts0:onmatch(rhist_test.rhist_sample).trace(nope,$l)' \
	'keys=a:l=common_timestamp-$ts0:onmatch(rhist_test.rhist_sample).r_lat($l,rhist_test.rhist_other.a,rhist_test.rhist_other.b)' \
	'keys=a:l=common_timestamp-$ts0:onmatch(rhist_test.rhist_sample).r_lat($l,rhist_test.rhist_other.a,rhist_test.rhist_other.b,$zz)' \
	'keys=a:l=common_timestamp-$ts0:onmatch(rhist_test.rhist_sample).r_lat($l,rhist_test.rhist_other.b,rhist_test.rhist_other.a,$l)' \
	'keys=a:l=common_timestamp-$ts0:onmatch(rhist_test.rhist_sample).r_lat($l,rhist_test.rhist_other.a,rhist_test.rhist_other.b,rhist_test.rhist_other.a,rhist_test.rhist_other.b)' \
	'keys=a:l=common_timestamp-$ts0:onmatch(rhist_test.rhist_sample).r_lat(a.hex,rhist_test.rhist_other.a,rhist_test.rhist_other.b,$l)' \
	'keys=a:l=common_timestamp-$ts0:onmatch(rhist_test.rhist_sample).r_lat($l,rhist_test.rhist_other.a,rhist_test.rhist_other.b,rhist_test.nope.x)' \
	'keys=a:l=common_timestamp-$ts0:onmatch(rhist_test.rhist_sample).r_lat($l,rhist_test.rhist_other.a,rhist_test.rhist_other.b,$l) if zz > 1' \
	'keys=a:l=common_timestamp-$ts0:onmatch(rhist_test.rhist_sample).r_lat($l,rhist_test.rhist_other.a,rhist_test.rhist_other.b,$nm):onmatch(rhist_test.rhist_sample).r_lat($l,rhist_test.rhist_other.a,rhist_test.rhist_other.b,$nm)' \
	'keys=a:l=common_timestamp-$ts0:onmatch(rhist_test.rhist_sample).r_lat($l,a,b,$l)'
do
	compare_hist_rhist "$t"
done
EV=events/rhist_test/rhist_sample
expect_write '!hist:keys=a:ts0=common_timestamp,nm=s' $EV/trigger
expect_write '!rhist:keys=a:ts0=common_timestamp,nm=s' $EV/trigger

# 4. histogram.rst's examples on the scheduler's own events, for the
# wakeups and forks of one shell, so that the histograms stop when it
# does: the wakeup latency with the waking pid as a variable key
# (keys=$saved_pid) and another trigger's variable as a parameter, and
# wakeup_new_test, whose trigger defines the variable it keys on, in both
# forms of the action. The shell and its children keep to one CPU: a
# wakeup on one CPU racing with the switch on another could find hist's
# variable set and not yet rhist's (their triggers run one after the
# other). It waits for all the triggers: creating one takes a while here.
NEW=events/sched/sched_wakeup_new
for p in c r; do
	expect_write "${p}_wakeup u64 lat; pid_t pid; char comm[16]" synthetic_events
	expect_write "hist:keys=pid,lat:sort=pid" events/synthetic/${p}_wakeup/trigger
	expect_write "${p}_wakeup2 u64 lat; pid_t pid; int prio" synthetic_events
	expect_write "hist:keys=pid,prio,lat:sort=pid,lat" events/synthetic/${p}_wakeup2/trigger
	expect_write "${p}_new_test pid_t pid" synthetic_events
	expect_write "hist:keys=pid:sort=pid" events/synthetic/${p}_new_test/trigger
done
rm -f /tmp/go && mkfifo /tmp/go || fail "mkfifo"
taskset 1 sh -c 'read go < /tmp/go; i=0; while [ $i -lt 30 ]; do sleep 0.01; i=$((i + 1)); done' &
w=$!
for p in hist rhist; do
	c=c; [ $p = rhist ] && c=r
	expect_write "$p:keys=pid:${c}_wts=common_timestamp.usecs if pid==$w" $WAKING/trigger
	expect_write "$p:keys=\$${c}_saved:${c}_saved=pid:${c}_ts2=common_timestamp.usecs if pid==$w" $WAKING/trigger
	expect_write "$p:keys=next_pid:${c}_wlat=common_timestamp.usecs-\$${c}_wts:onmatch(sched.sched_waking).${c}_wakeup(\$${c}_wlat,next_pid,next_comm) if next_pid==$w" $SWITCH/trigger
	expect_write "$p:keys=next_pid:${c}_lat2=common_timestamp.usecs-\$${c}_ts2:onmatch(sched.sched_waking).${c}_wakeup2(\$${c}_lat2,\$${c}_saved,next_prio) if next_pid==$w" $SWITCH/trigger
done
# The shell's forks only: common_pid is the parent's.
expect_write 'hist:keys=$c_testpid:c_testpid=pid:onmatch(sched.sched_wakeup_new).c_new_test($c_testpid) if common_pid=='$w $NEW/trigger
expect_write 'rhist:keys=$r_testpid:r_testpid=pid:onmatch(sched.sched_wakeup_new).trace(r_new_test,$r_testpid) if common_pid=='$w $NEW/trigger
echo go > /tmp/go
wait $w
for e in wakeup wakeup2 new_test; do
	same events/synthetic/c_$e events/synthetic/r_$e hist
	grep -q 'Hits: [1-9]' events/synthetic/r_$e/hist || fail "no r_$e event"
done
for d in $WAKING $SWITCH; do
	sed "s/c_/r_/g; s/^# trigger info: hist:/# trigger info: rhist:/; $debug_mask" $d/hist_debug > /tmp/c
	sed "$debug_mask" $d/rhist_debug > /tmp/r
	cmp -s /tmp/c /tmp/r || { diff /tmp/c /tmp/r | head -20; fail "$d/rhist_debug differs"; }
done

# Everything goes away again, the synthetic events too.
for f in $OTHER $SWITCH $WAKING $EV $NEW; do
	: > $f/trigger
done
for p in c r; do
	echo 0 > events/synthetic/${p}_lat/enable
	for e in lat own wakeup wakeup2 new_test; do
		: > events/synthetic/${p}_$e/trigger
	done
done
: > synthetic_events || { cat synthetic_events; fail "synthetic events still in use"; }
[ ! -s synthetic_events ] || { cat synthetic_events; fail "synthetic events left"; }
for f in $EV $OTHER $SWITCH $WAKING $NEW; do
	! grep -q '^r\?hist:' $f/trigger || { cat $f/trigger; fail "left in $f"; }
done
echo PASS
