#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Installs what rhist's build and tests need, if missing: Debian packages
# and the pinned bindgen-cli. Safe to run again; does nothing when all is
# there.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PACKAGES=(linux-source-6.12 rustc-web rust-web-src clang lld llvm
	libclang-dev qemu-system-x86 flex bison bc libelf-dev libssl-dev cpio
	busybox-static xz-utils kmod python3
	trace-cmd libtracefs-dev libtraceevent-dev gcc libc6-dev pkg-config
	libbpf-dev zlib1g-dev
	prometheus curl
	dpkg-dev debhelper rsync dkms linux-perf)

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "==> installing: ${missing[*]}"
	SUDO=
	[ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get update -q
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q \
		--no-install-recommends "${missing[@]}"
fi

if ! command -v cargo >/dev/null; then
	echo "cargo is needed (host tests and bindgen-cli): install rustup's toolchain" >&2
	exit 1
fi
if [ "$("$RHIST_BINDGEN" --version 2>/dev/null)" != "bindgen $RHIST_BINDGEN_VERSION" ]; then
	echo "==> installing bindgen-cli $RHIST_BINDGEN_VERSION"
	cargo install --locked --quiet "bindgen-cli@$RHIST_BINDGEN_VERSION"
fi
