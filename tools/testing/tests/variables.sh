#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Variables of one trigger, as hist has them: computed per entry, shown in
# the trigger info, and a name only one trigger of an event may define
# (what hist checks among its triggers, rhist checks among its own). The
# same commands go to hist and to rhist; the outcomes must be the same.
. /test/lib.sh.inc

run() { # cmd: prints each command's outcome and error_log message
	c=$1
	for t in 'keys=a:x=b' 'keys=c:x=b' 'keys=a:x=b:pause' 'keys=c:y=b*2:z=y' \
		 'keys=c:y=b*2:z=a-b' 'keys=b:w=c:w=a' '!keys=a:x=b' 'keys=c:x=b'; do
		echo > error_log
		case $t in
		!*) line="!$c:${t#!}" ;;
		*) line="$c:$t" ;;
		esac
		if echo "$line" >> $EV/trigger 2>/dev/null; then r=ok; else r=rejected; fi
		echo "$t: $r $(sed -n 's/.*error: //p' error_log)"
	done
	sed -n "s/^$c://p" $EV/trigger
	echo "$c:keys=c:x=b" | sed 's/^/!/' >> $EV/trigger
	echo "$c:keys=c:y=b*2:z=y" | sed 's/^/!/' >> $EV/trigger
	echo "$c:keys=c:y=b*2:z=a-b" | sed 's/^/!/' >> $EV/trigger
}
run hist > /tmp/vars-hist
run rhist > /tmp/vars-rhist
cat /tmp/vars-rhist
cmp -s /tmp/vars-hist /tmp/vars-rhist || { diff /tmp/vars-hist /tmp/vars-rhist; fail "hist and rhist differ"; }
grep -q 'rejected Variable already defined' /tmp/vars-rhist || fail "no duplicate variable rejected"
grep -q '^rhist:\|^hist:' $EV/trigger && { cat $EV/trigger; fail "triggers left behind"; }
echo PASS
