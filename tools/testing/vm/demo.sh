#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make run` without a terminal: a short demo of rhist next to hist, or,
# on the drop-in kernel, of rhist as hist.
set -e
ev=events/rhist_test/rhist_sample
fire() {
	echo "# echo 'count=1000 seed=1 keys=8' > /sys/kernel/debug/rhist_test/fire"
	echo 'count=1000 seed=1 keys=8' > /sys/kernel/debug/rhist_test/fire
}
if [ ! -e $ev/rhist ]; then
	echo "# (drop-in kernel: no C hist, rhist.ko is hist)"
	echo "# echo 'hist:keys=a' >> $ev/trigger"
	echo 'hist:keys=a' >> $ev/trigger
	fire
	echo "# cat $ev/hist"
	cat $ev/hist
	exit 0
fi
echo "# echo 'rhist:keys=a' >> $ev/trigger"
echo 'rhist:keys=a' >> $ev/trigger
echo 'hist:keys=a' >> $ev/trigger
echo "# cat $ev/trigger"
cat $ev/trigger
fire
echo "# cat $ev/rhist"
cat $ev/rhist
echo "# cat $ev/hist"
cat $ev/hist
