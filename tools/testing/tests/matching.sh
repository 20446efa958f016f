#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Which trigger a command means, and whether a trigger may join a named
# histogram, are decided as hist decides them (hist_trigger_match()):
# size= and clock= do not count, the fields' types do. Every command
# runs as hist and as rhist, and both must give the same result.
. /test/lib.sh.inc

W=events/sched/sched_waking
READ=events/syscalls/sys_enter_read
MMAP=events/syscalls/sys_enter_mmap

# both FILE [!]TEXT: hist and rhist must both take TEXT (or its removal),
# or both refuse it with the same error.
both() {
	bang=${2%%[!!]*}
	h=$(echo "${bang}hist:${2#!}" 2>&1 >> "$1") && h=ok
	r=$(echo "${bang}rhist:${2#!}" 2>&1 >> "$1") && r=ok
	[ "$h" = "$r" ] || fail "'$2' on $1: hist: '$h', rhist: '$r'"
	echo "$2 on $1: $h"
}
# lines FILE: the trigger lines of hist and rhist must be the same.
lines() {
	grep '^hist:' "$1" | sed 's/^hist://' > /tmp/h.lines
	grep '^rhist:' "$1" | sed 's/^rhist://' > /tmp/r.lines
	cmp -s /tmp/h.lines /tmp/r.lines || { diff /tmp/h.lines /tmp/r.lines; fail "$1: lines differ"; }
}

# The same trigger but for size=: it exists; its removal removes it.
both $EV/trigger 'keys=a'
both $EV/trigger 'keys=a:size=4096'
both $EV/trigger 'keys=a:size=4096:pause'
lines $EV/trigger
expect_grep '^rhist:keys=a:.*size=2048 \[paused\]$' $EV/trigger
both $EV/trigger '!keys=a:size=4096'
expect_no_grep '^rhist:' $EV/trigger

# Named: size= and clock= may differ between the triggers sharing it.
both $EV/trigger 'name=s:keys=common_pid'
both $W/trigger 'name=s:keys=common_pid:size=4096'
both $W/trigger 'name=c:keys=common_pid:vals=common_timestamp'
both $EV/trigger 'name=c:keys=common_pid:vals=common_timestamp:clock=global'
lines $EV/trigger
lines $W/trigger
grep -q '^rhist:name=s:' $W/trigger || fail "rhist did not join s on sched_waking"

# Named: a field of the same name but another type cannot share it
# (fd is an unsigned int for read, an unsigned long for mmap).
echo > error_log
both $READ/trigger 'name=fd:keys=fd'
both $MMAP/trigger 'name=fd:keys=fd'
expect_grep 'error: Named hist trigger doesn' error_log
expect_no_grep '^rhist:' $MMAP/trigger

# clear on one trigger of a named histogram leaves each sharer's pause
# as it was (hist pauses them all while it clears).
both $W/trigger 'name=s:keys=common_pid:size=4096:pause'
both $EV/trigger 'name=s:keys=common_pid:clear'
lines $EV/trigger
lines $W/trigger
expect_grep '^rhist:name=s:.* \[paused\]$' $W/trigger
expect_grep '^rhist:name=s:.* \[active\]$' $EV/trigger
echo PASS
