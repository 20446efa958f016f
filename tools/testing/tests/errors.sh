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
[ "$(grep -c '^rhist:' $EV/trigger)" = 1 ] || fail "a rejected trigger was attached"
echo PASS
