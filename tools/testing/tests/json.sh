#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The rhist_json file (rhist's extension): one JSON document of every
# rhist histogram of the event, checked by json_check (a strict RFC 8259
# checker, staged for the guest, which flattens the document to one line
# per scalar) and against the rhist text file entry by entry: the keys,
# the values, the totals. A string key with odd bytes (control, quote,
# backslash, invalid UTF-8) comes out exact; a map of 131072 entries
# reads whole, in any read size, in a buffer of a page or so.
. /test/lib.sh.inc

T=$EV/trigger
J=$EV/rhist_json

command -v json_check > /dev/null || fail "no json_check on PATH"

# flat FILE: FILE checked and flattened (to /tmp/flat).
flat() {
	json_check -i < "$1" > /tmp/flat || { head -c 600 "$1"; fail "$1 is not JSON"; }
}

# field PATH: the value at PATH of /tmp/flat.
field() {
	awk -v p="$1" '$1 == p { sub(/^[^ ]* /, ""); print; exit }' /tmp/flat
}

# 1. No trigger: an empty document, in every event directory.
[ "$(cat $J)" = '{"version":1,"histograms":[]}' ] || { cat $J; fail "empty document"; }
[ -r events/sched/sched_switch/rhist_json ] || fail "no rhist_json in sched_switch"

# 2. Two histograms: numbers, strings and an execname, statistics.
expect_write 'rhist:keys=a:vals=hitcount,b,c.min,c.max:sort=a' $T
expect_write 'rhist:keys=s,common_pid.execname:vals=b.hex if a < 20' $T
fire count=4000 seed=5 keys=40
cat $EV/rhist > /tmp/text
cat $J > /tmp/json
flat /tmp/json
[ "$(field .version)" = 1 ] || fail "version"
[ "$(field '.histograms#')" = 2 ] || fail "$(field '.histograms#') histograms"
[ "$(field '.histograms[0].trigger')" = '"rhist:keys=a:vals=hitcount,b,c.min,c.max:sort=a:size=2048 [active]"' ] ||
	fail "trigger [$(field '.histograms[0].trigger')]"
[ "$(field '.histograms[1].trigger')" = '"rhist:keys=s,common_pid.execname:vals=hitcount,b.hex:sort=hitcount:size=2048 if a < 20 [active]"' ] ||
	fail "trigger [$(field '.histograms[1].trigger')]"
[ "$(field '.histograms[0].values[2].statistic')" = '"min"' ] || fail "statistic"
[ "$(field '.histograms[0].values[2].signed')" = true ] || fail "signed"
[ "$(field '.histograms[1].keys[1].modifier')" = '"execname"' ] || fail "modifier"

# The text's histogram N (from 1), its entries and totals: one line each,
# the numbers in their order (keys and values, a string as it is, a
# hex value in decimal: b's when HEXB is 1).
text_of() {
	awk -v n="$1" '/^# event histogram/ { h++ } h == n' /tmp/text | awk -v hexb="$2" '
	function hex(s,   v, i) {
		v = 0
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	/^\{/ {
		line = $0; out = ""
		# The keys: "name: value" pieces up to "}".
		k = substr(line, 3, index(line, "}") - 3)
		while (match(k, /[a-z_]+: /)) {
			k = substr(k, RSTART + RLENGTH)
			v = k; sub(/,  ?[a-z_]+: .*/, "", v); sub(/ *$/, "", v)
			if (v ~ /\[ *[0-9]+\]$/) {
				# execname: "comm [pid]"
				pid = v; sub(/.*\[ */, "", pid); sub(/\]/, "", pid)
				sub(/ *\[.*/, "", v); v = pid " \"" v "\""
			} else if (v !~ /^ *[0-9]+$/) {
				v = "\"" v "\""
			}
			sub(/^ */, "", v)
			out = out " " v
		}
		vals = substr(line, index(line, "}") + 1)
		while (match(vals, /[a-z_.]+: +[-0-9a-f]+/)) {
			v = substr(vals, RSTART, RLENGTH); vals = substr(vals, RSTART + RLENGTH)
			name = v; sub(/:.*/, "", name); sub(/.*: +/, "", v)
			out = out " " (name == "b" && hexb ? hex(v) : v)
		}
		print "E" out
	}
	/^    (Hits|Entries|Dropped):/ { print $1, $2 }'
}

# The same from histogram N (from 0) of /tmp/flat.
json_of() {
	awk -v n="$1" '
	BEGIN { pre = ".histograms[" n "]." }
	index($1, pre) != 1 { next }
	{ p = substr($1, length(pre) + 1); v = $0; sub(/^[^ ]* /, "", v) }
	p ~ /^entries\[[0-9]+\]\./ {
		i = p; sub(/^entries\[/, "", i); sub(/\].*/, "", i)
		if (i != cur) { if (cur != "") print "E" out; cur = i; out = "" }
		# A key: its value, and its text (the execname) after it.
		if (p ~ /\.key\[[0-9]+\]\.(value|text)$/ || p ~ /\.values\[[0-9]+\]$/)
			out = out " " v
	}
	p ~ /^totals\.(hits|entries|dropped)$/ {
		if (cur != "") { print "E" out; cur = "" }
		t = substr(p, 8); t = toupper(substr(t, 1, 1)) substr(t, 2)
		print t ":", v
	}' /tmp/flat
}

check_hist() {
	text_of $(($1 + 1)) "$2" > /tmp/t
	json_of $1 > /tmp/j
	[ "$(grep -c '^E ' /tmp/t)" -gt 0 ] || fail "histogram $1: no entries"
	cmp -s /tmp/t /tmp/j || { diff /tmp/t /tmp/j | head -20; fail "histogram $1: text and JSON differ"; }
	echo "ok histogram $1: $(grep -c '^E ' /tmp/t) entries agree"
}
check_hist 0 0
check_hist 1 1
# The execname: the firing shell's.
grep -q '^\.histograms\[1\]\.entries\[0\]\.key\[1\]\.text "sh"$' /tmp/flat ||
	{ grep 'key\[1\]' /tmp/flat | head -3; fail "execname"; }

# 3. Paused, and removed: the document follows.
expect_write 'rhist:keys=s,common_pid.execname:vals=b.hex:pause if a < 20' $T
grep -q '"rhist:keys=s.* if a < 20 \[paused\]"' $J || fail "paused"
expect_write '!rhist:keys=s,common_pid.execname:vals=b.hex if a < 20' $T
flat $J
[ "$(field '.histograms#')" = 1 ] || fail "after removal"
expect_write '!rhist:keys=a:vals=hitcount,b,c.min,c.max:sort=a' $T

# 4. Odd bytes in a string key: task_rename's newcomm, set through
# /proc/self/comm (control characters, a quote, a backslash, bytes that
# are not UTF-8).
R=events/task/task_rename
if [ -d $R ]; then
	expect_write 'rhist:keys=newcomm' $R/trigger
	(printf 'a\001"\\\377\351b\t' > /proc/self/comm)
	(printf 'plain' > /proc/self/comm)
	flat $R/rhist_json
	grep -q '\.key\[0\]\.value "a\\x01\\x22\\x5c\\xff\\xe9b\\x09"$' /tmp/flat ||
		{ cat /tmp/flat; fail "the odd bytes"; }
	grep -q '\.key\[0\]\.value "plain"$' /tmp/flat || fail "plain comm"
	grep -q '\\u00ff\\u00e9b\\t' $R/rhist_json || fail "escapes"
	expect_write '!rhist:keys=newcomm' $R/trigger
	echo "ok odd bytes"
else
	echo "skip odd bytes: no $R"
fi

# 5. A big map: 131072 entries, and events dropped; the document reads
# whole at any read size, the same bytes, and agrees with the text.
expect_write 'rhist:keys=a:vals=b:size=131072' $T
fire count=150000 seed=7 keys=4294967295
t0=$(cat /sys/kernel/debug/rhist_test/now_ns)
dd if=$J bs=65536 2> /dev/null > /tmp/big
t1=$(cat /sys/kernel/debug/rhist_test/now_ns)
dd if=$J bs=1000 2> /dev/null | cmp -s - /tmp/big || fail "read in 1000-byte pieces"
json_check -i -d 4 < /tmp/big > /tmp/flat || fail "the big document"
n=$(field '.histograms[0].entries#')
[ "$n" = 131072 ] || fail "$n entries"
[ "$(field '.histograms[0].totals.entries')" = 131072 ] || fail "totals.entries"
[ "$(field '.histograms[0].totals.hits')" -gt 131072 ] || fail "hits"
[ "$(field '.histograms[0].totals.dropped')" -gt 0 ] || fail "nothing dropped"
hits=$(field '.histograms[0].totals.hits')
dropped=$(field '.histograms[0].totals.dropped')
[ $((hits + dropped)) = 150000 ] || fail "hits $hits + dropped $dropped"
# The text, read once: one record, whose buffer doubles until it fits
# (the text is written once, and copied by the try that fits).
t2=$(cat /sys/kernel/debug/rhist_test/now_ns)
cat $EV/rhist > /tmp/bigtext
t3=$(cat /sys/kernel/debug/rhist_test/now_ns)
grep -q "Hits: $hits$" /tmp/bigtext || fail "the text's hits"
grep -q "Dropped: $dropped$" /tmp/bigtext || fail "the text's drops"
[ "$(grep -c '^{' /tmp/bigtext)" = 131072 ] || fail "the text's entries"
# A seek into the middle reads on from there (the file's reads may be
# short: head counts the bytes).
dd if=$J bs=4096 skip=100 2> /dev/null | head -c 12288 > /tmp/mid
[ "$(wc -c < /tmp/mid)" = 12288 ] || fail "$(wc -c < /tmp/mid) bytes after a seek"
tail -c +409601 /tmp/big | head -c 12288 | cmp -s - /tmp/mid || fail "a seek"
echo "ok big map: $(wc -c < /tmp/big) bytes, $n entries, read in $(((t1 - t0) / 1000000)) ms" \
	"(the text: $(wc -c < /tmp/bigtext) bytes in $(((t3 - t2) / 1000000)) ms)"
# A read that goes on after its histogram was removed fails (EAGAIN),
# rather than go on with another's.
exec 3< $J
head -c 5000 <&3 > /dev/null
expect_write '!rhist:keys=a:vals=b:size=131072' $T
out=$(cat <&3 2>&1 > /dev/null) && fail "a read after the removal succeeded"
case $out in
*"Resource temporarily unavailable"*) ;;
*) fail "after the removal: $out" ;;
esac
exec 3<&-
echo "ok removed while read"

# 6. Nor does a read go on across a clear, or across a removal followed by
# a trigger of the same size (whose state kmalloc() usually gives back at
# the same address): a document describes one histogram at one moment.
# read_across WHAT: reads a piece of the document, runs the commands
# WHAT names, fires, and the rest of the read must fail with EAGAIN.
read_across() {
	exec 3< $J
	head -c 4096 <&3 > /dev/null
	case $1 in
	clear) expect_write 'rhist:keys=a:vals=b:clear' $T ;;
	replace)
		expect_write '!rhist:keys=a:vals=b' $T
		expect_write 'rhist:keys=a:vals=b' $T
		;;
	esac
	fire count=50 seed=12 keys=2000
	out=$(cat <&3 2>&1 > /dev/null) && fail "a read across a $1 succeeded"
	case $out in
	*"Resource temporarily unavailable"*) ;;
	*) fail "across a $1: $out" ;;
	esac
	exec 3<&-
	# A new read gives the new state, whole.
	flat $J
	[ "$(field '.histograms[0].totals.hits')" = 50 ] || fail "after the $1: $(field '.histograms[0].totals.hits') hits"
	echo "ok $1 while read"
}
expect_write 'rhist:keys=a:vals=b' $T
fire count=4000 seed=11 keys=2000
read_across clear
fire count=4000 seed=11 keys=2000
read_across replace
expect_write '!rhist:keys=a:vals=b' $T
echo PASS
