#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo's tour, run inside the guest: what an operator would type.
set -eu
run() {
	printf '\n\033[1m# %s\033[0m\n' "$*"
	"$@"
}
run insmod "$GPUCTL_KO"
run gpuctl dev show
run gpuctl group show
gpu=$(gpuctl -j dev show | grep -o '"address":"[^"]*","vendor_id":"1234"' | head -n1 | cut -d'"' -f4)
if [ -n "$gpu" ]; then
	run gpuctl -j -p dev show "$gpu"
	drv=$(basename "$(readlink "/sys/bus/pci/devices/$gpu/driver")")
	printf '\n\033[1m# gpuctl -j monitor, while %s is unbound from %s and bound again\033[0m\n' "$gpu" "$drv"
	gpuctl -j monitor &
	mon=$!
	sleep 1
	echo "$gpu" >"/sys/bus/pci/drivers/$drv/unbind"
	echo "$gpu" >"/sys/bus/pci/drivers/$drv/bind"
	sleep 1
	kill "$mon"
	wait "$mon" || true
fi
run gpuctl dev show 0000:7f:1f.7 || true
printf '\nTry: gpuctl help, gpuctl -j -p group show, gpuctl monitor\n'
