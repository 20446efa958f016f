#!/bin/sh
# The runner must fail on an RCU stall report, even if the script passes.
# The report is written to the kernel's log as the RCU code prints it (a
# real stall would take the guest 21 s and more to be reported).
# guest-init: no-leak-check
echo '<3>rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:' > /dev/kmsg
exit 0
