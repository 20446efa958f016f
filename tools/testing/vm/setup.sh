#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Installs what rhist's build and tests need, if missing: Debian packages
# (the Rust toolchain among them, checked to be one version) and the
# pinned bindgen-cli. Safe to run again; does nothing when all is
# there.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PACKAGES=(linux-source-6.12 clang lld llvm
	libclang-dev qemu-system-x86 flex bison bc libelf-dev libssl-dev cpio
	busybox-static xz-utils kmod python3
	trace-cmd libtracefs-dev libtraceevent-dev gcc libc6-dev pkg-config
	libbpf-dev zlib1g-dev
	prometheus curl
	dpkg-dev debhelper rsync dkms linux-perf
	"${RHIST_RUST_PACKAGES[@]}")

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

# The Rust toolchain: one family, every part of it of one version
# (lib.sh).
rust_version=$(dpkg-query -W -f='${Version}' rustc-web)
case $rust_version in
"$RHIST_RUST_FAMILY".*) ;;
*)
	echo "setup: rustc-web is $rust_version, not of the $RHIST_RUST_FAMILY family" >&2
	exit 1
	;;
esac
for p in "${RHIST_RUST_PACKAGES[@]}"; do
	v=$(dpkg-query -W -f='${Version}' "$p")
	[ "$v" = "$rust_version" ] || {
		echo "setup: $p is $v, rustc-web $rust_version" >&2
		exit 1
	}
done
for t in cargo rustc rustfmt cargo-clippy; do
	[ "$(command -v $t)" = /usr/bin/$t ] || {
		echo "setup: $t is $(command -v $t || echo missing), not Debian's /usr/bin/$t" >&2
		exit 1
	}
done
if [ "$("$RHIST_BINDGEN" --version 2>/dev/null)" != "bindgen $RHIST_BINDGEN_VERSION" ]; then
	echo "==> installing bindgen-cli $RHIST_BINDGEN_VERSION (into $CARGO_HOME)"
	cargo install --locked --quiet "bindgen-cli@$RHIST_BINDGEN_VERSION"
fi
# The record of what builds and tests (check.sh's log keeps it).
echo "toolchain: rustc-web $rust_version (and ${RHIST_RUST_PACKAGES[*]:1}, the same)," \
	"clang-14 $(dpkg-query -W -f='${Version}' clang-14), $("$RHIST_BINDGEN" --version)"
