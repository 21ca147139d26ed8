#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build what a QEMU run needs: the module for kernel REL into
# build/REL/gpuctl.ko, the tool and the selftest programs. Quiet on success.
# Usage: scripts/build-for-tests.sh REL
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
k=$1
log=build/build-$k.log
mkdir -p build
{
	make -s ksrc
	scripts/build-module.sh "$k"
	scripts/build-mdev-samples.sh "$k"
	scripts/fetch-nova.sh
	make -s tools
	make -s selftests
} >"$log" 2>&1 || { cat "$log" >&2; echo "gpuctl: build failed, see $log" >&2; exit 1; }
