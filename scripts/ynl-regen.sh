#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Generate the uapi header and the kernel policy/op tables from the YNL spec
# with ynl-gen-c.py from Debian's linux-source-6.12, the one place the
# generator command is written down.
#
# Usage: scripts/ynl-regen.sh KSRC OUTDIR
#   KSRC    extracted linux-source tree (tools/net/ynl, Documentation/netlink)
#   OUTDIR  where include/uapi/linux/gpuctl.h and kmod/netlink-gen.[ch] go;
#           the tree itself for "make regen", a scratch dir for regen-check.

set -eu

ksrc=$1
out=$2
top=$(cd "$(dirname "$0")/.." && pwd)
spec=Documentation/netlink/specs/gpuctl.yaml

# The generator reads the schema from <spec dir>/../<protocol>.yaml and
# walks up from the spec to a MAINTAINERS file (6.12 tools/net/ynl:
# lib/nlspec.py, SpecFamily.__init__(); ynl-gen-c.py, find_kernel_root()),
# so it runs on a staged copy laid out like the kernel tree.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/Documentation/netlink/specs"
: >"$stage/MAINTAINERS"
cp "$ksrc/Documentation/netlink/genetlink-legacy.yaml" "$stage/Documentation/netlink/"
cp "$top/$spec" "$stage/$spec"

gen() {
	timeout 120 python3 "$ksrc/tools/net/ynl/ynl-gen-c.py" \
		--spec "$stage/$spec" "$@"
}

mkdir -p "$out/include/uapi/linux" "$out/kmod"
gen --mode uapi --header -o "$out/include/uapi/linux/gpuctl.h"
gen --mode kernel --header -o "$out/kmod/netlink-gen.h"
gen --mode kernel --source -o "$out/kmod/netlink-gen.c"
