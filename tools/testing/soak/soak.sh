#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The soak test, short form: a minute of concurrent trigger changes, file
# reads, instances and truncations while events fire on every CPU, then
# rhist unloaded under load and an exact count against hist (see
# soak.sh.inc; `make soak` runs the same for ten minutes).
SOAK_SECONDS=${SOAK_SECONDS:-60}
. /test/soak.sh.inc
