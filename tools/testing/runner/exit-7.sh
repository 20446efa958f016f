#!/bin/sh
# The runner must pass a failing script's status through.
echo "failing on purpose"
exit 7
