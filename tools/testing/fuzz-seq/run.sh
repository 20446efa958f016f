#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make fuzz-seq`: generates N sequences of tracefs writes from SEED
# (gen.py), or takes them from --file, and runs them through seq.sh, hist
# against rhist, in one boot of the VM. Prints each difference and a
# summary; exits non-zero on a difference, a failed reset, or a guest
# that crashed, warned or hung (then the sequence up to the step that
# killed it is saved for --file). Where hist leaves triggers on the
# test events, it boots again for the sequences after (seq.sh).
#
# The guest runs on one host thread (seq.sh: single-threaded TCG), so
# JOBS boots share the sequences (RHIST_FUZZ_SEQ_JOBS; the host's cores for
# N SEED, 1 for --file), each in turn, and their counts are summed.
#
# RHIST_FUZZ_SEQ_EXT=1: rhist's extensions too (gen.py --ext).
#
# Usage: run.sh [N [SEED]] | run.sh --file SEQS
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rhist-fuzz-seq.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" = --file ]; then
	cp "$2" "$tmp/seqs.txt"
	n=$(grep -c '^end$' "$tmp/seqs.txt") seed=file
	jobs=${RHIST_FUZZ_SEQ_JOBS:-1}
else
	n=${1:-100} seed=${2:-1}
	python3 "$here/gen.py" -n "$n" -s "$seed" ${RHIST_FUZZ_SEQ_EXT:+--ext} -o "$tmp/seqs.txt"
	jobs=${RHIST_FUZZ_SEQ_JOBS:-$(nproc)}
fi
[ "$jobs" -le "$n" ] || jobs=$n

# counts FILE...: "sequences differences rhist-leaks hist-leaks boots" of
# each summary line, the guest's (one boot, no boot count) or this
# script's.
counts() {
	sed -n 's/^fuzz-seq: \([0-9]*\) sequences, \([0-9]*\) differences, \([0-9]*\) rhist leaks, \([0-9]*\) hist leaks (seed [^,)]*\(, \([0-9]*\) boots\)\{0,1\}.*/\1 \2 \3 \4 \6/p' "$@"
}

# Several jobs: sequence k goes to job k mod JOBS, each job is this script
# on its share, and the summary adds theirs up.
if [ "$jobs" -gt 1 ]; then
	start=$SECONDS
	save=${RHIST_FUZZ_SEQ_SAVE:-$PWD/fuzz-seq-failed.txt}
	pids=()
	for j in $(seq 0 $((jobs - 1))); do
		awk -v j="$j" -v jobs="$jobs" '
			/^seed / { print; next }
			/^seq / { mine = (i++ % jobs == j) }
			mine' "$tmp/seqs.txt" > "$tmp/part.$j.txt"
		: > "$tmp/job.$j.out"
		RHIST_FUZZ_SEQ_JOBS=1 RHIST_FUZZ_SEQ_SAVE="${save%.txt}.$j.txt" \
			"$here/run.sh" --file "$tmp/part.$j.txt" > "$tmp/job.$j.out" 2>&1 &
		pids+=($!)
	done
	# Each job's lines as they come, but for its own summary (tail stops
	# within a second of this script).
	tail --pid=$$ -q -n +1 -f "$tmp"/job.*.out |
		grep --line-buffered -v '^fuzz-seq: [0-9]* sequences\|^fuzz-seq: N=' &
	rc=0
	for pid in "${pids[@]}"; do
		wait "$pid" || rc=1
	done
	sleep 2
	read -r a b c e bt <<< "$(counts "$tmp"/job.*.out |
		awk '{ for (i = 1; i <= 5; i++) t[i] += $i } END { print t[1]+0, t[2]+0, t[3]+0, t[4]+0, t[5]+0 }')"
	done=$(sed -n 's/^fuzz-seq: N=[0-9]* SEED=file, \([0-9]*\) sequences done.*/\1/p' "$tmp"/job.*.out |
		awk '{ t += $1 } END { print t + 0 }')
	echo "fuzz-seq: $a sequences, $b differences, $c rhist leaks, $e hist leaks (seed $seed, $bt boots in $jobs jobs)"
	echo "fuzz-seq: N=$n SEED=$seed, $done sequences done, $((SECONDS - start)) s wall time, exit $rc"
	exit $rc
fi

# FUZZ_VERBOSE=1: each difference's whole diff ("D <seq>: ..."), and
# what rhist made of each extension ("X <seq>: ...").
files=(--file "$tmp/seqs.txt" --file "$here/../tests/lib.sh.inc")
if [ -n "${FUZZ_VERBOSE:-}" ]; then
	: > "$tmp/fuzz-verbose"
	files+=(--file "$tmp/fuzz-verbose")
fi

# About 4 s a sequence on the test kernel (two runs and two resets of 20
# to 60 steps): allow 10 s, and 300 s for the boot and kmemleak's scan.
# Expedited RCU grace periods make the many removals of triggers and
# probes a quarter faster. On the KASAN kernel, KASAN finds what slab
# poisoning would (a use after free, a write past an object) and more:
# without the poisoning, two boots side by side take 4.3 s a sequence
# rather than 6.4. kmemleak and lockdep stay on.
append=rcupdate.rcu_expedited=1
[ "${RHIST_FLAVOUR:-test}" != kasan ] || append="$append slub_debug=-"
start=$SECONDS
rc=0 boot=0 done=0 n_seq=0 n_diff=0 n_rleak=0 n_cleak=0
while :; do
	boot=$((boot + 1))
	log=$tmp/console.$boot.log
	brc=0
	RHIST_APPEND="$append${RHIST_APPEND:+ $RHIST_APPEND}" \
	"$here/../vm/run.sh" --timeout $((300 + 10 * n)) --log "$log" \
		"${files[@]}" "$here/seq.sh" |
		grep -v '^S \|^SEQ-DONE \|^fuzz-seq: [0-9]* sequences' || brc=${PIPESTATUS[0]}
	done=$((done + $(grep -c '^SEQ-DONE ' "$log" || true)))
	summary=$(grep '^fuzz-seq: [0-9]* sequences' "$log" || true)
	# A guest that did not get to its summary line crashed, warned or hung.
	if [ -z "$summary" ]; then
		rc=$brc
		[ "$rc" != 0 ] || rc=1
		# The step that was running: keep its sequence up to it.
		last=$(grep '^S ' "$log" | tail -1 || true)
		if [ -n "$last" ]; then
			read -r _ s cmd step <<< "$last"
			out=${RHIST_FUZZ_SEQ_SAVE:-$PWD/fuzz-seq-failed.txt}
			awk -v s="$s" -v k="$step" '
				/^seed / { print; next }
				$0 == "seq " s { on = 1; print; next }
				on && (/^end$/ || ++i > k) { print "end"; exit }
				on { print }' "$tmp/seqs.txt" > "$out"
			echo "fuzz-seq: the guest failed in sequence $s, run $cmd, step $step: $(
				awk -v s="$s" -v k="$step" '$0 == "seq " s { on = 1; next } on && ++i == k { print; exit }' \
				"$tmp/seqs.txt")"
			echo "fuzz-seq: replay with: tools/testing/fuzz-seq/run.sh --file $out"
		fi
		break
	fi
	[ "$brc" = 0 ] || rc=$brc
	read -r a b c e _ <<< "$(counts <<< "$summary")"
	n_seq=$((n_seq + a)) n_diff=$((n_diff + b)) n_rleak=$((n_rleak + c)) n_cleak=$((n_cleak + e))
	# Triggers a leak left on the test events: the sequences after the
	# one named go to a new boot (seq.sh).
	after=$(sed -n 's/^RESUME-AFTER //p' "$log")
	[ -n "$after" ] || break
	awk -v s="$after" '
		/^seed / { print; next }
		go { print }
		$0 == "end" && cur == s { go = 1 }
		/^seq / { cur = substr($0, 5) }' "$tmp/seqs.txt" > "$tmp/rest.txt"
	grep -q '^end$' "$tmp/rest.txt" || break
	echo "fuzz-seq: triggers left behind after sequence $after: a new boot for the rest"
	mv "$tmp/rest.txt" "$tmp/seqs.txt"
done
echo "fuzz-seq: $n_seq sequences, $n_diff differences, $n_rleak rhist leaks, $n_cleak hist leaks (seed $seed, $boot boots)"
echo "fuzz-seq: N=$n SEED=$seed, $done sequences done, $((SECONDS - start)) s wall time, exit $rc"
exit $rc
