#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make fuzz-seq`: runs every sequence of /test/seqs.txt
# (gen.py's output) twice from a clean state, once with "@" as hist and
# once as rhist, and compares what each step did: its exit status and
# error text, and at checkpoints the files it read (in order, but for
# ties on a histogram's sort keys; times masked, see mask()). Before each step it
# prints "S <seq> <cmd> <step>", so that a step that kills the guest is
# known. A difference is one line "DIFF <seq>: ..." (FUZZ_VERBOSE=1: the
# whole diff, "D <seq>: ..." lines).
#
# What a run leaves that the reset cannot remove (a synthetic event that
# cannot be deleted, an instance that cannot be removed) is a leak: of
# hist ("CLEAK", counted apart: hist loses a reference in some paths)
# when it shows after hist's run, of rhist ("LEAK", a failure) after
# rhist's, unless rhist's run left what hist's run of the same sequence
# left ("BOTH", counted with hist's: seed 1017's sequence 1238 leaves, in
# both runs, the same three triggers that neither can remove). Then the names of instances and
# dynamic events get a new suffix (y0 becomes y0g1, masked in the
# records), so that the next runs start clean. Triggers left behind
# cannot be renamed away, and change what the next sequences do (hist's
# names and variables): the guest then stops after that sequence and
# prints "RESUME-AFTER <seq>", and run.sh boots again for the rest. The last
# line is "fuzz-seq: N sequences, D differences, L rhist leaks, C hist
# leaks (seed S)".
#
# rhist's run checks, besides, what a user can see without hist to
# compare with, each failure a "DIFF <seq>: step <i>: ..." line counted
# with the differences: at each checkpoint, that every histogram of the
# rhist file of an event only fx fires lists its Entries: and that
# their hitcounts add up to its Hits:, and that a plain trigger's
# (no filter, name, variable, action, pause or clear) hits and drops
# are the events fired since it was made; with --ext, that rhist_json
# is JSON (cj), and that a partial read kept open (po, pr) goes on to
# one JSON document, or a text as above, or fails with EAGAIN (ENODEV
# once its dynamic event is gone).
#
# kprobes come and go on functions the guest keeps calling, which QEMU's
# multi-threaded TCG does not always survive (a stray "Oops: int3", twice
# in hist's runs); on one host thread, two boots also share the cores:
# run.sh: single-threaded TCG
. /test/lib.sh.inc

SEQS=/test/seqs.txt
n=0 d=0 rf=0 cl=0 stale=0
# The names' generation: G is appended to instance and dynamic event
# names; BASE is what the leaks so far left, and LEFT what the last reset
# found new, without its generation's suffix (HIST_LEFT: hist's, for the
# rhist run of the same sequence).
g=0 G= BASE= LEFT= HIST_LEFT=

dir_of() { # dir_of I E: sets D to the event's directory (no fork)
	case $1 in -) D=. ;; *) D=instances/$1$G ;; esac
	case $2 in
	sample) D=$D/events/rhist_test/rhist_sample ;;
	other) D=$D/events/rhist_test/rhist_other ;;
	k0) D=$D/events/kp/k0$G ;;
	e0) D=$D/events/ep/e0$G ;;
	*) D=$D/events/synthetic/$2$G ;;
	esac
}

# named TEXT: sets T to TEXT with the names of this generation.
named() {
	T=$1
	[ -z "$G" ] || T=$(echo "$1" | sed "s/\b\([yke][0-2]\)\b/\1$G/g")
}

# mask REC: what differs between two runs of one sequence whatever the
# command: the times of error_log, the carets (one column further with
# rhist:), the names' generations, the hashed pointers of the debug
# files, and in a histogram that holds times (its trigger reads
# common_timestamp or a variable, or it is on a synthetic event, whose
# fields come from variables) the large numbers and the tracked values,
# and the key a snapshot's details name: each run has its own times. The
# rest is compared as it is, entries in their order (hist_same.awk's
# normal form: only ties on the sort keys are put in one order). Once a
# run, on the whole record: a fork costs tens of milliseconds under TCG.
mask() {
	sed -e 's/\[ *[0-9]*\.[0-9]*\]/[T]/g' -e 's/rhist/hist/g' -e 's/^ *\^$/^/' \
		-e 's/\b\([ykei][0-2]\)g[0-9]*\b/\1/g' \
		-e 's/^\(hist_data:\) .*/\1 P/' -e 's/^\( *var.hist_data:\) .*/\1 P/' "$1" |
		awk '/^\001 / { synth = $0 ~ /\/events\/synthetic\//; times = synth }
			/^# trigger info:/ { times = synth || /common_timestamp|\$/ }
			times && !/^#/ {
				gsub(/[0-9][0-9][0-9][0-9][0-9]+/, "N")
				gsub(/max: *[0-9N]+/, "max: N")
				gsub(/changed: *[0-9N]+/, "changed: N")
				if (/triggering value/)
					sub(/: *[0-9N]+$/, ": N")
				if (/triggered by event with key/)
					$0 = "triggered by event with key: K"
			}
			{ print }' |
		awk -v canon=1 -f /test/hist_same.awk
}

# checkpoint FILE...: the files' contents into the record, each between
# a header and an end line (a file's bounds for mask()); one cat for all
# (a missing file gives cat's error line instead).
printf '\002\n' > /tmp/ck.end
checkpoint() {
	k=0 args=
	for f in "$@"; do
		k=$((k + 1))
		printf '\001 %s == %s\n' $i "$f" > /tmp/ck.$k
		args="$args /tmp/ck.$k $f /tmp/ck.end"
	done
	cat $args >> $rec 2>&1
}

# fire_step ARGS: fires as rhist_test's fire does, but "cpu=all" one CPU
# after the other (CPU n with seed S + n), not at once: two CPUs that
# consume one variable at the same moment both read it in hist, whose
# read-and-clear is not atomic, and one of them in rhist (rhist.rst).
# NS and NO count the rhist_sample and rhist_other events fired (inv=0
# once a fire fails: how many it fired is not known).
fire_step() {
	k=1 ev=NS
	for w in "$@"; do
		case $w in
		count=*) k=${w#count=} ;;
		event=other) ev=NO ;;
		esac
	done
	case " $* " in
	*" cpu=all "*) ;;
	*) echo "$*" 2> /tmp/err > $FIRE && fired || { rc=1 inv=0; }; return ;;
	esac
	args= s=1
	for w in "$@"; do
		case $w in
		cpu=all) ;;
		seed=*) s=${w#seed=} ;;
		*) args="$args $w" ;;
		esac
	done
	for c in 0 1; do
		[ $c = 0 ] || [ "$(cat /sys/devices/system/cpu/cpu$c/online)" = 1 ] || continue
		taskset -c $c sh -c "echo 'seed=$((s + c))$args' > $FIRE" 2> /tmp/err &&
			fired || { rc=1 inv=0; }
	done
}

fired() { # k more events of ev (NS or NO)
	case $ev in
	NS) NS=$((NS + k)) ;;
	*) NO=$((NO + k)) ;;
	esac
}

# inv_fail TEXT: a failure of rhist's own checks.
inv_fail() {
	d=$((d + 1))
	echo "DIFF $seq: step $i: $*"
}

# plain LINE: whether LINE, of a trigger file, is an active rhist
# trigger that counts every event of its own: keys, values, sort, size
# and grow only (no filter, name, variable or action).
plain() {
	case $1 in
	rhist:*' [active]') ;;
	*) return 1 ;;
	esac
	case $1 in *' if '*|*'$'*|*'('*) return 1 ;; esac
	px=${1#rhist:}
	px=${px% \[active\]}
	while [ -n "$px" ]; do
		case ${px%%:*} in
		keys=*|vals=*|sort=*|size=*|grow) ;;
		*) return 1 ;;
		esac
		case $px in *:*) px=${px#*:} ;; *) px= ;; esac
	done
}

# inv_sync I E: after a write to the trigger file of rhist_sample or
# rhist_other (D) in rhist's run, its plain triggers, each with the
# count of events fired before it was made, into /tmp/inv.I.E: "N line"
# (kept from before for a line that was there, the count now for a new
# one). Not for that event again in this run (.off) once a text pauses,
# continues or clears there, or two triggers print the same line.
inv_sync() {
	case $2 in
	sample) cnt=$NS ;;
	other) cnt=$NO ;;
	*) return 0 ;;
	esac
	f=/tmp/inv.$1.$2
	[ -e $f ] || : > $f
	: > $f.new
	if [ ! -e $f.off ] && [ -e $D/trigger ]; then
		while IFS= read -r l; do
			case $l in '#'*) continue ;; esac
			plain "$l" || continue
			s=$cnt
			while IFS= read -r o; do
				[ "${o#* }" != "$l" ] || { s=${o%% *}; break; }
			done < $f
			while IFS= read -r o; do
				[ "${o#* }" != "$l" ] || : > $f.off
			done < $f.new
			echo "$s $l" >> $f.new
		done < $D/trigger
	fi
	[ ! -e $f.off ] || : > $f.new
	while IFS= read -r o; do echo "$o"; done < $f.new > $f
}

# num X: whether X is a number (what is not makes no sum: an error in
# $((...)) would end the shell).
num() {
	case $1 in '' | *[!0-9]*) return 1 ;; esac
}

# inv_text FILE [TABLE N]: the invariants of each histogram of FILE, an
# rhist text read while no event fired: its entries are its Entries:,
# their hitcounts add up to its Hits:, and for a trigger of TABLE
# (inv_sync), hits and drops are the N events fired less its count.
inv_text() {
	info= c=0 sum=0 hc=1 hits=
	while IFS= read -r l; do
		case $l in
		'# trigger info: '*) info=${l#\# trigger info: } c=0 sum=0 hc=1 hits= ;;
		'{ '*)
			c=$((c + 1))
			v=${l#*\} hitcount: }
			v=${v#"${v%%[! ]*}"}
			v=${v%% *}
			case $l in *'} hitcount: '*) ;; *) v= ;; esac
			num $v && sum=$((sum + v)) || hc=0
			;;
		'    Hits: '*) hits=${l#    Hits: } ;;
		'    Entries: '*)
			[ "${l#    Entries: }" = $c ] ||
				inv_fail "rhist: $c entries, ${l#    Entries: } in Entries: ($info)"
			;;
		'    Dropped: '*)
			dr=${l#    Dropped: }
			num "$hits" && num $dr || {
				inv_fail "rhist: Hits: $hits, Dropped: $dr ($info)"
				continue
			}
			[ $hc = 0 ] || [ $sum = $hits ] ||
				inv_fail "rhist: hitcounts add up to $sum, Hits: $hits ($info)"
			[ -n "$2" ] || continue
			s=
			while IFS= read -r o; do
				[ "${o#* }" != "$info" ] || { s=${o%% *}; break; }
			done < $2
			[ -z "$s" ] || [ $((hits + dr)) = $(($3 - s)) ] ||
				inv_fail "rhist: $hits hits and $dr drops of $(($3 - s)) events ($info)"
			;;
		esac
	done < $1
}

# inv_check I E: rhist's checkpoint of the event's rhist file (D), for
# the events only fx fires (k0 fires at any read, and the synthetic
# events with it when its triggers' actions make them). Copied first:
# busybox's read polls before each byte, and an rhist (hist) file is
# readable to poll() only when its hits changed since it was read.
inv_check() {
	case $2 in sample | other | e0) ;; *) return 0 ;; esac
	cat $D/rhist > /tmp/inv.txt 2> /dev/null || return 0
	t=/tmp/inv.$1.$2
	[ $inv = 1 ] && [ -e $t ] && [ ! -e $t.off ] || t=
	case $2 in
	sample) inv_text /tmp/inv.txt "$t" $NS ;;
	other) inv_text /tmp/inv.txt "$t" $NO ;;
	*) inv_text /tmp/inv.txt ;;
	esac
}

# Partial reads (po, pr): P lists the open ones, oldest first, by their
# descriptor (3 or 4); POn is "E KIND" of descriptor n, /tmp/po.n its
# first piece.
P=

# po_rest FD RC: rhist's checks of the rest of a partial read (in
# /tmp/po.rest, its error in /tmp/poerr when RC is not 0).
po_rest() {
	eval "set -- \$PO$1 $2 $1"
	if [ $3 != 0 ]; then
		out=
		IFS= read -r out < /tmp/poerr
		case $out in
		*"Resource temporarily unavailable"*) return ;;
		*"No such device"*) case $1 in sample|other) ;; *) return ;; esac ;;
		esac
		inv_fail "the rest of a partial read of $1's $2: $out"
		return
	fi
	if [ $2 = json ]; then
		cat /tmp/po.$4 /tmp/po.rest | json_check -i -q 2> /tmp/jerr ||
			inv_fail "a partial read of $1's rhist_json is not JSON: $(cat /tmp/jerr)"
	else
		# One record, written at the first read: as a checkpoint.
		case $1 in
		sample | other | e0)
			cat /tmp/po.$4 /tmp/po.rest > /tmp/po.all
			inv_text /tmp/po.all
			;;
		esac
	fi
}

# watch FILE: a reader of FILE (hist_client watch), its pid added to W
# once the file is open, what the open gave in /tmp/err.
W=
watch() {
	rm -f /tmp/wf
	mkfifo /tmp/wf
	hist_client watch $1 3<&- 4<&- > /tmp/wf 2> /dev/null &
	IFS= read -r out < /tmp/wf
	echo "$out" > /tmp/err
	case $out in
	*open) W="$W $!" ;;
	*) wait $!; rc=1 ;;
	esac
}

# unwatch [all]: kills the oldest reader, or all, and waits until each
# has closed its file.
unwatch() {
	for p in $W; do
		kill $p
		wait $p 2> /dev/null
		W=${W# $p}
		[ "$1" = all ] || break
	done
}

# step LINE: carries out one step with $cmd for "@"; records its exit
# status and the error text the shell printed, without the file name.
# Builtins only, with their errors in a file: no fork but for mkdir,
# rmdir and the readers.
step() {
	set -- $1
	op=$1
	shift
	rc=0
	: > /tmp/err
	case $op in
	mk) mkdir instances/$1$G 2> /tmp/err || rc=1 ;;
	rm)
		# Its triggers go with it.
		rmdir instances/$1$G 2> /tmp/err && rm -f /tmp/inv.$1.* || rc=1
		;;
	tw)
		dir_of $1 $2
		I=$1 E=$2
		shift 2
		named "$*"
		x=0
		case $T in *'{'*) extension; x=1 ;; esac
		echo "${T%%@*}$cmd${T#*@}" 2> /tmp/err >> $D/trigger || rc=1
		if [ $cmd = rhist ]; then
			case $T in
			*:pause*|*:cont*|*:clear*) : > /tmp/inv.$I.$E.off ;;
			esac
			inv_sync $I $E
		fi
		# FUZZ_VERBOSE: what rhist made of each extension (its error,
		# and error_log's last entry).
		if [ $x = 1 ] && [ $cmd = rhist ] && [ -e /test/fuzz-verbose ]; then
			[ $rc = 0 ] && echo "X $seq: 0 $T" ||
				echo "X $seq: $rc $T" $(cat /tmp/err; tail -3 error_log | head -1)
		fi
		;;
	tt)
		dir_of $1 $2
		true 2> /tmp/err > $D/trigger || rc=1
		[ $cmd = hist ] || inv_sync $1 $2
		;;
	se) named "$*"; echo "$T" 2> /tmp/err >> synthetic_events || rc=1 ;;
	st) true 2> /tmp/err > synthetic_events || rc=1 ;;
	de) named "$*"; echo "$T" 2> /tmp/err >> dynamic_events || rc=1 ;;
	dt) true 2> /tmp/err > dynamic_events || rc=1 ;;
	en) dir_of $1 $2; echo $3 2> /tmp/err > $D/enable || rc=1 ;;
	fx) fire_step "$@" ;;
	ck)
		dir_of $1 $2
		h=hist
		[ $cmd = hist ] || h=rhist
		checkpoint $D/$h $D/${h}_debug $D/trigger
		[ $cmd = hist ] || inv_check $1 $2
		;;
	el) checkpoint error_log ;;
	cpu) echo $1 2> /tmp/err > /sys/devices/system/cpu/cpu1/online || rc=1 ;;
	ko) echo $1 2> /tmp/err > /proc/sys/debug/kprobes-optimization || rc=1 ;;
	po)
		# A partial read kept open: the first piece, N bytes in one
		# read(). hist's run reads its hist file, which pins the same
		# (the instance, the event file), so that what the open file
		# prevents (an instance's rmdir) goes the same way.
		dir_of $1 $2
		f=$D/hist
		if [ $cmd = rhist ]; then
			f=$D/rhist_json
			[ $3 = json ] || f=$D/rhist
		fi
		case $P in
		*" "*" "*) echo "two partial reads already" > /tmp/err ;;
		*)
			fd=3
			case $P in *3*) fd=4 ;; esac
			# A failed open of exec would end the shell: tried first.
			if true 2> /tmp/err < $f; then
				eval "command exec $fd< \$f"
				P="$P $fd"
				eval "PO$fd=\"$2 $3\""
				if ! dd bs=$4 count=1 2> /tmp/poerr <&$fd > /tmp/po.$fd &&
					[ $cmd = rhist ]; then
					inv_fail "the first read of $2's $3: $(tail -1 /tmp/poerr)"
				fi
			else
				rc=1
			fi
			;;
		esac
		;;
	pr)
		# The rest of the oldest partial read, then closed. Recorded as
		# done: hist's file reads on where rhist's may fail.
		for fd in $P; do
			P=${P# $fd}
			cat 2> /tmp/poerr <&$fd > /tmp/po.rest
			r=$?
			eval "command exec $fd<&-"
			[ $cmd = hist ] || po_rest $fd $r
			break
		done
		;;
	pl)
		dir_of $1 $2
		h=hist
		[ $cmd = hist ] || h=rhist
		case $W in
		*" "*" "*) echo "two readers already" > /tmp/err ;;
		*) watch $D/$h ;;
		esac
		;;
	pk) unwatch ;;
	cj)
		# Whatever the histograms, rhist_json is JSON. Not recorded:
		# hist has no such file.
		dir_of $1 $2
		if [ $cmd = rhist ] && cat $D/rhist_json > /tmp/json 2> /dev/null &&
			! json_check -q < /tmp/json 2> /tmp/jerr; then
			d=$((d + 1))
			echo "DIFF $seq: step $i: rhist_json is not JSON: $(cat /tmp/jerr)"
		fi
		return
		;;
	mod)
		# rmmod is refused (EAGAIN) while triggers hold the module: as
		# expected, and quiet. An insmod that fails after it is not.
		if [ $cmd = rhist ] && rmmod rhist 2> /dev/null; then
			rm -f /tmp/inv.*
			insmod /lib/rhist/rhist.ko || {
				d=$((d + 1))
				echo "DIFF $seq: insmod failed after rmmod (step $i)"
			}
		fi
		compare=0
		;;
	*) echo "fuzz-seq: unknown step '$op'"; exit 2 ;;
	esac
	out=
	IFS= read -r out < /tmp/err
	echo "$i $op $rc ${out##*: }" >> $rec
}

# extension: T, a text with rhist's extensions in braces (gen.py --ext),
# as this run writes it: without them for hist, without the braces for
# rhist. Not compared from here on, this step's status included.
extension() {
	[ $compare = 0 ] || echo "(not compared from here)" >> $rec
	if [ $cmd = hist ]; then
		while case $T in *'{'*) ;; *) false ;; esac; do
			T=${T%%\{*}${T#*\}}
		done
	else
		while case $T in *'{'*) ;; *) false ;; esac; do
			T=${T%%\{*}${T#*\{}
		done
		while case $T in *'}'*) ;; *) false ;; esac; do
			T=${T%%\}*}${T#*\}}
		done
	fi
	compare=0
}

# reset: removes what a sequence left: triggers (in passes, as those
# whose variables are referenced go last), instances, dynamic events.
reset() {
	echo 1 > /sys/devices/system/cpu/cpu1/online 2> /dev/null
	echo 1 2> /dev/null > /proc/sys/debug/kprobes-optimization
	for pass in 1 2 3 4 5 6; do
		left=0
		for i in - i0 i1; do
			[ $i = - ] || [ -d instances/$i$G ] || continue
			for e in sample other y0 y1 y2 k0 e0; do
				dir_of $i $e
				[ -e $D/trigger ] || continue
				# All at once, unless one is referenced; then one by
				# one (a text that no longer resolves, such as v=$v
				# once v is defined twice, goes only the first way).
				true 2> /dev/null > $D/trigger
				while IFS= read -r l; do
					case $l in '#'*) continue ;; esac
					l=${l% \[active\]}
					echo "!${l% \[paused\]}" >> $D/trigger 2> /dev/null
					left=1
				done < $D/trigger
				echo 0 > $D/enable 2> /dev/null
			done
		done
		rmdir instances/i0$G instances/i1$G 2> /dev/null
		[ $left = 1 ] || [ -d instances/i0$G ] || [ -d instances/i1$G ] || break
		sleep 0.1
	done
	# One by one: truncating fails as a whole while any is busy, and
	# one that a leak holds stays.
	for e in synthetic/y0 synthetic/y1 synthetic/y2 kp/k0 ep/e0; do
		echo "-:$e$G" 2> /dev/null >> dynamic_events
	done
	echo > error_log
	echo > trace
	# What is left, but for what earlier leaks left.
	now="$(ls instances) $(cat synthetic_events dynamic_events)"
	if grep -qv '^#' events/rhist_test/rhist_sample/trigger events/rhist_test/rhist_other/trigger; then
		now="$now (triggers on the test events)"
		stale=1
	fi
	[ "$now" != "$BASE" ] || return 0
	# What is new, one item a line, without this generation's suffix (a
	# first line "#": busybox's grep takes no patterns as all matching).
	{ echo '#'; ls instances; cat synthetic_events dynamic_events; } | sort > /tmp/state.now
	[ -e /tmp/state.base ] || echo '#' > /tmp/state.base
	LEFT=$(grep -vxF -f /tmp/state.base /tmp/state.now |
		sed -E "s/(i[01]|[yke][0-2])$G([^0-9]|\$)/\1\2/g" | sort)
	mv /tmp/state.now /tmp/state.base
	# Triggers left in an instance stay too (with their names).
	for i in i0 i1; do
		[ -d instances/$i$G ] || continue
		for e in sample other y0 y1 y2 k0 e0; do
			dir_of $i $e
			grep -qv '^#' $D/trigger 2> /dev/null && stale=1
		done
	done
	[ ! -e /test/fuzz-verbose ] || echo "D reset: [$BASE] -> [$now]" | tr '\n\t' '|_'
	[ ! -e /test/fuzz-verbose ] || echo
	BASE=$now
	g=$((g + 1)) G=g$g
	return 1
}

# rhist_left: what rhist's run of the sequence before, $prev, left (the
# reset found it): a leak, or what hist's run of it left as well.
rhist_left() {
	if [ -n "$HIST_LEFT" ] && [ "$LEFT" = "$HIST_LEFT" ]; then
		echo "BOTH $prev: hist and rhist left:" $LEFT
	else
		echo "LEAK $prev: rhist left: $BASE"
		rf=$((rf + 1))
	fi
}

run() { # run CMD: the sequence in /tmp/seq with CMD, into /tmp/rec.CMD
	cmd=$1 rec=/tmp/rec.$1 compare=1 i=0 NS=0 NO=0 inv=1
	: > $rec
	rm -f /tmp/inv.*
	for f in /tmp/inv.-.sample /tmp/inv.-.other /tmp/inv.i0.sample \
		/tmp/inv.i0.other /tmp/inv.i1.sample /tmp/inv.i1.other; do
		: > $f
	done
	if ! reset; then
		# Left by the run before this one, of the other command.
		if [ $cmd = rhist ]; then
			# This sequence's runs started apart: not compared.
			echo "CLEAK $seq: hist left: $BASE"
			cl=$((cl + 1))
			skip=1
			HIST_LEFT=$LEFT
		else
			rhist_left
			# This sequence goes to the next boot.
			[ $stale = 0 ] || return 1
		fi
	fi
	[ $cmd = rhist ] || HIST_LEFT=
	while IFS= read -r l; do
		i=$((i + 1))
		echo "S $seq $cmd $i"
		step "$l"
		[ $compare = 1 ] || echo "(not compared from here)" >> $rec
	done < /tmp/seq
	unwatch all
	for fd in $P; do
		eval "command exec $fd<&-"
	done
	P=
	mask $rec > $rec.m
}

# The clean state, as reset() sees it.
reset || true
g=0 G=
seed=? prev=
while IFS= read -r l; do
	case $l in
	"seed "*) seed=${l#seed } ;;
	"seq "*) seq=${l#seq }; : > /tmp/seq ;;
	end)
		skip=0
		if ! run hist; then
			echo "RESUME-AFTER $prev"
			break
		fi
		run rhist
		n=$((n + 1))
		if [ $skip = 0 ] && ! cmp -s /tmp/rec.hist.m /tmp/rec.rhist.m; then
			# Up to the first "not compared" line.
			sed '/^(not compared/q' /tmp/rec.hist.m > /tmp/a
			sed '/^(not compared/q' /tmp/rec.rhist.m > /tmp/b
			if ! cmp -s /tmp/a /tmp/b; then
				d=$((d + 1))
				echo "DIFF $seq: $(diff /tmp/a /tmp/b | grep '^[-+][^-+]' | head -4 | tr '\n' ' ')"
				[ ! -e /test/fuzz-verbose ] || diff /tmp/a /tmp/b | sed "s/^/D $seq: /"
			fi
		fi
		echo "SEQ-DONE $seq"
		prev=$seq
		if [ $stale = 1 ]; then
			# What rhist's run left, before the next boot.
			reset || rhist_left
			echo "RESUME-AFTER $seq"
			break
		fi
		;;
	*) echo "$l" >> /tmp/seq ;;
	esac
done < $SEQS
if [ $stale = 0 ] && ! reset; then
	rhist_left
fi
echo "fuzz-seq: $n sequences, $d differences, $rf rhist leaks, $cl hist leaks (seed $seed)"
[ $d = 0 ] && [ $rf = 0 ]
