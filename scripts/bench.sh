#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: two QEMU runs on the newest kernel, selftests/bench/run.sh on
# topology "full" and the scale benchmark, selftests/bench/scale.sh, on
# topology "scale". Everything is reported as a ratio against a baseline
# measured in the same run; it is a benchmark, never a test.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/install-deps.sh bench
k=${GPUCTL_KERNEL:-$(scripts/newest-kernel.sh)}
scripts/build-for-tests.sh "$k"
selftests/qemu/run.sh --kernel "$k" --topology full -- selftests/bench/run.sh
# the scale benchmark's settings, when set, reach the guest
scale_env=()
for v in GPUCTL_SCALE_SIZES GPUCTL_SCALE_CALLS; do
	if [ -n "${!v:-}" ]; then
		scale_env+=("$v=${!v}")
	fi
done
exec selftests/qemu/run.sh --kernel "$k" --topology scale --timeout 5400 -- \
	env "${scale_env[@]}" selftests/bench/scale.sh
