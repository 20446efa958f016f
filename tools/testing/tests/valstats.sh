#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Value statistics (.min, .max, .avg: rhist's extension, which hist
# rejects), on the events fired: each entry's numbers are computed from
# the values C's hist counts for the same events (keys=a,b: every value
# of b per a, with its hitcount), on one CPU and on all; sorting on them,
# the trigger file's text read back to remove the trigger, clear, pause
# and cont, named histograms, onmax() beside them, and the errors of what
# both reject, which stay hist's.
. /test/lib.sh.inc

T=$EV/trigger
SIX='keys=a:vals=b.min,b.max,b.avg,c.min,c.max,c.avg'

# expected: from hist's keys=a,b and keys=a,c files (/tmp/hb, /tmp/hc),
# the entry lines of $SIX, sorted. Keys are printed %10llu: c, an s32, as
# its 64 bits sign-extended, 2^64 - |c| when negative, which a double does
# not hold: its last ten digits give it. Every other number here a double
# holds exactly (a sum of b is at most 2^45 for 2^13 events).
expected() {
	awk '
	function str(l, name,   s) {
		s = l; sub(".*" name ": *", "", s); sub("[^0-9].*", "", s); return s
	}
	function num(l, name) {
		return str(l, name) + 0
	}
	function s64(s) {
		# 2^64 = 1844674407 3709551616; |c| <= 2^31: no borrow.
		return length(s) < 20 ? s + 0 : substr(s, 11) - 3709551616
	}
	FILENAME ~ /hb$/ && /^\{/ {
		a = num($0, "a"); v = num($0, "b"); h = num($0, "hitcount")
		if (!(a in hits) || v < bmin[a]) bmin[a] = v
		if (!(a in hits) || v > bmax[a]) bmax[a] = v
		bsum[a] += v * h; hits[a] += h
	}
	FILENAME ~ /hc$/ && /^\{/ {
		a = num($0, "a"); v = s64(str($0, "c")); h = num($0, "hitcount")
		if (!(a in seen) || v < cmin[a]) cmin[a] = v
		if (!(a in seen) || v > cmax[a]) cmax[a] = v
		csum[a] += v * h; seen[a] = 1
	}
	END {
		for (a in hits)
			printf "{ a: %10.0f } hitcount: %10.0f  b.min: %10.0f  b.max: %10.0f  b.avg: %10.0f  c.min: %10.0f  c.max: %10.0f  c.avg: %10.0f\n",
				a, hits[a], bmin[a], bmax[a], int(bsum[a] / hits[a]),
				cmin[a], cmax[a], int(csum[a] / hits[a])
	}' /tmp/hb /tmp/hc | sort
}

# check WHAT: rhist's entries of $SIX are the expected ones.
check() {
	grep '^{' $EV/rhist | sort > /tmp/r
	expected > /tmp/e
	[ -s /tmp/e ] || fail "$1: no entries expected"
	cmp -s /tmp/e /tmp/r || { diff /tmp/e /tmp/r | head -20; fail "$1: the statistics differ"; }
	echo "ok $1: $(wc -l < /tmp/r) entries"
}

# refs [!]: hist's triggers whose files (/tmp/hb, /tmp/hc) give the
# expected numbers.
refs() { hist_refs "${1:-}" 8192 a,b a,c; }
copy_refs() { copy_hist_refs a,b=/tmp/hb a,c=/tmp/hc; }

# 1. hist rejects the modifiers; rhist takes them.
echo > error_log
expect_reject "Invalid argument" "hist:$SIX" $T
grep -q 'Invalid field modifier' error_log || { cat error_log; fail "hist's error"; }
echo > error_log
expect_write "rhist:$SIX" $T
[ "$(grep -c . error_log)" = 0 ] || { cat error_log; fail "an entry in error_log"; }
expect_grep "^rhist:keys=a:vals=hitcount,b.min,b.max,b.avg,c.min,c.max,c.avg:sort=hitcount:size=2048 \[active\]$" $T
expect_grep "^# trigger info: rhist:keys=a:vals=hitcount,b.min,b.max,b.avg,c.min,c.max,c.avg:sort=hitcount:size=2048 \[active\]$" $EV/rhist
expect_grep '^      statistic: avg$' $EV/rhist_debug

# 2. One CPU, then all at once (each CPU's copies combined).
refs
fire count=3000 seed=11 keys=24
copy_refs
check "one CPU"
expect_grep 'Hits: 3000$' $EV/rhist
fire count=2000 seed=12 keys=24 cpu=all
copy_refs
check "all CPUs"

# 3. clear, pause, cont: the statistics start afresh.
expect_write "rhist:$SIX:clear" $T
refs '!'
refs
fire count=500 seed=13 keys=6
copy_refs
check "after clear"
expect_write "rhist:$SIX:pause" $T
expect_grep '\[paused\]' $T
fire count=500 seed=14 keys=6
check "paused"
expect_write "rhist:$SIX:cont" $T
refs '!'
refs
expect_write "rhist:$SIX:clear" $T
fire count=700 seed=15 keys=6
copy_refs
check "continued"

# 4. The trigger file's line, read back, removes it; so does the text.
line=$(grep '^rhist:' $T)
line=${line% \[active\]}
expect_write "!$line" $T
expect_no_grep '^rhist:' $T
expect_write "rhist:$SIX" $T
expect_write "!rhist:$SIX" $T
expect_no_grep '^rhist:' $T
refs '!'

# 5. Sorting: by a maximum, a signed minimum, an average, and back from
# the trigger line.
expect_write 'rhist:keys=a:vals=b.max,c.min,c.avg:sort=b.max.descending' $T
fire count=400 seed=16 keys=30
grep '^{' $EV/rhist | awk '{ sub(".*b.max: *", ""); print $1 }' > /tmp/v
sort -n -r /tmp/v > /tmp/vs
cmp -s /tmp/vs /tmp/v || { cat /tmp/v; fail "not sorted on b.max"; }
[ "$(wc -l < /tmp/v)" = 30 ] || fail "$(wc -l < /tmp/v) entries"
line=$(grep '^rhist:' $T)
line=${line% \[active\]}
[ "$line" = 'rhist:keys=a:vals=hitcount,b.max,c.min,c.avg:sort=b.max.descending:size=2048' ] ||
	fail "trigger line [$line]"
expect_write "!$line" $T
for s in c.min c.avg; do
	expect_write "rhist:keys=a:vals=b.max,c.min,c.avg:sort=$s" $T
	fire count=400 seed=16 keys=30
	grep '^{' $EV/rhist | awk -v s=$s '{ sub(".*" s ": *", ""); print $1 }' > /tmp/v
	sort -n /tmp/v > /tmp/vs
	cmp -s /tmp/vs /tmp/v || { cat /tmp/v; fail "not sorted on $s"; }
	expect_write "!rhist:keys=a:vals=b.max,c.min,c.avg:sort=$s" $T
done

# 6. Triggers that are not the same histogram: another statistic is
# another trigger, the same one exists already, a named histogram takes
# only the same statistics.
expect_write 'rhist:keys=a:vals=b.max' $T
expect_write 'rhist:keys=a:vals=b.min' $T
expect_reject "File exists" 'rhist:keys=a:vals=b.max' $T
expect_write '!rhist:keys=a:vals=b.max' $T
expect_write '!rhist:keys=a:vals=b.min' $T
expect_write 'rhist:name=st:keys=a:vals=b.max' $T
echo > error_log
expect_reject "Invalid argument" 'rhist:name=st:keys=a:vals=b.min if b > 1' $T
expect_grep "Named hist trigger doesn't match" error_log
expect_write 'rhist:name=st:keys=a:vals=b.max if b > 1' $T
fire count=300 seed=17 keys=5
[ "$(grep -c '^# trigger info: rhist:name=st:' $EV/rhist)" = 2 ] || fail "the named histogram"
expect_write '!rhist:name=st:keys=a:vals=b.max if b > 1' $T
expect_write '!rhist:name=st:keys=a:vals=b.max' $T

# 7. onmax() beside them: its max of b is b.max, as hist's onmax() has it.
expect_write 'hist:keys=a:m=b:onmax($m).save(ip)' $T
expect_write 'rhist:keys=a:m=b:vals=b.max:onmax($m).save(ip)' $T
fire count=600 seed=18 keys=10
awk '/^\{/ { sub(/^\{ a: */, ""); a = $1 + 0 }
	/^\tmax:/ { sub(/^\tmax: */, ""); print a, $1 + 0 }' $EV/hist | sort > /tmp/c
awk '/^\{/ { sub(/^\{ a: */, ""); a = $1 + 0; sub(/.*b\.max: */, ""); m = $1 + 0 }
	/^\tmax:/ { sub(/^\tmax: */, ""); print a, $1 + 0; if ($1 + 0 != m) print "b.max", m }' $EV/rhist | sort > /tmp/r
cmp -s /tmp/c /tmp/r || { diff /tmp/c /tmp/r | head; fail "onmax() and b.max"; }
[ "$(wc -l < /tmp/r)" = 10 ] || fail "onmax(): $(wc -l < /tmp/r) entries"
: > $T

# 8. What both reject keeps hist's error (errno, entry, caret).
for t in 'keys=a:vals=s.max' 'keys=a:vals=b.max:sort=nosuch' 'keys=a:vals=b.maxi' \
	'keys=nosuch:vals=b.max' 'keys=a:vals=a,b,c,b.max,nosuch' 'keys=a:vals=b.percent.max' \
	'keys=a:vals=b.min,b.max,b.avg,c.min,c.max,c.avg,a.max,a,a,a,a,a,a,a,a,a,a' \
	'keys=a:vals=$nosuch.max'; do
	compare_hist_rhist "$t"
done
expect_no_grep '^hist:\|^rhist:' $T
echo PASS
