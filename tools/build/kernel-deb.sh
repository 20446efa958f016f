#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make kernel-deb`: the patched 6.12 as Debian packages, made by the
# kernel's own bindeb-pkg: linux-image-VERSION (the kernel and its
# modules), linux-headers-VERSION (the tree out-of-tree modules and DKMS
# build against) and linux-libc-dev.
#
# Without --config, the packages are those of the test kernel, made in
# its cached tree (tools/testing/vm/kernel.sh test), so that bindeb-pkg
# builds only what is not built yet. With --config FILE, of a kernel
# configured from FILE (a machine's .config) with tools/build/own.config
# merged over it, in a tree of its own (kernel.sh own: a full build).
#
# The packaging patches in patches/deb/ go into the tree first (the
# headers package then carries the Rust crates' metadata a Rust module
# is compiled against). The packages are kept in the kernel cache,
# RHIST_KCACHE/deb-FLAVOUR/, keyed by the tree's build stamp and the
# packaging patches, and rebuilt only when those change; copies go to
# OUTDIR (build/deb by default).
#
# Usage: kernel-deb.sh [--config FILE] [OUTDIR]
# Prints the packages made, one "NAME SIZE" line each.
set -euo pipefail
. "$(dirname "$0")/../testing/vm/lib.sh"

config=
if [ "${1:-}" = --config ]; then
	config=$(realpath "$2")
	shift 2
fi
outdir=${1:-$RHIST_BUILD/deb}
flavour=test
[ -z "$config" ] || flavour=own

RHIST_OWN_CONFIG=$config "$RHIST_TOP/tools/testing/vm/kernel.sh" "$flavour"
tree=$(kernel_tree "$flavour")
cache=$RHIST_KCACHE/deb-$flavour
debpatches=("$RHIST_TOP"/patches/deb/*.patch)
hash() { cat "$@" | sha256sum | cut -c1-16; }
key="$(cat "$tree/.rhist-built")-$(hash "${debpatches[@]}" "$0")"

# Puts the packaging patches into the tree, taking out an older set.
deb_patch() {
	if [ "$(cat "$tree/.rhist-deb-patches/stamp" 2>/dev/null)" = "$(hash "${debpatches[@]}")" ]; then
		return
	fi
	revert_series "$tree" .rhist-deb-patches || return 1
	apply_series "$tree" .rhist-deb-patches "${debpatches[@]}" || return 1
	hash "${debpatches[@]}" > "$tree/.rhist-deb-patches/stamp"
}

# bindeb-pkg leaves the packages next to the tree, in the cache's
# directory, taken from there into deb-FLAVOUR/.
made() {
	ls "$RHIST_KCACHE"/linux-{image,headers,libc-dev}*.deb \
		"$RHIST_KCACHE"/linux-upstream_*.{buildinfo,changes} 2> /dev/null || true
}
package() {
	local log=$RHIST_KCACHE/deb-$flavour.log
	made | xargs -r rm -f
	# The kernel's make flags (LLVM=1, Debian's rustc) reach the make
	# that debian/rules runs through MAKEFLAGS.
	# A version without a Debian revision: debian/rules passes the
	# revision as KBUILD_BUILD_VERSION, which would relink the kernel
	# already built. Without one the packaged kernel is the tree's own
	# bzImage, byte for byte; the build's number (.version) tells
	# rebuilds apart.
	local version
	version=$(cat "$tree/include/config/kernel.release")+rhist$(cat "$tree/.version")
	(cd "$tree" && "${RHIST_KMAKE[@]}" -j"$RHIST_JOBS" bindeb-pkg \
		KDEB_PKGVERSION="$version" KDEB_COMPRESS=gzip DPKG_FLAGS=-d) > "$log" 2>&1 || {
		tail -40 "$log"
		echo "kernel-deb: bindeb-pkg failed: see $log" >&2
		return 1
	}
	rm -rf "$cache"
	mkdir -p "$cache"
	made | grep '\.deb$' | xargs mv -t "$cache/"
	made | xargs -r rm -f
	mv "$log" "$cache/bindeb-pkg.log"
	echo "$key" > "$cache/.rhist-deb"
}

if [ "$(cat "$cache/.rhist-deb" 2>/dev/null)" = "$key" ] && ls "$cache"/*.deb > /dev/null 2>&1; then
	echo "==> kernel-deb: up to date ($flavour, $cache)"
else
	# One packaging at a time: they all leave their packages in one place.
	exec 9> "$RHIST_KCACHE/deb.lock"
	flock 9
	step "kernel-deb: packaging patches ($flavour)" deb_patch
	step "kernel-deb: bindeb-pkg ($flavour)" package
	exec 9>&-
fi
rm -rf "$outdir"
mkdir -p "$outdir"
cp "$cache"/*.deb "$outdir/"
for d in "$outdir"/*.deb; do
	echo "$(basename "$d") $(stat -c %s "$d")"
done
