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
target=$(rustc -vV | sed -n 's/^host: //p')
mkdir -p "$1/usr/bin"
# The host's cargo (rustup's), not the kernel's rustc: the exporter is a
# user program. Its own target directory, beside the crate.
RUSTFLAGS="-C target-feature=+crt-static" cargo build -q --release --locked \
	--manifest-path "$here/Cargo.toml" --target "$target" \
	--target-dir "$here/target"
cp "$here/target/$target/release/rhist-exporter" "$1/usr/bin/rhist-exporter"
