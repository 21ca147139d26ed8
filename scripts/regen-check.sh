#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fail when the committed uapi header or kernel tables differ from what the
# spec generates.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$top/scripts/ynl-regen.sh" "$1" "$out"
rc=0
for f in include/uapi/linux/gpuctl.h kmod/netlink-gen.h kmod/netlink-gen.c; do
	if ! diff -u "$top/$f" "$out/$f"; then
		echo "regen-check: $f differs from the spec; run 'make regen'" >&2
		rc=1
	fi
done
[ $rc = 0 ] && echo "regen-check: generated files match the spec"
exit $rc
