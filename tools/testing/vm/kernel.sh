#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds the test kernel: unpacks Debian's linux-source-6.12, applies
# patches/*.patch, configures tinyconfig plus our fragments, builds
# bzImage. Each stage is skipped when its inputs have not changed.
#
# Usage: kernel.sh [test|bench|kasan|dropin]   (default: $RHIST_FLAVOUR, or test)
#        RHIST_OWN_CONFIG=FILE kernel.sh own
#
# "own" is a kernel for a machine of one's own (make kernel-deb
# CONFIG=FILE): FILE, a .config, instead of tinyconfig, with only
# tools/build/own.config merged over it, none of the test VM's options.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

flavour=${1:-${RHIST_FLAVOUR:-test}}
tree=$(kernel_tree "$flavour")

# One build of a flavour's tree at a time: a second (another clone or
# worktree sharing the cache) waits, then finds the kernel built.
mkdir -p "$RHIST_KCACHE"
exec 9> "$RHIST_KCACHE/linux-$flavour.lock"
flock 9
tarball=/usr/src/linux-source-6.12.tar.xz
config_dir=$RHIST_TOP/tools/testing/config
fragments=("$config_dir/rhist.config")
base=
case "$flavour" in
test) ;;
bench|kasan|dropin) fragments+=("$config_dir/$flavour.config") ;;
own)
	base=${RHIST_OWN_CONFIG:-}
	[ -f "$base" ] || { echo "kernel.sh own: RHIST_OWN_CONFIG must name a .config" >&2; exit 2; }
	fragments=("$RHIST_TOP/tools/build/own.config")
	;;
*) echo "kernel.sh: unknown flavour $flavour" >&2; exit 2 ;;
esac

hash() { cat "$@" | sha256sum | cut -c1-16; }

# The series: patches/*.patch but the cover letter (0000-*), in order.
series=()
for p in "$RHIST_TOP"/patches/*.patch; do
	case ${p##*/} in 0000-*) ;; *) series+=("$p") ;; esac
done

source_id="$(stat -c %s-%Y "$tarball")-$(hash "${series[@]}")"
# The toolchain: the versions of Debian's Rust, clang and LLVM packages,
# and bindgen's, so that a cached tree does not outlive them.
toolchain_id=$({
	dpkg-query -W "${RHIST_RUST_PACKAGES[@]}" clang-14 lld-14 llvm-14 libclang-14-dev
	"$RHIST_BINDGEN" --version
} 2>&1 | sha256sum | cut -c1-16)
config_id="$source_id-$(hash ${base:+"$base"} "${fragments[@]}")-$toolchain_id"

unpack() {
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -xf "$tarball" -C "$tree.tmp" --strip-components=1
	apply_patches "$tree.tmp"
	mv "$tree.tmp" "$tree"
	echo "$source_id" > "$tree/.rhist-source"
}

# The series into DIR, kept in DIR/.rhist-patches (lib.sh).
apply_patches() {
	apply_series "$1" .rhist-patches "${series[@]}"
}

# The patches changed but the tarball did not: take the old series out and
# put the new one in, so that make rebuilds only what they touch.
repatch() {
	revert_series "$tree" .rhist-patches || return 1
	apply_patches "$tree" || return 1
	echo "$source_id" > "$tree/.rhist-source"
}

configure() {
	if [ -n "$base" ]; then
		cp "$base" "$tree/.config"
	else
		(cd "$tree" && "${RHIST_KMAKE[@]}" tinyconfig >/dev/null)
	fi
	(cd "$tree" &&
	 scripts/kconfig/merge_config.sh -m .config "${fragments[@]}" >/dev/null &&
	 "${RHIST_KMAKE[@]}" olddefconfig >/dev/null)
	# merge_config.sh only warns when an option does not stick: insist.
	# Later fragments override earlier ones.
	local bad=0 opt val
	while IFS== read -r opt val; do
		if [ "$val" = n ]; then
			! grep -q "^$opt=" "$tree/.config" || { echo "    not unset: $opt"; bad=1; }
		else
			grep -qx "$opt=$val" "$tree/.config" || { echo "    not set: $opt=$val"; bad=1; }
		fi
	done < <(cat "${fragments[@]}" | sed 's/#.*//' | grep '^CONFIG_' |
		 awk -F= '{ v[$1] = $2 } END { for (k in v) print k "=" v[k] }')
	[ $bad = 0 ] || { echo "kernel configuration incomplete" >&2; exit 1; }
	echo "$config_id" > "$tree/.rhist-config"
	rm -f "$tree/.rhist-built"
}

build() {
	(cd "$tree" && "${RHIST_KMAKE[@]}" -j"$RHIST_JOBS" bzImage modules) \
		> "$tree/.rhist-build.log" 2>&1 || {
		tail -40 "$tree/.rhist-build.log"
		echo "kernel build failed: see $tree/.rhist-build.log" >&2
		exit 1
	}
	echo "$config_id" > "$tree/.rhist-built"
}

# The drop-in kernel is the test kernel but for a few options.
# Whenever it must be built, it starts again as a copy of the test
# kernel's built tree (mtimes kept), so that make rebuilds only what those
# options touch: the Rust crates and a few hundred files, 2-4 minutes
# instead of 6 (a change to the patches or to rhist.config is built once,
# in the test kernel).
copy_test() {
	local test_tree
	test_tree=$(kernel_tree test)
	"$0" test || return 1
	rm -rf "$tree" "$tree.tmp"
	cp -a "$test_tree" "$tree.tmp"
	rm -f "$tree.tmp/.rhist-config" "$tree.tmp/.rhist-built"
	mv "$tree.tmp" "$tree"
}

mkdir -p "$RHIST_KCACHE"
old_source=$(cat "$tree/.rhist-source" 2>/dev/null || true)
case $flavour in
dropin)
	if [ "$old_source" != "$source_id" ] ||
	   [ "$(cat "$tree/.rhist-built" 2>/dev/null)" != "$config_id" ]; then
		step "kernel: copy the test kernel's tree ($flavour)" copy_test
		old_source=$source_id
	fi
	;;
esac
if [ "$old_source" != "$source_id" ]; then
	if [ "${old_source%-*}" = "${source_id%-*}" ] && [ -d "$tree/.rhist-patches" ] &&
	   step "kernel: replace the patch series ($flavour)" repatch; then
		rm -f "$tree/.rhist-built"
	else
		step "kernel: unpack and patch ($flavour)" unpack
	fi
fi
if [ "$(cat "$tree/.rhist-config" 2>/dev/null)" != "$config_id" ]; then
	step "kernel: configure ($flavour)" configure
fi
if [ "$(cat "$tree/.rhist-built" 2>/dev/null)" != "$config_id" ] ||
   [ ! -f "$tree/arch/x86/boot/bzImage" ]; then
	step "kernel: build bzImage ($flavour, -j$RHIST_JOBS; about 6 min cold)" build
else
	echo "==> kernel: up to date ($flavour, $tree)"
fi
