#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# '!rhist:...' removes the matching trigger and only that one; removing
# one that does not exist succeeds and does nothing, as with hist; '>' on
# the trigger file removes all. A removal whose filter does not parse
# fails, as hist's does, with the same error_log entry.
. /test/lib.sh.inc

expect_write 'rhist:keys=a' $EV/trigger
expect_write 'rhist:keys=b' $EV/trigger
expect_write '!rhist:keys=a' $EV/trigger
expect_no_grep '^rhist:keys=a:' $EV/trigger
expect_grep '^rhist:keys=b:' $EV/trigger
expect_write '!rhist:keys=a' $EV/trigger
expect_grep '^rhist:keys=b:' $EV/trigger
expect_write 'rhist:keys=c' $EV/trigger

expect_write 'hist:keys=a if b > 1' $EV/trigger
expect_write 'rhist:keys=a if b > 1' $EV/trigger
echo > error_log
expect_reject 'Invalid argument' '!hist:keys=a if b >' $EV/trigger
expect_reject 'Invalid argument' '!rhist:keys=a if b >' $EV/trigger
expect_grep '^rhist:keys=a:.* if b > 1' $EV/trigger
sed -n '/error:/s/.*error: //p' error_log > /tmp/msgs
[ "$(wc -l < /tmp/msgs)" = 2 ] || { cat error_log; fail "expected two error_log entries"; }
[ "$(sed -n 1p /tmp/msgs)" = "$(sed -n 2p /tmp/msgs)" ] || { cat error_log; fail "messages differ"; }
expect_write '!hist:keys=a if b > 1' $EV/trigger
expect_write '!rhist:keys=a if b > 1' $EV/trigger
expect_no_grep '^rhist:keys=a:' $EV/trigger

echo > $EV/trigger
expect_no_grep '^rhist:' $EV/trigger
expect_grep '^# Available triggers' $EV/trigger
echo PASS
