#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# More keys, values and sort keys than hist takes (rhist's extension):
# an 8-key, 16-value histogram on the events fired, its entries projected
# on three keys or fewer against hist's histograms of those keys (hits
# and sums per projection), on one CPU and on all; its statistics against
# its own keys; a sort on four fields; the trigger line read back; named
# histograms; an instance's rmdir and `!rhist:` leave nothing; and past
# the limits, hist's errors.
. /test/lib.sh.inc

T=$EV/trigger
KEYS='a,b,c,s,ip,common_cpu,common_pid,d'
VALS='a,b,common_pid,common_cpu,common_type,common_flags,common_preempt_count'
VALS="$VALS,a.max,a.min,b.max,b.min,c.min,c.max,c.avg,ip.max,common_pid.max"
WIDE="keys=$KEYS:vals=$VALS:sort=a,b,c,s:size=4096"
# hist's histograms of the same events: three keys at most, two values.
H1='keys=a,b,c:vals=a,b:size=4096'
H2='keys=s,ip,common_cpu:vals=common_pid,common_cpu:size=4096'
H3='keys=common_pid,d:vals=common_type,common_cpu:size=4096'
H4='keys=a,b,c:vals=common_flags,common_preempt_count:size=4096'

# project FILE POSITIONS VALS: the entries of FILE (one a line) projected
# on the keys at POSITIONS (1-based, comma-separated), with their
# hitcounts and the values named in VALS (comma-separated) added up per
# projection; "key | hitcount | value...", sorted. A sum here stays below
# 2^53, which awk's doubles hold exactly.
project() {
	awk -v pos="$2" -v vals="$3" '
	/^\{/ {
		k = $0; sub(/ } .*/, "", k); sub(/^\{ /, "", k)
		rest = $0; sub(/^[^}]* } /, "", rest)
		n = split(k, p, ", ")
		m = split(pos, ps, ",")
		key = ""
		for (i = 1; i <= m; i++) {
			part = p[ps[i]]; sub(/ *$/, "", part)
			key = key (i > 1 ? ", " : "") part
		}
		h = rest; sub(/.*hitcount: */, "", h); sub(/ .*/, "", h)
		hits[key] += h
		nv = split(vals, vs, ",")
		for (i = 1; i <= nv; i++) {
			v = rest; sub(".*  " vs[i] ": *", "", v); sub(/ .*/, "", v)
			sum[key, i] += v
		}
	}
	END {
		for (key in hits) {
			line = key " | " hits[key]
			for (i = 1; i <= nv; i++) line = line " | " sum[key, i]
			print line
		}
	}' "$1" | sort
}

# hist_part N: the Nth histogram of hist's file (/tmp/hist).
hist_part() {
	awk -v n="$1" '/^# event histogram/ { i++ } i == n' /tmp/hist > /tmp/h$1
}

# check WHAT: rhist's histogram of $WIDE against hist's $H1..$H4.
check() {
	what=$1
	cat $EV/hist > /tmp/hist
	grep '^{' $EV/rhist > /tmp/r
	[ -s /tmp/r ] || fail "$what: no entries"
	grep -q "Dropped: [1-9]" $EV/rhist /tmp/hist && fail "$what: dropped events"
	for i in 1 2 3 4; do hist_part $i; done
	for c in "1 1,2,3 a,b" "2 4,5,6 common_pid,common_cpu" "3 7,8 common_type,common_cpu" \
		"4 1,2,3 common_flags,common_preempt_count"; do
		set -- $c
		case $1 in 1 | 4) hp=1,2,3 ;; 2) hp=1,2,3 ;; 3) hp=1,2 ;; esac
		project /tmp/h$1 $hp "$3" > /tmp/ph
		project /tmp/r "$2" "$3" > /tmp/pr
		[ -s /tmp/ph ] || fail "$what: hist's H$1 is empty"
		cmp -s /tmp/ph /tmp/pr ||
			{ diff /tmp/ph /tmp/pr | head; fail "$what: projection on keys $2 differs from hist's H$1"; }
	done
	# Each entry's statistics of its own keys are those keys: a, b, c
	# (an s32, its key sign-extended, printed unsigned), ip.
	awk '
	function val(name,   v) { v = rest; sub(".*  " name ": *", "", v); sub(/ .*/, "", v); return v }
	function key(i,   v) { v = p[i]; sub(/^[a-z_]*: */, "", v); sub(/ *$/, "", v); return v }
	function s64(s) { return length(s) < 20 ? s + 0 : substr(s, 11) - 3709551616 }
	/^\{/ {
		k = $0; sub(/ } .*/, "", k); sub(/^\{ /, "", k); split(k, p, ", ")
		rest = $0; sub(/^[^}]* } /, "", rest)
		if (val("a.max") != key(1) || val("a.min") != key(1) ||
		    val("b.max") != key(2) || val("b.min") != key(2) ||
		    val("c.min") != s64(key(3)) || val("c.max") != s64(key(3)) ||
		    val("c.avg") != s64(key(3)) || val("ip.max") != key(5) ||
		    val("common_pid.max") != key(7)) {
			print "statistics of its keys: " $0; bad = 1
		}
	}
	END { exit bad }' /tmp/r || fail "$what: statistics"
	echo "ok $what: $(wc -l < /tmp/r) entries, $(grep -c '^{' /tmp/h1) of hist's keys=a,b,c"
}

refs() {
	for h in "$H1" "$H2" "$H3" "$H4"; do expect_write "${1}hist:$h" $T; done
}

# 1. hist rejects 8 keys (silently, as any fourth); rhist takes them.
echo > error_log
expect_reject "Invalid argument" "hist:$WIDE" $T
[ "$(grep -c . error_log)" = 0 ] || { cat error_log; fail "hist logged an entry"; }
expect_write "rhist:$WIDE" $T
[ "$(grep -c . error_log)" = 0 ] || { cat error_log; fail "an entry in error_log"; }
LINE="rhist:keys=$KEYS:vals=hitcount,$VALS:sort=a,b,c,s:size=4096"
expect_grep "^$LINE \[active\]$" $T
expect_grep "^# trigger info: $LINE \[active\]$" $EV/rhist
[ "$(grep -c 'flags:$' $EV/rhist_debug)" -ge 25 ] || { cat $EV/rhist_debug; fail "rhist_debug"; }

# 2. One CPU, then all at once (17 sums per CPU).
refs
fire count=1500 seed=21 keys=40
check "one CPU"
expect_grep 'Hits: 1500$' $EV/rhist
fire count=1000 seed=22 keys=40 cpu=all
check "all CPUs"

# 3. Sorted on four fields: a descending, then b, c, s ascending.
expect_write "!rhist:$WIDE" $T
expect_write "rhist:keys=a,b,c,s:vals=b:sort=a.descending,c,b,s:size=4096" $T
fire count=800 seed=23 keys=12
# Consecutive entries in order: a descending, then c (an s32, compared
# signed: its key is printed as the u64 it is sign-extended to), then b.
awk '
function s64(s) { return length(s) < 20 ? s + 0 : substr(s, 11) - 3709551616 }
/^\{/ {
	k = $0; sub(/ } .*/, "", k); sub(/^\{ /, "", k); split(k, p, ", ")
	for (i = 1; i <= 3; i++) sub(/^[a-z]*: */, "", p[i])
	a = p[1] + 0; b = p[2] + 0; c = s64(p[3])
	if (n++ && (a > pa || (a == pa && (c < pc || (c == pc && b < pb))))) {
		print "out of order: " $0; bad = 1
	}
	pa = a; pb = b; pc = c
	print > "/tmp/v"
}
END { exit bad }' $EV/rhist || fail "not sorted on a.descending,c,b,s"
[ "$(wc -l < /tmp/v)" -gt 100 ] || fail "$(wc -l < /tmp/v) entries"
line=$(grep '^rhist:' $T)
line=${line% \[active\]}
[ "$line" = 'rhist:keys=a,b,c,s:vals=hitcount,b:sort=a.descending,c,b,s:size=4096' ] ||
	fail "trigger line [$line]"
# The trigger line, read back, removes it.
expect_write "!$line" $T
expect_no_grep '^rhist:' $T

# 4. Named histograms: the same fields join, another key does not.
expect_write "rhist:name=mf:$WIDE" $T
expect_write "rhist:name=mf:$WIDE if b > 1000" $T
echo > error_log
expect_reject "Invalid argument" "rhist:name=mf:keys=a,b,c,s,ip,common_cpu,common_pid,s:vals=$VALS if b > 1" $T
expect_grep "Named hist trigger doesn't match" error_log
expect_reject "File exists" "rhist:name=mf:$WIDE" $T
fire count=300 seed=24 keys=10
[ "$(grep -c '^# trigger info: rhist:name=mf:' $EV/rhist)" = 2 ] || fail "the named histogram"
expect_write "!rhist:name=mf:$WIDE if b > 1000" $T
expect_write "!rhist:name=mf:$WIDE" $T
refs '!'
expect_no_grep '^hist:\|^rhist:' $T
[ "$(grep -c '^# event histogram' $EV/rhist)" = 0 ] || { cat $EV/rhist; fail "rhist file"; }

# 5. In an instance: counted there, and its rmdir takes it all.
mkdir instances/mf || fail "mkdir"
I=instances/mf/$EV
expect_write "rhist:$WIDE" $I/trigger
fire count=200 seed=25 keys=10
expect_grep 'Hits: 200$' $I/rhist
[ "$(grep -c '^{' $I/rhist)" -gt 0 ] || fail "no entries in the instance"
rmdir instances/mf || fail "rmdir of the instance"
[ ! -e instances/mf ] || fail "the instance is still there"
mkdir instances/mf || fail "mkdir again"
expect_no_grep '^rhist:' instances/mf/$EV/trigger
rmdir instances/mf || fail "rmdir again"

# 6. Past the limits, and where hist's limits still hold, hist's error
# (errno, entry, caret): 9 keys, 17 values, 5 sort keys, a key of more
# than 384 bytes (d 256, a stack trace 128, s 16), a bad fourth key, a
# third sort key in a text hist takes otherwise.
for t in "keys=$KEYS,a" "keys=a:vals=$VALS,a" "keys=a:vals=$VALS,nosuch" \
	'keys=a,b,c,s:sort=a,b,c,s,hitcount' 'keys=a:vals=a,b,c:sort=a,b,c,hitcount,a' \
	'keys=d,stacktrace,s,a' 'keys=a,b,c,nosuch' 'keys=a,b:vals=c:sort=a,b,c' \
	'keys=a:vals=b,c:sort=b,c,a'; do
	compare_hist_rhist "$t"
done
expect_no_grep '^hist:\|^rhist:' $T
echo PASS
