#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make run` without a terminal: a short demo of rhist next to hist.
set -e
ev=events/rhist_test/rhist_sample
echo "# echo 'rhist:keys=a' >> $ev/trigger"
echo 'rhist:keys=a' >> $ev/trigger
echo 'hist:keys=a' >> $ev/trigger
echo "# cat $ev/trigger"
cat $ev/trigger
echo "# echo 'count=1000 seed=1 keys=8' > /sys/kernel/debug/rhist_test/fire"
echo 'count=1000 seed=1 keys=8' > /sys/kernel/debug/rhist_test/fire
echo "# cat $ev/rhist"
cat $ev/rhist
echo "# cat $ev/hist"
cat $ev/hist
