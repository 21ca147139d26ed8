#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the kernel's own sample mdev drivers, mbochs (a display with
# typed framebuffer sizes) and mtty (a serial port without a description),
# for kernel REL into build/REL/mdev/, from the Debian linux-source package
# of REL's version: the vGPU tests need mdev parents, and neither Debian
# kernel ships one (CONFIG_SAMPLES is off). With them goes the project's
# own test-only modules, which build on both kernels:
# selftests/modules/vgpu_test_parent.c (a PCI parent with NVIDIA-style
# types) and vgpu_test_vf.c (NVIDIA-style vendor VFs with nvidia/ types).
# The samples of one version do not build on the other (6.12's use vfio_device_ops.bind_iommufd, which
# 6.1 lacks), so each kernel gets its own.
#
# The source comes from /usr/src/linux-source-X.Y.tar.xz when that package
# is installed, else from the package fetched with apt-get download into
# /var/cache/gpuctl/src (GPUCTL_CACHE). Only samples/vfio-mdev is
# extracted, and none of it is committed.
#
# Usage: [KDIR=DIR] scripts/build-mdev-samples.sh REL
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
rel=$1
kdir=${KDIR:-/lib/modules/$rel/build}
cache=${GPUCTL_CACHE:-/var/cache/gpuctl}/src
[ -d "$kdir" ] || { echo "gpuctl: no headers for $rel in $kdir" >&2; exit 1; }

series=$(echo "$rel" | sed -E 's/^([0-9]+\.[0-9]+).*/\1/')
pkg=linux-source-$series
dst=$top/build/$rel/mdev
src=$top/build/mdev-src/$series
own=$top/selftests/modules/vgpu_test_parent.c
own_vf=$top/selftests/modules/vgpu_test_vf.c
[ -f "$dst/mbochs.ko" ] && [ -f "$dst/mtty.ko" ] &&
	[ "$dst/vgpu_test_parent.ko" -nt "$own" ] &&
	[ "$dst/vgpu_test_vf.ko" -nt "$own_vf" ] && exit 0

if [ ! -f "$src/.stamp" ]; then
	rm -rf "$src"
	mkdir -p "$src"
	want="$pkg/samples/vfio-mdev/*"
	if [ -f "/usr/src/$pkg.tar.xz" ]; then
		tar -C "$src" -xJf "/usr/src/$pkg.tar.xz" --wildcards "$want"
	else
		mkdir -p "$cache"
		debs=("$cache/${pkg}_"*_all.deb)
		if [ ! -f "${debs[-1]}" ]; then
			# Package lists may be missing or stale on a machine
			# whose other packages were all installed already.
			(cd "$cache" && { apt-get download "$pkg" ||
				{ apt-get update -q && apt-get download "$pkg"; }; }) >&2 || {
				echo "gpuctl: cannot fetch $pkg" >&2
				exit 1
			}
			debs=("$cache/${pkg}_"*_all.deb)
		fi
		deb=${debs[-1]}
		dpkg-deb --fsys-tarfile "$deb" |
			tar -xO "./usr/src/$pkg.tar.xz" |
			tar -C "$src" -xJ --wildcards "$want"
	fi
	mv "$src/$pkg/samples/vfio-mdev"/* "$src/"
	rm -rf "${src:?}/$pkg"
	touch "$src/.stamp"
fi

# Each kernel builds in its own copy: kbuild writes objects beside them.
obj=$top/build/kbuild/$rel-mdev
rm -rf "$obj"
mkdir -p "$obj" "$dst"
cp "$src"/mbochs.c "$src"/mtty.c "$own" "$own_vf" "$obj/"
cat >"$obj/Kbuild" <<'KBUILD'
obj-m := mbochs.o mtty.o vgpu_test_parent.o vgpu_test_vf.o
# The iommufd callbacks of struct vfio_device_ops (6.2), as in kmod/Kbuild
ifneq ($(shell grep -s -F bind_iommufd $(srctree)/include/linux/vfio.h),)
CFLAGS_vgpu_test_vf.o += -DVTV_HAVE_VFIO_IOMMUFD_OPS
endif
KBUILD
make -s -C "$kdir" M="$obj" modules
cp "$obj/mbochs.ko" "$obj/mtty.ko" "$obj/vgpu_test_parent.ko" \
	"$obj/vgpu_test_vf.ko" "$dst/"
