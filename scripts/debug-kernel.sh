#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once) the debug kernel of make check-debug and print the directory
# it lives in, a kernel root the QEMU runner boots with --kernel-root:
#
#   DIR/release                    its release, e.g. 6.12.118-gpuctl-debug
#   DIR/root/boot/vmlinuz-REL      the kernel, config-REL, System.map-REL
#   DIR/root/lib/modules/REL/      its modules (modules_install)
#   DIR/linux/                     the built tree: KDIR for external modules
#
# The kernel is linux-source-6.12 configured with x86_64 defconfig, then
# kvm_guest.config, then selftests/debug/kernel.config (KASAN, lockdep,
# kmemleak, debug objects and the rig's drivers). DIR is
# ${GPUCTL_CACHE:-/var/cache/gpuctl}/debug-kernel/KEY, KEY a hash of the
# source tarball, the fragment, the compiler and $recipe below, so that a
# second run finds the kernel built and a change to any input builds a new
# one.
#
# Usage: scripts/debug-kernel.sh          build if needed, print DIR
#        scripts/debug-kernel.sh --dir    print DIR, build nothing
# The build runs under nice with one job per CPU; its log is DIR/build.log
# and its wall time in seconds DIR/build-seconds.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tarball=${KSRC_TAR:-/usr/src/linux-source-6.12.tar.xz}
fragment=$top/selftests/debug/kernel.config
cache=${GPUCTL_CACHE:-/var/cache/gpuctl}/debug-kernel

die() { echo "debug-kernel.sh: $*" >&2; exit 1; }

[ -r "$tarball" ] || die "$tarball missing (scripts/install-deps.sh debug)"

# Names how this script builds; change it with any step below that changes
# what gets built.
recipe="defconfig kvm_guest.config gpuctl-debug.config, make all, v1"
key=$( { sha256sum <"$tarball"; sha256sum <"$fragment"; echo "$recipe";
	 gcc --version | head -n1; } | sha256sum | cut -c1-16)
dir=$cache/$key

if [ "${1:-}" = --dir ]; then
	echo "$dir"
	exit 0
fi

mkdir -p "$cache"
# Two runs must not build the same kernel at once; the second waits and
# then finds it done.
exec 9>"$dir.lock"
flock 9
if [ -f "$dir/done" ]; then
	echo "$dir"
	exit 0
fi

rm -rf "$dir"
mkdir -p "$dir"
log=$dir/build.log
start=$SECONDS
echo "debug-kernel.sh: building the debug kernel in $dir (log: $log)" >&2

# Every option of the fragment must have landed: Kconfig drops what a
# dependency forbids with no more than a warning.
check_config() {
	local line opt bad=
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF "$line" "$dir/linux/.config" || bad="$bad $line" ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *}
			! grep -q "^$opt=" "$dir/linux/.config" || bad="$bad $opt=n" ;;
		esac
	done <"$fragment"
	[ -z "$bad" ] || die "the final .config lacks:$bad"
}

{
	tar -C "$dir" -xJf "$tarball"
	mv "$dir/linux-source-6.12" "$dir/linux"
	cd "$dir/linux"
	# make NAME.config merges kernel/configs/NAME.config into .config.
	cp "$fragment" kernel/configs/gpuctl-debug.config
	make defconfig
	make kvm_guest.config
	make gpuctl-debug.config
} >"$log" 2>&1 || { tail -n 30 "$log" >&2; die "configuring failed"; }
check_config

cd "$dir/linux"
nice make -j"$(nproc)" >>"$log" 2>&1 ||
	{ grep -E 'error|Error' "$log" | head -n 20 >&2; die "build failed, see $log"; }
rel=$(make -s kernelrelease)
case $rel in *-gpuctl-debug) ;; *) die "unexpected release $rel" ;; esac

root=$dir/root
mkdir -p "$root/boot"
make INSTALL_MOD_PATH="$root" modules_install >>"$log" 2>&1 ||
	die "modules_install failed, see $log"
cp arch/x86/boot/bzImage "$root/boot/vmlinuz-$rel"
cp .config "$root/boot/config-$rel"
cp System.map "$root/boot/System.map-$rel"
# What a packaged kernel's headers link; here the whole built tree.
ln -sfn "$dir/linux" "$root/lib/modules/$rel/build"
echo "$rel" >"$dir/release"
echo $((SECONDS - start)) >"$dir/build-seconds"
touch "$dir/done"
echo "debug-kernel.sh: $rel built in $((SECONDS - start)) s" >&2
echo "$dir"
