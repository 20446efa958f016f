# SPDX-License-Identifier: GPL-2.0
# Shared settings of rhist's build and VM scripts. Sourced, not run.

RHIST_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
# The kernel cache lives outside the clone: it only saves time, every
# stamp in it is checked against what the clone asks for.
RHIST_KCACHE=${RHIST_KCACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rhist}
RHIST_BUILD=${RHIST_BUILD:-$RHIST_TOP/build}
# make check's cargo target directories (tools/build/cargo-cached.sh).
RHIST_CARGO_TARGETS=${RHIST_CARGO_TARGETS:-$RHIST_KCACHE/cargo}
RHIST_JOBS=${RHIST_JOBS:-$(($(nproc) + 1))}
RHIST_BINDGEN_VERSION=0.73.2
RHIST_BINDGEN=${CARGO_HOME:-$HOME/.cargo}/bin/bindgen
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

# The kernel's Rust must come from Debian's rustc-web with its rust-src,
# not the rustup toolchain earlier on PATH.
RHIST_KMAKE=(make LLVM=1 RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
	BINDGEN="$RHIST_BINDGEN")

# step NAME CMD...: runs CMD, printing the step and how long it took;
# fails as CMD fails. (Not "CMD || rc=$?", which would turn off set -e
# inside CMD.)
step() {
	local name=$1 start=$SECONDS rc
	shift
	echo "==> $name"
	"$@"
	rc=$?
	if [ $rc != 0 ]; then
		echo "==> $name: failed (status $rc) after $((SECONDS - start)) s"
		return $rc
	fi
	echo "==> $name: done in $((SECONDS - start)) s"
}

# apply_series DIR KEEP PATCH...: applies the PATCHes to the kernel tree
# DIR and keeps a copy of each in DIR/KEEP, so that revert_series can
# take them out again without unpacking the tree anew.
apply_series() {
	local dir=$1 keep=$2 p
	shift 2
	rm -rf "${dir:?}/$keep"
	mkdir -p "$dir/$keep"
	for p in "$@"; do
		echo "    applying $(basename "$p")"
		patch -d "$dir" -p1 --quiet --forward < "$p" || return 1
		cp "$p" "$dir/$keep/"
	done
}

# revert_series DIR KEEP: takes the series kept in DIR/KEEP out of DIR,
# last patch first.
revert_series() {
	local p
	for p in $(ls -r "$1/$2"/*.patch 2> /dev/null); do
		patch -d "$1" -p1 -R --quiet --force < "$p" > /dev/null || return 1
	done
}

# What in a guest's console log is a kernel problem (run.sh fails the
# run on it; run-group.sh gives it to the script it happened in).
RHIST_PROBLEM_RE='RHIST-PROBLEM|BUG:|WARNING:|Oops|Kernel panic|KASAN|KFENCE|unreferenced object|possible (recursive|circular) locking|inconsistent lock state|suspicious RCU usage|sleeping function called|hung_task|blocked for more than|soft lockup|detected stall'

# The kernel tree for a flavour: "test" (debug options), "bench", "kasan"
# or "dropin" (no C hist: rhist registers as hist).
kernel_tree() {
	echo "$RHIST_KCACHE/linux-${1:-test}"
}
