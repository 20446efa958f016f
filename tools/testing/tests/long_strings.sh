#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A __data_loc string at the end of a record over 116 bytes is read whole.
# Such a record is built in the CPU's trace_buffered_event page when the
# event has only triggers, and ring_buffer_event_length() says it is 4
# bytes shorter than it is: rhist once cut the string's end off.
# sched_process_exec ends with the file name being executed.
. /test/lib.sh.inc

EX=events/sched/sched_process_exec
dir=/tmp/$(printf '%0120d' 0)
mkdir -p $dir || fail "mkdir $dir"
printf '#!/bin/sh\nexit 0\n' > $dir/long-name-ends-here
chmod +x $dir/long-name-ends-here

expect_write 'hist:keys=filename' $EX/trigger
expect_write 'rhist:keys=filename' $EX/trigger
$dir/long-name-ends-here || fail "running $dir/long-name-ends-here failed"
expect_write 'hist:keys=filename:pause' $EX/trigger
expect_write 'rhist:keys=filename:pause' $EX/trigger

sed 's/^# trigger info: hist:/# trigger info: rhist:/' $EX/hist > /tmp/c
cat $EX/rhist > /tmp/r
expect_grep "^{ filename: $dir/long-name-ends-here *} hitcount: *1\$" /tmp/r
hist_same /tmp/c /tmp/r || fail "rhist differs from hist"
echo PASS
