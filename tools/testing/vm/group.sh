#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of run-group.sh: runs the scripts named in /test/group.list,
# one after the other in this boot, each in a shell of its own started in
# /sys/kernel/tracing, as guest-init starts a lone script. Around each it
# prints "RHIST-TEST-START NAME" and "RHIST-TEST-END NAME STATUS", so that
# the host gives every kernel message between the two to NAME.
#
# Each script has a time limit, 300 s or what /test/script-timeout says:
# past it the script is killed (STATUS 137), and the next one runs.
#
# After each script, what it made is removed (as a new boot would), and
# the state compared with what it was before the first; a difference
# fails the script with STATUS "dirty" and a diff, and stops the group
# (the host runs the rest in a new boot). The removal is part of the
# script's run: what the kernel says meanwhile is the script's.

# state: what a fresh boot has, as far as a script can change it.
state() {
	ls instances
	cat synthetic_events dynamic_events set_event
	grep -v '^#' events/*/*/trigger instances/*/events/*/*/trigger 2> /dev/null
	grep -H . trace_clock tracing_on current_tracer buffer_size_kb tracing_cpumask \
		options/* /sys/devices/system/cpu/cpu1/online 2> /dev/null
	cut -d' ' -f1 /proc/modules | sort
}

# clean: removes what a script made and sets back what it set. Triggers
# go in passes: one whose variables another references is refused until
# that one is gone, and goes one by one.
clean() {
	echo 1 > /sys/devices/system/cpu/cpu1/online 2> /dev/null
	[ -d /sys/module/rhist ] || insmod /lib/rhist/rhist.ko
	for pass in 1 2 3 4 5 6; do
		left=$(grep -l -v '^#' events/*/*/trigger instances/*/events/*/*/trigger 2> /dev/null)
		[ -n "$left" ] || break
		for f in $left; do
			true 2> /dev/null > $f
			while IFS= read -r l; do
				case $l in '#'*) continue ;; esac
				l=${l% \[active\]}
				echo "!${l% \[paused\]}" >> $f 2> /dev/null
			done < $f
		done
	done
	echo > set_event
	for i in instances/*; do
		[ ! -d "$i" ] || rmdir "$i"
	done
	echo > dynamic_events
	echo > synthetic_events
	echo local > trace_clock
	echo 1 > tracing_on
	echo > trace
	echo > error_log
}

clean
state > /tmp/state.before
limit=300
[ ! -s /test/script-timeout ] || read -r limit < /test/script-timeout
rc=0
while read -r name; do
	echo "RHIST-TEST-START $name"
	read -r t0 _ < /proc/uptime
	timeout -s KILL $limit sh /test/$name.sh
	st=$?
	[ $st != 137 ] || echo "$name: killed after its $limit s"
	cd /sys/kernel/tracing
	clean
	# Guest seconds, the script and its clean-up: where a boot's time goes.
	read -r t1 _ < /proc/uptime
	echo "$name $t0 $t1" | awk '{ printf "RHIST-TEST-TIME %s %.1f s\n", $1, $3 - $2 }'
	state > /tmp/state.after
	if ! cmp -s /tmp/state.before /tmp/state.after; then
		echo "$name left the tracing state changed:"
		diff /tmp/state.before /tmp/state.after
		echo "RHIST-TEST-END $name dirty"
		rc=1
		break
	fi
	echo "RHIST-TEST-END $name $st"
	[ $st = 0 ] || rc=1
done < /test/group.list
# What the kernel says from here on (kmemleak's last scan) is no script's.
echo "RHIST-GROUP-DONE"
exit $rc
