#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stages Debian's perf (package linux-perf, perf 6.1 in Debian 12) for
# the guest into DIR, a root-filesystem overlay (run.sh --overlay DIR):
# /usr/bin/perf and the shared libraries ldd names for it, at the same
# absolute paths, as clients/stage.sh does for trace-cmd. Not in every
# guest: with its libraries (Python's and Perl's among them) it is 30 MB,
# which only the perf suite pays for.
#
# Usage: stage.sh DIR
set -euo pipefail
dir=${1:?usage: stage.sh DIR}
perf=/usr/bin/perf
[ -x "$perf" ] || {
	echo "stage.sh: no $perf: apt-get install --no-install-recommends linux-perf" >&2
	exit 1
}

# put SRC DEST: copy SRC (following symlinks) to DIR/DEST unless an
# identical file is there already.
put() {
	local dest=$dir$2
	! cmp -s "$1" "$dest" || return 0
	mkdir -p "$(dirname "$dest")"
	cp -L "$1" "$dest.tmp"
	chmod 0755 "$dest.tmp"
	mv "$dest.tmp" "$dest"
}

put "$perf" /usr/bin/perf
libs=$(ldd "$perf" | awk '$2 == "=>" && $3 ~ /^\// { print $3; next }
			$1 ~ /^\// { print $1 }')
[ -n "$libs" ] || { echo "stage.sh: ldd found no libraries for $perf" >&2; exit 1; }
for lib in $libs; do
	put "$lib" "$lib"
done
