#!/bin/sh
# The runner must fail when the guest kernel WARNs, even if the script passes.
# guest-init: no-leak-check
echo 1 > /sys/kernel/debug/rhist_test/warn
exit 0
