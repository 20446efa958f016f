#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make check`: installs what is missing, builds the kernel and modules,
# and runs every suite: host (cargo test of the core, its map and its
# percentile sketch under loom), lint (rustfmt, clippy, checkpatch, the
# event path's pages),
# KUnit (in the VM), the VM runner's own tests, the
# tracefs end-to-end tests, the guest fuzzer (hist against rhist), the
# sequence fuzzer (random sequences of writes, hist against rhist), the
# soak, fault injection, the ftrace hist selftests, a smoke run of the
# benchmark, the DKMS path (the kernel as Debian packages, rhist built by
# DKMS against its headers, booted), perf beside rhist on the same
# tracepoints, and on the drop-in kernel (no C hist: rhist is hist) the
# real clients against both kernels and the selftests untranslated. Ends
# with the line "N passed, N failed" that counts every test of every
# suite; exits non-zero on any failure. Two chains of suites run side by
# side, each keeping about one host core busy (see "in the background"),
# and the last suites go to whichever chain is free first ("shared").
#
# RHIST_FLAVOUR: the kernel to build and boot, test by default (`make
# check-kasan`: kasan). RHIST_SUITES: the suites to run besides setup and
# build, all by default (e.g. "kunit e2e").
set -uo pipefail
. "$(dirname "$0")/vm/lib.sh"
cd "$RHIST_TOP"

flavour=${RHIST_FLAVOUR:-test}
export RHIST_FLAVOUR=$flavour # for the scripts that boot the VM themselves
want() { [ -z "${RHIST_SUITES:-}" ] || [[ " $RHIST_SUITES " == *" $1 "* ]]; }
# (Below, the body of each `if want SUITE` is not indented.)
. tools/testing/results.sh
check_suites "${RHIST_SUITES:-}" || { echo "0 passed, 1 failed"; exit 1; }
# The suites this run owes a result: a suite that leaves none (a chain
# that died, a suite never reached) fails in the summary.
owed=build
for s in ${ALL_SUITES#build }; do
	case $s in
	build-dropin) want clients || want selftests-dropin || continue ;;
	*) want "$s" || continue ;;
	esac
	owed="$owed $s"
done

VM=tools/testing/vm
logs=$RHIST_BUILD/check
[ "$flavour" = test ] || logs=$logs-$flavour
rm -rf "$logs"
mkdir -p "$logs"
# Each suite's counts, one line "NAME PASSED FAILED", from the suites in
# the background too.
records=$logs/records
: > "$records"

# record SUITE PASSED FAILED
record() { echo "$1 $2 $3" >> "$records"; }

# one NAME CMD...: a test that passes when CMD succeeds; output to a log.
one_passed=0 one_failed=0
one() {
	local name=$1 log=$logs/$1.log
	shift
	if "$@" > "$log" 2>&1; then
		echo "    ok      $name"
		one_passed=$((one_passed + 1))
	else
		echo "    FAILED  $name (log: $log)"
		tail -15 "$log" | sed 's/^/        /'
		one_failed=$((one_failed + 1))
	fi
}
suite_start() { echo "==> suite $1"; one_passed=0 one_failed=0; suite_t0=$SECONDS; }
suite_end() {
	record "$1" "$one_passed" "$one_failed"
	echo "==> suite $1: $one_passed passed, $one_failed failed ($((SECONDS - suite_t0)) s)"
}

# cargo with its target directories outside the clone (cargo-cached.sh).
export RHIST_CARGO=$RHIST_TOP/tools/build/cargo-cached.sh

# A setup that fails stops the check at once, its reason last but for
# the total.
if ! step "setup" "$VM/setup.sh" 2> "$logs/setup.err"; then
	cat "$logs/setup.err"
	echo "setup failed: $(tail -1 "$logs/setup.err")"
	echo "0 passed, 1 failed"
	exit 1
fi
cat "$logs/setup.err" >&2

# --- build -----------------------------------------------------------------
suite_start build
one kernel "$VM/kernel.sh" "$flavour"
one modules "$VM/modules.sh" "$flavour"
suite_end build
built=$one_failed

# --- lint ------------------------------------------------------------------
if want lint; then
suite_start lint
one rustfmt-core sh -c 'cd rust/core && cargo fmt --check'
one rustfmt-cmap sh -c 'cd tools/testing/bench/cmap && cargo fmt --check'
# The module's files, with the kernel's rustfmt settings (rustfmt follows
# the module declarations from the crate root).
one rustfmt-module rustfmt --edition 2021 --check rust/rhist_main.rs
one rustfmt-fuzz rustfmt --edition 2021 --check tools/testing/fuzz/fuzz_targets/parse_build.rs
one rustfmt-exporter sh -c 'cd tools/rhist-exporter && cargo fmt --check'
one clippy-exporter sh -c 'cd tools/rhist-exporter &&
	$RHIST_CARGO exporter rhist-exporter clippy -q --locked -- -D warnings'
one clippy-core sh -c 'cd rust/core && $RHIST_CARGO core rhist_core clippy --all-targets -- -D warnings'
# Every crate the static exporter links is GPL-2.0 compatible.
one licences-rules python3 tools/testing/lint/licences.py --self-test
one exporter-licences python3 tools/testing/lint/licences.py
# The host fuzzer's target compiles against the core as it is (it went
# unbuilt, and broken, while the core's API moved on). libFuzzer is C++:
# clang++, which setup.sh installs (clang), not g++, which it does not.
one fuzz-target-builds sh -c 'cd tools/testing/fuzz && CXX=clang++ $RHIST_CARGO fuzz "rhist-fuzz rhist_core" check -q'
# No stack frame of the module over 3 KB (a large value built on the
# stack before it is moved to the heap, say).
one stack-frames python3 tools/testing/lint/frames.py rhist.ko
# An event's code is a page: the probe and each program shape in
# page-aligned sections of at most a page (histogram/shapes.rs).
one event-text python3 tools/testing/lint/event_text.py rhist.ko
# No two units of the shell, or of the core, import each other, however
# far round.
one imports python3 tools/testing/lint/imports.py
# checkpatch runs from outside this git repository: inside one, it reads
# the patch files as files added by the repository's own history.
checkpatch() {
	(cd /tmp && "$(kernel_tree "$flavour")/scripts/checkpatch.pl" --strict "$@")
}
# The tree is unpacked from a tarball, without the history in which a
# Fixes: tag's commit could be looked up.
for p in patches/*.patch; do
	[ "${p#patches/0000-}" = "$p" ] || continue
	one "checkpatch-$(basename "$p" .patch | cut -c1-4)" checkpatch \
		--ignore UNKNOWN_COMMIT_ID "$RHIST_TOP/$p"
done
# The packaging patches make kernel-deb applies (patches/deb/).
for p in patches/deb/*.patch; do
	one "checkpatch-deb-$(basename "$p" .patch | cut -c1-4)" checkpatch "$RHIST_TOP/$p"
done
# `make KDIR=` checks the kernel for the series first: the test
# kernel passes; a tree without an export, an option and a binding of
# patch 0006 and 0008, without CONFIG_RUST, and built by a rustc not
# here, is refused, by name.
one kdir-check-accepts-the-test-kernel tools/build/kdir-check.sh "$(kernel_tree test)"
one kdir-check-names-missing-patches sh -c 'k=$1 f=$(mktemp -d); trap "rm -rf $f" EXIT
	touch $f/Makefile && mkdir -p $f/rust/bindings &&
	grep -v "HIST_TRIGGERS_README\|^CONFIG_RUST=" $k/.config |
		sed "s/^CONFIG_RUSTC_VERSION_TEXT=.*/CONFIG_RUSTC_VERSION_TEXT=\"rustc 0.1.0\"/" > $f/.config &&
	grep -v "	find_synth_event	" $k/Module.symvers > $f/Module.symvers &&
	grep -v trace_synth.h $k/rust/bindings/bindings_helper.h > $f/rust/bindings/bindings_helper.h || exit 2
	! tools/build/kdir-check.sh $f > "$0" && cat "$0" &&
	grep -q "without CONFIG_RUST=y" "$0" &&
	grep -q "built by .rustc 0.1.0., and no rustc of that version" "$0" &&
	grep -q "does not export find_synth_event: patch 0006-" "$0" &&
	grep -q "Rust bindings lack .*trace_synth.h.*: patch 0006-" "$0" &&
	grep -q "no option HIST_TRIGGERS_README: patch 0008-" "$0" &&
	[ $(grep -c "is missing" "$0") = 3 ]' "$logs/kdir-check.out" "$(kernel_tree test)"
# A headers package's tree has include/config/auto.conf, whose strings
# are not quoted, and no .config: kdir-check still finds the rustc.
one kdir-check-reads-auto-conf sh -c 'k=$0 f=$(mktemp -d); trap "rm -rf $f" EXIT
	mkdir -p $f/include/config $f/rust $f/kernel/trace &&
	touch $f/Makefile $f/rust/libkernel.rmeta $f/kernel/trace/trace.h &&
	cp $k/include/config/auto.conf $f/include/config/ && cp $k/Module.symvers $f/ || exit 2
	grep "^CONFIG_RUSTC_VERSION_TEXT=rustc " $f/include/config/auto.conf &&
	[ "$(tools/build/kdir-check.sh --rustc $f)" = /usr/bin/rustc ] && tools/build/kdir-check.sh $f' \
	"$(kernel_tree test)"
# The cover letter names every patch of the series, in order.
one cover-letter sh -c 'for p in patches/*.patch; do
		[ "${p#patches/0000-}" = "$p" ] || continue
		sed -n "s/^Subject: \[PATCH [0-9]*\/[0-9]*\] //p" "$p" | head -1
	done > "$0.subjects"
	n=$(wc -l < "$0.subjects")
	grep -q "^Subject: \[PATCH 0/$n\] " patches/0000-cover-letter.patch &&
	while IFS= read -r s; do grep -qF "  $s" patches/0000-cover-letter.patch || exit 1; done < "$0.subjects"' \
	"$logs/cover-letter"
# The comparison of a hist file with an rhist file, which every suite
# that has C as its oracle uses (tools/testing/compare/): it takes
# reordered ties, and fails on what a sorted comparison forgave. Each case
# is a test, and the list of cases must not shrink.
hist_same_cases=$(tools/testing/compare/selftest.sh)
one hist-same-cases sh -c '[ $(echo "$0" | wc -w) -ge 12 ]' "$hist_same_cases"
for c in $hist_same_cases; do
	one "hist-same-$c" tools/testing/compare/selftest.sh "$c"
	one "hist-canon-$c" tools/testing/compare/selftest.sh "$c" canon
done
for f in include/rhist_shim.[ch] tools/testing/rhist_test_events/rhist_test_{events.[ch],race.c} \
	tools/testing/clients/{hist_client,json_check}.c tools/testing/bench/bpf/rhist_bpf{,.bpf}.c \
	tools/testing/bench/pingpong.c; do
	one "checkpatch-$(basename "$f")" checkpatch --no-tree -f "$RHIST_TOP/$f"
done
suite_end lint
fi

vm() { "$VM/run.sh" --flavour "$flavour" --timeout "${2:-300}" --log "$logs/$(basename "$1" .sh).console" "$1"; }

# --- the suites in the background, beside the others -------------------
# The VMs of most suites keep one host core busy, not two: the host
# tests, the selftests, the clients, fault injection and the bench smoke
# run in a background chain beside KUnit, the runner and the end-to-end
# tests, and print when those are done; the fuzzers, the soak and perf
# go to the first chain free ("shared" below). First the helpers both
# chains use.

# soak_line LOG NAME: the line of NAME passes.
soak_line() {
	local line
	line=$(grep "^soak: $2 ops=" "$1" | tail -1)
	echo "${line:-no line for $2}"
	[[ "$line" =~ \ ops=([0-9]+)\ errors=0( |$) ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]
}
# vm_finished LOG WORD: the script printed "WORD: done" and the runner
# found nothing wrong with the kernel.
vm_finished() {
	grep -q "^$2: done$" "$1" || { echo "the run did not finish"; tail -20 "$1"; return 1; }
	! grep -A20 'rhist-vm: ' "$1"
}
# selftest_results LOG: ftracetest's result lines, "[n] description\t[RESULT]".
# ftracetest prints the description, runs the test, then the result: a
# kernel message printed meanwhile splits the line, and the result
# follows on a line of its own.
selftest_results() {
	awk '/^\[[0-9]+\]/ { if (held != "") print held; held = ""
			 if ($0 ~ /\t\[[A-Z]+\]$/) print; else held = $0; next }
	     held != "" && /^\t\[[A-Z]+\]$/ { print held $0; held = ""; next }
	     END { if (held != "") print held }' "$1"
}
# A pass is PASS, or XFAIL from the one test that expects a failure
# (ftracetest puts a tab before the result).
selftest_ok='\[PASS\]$|expected fail actions[[:space:]]+\[XFAIL\]$'

# --- the drop-in kernel: real clients, and the selftests untranslated ------
# The drop-in kernel is built without C's hist triggers, and rhist
# registers as hist there. tools/testing/clients/clients.sh runs trace-cmd
# and hist_client (libtracefs) on it and on the test kernel, against C's
# hist: each step must pass on both kernels ("STEP-test",
# "STEP-dropin"), and print the same, counts aside ("STEP-same").
vm_on() { # vm_on FLAVOUR SCRIPT TIMEOUT NAME: the console in $logs/NAME.console
	"$VM/run.sh" --flavour "$1" --timeout "$3" --log "$logs/$4.console" "$2"
}
# step_ok LOG STEP: the guest printed "clients: STEP ok".
step_ok() {
	grep "^clients: $2 " "$1" || echo "no line for $2"
	grep -q "^clients: $2 ok$" "$1"
}
# section LOG STEP: what STEP printed.
section() {
	awk -v s="=== $2" '$0 == s { on = 1; next } /^(=== |clients: )/ { on = 0 } on' "$1"
}
same_section() {
	diff -u <(section "$1" "$3") <(section "$2" "$3")
}
# --- shared: suites either chain runs, whichever gets to them first -------
# In a warm run the background chain ends some minutes before the one in
# front; in a cold one it also builds the drop-in kernel. So the last
# suites go to the first chain free: each chain, at its end, claims the
# next one not yet claimed (mkdir is atomic) and runs it.

# --- fuzz: mutated trigger texts, hist against rhist ------------------------
# 2,000 texts from a fixed seed, in one boot (`make fuzz-guest` runs more):
# one test, which any difference fails; the log lists each one.
suite_fuzz() {
suite_start fuzz
if [ "$built" = 0 ]; then
	one fuzz-guest-2000 tools/testing/fuzz-guest/run.sh 2000 1
	grep -h '^fuzz-guest: ' "$logs/fuzz-guest-2000.log" | sed 's/^/    /'
	# Every text was tried, and enough were taken by both to compare
	# their files (388 of seed 1's 2000 in November 2026).
	one fuzz-guest-did-all sh -c 'grep -q "fuzz-guest: 2000 texts, " "$0" &&
		n=$(sed -n "s/.*fuzz-guest: accepted by both: \([0-9]*\).*/\1/p" "$0" | tail -1) &&
		echo "accepted by both: $n" && [ "${n:-0}" -ge 300 ]' "$logs/fuzz-guest-2000.log"
else
	one_failed=2
fi
suite_end fuzz
}

# --- fuzz-seq: random sequences of writes, hist against rhist ---------------
# RHIST_SEQ_N sequences from a fixed seed, in a boot per host core (`make
# fuzz-seq` runs more): one test, which a crash, a hang, a kernel warning
# or any difference fails; the log lists each difference. Then
# RHIST_SEQ_EXT_N with rhist's extensions (EXT=1): crashes, warnings and
# leaks fail it, and what comes before the first extension differing.
suite_fuzz_seq() {
suite_start fuzz-seq
if [ "$built" = 0 ]; then
	one fuzz-seq tools/testing/fuzz-seq/run.sh "${RHIST_SEQ_N:-40}" 1
	grep -h '^fuzz-seq: ' "$logs/fuzz-seq.log" | sed 's/^/    /'
	one fuzz-seq-ext env RHIST_FUZZ_SEQ_EXT=1 tools/testing/fuzz-seq/run.sh \
		"${RHIST_SEQ_EXT_N:-16}" 1
	grep -h '^fuzz-seq: ' "$logs/fuzz-seq-ext.log" | sed 's/^/    /'
	# Every sequence asked for was run, in both.
	n=${RHIST_SEQ_N:-40} ne=${RHIST_SEQ_EXT_N:-16}
	one fuzz-seq-did-all sh -c 'grep -q "^fuzz-seq: N=$1 SEED=1, $1 sequences done," "$0" &&
		grep -q "^fuzz-seq: N=$3 SEED=1, $3 sequences done," "$2"' \
		"$logs/fuzz-seq.log" "$n" "$logs/fuzz-seq-ext.log" "$ne"
else
	one_failed=3
fi
suite_end fuzz-seq
}

# --- soak: concurrent trigger changes under load, unload, exact counts ------
# One boot of tools/testing/soak/soak.sh (a minute of jobs): each job that
# reports "soak: JOB ops=N errors=0" with N > 0 passes, as do the unload
# under load and the final count against hist; "run" passes when the
# script finished and the kernel reported no problem.
suite_soak() {
suite_start soak
if [ "$built" = 0 ]; then
	vm tools/testing/soak/soak.sh > "$logs/soak.log" 2>&1
	jobs=$(sed -n 's/^soak: jobs //p' "$logs/soak.log" | tail -1)
	for j in ${jobs:-fire add-remove named readers pause-cont-clear instances truncate} \
		unload final-count; do
		one "soak-$j" soak_line "$logs/soak.log" "$j"
	done
	one soak-run vm_finished "$logs/soak.log" soak
else
	one_failed=1
fi
suite_end soak
}

# --- perf beside rhist: Debian's perf on the tracepoints rhist's triggers use
# One boot of tools/testing/perf/perf.sh with perf staged over the guest's
# root: each step it lists is a test.
suite_perf() {
suite_start perf
if [ "$built" = 0 ] && one perf-stage tools/testing/perf/stage.sh "$RHIST_BUILD/perf"; then
	"$VM/run.sh" --flavour "$flavour" --timeout 600 --log "$logs/perf.console" \
		--overlay "$RHIST_BUILD/perf" --file tools/testing/tests/lib.sh.inc \
		tools/testing/perf/perf.sh > "$logs/perf.log" 2>&1
	steps=$(sed -n 's/^perf: steps //p' "$logs/perf.log" | tail -1)
	for s in ${steps:-stat record remove-while-recording stop-while-firing sched_switch synthetic}; do
		one "perf-$s" grep -x "perf: $s ok" "$logs/perf.log"
	done
	one perf-run vm_finished "$logs/perf.log" perf
	grep '^perf-count: ' "$logs/perf.log" | sed 's/^/    /'
else
	one_failed=$((one_failed + 1))
fi
suite_end perf
}

shared_suites="fuzz fuzz-seq soak perf"
run_shared_suites() {
	local suite
	for suite in $shared_suites; do
		want "$suite" || continue
		mkdir "$logs/claim.$suite" 2> /dev/null || continue
		"suite_${suite//-/_}"
	done
}

(
# --- host: the portable core's own tests -------------------------------
if want host; then
echo "==> suite host (cargo test in rust/core)"
t0=$SECONDS
# Then the map's insert protocol under loom's model checker (it fails if
# the publishing store is made Relaxed), and the percentile sketch's page
# claims, counts and racing reads, and :grow's publish, wait and fold,
# in a target directory of their own.
(cd rust/core && {
	$RHIST_CARGO core rhist_core test --no-fail-fast --all-targets 2>&1
	rc=$?
	RUSTFLAGS="--cfg loom" $RHIST_CARGO core-loom rhist_core \
		test --release --test loom_map --test loom_sketch --test loom_grow 2>&1 || rc=1
	exit $rc
}) > "$logs/host.log"
host_rc=$?
read -r hp hf < <(sed -n 's/^test result: [a-zA-Z]*\. \([0-9]*\) passed; \([0-9]*\) failed.*/\1 \2/p' "$logs/host.log" |
	awk '{ p += $1; f += $2 } END { print p + 0, f + 0 }')
# Each loom target ran tests: without the cfg reaching rustc, they are
# compiled out and run none.
for t in loom_map loom_sketch loom_grow; do
	# (The last run of the target: the first is cargo test's, without loom.)
	n=$(awk -v t="tests/$t.rs" 'index($0, "Running " t) { on = 1; next }
		on && /^running [0-9]+ tests?$/ { n = $2; on = 0 } END { print n + 0 }' "$logs/host.log")
	[ "${n:-0}" -gt 0 ] || { echo "    $t ran no test"; hf=$((hf + 1)); }
done
if [ $host_rc != 0 ] && [ "$hf" = 0 ]; then
	hf=1 # it did not build, or cargo failed outside a test
	tail -20 "$logs/host.log"
fi
grep -E '^test .* FAILED$' "$logs/host.log" | sed 's/^/    /'
record host "$hp" "$hf"
echo "==> suite host: $hp passed, $hf failed ($((SECONDS - t0)) s)"
fi

# --- the kernel's ftrace selftests: translated to rhist, and against hist ---
# One boot of ftrace-rhist.sh (about 6 minutes): every hist selftest of
# 6.12 against rhist, translated, then against hist, whose result lines
# read "[n] (hist) ...".
# selftest_suite NAME BUILT RUN...: one boot of RUN (a VM run, whose
# output goes to $logs/NAME.log), counted as ftracetest's result lines.
# A kernel problem during the run fails the suite even if every test
# passed (ftracetest's own failures are counted from the lines).
selftest_suite() {
	local name=$1 ok=$2 log=$logs/$1.log sp=0 sf=0 vm_rc t0=$SECONDS
	shift 2
	if [ "$ok" = 0 ]; then
		"$@" > "$log" 2>&1
		vm_rc=$?
		selftest_results "$log" > "$logs/$name.results"
		sp=$(grep -cE "$selftest_ok" "$logs/$name.results")
		sf=$(grep -cvE "$selftest_ok" "$logs/$name.results")
		sed 's/^/    /' "$logs/$name.results"
		[ "$sp" -gt 0 ] || { echo "    no selftest ran (log: $log)"; sf=$((sf + 1)); }
		# As many results as the guest asked ftracetest for.
		asked=$(sed -n 's/.*selftests: asked \([0-9]*\).*/\1/p' "$log" | tail -1)
		if [ -z "$asked" ] || [ $((sp + sf)) -lt "$asked" ]; then
			echo "    $((sp + sf)) results of ${asked:-an unknown number of} selftests asked for"
			missing=$((${asked:-1} - sp - sf))
			[ "$missing" -gt 0 ] || missing=1
			sf=$((sf + missing))
		fi
		if [ "$vm_rc" != 0 ] && [ "$sf" = 0 ]; then
			echo "    the VM run failed with status $vm_rc (log: $log)"
			sf=1
		fi
	else
		sf=1
	fi
	record "$name" "$sp" "$sf"
	echo "==> suite $name: $sp passed, $sf failed ($((SECONDS - t0)) s)"
}
# The selftests against hist test the kernel, not rhist: their results
# are kept outside the clone, keyed by the test kernel's image and the
# selftests' files, and the guest runs them only when one changed (or
# the last run of them failed). rhist's run is never cached.
hist_selftests_key() {
	local tree
	tree=$(kernel_tree "$flavour")
	{
		sha256sum "$tree/arch/x86/boot/bzImage" | cut -d' ' -f1
		(cd "$tree/tools/testing/selftests/ftrace" && find . -type f | LC_ALL=C sort |
			xargs sha256sum)
		sha256sum tools/testing/selftests/ftrace.sh.inc tools/testing/selftests/ftrace-rhist.sh
	} | sha256sum | cut -c1-16
}
# selftests_run: one boot of ftrace-rhist.sh, with hist's results from
# the cache when it has them (said in the log, and counted as asked).
selftests_run() {
	local cache files=() rc asked
	cache=$RHIST_KCACHE/selftests-hist/$(hist_selftests_key) || return 1
	if [ -s "$cache" ]; then
		: > "$logs/hist-selftests-cached"
		files=(--file "$logs/hist-selftests-cached")
	fi
	"$VM/run.sh" --flavour "$flavour" --timeout 900 --log "$logs/ftrace-rhist.console" \
		"${files[@]}" tools/testing/selftests/ftrace-rhist.sh > "$logs/selftests.run" 2>&1
	rc=$?
	cat "$logs/selftests.run"
	if [ ${#files[@]} != 0 ]; then
		echo "selftests: the (hist) results of this kernel image and these selftests, from $cache"
		cat "$cache"
		asked=$(sed -n 's/.*selftests: asked \([0-9]*\).*/\1/p' "$logs/selftests.run" | tail -1)
		echo "selftests: asked $((${asked:-0} + $(wc -l < "$cache")))"
	elif [ $rc = 0 ]; then
		mkdir -p "$(dirname "$cache")"
		selftest_results "$logs/selftests.run" | grep '^\[[0-9]*\] (hist) ' > "$cache.tmp" &&
			mv "$cache.tmp" "$cache"
	fi
	return $rc
}
if want selftests; then
echo "==> suite selftests (ftracetest, hist tests against rhist and hist)"
selftest_suite selftests "$built" selftests_run
fi

# The drop-in kernel, built here rather than before the chains: cold, its
# build (a copy of the test kernel's tree, rebuilt where dropin.config
# differs) shares the host with the chain in front instead of stopping it.
dropin_built=1
if want clients || want selftests-dropin; then
suite_start build-dropin
one kernel-dropin "$VM/kernel.sh" dropin
one modules-dropin "$VM/modules.sh" dropin
suite_end build-dropin
dropin_built=$one_failed
fi

# The hist selftests of 6.12, untranslated, on the drop-in kernel: a pass
# is PASS, or XFAIL from the one test that expects a failure.
if want selftests-dropin; then
echo "==> suite selftests-dropin (ftracetest, hist tests untranslated, rhist as hist)"
selftest_suite selftests-dropin "$dropin_built" \
	vm_on dropin tools/testing/selftests/ftrace-dropin.sh 900 selftests-dropin
fi

client_steps="trace-cmd-start trace-cmd-stat trace-cmd-list hist-file hist-file-exact trace-cmd-reset
	trace-cmd-rejected hist-client-hist hist-client-synth synth-events-shown"
if want clients; then
suite_start clients
if [ "$built" = 0 ] && [ "$dropin_built" = 0 ]; then
	vm_on test tools/testing/clients/clients.sh 300 clients-test > "$logs/clients-test.log" 2>&1
	vm_on dropin tools/testing/clients/clients.sh 300 clients-dropin > "$logs/clients-dropin.log" 2>&1
	for s in $client_steps; do
		one "$s-test" step_ok "$logs/clients-test.log" "$s"
		one "$s-dropin" step_ok "$logs/clients-dropin.log" "$s"
		one "$s-same" same_section "$logs/clients-test.log" "$logs/clients-dropin.log" "$s"
	done
	one clients-run-test vm_finished "$logs/clients-test.log" clients
	one clients-run-dropin vm_finished "$logs/clients-dropin.log" clients
	# `make run DROPIN=1` without a terminal: the demo, rhist as hist
	# (the test kernel's demo shows C's hist file too, but also rhist's).
	one make-run-dropin-demo sh -c 'make -s run DROPIN=1 </dev/null > "$0" 2>&1; cat "$0"
		grep -q "^# trigger info: hist:keys=a:vals=hitcount:sort=hitcount:size=2048 \[active\]$" "$0" &&
		! grep -q "rhist:keys" "$0"' "$logs/make-run-dropin.out"
else
	one_failed=1
fi
suite_end clients
fi

# --- fault injection: rhist's allocations failed one by one ----------------
# One boot of tools/testing/fault/fault.sh: a path passes when it printed
# "fault: PATH injected=K ok=A clean_errno=B bad=0" with K > 0.
fault_line() {
	local line
	line=$(grep "^fault: $2 injected=" "$1" | tail -1)
	echo "${line:-no line for $2}"
	[[ "$line" =~ \ injected=([0-9]+)\ .*\ bad=0( |$) ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]
}
if want fault; then
suite_start fault
if [ "$built" = 0 ]; then
	vm tools/testing/fault/fault.sh 900 > "$logs/fault.log" 2>&1
	paths=$(sed -n 's/^fault: paths //p' "$logs/fault.log" | tail -1)
	for p in ${paths:-create named share share_filter ref synth handlers hidden enable remove clear grow read_rhist read_debug read_json instance_trigger rmdir truncate unload}; do
		one "fault-$p" fault_line "$logs/fault.log" "$p"
	done
	grep '^fault: total ' "$logs/fault.log" | tail -1 | sed 's/^/    /'
	one fault-run vm_finished "$logs/fault.log" fault
else
	one_failed=1
fi
suite_end fault
fi

# --- the Prometheus exporter: its own tests, and a real Prometheus --------
# The unit tests; a scrape of fixture documents (--once) that promtool,
# from Debian's prometheus, finds valid; then one boot of the test kernel
# whose exporter a Prometheus on the host scrapes (exporter/prometheus.sh:
# prometheus-count, prometheus-quantiles, prometheus-rate, the fleet's
# p99 of two exporters, prometheus-clean).
if want exporter; then
suite_start exporter
one exporter-unit sh -c 'cd tools/rhist-exporter && $RHIST_CARGO exporter rhist-exporter test -q --locked'
one exporter-promtool sh -c 'command -v promtool > /dev/null || exit 1
	cd tools/rhist-exporter &&
	$RHIST_CARGO exporter rhist-exporter run -q --locked -- --once --tracefs tests/tracefs > "$0" &&
	cat "$0" && grep -q "^rhist_lat2_hitcount_total{pid=\"-1\",trace_instance=\"X\"} 4$" "$0" &&
	grep -q "^rhist_lat_log2_lat_bucket{pid=\"7\",le=\"8\"} 5$" "$0" &&
	grep -q "^rhist_sched_sched_switch_lat_bucket{common_pid=\"13\",common_pid_text=\"sh\",s=\"\",le=\"3\"} 1$" "$0" &&
	promtool check metrics < "$0"' "$logs/exporter-once.txt"
# And the summaries of --summary, the other kind of family.
one exporter-promtool-summary sh -c 'command -v promtool > /dev/null || exit 1
	cd tools/rhist-exporter &&
	$RHIST_CARGO exporter rhist-exporter run -q --locked -- --once --summary --tracefs tests/tracefs > "$0" &&
	grep -q "^# TYPE rhist_sched_sched_switch_lat summary$" "$0" && promtool check metrics < "$0"' \
	"$logs/exporter-once-summary.txt"
# Stack traces folded for a flame graph, against a golden file.
one exporter-folded-golden sh -c 'cd tools/rhist-exporter &&
	$RHIST_CARGO exporter rhist-exporter run -q --locked -- --once --folded --tracefs tests/tracefs |
	diff -u tests/folded.golden -'
if [ "$built" = 0 ]; then
	tools/testing/exporter/prometheus.sh "$logs/prometheus" > "$logs/prometheus.log" 2>&1
	for t in prometheus-count prometheus-quantiles exporter-folded prometheus-rate \
		prometheus-fleet-p99 prometheus-fleet-count prometheus-fleet-shift exporter-triggers \
		prometheus-clean; do
		one "$t" sh -c 'cat "$0"; grep -q "^ok $1" "$0"' "$logs/prometheus.log" "$t"
	done
else
	one_failed=5
fi
suite_end exporter
fi

# --- DKMS: the packaged kernel, rhist built for it by DKMS -----------------
# make kernel-deb's packages (cached; built in the test kernel's tree when
# the kernel changed), then tools/testing/dkms/dkms.sh: dkms add, build and
# install in a throw-away root against the linux-headers package, and a
# boot of the linux-image package's vmlinuz with that rhist.ko, running
# the smoke test. Each step it lists is a test.
if want dkms; then
suite_start dkms
if [ "$built" = 0 ]; then
	one kernel-deb sh -c 'tools/build/kernel-deb.sh "$0" > "$1" && cat "$1" &&
		grep -q "^linux-image-.*\.deb [0-9]" "$1" && grep -q "^linux-headers-.*\.deb [0-9]" "$1"' \
		"$RHIST_BUILD/deb" "$logs/kernel-deb.out"
	tools/testing/dkms/dkms.sh "$RHIST_BUILD/deb" "$logs" > "$logs/dkms.log" 2>&1
	steps=$(sed -n 's/^dkms: steps //p' "$logs/dkms.log" | tail -1)
	for s in ${steps:-headers kdir-check-wants-rust-metadata add build install vermagic \
		skips-kernel-without-rust boot-smoke}; do
		one "dkms-$s" grep -x "dkms: $s ok" "$logs/dkms.log"
	done
	one dkms-run grep -qx 'dkms: done' "$logs/dkms.log"
	grep -E '^dkms: (kernel|add, build)|^smoke: kernel' "$logs/dkms.log" | sed 's/^/    /'
else
	one_failed=1
fi
suite_end dkms
fi

# --- a smoke run of the benchmark: one round, tiny counts ----------------
if want bench-smoke; then
suite_start bench-smoke
if [ "$built" = 0 ]; then
	one bench-smoke tools/testing/bench/run.sh --smoke
else
	one_failed=1
fi
suite_end bench-smoke
fi

run_shared_suites
exit 0
) > "$logs/background.out" 2>&1 &
background=$!
trap 'kill $background 2> /dev/null' EXIT

# --- KUnit: the suites rhist.ko runs when it loads --------------------------
if want kunit; then
echo "==> suite kunit"
t0=$SECONDS
kp=0 kf=0
if [ "$built" = 0 ] && vm "$VM/idle.sh" > "$logs/kunit.log" 2>&1; then
	# KTAP: the subtests of every suite the module registers, each as
	# many as its plan, none skipped, 11 at least (results.sh).
	read -r kp kf < <(kunit_counts "$logs/kunit.log" 11)
else
	echo "    the KUnit boot failed (log: $logs/kunit.log)"
	kf=1
fi
record kunit "$kp" "$kf"
echo "==> suite kunit: $kp passed, $kf failed ($((SECONDS - t0)) s)"
fi

# --- the VM runner's own behaviour ---------------------------------------------
expect_status() { # expect_status WANT SCRIPT [TIMEOUT]
	local want=$1 rc
	shift
	vm "$@"
	rc=$?
	echo "runner exited $rc, expected $want"
	[ "$rc" = "$want" ]
}
# expect_hang: a hang is killed at 40 s: a boot takes about 12 s here,
# 25 while the other hang tests boot beside it, so the script has
# started (RHIST-READY) and hung by then.
expect_hang() {
	expect_status 124 tools/testing/runner/hang.sh 40 &&
		grep -q "^RHIST-READY" "$logs/hang.console"
}
# started NAME CMD...: CMD runs in the background, judged at "one NAME
# finished NAME": the tests of hangs, whose guests idle until their time
# limit, wait beside the runner's other tests instead of before them.
declare -A started_pids
started() {
	local name=$1
	shift
	"$@" > "$logs/$name.started" 2>&1 &
	started_pids[$name]=$!
}
finished() {
	local rc=0
	wait "${started_pids[$1]}" || rc=$?
	cat "$logs/$1.started"
	return $rc
}
if want runner; then
suite_start runner
if [ "$built" = 0 ]; then
	started fails-on-hang expect_hang
	# Scripts sharing a boot: the one the kernel warned in fails alone,
	# and so does one that hangs, after which the rest get a new boot
	# (the boot's 60 s: it and the two scripts before the hang take 15,
	# 30 beside the other boots). In a directory of its own, as the next.
	mkdir -p "$logs/judges" "$logs/kills"
	started group-judges-each sh -c 'r=tools/testing/runner
		RHIST_GROUP_TIMEOUT=60 "$0/run-group.sh" "$1" $r/exit-7.sh $r/kernel-warning.sh \
			$r/hang.sh $r/exit-0.sh | tee /dev/stderr | tr "\n" " " |
		grep -qx "exit-7 fail kernel-warning fail hang fail exit-0 pass "' "$VM" "$logs/judges"
	# A script that hangs is killed at its time limit, and the next one
	# runs in the same boot.
	started group-kills-a-script-at-its-limit sh -c 'r=tools/testing/runner
		RHIST_SCRIPT_TIMEOUT=5 RHIST_GROUP_TIMEOUT=200 "$0/run-group.sh" "$1" $r/hang.sh $r/exit-0.sh |
			tee /dev/stderr | tr "\n" " " | grep -qx "hang fail exit-0 pass " &&
		grep -q "^hang: killed after its 5 s" "$1/hang.group" && ! [ -e "$1/group-2.console" ]' "$VM" "$logs/kills"
	one passes-script-status expect_status 0 tools/testing/runner/exit-0.sh
	one fails-on-script-failure expect_status 7 tools/testing/runner/exit-7.sh
	one fails-on-kernel-warning expect_status 3 tools/testing/runner/kernel-warning.sh
	one fails-on-rcu-stall expect_status 3 tools/testing/runner/rcu-stall.sh
	# A kernel report outside every script fails the boot, shown whole
	# in boot-N.group; the script that passed is judged again alone.
	one group-fails-a-boot-for-a-report-outside sh -c 'r=tools/testing/runner
		"$0/run-group.sh" "$1" $r/warn-later.sh | tee /dev/stderr | tr "\n" " " |
			grep -qx "warn-later alone boot-1 fail " &&
		grep -q "WARNING:" "$1/boot-1.group"' "$VM" "$logs"
	# The hang tests' time limits assume the boots beside them are these
	# (see expect_hang). Once the first has ended, the shared boots' hangs
	# have begun (at 30 s at most, of 60), and the sequence fuzzer's boots
	# run two or three at a time.
	one fails-on-hang finished fails-on-hang
	# The sequence fuzzer sees a difference: a number passed to a char[8]
	# field, which hist takes and rhist rejects (rhist.rst), shows in the
	# step's status and in the checkpointed hist file.
	started fuzz-seq-finds-a-difference sh -c 'FUZZ_VERBOSE=1 tools/testing/fuzz-seq/run.sh \
			--file tools/testing/fuzz-seq/differs.txt > "$0" 2>&1; rc=$?; cat "$0"
		[ $rc = 1 ] && grep -q "^DIFF 0: .*tw 1 Invalid argument" "$0" &&
		grep -q "^D 0: -{ a: .* hitcount: *3\$" "$0"' "$logs/fuzz-seq-differs.out"
	# hist leaves triggers on the test events that it cannot remove
	# (sequence 0, from seed 1009): the next sequence, which would then
	# differ, gets a boot of its own.
	started fuzz-seq-boots-again-after-a-hist-leak sh -c 'tools/testing/fuzz-seq/run.sh \
			--file tools/testing/fuzz-seq/hist-leak.txt > "$0" 2>&1; rc=$?; cat "$0"
		[ $rc = 0 ] && grep -q "^CLEAK 0: " "$0" &&
		grep -q "^fuzz-seq: 2 sequences, 0 differences, 0 rhist leaks, 1 hist leaks (seed file, 2 boots)$" "$0"' \
		"$logs/fuzz-seq-hist-leak.out"
	# Sequence 1238 of seed 1017: hist and rhist leave the same three
	# triggers in i1, which neither removes: counted with hist's leaks,
	# not as rhist's, and the boot ends there.
	one fuzz-seq-both-leave-the-same sh -c 'tools/testing/fuzz-seq/run.sh \
			--file tools/testing/fuzz-seq/both-leak.txt > "$0" 2>&1; rc=$?; cat "$0"
		[ $rc = 0 ] && grep -q "^CLEAK 1238: " "$0" &&
		grep -q "^BOTH 1238: hist and rhist left: i1 s:synthetic/y2 " "$0" && grep -q "^RESUME-AFTER 1238" "$0" &&
		grep -q "^fuzz-seq: 1 sequences, 0 differences, 0 rhist leaks, 1 hist leaks (seed file, 1 boots)$" "$0"' \
		"$logs/fuzz-seq-both.out"
	# An extension in braces: hist's run writes the text without it,
	# rhist's with it, and the files, which then differ, are not
	# compared from that step on.
	one fuzz-seq-extensions-not-compared sh -c 'FUZZ_VERBOSE=1 tools/testing/fuzz-seq/run.sh \
			--file tools/testing/fuzz-seq/extension.txt > "$0" 2>&1; rc=$?; cat "$0"
		[ $rc = 0 ] && grep -q "^X 0: 0 @:keys=a,common_comm:size=128:grow\$" "$0" &&
		grep -q "^X 0: 0 !@:keys=a,common_comm:size=128:grow\$" "$0" &&
		grep -q "^fuzz-seq: 1 sequences, 0 differences, 0 rhist leaks, 0 hist leaks (seed file, 1 boots)$" "$0"' \
		"$logs/fuzz-seq-extension.out"
	# `make run` without a terminal: the demo, with rhist's header.
	one make-run-demo sh -c 'make -s run </dev/null | tee /dev/stderr |
		grep -q "^# trigger info: rhist:keys=a:vals=hitcount:sort=hitcount:size=2048 \[active\]$"'
	one group-judges-each finished group-judges-each
	one group-kills-a-script-at-its-limit finished group-kills-a-script-at-its-limit
	one fuzz-seq-finds-a-difference finished fuzz-seq-finds-a-difference
	one fuzz-seq-boots-again-after-a-hist-leak finished fuzz-seq-boots-again-after-a-hist-leak
else
	one_failed=13
fi
# What check.sh itself must refuse (results.sh), on the host: each way of
# losing a suite that used to leave "N passed, 0 failed".
one refuses-an-unknown-suite sh -c 'RHIST_SUITES="e2e kunits" tools/testing/check.sh > "$0" 2>&1
	rc=$?; cat "$0"
	[ $rc = 1 ] && grep -q "^RHIST_SUITES: no suite .kunits." "$0" &&
	[ "$(tail -1 "$0")" = "0 passed, 1 failed" ]' "$logs/refuses-an-unknown-suite.out"
one fails-a-suite-without-result bash -c '. tools/testing/results.sh
	printf "build 2 0\nlint 5 0\n" > "$0"
	summarize "$0" "build lint e2e" > "$0.out"; rc=$?; cat "$0.out"
	[ $rc = 1 ] && grep -q "^suite e2e left no result" "$0.out" &&
	[ "$(tail -1 "$0.out")" = "7 passed, 1 failed" ]' "$logs/summary.records"
# KTAP as the test kernel prints it, with one case skipped, or missing.
one kunit-fails-a-skip-or-a-short-plan bash -c '. tools/testing/results.sh
	ktap() { echo "    # Subtest: rhist"; echo "    1..3"; echo "    ok 1 a"; echo "    $1"
		[ -z "$2" ] || echo "    $2"; echo "ok 1 rhist"; }
	ktap "ok 2 b" "ok 3 c" > "$0"; [ "$(kunit_counts "$0" 3)" = "3 0" ] || exit 1
	ktap "ok 2 b # SKIP no CPU" "ok 3 c" > "$0"; [ "$(kunit_counts "$0" 3)" = "2 1" ] || exit 1
	ktap "ok 2 b" "" > "$0"; [ "$(kunit_counts "$0" 3)" = "2 1" ] || exit 1
	ktap "ok 2 b" "ok 3 c" > "$0"; [ "$(kunit_counts "$0" 8)" = "3 1" ]' "$logs/kunit.ktap"
# A step fails as its command fails (setup's did not stop the check).
one step-fails-as-its-command-fails bash -c '. tools/testing/vm/lib.sh
	step "a failing step" false; [ $? = 1 ] && step "a step" true'
# The frame lint reads the functions of an object, or fails: the C
# shim's object has too few.
one frames-lint-fails-on-nothing-read sh -c '! python3 tools/testing/lint/frames.py include/rhist_shim.o'
suite_end runner
fi

# --- tracefs end to end ----------------------------------------------------
# The scripts share boots (run-group.sh); each is still one test, judged
# by what it printed and what the kernel said while it ran, and a script
# the group cannot judge runs in a boot of its own.
# judged NAME VERDICT: the script's part of the shared boot, and its verdict.
judged() { cat "$logs/$1.group"; [ "$2" = pass ]; }
if want e2e; then
suite_start e2e
if [ "$built" = 0 ]; then
	while read -r name v; do
		t=tools/testing/tests/$name.sh
		case $v in
		alone) one "$name" vm "$t" ;;
		*) one "$name" judged "$name" "$v" ;;
		esac
	done < <("$VM/run-group.sh" "$logs" tools/testing/tests/*.sh)
	# A verdict for every script, or the missing ones fail.
	scripts=$(ls tools/testing/tests/*.sh | wc -l)
	if [ $((one_passed + one_failed)) -lt "$scripts" ]; then
		echo "    $((scripts - one_passed - one_failed)) of $scripts scripts got no verdict"
		one_failed=$((scripts - one_passed))
	fi
	# Where the shared boots' time went (group.sh): the slowest scripts.
	cat "$logs"/*.group 2> /dev/null | sed -n 's/^RHIST-TEST-TIME //p' |
		sort -k2,2 -rn | head -6 | sed 's/^/    guest time: /'
else
	one_failed=$(ls tools/testing/tests/*.sh | wc -l)
fi
suite_end e2e
fi

run_shared_suites

wait $background
background_rc=$?
trap - EXIT
cat "$logs/background.out"
if [ $background_rc != 0 ]; then
	echo "the background chain exited with status $background_rc"
	record background-chain 0 1
fi

echo
if [ "$flavour" = test ]; then echo "Summary:"; else echo "Summary ($flavour kernel):"; fi
summarize "$records" "$owed"
