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
while read -r bad; do
	[ -n "$bad" ] || continue
	compare_hist_rhist "$bad"
done <<'EOF'
keys=a:sort=
keys=a:sort=a.foo
keys=a:vals=b:x=
keys=a:vals=b:x=.r
keys=a:vals=b:cleaname=.r
keys=a.bogus
keys=a:sort=a,b,c
keys=a:onmax(b
keys=a:x=1:y=$z:onmax($y).bogus()
keys=nosuchfield
keys=a:vals=nosuchfield
keys=a:sort=nosuchfield
keys=a:sort=b
keys=a,b,c,s,a,b,c,ip,cpu
keys=a:vals=b,c,ip,b,c,ip,b,c,ip,b,c,ip,b,c,ip,b,c
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
keys=s,d,ip,a,stacktrace
keys=a,b:vals=b:sort=a,b,hitcount
keys=a,b,c,s:sort=a,b,c,s,hitcount
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
keys=a:x=16-8-$x-2
keys=a:x=$x-2
keys=a:x=rhist_test.rhist_sample.$x
keys=a:clear:xaa=s
keys=a:x=s:vals=b:continue
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

# A named histogram that does not match comes before "nonexistent".
expect_write 'hist:keys=a:name=nm' $EV/trigger
expect_write 'rhist:keys=a:name=nm' $EV/trigger
for bad in keys=b:name=nm:cont keys=b:name=nm:clear keys=b:name=nm:pause \
	'keys=b:name=nm:cont if zz == 1'; do
	compare_hist_rhist "$bad"
done
expect_write '!hist:keys=a:name=nm' $EV/trigger
expect_write '!rhist:keys=a:name=nm' $EV/trigger
! grep -q '^rhist:' $EV/trigger || { cat $EV/trigger; fail "a rejected trigger was attached"; }
echo PASS
