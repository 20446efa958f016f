#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A map larger than the machine can give (its size is the user's:
# size=, .quantiles): the write fails with ENOMEM and rhist's error_log
# entry, leaves no trigger, no allocation failure report (a stack dump)
# and no OOM kill in the kernel's log; a map that fits is then taken.
. /test/lib.sh.inc

T=$EV/trigger
# Sixteen sketches in each of 131072 entries: about 1 GiB, in a guest
# of 512 MiB.
q=b.quantiles
vals=$q,$q,$q,$q,$q,$q,$q,$q,$q,$q,$q,$q,$q,$q,$q,$q
big="keys=a:vals=$vals:size=131072"
dmesg -c > /dev/null
echo > error_log
expect_reject 'Cannot allocate memory' "rhist:$big" $T
expect_grep "rhist_sample: error: Couldn't allocate the histogram's memory$" error_log
expect_grep "Command: rhist:$big" error_log
expect_no_grep '^rhist:' $T
dmesg > /tmp/dmesg
for report in 'allocation failure' 'vmalloc error' 'oom-kill' 'Out of memory' 'Call Trace'; do
	! grep -q "$report" /tmp/dmesg || { cat /tmp/dmesg; fail "the kernel's log has '$report'"; }
done
echo "ok too large"
# One that fits.
expect_write "rhist:keys=a:vals=$q:size=4096" $T
fire count=100 seed=3 keys=10
expect_grep '^    Hits: 100$' $EV/rhist
expect_write "!rhist:keys=a:vals=$q:size=4096" $T
echo PASS
