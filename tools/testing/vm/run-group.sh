#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs guest scripts in as few boots as it can, each still judged alone:
# a boot takes 10-15 s under TCG (and 6 s of it is kmemleak's wait), a
# short script less. group.sh runs the scripts one after the other; what
# the kernel says between a script's start and end lines is that script's.
#
# Usage: run-group.sh LOGDIR SCRIPT...
#
# A boot may take 120 s and 60 s a script (RHIST_GROUP_TIMEOUT: the
# seconds a boot may take, whatever its scripts), and a script 300 s
# (RHIST_SCRIPT_TIMEOUT; three times that on the KASAN kernel, as
# run.sh scales): past it group.sh kills it, and it fails. The slowest
# script, differential.sh, takes about 130 s on the test kernel.
#
# Prints one line "NAME VERDICT" a script, in the order given, and leaves
# what the guest printed for it in LOGDIR/NAME.group. VERDICT is
#   pass  - it exited 0 and the kernel reported nothing meanwhile;
#   fail  - it exited non-zero, the kernel reported a problem meanwhile,
#           the guest died in it, or it left the tracing state changed;
#   alone - not judged here: the caller runs it in a boot of its own.
# A script whose first lines say it needs a boot of its own (guest-init's
# no-rhist, run.sh's single-threaded TCG) is "alone". When a boot stops
# early (a script died or left the state changed) the scripts after it
# go to a new boot. What the kernel says after a script's end line and
# before the next script starts is still that script's (a report
# printed late). A problem the kernel reports outside every script
# (during the boot, or kmemleak's scan at the end) cannot be given to
# one: the boot fails, as a line "boot-N fail" after the scripts' whose
# LOGDIR/boot-N.group shows the report whole, and every script of that
# boot that passed is "alone", so that each is judged in a boot of its
# own.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

logs=$1
shift
declare -A verdict
queue=()
for s in "$@"; do
	if grep -qE '^# (guest-init: no-rhist|run.sh: single-threaded TCG)$' "$s"; then
		verdict[$s]=alone
	else
		queue+=("$s")
	fi
done

boot=0 failed_boots=()
while [ ${#queue[@]} -gt 0 ]; do
	boot=$((boot + 1))
	dir=$(mktemp -d "${TMPDIR:-/tmp}/rhist-group.XXXXXX")
	files=(--file "$dir/group.list")
	# Helpers the scripts source, as run.sh copies them for one.
	for inc in "$(dirname "${queue[0]}")"/*.sh.inc; do
		[ ! -e "$inc" ] || files+=(--file "$inc")
	done
	for s in "${queue[@]}"; do
		basename "$s" .sh >> "$dir/group.list"
		files+=(--file "$s")
	done
	# Scaled as run.sh scales a boot's (the KASAN kernel is 3 times slower).
	scale=1
	[ "${RHIST_FLAVOUR:-test}" != kasan ] || scale=3
	echo $((${RHIST_SCRIPT_TIMEOUT:-300} * ${RHIST_TIMEOUT_SCALE:-$scale})) > "$dir/script-timeout"
	files+=(--file "$dir/script-timeout")
	console=$logs/group-$boot.console
	"$(dirname "$0")/run.sh" --timeout "${RHIST_GROUP_TIMEOUT:-$((120 + 60 * ${#queue[@]}))}" --log "$console" \
		"${files[@]}" "$(dirname "$0")/group.sh" > "$dir/out" 2>&1
	rm -rf "$dir"
	# Each script's part of the console, from its start line to the next
	# script's (or the group's end), and the problems outside them: the
	# console from the first such problem on, whole, but for the scripts'
	# parts.
	outside=$(awk -v re="$RHIST_PROBLEM_RE" '
		/^RHIST-TEST-START / { name = $2; next }
		/^RHIST-GROUP-DONE$/ { name = ""; next }
		name == "" && $0 ~ re && !/^RHIST-EXIT/ { bad = 1 }
		name == "" && bad { print }' "$console")
	rest=()
	stopped=
	for s in "${queue[@]}"; do
		name=$(basename "$s" .sh)
		part=$logs/$name.group
		awk -v s="RHIST-TEST-START $name" '$0 == s { on = 1; print; next }
			/^RHIST-TEST-START |^RHIST-GROUP-DONE$/ { on = 0 } on' "$console" > "$part"
		if [ -n "$stopped" ]; then
			rest+=("$s")
		elif ! [ -s "$part" ]; then
			# Not reached: the boot ended before it.
			rest+=("$s")
			stopped=1
		elif ! end=$(grep -m1 "^RHIST-TEST-END $name " "$part"); then
			echo "the guest stopped in this script" >> "$part"
			verdict[$s]=fail
			stopped=1
		elif grep -qE "$RHIST_PROBLEM_RE" "$part"; then
			verdict[$s]=fail
		elif [ "${end##* }" = dirty ]; then
			verdict[$s]=fail
			stopped=1
		elif [ "${end##* }" = 0 ]; then
			verdict[$s]=pass
		else
			verdict[$s]=fail
		fi
	done
	if [ -n "$outside" ]; then
		for s in "${queue[@]}"; do
			[ "${verdict[$s]:-}" != pass ] || verdict[$s]=alone
		done
		echo "$outside" > "$logs/boot-$boot.group"
		failed_boots+=("boot-$boot")
	fi
	if [ ${#rest[@]} = ${#queue[@]} ]; then
		# Not even the first script started: each gets a boot of its own.
		for s in "${rest[@]}"; do verdict[$s]=alone; done
		rest=()
	fi
	queue=("${rest[@]}")
done
for s in "$@"; do
	echo "$(basename "$s" .sh) ${verdict[$s]:-alone}"
done
for b in "${failed_boots[@]}"; do
	echo "$b fail"
done
