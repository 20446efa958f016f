#!/bin/sh
# Passes, and leaves a kernel warning to come 5 s later: in a group boot,
# after the group's end (kmemleak's wait), outside every script. The boot
# must fail for it, with the report shown.
(sleep 5; echo 1 > /sys/kernel/debug/rhist_test/warn) > /dev/null 2>&1 &
exit 0
