#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The DKMS test's guest (tools/testing/dkms/dkms.sh): booted from the
# linux-image package's vmlinuz with the rhist.ko DKMS built against the
# linux-headers package, loaded by guest-init. Checks that this is that
# kernel, then a trigger, events fired, the rhist file read, rmmod.
. /test/lib.sh.inc

want=$(cat /test/kernelrelease)
[ "$(uname -r)" = "$want" ] || fail "running $(uname -r), not the packaged $want"
echo "smoke: kernel $(cat /proc/version)"
[ -d /sys/module/rhist ] || fail "rhist.ko is not loaded"
echo "smoke: rhist srcversion $(cat /sys/module/rhist/srcversion)"

expect_write 'rhist:keys=a:vals=hitcount:sort=a' $EV/trigger
fire count=1000 seed=1 keys=4
cat $EV/rhist
expect_grep '^    Hits: 1000$' $EV/rhist
expect_grep '^    Entries: 4$' $EV/rhist
[ "$(grep -c '^{ a:' $EV/rhist)" = 4 ] || fail "not 4 keys"
expect_write '!rhist:keys=a:vals=hitcount:sort=a' $EV/trigger
rmmod rhist || fail "rmmod rhist failed"
[ ! -d /sys/module/rhist ] || fail "rhist is still loaded"
[ ! -e $EV/rhist ] || fail "the rhist file outlived the module"
echo "smoke: done"
