#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make fuzz-guest`: every text T of /test/fuzz-texts.txt
# (gen.py's output) is written as hist:T and as rhist:T to
# rhist_test:rhist_sample's trigger file. Both must accept it or reject it
# with the same errno and the same error_log entries (rhist's command is
# "rhist:T", one column longer); when both accept, the same events must
# give the same hist and rhist files (and hist_debug, rhist_debug).
# Each difference is one line "DIFF kind: [T] ..."; the last line is
# "fuzz-guest: N texts, D differences, G known gaps, B not compared for
# C's bug, E extensions (seed S)"; exits 1 when D > 0. A known gap (a text
# hist takes that uses what rhist does not read; there is none now) would
# be shown as "GAP ..." and counted apart; so is a text that would make C
# read its own stack into a key and warn, which only rhist gets ("CBUG
# ...", see string_bucket), and a text rhist takes as one of its
# extensions, which hist rejects ("EXT ...": value statistics or more
# keys, values or sort keys, see ext_check; common_comm, see comm_check).
#
# The inner loop forks only to copy tracefs files (busybox's read takes
# minutes over a large C hist file) and when two files differ.
. /test/lib.sh.inc

TEXTS=/test/fuzz-texts.txt
T=$EV/trigger
n=0 d=0 both=0 gaps=0 cbugs=0 exts=0 seed=? verbose=
# FUZZ_VERBOSE=1 on the host: every text's outcome, not only differences.
[ ! -e /test/fuzz-verbose ] || verbose=1

# diff KIND TEXT DETAILS: report and count one difference.
diff_() {
	echo "DIFF $1: [$2] $3"
	d=$((d + 1))
	eval "k_$1=\$((\${k_$1:-0} + 1))"
}

# write SIDE TEXT: writes "SIDE:TEXT" to the trigger file after clearing
# error_log; sets rc (ok or busybox's errno text), msgs (the error_log
# entries' locations and messages, "SIDE:" dropped) and log (msgs with
# each entry's command and caret). A command "SIDE:TEXT" is shown as
# "@TEXT" and its caret's column counted from TEXT (negative inside
# "SIDE:", so that C's "hist:" and rhist's "rhist:" compare as errors.sh
# does), but for column 0, "c0", where both put a substring not found.
write() {
	echo > error_log
	rc=ok
	if ! echo "$1:$2" >> $T 2> /tmp/err; then
		rc=?
		IFS= read -r rc < /tmp/err
		rc=${rc##*: }
	fi
	log= msgs= pre=0
	while IFS= read -r l; do
		case "$l" in
		"  Command: $1:"*) log="$log @${l#  Command: $1:}"; pre=$((${#1} + 1)) ;;
		"  Command: "*) log="$log ${l#  Command: }"; pre=0 ;;
		*" error: "*)
			l=${l#*\] }
			l=${l#$1:}
			l=${l#rhist_test:rhist_sample: error: }
			msgs="$msgs; $l"
			log="$log; $l |"
			;;
		*^)
			p=$((${#l} - 12))
			if [ $pre = 0 ]; then :; elif [ $p = 0 ]; then p=c0; else p=$((p - pre)); fi
			log="$log ^$p"
			;;
		*) log="$log $l" ;;
		esac
	done < error_log
	[ -n "$log" ] || log="; (no entry)"
	log=${log#; }
	msgs=${msgs#; }
}

# same A B: compares two files line by line, the trigger info line and the
# hist_data address masked; sets la and lb to the first lines that differ.
same() {
	exec 3< "$1" 4< "$2"
	sm=0
	while :; do
		la= lb=
		IFS= read -r la <&3; ea=$?
		IFS= read -r lb <&4; eb=$?
		[ $ea = 0 ] || [ $eb = 0 ] || [ -n "$la$lb" ] || { sm=1; break; }
		case "$la" in
		"# trigger info: hist:"*) la="# trigger info: rhist:${la#\# trigger info: hist:}" ;;
		"hist_data: "*) la="hist_data: (masked)" ;;
		esac
		case "$lb" in "hist_data: "*) lb="hist_data: (masked)" ;; esac
		[ "$la" = "$lb" ] && [ $ea = $eb ] || break
	done
	exec 3<&- 4<&-
	[ $sm = 1 ]
}

# compare KIND CFILE RFILE TEXT: the C file and rhist's, equal line for
# line (same, no fork), or else but for the order of entries whose sort
# keys print the same, which C leaves to its hash table (hist_same).
compare() {
	cat $EV/$2 > /tmp/c
	cat $EV/$3 > /tmp/r
	same /tmp/c /tmp/r && return
	sed 's/^# trigger info: hist:/# trigger info: rhist:/; s/^hist_data: .*/hist_data: (masked)/' \
		/tmp/c > /tmp/cs
	sed 's/^hist_data: .*/hist_data: (masked)/' /tmp/r > /tmp/rs
	hist_same /tmp/cs /tmp/rs > /tmp/why && return
	diff_ "$1" "$4" "$(head -8 /tmp/why | tr '\n\t' '  ')"
}

# comm_text TEXT: whether TEXT names common_comm, or comm or COMM as a
# word: rhist's extension (Linux 6.16's common_comm, the task's name),
# which hist 6.12 rejects.
comm_text() {
	case "$1" in
	*common_comm* | comm | COMM | comm[!A-Za-z0-9_]* | COMM[!A-Za-z0-9_]* | \
	*[!A-Za-z0-9_]comm | *[!A-Za-z0-9_]COMM | \
	*[!A-Za-z0-9_]comm[!A-Za-z0-9_]* | *[!A-Za-z0-9_]COMM[!A-Za-z0-9_]*)
		return 0 ;;
	esac
	return 1
}

# comm_check TEXT: TEXT, with common_comm, which hist rejected because it
# found no such field (hmsgs) and rhist took (attached): its events are
# fired and its file read, and it goes.
comm_check() {
	exts=$((exts + 1))
	echo "EXT common_comm: [$1]"
	case "$hmsgs" in
	*"Couldn't find field"* | *"Couldn't parse field variable"*) ;;
	*) diff_ ext "$1" "hist: $hrc | $hlog" ;;
	esac
	fire count=200 seed=$n keys=40
	cat $EV/rhist > /tmp/r
	grep -q '^    Hits: ' /tmp/r || diff_ ext "$1" "no Totals in rhist's file"
	rx=ok
	echo "!rhist:$1" >> $T 2> /tmp/err || { IFS= read -r rx < /tmp/err; rx=${rx##*: }; }
	[ "$rx" = ok ] || diff_ remove "$1" "rhist: $rx"
}

# string_bucket TEXT: whether TEXT applies .log2 or .buckets to a string
# field (s or d), a stack trace or hitcount anywhere; sets key. For a
# string, C makes such a key the string's size, 256 bytes, and copies
# them from the 8-byte value on its stack (event_hist_trigger()), so its
# entries split on whatever the stack holds. For all, parsing or printing the field
# warns in hist_field_name(), whose operand is NULL. Such a text goes to
# rhist only, which must take it or reject it cleanly.
string_bucket() {
	key=
	case "$1" in
	[sd].log2* | *[=,:+*/\(-][sd].log2* | [sd].buckets* | *[=,:+*/\(-][sd].buckets* | \
	*[sS][tT][aA][cC][kK][tT][rR][aA][cC][eE].log2* | \
	*[sS][tT][aA][cC][kK][tT][rR][aA][cC][eE].buckets* | \
	*hitcount.log2* | *hitcount.buckets*)
		key=$1 ;;
	esac
	[ -n "$key" ]
}

# stat_text TEXT: whether TEXT has a statistic (.min, .max, .avg or
# .quantiles) that may end a value: rhist's extension, which hist rejects.
stat_text() {
	case "$1" in
	*.min | *.min[,:\ ]* | *.max | *.max[,:\ ]* | *.avg | *.avg[,:\ ]*) return 0 ;;
	*.quantiles | *.quantiles[,:\ ]*) return 0 ;;
	esac
	return 1
}

# more_text TEXT: whether TEXT has more keys (4 or more) or values (3 or
# more) than hist takes: rhist's extension, which hist rejects; sets
# nkeys to the number of keys of its last keys= piece.
more_text() {
	trig=${1%%" if "*} more=1 nkeys=0
	set -f
	IFS=:
	for piece in $trig; do
		IFS=,
		case "$piece" in
		keys=* | key=*)
			set -- ${piece#*=}
			nkeys=$#
			[ $# -lt 4 ] || more=0 ;;
		vals=* | values=* | val=*)
			set -- ${piece#*=}
			[ $# -lt 3 ] || more=0 ;;
		esac
		IFS=:
	done
	unset IFS
	set +f
	return $more
}

# without_vals TEXT: TEXT without its values, sort keys and nohitcount
# (and the filter kept), its keys cut to hist's first three; sets plain,
# and cut when keys were cut.
without_vals() {
	trig=$1 filt= plain= sep= cut=
	case "$1" in *" if "*) trig=${1%%" if "*} filt=" if ${1#*" if "}" ;; esac
	set -f
	IFS=:
	for piece in $trig; do
		case "$piece" in
		vals=* | values=* | val=* | sort=* | nohitcount | NOHC) continue ;;
		keys=* | key=*)
			IFS=,
			set -- ${piece#*=}
			[ $# -le 3 ] || cut=1
			k="${piece%%=*}=$1${2+,$2}${3+,$3}"
			case "$piece" in *,) [ $# -ge 3 ] || k="$k," ;; esac
			piece=$k
			IFS=: ;;
		esac
		plain="$plain$sep$piece"
		sep=:
	done
	unset IFS
	set +f
	plain="$plain$filt"
}

# project FILE TEXT: FILE's entries (one a line: keys without stack
# traces) projected on their first three keys, the hitcounts of those
# that project alike added up (only the keys with nohitcount), sorted.
project() {
	awk -v nohc="$(case "$2" in *nohitcount* | *NOHC*) echo 1 ;; esac)" '
		/^\{/ {
			k = $0; sub(/ } .*/, "", k); sub(/^\{ /, "", k)
			n = split(k, p, ", ")
			key = "{ " p[1]
			for (i = 2; i <= n && i <= 3; i++) key = key ", " p[i]
			key = key " }"
			h = $0; sub(/.*hitcount: */, "", h); sub(/ .*/, "", h)
			hits[key] += nohc ? 0 : h
		}
		END { for (k in hits) print k (nohc ? "" : " hitcount: " hits[k]) }
	' "$1" | sed 's/ *}/ }/' | sort
}

# entries FILE: FILE's lines but the comments and rhist's Totals line of
# percentiles (which hist has no counterpart of), each cut after its
# hitcount (after its keys with nohitcount), sorted: the keys and counts.
entries() {
	case "$2" in
	*nohitcount* | *NOHC*) sed -e '/^#/d' -e '/^    Percentiles:/d' \
		-e 's/^\(.*}\) .*/\1/' "$1" | sort ;;
	*) sed -e '/^#/d' -e '/^    Percentiles:/d' \
		-e 's/\(hitcount: *[0-9]*\).*/\1/' "$1" | sort ;;
	esac
}

# ext_check TEXT: TEXT, with statistics or more keys or values, which
# hist rejected and rhist took (attached): the same text without values,
# sort keys and nohitcount and with its first three keys, which hist must
# take (else rhist took what it must not), gives the same entries and
# hitcounts on the same events (rhist's projected on its first three
# keys, their Hits compared when a key is a stack trace); then both go.
ext_check() {
	exts=$((exts + 1))
	echo "EXT value statistics or more fields: [$1]"
	without_vals "$1"
	if echo "hist:$plain" >> $T 2> /dev/null; then
		fire count=200 seed=$n keys=40
		cat $EV/hist > /tmp/c
		cat $EV/rhist > /tmp/r
		case "$cut$1" in
		1*[sS][tT][aA][cC][kK][tT][rR][aA][cC][eE]*)
			grep '^    Hits:' /tmp/c > /tmp/cs
			grep '^    Hits:' /tmp/r > /tmp/rs ;;
		1*)
			project /tmp/c "$1" > /tmp/cs
			project /tmp/r "$1" > /tmp/rs ;;
		*)
			entries /tmp/c "$1" > /tmp/cs
			entries /tmp/r "$1" > /tmp/rs ;;
		esac
		same /tmp/cs /tmp/rs || diff_ ext "$1" "hist [$plain]: [$la] rhist: [$lb]"
		echo "!hist:$plain" >> $T 2> /dev/null
	else
		diff_ ext "$1" "hist rejects [$plain] too"
	fi
	rx=ok
	echo "!rhist:$1" >> $T 2> /tmp/err || { IFS= read -r rx < /tmp/err; rx=${rx##*: }; }
	[ "$rx" = ok ] || diff_ remove "$1" "rhist: $rx"
}

# leftovers: what is still attached; sets left.
leftovers() {
	left=
	while IFS= read -r l; do
		case "$l" in "#"* | "") ;; *) left="$left [$l]" ;; esac
	done < $T
}

read -r header < $TEXTS
case "$header" in
"# fuzz-guest "*) seed=${header#*seed=}; seed=${seed%% *} ;;
esac
echo local > trace_clock
read -r t0 < /sys/kernel/debug/rhist_test/now_ns

while IFS= read -r t; do
	case "$t" in "# fuzz-guest "*) continue ;; esac
	n=$((n + 1))
	if string_bucket "$t"; then
		# C's bug: no hist, and nothing to compare with.
		echo "CBUG .log2 or .buckets of a string, stack trace or hitcount: [$t]"
		cbugs=$((cbugs + 1))
		echo "rhist:$t" >> $T 2> /dev/null && echo "!rhist:$t" >> $T 2> /dev/null
		leftovers
		[ -z "$left" ] || { diff_ leftover "$t" "$left"; : > $T; }
		continue
	fi
	write hist "$t"
	hrc=$rc hlog=$log hmsgs=$msgs
	write rhist "$t"
	rrc=$rc rlog=$log rmsgs=$msgs

	ha=0 ra=0
	[ -z "$verbose" ] || echo "text [$t] hist: $hrc | $hlog rhist: $rrc | $rlog"
	[ "$hrc" != ok ] || ha=1
	[ "$rrc" != ok ] || ra=1
	if [ $ha = 0 ] && [ $ra = 1 ] && comm_text "$t"; then
		# rhist's extension: checked apart, then gone.
		comm_check "$t"
		ra=0
	elif [ $ha = 0 ] && [ $ra = 1 ] && { stat_text "$t" || more_text "$t"; }; then
		# rhist's extension: checked apart, then gone.
		ext_check "$t"
		ra=0
	elif [ $ha != $ra ]; then
		diff_ accept "$t" "hist: $hrc | $hlog rhist: $rrc | $rlog"
	elif [ "$hrc" != "$rrc" ]; then
		diff_ errno "$t" "hist: $hrc | $hlog rhist: $rrc | $rlog"
	elif [ "$hmsgs" != "$rmsgs" ]; then
		diff_ message "$t" "hist: $hrc | $hlog rhist: $rrc | $rlog"
	elif [ "$hlog" != "$rlog" ]; then
		diff_ caret "$t" "hist: $hrc | $hlog rhist: $rrc | $rlog"
	fi

	if [ $ha = 1 ] && [ $ra = 1 ]; then
		both=$((both + 1))
		fire count=200 seed=$n keys=40
		compare hist hist rhist "$t"
		compare debug hist_debug rhist_debug "$t"
		hx=ok rx=ok
		echo "!hist:$t" >> $T 2> /tmp/err || { IFS= read -r hx < /tmp/err; hx=${hx##*: }; }
		echo "!rhist:$t" >> $T 2> /tmp/err || { IFS= read -r rx < /tmp/err; rx=${rx##*: }; }
		[ "$hx" = "$rx" ] || diff_ remove "$t" "hist: $hx rhist: $rx"
	elif [ $ha = 1 ]; then
		echo "!hist:$t" >> $T 2> /dev/null
	elif [ $ra = 1 ]; then
		echo "!rhist:$t" >> $T 2> /dev/null
	fi

	leftovers
	if [ -n "$left" ]; then
		case "$left" in
		*"[hist:"*"[rhist:"* | *"[rhist:"*"[hist:"*)
			echo "note: both left attached after [$t]:$left" ;;
		*) diff_ leftover "$t" "$left" ;;
		esac
		# Opening the trigger file with O_TRUNC removes every trigger.
		: > $T
		leftovers
		[ -z "$left" ] || { diff_ stuck "$t" "$left"; break; }
	fi
	case "$t" in *clock=*) echo local > trace_clock ;; esac
done < $TEXTS

read -r t1 < /sys/kernel/debug/rhist_test/now_ns
echo "fuzz-guest: accepted by both: $both; $(((t1 - t0) / 1000000000)) s in the loop"
for k in accept errno message caret hist debug remove leftover stuck ext; do
	eval "c=\${k_$k:-0}"
	[ "$c" = 0 ] || echo "fuzz-guest: $k: $c"
done
echo "fuzz-guest: $n texts, $d differences, $gaps known gaps, $cbugs not compared for C's bug, $exts extensions (seed $seed)"
[ $d = 0 ]
