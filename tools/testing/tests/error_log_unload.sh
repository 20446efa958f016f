#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# tracing/error_log keeps rhist's errors readable after rmmod: the log
# copies the message (it once kept a pointer into the module's memory,
# and reading it after rmmod faulted).
. /test/lib.sh.inc

echo > error_log
! echo 'rhist:keys=nosuchfield' 2>/dev/null >> $EV/trigger ||
	fail "a trigger on an unknown field was accepted"
expect_grep "rhist:rhist_test:rhist_sample: error: Couldn't find field$" error_log
rmmod rhist || fail "rmmod rhist failed"
cat error_log > /tmp/error_log || fail "reading error_log after rmmod failed"
expect_grep "rhist:rhist_test:rhist_sample: error: Couldn't find field$" /tmp/error_log
expect_grep '^  Command: rhist:keys=nosuchfield$' /tmp/error_log
insmod /lib/rhist/rhist.ko || fail "reloading rhist failed"
echo PASS
