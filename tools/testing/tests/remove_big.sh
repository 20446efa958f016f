#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Removing a trigger ('!rhist:...') allocates no map: it only needs the
# trigger's text resolved. Large vmalloc() areas are traced while a big
# trigger is created (the map: the check can fail) and removed.
. /test/lib.sh.inc

V=events/vmalloc/alloc_vmap_area
echo 'size > 1048576' > $V/filter || fail "setting the vmalloc event filter failed"
echo 1 > $V/enable || fail "enabling $V failed"
echo > trace
expect_write 'rhist:keys=a,b:vals=c:size=131072' $EV/trigger
expect_grep 'alloc_vmap_area:' trace
echo > trace
expect_write '!rhist:keys=a,b:vals=c:size=131072' $EV/trigger
echo 0 > $V/enable
expect_no_grep '^rhist:' $EV/trigger
expect_no_grep 'alloc_vmap_area:' trace
echo PASS
