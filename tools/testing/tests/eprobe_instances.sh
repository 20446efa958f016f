#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# An event probe enabled in two instances, as `make fuzz-seq` found it
# (seed 300, sequence 96): 6.12 gave the second instance no trigger of
# its own and, when the first instance's file was disabled first, left
# that instance's trigger behind; deleting the probe then freed the file
# the trigger writes to (a WARNING in __eprobe_trace_func(), a
# use-after-free). patches/0011 gives each instance its own trigger.
# rhist triggers on the probe in both instances enable it the same way
# (soft mode) and must count in both.
. /test/lib.sh.inc

A=instances/A
EP=events/ep/e0

expect_write 'e:ep/e0 rhist_test/rhist_sample x=$a:u64' dynamic_events
mkdir $A || fail "mkdir $A"

# Enabled in both, by hand: each instance records.
echo 1 > $EP/enable || fail "enable top"
echo 1 > $A/$EP/enable || fail "enable A"
fire count=3 seed=1 keys=1
[ "$(grep -c ' e0: ' trace)" = 3 ] || { cat trace; fail "top recorded no 3 e0 events"; }
[ "$(grep -c ' e0: ' $A/trace)" = 3 ] || { cat $A/trace; fail "A recorded no 3 e0 events"; }
echo 0 > $EP/enable || fail "disable top"
echo 0 > $A/$EP/enable || fail "disable A"
fire count=2 seed=1 keys=1
[ "$(grep -c ' e0: ' trace)" = 3 ] || { cat trace; fail "top recorded after its disable"; }

# The same through rhist triggers on the probe of each instance.
for cmd in hist rhist; do
	expect_write "$cmd:keys=x" $EP/trigger
	expect_write "$cmd:keys=x" $A/$EP/trigger
done
fire count=4 seed=1 keys=1
for f in $EP $A/$EP; do
	for cmd in hist rhist; do
		expect_grep 'Hits: 4$' $f/$cmd
	done
done
for cmd in hist rhist; do
	expect_write "!$cmd:keys=x" $EP/trigger
done
for cmd in hist rhist; do
	expect_write "!$cmd:keys=x" $A/$EP/trigger
done

# Nothing is left on the attached event; deleting the probe frees its
# files, and the next events must not reach them.
expect_write '-:ep/e0' dynamic_events
fire count=3 seed=1 keys=1
rmdir $A || fail "rmdir $A"
echo "eprobe_instances: ok"
