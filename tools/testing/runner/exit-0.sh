#!/bin/sh
# The runner must report a passing script as status 0.
exit 0
