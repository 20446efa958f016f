#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Checks that the kernel build tree KDIR (a build directory, or the
# external-module tree a linux-headers package installs) can build and
# load rhist.ko: built with CONFIG_RUST, and carrying each patch of
# patches/ that leaves a trace there. What each patch leaves is read
# from the patch itself: the symbols it exports (in Module.symvers), the
# options it adds (in .config, set or not), the headers it adds to the
# Rust bindings (in rust/bindings/bindings_helper.h, where the tree has
# it). A patch that changes behaviour only cannot be seen from a build
# tree; those are named as not checked.
#
# The module's Rust must be compiled by the rustc that compiled the
# kernel: the first of $RUSTC, each rustc on PATH and /usr/bin/rustc
# whose version is the kernel's CONFIG_RUSTC_VERSION_TEXT.
#
# Usage: kdir-check.sh KDIR [PATCHES_DIR]
#        kdir-check.sh --rustc KDIR   prints that rustc's path
# Prints "kdir-check: ok" or one line per problem, naming the patch, and
# exits 1 on a problem.
set -uo pipefail
want_rustc=0
[ "${1:-}" != --rustc ] || { want_rustc=1; shift; }
kdir=${1:?usage: kdir-check.sh [--rustc] KDIR [PATCHES_DIR]}
patches=${2:-$(cd "$(dirname "$0")/../.." && pwd)/patches}
bad=0 unchecked=

problem() { echo "kdir-check: $kdir: $*"; bad=1; }

config=$kdir/.config
[ -f "$config" ] || config=$kdir/include/config/auto.conf
if [ ! -f "$kdir/Makefile" ] || [ ! -f "$config" ]; then
	echo "kdir-check: $kdir is not a configured kernel build tree (no Makefile or .config)"
	exit 1
fi
grep -q '^CONFIG_RUST=y' "$config" ||
	problem "built without CONFIG_RUST=y: rhist is a Rust module"

# The rustc of the kernel's version, or nothing.
# (.config quotes strings; include/config/auto.conf, all a headers
# package has, does not.)
kernel_rustc=$(sed -n 's/^CONFIG_RUSTC_VERSION_TEXT="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$config")
rustc=
for r in ${RUSTC:-} $(which -a rustc 2>/dev/null) /usr/bin/rustc; do
	[ -x "$(command -v "$r")" ] && [ "$("$r" --version 2>/dev/null)" = "$kernel_rustc" ] &&
		{ rustc=$r; break; }
done
if [ $want_rustc = 1 ]; then
	[ -n "$rustc" ] && echo "$rustc"
	[ -n "$rustc" ]
	exit
fi
[ -z "$kernel_rustc" ] || [ -n "$rustc" ] ||
	problem "was built by '$kernel_rustc', and no rustc of that version is on PATH (set RUSTC=)"
for opt in CONFIG_TRACING CONFIG_EVENT_TRACING CONFIG_MODULES; do
	grep -q "^$opt=y" "$config" || problem "built without $opt=y"
done
# A Rust module is compiled against the kernel's crates: a headers
# package carries them only with patches/deb/'s first patch (make
# kernel-deb).
if grep -q '^CONFIG_RUST=y' "$config" && [ ! -f "$kdir/rust/libkernel.rmeta" ]; then
	problem "has no rust/libkernel.rmeta, the kernel crate's metadata:" \
		"a headers package made without patches/deb/0001-kbuild-Install-the-Rust-crates-metadata-for-external.patch"
fi
# rhist's C shim includes the tracing core's own header, which a
# headers package carries only with patches/deb/'s second patch.
if [ ! -f "$kdir/kernel/trace/trace.h" ] && [ ! -f "$kdir/source/kernel/trace/trace.h" ]; then
	problem "has no kernel/trace/trace.h, the tracing core's header:" \
		"a headers package made without patches/deb/0002-kbuild-Install-the-tracing-core-s-headers-for-extern.patch"
fi
symvers=$kdir/Module.symvers
[ -f "$symvers" ] || problem "has no Module.symvers: build the kernel (or its modules_prepare) first"

for p in "$patches"/*.patch; do
	name=$(basename "$p" .patch)
	case $name in 0000-*) continue ;; esac
	seen=0
	for sym in $(sed -n 's/^+EXPORT_SYMBOL\(_GPL\)\?(\([A-Za-z0-9_]*\));.*/\2/p' "$p"); do
		seen=1
		[ -f "$symvers" ] || continue
		grep -q "	$sym	" "$symvers" ||
			problem "does not export $sym: patch $name is missing"
	done
	for opt in $(sed -n 's/^+config \([A-Z0-9_]*\)$/\1/p' "$p"); do
		if grep -q "^CONFIG_$opt=\|^# CONFIG_$opt is not set" "$config"; then
			seen=1
		elif [ "${config##*/}" = .config ]; then
			seen=1
			problem "has no option $opt: patch $name is missing"
		fi
		# (auto.conf leaves out the options not set: an option not
		# there may be one not set.)
	done
	if grep -q '^+++ b/rust/bindings/bindings_helper.h' "$p"; then
		seen=1
		helper=$kdir/rust/bindings/bindings_helper.h
		if [ -f "$helper" ]; then
			while IFS= read -r inc; do
				grep -qxF "$inc" "$helper" ||
					problem "its Rust bindings lack '$inc': patch $name is missing"
			done < <(sed -n 's/^+\(#include .*\)$/\1/p' "$p")
		else
			unchecked="$unchecked $name"
		fi
	fi
	[ $seen = 1 ] || unchecked="$unchecked $name"
done
[ -z "$unchecked" ] || echo "kdir-check: not checked (no trace in a build tree):$unchecked"
[ $bad = 1 ] && exit 1
echo "kdir-check: ok"
