#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# Reservation of whole IOMMU groups and of hot-plugged GPUs, against sysfs,
# through the independent client gpuctl-nl: a companion is taken with its
# GPU, a foreign member of the group only with force, a bridge never; a GPU
# hot-plugged at a reserved address comes up on vfio-pci and never meets
# its host driver. Every change must be announced on the monitor group.
#
# Devices of the "full" topology (topologies/full): 07:00.0 bochs + 07:00.1
# HDA in one group, 08:00.0 bridge + 09:01.0 bochs + 09:02.0 e1000 in one
# group, and the empty hot-plug port hp3 (00:1c.0), which no other test
# uses.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

SYS_PCI=/sys/bus/pci/devices
TMP=$(mktemp -d /tmp/test_reserve_groups.XXXXXX)
PLUGGED=
MF_GPU=0000:07:00.0
MF_HDA=0000:07:00.1
PB_BRIDGE=0000:08:00.0
PB_GPU=0000:09:01.0
PB_NIC=0000:09:02.0
HP_PORT=hp3
HP_PORT_ADDR=0000:00:1c.0

cleanup() {
	nlmon_stop
	nl_rules_cleanup
	[ -n "$PLUGGED" ] && qmp device_del "{\"id\": \"$PLUGGED\"}" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

MF_SPLIT=0

# The boot topology puts the HDA in its GPU's group; a function rescanned
# alone since gets a group of its own (test_golden.sh does that, and
# run_tests.sh runs it last).
check_companion() {
	local g

	g=$(pci_group_of "$MF_GPU") || return 1
	if [ "$(pci_group_of "$MF_HDA")" != "$g" ]; then
		echo "$MF_HDA is not in $MF_GPU's group $g: rescanned since boot"
		MF_SPLIT=1
		return 1
	fi
	nlmon_mark
	nl_rule_new "$MF_GPU" take || return 1
	nl_rule_has_dev "$MF_GPU" && nl_rule_has_dev "$MF_HDA" || return 1
	expect_pci_driver "$MF_GPU" vfio-pci 0 && expect_pci_driver "$MF_HDA" vfio-pci 0 || return 1
	nl_dev_has "$MF_HDA" reserved=1 state=reserved "rule=$RULE" || return 1
	nl_group_has "$g" viable=1 || return 1
	nlmon_action "$MF_GPU" taken && nlmon_action "$MF_HDA" taken
}

check_companion_release() {
	[ "$MF_SPLIT" = 0 ] || return 1
	nlmon_mark
	nl_rule_del "$RULE" || return 1
	expect_pci_driver "$MF_GPU" bochs-drm 30 && expect_pci_driver "$MF_HDA" snd_hda_intel 30 ||
		return 1
	expect_pci_override "$MF_GPU" "" && expect_pci_override "$MF_HDA" "" || return 1
	nlmon_action "$MF_GPU" released && nlmon_action "$MF_HDA" released
}

BRIDGE_DRV=
check_foreign_left() {
	local g line

	BRIDGE_DRV=$(pci_driver_of "$PB_BRIDGE")
	nlmon_mark
	nl_rule_new "$PB_GPU" take || return 1
	expect_pci_driver "$PB_GPU" vfio-pci 0 || return 1
	# the NIC of another slot is not touched without force
	expect_pci_driver "$PB_NIC" e1000 0 && expect_pci_override "$PB_NIC" "" || return 1
	nl_rule_lists "$PB_NIC" && { echo "rule lists the foreign $PB_NIC"; return 1; }
	grep -q -E " warning=.*$PB_NIC" "$TMP/rule" ||
		{ echo "no warning naming $PB_NIC"; return 1; }
	nl_dev_lacks "$PB_NIC" reserved=1 || return 1
	g=$(pci_group_of "$PB_GPU") || return 1
	line=$(gpuctl-nl group-get "$g") || return 1
	echo "$line"
	case $line in
	*" viable=0 "*"reason="*"$PB_NIC"*e1000*) ;;
	*) echo "group $g not reported blocked by $PB_NIC on e1000"; return 1 ;;
	esac
	expect_pci_driver "$PB_BRIDGE" "$BRIDGE_DRV" 0 && expect_pci_override "$PB_BRIDGE" "" ||
		return 1
	nlmon_action "$PB_GPU" taken || return 1
	! grep -E "^dev-change-ntf address=$PB_NIC .*action=" < <(nlmon_since_mark) ||
		{ echo "gpuctl acted on $PB_NIC"; return 1; }
	nl_rule_del "$RULE" && expect_pci_driver "$PB_GPU" bochs-drm 30
}

check_force() {
	local g

	nlmon_mark
	nl_rule_new "$PB_GPU" take force || return 1
	grep -q ' force=1' "$TMP/rule" || { echo "reply without force"; return 1; }
	nl_rule_has_dev "$PB_GPU" && nl_rule_has_dev "$PB_NIC" || return 1
	nl_rule_lists "$PB_BRIDGE" && { echo "rule lists the bridge"; return 1; }
	expect_pci_driver "$PB_GPU" vfio-pci 0 && expect_pci_driver "$PB_NIC" vfio-pci 0 || return 1
	expect_pci_driver "$PB_BRIDGE" "$BRIDGE_DRV" 0 && expect_pci_override "$PB_BRIDGE" "" ||
		return 1
	g=$(pci_group_of "$PB_GPU") || return 1
	nl_group_has "$g" viable=1 || return 1
	nlmon_action "$PB_NIC" taken || return 1
	nlmon_mark
	nl_rule_del "$RULE" || return 1
	expect_pci_driver "$PB_GPU" bochs-drm 30 && expect_pci_driver "$PB_NIC" e1000 30 || return 1
	expect_pci_override "$PB_NIC" "" || return 1
	nlmon_action "$PB_NIC" released && nlmon_action "$PB_GPU" released
}

HP_ADDR=
check_hotplug() {
	local bus

	bus=$(<"$SYS_PCI/$HP_PORT_ADDR/secondary_bus_number") || return 1
	HP_ADDR=$(printf '0000:%02x:00.0' "$bus")
	[ ! -e "$SYS_PCI/$HP_ADDR" ] || { echo "$HP_ADDR exists already"; return 1; }
	nl_rule_new "$HP_ADDR" || return 1
	nlmon_mark
	qmp device_add "{\"driver\": \"bochs-display\", \"id\": \"rsvgpu\",
		\"bus\": \"$HP_PORT\", \"addr\": \"0.0\"}" || return 1
	PLUGGED=rsvgpu
	wait_for_path 30 "$SYS_PCI/$HP_ADDR" || return 1
	expect_pci_driver "$HP_ADDR" vfio-pci 60 || return 1
	expect_pci_override "$HP_ADDR" vfio-pci || return 1
	nlmon_wait "^dev-add-ntf address=$HP_ADDR " || return 1
	# vfio-pci, loaded by now, may bind it in the kernel's own probe
	nlmon_action "$HP_ADDR" '(claimed|bound)' || return 1
	nl_dev_has "$HP_ADDR" reserved=1 state=reserved "rule=$RULE" || return 1
	# its host driver never had it
	! grep -E "^dev-change-ntf address=$HP_ADDR .*driver=bochs-drm" < <(nlmon_since_mark) ||
		{ echo "bochs-drm bound $HP_ADDR"; return 1; }
}

check_hotplug_release() {
	[ -n "$HP_ADDR" ] || return 1
	nlmon_mark
	nl_rule_del "$RULE" || return 1
	expect_pci_driver "$HP_ADDR" bochs-drm 60 || return 1
	nlmon_action "$HP_ADDR" released || return 1
	# QEMU 7.2 may miss the guest's eject of a display (test_hotplug.sh)
	qmp device_del "{\"id\": \"$PLUGGED\"}" || return 1
	wait_for_no_path 30 "$SYS_PCI/$HP_ADDR" || return 1
	PLUGGED=
}

check_no_rules() {
	gpuctl-nl rule-dump >"$TMP/rules" || return 1
	cat "$TMP/rules"
	[ ! -s "$TMP/rules" ]
}

ktap_header
ktap_plan 7
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
[ -c "$GPUCTL_QMP" ] || { ktap_info "no QMP device"; exit 1; }
nlmon_start || ktap_info "gpuctl-nl monitor did not start"

ktap_run_stage "companion: the HDA is taken with its GPU" check_companion
ktap_run_stage "companion: rule-del gives GPU and HDA back to their drivers" \
	check_companion_release
ktap_run_stage "foreign: e1000 left alone, group not viable, rule warns" \
	check_foreign_left
ktap_run_stage "foreign: force takes the e1000 too, never the bridge" check_force
ktap_run_stage "hot-plug: a reserved address comes up on vfio-pci, never bochs-drm" \
	check_hotplug
ktap_run_stage "hot-plug: rule-del gives it to bochs-drm, device_del" check_hotplug_release
ktap_run_stage "no rule left behind" check_no_rules

gpuctl_unload
ktap_finished
