#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: one QEMU run of selftests/bench/run.sh on the newest kernel.
# Everything is reported as a ratio against a baseline measured in the same
# run; it is a benchmark, never a test.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/install-deps.sh test
k=${GPUCTL_KERNEL:-$(scripts/newest-kernel.sh)}
scripts/build-for-tests.sh "$k"
exec selftests/qemu/run.sh --kernel "$k" --topology full -- selftests/bench/run.sh
