#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# Hot-unplug of an allocated GPU, through QMP and the independent client
# gpuctl-nl: a bochs-display plugged at a reserved address and allocated,
# then unplugged with device_del. The allocation must turn "lost", name
# the address in its state-reason and announce it with alloc-change-ntf;
# it keeps listing the device, which dev-get no longer knows (ENODEV).
# alloc-del then ends it. Then the same with the GPU on gpuctl-vfio-pci
# and open by a VFIO user (vfio_open): the removal waits until the user
# lets go, and the close is announced before the allocation turns lost. Nothing is left dangling:
# the module's reference count is back where it was, the module unloads
# and the kernel log has no warning.
#
# Uses the empty hot-plug port hp4 (00:1d.0) of the "full" topology
# (topologies/full), which no other test uses. QEMU 7.2 takes a display
# type only once per port and boot, so the second GPU is a secondary-vga
# after the first, a bochs-display.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

set -o pipefail

SYS_PCI=/sys/bus/pci/devices
TMP=$(mktemp -d /tmp/test_alloc_hotplug.XXXXXX)
HP_PORT=hp4
HP_PORT_ADDR=0000:00:1d.0
QDEV=allocgpu
QDEV2=allocgpu2
OWNER=7a1c5e93-2d4b-4f6a-8b0c-9d8e7f6a5b4c
KMSG_MARK="test_alloc_hotplug.sh: start ($$ $RANDOM)"
PLUGGED=
HP_ADDR=
REF0=

cleanup() {
	lib_cleanup
	[ -n "$PLUGGED" ] && qmp device_del "{\"id\": \"$PLUGGED\"}" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

# plug QEMU_DRIVER ID [VFIO_DRIVER]: a GPU at a reserved address, so it
# comes up on VFIO_DRIVER (vfio-pci by default).
plug() {
	local bus drv=${3:-vfio-pci}

	bus=$(<"$SYS_PCI/$HP_PORT_ADDR/secondary_bus_number") || return 1
	HP_ADDR=$(printf '0000:%02x:00.0' "$bus")
	[ ! -e "$SYS_PCI/$HP_ADDR" ] || { echo "$HP_ADDR exists already"; return 1; }
	nl_rule_new "$HP_ADDR" driver "$drv" || return 1
	qmp device_add "{\"driver\": \"$1\", \"id\": \"$2\",
		\"bus\": \"$HP_PORT\", \"addr\": \"0.0\"}" || return 1
	PLUGGED=$2
	wait_for_path 30 "$SYS_PCI/$HP_ADDR" || return 1
	expect_pci_driver "$HP_ADDR" "$drv" 60 || return 1
	nl_dev_has "$HP_ADDR" reserved=1 state=reserved "rule=$RULE"
}

check_plug() {
	REF0=$(gpuctl_refcnt)
	plug bochs-display "$QDEV"
}

check_alloc() {
	nl_alloc_new owner "$OWNER" device "$HP_ADDR" || return 1
	nl_alloc_has "$ALLOC" state=idle "devices=$HP_ADDR" || return 1
	nl_dev_has "$HP_ADDR" "allocation=$ALLOC"
}

check_unplug() {
	nlmon_mark
	# QEMU 7.2 never reports a display unplugged (topologies/full): the
	# guest losing it is what counts
	qmp device_del "{\"id\": \"$PLUGGED\"}" || return 1
	wait_for_no_path 30 "$SYS_PCI/$HP_ADDR" || return 1
	PLUGGED=
	nlmon_wait "^dev-del-ntf address=$HP_ADDR( |\$)"
}

check_lost() {
	local line reason

	nlmon_wait "^alloc-change-ntf id=$ALLOC .*state=lost( |\$)" || return 1
	line=$(gpuctl-nl alloc-get "$ALLOC") || return 1
	echo "$line"
	nl_alloc_has "$ALLOC" state=lost "devices=$HP_ADDR" || return 1
	reason=${line#* state_reason=}
	[ "$reason" != "$line" ] || { echo "no state_reason"; return 1; }
	case $reason in
	*"$HP_ADDR"*) ;;
	*) echo "state_reason '$reason' does not name $HP_ADDR"; return 1 ;;
	esac
	nlmon_since_mark | grep -E "^alloc-change-ntf id=$ALLOC .*state_reason=.*$HP_ADDR" ||
		{ echo "alloc-change-ntf without the reason"; return 1; }
}

check_enodev() {
	if gpuctl-nl dev-get "$HP_ADDR" >"$TMP/out" 2>"$TMP/err"; then
		cat "$TMP/out"
		echo "dev-get $HP_ADDR succeeded"
		return 1
	fi
	cat "$TMP/err"
	grep -q 'No such device (errno 19)' "$TMP/err"
}

# The allocation still holds one module reference; alloc-del drops it.
check_del() {
	local r

	nlmon_mark
	nl_alloc_del "$ALLOC" || return 1
	nlmon_wait "^alloc-del-ntf id=$ALLOC .*end=deleted( |\$)" || return 1
	gpuctl-nl alloc-get "$ALLOC" 2>/dev/null && return 1
	r=$(gpuctl_refcnt)
	[ "$r" = "$REF0" ] || { echo "module refcnt $r, want $REF0"; return 1; }
	nl_rule_del "$RULE"
}

# On gpuctl-vfio-pci, where gpuctl sees the holder and its close.
check_plug_open() {
	plug secondary-vga "$QDEV2" gpuctl-vfio-pci || return 1
	nl_alloc_new owner "$OWNER" device "$HP_ADDR" || return 1
	modprobe vfio_iommu_type1 || return 1
	nlmon_mark
	vfio_open_start "$HP_ADDR" || return 1
	nlmon_wait "^alloc-change-ntf id=$ALLOC .*state=running( |\$)"
}

# vfio-pci-core's remove asks the user to let go (vfio_open registers no
# request channel, so the kernel says it waits) and blocks until it does.
check_unplug_open() {
	local req="$HP_ADDR: No device request channel registered"

	nlmon_mark
	qmp device_del "{\"id\": \"$PLUGGED\"}" || return 1
	wait_for 30 sh -c "dmesg | grep -q '$req'" || return 1
	dmesg | grep -m1 "$req"
	[ -e "$SYS_PCI/$HP_ADDR" ] || { echo "$HP_ADDR gone while open"; return 1; }
	kill -0 "$VFIO_PID" || return 1
	# lost comes once the device is gone, not before
	! nlmon_since_mark | grep -E "^alloc-change-ntf id=$ALLOC .*state=lost"
}

check_unplug_closed() {
	local pid=$VFIO_PID

	vfio_open_stop
	wait_for_no_path 30 "$SYS_PCI/$HP_ADDR" || return 1
	PLUGGED=
	nlmon_wait "^vfio-close-ntf address=$HP_ADDR .*holder_pid=$pid( |\$)" &&
	nlmon_wait "^dev-del-ntf address=$HP_ADDR( |\$)" &&
	nlmon_wait "^alloc-change-ntf id=$ALLOC .*state=lost( |\$)" || return 1
	nl_alloc_has "$ALLOC" state=lost "devices=$HP_ADDR" || return 1
	gpuctl-nl alloc-get "$ALLOC" | grep "state_reason=.*$HP_ADDR" || return 1
	check_enodev
}

check_clean() {
	local bad='WARNING:|BUG:|Oops|refcount_t|use-after-free|Call Trace|general protection'

	nlmon_stop
	gpuctl-nl alloc-dump >"$TMP/left" && gpuctl-nl rule-dump >>"$TMP/left" || return 1
	[ ! -s "$TMP/left" ] || { cat "$TMP/left"; return 1; }
	echo "# rmmod gpuctl"
	rmmod gpuctl || return 1
	dmesg | sed -n "\|$KMSG_MARK|,\$p" >"$TMP/kmsg"
	if grep -E "$bad" "$TMP/kmsg"; then
		return 1
	fi
	echo "$(wc -l <"$TMP/kmsg") kernel log lines since the start, none bad"
}

ktap_header
ktap_plan 11
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
[ -c "$GPUCTL_QMP" ] || { ktap_info "no QMP device"; exit 1; }
echo "$KMSG_MARK" >/dev/kmsg
nlmon_start || ktap_info "gpuctl-nl monitor did not start"

ktap_run_stage "hot-plug at a reserved address on $HP_PORT: vfio-pci" check_plug
ktap_run_stage "alloc-new of the hot-plugged GPU" check_alloc
ktap_run_stage "device_del: the guest loses it, dev-del-ntf" check_unplug
ktap_run_stage "allocation lost, state_reason names the address, alloc-change-ntf" \
	check_lost
ktap_run_stage "dev-get of the removed device: ENODEV" check_enodev
ktap_run_stage "alloc-del ends it, module reference dropped" check_del
ktap_run_stage "second GPU (secondary-vga) on $HP_PORT on gpuctl-vfio-pci, allocated, open" \
	check_plug_open
ktap_run_stage "device_del while open: the removal waits for the VFIO user" check_unplug_open
ktap_run_stage "the user closes: vfio-close-ntf, device gone, allocation lost" \
	check_unplug_closed
ktap_run_stage "alloc-del ends it, module reference dropped" check_del
ktap_run_stage "nothing left, rmmod succeeds, kernel log clean" check_clean

ktap_finished
