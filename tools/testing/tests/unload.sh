#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# rmmod rhist while its triggers are attached and events fire on both
# CPUs removes every trigger and the files; loading it again works. The
# runner's kmemleak scan then checks that nothing leaked.
. /test/lib.sh.inc

expect_write 'rhist:keys=a' $EV/trigger
expect_write 'rhist:keys=b if b > 100' $EV/trigger
expect_write 'hist:keys=a' $EV/trigger
expect_write 'rhist:keys=pid' events/sched/sched_waking/trigger
fire count=200000 seed=3 keys=64 cpu=all &
firing=$!
sleep 1
rmmod rhist || fail "rmmod rhist failed"
wait $firing
expect_no_grep '^rhist:' $EV/trigger
expect_no_grep '^rhist:' events/sched/sched_waking/trigger
expect_grep '^hist:keys=a' $EV/trigger
expect_no_grep ' rhist' $EV/trigger
[ ! -e $EV/rhist ] || fail "rhist file still there after rmmod"
[ ! -e $EV/rhist_debug ] || fail "rhist_debug file still there after rmmod"
[ ! -e $EV/rhist_json ] || fail "rhist_json file still there after rmmod"

insmod /lib/rhist/rhist.ko || fail "reloading rhist failed"
[ -e $EV/rhist ] || fail "rhist file missing after reload"
expect_write 'rhist:keys=a' $EV/trigger
fire count=10 seed=1 keys=2
expect_grep 'Hits: 10$' $EV/rhist

# An open rhist_json file, read in part, pins the module; the read let
# event_mutex go (the trigger file takes it).
exec 3< $EV/rhist_json
head -c 20 <&3 > /dev/null
! rmmod rhist 2>/dev/null || fail "rmmod succeeded with an rhist_json file open"
expect_grep '^rhist:keys=a' $EV/trigger
exec 3<&-
# An open rhist file pins the module.
cat $EV/rhist_debug > /dev/null
exec 3< $EV/rhist
! rmmod rhist 2>/dev/null || fail "rmmod succeeded with an rhist file open"
exec 3<&-
rmmod rhist || fail "rmmod failed after the file was closed"
# Files opened before are gone for path lookups too, and come back, at
# the same paths, with the module.
[ ! -e $EV/rhist ] || fail "rhist still resolves after rmmod"
[ ! -e $EV/rhist_debug ] || fail "rhist_debug still resolves after rmmod"
! ls $EV | grep -q rhist || fail "rhist still listed after rmmod"
insmod /lib/rhist/rhist.ko || fail "reloading rhist failed"
expect_write 'rhist:keys=a' $EV/trigger
fire count=10 seed=1 keys=2
expect_grep 'Hits: 10$' $EV/rhist
echo PASS
