#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Bad trigger text is rejected with an errno and, as hist does, an
# error_log entry; nothing is left attached.
. /test/lib.sh.inc

echo > error_log
expect_write 'rhist:keys=a' $EV/trigger
expect_reject 'File exists' 'rhist:keys=a' $EV/trigger
cat error_log
expect_grep 'rhist:rhist_test:rhist_sample: error: Hist trigger already exists' error_log
expect_grep '^  Command: rhist:keys=a$' error_log
expect_reject 'Invalid argument' 'rhist:vals=b' $EV/trigger
expect_reject 'Invalid argument' 'rhist' $EV/trigger

# The same text gives hist and rhist the same error_log entry, but for the
# command's name.
for bad in 'keys=a:sort=' 'keys=a:sort=a.foo' 'keys=a:vals=b:x=' 'keys=a.bogus' \
	   'keys=a:sort=a,b,c' 'keys=a:onmax(b' 'keys=a:x=1:y=$z:onmax($y).bogus()'; do
	echo > error_log
	echo "hist:$bad" >> $EV/trigger 2>/dev/null && fail "hist accepted '$bad'"
	echo "rhist:$bad" >> $EV/trigger 2>/dev/null && fail "rhist accepted '$bad'"
	sed -n '/error:/s/.*error: //p' error_log > /tmp/msgs
	# Some errors are silent in C: then neither may log.
	n=$(wc -l < /tmp/msgs)
	[ "$n" = 0 ] && continue
	[ "$n" = 2 ] || { cat error_log; fail "'$bad': expected zero or two error_log entries"; }
	[ "$(sed -n 1p /tmp/msgs)" = "$(sed -n 2p /tmp/msgs)" ] || { cat error_log; fail "'$bad': messages differ"; }
	# The carets: rhist's is one column further right ("rhist:"), unless
	# both point at the start of the command (C's "not found").
	grep '^ *\^$' error_log | awk '{ c[NR] = length($0) - 12 }
		END { exit !(c[2] == c[1] + 1 || (c[1] == 0 && c[2] == 0)) }' ||
		{ cat error_log; fail "'$bad': carets differ"; }
done
[ "$(grep -c '^rhist:' $EV/trigger)" = 1 ] || fail "a rejected trigger was attached"
echo PASS
