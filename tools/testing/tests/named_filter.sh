#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A trigger that joins a named histogram keeps its own filter: it is read
# from the trigger's text, which is dropped when the trigger takes the
# shared histogram (a use after free once, shown by slab poisoning).
# The same commands as hist must give the same trigger lines and files.
. /test/lib.sh.inc

W=events/sched/sched_waking
for cmd in hist rhist; do
	expect_write "$cmd:name=n_$cmd:keys=a" $EV/trigger
	expect_write "$cmd:name=n_$cmd:keys=a if b > 2147483647" $EV/trigger
	expect_write "$cmd:name=m_$cmd:keys=common_pid" $EV/trigger
	expect_write "$cmd:name=m_$cmd:keys=common_pid if common_pid > 0" $W/trigger
done
expect_grep '^rhist:name=n_rhist:keys=a:.* if b > 2147483647 \[active\]$' $EV/trigger
expect_grep '^rhist:name=m_rhist:keys=common_pid:.* if common_pid > 0 \[active\]$' $W/trigger

# The lines of one command, with its name and prefix taken out.
lines() {
	grep "^$1:" "$2" | sed "s/^$1:name=\([nm]\)_$1:/X:name=\1:/"
}
for f in $EV/trigger $W/trigger; do
	lines hist $f > /tmp/hist.lines
	lines rhist $f > /tmp/rhist.lines
	cmp -s /tmp/hist.lines /tmp/rhist.lines || {
		diff /tmp/hist.lines /tmp/rhist.lines
		fail "$f: rhist's trigger lines differ from hist's"
	}
done

# Both triggers of n count into the shared map: the filtered one only
# the events with b > 2^31 - 1.
expect_write "!hist:name=m_hist:keys=common_pid" $EV/trigger
expect_write "!rhist:name=m_rhist:keys=common_pid" $EV/trigger
fire count=1000 seed=7 keys=8
sed 's/n_hist/N/; s/^\(# trigger info: \)hist:/\1/' $EV/hist > /tmp/hist.out
sed 's/n_rhist/N/; s/^\(# trigger info: \)rhist:/\1/' $EV/rhist > /tmp/rhist.out
cmp -s /tmp/hist.out /tmp/rhist.out || {
	diff /tmp/hist.out /tmp/rhist.out
	fail "the rhist file differs from the hist file"
}
expect_grep '^ *Hits: ' /tmp/rhist.out
echo PASS
