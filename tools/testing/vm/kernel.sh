#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds the test kernel: unpacks Debian's linux-source-6.12, applies
# patches/*.patch, configures tinyconfig plus our fragments, builds
# bzImage. Each stage is skipped when its inputs have not changed.
#
# Usage: kernel.sh [test|bench]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

flavour=${1:-test}
tree=$(kernel_tree "$flavour")
tarball=/usr/src/linux-source-6.12.tar.xz
config_dir=$RHIST_TOP/tools/testing/config
fragments=("$config_dir/rhist.config")
[ "$flavour" = bench ] && fragments+=("$config_dir/bench.config")

hash() { cat "$@" | sha256sum | cut -c1-16; }

source_id="$(stat -c %s-%Y "$tarball")-$(hash "$RHIST_TOP"/patches/*.patch)"
config_id="$source_id-$(hash "${fragments[@]}")"

unpack() {
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -xf "$tarball" -C "$tree.tmp" --strip-components=1
	for p in "$RHIST_TOP"/patches/*.patch; do
		echo "    applying $(basename "$p")"
		patch -d "$tree.tmp" -p1 --quiet --forward < "$p"
	done
	mv "$tree.tmp" "$tree"
	echo "$source_id" > "$tree/.rhist-source"
}

configure() {
	(cd "$tree" &&
	 "${RHIST_KMAKE[@]}" tinyconfig >/dev/null &&
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

mkdir -p "$RHIST_KCACHE"
if [ "$(cat "$tree/.rhist-source" 2>/dev/null)" != "$source_id" ]; then
	step "kernel: unpack and patch ($flavour)" unpack
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
