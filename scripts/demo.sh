#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: boot a simulated GPU host in QEMU (stand-in GPUs with real
# drivers, a GPU with HD audio, a GPU and a NIC behind one bridge, two NUMA
# nodes), load gpuctl and take the tour of scripts/demo-tour.sh: reserve a
# GPU, allocate it to a VM, run a real QEMU on it, watch the VM stop, and
# hit a tenant limit. With a terminal on stdin the tour ends in a shell
# inside the guest. GPUCTL_KERNEL=REL picks the kernel (default: the
# newest with headers). Exits non-zero when a step of the tour failed;
# make check runs it so.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/install-deps.sh test
k=${GPUCTL_KERNEL:-$(scripts/newest-kernel.sh)}
[ -n "$k" ] || { echo "gpuctl: no kernel with headers installed" >&2; exit 1; }
scripts/build-for-tests.sh "$k"
interactive=
[ -t 0 ] && interactive=--interactive
echo "gpuctl demo: booting kernel $k under QEMU (TCG, a few seconds)..."
exec selftests/qemu/run.sh --kernel "$k" --topology full $interactive -- scripts/demo-tour.sh
