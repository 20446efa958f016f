#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stages the "real clients" for the guest into DIR, a root-filesystem
# overlay for the initramfs (copy DIR's tree over the guest's /):
#
#   /usr/bin/trace-cmd   Debian's trace-cmd 3.1.6, with the shared
#                        libraries it needs, at the same absolute paths:
#                          /lib/x86_64-linux-gnu/libtraceevent.so.1
#                          /lib/x86_64-linux-gnu/libtracefs.so.1
#                          /lib/x86_64-linux-gnu/libzstd.so.1
#                          /lib/x86_64-linux-gnu/libc.so.6
#                          /lib64/ld-linux-x86-64.so.2 (the interpreter)
#                        (the list is taken from ldd at staging time; the
#                        copies are files, not symlinks) and libtraceevent's
#                        plugins, /usr/lib/x86_64-linux-gnu/traceevent/plugins.
#   /usr/bin/hist_client built from hist_client.c next to this script,
#                        statically linked against libtracefs 1.6.4 and
#                        libtraceevent; rebuilt only when the source changes.
#   /usr/bin/json_check  built from json_check.c next to this script,
#                        statically linked: a strict JSON checker (the
#                        busybox guest has none), for the rhist_json tests.
#
# Needs the Debian 12 packages trace-cmd, libtracefs-dev and
# libtraceevent-dev (and gcc, pkg-config). Idempotent: files that are
# already up to date are left alone.
#
# Usage: stage.sh DIR
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
src=$here/hist_client.c
tracecmd=/usr/bin/trace-cmd
plugins=/usr/lib/x86_64-linux-gnu/traceevent/plugins

die() {
	echo "stage.sh: $*" >&2
	exit 1
}

# The packages we need, with a file each one provides.
missing=()
[ -x "$tracecmd" ] || missing+=(trace-cmd)
[ -f /usr/include/tracefs/tracefs.h ] || missing+=(libtracefs-dev)
[ -f /usr/include/traceevent/event-parse.h ] || missing+=(libtraceevent-dev)
command -v gcc >/dev/null || missing+=(gcc)
command -v pkg-config >/dev/null || missing+=(pkg-config)
if [ ${#missing[@]} -gt 0 ]; then
	die "missing ${missing[*]}; install them with" \
		"apt-get install -y --no-install-recommends ${missing[*]}"
fi
libdir=$(pkg-config --variable=libdir libtracefs) ||
	die "pkg-config does not know libtracefs (install libtracefs-dev)"
for a in libtracefs.a libtraceevent.a; do
	[ -f "$libdir/$a" ] ||
		die "no $libdir/$a (install libtracefs-dev libtraceevent-dev)"
done

# put SRC DEST MODE: copy SRC (following symlinks) to DIR/DEST unless an
# identical file is there already.
put() {
	local dest=$dir$2

	if [ -f "$dest" ] && [ ! -L "$dest" ] && cmp -s "$1" "$dest"; then
		return
	fi
	mkdir -p "$(dirname "$dest")"
	rm -f "$dest"
	cp -L "$1" "$dest.tmp"
	chmod "$3" "$dest.tmp"
	mv "$dest.tmp" "$dest"
}

# The shared libraries of an ELF file, from ldd: "name => /path (addr)"
# and "/path (addr)" lines (the interpreter); the vDSO has no path.
needed() {
	ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3; next }
			$1 ~ /^\// { print $1 }'
}

mkdir -p "$dir"

put "$tracecmd" /usr/bin/trace-cmd 0755
libs=$(needed "$tracecmd") || die "ldd $tracecmd failed"
[ -n "$libs" ] || die "ldd found no libraries for $tracecmd"
if [ -d "$plugins" ]; then
	for p in "$plugins"/*.so; do
		[ -e "$p" ] || continue
		put "$p" "$p" 0644
		libs+=$'\n'$(needed "$p")
	done
fi
for lib in $(echo "$libs" | sort -u); do
	put "$lib" "$lib" 0755
done

out=$dir/usr/bin/hist_client
if [ ! -f "$out" ] || [ "$src" -nt "$out" ]; then
	mkdir -p "$(dirname "$out")"
	log=$(mktemp)
	# The only expected warning is the linker's about dlopen() in
	# libtraceevent's plugin loader, which hist_client never calls.
	if ! gcc -static -O2 -Wall -Wextra -o "$out.tmp" "$src" \
		$(pkg-config --cflags libtracefs) \
		$(pkg-config --static --libs libtracefs libtraceevent) \
		2>"$log"; then
		cat "$log" >&2
		rm -f "$log" "$out.tmp"
		die "building hist_client failed"
	fi
	grep -v -e "in function \`load_plugin':" \
		-e "warning: Using 'dlopen' in statically linked" "$log" >&2 ||
		true
	rm -f "$log"
	mv "$out.tmp" "$out"
fi

out=$dir/usr/bin/json_check
if [ ! -f "$out" ] || [ "$here/json_check.c" -nt "$out" ]; then
	mkdir -p "$(dirname "$out")"
	gcc -static -O2 -Wall -Wextra -Werror -o "$out.tmp" "$here/json_check.c" ||
		die "building json_check failed"
	mv "$out.tmp" "$out"
fi
