#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: noiommu
#
# Without an IOMMU no device has a group: gpuctl still lists every GPU,
# with role gpu and no iommu_group, and has no group to show.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments; json_check's jq filters name jq variables in
# single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

SYS_PCI=/sys/bus/pci/devices
TMP=$(mktemp -d /tmp/test_noiommu.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

sysfs_gpus() {
	local d base

	for d in "$SYS_PCI"/*; do
		base=$(( $(<"$d/class") >> 16 ))
		[ "$base" -eq $((0x03)) ] || [ "$base" -eq $((0x12)) ] && echo "${d##*/}"
	done | sort
}

check_no_groups_in_sysfs() {
	# the premise: the topology really has no IOMMU
	[ -z "$(ls /sys/kernel/iommu_groups 2>/dev/null)" ] &&
	! ls "$SYS_PCI"/*/iommu_group >/dev/null 2>&1
}

check_gpus_listed() {
	sysfs_gpus >"$TMP/want"
	gpuctl -j dev show | jq -r '.devices[].address' | sort >"$TMP/got"
	diff -u "$TMP/want" "$TMP/got" && [ -s "$TMP/want" ]
}

check_roles() {
	gpuctl -j dev show | json_check '.devices | length > 0 and all(.role == "gpu")'
}

check_iommu_group_null() {
	gpuctl -j dev show |
		json_check '.devices | length > 0 and all(has("iommu_group") and .iommu_group == null)'
}

# Every GPU's driver, or "null", as sysfs and as the tool say.
check_drivers() {
	local a

	for a in $(sysfs_gpus); do
		echo "$a $(pci_driver_of "$a")"
	done >"$TMP/want"
	gpuctl -j dev show | jq -r '.devices[] | "\(.address) \(.driver // "")"' |
		sort >"$TMP/got" || return 1
	diff -u "$TMP/want" "$TMP/got" && [ -s "$TMP/want" ]
}

check_group_show_empty() {
	gpuctl -j group show | json_check '.groups == []'
}

check_ynl_group_dump_empty() {
	ynl --dump group-get | json_check '. == []'
}

check_ynl_no_iommu_group_attr() {
	ynl --dump dev-get | json_check 'length > 0 and all(has("iommu-group") | not)'
}

check_reject_group_do() {
	# no group exists, so asking for group 0 is ENOENT on the id
	cmd_fails 'error: -2$' ynl --do group-get --json '{"id": 0}' &&
	out_has "'bad-attr': '\.id'"
}

ktap_header
ktap_plan 9
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
ynl_start

ktap_run_stage "no IOMMU groups in sysfs" check_no_groups_in_sysfs
ktap_run_stage "every GPU listed" check_gpus_listed
ktap_run_stage "every device has role gpu" check_roles
ktap_run_stage "iommu_group is null for every device" check_iommu_group_null
ktap_run_stage "drivers match sysfs" check_drivers
ktap_run_stage "group show is empty" check_group_show_empty
ktap_run_stage "YNL group-get dump is empty" check_ynl_group_dump_empty
ktap_run_stage "YNL dev-get carries no iommu-group attribute" check_ynl_no_iommu_group_attr
ktap_run_stage "reject group-get of group 0" check_reject_group_do

gpuctl_unload
ktap_finished
