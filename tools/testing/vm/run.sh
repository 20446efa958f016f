#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boots the test kernel in QEMU (TCG, 2 vCPUs) with rhist.ko and
# rhist_test_events.ko loaded and runs a guest script, or a shell.
#
# Usage: run.sh [--flavour test|bench|kasan|dropin] [--timeout SECONDS]
#               [--log FILE] [--file FILE]... [--overlay DIR]...
#               [--kernel IMAGE] [--rhist KO] (SCRIPT | --shell)
#
# --file copies FILE into the guest's /test/ (data for the script). The
# real clients staged by modules.sh (trace-cmd, hist_client) are on the
# guest's PATH; --overlay copies DIR's tree over the guest's / as well
# (perf, staged by tools/testing/perf/stage.sh). --kernel boots IMAGE
# instead of the flavour's bzImage, and --rhist loads KO as rhist.ko
# (the DKMS test: a packaged kernel and the module DKMS built for it).
#
# With a script, prints everything the guest writes and exits with the
# script's exit status; exits non-zero as well when the guest kernel
# reports a problem (oops, BUG, WARNING, lockdep, KASAN, KFENCE, kmemleak),
# when a module fails to load, or when the guest does not finish in time.
#
# The flavour defaults to $RHIST_FLAVOUR, or test. The kasan kernel gets
# more memory (KASAN's shadow and quarantine) and, being several times
# slower, three times the timeout ($RHIST_TIMEOUT_SCALE overrides).
#
# A script with the line '# run.sh: single-threaded TCG' runs with both
# vCPUs on one host thread (-accel tcg,thread=single), for scripts that add
# and remove probes on busy tracepoints all the time: QEMU's multi-threaded
# TCG (7.2 here) now and then runs the int3 of a call site the kernel has
# finished patching ("Oops: int3"; see tools/testing/soak/soak.sh.inc), and
# is slower for them too (the hist selftests: 205 s instead of 341 on the
# 2-core machine). With RHIST_ICOUNT=1 the guest's clock advances with
# retired instructions (-icount shift=0,sleep=off, single-threaded), for
# the benchmark's instruction counts.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

flavour=${RHIST_FLAVOUR:-test} timeout=300 log= script= mode=script files=() overlays=()
image= rhist_ko=
while [ $# -gt 0 ]; do
	case "$1" in
	--flavour) flavour=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	--log) log=$2; shift ;;
	--file) files+=("$2"); shift ;;
	--overlay) overlays+=("$2"); shift ;;
	--kernel) image=$2; shift ;;
	--rhist) rhist_ko=$2; shift ;;
	--shell) mode=shell ;;
	-*) echo "unknown option $1" >&2; exit 2 ;;
	*) script=$1 ;;
	esac
	shift
done
[ "$mode" = shell ] || [ -f "$script" ] || { echo "usage: $0 [options] (SCRIPT | --shell)" >&2; exit 2; }

mem=512 scale=1 append=
if [ "$flavour" = kasan ]; then
	# Report every KASAN problem of the boot, not only the first. And no
	# 5-level paging (-cpu max offers it): on 6.12, identify_cpu() clears
	# the LA57 feature bit for a moment, and an interrupt that comes then
	# sees KASAN's shadow bounds of 4-level paging and reports its own
	# accesses as wild (a flood of reports, and a boot that never ends).
	mem=1024 scale=3 append=" kasan_multi_shot no5lvl"
fi
# KUnit runs rhist's suite at every insmod, and proves the same thing
# each time: only a script marked "# run.sh: kunit" (idle.sh, check.sh's
# KUnit boot) has it; the others' boots say "kunit.enable=0".
if [ -z "$script" ] || ! grep -q '^# run.sh: kunit$' "$script"; then
	append="$append kunit.enable=0"
fi
# SLUB's checks, without its owner tracking: the kernels built with
# CONFIG_SLUB_DEBUG_ON poison freed objects, check red zones and check
# the slabs' consistency (slub_debug=FZP) as before, but no longer save
# a stack trace at every allocation and free (U), which only adds the
# owner's and the freer's stacks to a report that fails the run anyway.
# That trace was a third of what an allocation costs under TCG: a C hist
# trigger's 14,000 allocations took 180 ms to make, 135 ms now, and the
# differential suite 133 s, 109 s now.
if grep -q '^CONFIG_SLUB_DEBUG_ON=y$' "$(kernel_tree "$flavour")/.config" 2> /dev/null; then
	append="$append slub_debug=FZP"
fi
# RHIST_APPEND: more kernel parameters (make fuzz-seq's rcu_expedited).
append="$append${RHIST_APPEND:+ $RHIST_APPEND}"
timeout=$((timeout * ${RHIST_TIMEOUT_SCALE:-$scale}))
tcg=multi icount=()
if [ -n "$script" ] && grep -q '^# run.sh: single-threaded TCG$' "$script"; then
	tcg=single
fi
# RHIST_ICOUNT=1: the guest's clock counts retired instructions (one per
# nanosecond), on one host thread, so that timings repeat from run to run.
if [ "${RHIST_ICOUNT:-}" = 1 ]; then
	tcg=single icount=(-icount shift=0,sleep=off)
fi

tree=$(kernel_tree "$flavour")
mods=$RHIST_BUILD/modules-$flavour
vmdir=$(mktemp -d "${TMPDIR:-/tmp}/rhist-vm.XXXXXX")
trap 'rm -rf "$vmdir"' EXIT

# The initramfs: busybox, /init, the modules and the script.
root=$vmdir/root
mkdir -p "$root"/{bin,dev,proc,sys,tmp,etc,test,lib/rhist}
cp /bin/busybox "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$(dirname "$0")/guest-init" "$root/init"
banner=$(dirname "$0")/banner
[ "$flavour" != dropin ] || banner=$banner-dropin
cp "$banner" "$root/etc/banner"
chmod +x "$root/init"
cp "$mods"/*.ko "$root/lib/rhist/"
[ -z "$rhist_ko" ] || cp "$rhist_ko" "$root/lib/rhist/rhist.ko"
[ -z "$script" ] || cp "$script" "$root/test/script.sh"
# The kernel's ftrace selftests, for the conformance suite.
cp -r "$tree/tools/testing/selftests/ftrace" "$root/test/ftrace"
# Scripts may source helpers that sit next to them.
[ -z "$script" ] || cp "$(dirname "$script")"/*.sh.inc "$root/test/" 2>/dev/null || true
# The comparison of a hist file with an rhist file, for every script.
cp "$RHIST_TOP/tools/testing/compare/hist_same.awk" "$root/test/"
[ ${#files[@]} = 0 ] || cp "${files[@]}" "$root/test/"
[ ! -d "$RHIST_BUILD/clients" ] || cp -a "$RHIST_BUILD/clients/." "$root/"
for o in "${overlays[@]}"; do cp -a "$o/." "$root/"; done
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$vmdir/initramfs.gz"

# RHIST_HOSTFWD=tcp:127.0.0.1:HOSTPORT-:GUESTPORT (several, separated by
# spaces): a virtio-net card on QEMU's user network, with those ports of
# the host forwarded to the guest's, and the host's 127.0.0.1 at 10.0.2.2
# for the guest (the guest script brings the card up: ifconfig eth0
# 10.0.2.15).
net=(-nic none)
if [ -n "${RHIST_HOSTFWD:-}" ]; then
	netdev=user,id=net0
	for fwd in $RHIST_HOSTFWD; do netdev="$netdev,hostfwd=$fwd"; done
	net=(-netdev "$netdev" -device virtio-net-pci,netdev=net0)
fi
qemu=(qemu-system-x86_64 -accel tcg,thread=$tcg "${icount[@]}" -cpu max -smp 2 -m $mem
	-kernel "${image:-$tree/arch/x86/boot/bzImage}" -initrd "$vmdir/initramfs.gz"
	-append "console=ttyS0 panic=-1 oops=panic rhist.mode=$mode$append"
	"${net[@]}" -nographic -no-reboot)

if [ "$mode" = shell ]; then
	exec "${qemu[@]}"
fi

[ -n "$log" ] || log=$vmdir/console.log
set +e
# The boot log goes to the log file as the guest writes it (tr unbuffered:
# a test on the host may follow the log); the terminal sees it from /init
# on.
timeout --foreground -k 5 "$timeout" "${qemu[@]}" < /dev/null 2>&1 |
	stdbuf -o0 tr -d '\r' | tee "$log" | sed -n '/^Run \/init/,$p'

status=${PIPESTATUS[0]}
set -e

rc=$(sed -n 's/^RHIST-EXIT: \([0-9]*\)$/\1/p' "$log" | tail -1)
problems=$(grep -E "$RHIST_PROBLEM_RE" "$log" | grep -v '^RHIST-EXIT' || true)

if [ -z "$rc" ]; then
	if [ "$status" = 124 ]; then
		echo "rhist-vm: the guest did not finish within $timeout s" >&2
	else
		echo "rhist-vm: the guest stopped before the script finished (QEMU status $status)" >&2
	fi
	exit 124
fi
if [ -n "$problems" ]; then
	echo "rhist-vm: the guest kernel reported a problem:" >&2
	echo "$problems" | head -20 >&2
	# KASAN and KFENCE frame each report with a line of '=': show them.
	awk '/^=+$/ && length($0) > 40 { inr = !inr; if (inr) print "---"; next }
	     inr && n < 200 { print; n++ }' "$log" >&2
	[ "$rc" != 0 ] || rc=3
fi
exit "$rc"
