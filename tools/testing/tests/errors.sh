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

# The same bad text gives hist and rhist the same errno... and the same
# error_log entry, but for the command's name (one column for the caret).
expect_write '!rhist:keys=a' $EV/trigger
while read -r bad; do
	[ -n "$bad" ] || continue
	echo > error_log
	h=0; r=0
	echo "hist:$bad" >> $EV/trigger 2>/dev/null && h=1
	echo "rhist:$bad" >> $EV/trigger 2>/dev/null && r=1
	[ $h = $r ] || fail "'$bad': hist accepted=$h, rhist accepted=$r"
	if [ $h = 1 ]; then
		# Both took it (C accepts some odd texts): take both away again.
		echo "!hist:$bad" >> $EV/trigger
		echo "!rhist:$bad" >> $EV/trigger
		echo "ok (accepted by both) $bad"
		continue
	fi
	sed -n '/error:/s/.*error: //p' error_log > /tmp/msgs
	# Some errors are silent in C: then neither may log.
	n=$(wc -l < /tmp/msgs)
	[ "$n" = 0 ] && { echo "ok (no entry from either) $bad"; continue; }
	[ "$n" = 2 ] || { cat error_log; fail "'$bad': expected zero or two error_log entries"; }
	[ "$(sed -n 1p /tmp/msgs)" = "$(sed -n 2p /tmp/msgs)" ] || { cat error_log; fail "'$bad': messages differ"; }
	# The carets: rhist's is one column further right ("rhist:"), unless
	# both point at the start of the command (C's "not found") or the
	# error is the filter parser's, whose command is the filter alone.
	grep '^ *\^$' error_log | awk '{ c[NR] = length($0) - 12 }
		END { exit !(c[2] == c[1] + 1 || c[2] == c[1]) }' ||
		{ cat error_log; fail "'$bad': carets differ"; }
	echo "ok $bad"
done <<'EOF'
keys=a:sort=
keys=a:sort=a.foo
keys=a:vals=b:x=
keys=a.bogus
keys=a:sort=a,b,c
keys=a:onmax(b
keys=a:x=1:y=$z:onmax($y).bogus()
keys=nosuchfield
keys=a:vals=nosuchfield
keys=a:sort=nosuchfield
keys=a:sort=b
keys=a,b,c,s
keys=a:vals=b,c,ip
keys=a.sym.hex
keys=a:vals=b.log2
keys=a:vals=b.buckets=10
keys=a:vals=b.sym
keys=a:vals=b.syscall
keys=a:vals=b.stacktrace
keys=a.percent
keys=a.graph
keys=b.execname
keys=a.buckets
keys=a.buckets=0
keys=a.buckets=x
keys=a:nohitcount
keys=a:NOHC:vals=hitcount
keys=a:size=0
keys=a:size=1000000000
keys=a:size=abc
keys=s,d,ip,a
keys=a:sort=hitcount.up
keys=a:sort=.descending
keys=a:sort=hitcount,
keys=a:bogus
keys=a:pause:bogus=1=2
keys=a:onchange($x).save(b)
keys=a:x=
keys=a if
keys=a if b >
keys=a:clock=nosuchclock
keys=a:vals=common_timestamp:clock=nosuchclock
keys=a:vals=common_timestamp.usecs:clock= bogus
keys=common_stacktrace.hex
keys=a:vals=common_stacktrace
keys=
keys=a,
keys=a:vals=
vals=a
keys=a:sort=a.descending.foo
keys=a.sym-offset.hex
keys=a:vals=b:sort=b.foo
keys=a:size=
keys=a*2
keys=a+b
keys=a:vals=b+s
keys=a:vals=s
keys=a:x=1:x=2
keys=a:x=b:vals=$x
keys=a:vals=b/0
keys=a:x=b/0
keys=a:x=1+2+3+4+5
keys=a:x=32+10*3/20-4
keys=a:x=-(1)+2
keys=a:x=-(b-c)
keys=a:vals=common_timestamp.usecs-1
keys=a:vals=b.log2+1
keys=a:x=common_timestamp-b
keys=a:vals=b+nosuch
keys=a:vals=(b
keys=c:vals=(b+c)*2,hitcount
keys=a:vals=b)
keys=a:vals=b++c
EOF
! grep -q '^rhist:' $EV/trigger || { cat $EV/trigger; fail "a rejected trigger was attached"; }
echo PASS
