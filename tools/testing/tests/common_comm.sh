#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# common_comm (rhist's extension, as in Linux 6.16): the current task's
# command name as a string key or variable on any event; the generic comm
# or COMM of an event without its own field means the same. hist 6.12
# rejects all three. rhist_sample is fired by three tasks of known names:
# this shell, dd and tee. Each name's hitcount must be what hist's
# keys=common_pid.execname counts for that name; a common_comm variable
# carries the name of the task that fired rhist_other to a synthetic
# event that rhist_sample's trigger emits.
. /test/lib.sh.inc

T=$EV/trigger
OTHER=events/rhist_test/rhist_other

# fire_as NAME ARGS: fires rhist_sample (or, with event=other, rhist_other)
# from a task named NAME: sh (this shell), dd or tee.
fire_as() {
	name=$1
	shift
	case $name in
	sh) fire "$@" ;;
	dd) echo "$*" | dd of=$FIRE conv=notrunc 2> /dev/null || fail "dd $*" ;;
	tee) echo "$*" | tee -a $FIRE > /dev/null || fail "tee $*" ;;
	esac
}

# 1. hist 6.12 has none of them: "Couldn't find field", EINVAL.
for t in keys=common_comm keys=comm keys=COMM keys=a:x=comm keys=a:x=COMM; do
	echo > error_log
	expect_reject "Invalid argument" "hist:$t" $T
	expect_grep "Couldn't find field" error_log
done
echo "ok hist rejects common_comm, comm and COMM, as keys and variables"

# 2. Keys: the names and counts of hist's execname projection.
me=$(cat /proc/$$/comm)
[ -n "$me" ] && [ "$me" != dd ] && [ "$me" != tee ] || fail "this shell is named '$me'"
expect_write 'hist:keys=common_pid.execname' $T
expect_write 'rhist:keys=common_comm' $T
expect_write 'rhist:keys=comm,a:vals=b:sort=comm' $T
expect_write 'rhist:keys=COMM.hex' $T
expect_grep '^rhist:keys=common_comm:vals=hitcount:sort=hitcount:size=2048 \[active\]$' $T
expect_grep '^rhist:keys=common_comm,a:vals=hitcount,b:sort=common_comm:size=2048 \[active\]$' $T
fire_as sh count=5 keys=1
fire_as dd count=7 keys=1
fire_as tee count=3 keys=1
fire_as dd count=2 keys=1
cat $EV/hist > /tmp/hist
cat $EV/rhist > /tmp/rhist
# hist: { common_pid: NAME [PID] } hitcount: N, summed over the pids.
awk '/^\{ common_pid:/ { n[$3] += $NF } END { for (k in n) print k, n[k] }' /tmp/hist | sort > /tmp/want
printf 'dd 9\n%s 5\ntee 3\n' "$me" | sort > /tmp/expect
cmp -s /tmp/expect /tmp/want || { cat /tmp/hist; fail "hist's execname counts"; }
# rhist: { common_comm: NAME<padded to 50> } hitcount: N.
awk '/^\{ common_comm:/ { print $3, $NF }' /tmp/rhist | sort > /tmp/got
cmp -s /tmp/want /tmp/got || { diff /tmp/want /tmp/got; cat /tmp/rhist; fail "common_comm counts"; }
grep -q "^{ common_comm: dd                                                 } hitcount:          9$" /tmp/rhist ||
	{ cat /tmp/rhist; fail "the key's column"; }
# The generic comm: named comm, with the same counts, sorted by name.
awk '/^\{ comm:/ { print $3, $(NF - 2) }' /tmp/rhist | sort > /tmp/got
cmp -s /tmp/want /tmp/got || { diff /tmp/want /tmp/got; cat /tmp/rhist; fail "comm counts"; }
awk '/^\{ comm:/ { print $3 }' /tmp/rhist > /tmp/order
sort /tmp/order | cmp -s - /tmp/order || { cat /tmp/rhist; fail "not sorted by comm"; }
# .hex shows the name's first 8 bytes as a number: "dd" is 0x6464.
expect_grep '^{ COMM: 6464 } hitcount:          9$' /tmp/rhist
for t in 'hist:keys=common_pid.execname' 'rhist:keys=common_comm' \
	'rhist:keys=comm,a:vals=b:sort=comm' 'rhist:keys=COMM.hex'; do
	expect_write "!$t" $T
done
echo "ok keys: $(tr '\n' ' ' < /tmp/want)"

# 3. A variable: rhist_other saves its task's name for key a; rhist_sample
# sends it with its own task's name to a synthetic event (6.16's
# wake_lat example): common_comm is a char[16], which fills a char[16]
# field as well as a dynamic one.
TRACE='keys=a:w=$waker:onmatch(rhist_test.rhist_other).trace(cc_names,$w,common_comm)'
expect_write 'cc_names char waker[16]; char[] wakee' synthetic_events
expect_write 'rhist:keys=a:waker=common_comm' $OTHER/trigger
echo > error_log
echo "rhist:$TRACE" >> $T || { cat error_log; fail "writing rhist:$TRACE"; }
echo 1 > events/synthetic/cc_names/enable
echo > trace
fire_as dd count=1 keys=1 event=other
fire_as tee count=1 keys=1
fire_as tee count=1 keys=1 event=other
fire_as sh count=1 keys=1
echo 0 > events/synthetic/cc_names/enable
grep 'cc_names:' trace > /tmp/trace
[ "$(grep -c . /tmp/trace)" = 2 ] || { cat /tmp/trace; fail "two cc_names events"; }
expect_grep 'cc_names: waker=dd wakee=tee$' /tmp/trace
expect_grep "cc_names: waker=tee wakee=$me\$" /tmp/trace
expect_write "!rhist:$TRACE" $T
expect_write '!rhist:keys=a:waker=common_comm' $OTHER/trigger
expect_write '!cc_names' synthetic_events
echo "ok variables: $(tr '\n' '|' < /tmp/trace)"

# 4. Not a number: no .log2, no value, no operand. A text that fails
# with common_comm gets hist's error: the field is not found.
for t in 'keys=common_comm.log2' 'keys=a:vals=common_comm' 'keys=a:x=comm+1'; do
	echo > error_log
	expect_reject "Invalid argument" "rhist:$t" $T
	expect_grep "Couldn't find field" error_log
done
# 5. The compiled path (issue 51): common_comm alone is a program of its
# own shape, beside a number a compact key; a variable sends the same
# keys down the general path. Fired by this shell, dd and tee, and on
# every CPU by the test module's kthreads (rhist_test/N), each compiled
# histogram must hold the entries and totals of its general twin, and
# the names' hitcounts and sums must be hist's execname ones.
TEXTS='keys=common_comm:vals=b keys=common_comm:vals=b:x=c keys=common_comm,a:vals=b keys=common_comm,a:vals=b:y=c'
expect_write 'hist:keys=common_pid.execname:vals=b' $T
for t in $TEXTS; do expect_write "rhist:$t" $T; done
fire_as sh count=300 keys=5 seed=1
fire_as dd count=200 keys=7 seed=2
fire_as tee count=100 keys=3 seed=3
fire count=500 keys=9 seed=4 cpu=all
fire_as dd count=50 keys=2 seed=5 cpu=all
cat $EV/hist > /tmp/hist
cat $EV/rhist > /tmp/rhist
# body N: the entries (sorted: ties in hitcount print in any order) and
# totals of the N-th histogram of the rhist file.
body() {
	awk -v n=$1 '/^# event histogram/ { i++ } i == n && /^\{/' /tmp/rhist | sort
	awk -v n=$1 '/^# event histogram/ { i++ } i == n && /^    [A-Z][a-z]*:/' /tmp/rhist
}
for n in 1 3; do
	body $n > /tmp/compiled
	body $((n + 1)) > /tmp/general
	grep -q '^{' /tmp/compiled || { cat /tmp/rhist; fail "histogram $n is empty"; }
	cmp -s /tmp/compiled /tmp/general ||
		{ diff /tmp/compiled /tmp/general | head; fail "histogram $n: compiled and general differ"; }
done
# hist: { common_pid: NAME [PID] } hitcount: N b: S, summed over the pids.
awk '/^\{ common_pid:/ { n[$3] += $(NF - 2); s[$3] += $NF }
	END { for (k in n) print k, n[k], s[k] }' /tmp/hist | sort > /tmp/want
awk -v n=1 '/^# event histogram/ { i++ } i == n && /^\{/ { print $3, $(NF - 2), $NF }' /tmp/rhist |
	sort > /tmp/got
cmp -s /tmp/want /tmp/got || { diff /tmp/want /tmp/got; cat /tmp/hist; fail "common_comm counts and sums against hist's execname"; }
grep -q '^rhist_test/' /tmp/got || fail "no event from the kthreads"
expect_write '!hist:keys=common_pid.execname:vals=b' $T
for t in $TEXTS; do expect_write "!rhist:$t" $T; done
echo "ok compiled: $(grep -c . /tmp/got) names, as the general path and hist's execname"

leftover=$(grep -v '^#' $T)
[ -z "$leftover" ] || fail "left attached: $leftover"
echo PASS
