#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build gpuctl.ko for kernel REL into build/REL/gpuctl.ko, against the
# installed kernel's headers, or against the built kernel tree KDIR (the
# debug kernel of make check-debug, scripts/debug-kernel.sh).
#
# Each kernel builds in its own copy of the module sources under
# build/kbuild/REL: kbuild writes objects beside the sources, and its
# "clean" of an external module deletes every *.ko below M=, so building
# kernels one after another in the tree itself would destroy the module
# built for the previous one.
#
# Usage: scripts/build-module.sh REL [KDIR]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
rel=$1
kdir=${2:-/lib/modules/$rel/build}
[ -d "$kdir" ] || { echo "gpuctl: no headers for $rel in $kdir" >&2; exit 1; }

src=$top/build/kbuild/$rel
mkdir -p "$src" "$top/build/$rel"
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
make -C "$kdir" M="$src" modules
cp "$src/kmod/gpuctl.ko" "$top/build/$rel/gpuctl.ko"
