#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# poll() on the rhist file behaves as on the hist file (event_hist_poll()):
# readable while the histograms changed since the file was last read,
# EPOLLPRI once they changed since it was last read or polled, and a
# poller asleep is woken by the event path. hist_client (on PATH, see
# tools/testing/clients/) does the poll() and prints what it returned.
. /test/lib.sh.inc

# poll_of FILE [read] MS: what poll() returned, as "poll: IN PRI".
poll_of() { hist_client poll "$@" || fail "hist_client poll $* failed"; }

expect_write 'hist:keys=a' $EV/trigger
expect_write 'rhist:keys=a' $EV/trigger
fire count=10 seed=1 keys=4

for f in hist rhist; do
	# Opened after the hits: readable, nothing new since the open.
	got=$(poll_of $EV/$f 0)
	[ "$got" = "poll: IN" ] || fail "$f, opened: $got"
	# Read: nothing to report until the next event.
	got=$(poll_of $EV/$f read 300)
	[ "$got" = "poll: none" ] || fail "$f, read: $got"
	# Read, then asleep in poll() when an event comes.
	(sleep 1; fire count=1 seed=2 keys=4) &
	got=$(poll_of $EV/$f read 20000)
	wait
	[ "$got" = "poll: IN PRI" ] || fail "$f, woken: $got"
done

# Without a trigger there is nothing to read, on either.
: > $EV/trigger
for f in hist rhist; do
	got=$(poll_of $EV/$f 0)
	[ "$got" = "poll: none" ] || fail "$f, no trigger: $got"
done
echo "poll: ok"
