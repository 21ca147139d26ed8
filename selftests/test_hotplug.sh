#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# PCI hot-plug through QEMU's QMP monitor: a stand-in GPU plugged into the
# empty root port "hp1" must be announced with dev-add-ntf, listed with the
# facts sysfs gives, and announced with dev-del-ntf when it goes. Then a
# GPU with an HDMI-audio companion plugged as one multifunction slot.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments; json_check's jq filters name jq variables in
# single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

SYS_PCI=/sys/bus/pci/devices
TMP=$(mktemp -d /tmp/test_hotplug.XXXXXX)
MON_PID=
PLUGGED=()

cleanup() {
	local id

	[ -n "$MON_PID" ] && kill "$MON_PID" 2>/dev/null
	for id in "${PLUGGED[@]}"; do
		qmp_device_del "$id" 10 >/dev/null 2>&1
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

# Each hot-plug uses a port of its own: QEMU 7.2 names a display's RAM
# block after its slot and aborts when a second one is plugged into a slot
# it has not released (it often misses the guest's eject). hp0 belongs to
# selftests/hotplug.c; this test takes hp1 and hp2.
qmp_device_add() {	# ID DRIVER PORT ADDR [EXTRA_JSON_MEMBERS]
	qmp device_add "{\"driver\": \"$2\", \"id\": \"$1\", \"bus\": \"$3\",
		\"addr\": \"$4\"${5:+, $5}}"
}

pci_list() {
	ls "$SYS_PCI"
}

# Wait up to 30 s (pciehp removes a device 5 s after the button press)
# for the PCI devices to differ from the list in FILE; print the new ones.
wait_new_devs() {	# FILE COUNT
	local _

	for _ in $(seq 150); do
		pci_list | comm -13 "$1" - >"$TMP/new"
		[ "$(wc -l <"$TMP/new")" -ge "$2" ] && { cat "$TMP/new"; return 0; }
		sleep 0.2
	done
	cat "$TMP/new"
	return 1
}

wait_gone() {	# ADDR...
	local _ a left

	for _ in $(seq 150); do
		left=0
		for a in "$@"; do
			[ -e "$SYS_PCI/$a" ] && left=1
		done
		[ "$left" -eq 0 ] && return 0
		sleep 0.2
	done
	return 1
}

# Up to 60 s: a hot-added device may first need its driver module loaded
# (the noiommu topology has no HDA at boot), which is slow under TCG.
wait_bound() {	# ADDR
	local _

	for _ in $(seq 300); do
		[ -e "$SYS_PCI/$1/driver" ] && return 0
		sleep 0.2
	done
	echo "$1 has no driver after 60 s"
	return 1
}

# Wait up to 10 s for an event NAME about ADDR in the monitor output,
# optionally also satisfying the jq condition COND on .msg.
wait_event() {	# NAME ADDR [COND]
	local _

	for _ in $(seq 50); do
		# jq only once the address shows up: each start is slow in TCG
		grep -q -F "\"$2\"" "$TMP/mon" &&
		json_check --slurp --arg n "$1" --arg a "$2" "any(.[]; .name == \$n and
			.msg.address == \$a and (.msg | ${3:-true}))" \
			"$TMP/mon" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "no $1 for $2${3:+ with $3} in:"
	cat "$TMP/mon"
	return 1
}

# The monitor runs across stages, so it is started outside them.
start_monitor() {
	gpuctl -j monitor >"$TMP/mon" 2>"$TMP/mon.err" &
	MON_PID=$!
	wait_monitor_subscribed "$MON_PID" && return 0
	kill "$MON_PID"
	MON_PID=
	return 1
}

stop_monitor() {
	local rc

	kill -TERM "$MON_PID"
	wait "$MON_PID"
	rc=$?
	MON_PID=
	return "$rc"
}

# The tool's view of ADDR agrees with sysfs on what hot-plug sets up.
dev_matches_sysfs() {	# ADDR
	local a=$1 d=$SYS_PCI/$1 drv=null grp=null

	[ -e "$d/driver" ] && drv="\"$(basename "$(readlink "$d/driver")")\""
	[ -e "$d/iommu_group" ] && grp=$(basename "$(readlink "$d/iommu_group")")
	gpuctl -j dev show "$a" >"$TMP/dev" || return 1
	json_check --argjson drv "$drv" --argjson grp "$grp" \
		--arg ven "$(<"$d/vendor")" --arg cls "$(<"$d/class")" '
		.devices | length == 1 and (.[0] |
		.driver == $drv and .iommu_group == $grp and
		(.vendor_id | tostring | ltrimstr("0x")) == ($ven | ltrimstr("0x")) and
		(.class | tostring | ltrimstr("0x")) == ($cls | ltrimstr("0x")))' \
		"$TMP/dev"
}

GPU=

check_add_gpu() {
	pci_list >"$TMP/before"
	[ -n "$MON_PID" ] || return 1
	qmp_device_add hpgpu bochs-display hp1 0.0 || return 1
	PLUGGED+=(hpgpu)
	GPU=$(wait_new_devs "$TMP/before" 1) || return 1
	echo "# plugged $GPU"
	wait_event dev-add-ntf "$GPU" '.role == "gpu"'
}

check_added_bound() {
	[ -n "$GPU" ] && wait_bound "$GPU" &&
	[ "$(basename "$(readlink "$SYS_PCI/$GPU/driver")")" = bochs-drm ] &&
	wait_event dev-change-ntf "$GPU" '.driver == "bochs-drm"' &&
	dev_matches_sysfs "$GPU"
}

check_del_gpu() {
	[ -n "$GPU" ] || return 1
	# QEMU 7.2 never reports a display deleted (topologies/full), so its
	# DEVICE_DELETED is not awaited; the guest's view is what counts here.
	qmp device_del '{"id": "hpgpu"}' || return 1
	wait_gone "$GPU" || return 1
	PLUGGED=()
	wait_event dev-del-ntf "$GPU"
}

check_gone() {
	local rc=0

	[ -n "$GPU" ] || return 1
	gpuctl -j dev show | json_check --arg a "$GPU" \
		'.devices | length > 0 and all(.address != $a)' || return 1
	cmd_fails "No such device" gpuctl dev show "$GPU" || rc=1
	stop_monitor || { echo "monitor exit status $? on SIGTERM"; return 1; }
	return "$rc"
}

# The audio function is the GPU's companion exactly when the kernel put it
# into the GPU's IOMMU group. Without an IOMMU it is in none; with one, a
# function hot-added after function 0 may get a group of its own
# (pci_scan_slot() marks it multifunction only after device_add()).
hda_tracked() {
	local g h

	g=$(readlink "$SYS_PCI/$GPU/iommu_group") || return 1
	h=$(readlink "$SYS_PCI/$HDA/iommu_group") || return 1
	echo "# GPU group ${g##*/}, HDA group ${h##*/}"
	[ "$g" = "$h" ]
}

# QEMU plugs a multifunction slot when function 0 arrives, so the audio
# function goes first.
HDA=
check_add_multifunction() {
	local new

	# The guest's module autoloading is not under test: with no HDA at
	# boot (noiommu) snd_hda_intel would be loaded by the hot-plug uevent,
	# which under TCG did not always happen within the wait.
	modprobe snd_hda_intel || return 1
	pci_list >"$TMP/before"
	[ -n "$MON_PID" ] || return 1
	if ! qmp_device_add hphda ich9-intel-hda hp2 0.1 >"$TMP/qmp" 2>&1; then
		cat "$TMP/qmp"
		return 1
	fi
	PLUGGED+=(hphda)
	qmp_device_add hpgpu2 bochs-display hp2 0.0 '"multifunction": "on"' || return 1
	PLUGGED+=(hpgpu2)
	new=$(wait_new_devs "$TMP/before" 2) || return 1
	GPU=$(grep '\.0$' <<<"$new")
	HDA=$(grep '\.1$' <<<"$new")
	echo "# plugged $GPU $HDA"
	wait_event dev-add-ntf "$GPU" '.role == "gpu"' || return 1
	if hda_tracked; then
		wait_event dev-add-ntf "$HDA" '.role == "companion"'
	else
		# give a wrong announcement the time to show up
		sleep 2
		json_check --slurp --arg a "$HDA" 'all(.[]; .msg.address != $a)' "$TMP/mon"
	fi
}

check_multifunction_sysfs() {
	[ -n "$HDA" ] && wait_bound "$GPU" && wait_bound "$HDA" || return 1
	# sysfs shows the driver link before the driver's probe ran, gpuctl
	# once it succeeded (BOUND_DRIVER): compare after gpuctl announced it.
	wait_event dev-change-ntf "$GPU" '.driver != null' || return 1
	dev_matches_sysfs "$GPU" || return 1
	if hda_tracked; then
		wait_event dev-change-ntf "$HDA" '.driver != null' || return 1
		dev_matches_sysfs "$HDA"
	else
		gpuctl -j dev show | json_check --arg a "$HDA" \
			'.devices | length > 0 and all(.address != $a)'
	fi
}

check_del_multifunction() {
	local tracked=0

	[ -n "$HDA" ] || return 1
	hda_tracked && tracked=1
	# unplugging function 0 takes the whole slot
	qmp device_del '{"id": "hpgpu2"}' || return 1
	wait_gone "$GPU" "$HDA" || return 1
	PLUGGED=()
	wait_event dev-del-ntf "$GPU" || return 1
	if [ "$tracked" = 1 ]; then
		wait_event dev-del-ntf "$HDA" || return 1
	fi
	stop_monitor
}

ktap_header
ktap_plan 7
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
[ -c "$GPUCTL_QMP" ] || { ktap_info "no QMP device"; exit 1; }

start_monitor || ktap_info "gpuctl monitor did not start"
ktap_run_stage "device_add bochs-display: dev-add-ntf, role gpu" check_add_gpu
ktap_run_stage "hot-added GPU bound to bochs-drm, tool agrees with sysfs" check_added_bound
ktap_run_stage "device_del: dev-del-ntf and the device is gone" check_del_gpu
ktap_run_stage "removed GPU not listed, dev show ADDR exits 2" check_gone
start_monitor || ktap_info "gpuctl monitor did not start"
ktap_run_stage "multifunction GPU + HDA hot-add: both announced" check_add_multifunction
ktap_run_stage "multifunction: both bound, tool agrees with sysfs" check_multifunction_sysfs
ktap_run_stage "multifunction device_del: both announced gone" check_del_multifunction

gpuctl_unload
ktap_finished
