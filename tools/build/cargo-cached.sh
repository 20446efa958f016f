#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs cargo in the current directory with a target directory outside the
# clone, kept between clones like the kernel cache: what crates.io's
# crates built (three quarters of make check's cargo time) is built once.
# The clone's own crates are cleaned out first: their artifacts may come
# from another clone or worktree, and cargo, which compares mtimes, would
# take them as fresh where this clone's files are older. A lock keeps
# the cleaning and the build of one run together.
#
# Usage: cargo-cached.sh NAME "PACKAGE..." CARGO-ARGS...
#   NAME: the target directory, $RHIST_CARGO_TARGETS/NAME
#   PACKAGE: this repository's crates in the build, to rebuild
set -euo pipefail
. "$(dirname "$0")/../testing/vm/lib.sh"

[ $# -ge 3 ] || { echo "usage: $0 NAME \"PACKAGE...\" CARGO-ARGS..." >&2; exit 2; }
export CARGO_TARGET_DIR=$RHIST_CARGO_TARGETS/$1
packages=$2
shift 2
mkdir -p "$CARGO_TARGET_DIR"
# Held by cargo, and the tests it runs, until they exit.
exec 9> "$CARGO_TARGET_DIR/.rhist-lock"
flock 9
for p in $packages; do
	cargo clean -q -p "$p" 2> /dev/null || true
done
exec cargo "$@"
