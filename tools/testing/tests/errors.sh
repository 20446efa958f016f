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

# The same bad text gives hist and rhist the same errno and the same
# error_log entries (none, one, or two when C logs twice), but for the
# command's name (one column for the caret).
expect_write '!rhist:keys=a' $EV/trigger
# log_of FILE: the entries of error_log as "message|caret column" lines.
log_of() {
	awk '/error:/ { sub(/.*error: /, ""); m = $0 }
		/^ *\^$/ { print m "|" length($0) - 12 }' error_log > "$1"
}
# compare TEXT: writes hist:TEXT, then rhist:TEXT ("!hist:..." for a
# TEXT starting with "!"), and compares what they do.
compare() {
	bad=$1 not=
	case $bad in '!'*) not='!' bad=${bad#!} ;; esac
	echo > error_log
	h=0; r=0
	he=$(echo "${not}hist:$bad" 2>&1 >> $EV/trigger) && h=1
	log_of /tmp/hlog
	echo > error_log
	re=$(echo "${not}rhist:$bad" 2>&1 >> $EV/trigger) && r=1
	log_of /tmp/rlog
	[ $h = $r ] || { cat /tmp/hlog; fail "'$not$bad': hist accepted=$h ($he), rhist accepted=$r ($re)"; }
	if [ $h = 1 ]; then
		# Both took it (C accepts some odd texts): take both away again.
		[ -n "$not" ] || echo "!hist:$bad" >> $EV/trigger
		[ -n "$not" ] || echo "!rhist:$bad" >> $EV/trigger
		echo "ok (accepted by both) $not$bad"
		return
	fi
	# The errno, as the shell names it.
	[ "$he" = "$re" ] || fail "'$not$bad': hist failed with '$he', rhist with '$re'"
	# Some errors are silent in C: then rhist must be silent too.
	cut -d'|' -f1 /tmp/hlog > /tmp/hmsgs
	cut -d'|' -f1 /tmp/rlog > /tmp/rmsgs
	cmp -s /tmp/hmsgs /tmp/rmsgs ||
		{ cat /tmp/hlog /tmp/rlog; fail "'$not$bad': error_log entries differ"; }
	# The carets: rhist's is one column further right ("rhist:"), unless
	# both point at the start of the command (C's "not found") or the
	# error is the filter parser's, whose command is the filter alone.
	cut -d'|' -f2 /tmp/hlog > /tmp/hcols
	cut -d'|' -f2 /tmp/rlog | paste /tmp/hcols - | awk '
		!($2 == $1 + 1 || $2 == $1) { bad = 1 } END { exit bad }' ||
		{ cat /tmp/hlog /tmp/rlog; fail "'$not$bad': carets differ"; }
	echo "ok ($(wc -l < /tmp/hlog) entries, ${he##*: }) $not$bad"
}

while read -r bad; do
	[ -n "$bad" ] || continue
	compare "$bad"
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
keys=a:vals=b:sort=zz.foo
keys=a:sort=a.foo,zz
keys=a:sort=zz,b,c
keys=a.foo:vals=zz
keys=a:vals=zz,b.foo
keys=zz:x=b.foo
keys=a:x=zz:vals=b.foo
keys=zz:x=1:x=2
keys=a:x=1:x=2:vals=zz
keys=zz:nohitcount
keys=zz:vals=b/0
keys=a:vals=zz/0
keys=a:vals=zz+b/0
keys=a:vals=b/0+zz
keys=a:vals=s+zz
keys=a+:vals=zz
keys=a,b,c,d:vals=zz
keys=zz,b,c,d
keys=a:vals=-(zz
keys=zz:vals=a,b,c
keys=a:vals=b,,c
keys=a:vals=,b
keys=a,,b
keys=a:vals=$zz
keys=a:vals=$zz.foo
keys=a:vals=b+$zz
keys=a:x=b+1:vals=$x
keys=a:x=b+1:y=$x
keys=$zz
keys=a:vals=rhist_test.nosuch.$zz
keys=a:vals=$
keys=a:x=b:vals=$x
keys=a:x=b+1:y=$x
keys=$x:x=b+1
keys=a:x=-(b):y=$x
keys=a:vals=$x:x=b+1
keys=zz if a ==
keys=a.foo if zz == 1
keys=a:cont if zz == 1
keys=a:clear if a ==
keys=a:pause if zz == 1
!keys=a if zz == 1
!keys=zz if zz == 1
!keys=a:vals=$zz
EOF

# Two errors at a time, one in each of two parts of the text (a value,
# a variable, a key, a sort key, another attribute, the filter); "_" is a
# space.
KEYS='zz a.foo a/0 a,,b a+ a,b,c,s $zz -(a b,zz.hex'
VALS='zz b.foo b/0 b,,c b- a,b,c $zz $x s+1'
VARS='x=zz x=b.log2 x=b/0 x=1:x=2 x=$zz x=a+:y=zz'
SORTS='zz a.foo zz.foo a,b,c'
ATTRS='size=abc bogus y= size=0 x=1,y'
FILTERS='zz_==_1 a_== a_==_1_&&'
{
	for k in $KEYS; do
		for v in $VALS; do echo "keys=$k:vals=$v"; echo "vals=$v:keys=$k"; done
		for x in $VARS; do echo "keys=$k:$x"; done
		for s in $SORTS; do echo "keys=$k:sort=$s"; done
		for a in $ATTRS; do echo "keys=$k:$a"; done
		for f in $FILTERS; do echo "keys=$k if $f" | tr _ ' '; done
	done
	for v in $VALS; do
		for x in $VARS; do echo "keys=a:vals=$v:$x"; done
		for s in $SORTS; do echo "keys=a:vals=$v:sort=$s"; done
		for a in $ATTRS; do echo "keys=a:vals=$v:$a"; done
		for f in $FILTERS; do echo "keys=a:vals=$v if $f" | tr _ ' '; done
	done
	for x in $VARS; do
		for s in $SORTS; do echo "keys=a:$x:sort=$s"; done
		for a in $ATTRS; do echo "keys=a:$x:$a"; done
		for f in $FILTERS; do echo "keys=a:$x if $f" | tr _ ' '; done
	done
	for s in $SORTS; do
		for a in $ATTRS; do echo "keys=a:sort=$s:$a"; done
		for f in $FILTERS; do echo "keys=a:sort=$s if $f" | tr _ ' '; done
	done
	for a in $ATTRS; do
		for f in $FILTERS; do echo "keys=a:$a if $f" | tr _ ' '; done
	done
} > /tmp/pairs
while read -r bad; do compare "$bad"; done < /tmp/pairs
echo "$(wc -l < /tmp/pairs) two-error texts compared"

# A named histogram that does not match comes before "nonexistent".
expect_write 'hist:keys=a:name=nm' $EV/trigger
expect_write 'rhist:keys=a:name=nm' $EV/trigger
for bad in keys=b:name=nm:cont keys=b:name=nm:clear keys=b:name=nm:pause \
	'keys=b:name=nm:cont if zz == 1'; do
	compare "$bad"
done
expect_write '!hist:keys=a:name=nm' $EV/trigger
expect_write '!rhist:keys=a:name=nm' $EV/trigger
! grep -q '^rhist:' $EV/trigger || { cat $EV/trigger; fail "a rejected trigger was attached"; }
echo PASS
