# SPDX-License-Identifier: GPL-2.0
# How `make check` reads results and adds them up, apart from check.sh so
# that the runner suite can feed each rule what it must refuse. Sourced
# (bash).

# Every suite of check.sh, in the order of its summary.
ALL_SUITES="build lint host selftests build-dropin selftests-dropin clients fault exporter
	dkms bench-smoke kunit runner e2e fuzz fuzz-seq soak perf"
ALL_SUITES=$(echo $ALL_SUITES)

# check_suites NAMES: each of NAMES (RHIST_SUITES) is a suite it may
# name (not build, which always runs, nor build-dropin, which runs for
# the suites that boot the drop-in kernel); else says which is not, and
# fails.
check_suites() {
	local s named=" ${ALL_SUITES/build-dropin /} "
	named=${named/ build / }
	for s in $1; do
		[[ "$named" == *" $s "* ]] && continue
		echo "RHIST_SUITES: no suite '$s' (the suites:$named)"
		return 1
	done
}

# kunit_counts LOG: "PASSED FAILED" of the KTAP subtests in LOG. A
# skipped case, a suite that reports fewer results than its plan, or
# fewer than MIN (default 11) cases in all, counts as a failure (the
# reason on stderr).
kunit_counts() {
	awk -v min="${2:-11}" '
		/^ *# Subtest: / { insuite = 1; plan = -1; got = 0; name = $3; next }
		insuite && /^ +1\.\.[0-9]+$/ { sub(/^ +1\.\./, ""); plan = $0 + 0; next }
		insuite && /^ +ok [0-9]+ .*# SKIP/ {
			f++; got++; print "    SKIPPED " $0 > "/dev/stderr"; next }
		insuite && /^ +ok [0-9]+ / { p++; got++; next }
		insuite && /^ +not ok [0-9]+ / { f++; got++; print "    FAILED  " $0 > "/dev/stderr"; next }
		insuite && /^(not )?ok [0-9]+ / {
			insuite = 0
			if (plan < 0 || got < plan) {
				f++
				print "    suite " name ": " got " results of a plan of " plan > "/dev/stderr"
			}
		}
		END {
			if (insuite) { f++; print "    suite " name " did not end" > "/dev/stderr" }
			if (p + f < min) { print "    " p + f " KUnit cases, fewer than " min > "/dev/stderr"; f++ }
			print p + 0, f + 0
		}' "$1"
}

# summarize RECORDS OWED: the summary of the records ("SUITE PASSED
# FAILED" lines), then "N passed, N failed"; a suite of OWED with no
# record is a failure, named. Fails if anything failed.
summarize() {
	local records=$1 s
	for s in $2; do
		grep -q "^$s " "$records" && continue
		echo "suite $s left no result: counted as failed"
		echo "$s 0 1" >> "$records"
	done
	awk '{ printf "  %-16s %4d passed, %d failed\n", $1, $2, $3; p += $2; f += $3 }
		END { print p + 0 " passed, " f + 0 " failed"; exit f > 0 }' "$records"
}
