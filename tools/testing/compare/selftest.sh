#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The comparator's own tests (hist_same.awk), on the host, with busybox's
# awk, which the guest runs it with: it must take reordered ties, and
# fail on the mistakes a sorting comparison forgave.
#
# Usage: selftest.sh CASE [canon], or no argument to list the cases.
# With "canon", the verdict is whether the two files' normal forms
# (hist_same.awk -v canon=1, what the sequence fuzzer compares) are equal:
# it must be the comparator's, case for case.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
AWK=${HIST_SAME_AWK:-busybox awk}
mode=${2:-}

head_of() { # head_of TRIGGER_INFO
	printf '# event histogram\n#\n# trigger info: %s\n#\n\n' "$1"
}
totals() { # totals HITS ENTRIES
	printf '\nTotals:\n    Hits: %s\n    Entries: %s\n    Dropped: 0\n' "$1" "$2"
}

# expect same|differ: the comparator's verdict on $tmp/c and $tmp/r.
expect() {
	if [ "$mode" = canon ]; then
		$AWK -v canon=1 -f "$here/hist_same.awk" "$tmp/c" > "$tmp/c.n"
		$AWK -v canon=1 -f "$here/hist_same.awk" "$tmp/r" > "$tmp/r.n"
		if cmp -s "$tmp/c.n" "$tmp/r.n"; then got=same; else got=differ; fi
		diff "$tmp/c.n" "$tmp/r.n" || :
	elif $AWK -f "$here/hist_same.awk" "$tmp/c" "$tmp/r" > "$tmp/out"; then
		got=same
	else
		got=differ
	fi
	[ ! -e "$tmp/out" ] || cat "$tmp/out"
	[ "$got" = "$1" ] || { echo "expected $1, got $got"; exit 1; }
}

pids() { # pids PID:HITS...: a keys=common_pid histogram of these entries
	head_of 'hist:keys=common_pid:vals=hitcount:sort=hitcount:size=2048 [active]'
	for e; do
		printf '{ common_pid: %10s } hitcount: %10s\n' "${e%:*}" "${e#*:}"
	done
	totals 6 3
}

stacks() { # stacks HIT1 HIT2: two stack trace entries
	head_of 'hist:keys=common_stacktrace:vals=hitcount:sort=hitcount:size=2048 [active]'
	printf '{ common_stacktrace:\n         schedule+0x6e/0xf0\n         do_nanosleep+0x8f/0x160\n} hitcount:          %s\n' "$1"
	printf '{ common_stacktrace:\n         schedule+0x6e/0xf0\n         worker_thread+0x10a/0x3c0\n} hitcount:          %s\n' "$2"
	totals 5 2
}

maxes() { # maxes MAX1 MAX2: onmax() with a saved field, two keys
	head_of 'hist:keys=pid:vals=hitcount:wakeup_lat=common_timestamp.usecs-$ts0:sort=hitcount:size=2048:clock=global:onmax($wakeup_lat).save(next_comm,prev_pid) [active]'
	printf '{ pid:        120 } hitcount:          2\n\tmax:         %s  next_comm: sh                                                  prev_pid:          0\n' "$1"
	printf '{ pid:        121 } hitcount:          3\n\tmax:         %s  next_comm: kworker/0:1                                         prev_pid:          0\n' "$2"
	totals 5 2
}

two_keys() { # two_keys A,B:HITS...: keys=a,b, sort=a,b.descending
	head_of 'hist:keys=a,b:vals=hitcount:sort=a,b.descending:size=2048 [active]'
	for e; do
		k=${e%:*}
		printf '{ a: %10s, b: %10s } hitcount: %10s\n' "${k%,*}" "${k#*,}" "${e#*:}"
	done
	totals 4 3
}

case ${1:-} in
identical)
	pids 101:1 102:2 100:3 > $tmp/c
	cp $tmp/c $tmp/r
	expect same ;;
reordered-ties)
	pids 101:1 102:1 100:4 > $tmp/c
	pids 102:1 101:1 100:4 > $tmp/r
	expect same ;;
swapped-unequal-keys)
	pids 101:1 102:2 100:3 > $tmp/c
	pids 102:2 101:1 100:3 > $tmp/r
	expect differ ;;
tie-with-another-entry)
	# Same sort keys in both, but one entry of the tie is another.
	pids 101:1 102:1 100:4 > $tmp/c
	pids 101:1 101:1 100:4 > $tmp/r
	expect differ ;;
stack-hitcount-moved)
	stacks 2 3 > $tmp/c
	stacks 3 2 > $tmp/r
	expect differ ;;
stack-ties-reordered)
	stacks 2 2 > $tmp/c
	# The same two entries, the other way round.
	awk 'NR >= 6 && NR <= 9 { a = a $0 "\n"; next } NR >= 10 && NR <= 13 { b = b $0 "\n"; next }
		NR == 14 { printf "%s%s", b, a } { print }' $tmp/c > $tmp/r
	cmp -s $tmp/c $tmp/r && { echo "the case did not reorder"; exit 1; }
	expect same ;;
saved-field-moved)
	maxes 1771 23 > $tmp/c
	maxes 23 1771 > $tmp/r
	expect differ ;;
second-sort-key)
	# sort=a,b.descending: a tie on both may reorder, on a alone not.
	two_keys 1,9:1 1,5:1 2,5:2 > $tmp/c
	two_keys 1,5:1 1,9:1 2,5:2 > $tmp/r
	expect differ ;;
second-sort-key-ties)
	two_keys 1,9:1 2,5:1 2,5:2 > $tmp/c
	two_keys 1,9:1 2,5:2 2,5:1 > $tmp/r
	expect same ;;
totals-differ)
	pids 101:1 > $tmp/c
	sed 's/Hits: 6/Hits: 7/' $tmp/c > $tmp/r
	expect differ ;;
header-differs)
	pids 101:1 > $tmp/c
	sed 's/size=2048/size=4096/' $tmp/c > $tmp/r
	expect differ ;;
entry-missing)
	pids 101:1 102:1 > $tmp/c
	pids 101:1 > $tmp/r
	expect differ ;;
'')
	sed -n 's/^\([a-z-]*\))$/\1/p' "$0" ;;
*)
	echo "no case $1"; exit 2 ;;
esac
