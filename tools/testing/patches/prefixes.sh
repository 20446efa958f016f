#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make check-series`: builds every prefix of the patch series, as a
# reviewer bisecting it would: the pristine 6.12 tree with the test
# configuration, then after each patch in turn, incrementally (a patch
# rebuilds only what it touches). Prints one line a prefix,
# "prefix N (NAME): ok" or "... FAILED", and exits non-zero on a failure.
#
# The pristine build, then 1-6 minutes a patch: up to an hour on 2 cores.
# The tree is $RHIST_KCACHE/linux-series, kept for the next run (it is
# unpacked again each time: a series may have changed in the middle).
set -euo pipefail
. "$(dirname "$0")/../vm/lib.sh"

tarball=/usr/src/linux-source-6.12.tar.xz
tree=$RHIST_KCACHE/linux-series
config_dir=$RHIST_TOP/tools/testing/config
series=()
for p in "$RHIST_TOP"/patches/*.patch; do
	case ${p##*/} in 0000-*) ;; *) series+=("$p") ;; esac
done

kmake() { (cd "$tree" && "${RHIST_KMAKE[@]}" "$@"); }

build() { # build N NAME: builds the tree as it is, one line of verdict
	local log=$tree/.rhist-prefix-$1.log
	# A patch may add an option (HIST_TRIGGERS_README): take its default,
	# then the fragment again, where it names it.
	if kmake olddefconfig > "$log" 2>&1 &&
	   (cd "$tree" && scripts/kconfig/merge_config.sh -m .config "$config_dir/rhist.config") >> "$log" 2>&1 &&
	   kmake olddefconfig >> "$log" 2>&1 &&
	   kmake -j"$RHIST_JOBS" bzImage >> "$log" 2>&1; then
		echo "prefix $1 ($2): ok"
	else
		tail -20 "$log"
		echo "prefix $1 ($2): FAILED (log: $log)"
		return 1
	fi
}

mkdir -p "$RHIST_KCACHE"
rm -rf "$tree"
mkdir -p "$tree"
tar -xf "$tarball" -C "$tree" --strip-components=1
(cd "$tree" && "${RHIST_KMAKE[@]}" tinyconfig > /dev/null)
rc=0
build 0 "6.12 as packaged" || rc=1
n=0
for p in "${series[@]}"; do
	n=$((n + 1))
	patch -d "$tree" -p1 --quiet --forward < "$p"
	build $n "$(basename "$p" .patch | cut -c6-)" || rc=1
done
echo "check-series: ${#series[@]} patches, exit $rc"
exit $rc
