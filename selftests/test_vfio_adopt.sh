#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# A VM that was already running when gpuctl loaded (first install on a busy
# host, or a reload): the first look at load finds the device's group in
# VFIO use, shows it open with an unknown holder (pid 0,
# open_match=unallocated), does not count it against unloading (gpuctl
# only observes vfio-pci), lets an allocation of it start out running, and
# reports its close when the VM exits, with detach-on-stop.
#
# 01:00.0 (bochs) is moved to vfio-pci by hand, the way an operator or
# libvirt would, while gpuctl is not loaded.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

set -o pipefail

TMP=$(mktemp -d /tmp/test_vfio_adopt.XXXXXX)
GPU=0000:01:00.0
OWNER=0c7d6a3e-52b1-4f4e-8d0a-6b9e1f2a3c44
SYSDEV=/sys/bus/pci/devices/$GPU

# Gives the GPU back to bochs-drm, and gpuctl back to the tests after us.
cleanup() {
	lib_cleanup
	if [ "$(pci_driver_of "$GPU")" = vfio-pci ]; then
		echo >"$SYSDEV/driver_override"
		echo "$GPU" >/sys/bus/pci/drivers/vfio-pci/unbind
		echo "$GPU" >/sys/bus/pci/drivers_probe
	fi
	gpuctl_load >/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

check_unload() {
	gpuctl_unload
}

check_open_unseen() {
	modprobe vfio-pci && modprobe vfio_iommu_type1 || return 1
	echo vfio-pci >"$SYSDEV/driver_override"
	[ -z "$(pci_driver_of "$GPU")" ] ||
		echo "$GPU" >"$SYSDEV/driver/unbind"
	echo "$GPU" >/sys/bus/pci/drivers_probe
	expect_pci_driver "$GPU" vfio-pci || return 1
	vfio_open_start "$GPU"
}

check_adopted() {
	gpuctl_load || return 1
	nl_dev_has "$GPU" holder_pid=0 open_match=unallocated driver=vfio-pci ||
		return 1
	# Nothing is known about an opener gpuctl did not see.
	nl_dev_has_not "$GPU" holder_comm && nl_dev_has_not "$GPU" holder_uid
}

check_rmmod_allowed() {
	echo "# rmmod gpuctl"
	rmmod gpuctl || return 1
	expect_pci_driver "$GPU" vfio-pci 0 || return 1
	gpuctl_load || return 1
	nl_dev_has "$GPU" holder_pid=0 driver=vfio-pci
}

check_alloc_running() {
	nl_rule_new "$GPU" || return 1
	nl_alloc_new owner "$OWNER" device "$GPU" detach-on-stop || return 1
	grep -q " state=running" "$TMP/alloc" ||
		{ echo "allocation of an open device is not running"; return 1; }
}

check_close_detaches() {
	nlmon_start || return 1
	nlmon_mark
	# the VM exits; on vfio-pci the group, not the device fd, tells
	vfio_open_stop
	nlmon_wait "^vfio-close-ntf address=$GPU .*holder_pid=0( |\$)" &&
		nlmon_wait "^alloc-del-ntf id=$ALLOC .*end=detached( |\$)" ||
		return 1
	ALLOCS=()
	nl_dev_has_not "$GPU" holder_pid && nl_dev_has_not "$GPU" allocation
}

ktap_header
ktap_plan 6
ktap_run_stage "gpuctl unloads with nothing allocated or open" check_unload
ktap_run_stage "a VFIO user opens $GPU on vfio-pci while gpuctl is away" \
	check_open_unseen
ktap_run_stage "load: $GPU shows open with an unknown holder" check_adopted
ktap_run_stage "rmmod with the VM running: not pinned, seen again at load" \
	check_rmmod_allowed
ktap_run_stage "an allocation of the open device starts out running" \
	check_alloc_running
ktap_run_stage "the VM's exit is seen and detaches" check_close_detaches
ktap_finished
