#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Boots, loads the modules (and so runs their KUnit suites), and stops:
# the one boot of `make check` in which KUnit runs (run.sh).
# run.sh: kunit
exit 0
