#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds the bench's eBPF peer into DIR, a root-filesystem overlay for the
# guest (as clients/stage.sh does):
#
#   /usr/bin/rhist_bpf              the loader, rhist_bpf.c, linked
#                                   statically against libbpf 1.1
#   /usr/lib/rhist_bpf/hash.bpf.o   rhist_bpf.bpf.c with BPF_MAP_TYPE_HASH
#   /usr/lib/rhist_bpf/percpu.bpf.o and with BPF_MAP_TYPE_PERCPU_HASH
#   /usr/bin/pingpong               ../pingpong.c, static: the real
#                                   workloads' scheduler-heavy one
#
# Needs clang, gcc, pkg-config, libbpf-dev, libelf-dev and zlib1g-dev
# (vm/setup.sh installs them). Rebuilds only what is older than its source.
#
# Usage: build.sh DIR
set -euo pipefail

[ $# = 1 ] && [ -n "$1" ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "bpf/build.sh: $*" >&2; exit 1; }
for a in libbpf.a libelf.a libz.a; do
	[ -f "/usr/lib/x86_64-linux-gnu/$a" ] ||
		die "no $a: install libbpf-dev libelf-dev zlib1g-dev (tools/testing/vm/setup.sh)"
done
mkdir -p "$dir/usr/bin" "$dir/usr/lib/rhist_bpf"

# stale OUT SRC: OUT is missing or older than SRC.
stale() { [ ! -f "$1" ] || [ "$2" -nt "$1" ]; }

for kind in hash:0 percpu:1; do
	out=$dir/usr/lib/rhist_bpf/${kind%:*}.bpf.o
	stale "$out" "$here/rhist_bpf.bpf.c" || continue
	clang -target bpf -O2 -g -Wall -Werror -DPERCPU="${kind#*:}" \
		-I/usr/include/x86_64-linux-gnu -c "$here/rhist_bpf.bpf.c" -o "$out.tmp" ||
		die "building ${kind%:*}.bpf.o failed"
	mv "$out.tmp" "$out"
done
out=$dir/usr/bin/rhist_bpf
if stale "$out" "$here/rhist_bpf.c"; then
	# shellcheck disable=SC2046
	gcc -static -O2 -Wall -Wextra -Werror -o "$out.tmp" "$here/rhist_bpf.c" \
		$(pkg-config --cflags libbpf) $(pkg-config --static --libs libbpf) ||
		die "building rhist_bpf failed"
	mv "$out.tmp" "$out"
fi
out=$dir/usr/bin/pingpong
if stale "$out" "$here/../pingpong.c"; then
	gcc -static -O2 -Wall -Wextra -Werror -o "$out.tmp" "$here/../pingpong.c" ||
		die "building pingpong failed"
	mv "$out.tmp" "$out"
fi
