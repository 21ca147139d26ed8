#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# gpuctl export cloudstack, through the packaged gpudiscovery.sh, read as
# CloudStack's KVM agent reads it: selftests/cloudstack/agent_parse.py
# checks it against a JSON Schema written from the script's documented
# output (python3-jsonschema) and the key order, then applies the agent's
# parser rules (an exception drops that GPU and every GPU after it). The
# values are checked against sysfs and lspci:
#   - every display controller (VGA included) and accelerator, with ids,
#     names, class, driver, group, NUMA node, and enabled 1;
#   - used_by_vm is the allocation's name, else its owner's UUID;
#   - an mdev on a PCI parent (selftests/modules/vgpu_test_parent.c) in
#     vgpu_instances, its profile numbers from the type's description;
#   - vendor VFs (selftests/modules/vgpu_test_vf.c) in vf_instances, a
#     typed one under its type's name, its PF listed though it is no
#     display controller;
#   - the agent's rules can fail: a boolean "enabled" drops every GPU
#     after it, and the schema refuses it.

# Stage functions run through ktap_run_stage or a trap; json_check's jq
# filters name jq variables in single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

TMP=$(mktemp -d /tmp/test_export_cloudstack.XXXXXX)
SAMPLES=${GPUCTL_MDEV_SAMPLES:-$GPUCTL_ROOT/build/$(uname -r)/mdev}
AGENT=$GPUCTL_ROOT/selftests/cloudstack/agent_parse.py
DROPIN=$GPUCTL_ROOT/packaging/cloudstack/gpudiscovery.sh
SYS_PCI=/sys/bus/pci/devices
GPU=0000:01:00.0
CARD=0000:02:00.0
TYPES=/sys/class/mdev_bus/$CARD/mdev_supported_types
PF=0000:11:00.0
VFS=(0000:11:00.1 0000:11:00.2 0000:11:00.3 0000:11:00.4)
VM1=6a2d0e30-0000-4000-8000-000000000001
VM2=6a2d0e30-0000-4000-8000-000000000002
UUID=6a2d0e30-0000-4000-8000-0000000000c1

cleanup() {
	nl_allocs_cleanup
	mdevs_remove_all
	if [ -e "$SYS_PCI/$CARD/driver" ] &&
	   [ "$(basename "$(readlink "$SYS_PCI/$CARD/driver")")" = nvidia ]; then
		echo "$CARD" >"$SYS_PCI/$CARD/driver/unbind"
		echo >"$SYS_PCI/$CARD/driver_override"
	fi
	rmmod vgpu_test_parent 2>/dev/null
	nl_rules_cleanup
	grep -q '^vgpu_test_vf ' /proc/modules && vendor_vf_rig_stop
	rm -rf "$TMP"
}
trap cleanup EXIT

# export OUT: the drop-in's output, as the agent would run it, in OUT;
# the agent's devices in OUT.devices
export_cs() {
	sed 's|/usr/sbin/gpuctl|gpuctl|' "$DROPIN" | sh >"$1" || return 1
	"$AGENT" "$1" >"$1.devices" || { print_file "" "$1"; return 1; }
	print_file "" "$1.devices"
}

# gpu_of OUT ADDR: the GPU object of ADDR (short form) in OUT
gpu_of() {
	jq -c --arg a "$2" '.gpus[] | select(.pci_address == $a)' "$1"
}

short() {
	echo "${1#0000:}"
}

# The display controllers and accelerators that are no VF, per sysfs
sysfs_gpus() {
	local d c

	for d in "$SYS_PCI"/*; do
		c=$(cat "$d/class")
		case $c in 0x03*|0x12*) ;; *) continue ;; esac
		[ -e "$d/physfn" ] || short "$(basename "$d")"
	done | sort
}

check_setup() {
	grep -q '^gpuctl ' /proc/modules || gpuctl_load || return 1
	[ -x "$AGENT" ] && [ -f "$DROPIN" ] && python3 -c 'import jsonschema'
}

# lspci_gpus: "ADDR|vendor_id|device_id|vendor|device|class [code]" per
# display controller and accelerator that is no VF: names from lspci
# -vmm, ids and the class code from lspci -vmm -n, in two calls
lspci_gpus() {
	{ lspci -vmm; lspci -vmm -n; } | awk -F'\t' '
		/^Slot:/ { s = $2; if (s in v) pass2 = 1 }
		!pass2 && /^Class:/ { c[s] = $2 } !pass2 && /^Vendor:/ { v[s] = $2 }
		!pass2 && /^Device:/ { d[s] = $2 }
		pass2 && /^Class:/ { cc[s] = $2 } pass2 && /^Vendor:/ { vi[s] = $2 }
		pass2 && /^Device:/ { di[s] = $2 }
		END { for (s in cc) if (cc[s] ~ /^(03|12)/)
			print s "|" vi[s] "|" di[s] "|" v[s] "|" d[s] "|" c[s] " [" cc[s] "]" }' |
		sort
}

# sysfs_facts ADDR...: "ADDR|driver|group|numa" per address, per sysfs
sysfs_facts() {
	local a full drv grp

	for a in "$@"; do
		full=0000:$a
		drv=unknown
		[ -e "$SYS_PCI/$full/driver" ] && drv=$(basename "$(readlink "$SYS_PCI/$full/driver")")
		grp=null
		[ -e "$SYS_PCI/$full/iommu_group" ] &&
			grp=$(basename "$(readlink "$SYS_PCI/$full/iommu_group")")
		echo "$a|$drv|$grp|$(cat "$SYS_PCI/$full/numa_node")"
	done
}

# Each GPU as sysfs and lspci have it
check_gpus() {
	export_cs "$TMP/out" || return 1
	sysfs_gpus >"$TMP/want" && jq -r '.gpus[].pci_address' "$TMP/out" | sort >"$TMP/got" &&
		diff -u "$TMP/want" "$TMP/got" || return 1
	# VGA included, and one agent device per GPU with nothing else here
	grep -q '"pci_class":"VGA compatible controller \[0300\]"' "$TMP/out" &&
	[ "$(wc -l <"$TMP/out.devices")" = "$(wc -l <"$TMP/want")" ] || return 1
	# lspci prints no domain on a host that has only domain 0000, as the export
	lspci_gpus | awk -F'|' 'NR == FNR { w[$1] = 1; next } $1 in w' "$TMP/want" - \
		>"$TMP/lspci" || return 1
	jq -r '.gpus[] | [.pci_address, .vendor_id, .device_id, .vendor, .device,
		.pci_class] | join("|")' "$TMP/out" | sort >"$TMP/names" || return 1
	diff -u "$TMP/lspci" "$TMP/names" || return 1
	# shellcheck disable=SC2046 # one address per word
	sysfs_facts $(cat "$TMP/want") >"$TMP/facts" || return 1
	jq -r '.gpus[] | [.pci_address, .driver, .iommu_group, .numa_node] |
		map(tostring) | join("|")' "$TMP/out" | sort >"$TMP/got" &&
		diff -u "$TMP/facts" "$TMP/got" || return 1
	json_check '.gpus | all(.full_passthrough.enabled == 1 and
		.full_passthrough.used_by_vm == null and .vgpu_instances == [] and
		.vf_instances == [])' "$TMP/out" && cp "$TMP/out" "$TMP/base"
}

# used_by_vm: the allocation's name, else its owner
check_used_by_vm() {
	nl_rule_new "$GPU" driver vfio-pci take || return 1
	expect_pci_driver "$GPU" vfio-pci || return 1
	gpuctl alloc add owner "$VM1" name i-2-35-VM dev "$GPU" >/dev/null || return 1
	gpuctl export cloudstack >"$TMP/out" || return 1
	gpu_of "$TMP/out" "$(short "$GPU")" |
		json_check '.full_passthrough.used_by_vm == "i-2-35-VM" and .driver == "vfio-pci"' ||
		return 1
	gpuctl alloc del owner "$VM1" && gpuctl alloc add owner "$VM2" dev "$GPU" >/dev/null &&
		gpuctl export cloudstack >"$TMP/out" || return 1
	gpu_of "$TMP/out" "$(short "$GPU")" |
		json_check --arg vm "$VM2" '.full_passthrough.used_by_vm == $vm' || return 1
	gpuctl alloc del owner "$VM2" || return 1
	[ "$(gpuctl export cloudstack | jq '[.gpus[] |
		select(.full_passthrough.used_by_vm != null)] | length')" = 0 ] || return 1
	nl_rules_cleanup
}

# An mdev on a PCI parent
check_vgpu() {
	local t=nvidia-222 desc

	modprobe -a vfio_iommu_type1 mdev && insmod "$SAMPLES/vgpu_test_parent.ko" || return 1
	echo nvidia >"$SYS_PCI/$CARD/driver_override" &&
		echo "$CARD" >/sys/bus/pci/drivers_probe &&
		expect_pci_driver "$CARD" nvidia || return 1
	gpuctl vgpu add "$CARD" type "$t" uuid "$UUID" >/dev/null || return 1
	export_cs "$TMP/out" || return 1
	desc=$(cat "$TYPES/$t/description")
	echo "$desc"
	gpu_of "$TMP/out" "$(short "$CARD")" | json_check --arg u "$UUID" \
		--arg name "$(cat "$TYPES/$t/name")" --arg desc "$desc" '
		.full_passthrough.enabled == 0 and (.vgpu_instances | length == 1) and
		.vgpu_instances[0] as $m | $m.mdev_uuid == $u and $m.profile_name == $name and
		($desc | test("max_instance=\($m.max_instances)\\b")) and
		($desc | test("framebuffer=\($m.video_ram)M")) and
		($desc | test("num_heads=\($m.max_heads)\\b")) and
		($desc | test("max_resolution=\($m.max_resolution_x)x\($m.max_resolution_y)\\b")) and
		$m.libvirt_address == {domain: "0x0000", bus: "0x02", slot: "0x00", function: "0x0"} and
		$m.used_by_vm == null' || return 1
	grep -qx "MDEV $UUID $(cat "$TYPES/$t/name")" "$TMP/out.devices" || return 1
	gpuctl vgpu del "$UUID" >/dev/null && echo "$CARD" >"$SYS_PCI/$CARD/driver/unbind" &&
		echo >"$SYS_PCI/$CARD/driver_override" && rmmod vgpu_test_parent
}

# Vendor VFs: the PF listed for its VFs, a typed VF under its type's name
check_vfs() {
	local vf name

	vendor_vf_rig_start || return 1
	# the stand-in PF is an NVMe function, which the module tracks only
	# when a rule names it (a real one is a 3D controller); a rule for
	# nvidia leaves a PF as it is
	for vf in "$PF" "${VFS[@]}"; do
		nl_rule_new "$vf" driver nvidia || return 1
	done
	expect_pci_driver "$PF" nvidia 0 || return 1
	echo 4 >"$SYS_PCI/$PF/sriov_numvfs" || return 1
	for vf in "${VFS[@]}"; do
		expect_pci_driver "$vf" nvidia 5 || return 1
	done
	gpuctl vgpu set "${VFS[0]}" type 1156 >/dev/null &&
		gpuctl alloc add owner "$VM1" name i-2-36-VM dev "${VFS[0]}" >/dev/null || return 1
	name=$(sed -n 's/^1156 *: *//p' "$SYS_PCI/${VFS[1]}/nvidia/creatable_vgpu_types")
	[ -n "$name" ] || return 1
	export_cs "$TMP/out" || return 1
	gpu_of "$TMP/out" "$(short "$PF")" | json_check --arg name "$name" \
		--arg a "$(short "${VFS[0]}")" --arg dev "$(lspci -vmm -s "${VFS[1]}" |
			sed -n 's/^Device:\t//p')" '
		.sriov_numvfs == 4 and .full_passthrough.enabled == 0 and .driver == "nvidia" and
		(.vf_instances | length == 4) and
		.vf_instances[0] == {vf_pci_address: $a, vf_profile: $name, max_instances: null,
			video_ram: null, max_heads: null, max_resolution_x: null,
			max_resolution_y: null, libvirt_address: {domain: "0x0000",
			bus: "0x11", slot: "0x00", function: "0x1"}, used_by_vm: "i-2-36-VM"} and
		(.vf_instances[1:] | all(.vf_profile == $dev and .used_by_vm == null))' ||
		return 1
	grep -qx "PCI $(short "${VFS[0]}") $name" "$TMP/out.devices" || return 1
	gpuctl alloc del owner "$VM1" && gpuctl vgpu set "${VFS[0]}" type none >/dev/null &&
		nl_rules_cleanup && vendor_vf_rig_stop
}

# The agent's own rules fail a bad file: an "enabled" that getAsInt()
# refuses drops that GPU and every one after it; the schema refuses it
check_agent_fails() {
	local n

	n=$(jq '.gpus | length' "$TMP/base")
	[ "$n" -ge 2 ] || return 1
	jq -c '.gpus[1].full_passthrough.enabled = true' "$TMP/base" >"$TMP/bad"
	cmd_fails "getAsInt\\(\\) on true: $((n - 1)) GPUs dropped" \
		"$AGENT" --rules-only "$TMP/bad" || return 1
	[ "$(grep -c '^PCI ' <<<"$CMD_OUT")" = 1 ] || return 1
	cmd_fails "ValidationError|is not of type 'integer'|is not one of" "$AGENT" "$TMP/bad" ||
		return 1
	# and the export's usage errors
	cmd_fails "unknown format \"openstack\"" gpuctl export openstack &&
	cmd_fails "unexpected argument \"x\"" gpuctl export cloudstack x
}

ktap_header
ktap_plan 6
ktap_run_stage "module, the agent's parser and the drop-in" check_setup
ktap_run_stage "every display controller and accelerator, as sysfs and lspci have it" \
	check_gpus
ktap_run_stage "used_by_vm: the allocation's name, else its owner" check_used_by_vm
ktap_run_stage "an mdev on a PCI parent, with its profile's numbers" check_vgpu
ktap_run_stage "vendor VFs under their PF, a typed one by its type's name" check_vfs
ktap_run_stage "the agent's rules fail a bad file; usage errors" check_agent_fails
ktap_finished
