#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A histogram pins the dynamic event it was resolved against: a kprobe
# event cannot be deleted while a named histogram made on it lives on
# through a trigger on another event, and can be once that is gone.
. /test/lib.sh.inc

P1=events/kprobes/rhist_p1
P2=events/kprobes/rhist_p2
expect_write 'p:rhist_p1 vfs_read' kprobe_events
expect_write 'p:rhist_p2 vfs_read' kprobe_events
expect_write 'rhist:name=kp:keys=common_pid' $P1/trigger
expect_write 'rhist:name=kp:keys=common_pid' $P2/trigger
expect_write '!rhist:name=kp:keys=common_pid' $P1/trigger
expect_no_grep '^rhist:' $P1/trigger
expect_reject 'Device or resource busy' '-:rhist_p1' kprobe_events
cat $P2/rhist > /tmp/p2 || fail "reading $P2/rhist failed"
expect_grep '^# trigger info: rhist:name=kp:keys=common_pid:' /tmp/p2
expect_grep '^{ common_pid: ' /tmp/p2
expect_write '!rhist:name=kp:keys=common_pid' $P2/trigger
expect_write '-:rhist_p1' kprobe_events
expect_write '-:rhist_p2' kprobe_events
[ ! -e $P1 ] || fail "$P1 still there"

# An attached trigger pins its own event too.
expect_write 'p:rhist_p3 vfs_read' kprobe_events
expect_write 'rhist:keys=common_pid' events/kprobes/rhist_p3/trigger
expect_reject 'Device or resource busy' '-:rhist_p3' kprobe_events
expect_write '!rhist:keys=common_pid' events/kprobes/rhist_p3/trigger
expect_write '-:rhist_p3' kprobe_events
echo PASS
