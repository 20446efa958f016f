#!/bin/sh
# The runner must pass a failing script's status through.
# guest-init: no-leak-check
echo "failing on purpose"
exit 7
