#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Fault injection: every allocation of rhist's paths failed in turn (see
# fault.sh.inc). Each path prints "fault: PATH injected=K ok=A
# clean_errno=B bad=C partial=P"; the suite fails a path with a bad
# outcome or without any fault injected. The runner's kmemleak scan at
# the end finds what a failure path leaked.
. /test/fault.sh.inc

# works DIR HITS: ten events later, DIR's first histogram has HITS hits.
works() {
	fire count=10 seed=1 keys=4
	h=$(hits $1)
	[ "$h" = "$2" ] || { why="$1: $h hits, expected $2"; return 1; }
}

fire() {
	echo "$*" > $FIRE || fail "fire $* failed"
}

# The trigger write of a body: the file is opened before arming, so the
# faults land in the write, where the tracing core and rhist parse it.
write_armed() { # TEXT FILE
	exec 6>> "$2"
	arm
	echo "$1" >&6
}

# check_create DIR LINE: a trigger write that adds a trigger listed as
# LINE (a pattern) to DIR, which had no trigger.
check_create() {
	if attached $1 "$2"; then
		[ $rc = 0 ] || { why="failed but attached"; return 1; }
		works $1 10 || return 1
		outcome=ok
	else
		clean || { why="not attached"; return 1; }
		unlogged $3 || return 1
		[ -z "$(cat $1/rhist)" ] || { why="$1/rhist not empty"; return 1; }
		[ "$(cat $1/enable)" = 1 ] || { why="$1 left in soft mode: $(cat $1/enable)"; return 1; }
		outcome=clean
	fi
}

# --- create a trigger ------------------------------------------------------
p_create_setup() { :; }
p_create_body() { write_armed 'rhist:keys=a:vals=b' $EV/trigger; }
p_create_check() { check_create $EV 'rhist:keys=a:vals=hitcount,b:'; }
p_create_undo() { echo '!rhist:keys=a:vals=b' >> $EV/trigger; }

# --- create a named trigger --------------------------------------------------
p_named_setup() { :; }
p_named_body() { write_armed 'rhist:keys=common_pid:name=fnamed' $EV/trigger; }
p_named_check() { check_create $EV 'rhist:.*name=fnamed'; }
p_named_undo() { echo '!rhist:keys=common_pid:name=fnamed' >> $EV/trigger; }

# --- join a name: the first trigger of the name is in an instance --------------
SH=instances/fshare
p_share_setup() {
	[ -d $SH ] || { mkdir $SH && echo 1 > $SH/$EV/enable; }
	attached $SH/$EV 'rhist:.*name=fshare' ||
		echo 'rhist:keys=a:name=fshare' >> $SH/$EV/trigger
	shared=$(hits $SH/$EV)
}
p_share_body() { write_armed 'rhist:keys=a:name=fshare' $EV/trigger; }
p_share_check() {
	if attached $EV 'rhist:.*name=fshare'; then
		[ $rc = 0 ] || { why="failed but attached"; return 1; }
		# One histogram for both: each event counts twice.
		works $EV $((shared + 20)) || return 1
		[ "$(hits $SH/$EV)" = $((shared + 20)) ] || { why="not shared"; return 1; }
		outcome=ok
	else
		clean || { why="not attached"; return 1; }
		unlogged || return 1
		[ "$(cat $EV/enable)" = 1 ] || { why="left in soft mode"; return 1; }
		works $SH/$EV $((shared + 10)) || return 1
		outcome=clean
	fi
}
p_share_undo() { echo '!rhist:keys=a:name=fshare' >> $EV/trigger; }

# --- join a name with a filter of one's own --------------------------------
p_share_filter_setup() { p_share_setup; }
p_share_filter_body() { write_armed 'rhist:keys=a:name=fshare if b > 0' $EV/trigger; }
p_share_filter_check() {
	if attached $EV 'rhist:.*name=fshare'; then
		attached $EV 'rhist:.*name=fshare.* if b > 0 \[active\]$' ||
			{ why="filter lost: $(grep fshare $EV/trigger)"; return 1; }
	fi
	p_share_check
}
p_share_filter_undo() { echo '!rhist:keys=a:name=fshare if b > 0' >> $EV/trigger; }

# --- create a trigger that references another's variable ----------------
# Attached, it holds the variable's trigger, which then cannot go (EBUSY).
p_ref_setup() {
	attached $EV 'rhist:.*:fts0=' || echo 'rhist:keys=a:fts0=common_timestamp' >> $EV/trigger
}
p_ref_body() { write_armed 'rhist:keys=a:flat=common_timestamp-$fts0' $EV/trigger; }
p_ref_check() {
	if attached $EV 'rhist:.*:flat='; then
		[ $rc = 0 ] || { why="failed but attached"; return 1; }
		! echo '!rhist:keys=a:fts0=common_timestamp' >> $EV/trigger 2> /dev/null ||
			{ why="the referenced trigger was removed"; return 1; }
		outcome=ok
	else
		clean || { why="not attached"; return 1; }
		unlogged || return 1
		outcome=clean
	fi
	attached $EV 'rhist:.*:fts0=' || { why="the variable's trigger is gone"; return 1; }
}
p_ref_undo() {
	echo '!rhist:keys=a:flat=common_timestamp-$fts0' >> $EV/trigger
	echo '!rhist:keys=a:fts0=common_timestamp' >> $EV/trigger
}

# --- an onmatch() trigger that emits a synthetic event --------------------
p_synth_setup() {
	grep -q '^fsynth ' synthetic_events || echo 'fsynth u64 lat' >> synthetic_events
	attached $EV 'rhist:.*:fts1=' || echo 'rhist:keys=a:fts1=common_timestamp' >> $EV/trigger
}
p_synth_body() {
	write_armed 'rhist:keys=a:flat1=common_timestamp-$fts1:onmatch(rhist_test.rhist_sample).fsynth($flat1)' $EV/trigger
}
p_synth_check() {
	if attached $EV 'rhist:.*:flat1='; then
		[ $rc = 0 ] || { why="failed but attached"; return 1; }
		! echo '!fsynth u64 lat' >> synthetic_events 2> /dev/null ||
			{ why="the synthetic event in use was deleted"; return 1; }
		outcome=ok
	else
		clean || { why="not attached"; return 1; }
		unlogged || return 1
		# Nothing holds the synthetic event any more.
		echo '!fsynth u64 lat' >> synthetic_events 2> /dev/null ||
			{ why="the synthetic event is still held"; return 1; }
		outcome=clean
	fi
}
p_synth_undo() {
	echo '!rhist:keys=a:flat1=common_timestamp-$fts1:onmatch(rhist_test.rhist_sample).fsynth($flat1)' >> $EV/trigger
	echo '!rhist:keys=a:fts1=common_timestamp' >> $EV/trigger
	echo '!fsynth u64 lat' >> synthetic_events 2> /dev/null
	:
}

# --- onmax().save() and onchange().snapshot() -------------------------------
FH='rhist:keys=a:fhv=b:onmax($fhv).save(rhist_test.rhist_sample.s):onchange($fhv).snapshot()'
p_handlers_setup() { :; }
p_handlers_body() { write_armed "$FH" $EV/trigger; }
p_handlers_check() {
	if attached $EV 'rhist:.*:fhv='; then
		[ $rc = 0 ] || { why="failed but attached"; return 1; }
		works $EV 10 || return 1
		grep -q 'max: ' $EV/rhist || { why="no max: in $EV/rhist"; return 1; }
		! echo 'hist:keys=a:fhh=b:onmax($fhh).snapshot()' >> $EV/trigger 2> /dev/null ||
			{ why="the snapshot condition was free"; return 1; }
		outcome=ok
	else
		clean || { why="not attached"; return 1; }
		unlogged || return 1
		# The instance's snapshot condition was given back.
		echo 'hist:keys=a:fhh=b:onmax($fhh).snapshot()' >> $EV/trigger 2> /dev/null ||
			{ why="the snapshot condition is still held"; return 1; }
		outcome=clean
	fi
}
p_handlers_undo() {
	echo "!$FH" >> $EV/trigger
	echo '!hist:keys=a:fhh=b:onmax($fhh).snapshot()' >> $EV/trigger 2> /dev/null
	:
}

# --- a field of the matching event: a hidden histogram there --------------
FO=events/rhist_test/rhist_other
FV='rhist:keys=a:fl2=common_timestamp-$fts2:onmatch(rhist_test.rhist_sample).fsynth2($fl2,rhist_test.rhist_sample.b)'
p_hidden_setup() {
	grep -q '^fsynth2 ' synthetic_events || echo 'fsynth2 u64 lat; u32 b' >> synthetic_events
	attached $EV 'rhist:.*:fts2=' || echo 'rhist:keys=a:fts2=common_timestamp' >> $EV/trigger
}
p_hidden_body() { write_armed "$FV" $FO/trigger; }
p_hidden_check() {
	if attached $FO 'rhist:.*:fl2='; then
		[ $rc = 0 ] || { why="failed but attached"; return 1; }
		attached $EV 'rhist:keys=a:vals=hitcount:synthetic_b=b' ||
			{ why="no hidden histogram"; return 1; }
		outcome=ok
	else
		clean || { why="not attached"; return 1; }
		# hist logs HIST_CREATE_FAIL when the hidden trigger fails.
		! attached $EV 'rhist:keys=a:vals=hitcount:synthetic_b=b' ||
			{ why="the hidden histogram was left"; return 1; }
		# A failed registration of its probe leaves no soft mode.
		[ "$(cat $FO/enable)" = 0 ] || { why="rhist_other left in soft mode"; return 1; }
		outcome=clean
	fi
}
p_hidden_undo() {
	echo "!$FV" >> $FO/trigger
	echo '!rhist:keys=a:fts2=common_timestamp' >> $EV/trigger
	echo '!fsynth2 u64 lat; u32 b' >> synthetic_events 2> /dev/null
	:
}

# --- enable_rhist: holds rhist_other, which has no trigger, in soft mode ----
p_enable_setup() { :; }
p_enable_body() { write_armed 'enable_rhist:rhist_test:rhist_other:3 if b > 0' $EV/trigger; }
p_enable_check() {
	if attached $EV 'enable_rhist:'; then
		[ $rc = 0 ] || { why="failed but attached"; return 1; }
		[ "$(cat $FO/enable)" = '0*' ] || { why="rhist_other not in soft mode"; return 1; }
		fire count=10 seed=1 keys=4
		# Each of the ten events used up one of the three.
		attached $EV 'enable_rhist:rhist_test:rhist_other:count=0 if b > 0' ||
			{ why="count not 0: $(grep able_ $EV/trigger)"; return 1; }
		echo '!enable_rhist:rhist_test:rhist_other' >> $EV/trigger
		[ "$(cat $FO/enable)" = 0 ] || { why="rhist_other left in soft mode after removal"; return 1; }
		outcome=ok
	else
		clean || { why="not attached"; return 1; }
		unlogged || return 1
		[ "$(cat $FO/enable)" = 0 ] || { why="rhist_other left in soft mode"; return 1; }
		outcome=clean
	fi
}
p_enable_undo() { echo '!enable_rhist:rhist_test:rhist_other' >> $EV/trigger; }

# --- remove a filtered trigger -------------------------------------------
p_remove_setup() {
	echo 'rhist:keys=a:vals=b if b > 100' >> $EV/trigger
	fire count=10 seed=1 keys=4
	before=$(hits $EV)
}
p_remove_body() { write_armed '!rhist:keys=a:vals=b if b > 100' $EV/trigger; }
p_remove_check() {
	if attached $EV 'rhist:keys=a:vals=hitcount,b:'; then
		# Still there: it must have failed cleanly and still work.
		clean || { why="not removed"; return 1; }
		unlogged || return 1
		fire count=10 seed=1 keys=4
		[ "$(hits $EV)" -gt "$before" ] || { why="stopped counting"; return 1; }
		outcome=clean
	else
		[ $rc = 0 ] || { why="failed but removed"; return 1; }
		[ -z "$(cat $EV/rhist)" ] || { why="$EV/rhist not empty"; return 1; }
		[ "$(cat $EV/enable)" = 1 ] || { why="left in soft mode"; return 1; }
		outcome=ok
	fi
}
p_remove_undo() { echo '!rhist:keys=a:vals=b if b > 100' >> $EV/trigger; }

# --- clear a trigger's histogram ---------------------------------------------
p_clear_setup() {
	echo 'rhist:keys=a:vals=b' >> $EV/trigger
	fire count=100 seed=1 keys=4
}
p_clear_body() { write_armed 'rhist:keys=a:vals=b:clear' $EV/trigger; }
p_clear_check() {
	attached $EV 'rhist:keys=a:vals=hitcount,b:sort=hitcount:size=2048 \[active\]$' ||
		{ why="not attached and active: $(grep rhist $EV/trigger)"; return 1; }
	case "$rc $(hits $EV)" in
	"0 0") outcome=ok; works $EV 10 ;;
	*" 100") clean || { why="not cleared"; return 1; }; outcome=clean; works $EV 110 ;;
	*) why="$(hits $EV) hits left"; return 1 ;;
	esac
}
p_clear_undo() { echo '!rhist:keys=a:vals=b' >> $EV/trigger; }

# --- the grow of a :grow histogram ----------------------------------------------
# The grow allocates in rhist's kthread worker ("rhist_grow"), not in the
# writer: its fail-nth is armed, and the check (not run_nth) says whether
# the fault was injected. 87 keys of 100 reach the threshold (64) of the
# map of 128: the event path switches to the spare made with the trigger
# (8192 entries), and the work makes the next spare (32768). One that
# fails is counted, and drops nothing; either way the histogram is that
# of a plain map. The events are fired on one CPU: on several, the plain
# map may drop one whose insert gave up waiting for another CPU's (a fold
# takes such a drop back), and the two would differ by it.
FG='rhist:keys=a:sort=a:size=128:grow'
FR='rhist:keys=a:sort=a:size=128'
grow_pid() {
	for d in /proc/[0-9]*; do
		read -r c 2> /dev/null < $d/comm || continue
		[ "$c" != rhist_grow ] || { echo ${d#/proc/}; return; }
	done
}
grow_line() { sed -n 's/^  grow: //p' $EV/rhist_debug; }
p_grow_setup() {
	GP=$(grow_pid)
	[ -n "$GP" ] || fail "no rhist_grow kthread"
	echo "$FG" >> $EV/trigger
	echo "$FR" >> $EV/trigger
}
p_grow_body() {
	echo $n > /proc/$GP/fail-nth
	exec 6> $FIRE
	echo 'count=200 seed=1 keys=100' >&6
}
p_grow_check() {
	[ $rc = 0 ] || { why="fire failed"; return 1; }
	i=0
	until grep -q '^  grow spare: [1-9]' $EV/rhist_debug || grow_line | grep -q 'failed 1'; do
		i=$((i + 1))
		[ $i -lt 500 ] || { why="no grow: $(grow_line)"; return 1; }
		sleep 0.01
	done
	read -r left < /proc/$GP/fail-nth
	echo 0 > /proc/$GP/fail-nth
	injected=0
	[ "$left" != 0 ] || injected=1
	cat $EV/rhist > /tmp/fault.rhist
	awk '/^# event histogram/ { i++ } i == 1 && /^[{T ]/' /tmp/fault.rhist > /tmp/fault.g
	awk '/^# event histogram/ { i++ } i == 2 && /^[{T ]/' /tmp/fault.rhist > /tmp/fault.r
	grep -q 'Dropped: 0$' /tmp/fault.g || { why="dropped: $(grep Dropped /tmp/fault.g)"; return 1; }
	grep -q 'Hits: 200$' /tmp/fault.g || { why="hits: $(grep Hits /tmp/fault.g)"; return 1; }
	cmp -s /tmp/fault.g /tmp/fault.r ||
		{ why="the grown histogram differs ($(grow_line)): $(diff /tmp/fault.r /tmp/fault.g | grep '^[-+][^-+]' | head -4 | tr '\n' ' ')"; return 1; }
	case "$(grow_line)" in
	"generation 1 size 8192 grows 1 failed 0") outcome=ok ;;
	"generation 1 size 8192 grows 1 failed 1") outcome=clean ;;
	*) why="grow: $(grow_line)"; return 1 ;;
	esac
}
p_grow_undo() {
	echo 0 > /proc/$GP/fail-nth
	echo "!$FG" >> $EV/trigger
	echo "!$FR" >> $EV/trigger
}

# --- read rhist, rhist_debug and rhist_json ------------------------------------
# md5sum reads the file under faults; its line goes to a file whose page
# exists already, so writing it allocates nothing.
p_read_setup() {
	echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx > /tmp/fault.sum
}
read_body() {
	exec 1<> /tmp/fault.sum
	arm
	exec md5sum < $1
}
read_check() { # FILE REF
	read -r got < /tmp/fault.sum
	if [ $rc = 0 ] && [ "$got" = "$2" ]; then
		outcome=ok
	elif [ $rc = 0 ]; then
		outcome=partial
	else
		clean || { why="failed"; return 1; }
		outcome=clean
	fi
	[ "$(md5sum < $1)" = "$2" ] || { why="the next read differs"; return 1; }
}
p_read_rhist_setup() { p_read_setup; }
p_read_rhist_body() { read_body $EV/rhist; }
p_read_rhist_check() { read_check $EV/rhist "$ref_rhist"; }
p_read_rhist_undo() { :; }
p_read_debug_setup() { p_read_setup; }
p_read_debug_body() { read_body $EV/rhist_debug; }
p_read_debug_check() { read_check $EV/rhist_debug "$ref_debug"; }
p_read_debug_undo() { :; }
p_read_json_setup() { p_read_setup; }
p_read_json_body() { read_body $EV/rhist_json; }
p_read_json_check() { read_check $EV/rhist_json "$ref_json"; }
p_read_json_undo() { :; }

# --- attach a trigger in an instance ----------------------------------------
# The instance itself is made without faults: mkdir runs no rhist code
# (the rhist files are static slots of eventfs's table), only the ring
# buffer's and eventfs's allocations, more than a thousand, and the ring
# buffer WARNs when one fails (trace_rb_cpu_prepare()).
FI=instances/fault
p_instance_trigger_setup() { [ -d $FI ] || { mkdir $FI && echo 1 > $FI/$EV/enable; }; }
p_instance_trigger_body() { write_armed 'rhist:keys=a:vals=b' $FI/$EV/trigger; }
p_instance_trigger_check() { check_create $FI/$EV 'rhist:keys=a:vals=hitcount,b:' $FI; }
p_instance_trigger_undo() { echo '!rhist:keys=a:vals=b' >> $FI/$EV/trigger; }

# --- remove an instance with live triggers, one sharing a name ------------------
p_rmdir_setup() {
	attached $EV 'rhist:.*name=frm' || echo 'rhist:keys=a:name=frm' >> $EV/trigger
	mkdir $FI
	echo 1 > $FI/$EV/enable
	echo 'rhist:keys=a:name=frm' >> $FI/$EV/trigger
	echo 'rhist:keys=b if b > 100' >> $FI/$EV/trigger
	echo 'rhist:keys=pid:vals=common_timestamp.usecs' >> $FI/$SW/trigger
	shared=$(hits $EV)
}
p_rmdir_body() {
	arm
	exec rmdir $FI
}
p_rmdir_check() {
	if [ -d $FI ]; then
		clean || { why="not removed"; return 1; }
		works $FI/$EV $((shared + 20)) || return 1
		outcome=clean
	else
		[ $rc = 0 ] || { why="failed but removed"; return 1; }
		outcome=ok
	fi
	# The top level's trigger of the name lives on, alone.
	now=$(hits $EV)
	fire count=10 seed=1 keys=4
	[ "$(hits $EV)" -gt "$now" ] || { why="the named trigger stopped counting"; return 1; }
}
p_rmdir_undo() { [ ! -d $FI ] || rmdir $FI; }

# --- truncate a trigger file -------------------------------------------------
p_truncate_setup() {
	for t in 'rhist:keys=a' 'rhist:keys=b if b > 100' 'hist:keys=a'; do
		echo "$t" >> $EV/trigger
	done
}
p_truncate_body() {
	arm
	: > $EV/trigger
}
p_truncate_check() {
	n_left=$(grep -c '^r\?hist:' $EV/trigger)
	if [ $n_left = 0 ]; then
		[ $rc = 0 ] || { why="failed but truncated"; return 1; }
		[ "$(cat $EV/enable)" = 1 ] || { why="left in soft mode"; return 1; }
		outcome=ok
	elif [ $n_left = 3 ]; then
		clean || { why="not truncated"; return 1; }
		works $EV 10 || return 1
		outcome=clean
	else
		why="$n_left triggers left"
		return 1
	fi
}
p_truncate_undo() { : > $EV/trigger; }

# --- unload rhist with triggers attached ----------------------------------------
p_unload_setup() {
	[ -d /sys/module/rhist ] || insmod /lib/rhist/rhist.ko || fail "insmod rhist"
	for t in "$EV rhist:keys=a" "$EV rhist:keys=common_pid:name=funload" \
		 "$SW rhist:keys=common_pid:name=funload" "$SW rhist:keys=pid if pid > 1" \
		 "$EV rhist:keys=a:fu0=common_timestamp" \
		 "$SW rhist:keys=common_pid:fu1=common_timestamp-\$fu0" \
		 "$EV hist:keys=a"; do
		echo "${t#* }" >> ${t%% *}/trigger || fail "attaching ${t#* }"
	done
}
p_unload_body() {
	arm
	exec rmmod rhist
}
p_unload_check() {
	if [ -d /sys/module/rhist ]; then
		clean || { why="not unloaded"; return 1; }
		[ "$(grep -c '^rhist:' $EV/trigger $SW/trigger)" = "$EV/trigger:3
$SW/trigger:3" ] || { why="triggers lost"; return 1; }
		works $EV 10 || return 1
		outcome=clean
	else
		[ $rc = 0 ] || { why="failed but unloaded"; return 1; }
		! grep -q '^rhist:' $EV/trigger $SW/trigger || { why="rhist triggers left"; return 1; }
		# Gone from the directory; a dentry looked up before may stay
		# (eventfs keeps it), but it no longer opens.
		! ls $EV | grep -q '^rhist' || { why="rhist files listed"; return 1; }
		! cat $EV/rhist 2> /dev/null || { why="the rhist file still opens"; return 1; }
		grep -q '^hist:keys=a:' $EV/trigger || { why="the hist trigger went too"; return 1; }
		! grep -q ' rhist' $EV/trigger || { why="the rhist command is still listed"; return 1; }
		outcome=ok
	fi
}
# The referencing trigger first: O_TRUNC removes none of a file's
# triggers while one of them is referenced.
p_unload_undo() { : > $SW/trigger; : > $EV/trigger; }

# --- the run -------------------------------------------------------------------
fault_setup
# The tracing core does not undo what the first enabling of an event took
# when it fails: trace_event_trigger_enable_disable() keeps its tm_ref,
# __ftrace_event_enable_disable() its sm_ref and soft mode, and
# tracing_start_sched_switch() its count (the next stop then WARNs in
# tracepoint_probe_unregister()); the event file stays half enabled and
# its triggers stop counting, for hist as for rhist. Events enabled from
# the start keep the faults off that path: the test event here, and in
# each instance below; with them, their enable file must read "1" again
# after every failure.
echo 1 > $EV/enable
# Two probes held on each tracepoint whose probes the paths toggle keep
# their static calls from being patched while the other CPU runs them:
# QEMU's multi-threaded TCG sometimes mistakes such a call site (see
# tools/testing/soak/soak.sh.inc).
HOLD='instances/hold1 instances/hold2'
for h in $HOLD; do
	mkdir $h || fail "mkdir $h"
	for e in $EV $SW; do
		echo rhist_noop >> $h/$e/trigger || fail "rhist_noop on $h/$e"
	done
done
: > /tmp/fault.progress
watchdog &
dog=$!
total_injected=0
failed_paths=
PATHS='create named share share_filter ref synth handlers hidden enable remove clear grow read_rhist read_debug read_json instance_trigger rmdir truncate unload'
echo "fault: paths ${FAULT_PATHS:-$PATHS}"
run() { # PATH: runs it if FAULT_PATHS (all by default) has it
	case " ${FAULT_PATHS:-$PATHS} " in
	*" $1 "*) path $1 ;;
	esac
}
run create
run named
run share
run share_filter
[ ! -d $SH ] || rmdir $SH
run ref
run synth
run handlers
run hidden
run enable
run remove
run clear
run grow

echo 'rhist:keys=a:vals=b' >> $EV/trigger
echo 'rhist:keys=s:vals=c' >> $EV/trigger
fire count=200 seed=7 keys=8
ref_rhist=$(md5sum < $EV/rhist)
ref_debug=$(md5sum < $EV/rhist_debug)
ref_json=$(md5sum < $EV/rhist_json)
run read_rhist
run read_debug
run read_json
: > $EV/trigger

run instance_trigger
[ ! -d $FI ] || rmdir $FI
run rmdir
: > $EV/trigger
run truncate
run unload
[ -d /sys/module/rhist ] || insmod /lib/rhist/rhist.ko || fail "insmod rhist at the end"

kill $dog
wait $dog 2> /dev/null
echo 0 > $EV/enable
for h in $HOLD; do
	rmdir $h || fail "rmdir $h"
done
echo "fault: total injected=$total_injected"
echo "fault: done"
[ -z "$failed_paths" ] || fail "paths failed:$failed_paths"
echo PASS
