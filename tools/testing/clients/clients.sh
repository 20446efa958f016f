#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Real clients of hist, run the same way on the test kernel (C's hist) and
# on the drop-in kernel (rhist as hist): trace-cmd 3.1.6 and hist_client
# (libtracefs). Prints one section per step, "=== NAME" then what the
# step printed with counts, pids and times replaced by N, then a line
# "clients: NAME ok" or "clients: NAME FAILED (why)". The host compares
# the sections of the two kernels (tools/testing/check.sh).
#
# Enabling sched_switch patches a call site in __schedule(), which QEMU's
# multi-threaded TCG does not always survive (see run.sh):
# run.sh: single-threaded TCG

ev=events/sched/sched_switch
failed=0

# norm: numbers to N, runs of blanks to one, so that what differs only in
# counts, pids, addresses or times compares equal; sort -u for tables
# whose rows depend on the run. The two kernels are two boots: their
# scheduler events, pids and times differ, and only the shape of what a
# client prints can be compared. What a client reads of the same events
# is compared whole (hist-file-exact).
norm() { sed -E 's/0x[0-9a-f]+/N/g; s/[0-9]+/N/g; s/[[:blank:]]+/ /g'; }
# norm_log: error_log text as it is, but for its time stamps, so that the
# caret's column is compared too.
norm_log() { sed -E 's/^\[ *[0-9]+\.[0-9]+\] /[T] /'; }
table() { norm | sort -u; }

# section NAME: starts a section.
section() { echo "=== $1"; }
ok() { echo "clients: $1 ok"; }
bad() { echo "clients: $1 FAILED ($2)"; failed=1; }

# Some sched_switch and sched_waking events, from a few sleeping children.
work() {
	for i in 1 2 3 4; do sleep 0.05 & done
	wait
}

section trace-cmd-start
if trace-cmd start -e sched:sched_switch \
	-R 'hist:keys=next_pid,prev_prio:vals=prev_pid:sort=hitcount.descending:size=256' 2>&1 | norm; then
	grep -q '^hist:keys=next_pid,prev_prio:vals=hitcount,prev_pid:sort=hitcount.descending:size=256 \[active\]$' $ev/trigger &&
		ok trace-cmd-start || bad trace-cmd-start "trigger file: $(cat $ev/trigger)"
else
	bad trace-cmd-start "trace-cmd start failed"
fi
work

section trace-cmd-stat
trace-cmd stat 2>&1 | norm
grep -q 'hist:keys=next_pid' $ev/trigger && ok trace-cmd-stat || bad trace-cmd-stat "no trigger"

section trace-cmd-list
trace-cmd list -e sched_switch -R 2>&1 | norm
ok trace-cmd-list

section hist-file
table < $ev/hist
grep -q '^# trigger info: hist:keys=next_pid,prev_prio:vals=hitcount,prev_pid:sort=hitcount.descending:size=256 \[active\]$' $ev/hist &&
	grep -q '^{ next_pid: ' $ev/hist && ok hist-file || bad hist-file "$(head -5 $ev/hist)"

# The histogram trace-cmd attached, on the test events module's
# deterministic events: the same in both kernels, every number, in
# order (sort=a: no two entries tie).
section hist-file-exact
ev_t=events/rhist_test/rhist_sample
if trace-cmd start -e rhist_test:rhist_sample \
	-R 'hist:keys=a,s:vals=b,c.hex:sort=a,s.descending' > /tmp/out 2>&1; then
	echo 'count=3000 seed=11 keys=60' > /sys/kernel/debug/rhist_test/fire
	cat $ev_t/hist
	grep -q '^    Hits: 3000$' $ev_t/hist && ok hist-file-exact ||
		bad hist-file-exact "not 3000 hits: $(grep Hits: $ev_t/hist)"
else
	cat /tmp/out
	bad hist-file-exact "trace-cmd start failed"
fi

section trace-cmd-reset
trace-cmd reset 2>&1 | norm
# The list of commands differs: the test kernel has rhist's besides.
grep -v '^# traceon ' $ev/trigger
if grep -q '^hist' $ev/trigger; then
	bad trace-cmd-reset "trigger left"
elif ! grep '^# traceon ' $ev/trigger | grep -q ' enable_hist disable_hist hist\( \|$\)'; then
	bad trace-cmd-reset "enable_hist disable_hist hist is not listed"
else
	ok trace-cmd-reset
fi

section trace-cmd-rejected
# trace-cmd 3.1.6 prints the error_log entry and goes on (status 0).
echo > error_log
trace-cmd start -e sched:sched_switch -R 'hist:keys=next_pid:vals=bogus' > /tmp/out 2>&1
norm_log < /tmp/out
if grep -q 'bogus' $ev/trigger; then
	bad trace-cmd-rejected "the bad trigger was attached"
elif grep -q "hist:sched:sched_switch: error: Couldn't find field" /tmp/out &&
     grep -q '  Command: hist:keys=next_pid:vals=bogus' /tmp/out &&
     awk '/^  Command: / { at = index($0, "bogus"); next }
	  at && !seen { seen = 1; ok = index($0, "^") == at && $0 ~ /^ *\^$/ }
	  END { exit !ok }' /tmp/out; then
	ok trace-cmd-rejected
else
	bad trace-cmd-rejected "no error_log text, or the caret not under bogus, in trace-cmd's output"
fi
trace-cmd reset > /dev/null 2>&1

# client_step NAME FILTER MODE: "hist_client MODE", its output through
# FILTER (norm, or table for the histogram's rows).
client_step() {
	section "$1"
	if hist_client "$3" > /tmp/out 2>&1; then
		"$2" < /tmp/out
		ok "$1"
	else
		cat /tmp/out
		bad "$1" "hist_client $3 failed"
	fi
}
client_step hist-client-hist table hist
client_step hist-client-synth norm synth

# The synthetic events the client's pipeline emits, in trace-cmd show.
section synth-events-shown
echo > trace
if hist_client synth keep > /tmp/out 2>&1; then
	work
	trace-cmd show > /tmp/show 2>&1
	grep -o 'wakeup_lat: .*' /tmp/show | table
	grep -q 'wakeup_lat: pid=[0-9]* lat=[0-9]*' /tmp/show &&
		ok synth-events-shown || bad synth-events-shown "no wakeup_lat event in trace-cmd show"
	hist_client synth-destroy > /tmp/out 2>&1 || { cat /tmp/out; bad synth-events-shown "synth-destroy failed"; }
else
	cat /tmp/out
	bad synth-events-shown "hist_client synth keep failed"
fi
trace-cmd reset > /dev/null 2>&1

echo "clients: done"
exit $failed
