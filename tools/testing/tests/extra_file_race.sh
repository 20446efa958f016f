#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# guest-init: no-rhist
#
# eventfs looks up an event directory's names without the lock under
# which trace_event_add_extra_file() writes a new name. The name must
# reach eventfs only once it is whole: no reader may touch it while it is
# being written. (Patch 0003 once pointed the directory entries at the
# name buffers themselves, so lookups read a name while it was copied.)
#
# rhist_test_race.ko stops the writer right after its first store into
# the slot rhist_debug gets (slot 1: rhist registers rhist first) while
# a reader looks a missing name up in an event directory on the other
# CPU. eventfs compares the name with every entry's, and the dentry is
# not kept, so every lookup reaches eventfs; it takes no lock the writer
# holds, so it keeps reading during the stop. Both are pinned, so that
# the reader can never wait in the stopped CPU's run queue, and the
# reader runs only shell builtins, so that it never forks.
. /test/lib.sh.inc

DIR=events/sched/sched_switch
addr=$(awk '$3 == "event_extra_names" { print $1 }' /proc/kallsyms)
[ -n "$addr" ] || fail "event_extra_names is not in /proc/kallsyms"
insmod /lib/rhist/rhist_test_race.ko addr=0x$addr offset=32 stall_ms=300 ||
	fail "rhist_test_race.ko did not load"

reader() {
	while [ ! -e /tmp/stop ]; do
		[ -e $DIR/nosuchfile ]
	done
}
reader &
reader=$!
taskset -p 1 $reader > /dev/null || fail "cannot pin the reader"
sleep 1

taskset 2 insmod /lib/rhist/rhist.ko || fail "rhist.ko did not load"
touch /tmp/stop
wait $reader

P=/sys/module/rhist_test_race/parameters
[ "$(cat $P/stalls)" = 1 ] || fail "the writer of rhist_debug was not stopped"
[ "$(cat $P/racing_reads)" = 0 ] ||
	fail "$(cat $P/racing_reads) reads of the name while it was written"
ls $DIR | grep -qx rhist_debug || fail "rhist_debug is not in $DIR"
rmmod rhist_test_race || fail "rmmod rhist_test_race failed"
echo PASS
