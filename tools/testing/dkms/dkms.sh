#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The DKMS path, in a throw-away root (never this machine's /lib/modules
# or /usr/src): the linux-headers package of `make kernel-deb` unpacked
# there (dpkg -x), rhist's sources put there by `make dkms-source`, then
# dkms add, build and install with DKMS's tree options; then a boot of
# the linux-image package's vmlinuz with the module DKMS built (run.sh
# --kernel, --rhist) running smoke.sh. Prints "dkms: STEP ok" or "dkms:
# STEP FAIL" for each of the steps listed by "dkms: steps ..." and ends
# with "dkms: done".
#
# Usage: dkms.sh DEBDIR LOGDIR   (DEBDIR: where kernel-deb.sh put the .debs)
set -uo pipefail
. "$(dirname "$0")/../vm/lib.sh"
debdir=$1 logs=$2
mkdir -p "$logs"

# As setup.sh asks for root: sudo, which may prompt (or has just).
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
root=$(mktemp -d "${TMPDIR:-/tmp}/rhist-dkms.XXXXXX")
trap '$SUDO rm -rf "$root"' EXIT

steps="headers kdir-check-wants-rust-metadata add build install vermagic skips-kernel-without-rust boot-smoke"
echo "dkms: steps $steps"
ok() { echo "dkms: $1 ok"; }
bad() { echo "dkms: $1 FAIL${2:+: $2}"; }

headers=$(ls "$debdir"/linux-headers-*.deb 2> /dev/null | head -1)
image=$(ls "$debdir"/linux-image-*.deb 2> /dev/null | grep -v -- '-dbg_' | head -1)
[ -n "$headers" ] && [ -n "$image" ] || { bad headers "no packages in $debdir"; exit 1; }
kver=$(dpkg-deb -f "$headers" Package | sed 's/^linux-headers-//')
dpkg -x "$headers" "$root" && dpkg -x "$image" "$root"
ksrc=$root/usr/src/linux-headers-$kver
if [ -f "$ksrc/Module.symvers" ] && [ -f "$ksrc/rust/libkernel.rmeta" ] &&
   [ -f "$root/boot/vmlinuz-$kver" ]; then
	ok headers
	echo "dkms: kernel $kver, $(basename "$headers") $(stat -c %s "$headers") bytes"
else
	bad headers "$kver: no Module.symvers, rust/libkernel.rmeta or vmlinuz"
fi

# A headers tree packaged without patches/deb/ lacks the kernel crate's
# metadata: kdir-check.sh says so, naming the patch.
noru=$root/no-rust-metadata
cp -a "$ksrc" "$noru" && rm -f "$noru"/rust/*.rmeta
if ! "$RHIST_TOP/tools/build/kdir-check.sh" "$noru" > "$logs/dkms-kdir-check.out" 2>&1 &&
   grep -q 'no rust/libkernel.rmeta.*patches/deb/0001-' "$logs/dkms-kdir-check.out"; then
	ok kdir-check-wants-rust-metadata
else
	bad kdir-check-wants-rust-metadata "$(cat "$logs/dkms-kdir-check.out")"
fi
rm -rf "$noru"

# dkms in the throw-away root: its tree, the sources, the installed
# modules, the kernel's build tree, all under $root.
mkdir -p "$root/var/lib/dkms" "$root/lib/modules"
make -s -C "$RHIST_TOP" dkms-source DESTDIR="$root" > /dev/null
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$RHIST_TOP/dkms.conf")
dkms() {
	$SUDO /usr/sbin/dkms "$1" "rhist/$version" --dkmstree "$root/var/lib/dkms" \
		--sourcetree "$root/usr/src" --installtree "$root/lib/modules" \
		-k "$kver" --kernelsourcedir "$ksrc" --no-depmod "${@:2}"
}
t0=$SECONDS
for s in add build install; do
	if dkms "$s" > "$logs/dkms-$s.log" 2>&1; then
		ok "$s"
	else
		bad "$s" "$(tail -5 "$logs/dkms-$s.log" | tr '\n' ' ')"
		cat "$root/var/lib/dkms/rhist/$version/build/make.log" 2> /dev/null | tail -30
	fi
done
echo "dkms: add, build and install took $((SECONDS - t0)) s"
ko=$root/lib/modules/$kver/updates/dkms/rhist.ko
magic=$(modinfo -F vermagic "$ko" 2> /dev/null)
if [ "${magic%% *}" = "$kver" ]; then
	ok vermagic
else
	bad vermagic "'$magic' is not for $kver"
fi

# A kernel built without Rust (its .config says so) is skipped, not
# failed: DKMS's BUILD_EXCLUSIVE_CONFIG.
fake=$root/no-rust
mkdir -p "$fake"
touch "$fake/Makefile"
grep -v '^CONFIG_RUST' "$ksrc/include/config/auto.conf" > "$fake/.config"
$SUDO /usr/sbin/dkms build "rhist/$version" --dkmstree "$root/var/lib/dkms" \
	--sourcetree "$root/usr/src" -k "$kver-norust" --kernelsourcedir "$fake" \
	> "$logs/dkms-norust.log" 2>&1
rc=$?
if [ $rc = 77 ] && grep -q BUILD_EXCLUSIVE "$logs/dkms-norust.log"; then
	ok skips-kernel-without-rust
else
	bad skips-kernel-without-rust "dkms exited $rc: $(tail -3 "$logs/dkms-norust.log" | tr '\n' ' ')"
fi

# The packaged kernel, booted, with the DKMS-built rhist.ko.
echo "$kver" > "$root/kernelrelease"
if [ -f "$ko" ] && "$RHIST_TOP/tools/testing/vm/run.sh" --timeout 300 --log "$logs/dkms-boot.console" \
	--kernel "$root/boot/vmlinuz-$kver" --rhist "$ko" \
	--file "$RHIST_TOP/tools/testing/tests/lib.sh.inc" --file "$root/kernelrelease" \
	"$RHIST_TOP/tools/testing/dkms/smoke.sh" > "$logs/dkms-boot.log" 2>&1 &&
   grep -q '^smoke: done$' "$logs/dkms-boot.log"; then
	grep '^smoke: kernel' "$logs/dkms-boot.log"
	ok boot-smoke
else
	tail -20 "$logs/dkms-boot.log"
	bad boot-smoke
fi
echo "dkms: done"
