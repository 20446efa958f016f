#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Percentiles (.quantiles: rhist's extension, which hist rejects), on the
# events fired: every quantile of every entry, and of all entries in the
# line after the Totals, is checked against the exact nearest-rank
# quantile computed from the values C's hist counts for the same events
# (keys=a,b: every value of b per a with its hitcount; keys=b: all of
# them): within 1%, or, where the sketches' pool ran dry, a range
# [low,high] that holds it. Then clear, the trigger line read back, named
# histograms sharing the sketches, the errors of what both reject, which
# stay hist's, and sorting by a quantile. (.percentiles is a text hist
# takes, as .percent.)
. /test/lib.sh.inc

T=$EV/trigger
Q='keys=a:vals=b.quantiles'

# refs [!] SIZE: hist's triggers whose files (/tmp/hb, /tmp/hu) give the
# exact quantiles, of SIZE entries: room for the pairs of a and b that a
# section fires (up to 12,000, in 5). A larger map only costs C's
# preallocation (16384 entries take seconds to make and free), and
# copy_refs fails on a drop.
refs() { hist_refs "$1" "$2" a,b b; }
copy_refs() { copy_hist_refs a,b=/tmp/hb b=/tmp/hu; }

# check WHAT [FILE]: every quantile of rhist's entries (FILE, the rhist
# file by default) and of its summary line against hist's values.
check() {
	f=${2:-$EV/rhist}
	grep '^{\|^    Percentiles:' $f > /tmp/r
	[ -s /tmp/r ] || fail "$1: no entries"
	awk '
	function num(l, name,   s) {
		s = l; sub(".*" name ": *", "", s); sub("[^0-9].*", "", s); return s + 0
	}
	function col(l, name,   s) {
		s = l; sub(".*" name ": *", "", s); sub(" .*", "", s); return s
	}
	# The nearest rank of q (ppm) among n: max(1, ceil(q n / 10^6)).
	function rank(q, n,   k) {
		k = int((q * n + 999999) / 1000000); return k < 1 ? 1 : k
	}
	# A printed quantile s against the exact x: within 1%, or a range
	# that holds x.
	function ok(s, x,   r) {
		if (s ~ /^\[[0-9]+,[0-9]+\]$/) {
			gsub(/[\[\]]/, "", s); split(s, r, ",")
			ranges++
			# 2^64 - 1 is past a double: the high end is then no bound.
			return r[1] + 0 <= x && (length(r[2]) >= 20 || x <= r[2] + 0)
		}
		if (s !~ /^[0-9]+$/) return 0
		d = s - x; if (d < 0) d = -d
		return d <= x / 100
	}
	FILENAME ~ /hb$/ && /^\{/ {
		a = num($0, "a"); i = ++n[a]
		v[a, i] = num($0, "b"); c[a, i] = num($0, "hitcount"); tot[a] += c[a, i]
	}
	FILENAME ~ /hu$/ && /^\{/ {
		i = ++un; uv[i] = num($0, "b"); uc[i] = num($0, "hitcount"); ut += uc[i]
	}
	FILENAME ~ /\/r$/ {
		split("500000 900000 990000 999000", qs, " ")
		split("p50 p90 p99 p999", ls, " ")
		all = ($0 ~ /^    Percentiles:/)
		if (!all) { a = num($0, "a"); lines++ }
		for (j = 1; j <= 4; j++) {
			s = col($0, "b\\." ls[j])
			if (all) {
				k = rank(qs[j], ut); m = 0
				for (i = 1; i <= un; i++) { m += uc[i]; if (m >= k) break }
				x = uv[i]
			} else {
				k = rank(qs[j], tot[a]); m = 0
				for (i = 1; i <= n[a]; i++) { m += c[a, i]; if (m >= k) break }
				x = v[a, i]
			}
			checked++
			if (!ok(s, x)) { print "bad " ls[j] ": " s " vs " x ": " $0; bad++ }
		}
	}
	END {
		printf "%d entries, %d quantiles, %d ranges\n", lines, checked, ranges
		exit bad > 0
	}' /tmp/hb /tmp/hu /tmp/r > /tmp/out || { head -20 /tmp/out; fail "$1: quantiles differ"; }
	echo "ok $1: $(tail -1 /tmp/out)"
}

# 1. hist takes .percentiles (as .percent) and rhist as hist does; hist
# rejects .quantiles, rhist takes it.
compare_hist_rhist 'keys=a:vals=b.percentiles'
echo > error_log
expect_reject "Invalid argument" "hist:$Q" $T
grep -q 'Invalid field modifier' error_log || { cat error_log; fail "hist's error"; }
echo > error_log
expect_write "rhist:$Q" $T
[ "$(grep -c . error_log)" = 0 ] || { cat error_log; fail "an entry in error_log"; }
expect_grep "^rhist:keys=a:vals=hitcount,b.quantiles:sort=hitcount:size=2048 \[active\]$" $T
expect_grep '^      statistic: quantiles$' $EV/rhist_debug
expect_grep '^      sketch memory per entry: 512 bytes of index, and 512 bytes per page it takes$' $EV/rhist_debug
expect_grep '^      sketch pool: 2048 sketches, 8192 pages, 5243000 bytes$' $EV/rhist_debug
# No events yet: the summary's quantiles are 0, and no page is used.
expect_grep '^    Percentiles:  b.p50:          0 .*  pages: 0/8192  unplaced: 0$' $EV/rhist

# 2. One CPU, then all at once.
refs "" 16384
fire count=3000 seed=21 keys=24
copy_refs
check "one CPU"
expect_grep 'Hits: 3000$' $EV/rhist
fire count=3000 seed=22 keys=24 cpu=all
copy_refs
check "all CPUs"
grep -q '^    Percentiles: .*  unplaced: 0$' $EV/rhist || fail "unplaced values"

# 3. clear: the sketches start afresh, their pages given back.
expect_write "rhist:$Q:clear" $T
expect_grep '  pages: 0/8192  unplaced: 0$' $EV/rhist
refs '!' 16384
refs "" 2048
fire count=800 seed=23 keys=6
copy_refs
check "after clear"

# 4. The trigger file's line, read back, removes it.
line=$(grep '^rhist:' $T)
line=${line% \[active\]}
expect_write "!$line" $T
expect_no_grep '^rhist:' $T
refs '!' 2048

# 5. A pool that runs dry: 100 entries of a map of 128, 512 pages, values
# over some 8 powers of two each. The quantiles it hides print as ranges that
# hold them; every event still counts.
refs "" 16384
expect_write "rhist:$Q:size=128" $T
fire count=12000 seed=24 keys=100
copy_refs
check "a dry pool"
expect_grep 'Hits: 12000$' $EV/rhist
grep -q '  pages: 512/512  unplaced: [1-9][0-9]*$' $EV/rhist || { tail -3 $EV/rhist; fail "not dry"; }
grep -q '^{.*: *\[[0-9]*,[0-9]*\]' $EV/rhist || fail "no range printed"
expect_write "!rhist:$Q:size=128" $T
refs '!' 16384

# 6. Named histograms share the map and its sketches.
refs "" 4096
expect_write "rhist:name=pq:$Q" $T
echo > error_log
expect_reject "Invalid argument" "rhist:name=pq:keys=a:vals=b.max if b > 1" $T
expect_grep "Named hist trigger doesn't match" error_log
expect_write "rhist:name=pq:$Q if b > 1" $T
fire count=2000 seed=25 keys=12
copy_refs
[ "$(grep -c '^# trigger info: rhist:name=pq:' $EV/rhist)" = 2 ] || fail "the named histogram"
# Both triggers record every event with b > 1 (all of them, as good as
# surely) into the one histogram: hitcounts twice hist's.
awk '/^# event histogram/ { n++ } n == 1' $EV/rhist > /tmp/n1
awk '/^# event histogram/ { n++ } n == 2' $EV/rhist > /tmp/n2
grep '^{\|Percentiles' /tmp/n1 > /tmp/n1e
grep '^{\|Percentiles' /tmp/n2 > /tmp/n2e
cmp -s /tmp/n1e /tmp/n2e || fail "the named triggers print apart"
expect_grep 'Hits: 4000$' /tmp/n1
check "named" /tmp/n1
expect_write "!rhist:name=pq:$Q if b > 1" $T
expect_write "!rhist:name=pq:$Q" $T
refs '!' 4096

# 7. What both reject keeps hist's error (errno, entry, caret): a signed
# value, sorting on a sketch, a string, seventeen values.
for t in 'keys=a:vals=c.quantiles' 'keys=a:vals=b.quantiles:sort=b.quantiles' \
	'keys=a:vals=s.quantiles' \
	'keys=a:vals=b.quantile' \
	'keys=a:vals=b.min,b.max,b.avg,b.quantiles,a.max,a.quantiles,a.min,b,b,b,b,b,b,b,b,b,b'; do
	compare_hist_rhist "$t"
done
expect_no_grep '^hist:\|^rhist:' $T

# 8. Sorting by a quantile (rhist's extension: hist takes no .quantiles
# value, so no text it takes changes): the column sorted on is in order
# as printed, first or second key, and rhist_json lists the entries in
# the same order. With keys=a.buckets=5 and vals=a.quantiles, an
# entry's p99 is the largest a of its bucket that fired: all differ.
# column FIELD: the values of FIELD (b.p99) in the rhist file's order.
column() {
	awk -v f="$1:" '/^\{/ { for (i = 1; i <= NF; i++) if ($i == f) print $(i + 1) }' $EV/rhist
}
Q2='keys=a.buckets=5:vals=a.quantiles:sort=a.p99.descending'
expect_write "rhist:$Q2" $T
fire count=3000 seed=21 keys=100
column a.p99 > /tmp/col
[ "$(grep -c . /tmp/col)" = 20 ] || { cat $EV/rhist; fail "sort=a.p99: not 20 entries"; }
sort -rnu /tmp/col | cmp -s - /tmp/col || { cat $EV/rhist; fail "the a.p99 column is not in descending order"; }
expect_grep "^# trigger info: rhist:keys=a.buckets=5:vals=hitcount,a.quantiles:sort=a.p99.descending:size=2048 \[active\]$" $EV/rhist
# The JSON's entries: the same keys in the same order.
sed -n 's/^{ a: ~ \([0-9]*\)-.*/\1/p' $EV/rhist > /tmp/text-order
tr '{' '\n' < $EV/rhist_json | sed -n 's/^"value":\([0-9]*\),"text":"~ [0-9]*-[0-9]*"}.*/\1/p' > /tmp/json-order
[ "$(grep -c . /tmp/json-order)" = 20 ] || fail "rhist_json: $(grep -c . /tmp/json-order) entries read"
cmp -s /tmp/text-order /tmp/json-order ||
	{ paste /tmp/text-order /tmp/json-order | head; fail "rhist_json's order is not the rhist file's"; }
expect_write "!rhist:$Q2" $T
# b's quantiles over many keys (ties allowed), ascending, as a second key.
Q3='keys=a:vals=b.quantiles:sort=hitcount,b.p50'
expect_write "rhist:$Q3" $T
fire count=3000 seed=22 keys=30
awk '/^\{/ { for (i = 1; i <= NF; i++) { if ($i == "hitcount:") h = $(i + 1); if ($i == "b.p50:") print h, $(i + 1) } }' \
	$EV/rhist > /tmp/col
[ "$(grep -c . /tmp/col)" = 30 ] || { cat $EV/rhist; fail "sort=hitcount,b.p50: not 30 entries"; }
sort -n -k1,1 -k2,2 /tmp/col | cmp -s - /tmp/col || { cat /tmp/col; fail "hitcount, then b.p50, not in order"; }
expect_write "!rhist:$Q3" $T
echo PASS
