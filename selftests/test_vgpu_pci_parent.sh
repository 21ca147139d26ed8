#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# vGPUs of a PCI parent with NVIDIA-style types, as on real hosts: the
# project's test-only parent (selftests/modules/vgpu_test_parent.c), a PCI
# driver named "nvidia", bound by driver_override to QEMU's vmware-svga at
# 02:00.0, which no Linux driver takes. Its types are nvidia-222 ("GRID
# T4-2B", 8 of 2048M) and nvidia-230 ("GRID T4-16Q", 1 of 16384M), one
# type on the card at a time, described in NVIDIA's "key=value" form.
# Sysfs, parsed here with sed, and the kernel's YNL CLI are the witnesses:
#   - gpuctl vgpu types names the parent by its PCI address and gives the
#     description's fields as the description says them;
#   - vgpu add takes the parent's short address; the instance is listed
#     under the PCI parent; the card then offers only that type;
#   - a type the card cannot hold now is refused, changing nothing;
#   - alloc add ... vgpu nvidia-222 count 2 places both on the card;
#   - gpuctl.conf declares an instance by the parent's address.

# Stage functions run through ktap_run_stage or a trap; json_check's jq
# filters name jq variables in single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

TMP=$(mktemp -d /tmp/test_vgpu_pci_parent.XXXXXX)
SAMPLES=${GPUCTL_MDEV_SAMPLES:-$GPUCTL_ROOT/build/$(uname -r)/mdev}
CARD=0000:02:00.0
SYS=/sys/bus/pci/devices/$CARD
TYPES=/sys/class/mdev_bus/$CARD/mdev_supported_types
MDEVS=/sys/bus/mdev/devices
VM=4c1e5a20-0000-4000-8000-0000000000d1
U1=8e2f0c10-0000-4000-8000-0000000000d1
U2=8e2f0c10-0000-4000-8000-0000000000d2

cleanup() {
	nl_allocs_cleanup
	mdevs_remove_all
	[ -e "$SYS/driver" ] && echo "$CARD" >"$SYS/driver/unbind"
	echo >"$SYS/driver_override"
	rmmod vgpu_test_parent 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

card_instances() {
	find "$TYPES"/*/devices -mindepth 1 -maxdepth 1 2>/dev/null | wc -l
}

# One field of a type's description, as sysfs has it: "framebuffer=2048M"
desc_field() {	# TYPE KEY
	sed -n "s/.*\\b$2=\\([^, ]*\\).*/\\1/p" "$TYPES/$1/description"
}

check_setup() {
	[ -f "$SAMPLES/vgpu_test_parent.ko" ] ||
		{ echo "no $SAMPLES/vgpu_test_parent.ko"; return 1; }
	[ ! -e "$SYS/driver" ] || { echo "$CARD has a driver"; return 1; }
	grep -q '^gpuctl ' /proc/modules || gpuctl_load || return 1
	modprobe -a vfio_iommu_type1 mdev || return 1
	insmod "$SAMPLES/vgpu_test_parent.ko" || return 1
	write_to nvidia "$SYS/driver_override" || return 1
	write_to "$CARD" /sys/bus/pci/drivers_probe || return 1
	expect_pci_driver "$CARD" nvidia && [ -d "$TYPES/nvidia-222" ]
}

check_types() {
	local t fb

	gpuctl -j vgpu types 02:00.0 >"$TMP/types" || return 1
	cat "$TMP/types"
	json_check '.vgpu_types | map(.type) == ["nvidia-222", "nvidia-230"] and
		all(.parent == "0000:02:00.0" and .device_api == "vfio-pci")' \
		"$TMP/types" || return 1
	for t in nvidia-222 nvidia-230; do
		fb=$(desc_field "$t" framebuffer) || return 1
		json_check --arg t "$t" --arg name "$(cat "$TYPES/$t/name")" \
			--argjson avail "$(cat "$TYPES/$t/available_instances")" \
			--argjson max "$(desc_field "$t" max_instance)" \
			--argjson heads "$(desc_field "$t" num_heads)" \
			--argjson fb "${fb%M}" --arg res "$(desc_field "$t" max_resolution)" \
			--arg desc "$(cat "$TYPES/$t/description")" \
			'.vgpu_types[] | select(.type == $t) | .name == $name and
			 .available_instances == $avail and .max_instance == $max and
			 .num_heads == $heads and .framebuffer_mb == $fb and
			 .max_resolution == $res and .description == $desc' \
			"$TMP/types" || return 1
	done
	json_check '.vgpu_types | map(.available_instances) == [8, 1]' "$TMP/types"
}

check_add() {
	run_captured "$TMP/out" "$TMP/err" gpuctl vgpu add 02:00.0 type nvidia-222 \
		uuid "$U1" || return 1
	grep -qx "$U1 type nvidia-222 name \"GRID T4-2B\" parent $CARD driver vgpu_test_parent" \
		"$TMP/out" || return 1
	[ "$(basename "$(readlink -f "$MDEVS/$U1/..")")" = "$CARD" ] || return 1
	ynl --do mdev-get --json "{\"uuid\": \"$U1\"}" >"$TMP/one" &&
	json_check --arg c "$CARD" '.parent == $c and .type == "nvidia-222" and
		.["type-name"] == "GRID T4-2B"' "$TMP/one" || return 1
	# one type on the card at a time
	[ "$(cat "$TYPES/nvidia-222/available_instances")" = 7 ] &&
	[ "$(cat "$TYPES/nvidia-230/available_instances")" = 0 ] || return 1
	cmd_fails "^gpuctl: vgpu add: $CARD has no capacity left for type nvidia-230$" \
		gpuctl vgpu add "$CARD" type nvidia-230 || return 1
	[ "$(card_instances)" = 1 ]
}

check_alloc() {
	local id

	gpuctl -j alloc add owner "$VM" vgpu nvidia-222 count 2 >"$TMP/a" || return 1
	cat "$TMP/a"
	id=$(jq '.allocations[0].id' "$TMP/a") || return 1
	[ "$(card_instances)" = 3 ] && [ "$(cat "$TYPES/nvidia-222/available_instances")" = 5 ] ||
		return 1
	for u in $(jq -r '.allocations[0].vgpus[].uuid' "$TMP/a"); do
		[ "$(basename "$(readlink -f "$MDEVS/$u/..")")" = "$CARD" ] || return 1
	done
	gpuctl alloc del "$id" && [ "$(card_instances)" = 1 ]
}

check_conf() {
	local conf=$TMP/gpuctl.conf

	printf 'vgpu 02:00.0 type nvidia-222 uuid %s\n' "$U2" >"$conf"
	run_captured "$TMP/out" "$TMP/err" gpuctl apply "$conf" || return 1
	grep -qx "vgpu $U2 type nvidia-222 parent $CARD" "$TMP/out" &&
	[ -e "$TYPES/nvidia-222/devices/$U2" ] || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl apply "$conf" &&
	[ ! -s "$TMP/out" ] && [ "$(card_instances)" = 2 ]
}

ynl_start
ktap_header
ktap_plan 5
ktap_run_stage "the test parent bound to $CARD by driver_override" check_setup
ktap_run_stage "vgpu types: PCI parent, NVIDIA description fields as sysfs says" \
	check_types
ktap_run_stage "vgpu add by short address; one type on the card at a time" check_add
ktap_run_stage "alloc add ... vgpu nvidia-222 count 2 places both on the card" \
	check_alloc
ktap_run_stage "gpuctl.conf declares an instance by the parent's address" check_conf
ktap_finished
