#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Fuzzes the rhist core: installs cargo-fuzz if missing, seeds the corpus
# from histogram.rst (seed.sh) and runs the parse_build target.
#
# Usage: run.sh [seconds] [extra libFuzzer flags...]   (default 60 s)
# A crash lands in artifacts/parse_build/; minimize it with
#   RUSTC_BOOTSTRAP=1 cargo fuzz tmin --fuzz-dir . parse_build <file>
# Set RHIST_FUZZ_SANITIZER=none where the ASan runtime is missing.

set -eu

here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
# Debian's cargo, as everywhere (../vm/lib.sh; it is bash's).
PATH=$(bash -c '. ../vm/lib.sh && echo "$PATH"')
CARGO_HOME=$(bash -c '. ../vm/lib.sh && echo "$CARGO_HOME"')
export PATH CARGO_HOME
secs=${1:-60}
[ $# -gt 0 ] && shift

if ! cargo fuzz --version >/dev/null 2>&1; then
	cargo install --locked cargo-fuzz
fi

# Seeds once (or again when asked with RHIST_FUZZ_RESEED=1); a corpus
# already grown by earlier runs is kept.
if [ ! -d corpus/parse_build ] || [ "${RHIST_FUZZ_RESEED:-0}" = 1 ]; then
	./seed.sh
fi

# cargo-fuzz needs nightly -Z flags; the stable toolchain takes them so.
export RUSTC_BOOTSTRAP=1
exec cargo fuzz run --fuzz-dir . --sanitizer "${RHIST_FUZZ_SANITIZER:-address}" \
	parse_build corpus/parse_build -- \
	-dict=parse_build.dict -max_len=4096 -max_total_time="$secs" -timeout=5 "$@"
