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

# One Rust toolchain for the host and the kernel: Debian's rustc-web
# family (rustc-web, cargo-web, rust-web-clippy, rustfmt-web), whose
# versions setup.sh checks and kernel.sh keys its cache on. A rustup
# installation takes no part, wherever it is: its directories leave PATH,
# and cargo gets a home of its own (it looks for subcommands such as
# clippy and fmt in $CARGO_HOME/bin before PATH), where bindgen-cli is
# installed too.
RHIST_RUST_FAMILY=1.96
RHIST_RUST_PACKAGES=(rustc-web rust-web-src cargo-web rust-web-clippy rustfmt-web)
export CARGO_HOME=$RHIST_KCACHE/cargo-home
PATH=$(printf '%s\n' "$PATH" | tr : '\n' | grep -v -e '/\.cargo/bin/*$' -e '/\.rustup/' | paste -sd: -)
export PATH="/usr/bin:$PATH"
unset RUSTUP_TOOLCHAIN RUSTUP_HOME RUSTC RUSTDOC RUSTC_WRAPPER
RHIST_BINDGEN=$CARGO_HOME/bin/bindgen

# The kernel's Rust: Debian's rustc-web with its rust-src.
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
