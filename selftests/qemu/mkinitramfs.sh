#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the tiny initramfs the QEMU runner boots with: static busybox, the
# modules needed to mount the host root over virtio-9p, and initramfs-init.
#
#   mkinitramfs.sh REL OUTDIR [KROOT]
#
# KROOT, when given, holds the kernel's boot/ and lib/modules/ (run.sh
# --kernel-root) in place of the host's /boot and /lib/modules.
# Prints the path of the cpio archive. The archive is cached in OUTDIR and
# rebuilt only when an input (this script, the init, busybox, a module file)
# changes, so parallel runs for different releases never share a file.

set -euo pipefail

rel=$1
outdir=$2
kroot=${3:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
busybox=${BUSYBOX:-/bin/busybox}

# 9p over virtio for the two shares, virtio_console for the output and QMP
# ports, overlay for the root of topology "packages". Built-in modules
# (6.12 builds virtio_pci and virtio_console in) are reported as "builtin"
# by modprobe and skipped.
wanted=(virtio_pci 9p 9pnet_virtio virtio_console overlay)

die() { echo "mkinitramfs.sh: $*" >&2; exit 1; }

[ -f "$kroot/boot/vmlinuz-$rel" ] || die "no $kroot/boot/vmlinuz-$rel"
[ -d "$kroot/lib/modules/$rel" ] || die "no $kroot/lib/modules/$rel"
[ -x "$busybox" ] || die "no $busybox (install busybox-static)"
if command -v file >/dev/null &&
   ! file -L "$busybox" | grep -q 'statically linked'; then
	die "$busybox is not a static busybox (install busybox-static)"
fi

# Module paths in load order, each once.
modprobe=(modprobe -S "$rel")
[ -n "$kroot" ] && modprobe+=(-d "$kroot")
mapfile -t mods < <("${modprobe[@]}" -a --show-depends "${wanted[@]}" |
		    awk '$1 == "insmod" && !seen[$2]++ { print $2 }')

stamp=$( { sha256sum "$0" "$here/initramfs-init" "$busybox";
	   for m in "${mods[@]}"; do stat -c '%n %s %Y' "$m"; done; } |
	 sha256sum | cut -d' ' -f1)
cpio=$outdir/initramfs.cpio
mkdir -p "$outdir"
# Two runs for the same release must not build the same archive at once.
exec 9>"$outdir/initramfs.lock"
flock 9
if [ -f "$cpio" ] && [ "$(cat "$outdir/initramfs.stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "$cpio"
	exit 0
fi

stage=$(mktemp -d "$outdir/stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT

mkdir -p "$stage"/{bin,dev,proc,sys,newroot,modules}
cp "$busybox" "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"
cp "$here/initramfs-init" "$stage/init"
chmod 755 "$stage/init"

# busybox insmod hands the file to init_module() as is, and the 6.1 kernel
# cannot decompress modules itself, so .ko.xz files are unpacked here.
: > "$stage/modules/order"
for m in "${mods[@]}"; do
	base=$(basename "$m")
	case $m in
	*.ko.xz) xz -dc "$m" > "$stage/modules/${base%.xz}"; base=${base%.xz} ;;
	*.ko.zst) zstd -qdc "$m" > "$stage/modules/${base%.zst}"; base=${base%.zst} ;;
	*.ko) cp "$m" "$stage/modules/$base" ;;
	*) die "unexpected module file $m" ;;
	esac
	echo "$base" >> "$stage/modules/order"
done

# Uncompressed: under TCG unpacking a compressed archive costs more boot
# time than reading the few extra megabytes.
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
	cpio --quiet -o -H newc -R 0:0) > "$cpio.tmp"
mv "$cpio.tmp" "$cpio"
echo "$stamp" > "$outdir/initramfs.stamp"
echo "$cpio"
