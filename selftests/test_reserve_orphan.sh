#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# A reserved companion whose GPUs leave the bus while it stays (a sysfs
# remove of the GPU functions alone): gpuctl stops tracking it, but it is
# still on vfio-pci with gpuctl's driver_override. It must stay reserved
# while its rule exists, and go back to its host driver when the rule is
# deleted, across a module reload too (the orphan goes over with its
# rule, also to a rule modprobe.d gave the new module, with the same id).
# Before gpuctl kept such orphans, rule-del left it on vfio-pci for good
# (found by stress_rule); before the reload carried them, it did so after
# a reload.
#
# Devices of the "full" topology: 0f:00.0 and 0f:00.1, two GPU functions on
# bochs-drm, and 0f:00.2, their HD audio on snd_hda_intel, in one IOMMU
# group. The GPUs are removed and rescanned, which may regroup the slot, so
# this test runs late (run_tests.sh's shell_late).

# Stage functions run through ktap_run_stage or a trap; json_check's jq
# filters name jq variables in single quotes.
# shellcheck disable=SC2317,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

SYS_PCI=/sys/bus/pci/devices
TMP=$(mktemp -d /tmp/test_reserve_orphan.XXXXXX)
GPU=0000:0f:00.0
GPU2=0000:0f:00.1
HDA=0000:0f:00.2

cleanup() {
	nl_rules_cleanup
	# the next program gets the module as the runner loads it
	if [ -n "$(cat /sys/module/gpuctl/parameters/reserve 2>/dev/null)" ] &&
	   [ "$(cat /sys/module/gpuctl/parameters/reserve)" != "(null)" ]; then
		rmmod gpuctl && gpuctl_load
	fi
	echo 1 >/sys/bus/pci/rescan
	rm -rf "$TMP"
}
trap cleanup EXIT

check_start() {
	expect_pci_driver "$GPU" bochs-drm 0 &&
	expect_pci_driver "$GPU2" bochs-drm 0 &&
	expect_pci_driver "$HDA" snd_hda_intel 0 &&
	[ "$(pci_group_of "$GPU")" = "$(pci_group_of "$HDA")" ] &&
	nl_dev_has "$HDA" role=companion
}

# "take" moves the GPU and its HD audio from their host drivers; the other
# GPU has no rule and stays on bochs-drm.
check_reserve() {
	nl_rule_new "$GPU" take || return 1
	nl_rule_has_dev "$HDA" || return 1
	expect_pci_driver "$GPU" vfio-pci &&
	expect_pci_driver "$HDA" vfio-pci &&
	expect_pci_override "$HDA" vfio-pci &&
	nl_dev_has "$HDA" reserved=1 state=reserved "rule=$RULE"
}

# With both GPUs gone the HD audio is no longer tracked, but its rule
# still reserves it: it stays on vfio-pci.
check_gpus_removed() {
	echo 1 >"$SYS_PCI/$GPU2/remove" || return 1
	echo 1 >"$SYS_PCI/$GPU/remove" || return 1
	wait_for_no_path 15 "$SYS_PCI/$GPU" || return 1
	cmd_fails 'No such device \(errno 19\)' gpuctl-nl dev-get "$HDA" || return 1
	sleep 1
	expect_pci_driver "$HDA" vfio-pci 0 &&
	expect_pci_override "$HDA" vfio-pci
}

# gpuctl module reload carries the orphan over with its rule: the new
# module lists it (gpuctl-nl and the tool) and keeps it on vfio-pci.
check_reload() {
	run_captured "$TMP/out" "$TMP/err" gpuctl module reload ko "$GPUCTL_KO" ||
		return 1
	gpuctl-nl rule-get "$RULE" >"$TMP/rule" || return 1
	cat "$TMP/rule"
	grep -qx "rule id=$RULE match=$GPU driver=vfio-pci take=1 source=netlink devices= orphans=$HDA" \
		"$TMP/rule" || return 1
	gpuctl -j reserve show >"$TMP/json" || return 1
	json_check --arg h "$HDA" --argjson id "$RULE" \
		'[.rules[] | select(.id == $id) | .orphans] == [[$h]]' "$TMP/json" ||
		return 1
	gpuctl reserve show "$RULE" >"$TMP/text" || return 1
	grep -qx "  orphans: $HDA" "$TMP/text" || return 1
	expect_pci_driver "$HDA" vfio-pci 0 && expect_pci_override "$HDA" vfio-pci
}

# Through an unload the orphan stays on vfio-pci, untracked. A rule that
# modprobe.d gives the next module keeps its id when "gpuctl module reload"
# passes it (rule_ids), and rule-new with that id, its match and the orphan
# hands the orphan to it: what the reload does on modprobe's path (YNL
# CLI). Orphans without an id, or not an address, are refused.
check_param_rule() {
	local next

	next=$(cat /sys/module/gpuctl/parameters/next_rule_id) || return 1
	gpuctl_unload || return 1
	expect_pci_driver "$HDA" vfio-pci 0 || return 1
	gpuctl_load "reserve=$GPU" "rule_ids=abcd:*=7,$GPU=$RULE" \
		"next_rule_id=$next" || return 1
	gpuctl-nl rule-get "$RULE" >"$TMP/rule" || return 1
	cat "$TMP/rule"
	grep -qx "rule id=$RULE match=$GPU driver=vfio-pci source=param devices=" \
		"$TMP/rule" || return 1
	ynl_fails rule-new "{\"match\": \"$GPU\", \"orphan\": [\"$HDA\"]}" &&
		grep -q 'error: -22' "$TMP/err" &&
		grep -q "orphans are carried over with the id of their rule" "$TMP/err" ||
		return 1
	ynl_fails rule-new "{\"id\": $RULE, \"match\": \"$GPU\", \"orphan\": [\"10de:*\"]}" &&
		grep -q 'error: -22' "$TMP/err" &&
		grep -q "an orphan is a PCI address" "$TMP/err" || return 1
	ynl --do rule-new --json \
		"{\"id\": $RULE, \"match\": \"$GPU\", \"orphan\": [\"$HDA\"]}" \
		>"$TMP/new.json" || return 1
	cat "$TMP/new.json"
	json_check --arg h "$HDA" --argjson id "$RULE" \
		'.id == $id and .source == "param" and .orphan == [$h]' \
		"$TMP/new.json" || return 1
	[ "$(gpuctl-nl rule-dump | grep -c '^rule ')" = 1 ]
}

# Deleting the rule gives it back to the host, override cleared.
check_released() {
	nl_rule_del "$RULE" || return 1
	expect_pci_driver "$HDA" snd_hda_intel &&
	expect_pci_override "$HDA" "" || return 1
	dmesg >"$TMP/dmesg" || return 1
	grep -q "$HDA: released: its rule went while its GPU was away" "$TMP/dmesg"
}

check_rescan() {
	echo 1 >/sys/bus/pci/rescan || return 1
	wait_for_path 15 "$SYS_PCI/$GPU" && wait_for_path 15 "$SYS_PCI/$GPU2" &&
	nl_dev_wait 15 nl_dev_has "$GPU" role=gpu &&
	nl_dev_wait 15 nl_dev_has "$GPU2" role=gpu &&
	expect_pci_driver "$HDA" snd_hda_intel 0
}

ktap_header
ktap_plan 7
ktap_run_stage "0f:00.0, 0f:00.1 on bochs-drm, 0f:00.2 their companion" check_start
ktap_run_stage "reserve $GPU take: it and its HD audio on vfio-pci" check_reserve
ktap_run_stage "both GPUs removed: the HD audio untracked, still reserved" check_gpus_removed
ktap_run_stage "module reload: the orphan carried over with its rule" check_reload
ktap_run_stage "unload; a modprobe.d rule keeps its id and is handed the orphan" \
	check_param_rule
ktap_run_stage "rule-del: the untracked HD audio back on snd_hda_intel" check_released
ktap_run_stage "rescan: the GPUs back and tracked" check_rescan
ktap_finished
