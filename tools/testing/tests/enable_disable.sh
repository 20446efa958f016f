#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# enable_rhist and disable_rhist against enable_hist and disable_hist: the
# same pauses and continues of the histograms they act on (counts and
# filters included), the same trigger lines, soft mode and errors, on the
# test events and on scheduler events; rmmod removes them.
. /test/lib.sh.inc

OTHER=events/rhist_test/rhist_other
WAKING=events/sched/sched_waking
SWITCH=events/sched/sched_switch

# both TEXT FILE: C's TEXT, then rhist's (enable_hist -> enable_rhist).
both() {
	expect_write "$1" "$2"
	expect_write "$(echo "$1" | sed 's/able_hist/able_rhist/')" "$2"
}
# same_lines FILE: its enable_hist/disable_hist lines are its
# enable_rhist/disable_rhist lines, renamed.
same_lines() {
	grep -E '^(en|dis)able_hist:' $1 | sed 's/_hist:/_rhist:/' | sort > /tmp/c
	grep -E '^(en|dis)able_rhist:' $1 | sort > /tmp/r
	[ -s /tmp/c ] || [ "$2" = none ] || fail "$1: no enable or disable lines"
	cmp -s /tmp/c /tmp/r || { cat $1; fail "$1: the enable lines differ"; }
}
# state FILE: "paused" or "active" for the hist and for the rhist trigger.
state() {
	h=$(grep '^hist:' $1 | sed 's/.*\[\(.*\)\]$/\1/')
	r=$(grep '^rhist:' $1 | sed 's/.*\[\(.*\)\]$/\1/')
	[ "$h" = "$r" ] || { cat $1; fail "$1: hist is $h, rhist is $r"; }
	echo $h
}
# same_hist DIR: hist and rhist counted the same.
same_hist() {
	sed 's/^# trigger info: hist:/# trigger info: rhist:/' $1/hist > /tmp/c
	cmp -s /tmp/c $1/rhist || { diff /tmp/c $1/rhist | head; fail "$1: hist and rhist differ"; }
}
hits() { sed -n 's/^    Hits: //p' $1; }

# 1. disable, then enable with a count, on the test events.
expect_write 'hist:keys=a:vals=b' $EV/trigger
expect_write 'rhist:keys=a:vals=b' $EV/trigger
both 'disable_hist:rhist_test:rhist_sample' $OTHER/trigger
same_lines $OTHER/trigger
expect_grep '^disable_rhist:rhist_test:rhist_sample:unlimited$' $OTHER/trigger
fire count=10 seed=1 keys=4
[ "$(state $EV/trigger)" = active ] || fail "paused before the other event fired"
fire count=1 seed=1 keys=4 event=other
[ "$(state $EV/trigger)" = paused ] || fail "not paused by disable_*"
fire count=10 seed=2 keys=4
same_hist $EV
[ "$(hits $EV/rhist)" = 10 ] || fail "counted while paused: $(hits $EV/rhist)"

# One of either command per target: the other is EEXIST, and removing
# either name removes the one there.
expect_reject 'File exists' 'enable_hist:rhist_test:rhist_sample' $OTHER/trigger
expect_reject 'File exists' 'enable_rhist:rhist_test:rhist_sample' $OTHER/trigger
both '!enable_hist:rhist_test:rhist_sample' $OTHER/trigger
same_lines $OTHER/trigger none
expect_no_grep '^[a-z]*able_r\?hist' $OTHER/trigger

both 'enable_hist:rhist_test:rhist_sample:2' $OTHER/trigger
same_lines $OTHER/trigger
expect_grep '^enable_rhist:rhist_test:rhist_sample:count=2$' $OTHER/trigger
fire count=1 seed=1 keys=4 event=other
[ "$(state $EV/trigger)" = active ] || fail "not continued by enable_*"
same_lines $OTHER/trigger
expect_grep ':count=1$' $OTHER/trigger
fire count=5 seed=3 keys=4
same_hist $EV
[ "$(hits $EV/rhist)" = 15 ] || fail "not counting after enable_*: $(hits $EV/rhist)"
# Paused by hand, continued by enable_* until the count runs out.
expect_write 'hist:keys=a:vals=b:pause' $EV/trigger
expect_write 'rhist:keys=a:vals=b:pause' $EV/trigger
fire count=3 seed=1 keys=4 event=other
[ "$(state $EV/trigger)" = active ] || fail "not continued by the counted enable_*"
same_lines $OTHER/trigger
expect_grep ':count=0$' $OTHER/trigger
expect_write 'hist:keys=a:vals=b:pause' $EV/trigger
expect_write 'rhist:keys=a:vals=b:pause' $EV/trigger
fire count=3 seed=1 keys=4 event=other
[ "$(state $EV/trigger)" = paused ] || fail "continued after the count ran out"
both '!enable_hist:rhist_test:rhist_sample' $OTHER/trigger

# 2. Filters: rhist_other's events with b > 2^31 pause rhist_sample's
# histograms, rhist_sample's with b <= 2^31 continue rhist_other's.
both 'disable_hist:rhist_test:rhist_sample if b > 2147483648' $OTHER/trigger
both 'enable_hist:rhist_test:rhist_other if b <= 2147483648' $EV/trigger
expect_write 'hist:keys=a:vals=b:cont' $EV/trigger
expect_write 'rhist:keys=a:vals=b:cont' $EV/trigger
same_lines $OTHER/trigger
same_lines $EV/trigger
expect_grep '^disable_rhist:rhist_test:rhist_sample:unlimited if b > 2147483648$' $OTHER/trigger
# rhist_other's own histograms, continued by rhist_sample's events.
expect_write 'hist:keys=b:pause' $OTHER/trigger
expect_write 'rhist:keys=b:pause' $OTHER/trigger
for seed in 11 12 13 14 15 16 17 18; do
	fire count=3 seed=$seed keys=8 event=other
	fire count=3 seed=$seed keys=8
	state $EV/trigger > /dev/null
	state $OTHER/trigger > /dev/null
done
same_hist $EV
same_hist $OTHER
[ "$(hits $OTHER/rhist)" -gt 0 ] || fail "rhist_other was never continued"
: > $OTHER/trigger
: > $EV/trigger
expect_no_grep '^[a-z]*able_r\?hist' $EV/trigger

# 3. Soft mode: the event acted on is soft enabled while a trigger is.
[ "$(cat $SWITCH/enable)" = 0 ] || fail "sched_switch enabled at the start"
expect_write 'enable_rhist:sched:sched_switch' $OTHER/trigger
[ "$(cat $SWITCH/enable)" = '0*' ] || fail "sched_switch not in soft mode: $(cat $SWITCH/enable)"
expect_write 'enable_hist:sched:sched_switch' $OTHER/trigger
expect_write '!enable_rhist:sched:sched_switch' $OTHER/trigger
[ "$(cat $SWITCH/enable)" = '0*' ] || fail "enable_hist's soft mode lost"
expect_write '!enable_hist:sched:sched_switch' $OTHER/trigger
[ "$(cat $SWITCH/enable)" = 0 ] || fail "sched_switch left in soft mode: $(cat $SWITCH/enable)"

# 4. Errors: the same errno and error_log entries (only a bad filter's)
# as C, and nothing left behind.
for text in 'able_hist' 'able_hist:rhist_test' 'able_hist:rhist_test:nosuch' \
	'able_hist:nosuch:rhist_sample' 'able_hist:rhist_test:rhist_sample:' \
	'able_hist:rhist_test:rhist_sample:x' 'able_hist:rhist_test:rhist_sample:-1' \
	'able_hist:rhist_test:rhist_sample:99999999999999999999' \
	'able_hist:rhist_test:rhist_sample foo' \
	'able_hist:rhist_test:rhist_sample if nosuch == 1'; do
	for p in en dis; do
		ctext=$p$text rtext=$(echo "$p$text" | sed 's/able_hist/able_rhist/')
		echo > error_log
		c=$(echo "$ctext" 2>&1 >> $OTHER/trigger) && fail "$ctext accepted"
		clog=$(sed "s/^\[[^]]*\] //" error_log)
		echo > error_log
		r=$(echo "$rtext" 2>&1 >> $OTHER/trigger) && fail "$rtext accepted"
		rlog=$(sed "s/^\[[^]]*\] //" error_log)
		c=${c#*: } r=${r#*: }
		[ "$c" = "$r" ] || fail "$ctext: hist says '$c', rhist '$r'"
		[ "$clog" = "$rlog" ] || fail "$ctext: error_log differs: [$clog] [$rlog]"
	done
done
[ -z "$(grep -v '^#' $OTHER/trigger)" ] || { cat $OTHER/trigger; fail "a failed write left a trigger"; }

# 5. Scheduler events: sched_switch pauses sched_waking's histograms, once;
# they stay paused, then a second trigger continues them.
expect_write 'hist:keys=pid' $WAKING/trigger
expect_write 'rhist:keys=pid' $WAKING/trigger
both 'disable_hist:sched:sched_waking:1' $SWITCH/trigger
sleep 1
same_lines $SWITCH/trigger
expect_grep '^disable_rhist:sched:sched_waking:count=0$' $SWITCH/trigger
[ "$(state $WAKING/trigger)" = paused ] || fail "sched_waking not paused"
sed -n 's/^Totals:$//; /Hits:/p' $WAKING/hist > /tmp/h1
sed -n '/Hits:/p' $WAKING/rhist > /tmp/r1
sleep 1
sed -n '/Hits:/p' $WAKING/hist > /tmp/h2
sed -n '/Hits:/p' $WAKING/rhist > /tmp/r2
cmp -s /tmp/h1 /tmp/h2 || fail "hist counted while paused"
cmp -s /tmp/r1 /tmp/r2 || fail "rhist counted while paused"
both '!disable_hist:sched:sched_waking' $SWITCH/trigger
both 'enable_hist:sched:sched_waking if prev_pid >= 0' $SWITCH/trigger
sleep 1
[ "$(state $WAKING/trigger)" = active ] || fail "sched_waking not continued"
same_lines $SWITCH/trigger
[ "$(hits $WAKING/rhist)" -gt "$(sed -n 's/^    Hits: //p' /tmp/r1)" ] ||
	fail "rhist did not count after enable_rhist"

# 6. rmmod takes them all away, soft mode with them; C's stay.
expect_write 'disable_rhist:sched:sched_switch' $OTHER/trigger
expect_write 'enable_rhist:rhist_test:rhist_other:5 if b > 3' $EV/trigger
rmmod rhist || fail "rmmod rhist failed"
expect_no_grep '^enable_rhist' $SWITCH/trigger
expect_no_grep '^disable_rhist' $OTHER/trigger
expect_no_grep '^enable_rhist' $EV/trigger
expect_grep '^enable_hist:sched:sched_waking' $SWITCH/trigger
[ "$(cat $SWITCH/enable)" = '0*' ] || fail "sched_switch: $(cat $SWITCH/enable)"
[ "$(cat $OTHER/enable)" = 0 ] || fail "rhist_other left in soft mode: $(cat $OTHER/enable)"
insmod /lib/rhist/rhist.ko || fail "reloading rhist failed"
expect_write 'disable_rhist:sched:sched_switch' $OTHER/trigger
echo PASS
