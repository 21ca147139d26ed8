#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build gpuctl.ko for installed kernel REL into build/REL/gpuctl.ko.
#
# Each kernel builds in its own copy of the module sources under
# build/kbuild/REL: kbuild writes objects beside the sources, and its
# "clean" of an external module deletes every *.ko below M=, so building
# kernels one after another in the tree itself would destroy the module
# built for the previous one.
#
# A variant NAME builds with extra compiler flags (a test-only switch such
# as -DGPUCTL_TEST_BREAK_ALLOC_NEW) in a copy of its own, into
# build/variants/NAME/REL/gpuctl.ko, never over the module of the tests.
#
# Usage: scripts/build-module.sh REL [NAME CFLAGS]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
rel=$1
variant=${2:-}
cflags=${3:-}
kdir=/lib/modules/$rel/build
[ -d "$kdir" ] || { echo "gpuctl: no headers for $rel in $kdir" >&2; exit 1; }

src=$top/build/kbuild/$rel
dst=$top/build/$rel
if [ -n "$variant" ]; then
	src=$top/build/kbuild/$rel-$variant
	dst=$top/build/variants/$variant/$rel
fi
mkdir -p "$src" "$dst"
# cp -u keeps timestamps meaningful, so kbuild rebuilds only what changed.
cp -u "$top/Kbuild" "$src/"
mkdir -p "$src/kmod" "$src/include"
cp -ru "$top/include/." "$src/include/"
for f in "$top"/kmod/Kbuild "$top"/kmod/*.[ch]; do
	case $f in *.mod.c) continue ;; esac
	cp -u "$f" "$src/kmod/"
done
# Sources deleted from the tree must not linger in the copy.
for f in "$src"/kmod/*.[ch]; do
	case $f in *.mod.c) continue ;; esac
	[ -e "$top/kmod/${f##*/}" ] || rm -f "$f"
done

export GPUCTL_VERSION=${GPUCTL_VERSION:-$(git -C "$top" describe --always --dirty --tags 2>/dev/null || echo 0.1)}
make -C "$kdir" M="$src" ${cflags:+KCFLAGS="$cflags"} modules
cp "$src/kmod/gpuctl.ko" "$dst/gpuctl.ko"
