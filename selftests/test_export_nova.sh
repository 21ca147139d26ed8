#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# gpuctl export nova, read by Debian 12's Nova (python3-nova, unpacked by
# scripts/fetch-nova.sh into build/nova-root): selftests/nova/nova_check.py
# loads the file as nova-compute does and prints what Nova understood,
# which is compared with sysfs:
#   - no rule: a [pci] section with no device_spec, nothing for Nova;
#   - two GPUs reserved on vfio-pci: one device_spec each, which Nova's
#     Whitelist matches to exactly those functions on the host, managed
#     "no", one Placement provider each; an alias per model, numa_policy
#     "required" when the GPUs have a NUMA node, else "legacy";
#   - an mdev on a PCI parent (selftests/modules/vgpu_test_parent.c):
#     enabled_mdev_types, device_addresses and max_instances from the
#     type's description, through the libvirt driver's checks; the parent
#     has no device_spec;
#   - typed vendor VFs (selftests/modules/vgpu_test_vf.c) as type-VF with
#     the resource class of their type's id, which stays when the card is
#     full, under one provider for their PF, which is not listed, and
#     neither are the untyped VFs;
#   - Nova refuses broken variants, naming the exception: a function
#     above 7 (PciConfigInvalidSpec), an unknown device_type
#     (PciInvalidAlias), one parent under two mdev types
#     (InvalidLibvirtMdevConfig), a PF next to its VFs
#     (PlacementPciDependentDeviceException).

# Stage functions run through ktap_run_stage or a trap.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

TMP=$(mktemp -d /tmp/test_export_nova.XXXXXX)
SAMPLES=${GPUCTL_MDEV_SAMPLES:-$GPUCTL_ROOT/build/$(uname -r)/mdev}
NOVA=$GPUCTL_ROOT/selftests/nova/nova_check.py
SYS_PCI=/sys/bus/pci/devices
# Not qxl (03:00.0): 6.12's qxl driver corrupts memory when it probes the
# device again after a release (test_rule_match.sh); ati-vga has no driver.
GPUS=(0000:05:00.0 0000:81:00.0)
CARD=0000:02:00.0
TYPES=/sys/class/mdev_bus/$CARD/mdev_supported_types
PF=0000:11:00.0
VFS=(0000:11:00.1 0000:11:00.2 0000:11:00.3 0000:11:00.4)
UUID=6a2d0e30-0000-4000-8000-0000000000d1

cleanup() {
	[ -n "${NOVA_SRV_PID:-}" ] && kill "$NOVA_SRV_PID" 2>/dev/null
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

# nova_start: Nova imported once (a minute under TCG), in a server that
# reads each file a test gives it in a child of its own
nova_start() {
	local line

	coproc NOVA_SRV { exec "$NOVA" --serve 2>"$TMP/nova-server.err"; }
	if ! read -r -t 600 -u "${NOVA_SRV[0]}" line || [ "$line" != ready ]; then
		print_file "" "$TMP/nova-server.err"
		return 1
	fi
}

# nova_read FILE: Nova's reading of FILE, in FILE.nova, its error in
# FILE.err; returns 1 when Nova refused it
nova_read() {
	local line

	echo "$1" >&"${NOVA_SRV[1]}" || return 2
	read -r -t 120 -u "${NOVA_SRV[0]}" line || return 2
	return "${line#rc }"
}

# nova FILE: Nova read FILE
nova() {
	nova_read "$1" || { print_file "" "$1" "$1.nova" "$1.err"; return 1; }
	print_file "" "$1.nova"
}

# nova_refuses REGEX FILE: Nova refused FILE with an error that matches
nova_refuses() {
	local rc=0

	nova_read "$2" || rc=$?
	print_file "" "$2.err"
	[ "$rc" = 1 ] && grep -q -E -e "$1" "$2.err" && return 0
	echo "Nova did not refuse $2 with '$1' (exit $rc)"
	return 1
}

# export_nova OUT: gpuctl export nova in OUT, and Nova's reading of it
export_nova() {
	gpuctl export nova >"$1" && print_file "" "$1" && nova "$1"
}

# lines KIND FILE: Nova's lines of one kind, sorted
lines() {
	grep "^$1 " "$2" | sort
}

hex() {
	local v

	v=$(cat "$SYS_PCI/$1/$2") && echo "${v#0x}"
}

check_setup() {
	grep -q '^gpuctl ' /proc/modules || gpuctl_load || return 1
	[ -x "$NOVA" ] && [ -d "$GPUCTL_ROOT/build/nova-root/usr/lib/python3" ] &&
		nova_start
}

# No rule: nothing for Nova, but a file it reads
check_empty() {
	export_nova "$TMP/empty" || return 1
	grep -qx '\[pci\]' "$TMP/empty" && [ ! -s "$TMP/empty.nova" ] || return 1
	# the checker needs the [pci] section, so an empty file is no pass
	: >"$TMP/none"
	nova_refuses "no \\[pci\\] section" "$TMP/none"
}

# Two reserved GPUs, as Nova's device_spec matcher finds them in sysfs
check_gpus() {
	local g v p numa policy

	for g in "${GPUS[@]}"; do
		nl_rule_new "$g" driver vfio-pci take || return 1
	done
	for g in "${GPUS[@]}"; do
		expect_pci_driver "$g" vfio-pci || return 1
	done
	export_nova "$TMP/gpus" || return 1
	cp "$TMP/gpus" "$TMP/base"
	for g in "${GPUS[@]}"; do
		v=$(hex "$g" vendor) && p=$(hex "$g" device) || return 1
		numa=$(cat "$SYS_PCI/$g/numa_node")
		policy=required
		[ "$numa" -lt 0 ] && policy=legacy
		# vfio-pci registers no migration for QEMU's devices
		echo "SPEC $g $v $p type-PCI $numa managed=no rc=CUSTOM_PCI_${v^^}_${p^^} live_migratable=no" >&3
		echo "RP host_${g^^} CUSTOM_PCI_${v^^}_${p^^} 1" >&4
		echo "ALIAS pci-$v-$p $policy type-PCI $v $p" >&5
	done 3>"$TMP/want.spec" 4>"$TMP/want.rp" 5>"$TMP/want.alias"
	# one GPU on a NUMA node and one without, so both policies show
	grep -q ' required ' "$TMP/want.alias" && grep -q ' legacy ' "$TMP/want.alias" ||
		return 1
	lines SPEC "$TMP/gpus.nova" | diff -u <(sort "$TMP/want.spec") - &&
	lines RP "$TMP/gpus.nova" | diff -u <(sort "$TMP/want.rp") - &&
	lines ALIAS "$TMP/gpus.nova" | diff -u <(sort "$TMP/want.alias") - || return 1
	nl_rules_cleanup
}

# An mdev on a PCI parent: its type, the parent, the type's capacity
check_mdev() {
	local t=nvidia-222 max

	modprobe -a vfio_iommu_type1 mdev && insmod "$SAMPLES/vgpu_test_parent.ko" || return 1
	echo nvidia >"$SYS_PCI/$CARD/driver_override" &&
		echo "$CARD" >/sys/bus/pci/drivers_probe &&
		expect_pci_driver "$CARD" nvidia || return 1
	gpuctl vgpu add "$CARD" type "$t" uuid "$UUID" >/dev/null || return 1
	export_nova "$TMP/mdev" || return 1
	max=$(sed -n 's/.*max_instance=\([0-9]*\).*/\1/p' "$TYPES/$t/description")
	[ -n "$max" ] || return 1
	[ "$(lines MDEV "$TMP/mdev.nova")" = "MDEV $t $CARD VGPU $max" ] &&
		! grep -q "^SPEC $CARD " "$TMP/mdev.nova" || return 1
	cp "$TMP/mdev" "$TMP/mdev.base"
	gpuctl vgpu del "$UUID" >/dev/null && echo "$CARD" >"$SYS_PCI/$CARD/driver/unbind" &&
		echo >"$SYS_PCI/$CARD/driver_override" && rmmod vgpu_test_parent
}

# Typed vendor VFs as type-VF with their type's class; PF and untyped VFs out
check_vfs() {
	local vf name rc v p

	vendor_vf_rig_start || return 1
	for vf in "$PF" "${VFS[@]}"; do
		nl_rule_new "$vf" driver nvidia || return 1
	done
	expect_pci_driver "$PF" nvidia 0 || return 1
	echo 4 >"$SYS_PCI/$PF/sriov_numvfs" || return 1
	for vf in "${VFS[@]}"; do
		expect_pci_driver "$vf" nvidia 5 || return 1
	done
	name=$(sed -n 's/^1156 *: *//p' "$SYS_PCI/${VFS[2]}/nvidia/creatable_vgpu_types")
	[ -n "$name" ] || return 1
	gpuctl vgpu set "${VFS[0]}" type 1156 >/dev/null &&
		gpuctl vgpu set "${VFS[1]}" type 1156 >/dev/null || return 1
	export_nova "$TMP/vfs" || return 1
	v=$(hex "${VFS[0]}" vendor) && p=$(hex "${VFS[0]}" device) || return 1
	rc=CUSTOM_PCI_${v^^}_${p^^}_VGPU_1156
	# the card is full now: its VFs no longer list the type's name
	! grep -q "$name" "$SYS_PCI/${VFS[2]}/nvidia/creatable_vgpu_types" || return 1
	{
		for vf in "${VFS[@]:0:2}"; do
			echo "SPEC $vf $v $p type-VF $(cat "$SYS_PCI/$vf/numa_node") managed=no rc=$rc live_migratable=no"
		done
		echo "RP host_${PF^^} $rc 2"
	} >"$TMP/want"
	{ lines SPEC "$TMP/vfs.nova"; lines RP "$TMP/vfs.nova"; } | diff -u "$TMP/want" - ||
		return 1
	lines ALIAS "$TMP/vfs.nova" | grep -qx "ALIAS pci-$v-$p-vf [a-z]* type-VF $v $p" ||
		return 1
	# Nova refuses the PF next to its VFs
	sed "/^alias/i device_spec = {\"address\": \"$PF\", \"managed\": \"no\"}" \
		"$TMP/vfs" >"$TMP/bad.pf"
	nova_refuses "^PlacementPciDependentDeviceException: .*$PF" "$TMP/bad.pf" ||
		return 1
	for vf in "${VFS[@]:0:2}"; do
		gpuctl vgpu set "$vf" type none >/dev/null || return 1
	done
	nl_rules_cleanup && vendor_vf_rig_stop
}

# Nova refuses a broken variant of each part, with its exception
check_nova_refuses() {
	local g=${GPUS[0]}

	sed "s/\"address\": \"${g%.0}.0\"/\"address\": \"${g%.0}.8\"/" "$TMP/base" >"$TMP/bad.fn"
	cmp -s "$TMP/base" "$TMP/bad.fn" && return 1
	nova_refuses "^PciConfigInvalidSpec: .*func \\(8\\) is greater than the maximum" \
		"$TMP/bad.fn" || return 1
	sed '0,/"device_type": "type-PCI"/s//"device_type": "type-GPU"/' "$TMP/base" >"$TMP/bad.type"
	cmp -s "$TMP/base" "$TMP/bad.type" && return 1
	nova_refuses "^PciInvalidAlias: .*'type-GPU' is not one of" "$TMP/bad.type" ||
		return 1
	# the parent under a second type
	sed 's/^enabled_mdev_types = .*/&, nvidia-223/' "$TMP/mdev.base" >"$TMP/bad.mdev"
	printf '\n[mdev_nvidia-223]\ndevice_addresses = %s\n' "$CARD" >>"$TMP/bad.mdev"
	nova_refuses "^InvalidLibvirtMdevConfig: .*duplicate types for PCI ID $CARD" \
		"$TMP/bad.mdev" || return 1
	cmd_fails "unexpected argument \"x\"" gpuctl export nova x || return 1
	# and the completion offers it
	complete_words gpuctl export n | grep -qx nova
}

ktap_header
ktap_plan 6
ktap_run_stage "module and Nova's parsers" check_setup
ktap_run_stage "no rule: a [pci] section with nothing for Nova" check_empty
ktap_run_stage "reserved GPUs: device_spec and alias, as Nova matches them in sysfs" \
	check_gpus
ktap_run_stage "an mdev parent under its type, with the type's capacity" check_mdev
ktap_run_stage "typed vendor VFs under their PF's provider, the PF left out" check_vfs
ktap_run_stage "Nova refuses broken variants, naming the exception; usage" \
	check_nova_refuses
ktap_finished
