#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# The vGPUs gpuctl.conf declares come back at every boot: the host boots
# twice in this VM, from nothing each time, the way a host boots with the
# packaged pieces:
#   1. the initramfs: gpuctl loaded with the file's rules as the module
#      parameter ("gpuctl apply FILE modprobe"), before any host driver;
#   2. the host's drivers: NVIDIA's (selftests/modules/vgpu_test_vf.c)
#      takes the SR-IOV PF; systemd-udevd runs with the packaged udev rule;
#   3. gpuctl.service: the packaged unit's ExecStart, which sets the PF's
#      VF count, then the VFs' vGPU types (each VF's binding also runs the
#      udev rule: the runs take turns), and skips the mdevs of a parent
#      that is not there yet;
#   4. the mdev parent's driver loads late (mtty): the udev rule makes
#      its vGPUs.
# Then the declared VFs have their types, the declared mdevs exist with
# their UUIDs, and an allocation takes them; a second apply changes
# nothing. Between the boots everything goes: allocations, mdevs, VFs,
# drivers and gpuctl itself. Both boots are checked with sysfs and
# gpuctl-nl and the YNL CLI. Not a power cycle: QEMU's devices keep their state, which a
# reboot resets, but nothing gpuctl made survives from one boot to the
# next.

# Stage functions run through ktap_run_stage or a trap; json_check's jq
# filters name jq variables in single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

SYS_PCI=/sys/bus/pci/devices
TMP=$(mktemp -d /tmp/test_vgpu_boot.XXXXXX)
SAMPLES=${GPUCTL_MDEV_SAMPLES:-$GPUCTL_ROOT/build/$(uname -r)/mdev}
CONF=$TMP/gpuctl.conf
MDEVS=/sys/bus/mdev/devices
PF=0000:11:00.0
VF1=0000:11:00.1
VF2=0000:11:00.2
U1=8e2f0c10-0000-4000-8000-0000000000b1
U2=8e2f0c10-0000-4000-8000-0000000000b2
VM=4c1e5a20-0000-4000-8000-0000000000b0

cat >"$CONF" <<EOF
# tracked for its VF count; nvidia never binds a PF
reserve $PF driver nvidia
reserve $VF1 driver nvidia
reserve $VF2 driver nvidia
dev $PF numvfs 2
vf $VF1 type 1156
vf $VF2 type 1156
vgpu mtty type mtty-2 uuid $U1
vgpu mtty type mtty-1 uuid $U2
EOF

# Everything goes, as at a shutdown; gpuctl last
shutdown() {
	nl_allocs_cleanup
	gpuctl_udevd_stop
	mdevs_remove_all
	rmmod mtty 2>/dev/null
	vendor_vf_rig_stop
	[ -d /sys/module/gpuctl ] && rmmod gpuctl
	[ ! -d /sys/module/gpuctl ]
}

cleanup() {
	shutdown
	# as the other tests expect it
	gpuctl_load
	rm -rf "$TMP"
}
trap cleanup EXIT

boot() {
	local opts tool unit="$GPUCTL_ROOT/packaging/systemd/gpuctl.service"
	local start

	# 1. the initramfs
	opts=$(gpuctl apply "$CONF" modprobe) || return 1
	echo "# $opts"
	[ "${opts%% *}" = options ] || return 1
	# shellcheck disable=SC2086 # the parameter is one word
	gpuctl_load ${opts#options gpuctl } || return 1
	# 2. the host's drivers and udev
	vendor_vf_rig_start || return 1
	gpuctl_udevd_start "$CONF" || return 1
	tool=$(command -v gpuctl) || return 1
	modprobe -a vfio_iommu_type1 mdev || return 1
	# 3. gpuctl.service, as its ExecStart says
	start=$(sed -n 's/^ExecStart=//p' "$unit" |
		sed -e "s|/etc/gpuctl/gpuctl.conf|$CONF|" -e "s|/usr/sbin/gpuctl|$tool|")
	[ "$start" = "$tool apply $CONF" ] || { echo "ExecStart: $start"; return 1; }
	$start >"$TMP/unit.out" 2>"$TMP/unit.err" || { cat "$TMP/unit.out" "$TMP/unit.err"; return 1; }
	cat "$TMP/unit.out" "$TMP/unit.err"
	grep -q "mdev parent mtty is not there yet" "$TMP/unit.err" || return 1
	# 4. the mdev parent's driver, late
	insmod "$SAMPLES/mtty.ko" || return 1
	udevadm settle -t 30
	if ! wait_for_path 30 "$MDEVS/$U1" || ! wait_for_path 30 "$MDEVS/$U2"; then
		echo "udev did not make $U1 and $U2"
		return 1
	fi
}

mdev_type_of() {	# UUID
	basename "$(readlink "$MDEVS/$1/mdev_type")"
}

# What the file declares is there, reserved, and can be allocated
declared_present() {
	local id

	udevadm settle -t 30
	echo "# types: $(vf_type "$VF1") $(vf_type "$VF2") $(mdev_type_of "$U1") $(mdev_type_of "$U2")"
	[ "$(vf_type "$VF1")" = 1156 ] && [ "$(vf_type "$VF2")" = 1156 ] &&
	[ "$(mdev_type_of "$U1")" = mtty-2 ] && [ "$(mdev_type_of "$U2")" = mtty-1 ] ||
		return 1
	nl_dev_has "$VF1" state=reserved driver=nvidia &&
	nl_dev_has "$VF2" state=reserved driver=nvidia &&
	nl_dev_has "$PF" state=blocked driver=nvidia || return 1
	ynl --do mdev-get --json "{\"uuid\": \"$U1\"}" >/dev/null &&
	ynl --do mdev-get --json "{\"uuid\": \"$U2\"}" >/dev/null || return 1
	gpuctl -j alloc add owner "$VM" dev "$VF1" dev "$VF2" vgpu "$U1" vgpu "$U2" \
		>"$TMP/a" || return 1
	cat "$TMP/a"
	id=$(jq '.allocations[0].id' "$TMP/a") || return 1
	nl_alloc_has "$id" gpus=4 || return 1
	gpuctl alloc del "$id" &&
	# named, not made or typed for it: they stay
	[ -e "$MDEVS/$U1" ] && [ "$(vf_type "$VF1")" = 1156 ] || return 1
	# applying the file again changes nothing
	gpuctl -j apply "$CONF" >"$TMP/again" || return 1
	cat "$TMP/again"
	json_check '.rules == [] and .vfs == [] and .vf_types == [] and .vgpus == []' \
		"$TMP/again"
}

check_first_boot() {
	[ -f "$SAMPLES/mtty.ko" ] || { echo "no $SAMPLES/mtty.ko"; return 1; }
	shutdown || return 1
	boot && declared_present
}

check_reboot() {
	shutdown || return 1
	[ ! -e "$MDEVS/$U1" ] && [ ! -e "$SYS_PCI/$VF1" ] || return 1
	boot && declared_present
}

# No ynl_start: its process would keep the family id of the first
# module, and gpuctl is loaded again at each boot.
ktap_header
ktap_plan 2
ktap_run_stage "first boot: VF count, VF types, late mdevs; allocatable" check_first_boot
ktap_run_stage "after a reboot: the same vGPUs back, allocatable" check_reboot
ktap_finished
