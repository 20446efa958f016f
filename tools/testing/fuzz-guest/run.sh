#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make fuzz-guest`: generates N trigger texts from SEED (gen.py) and runs
# them through fuzz.sh, hist against rhist, in one boot of the test VM.
# Prints each difference and a summary; exits non-zero when there is one.
#
# Usage: run.sh [N [SEED]]   (2000 and 1 by default)
# FUZZ_VERBOSE=1 prints every text's outcome as well.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-2000} seed=${2:-1}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rhist-fuzz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
python3 "$here/gen.py" -n "$n" -s "$seed" -o "$tmp/fuzz-texts.txt"
files=(--file "$tmp/fuzz-texts.txt" --file "$here/../tests/lib.sh.inc")
if [ -n "${FUZZ_VERBOSE:-}" ]; then
	: > "$tmp/fuzz-verbose"
	files+=(--file "$tmp/fuzz-verbose")
fi

# About 0.2 s a text in TCG, more for C's large maps: allow 1 s a text,
# and 300 s for the boot and kmemleak's scan.
start=$SECONDS
rc=0
"$here/../vm/run.sh" --timeout $((300 + n)) "${files[@]}" "$here/fuzz.sh" || rc=$?
echo "fuzz-guest: N=$n SEED=$seed, $((SECONDS - start)) s wall time, exit $rc"
exit $rc
