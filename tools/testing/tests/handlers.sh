#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# onmax() and onchange() with save(), trace() and snapshot(), hist against
# rhist on the same events: the hist files (the tracked values and the
# saved fields), the trigger and debug files, the synthetic events traced,
# the snapshot and its details, and C's errors.
. /test/lib.sh.inc

OTHER=events/rhist_test/rhist_other
WAKING=events/sched/sched_waking
SWITCH=events/sched/sched_switch
debug_mask='s/^hist_data: .*/hist_data: (masked)/; s/^\( *var.hist_data:\) .*/\1 (masked)/'
# hist's names to rhist's: c_ to r_ (not in synthetic_).
c2r='s/synthetic_/S_Y_N_/g; s/c_/r_/g; s/S_Y_N_/synthetic_/g'

# same FILE_C FILE_R: the two files agree (hist_same), once hist's names
# are rhist's.
same() {
	sed "$c2r; s/^# trigger info: hist:/# trigger info: rhist:/" "$1" > /tmp/c
	hist_same /tmp/c "$2" || fail "$2 differs from $1"
}
# same_synth NAME: the hist triggers on the synthetic events c_NAME and
# r_NAME agree.
same_synth() {
	sed "$c2r" events/synthetic/c_$1/hist > /tmp/c
	hist_same /tmp/c events/synthetic/r_$1/hist || fail "synthetic event $1: the hist files differ"
}
# same_debug DIR: hist_debug and rhist_debug agree, pointers masked.
same_debug() {
	sed "$c2r; s/^# trigger info: hist:/# trigger info: rhist:/; $debug_mask" $1/hist_debug > /tmp/c
	sed "$debug_mask" $1/rhist_debug > /tmp/r
	cmp -s /tmp/c /tmp/r || { diff /tmp/c /tmp/r | head -20; fail "$1/rhist_debug differs"; }
}
# both TEXT FILE: hist:TEXT and rhist:TEXT, c_ names for r_ in hist's.
both() {
	t=$1 not=
	case $t in '!'*) not='!' t=${t#!} ;; esac
	echo "${not}hist:$(echo "$t" | sed 's/r_/c_/g')" >> $2 || { cat error_log; fail "${not}hist:$t on $2"; }
	echo "${not}rhist:$t" >> $2 || { cat error_log; fail "${not}rhist:$t on $2"; }
}

# 1. Several handlers on one trigger: onmax() saving fields (a static and a
# dynamic string, numbers), onchange() tracing a synthetic event, on
# values of the fired events; then the same per entry on a second key.
for p in c r; do
	expect_write "${p}_max u32 v; char s[16]; s32 c" synthetic_events
	expect_write "hist:keys=v,s,c" events/synthetic/${p}_max/trigger
done
both 'keys=a:r_v=b,r_w=c:onmax($r_v).save(rhist_test.rhist_sample.s,rhist_test.rhist_sample.c,rhist_test.rhist_sample.d,ip):onchange($r_w).r_max($r_v,rhist_test.rhist_sample.s,rhist_test.rhist_sample.c)' $EV/trigger
both 'keys=s:r_x=c:onchange($r_x).save(rhist_test.rhist_sample.b,rhist_test.rhist_sample.s)' $EV/trigger
fire count=400 seed=3 keys=12
fire count=400 seed=4 keys=12
same $EV/hist $EV/rhist
same_synth max
grep -q 'Hits: [1-9]' events/synthetic/r_max/hist || fail "no r_max event"
grep -q '	max: ' $EV/rhist || fail "no max: in the rhist file"
grep -q '	changed: ' $EV/rhist || fail "no changed: in the rhist file"
grep '^hist:' $EV/trigger | sed "$c2r; s/^hist:/rhist:/" | sort > /tmp/c
grep '^rhist:' $EV/trigger | sort > /tmp/r
cmp -s /tmp/c /tmp/r || { diff /tmp/c /tmp/r; fail "the trigger lines differ"; }
same_debug $EV
grep -q 'save_vars\[3\].var' $EV/rhist_debug || fail "no save variables in rhist_debug"
: > $EV/trigger

# 2. Across events: rhist_other's latency since rhist_sample's, its
# maximum per key with the fields of both events (a reference to a string
# variable included).
both 'keys=a:r_ts=common_timestamp,r_nm=s' $EV/trigger
both 'keys=a:r_lat=common_timestamp-$r_ts,r_n=$r_nm:onmax($r_lat).save(rhist_test.rhist_other.b)' $OTHER/trigger
fire count=300 seed=5 keys=20
fire count=300 seed=6 keys=20 event=other
fire count=300 seed=7 keys=20
fire count=300 seed=8 keys=20 event=other
same $OTHER/hist $OTHER/rhist
grep -q '	max: *[1-9]' $OTHER/rhist || fail "no max: in $OTHER/rhist"
same_debug $OTHER
: > $OTHER/trigger
: > $EV/trigger

# 3. snapshot(): one instance has one condition, so hist and rhist take
# turns, on the same events; the other's snapshot() is refused meanwhile.
echo 1 > $EV/enable
for p in hist rhist; do
	echo 0 > snapshot 2> /dev/null
	: > trace
	expect_write "$p:keys=a:v=b:onmax(\$v).snapshot():onmax(\$v).save(rhist_test.rhist_sample.c)" $EV/trigger
	other=rhist; [ $p = rhist ] && other=hist
	expect_reject "Device or resource busy" "$other:keys=a:v2=b:onmax(\$v2).snapshot()" $EV/trigger
	fire count=200 seed=9 keys=8
	sed -n '/^Snapshot taken/,/^$/p' $EV/$p > /tmp/$p.details
	sed -n 's/.*rhist_sample: //p' snapshot > /tmp/$p.snapshot
	grep -v '^#' $EV/$p | sed 's/^# trigger info: r\?hist://' > /tmp/$p.hist
	: > $EV/trigger
done
echo 0 > $EV/enable
grep -q 'triggering value { onmax($v) }' /tmp/rhist.details || { cat $EV/rhist; fail "no snapshot details"; }
[ -s /tmp/rhist.snapshot ] || fail "no events in the snapshot"
for f in details snapshot hist; do
	cmp -s /tmp/hist.$f /tmp/rhist.$f || { diff /tmp/hist.$f /tmp/rhist.$f | head; fail "snapshot: the $f differ"; }
done
# Gone with the trigger: the instance can take a condition again.
expect_write 'hist:keys=a:v=b:onmax($v).snapshot()' $EV/trigger
: > $EV/trigger

# 4. The onmax selftest's pipeline on the scheduler's events, for the
# wakeups of one shell (see synthetic.sh for why one CPU and a gate).
rm -f /tmp/go && mkfifo /tmp/go || fail "mkfifo"
taskset 1 sh -c 'read go < /tmp/go; i=0; while [ $i -lt 30 ]; do sleep 0.01; i=$((i + 1)); done' &
w=$!
both "keys=pid:r_ts0=common_timestamp.usecs if pid==$w" $WAKING/trigger
both "keys=next_pid:r_lat=common_timestamp.usecs-\$r_ts0:onmax(\$r_lat).save(next_comm,prev_pid,prev_prio,prev_comm) if next_pid==$w" $SWITCH/trigger
both "keys=common_pid:r_prio=prio:onchange(\$r_prio).save(comm,prio) if pid==$w" $WAKING/trigger
echo go > /tmp/go
wait $w
same $SWITCH/hist $SWITCH/rhist
same $WAKING/hist $WAKING/rhist
grep -q '	max: ' $SWITCH/rhist || fail "no max: in $SWITCH/rhist"
same_debug $SWITCH
same_debug $WAKING
: > $SWITCH/trigger
: > $WAKING/trigger

# 5. A field of the matching event (histogram-design.rst's synthetic_prio):
# a hidden histogram on that event, with the keys and filter of a
# compatible trigger there, in its trigger, rhist and debug files, used by
# the events, and gone with its user.
for p in c r; do
	expect_write "${p}_fv u64 lat; u32 b; u64 a" synthetic_events
	expect_write "hist:keys=lat,b,a" events/synthetic/${p}_fv/trigger
done
both 'keys=a:r_ts=common_timestamp if c > 0' $EV/trigger
both 'keys=a:r_l=common_timestamp-$r_ts:onmatch(rhist_test.rhist_sample).r_fv($r_l,rhist_test.rhist_sample.b,rhist_test.rhist_other.a)' $OTHER/trigger
grep '^hist:' $EV/trigger | sed "$c2r; s/^hist:/rhist:/" | sort > /tmp/c
grep '^rhist:' $EV/trigger | sort > /tmp/r
cmp -s /tmp/c /tmp/r || { diff /tmp/c /tmp/r; fail "the trigger lines with the hidden histogram differ"; }
grep -q '^rhist:keys=a:vals=hitcount:synthetic_b=b:' $EV/trigger || { cat $EV/trigger; fail "no hidden histogram"; }
fire count=300 seed=10 keys=20
fire count=300 seed=11 keys=20 event=other
same_synth fv
grep -q 'Hits: [1-9]' events/synthetic/r_fv/hist || fail "no r_fv event"
same_debug $EV
same_debug $OTHER
# The hidden histogram is in use: it cannot go by itself.
expect_reject "Device or resource busy" '!hist:keys=a:synthetic_b=b if c > 0' $EV/trigger
expect_reject "Device or resource busy" '!rhist:keys=a:synthetic_b=b if c > 0' $EV/trigger
both '!keys=a:r_l=common_timestamp-$r_ts:onmatch(rhist_test.rhist_sample).r_fv($r_l,rhist_test.rhist_sample.b,rhist_test.rhist_other.a)' $OTHER/trigger
expect_no_grep 'synthetic_b' $EV/trigger
expect_no_grep 'synthetic_b' $EV/rhist
# The same without a compatible histogram: C's errors.
: > $EV/trigger
both 'keys=s:ts=common_timestamp' $EV/trigger
EV=$OTHER
compare_hist_rhist 'keys=a:l=common_timestamp-$ts:onmatch(rhist_test.rhist_sample).r_fv($l,rhist_test.rhist_sample.b,rhist_test.rhist_other.a)'
EV=events/rhist_test/rhist_sample
: > $EV/trigger

# 6. C's errors.
Q=rhist_test.rhist_sample
for t in \
	"keys=a:v=b:onmax(v).save($Q.s)" \
	"keys=a:v=b:onmax(\$nope).save($Q.s)" \
	'keys=a:v=b:onchange($v).save(nope)' \
	"keys=a:v=b:onmax(\$v).save($Q.s,nope)" \
	"keys=a:v=b:onmax(\$v).save(s)" \
	"keys=a:__max=b:onmax(\$__max).save($Q.s)" \
	"keys=a:v=b:onmax(\$v).save($Q.s):onchange(\$v).save($Q.c)" \
	"keys=a:v=b:onmax(\$v).nope($Q.s)" \
	'keys=a:v=b:onmax($v).trace(nope,$v)' \
	'keys=a:v=b:onmax($v).r_max($v)' \
	"keys=a:v=b:onmax(\$v).r_max(\$v,$Q.s,$Q.b)" \
	'keys=a:v=b:onmax($v' \
	"keys=a:v=b:onmax(\$v).save($Q.s" \
	"keys=a:v=b:onmatch($Q).save($Q.s)" \
	"keys=a:v=b,w=c,x=a,y=b,z=c,v1=a,v2=b,v3=c,v4=a,v5=b,v6=c,v7=a,v8=b,v9=c:onmax(\$v).save($Q.s,$Q.c,$Q.d)"
do
	compare_hist_rhist "$t"
done

# 7. An unqualified parameter that is a field of the matching event only:
# hist logs its errors as a field of this event, then takes it from the
# matching event; the entries stay in the log, whether the command then
# succeeds or fails (at the hidden trigger, or later).
expect_write 'fvx u64 lat; unsigned long ip' synthetic_events
expect_write 'fvy u64 lat; unsigned long ip; u32 b' synthetic_events
expect_write 'hist:keys=a' $EV/trigger
expect_write 'rhist:keys=a' $EV/trigger
t="keys=a:v0=a:onmatch($Q).fvx(\$v0,ip)"
echo > error_log
expect_write "hist:$t" $OTHER/trigger
hlog=$(hist_log_of)
echo > error_log
expect_write "rhist:$t" $OTHER/trigger
rlog=$(hist_log_of)
[ -n "$hlog" ] || fail "hist logged nothing for $t"
# rhist's carets are one column right ("rhist:").
plus1=$(echo "$hlog" | tr ';' '\n' | awk -F'|' 'NF == 2 { printf "%s|%d;", $1, $2 + 1 }')
[ "$plus1" = "$rlog" ] || fail "$t: hist logged [$hlog], rhist [$rlog]"
grep -q '^rhist:keys=a:vals=hitcount:synthetic_ip=ip:' $EV/trigger || fail "no hidden histogram for ip"
expect_write "!hist:$t" $OTHER/trigger
expect_write "!rhist:$t" $OTHER/trigger
EV=$OTHER
for t in "keys=a:v0=a:onmatch($Q).fvx(\$v0,nosuch)" \
	"keys=a:v0=a:onmatch($Q).fvy(\$v0,ip)" \
	"keys=a:v0=a:onmatch($Q).fvy(\$v0,ip,\$nosuch)"; do
	compare_hist_rhist "$t"
done
EV=events/rhist_test/rhist_sample
: > $EV/trigger
expect_write '!fvx u64 lat; unsigned long ip' synthetic_events
expect_write '!fvy u64 lat; unsigned long ip; u32 b' synthetic_events

for p in c r; do
	: > events/synthetic/${p}_max/trigger
	: > events/synthetic/${p}_fv/trigger
done
: > synthetic_events || { cat synthetic_events; fail "synthetic events still in use"; }
echo PASS
