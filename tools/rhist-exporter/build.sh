#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds rhist-exporter statically (glibc, +crt-static: the guest has no
# libc) into DIR/usr/bin, a root-filesystem overlay for the guest as
# tools/testing/clients/stage.sh's. Cargo rebuilds only what changed;
# the crates come from crates.io, pinned by Cargo.lock.
#
# Usage: build.sh DIR
set -euo pipefail

[ $# = 1 ] && [ -n "$1" ] || { echo "usage: $0 DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
# Debian's cargo and rustc, as for everything (lib.sh). Its target
# directory is make check's, outside the clone.
. "$here/../testing/vm/lib.sh"
target=$(rustc -vV | sed -n 's/^host: //p')
mkdir -p "$1/usr/bin"
(cd "$here" && RUSTFLAGS="-C target-feature=+crt-static" \
	"$RHIST_TOP/tools/build/cargo-cached.sh" exporter-static rhist-exporter \
	build -q --release --locked --target "$target")
cp "$RHIST_CARGO_TARGETS/exporter-static/$target/release/rhist-exporter" "$1/usr/bin/rhist-exporter"
