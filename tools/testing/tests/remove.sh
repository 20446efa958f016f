#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# '!rhist:...' removes the matching trigger and only that one; removing
# one that does not exist succeeds and does nothing, as with hist; '>' on
# the trigger file removes all.
. /test/lib.sh.inc

expect_write 'rhist:keys=a' $EV/trigger
expect_write 'rhist:keys=b' $EV/trigger
expect_write '!rhist:keys=a' $EV/trigger
expect_no_grep '^rhist:keys=a:' $EV/trigger
expect_grep '^rhist:keys=b:' $EV/trigger
expect_write '!rhist:keys=a' $EV/trigger
expect_grep '^rhist:keys=b:' $EV/trigger
expect_write 'rhist:keys=c' $EV/trigger
echo > $EV/trigger
expect_no_grep '^rhist:' $EV/trigger
expect_grep '^# Available triggers' $EV/trigger
echo PASS
