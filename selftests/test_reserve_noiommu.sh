#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: noiommu
#
# Without an IOMMU, vfio-pci cannot bind anything: a GPU reserved with
# take loses its host driver but ends "blocked", with a reason, and the
# monitor hears so. rule-del gives it back to its host driver.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

SYS_PCI=/sys/bus/pci/devices
TMP=$(mktemp -d /tmp/test_reserve_noiommu.XXXXXX)
GPU=0000:01:00.0
MON_PID=
RULE=

cleanup() {
	[ -n "$MON_PID" ] && kill "$MON_PID" 2>/dev/null
	[ -n "$RULE" ] && gpuctl-nl rule-del id "$RULE" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

drv_of() {	# ADDR
	local l

	l=$(readlink "$SYS_PCI/$1/driver") || return 0
	echo "${l##*/}"
}

wait_event() {	# REGEX: a gpuctl-nl monitor line matches, 30 s
	local _

	for _ in $(seq 150); do
		grep -q -E "$1" "$TMP/mon" && return 0
		sleep 0.2
	done
	echo "no event matching '$1'; got:"
	cat "$TMP/mon"
	return 1
}

check_premise() {
	[ -z "$(ls /sys/kernel/iommu_groups 2>/dev/null)" ] &&
	[ "$(drv_of "$GPU")" = bochs-drm ]
}

check_blocked() {
	local line

	gpuctl-nl monitor >"$TMP/mon" 2>/dev/null &
	MON_PID=$!
	wait_monitor_subscribed "$MON_PID" || return 1
	gpuctl-nl rule-new "$GPU" take >"$TMP/rule" || return 1
	cat "$TMP/rule"
	RULE=$(sed -n 's/^rule id=\([0-9]*\) .*/\1/p' "$TMP/rule")
	# the module gives up on vfio-pci; it must not stay bound anywhere
	wait_for 30 _driver_is "$GPU" "" || { echo "$GPU on $(drv_of "$GPU")"; return 1; }
	wait_event "^dev-change-ntf address=$GPU .*action=blocked .*state_reason=." ||
		return 1
	line=$(gpuctl-nl dev-get "$GPU") || return 1
	echo "$line"
	case $line in
	*" reserved=1 "*"state=blocked "*"state_reason="?*) ;;
	*) echo "$GPU not reported blocked with a reason"; return 1 ;;
	esac
}

check_release() {
	[ -n "$RULE" ] || return 1
	gpuctl-nl rule-del id "$RULE" || return 1
	RULE=
	wait_for_driver 30 "$GPU" bochs-drm || return 1
	[ "$(<"$SYS_PCI/$GPU/driver_override")" = "(null)" ] || return 1
	wait_event "^dev-change-ntf address=$GPU .*action=released"
}

ktap_header
ktap_plan 3
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }

ktap_run_stage "no IOMMU, $GPU on bochs-drm" check_premise
ktap_run_stage "reserved with take without an IOMMU: blocked, with a reason" \
	check_blocked
ktap_run_stage "rule-del gives it back to bochs-drm, action released" check_release

gpuctl_unload
ktap_finished
