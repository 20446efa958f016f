#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Sequences of writes where features meet (instances, named histograms,
# snapshots, hidden histograms, synthetic events) that once crashed or
# hung the kernel with rhist, or left it in another state than hist does.
# Each is written once with hist and once with rhist, and both must give
# the same errors and histograms; the runner fails the test on any oops,
# lockdep report or hang.
. /test/lib.sh.inc

OTHER=events/rhist_test/rhist_other
BUSY='Device or resource busy'

# same FILE_C FILE_R: hist's file and rhist's agree once the hist
# pipeline's names (c_) are the rhist one's (r_).
same() {
	sed 's/c_/r_/g; s/^# trigger info: hist:/# trigger info: rhist:/' "$1" > /tmp/c
	cmp -s /tmp/c "$2" || { diff /tmp/c "$2" | head -20; fail "$2 differs from $1"; }
}

file_of() { [ "$1" = hist ] && echo hist || echo rhist; }

# 1. A synthetic event whose trigger emits it again, and two that emit
# each other: hist stops at four nested triggers per CPU (its hist_pad);
# rhist overflowed the stack. A plain trigger on the event, first on its
# list, stops where the emitting one stops.
for p in c r; do
	expect_write "${p}_rec u64 v" synthetic_events
	expect_write "${p}_ping u64 v" synthetic_events
	expect_write "${p}_pong u64 v" synthetic_events
done
for cmd in hist rhist; do
	p=$([ $cmd = hist ] && echo c || echo r)
	expect_write "$cmd:keys=v:vals=hitcount:sort=v" events/synthetic/${p}_rec/trigger
	expect_write "$cmd:keys=v:onmatch(synthetic.${p}_rec).trace(${p}_rec,synthetic.${p}_rec.v)" events/synthetic/${p}_rec/trigger
	expect_write "$cmd:keys=v:onmatch(synthetic.${p}_ping).trace(${p}_pong,synthetic.${p}_ping.v)" events/synthetic/${p}_ping/trigger
	expect_write "$cmd:keys=v:onmatch(synthetic.${p}_pong).trace(${p}_ping,synthetic.${p}_pong.v)" events/synthetic/${p}_pong/trigger
	expect_write "$cmd:keys=a:onmatch(rhist_test.rhist_sample).trace(${p}_rec,rhist_test.rhist_sample.a)" $EV/trigger
	expect_write "$cmd:keys=a,b:onmatch(rhist_test.rhist_sample).trace(${p}_ping,rhist_test.rhist_sample.a)" $EV/trigger
done
fire count=1 seed=1 keys=1
grep -q '^    Hits: 3$' events/synthetic/c_rec/hist || { cat events/synthetic/c_rec/hist; fail "hist: not 3 hits on c_rec"; }
grep -q '^    Hits: 3$' events/synthetic/r_rec/rhist || { cat events/synthetic/r_rec/rhist; fail "rhist: not 3 hits on r_rec"; }
fire count=20 seed=2 keys=5
fire count=20 seed=3 keys=5 cpu=all
for e in rec ping pong; do
	same events/synthetic/c_$e/hist events/synthetic/r_$e/rhist
done
echo "ok: synthetic events that emit themselves"

# 2. A named histogram made in an instance, with a snapshot() action, and
# joined at the top: the instance cannot be removed while it lives.
T='name=n:keys=a:m=b:onmax($m).snapshot()'
for cmd in hist rhist; do
	mkdir instances/X || fail "mkdir X"
	expect_write "$cmd:$T" instances/X/$EV/trigger
	expect_write "$cmd:$T" $EV/trigger
	out=$(rmdir instances/X 2>&1) && fail "$cmd: rmdir of an instance with a named histogram succeeded"
	case "$out" in *"$BUSY"*) ;; *) fail "$cmd: rmdir: '$out'" ;; esac
	fire count=10 seed=1 keys=3
	# Both triggers feed it: each event counts twice.
	expect_grep '^    Hits: 20$' instances/X/$EV/$(file_of $cmd)
	cp instances/X/$EV/$(file_of $cmd) /tmp/named_$cmd
	expect_write "!$cmd:$T" $EV/trigger
	expect_write "!$cmd:$T" instances/X/$EV/trigger
	rmdir instances/X || fail "$cmd: rmdir X once its triggers are gone"
done
same /tmp/named_hist /tmp/named_rhist
echo "ok: a named histogram keeps its instance"

# 3. Triggers that reference each other's variables across two events of
# an instance, through hidden histograms: rmdir is refused, not a
# deadlock on trace_types_lock.
expect_write 'rv_ts u64 ts' synthetic_events
for cmd in hist rhist; do
	mkdir instances/D || fail "mkdir D"
	S=instances/D/$EV O=instances/D/$OTHER
	expect_write "$cmd:keys=a" $S/trigger
	expect_write "$cmd:keys=a" $O/trigger
	expect_write "$cmd:keys=a:onmatch(rhist_test.rhist_other).trace(rv_ts,rhist_test.rhist_other.common_timestamp)" $S/trigger
	expect_write "$cmd:keys=a:onmatch(rhist_test.rhist_sample).trace(rv_ts,rhist_test.rhist_sample.common_timestamp)" $O/trigger
	out=$(rmdir instances/D 2>&1) && fail "$cmd: rmdir of an instance with hidden histograms succeeded"
	case "$out" in *"$BUSY"*) ;; *) fail "$cmd: rmdir: '$out'" ;; esac
	fire count=10 seed=4 keys=3
	fire count=10 seed=5 keys=3 event=other
	expect_write "!$cmd:keys=a:onmatch(rhist_test.rhist_other).trace(rv_ts,rhist_test.rhist_other.common_timestamp)" $S/trigger
	expect_write "!$cmd:keys=a:onmatch(rhist_test.rhist_sample).trace(rv_ts,rhist_test.rhist_sample.common_timestamp)" $O/trigger
	# The plain triggers hold no variables: the instance goes with them.
	rmdir instances/D || fail "$cmd: rmdir D once the triggers with variables are gone"
done
echo "ok: hidden histograms keep their instance"

# 4. Truncating synthetic_events while a trigger holds one of them: EBUSY
# before anything is deleted.
for cmd in hist rhist; do
	expect_write "${cmd}_keep u64 x" synthetic_events
	expect_write "${cmd}_busy u64 x" synthetic_events
	expect_write "$cmd:keys=x" events/synthetic/${cmd}_busy/trigger
	out=$( (: > synthetic_events) 2>&1) && fail "$cmd: truncating synthetic_events succeeded"
	case "$out" in *"$BUSY"*) ;; *) fail "$cmd: truncating synthetic_events: '$out'" ;; esac
	expect_grep "^${cmd}_keep.u64 x$" synthetic_events
	expect_write "!$cmd:keys=x" events/synthetic/${cmd}_busy/trigger
done
echo "ok: synthetic events held by a trigger stay, and so do the others"

# 5. One conditional snapshot per instance: a second snapshot() action,
# or a trigger joining a named histogram with one, gets EBUSY.
for cmd in hist rhist; do
	expect_reject "$BUSY" "$cmd:keys=a:v=b:onmax(\$v).snapshot():onchange(\$v).snapshot()" $EV/trigger
	expect_write "$cmd:name=sn:keys=a:v=b:onmax(\$v).snapshot()" $EV/trigger
	expect_reject "$BUSY" "$cmd:name=sn:keys=a:v=b:onmax(\$v).snapshot()" $OTHER/trigger
	expect_write "!$cmd:name=sn:keys=a:v=b:onmax(\$v).snapshot()" $EV/trigger
done
echo "ok: one snapshot condition per instance"

# 6. rhist only (hist deadlocks here: its last reference on the creator's
# instance is dropped under trace_types_lock): a named histogram made in
# A and joined in B, its creator removed, then B removed; then A.
mkdir instances/A instances/B || fail "mkdir A B"
expect_write 'rhist:name=xn:keys=a:v=b' instances/A/$EV/trigger
expect_write 'rhist:name=xn:keys=a:v=b' instances/B/$EV/trigger
out=$(rmdir instances/A 2>&1) && fail "rmdir A with a named histogram with variables succeeded"
expect_write '!rhist:name=xn:keys=a:v=b' instances/A/$EV/trigger
fire count=5 seed=6 keys=2
expect_grep '^    Hits: 5$' instances/B/$EV/rhist
rmdir instances/B || fail "rmdir B, whose trigger joined A's histogram"
# The histogram, and its reference on A, go soon after, without the lock.
i=0
until rmdir instances/A 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 50 ] || fail "rmdir A: still busy"
	sleep 0.1
done
echo "ok: a named histogram joined from another instance"
echo PASS
