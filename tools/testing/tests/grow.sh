#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# :grow (issue 30): the core has it (rust/core/src/grow.rs), the module
# does not yet parse it (rhist.rst, "A map that grows"). Until it does,
# every text with grow is rejected as hist rejects it: the same errno,
# nothing in error_log, no trigger left.
. /test/lib.sh.inc

for text in \
	'keys=a:size=128:grow' \
	'keys=a:vals=b.max,b.avg:grow' \
	'grow:keys=a:sort=a' \
	'keys=a:grow if a > 1' \
	'keys=a:grow:x=b' \
	'keys=a:x=:grow' \
	'keys=a:grow:x=' \
	'keys=a:vals=b.quantiles:grow' \
	'name=g:keys=a:grow'; do
	compare_hist_rhist "$text"
done
[ -z "$(grep -v '^#' $EV/trigger)" ] || { cat $EV/trigger; fail "a trigger was left"; }
echo "ok grow: rejected as hist rejects it"
