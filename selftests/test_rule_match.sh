#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# The rule matches and the module parameter grammar that gpuctl.8
# promises, on real devices, checked against sysfs and the independent
# client gpuctl-nl:
#   VVVV:*               every GPU of a vendor (held where a host driver
#                        has one, bound to vfio-pci where none has);
#   VVVV:DDDD:SSSS:SSSS  subsystem ids, which must all match;
#   reserve=MATCH[@DRIVER][+force][+take],... at load: each part, and bad
#                        rules (and one naming the SMBus controller, which
#                        no rule may reserve) logged and skipped.
#
# Devices of the "full" topology (topologies/full): 1234:1111 bochs GPUs
# (01:00.0, 07:00.0 with its HDA 07:00.1, 09:01.0 behind a bridge with the
# e1000 09:02.0, 81:00.0), 02:00.0 vmware-svga 15ad:0405 subsystem
# 15ad:0405 and 05:00.0 ati-vga 1002:5046 subsystem 1af4:1100, both
# without a driver. qxl (03:00.0) is never matched: 6.12's qxl oopses when
# it is rebound.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

SYS_PCI=/sys/bus/pci/devices
TMP=$(mktemp -d /tmp/test_rule_match.XXXXXX)
GPU=0000:01:00.0
MF_GPU=0000:07:00.0
MF_HDA=0000:07:00.1
PB_GPU=0000:09:01.0
PB_NIC=0000:09:02.0
SVGA=0000:02:00.0
ATI=0000:05:00.0

cleanup() {
	nl_rules_cleanup
	rm -rf "$TMP"
}
trap cleanup EXIT

pci_is_gpu() {	# ADDR: class 0x03 or 0x12
	local base=$(($(<"$SYS_PCI/$1/class") >> 16))

	[ "$base" -eq $((0x03)) ] || [ "$base" -eq $((0x12)) ]
}

# The devices a rule for every GPU of VENDOR must reserve, from sysfs: the
# GPUs, and the other functions of each GPU's slot in its IOMMU group.
sysfs_vendor_devices() {	# VENDOR (hex, without 0x)
	local d a g m

	for d in "$SYS_PCI"/*; do
		a=${d##*/}
		[ "$(<"$d/vendor")" = "0x$1" ] || continue
		pci_is_gpu "$a" || continue
		echo "$a"
		g=$(pci_group_of "$a") || continue
		for m in "/sys/kernel/iommu_groups/$g/devices"/*; do
			m=${m##*/}
			[ "${m%.*}" = "${a%.*}" ] && echo "$m"
		done
	done | sort -u
}

rule_devices() {	# the devices= of the last rule reply, one per line
	sed -n 's/.* devices=\([^ ]*\).*/\1/p' "$TMP/rule" | tr , '\n' | sort
}

check_wildcard_held() {
	local a rc=0 want

	sysfs_vendor_devices 1234 >"$TMP/want"
	cat "$TMP/want"
	mapfile -t want <"$TMP/want"
	if [ "${#want[@]}" -lt 5 ] || ! grep -qx "$MF_HDA" "$TMP/want"; then
		echo "the topology lacks its 1234 GPUs"
		return 1
	fi
	pci_snapshot >"$TMP/pci.before"
	nl_rule_new '1234:*' || return 1
	grep -q '^rule id=[0-9]* match=1234:\* driver=vfio-pci source=netlink ' "$TMP/rule" ||
		return 1
	rule_devices | diff -u "$TMP/want" - || return 1
	# without take every one stays on its host driver, held, claimed for
	# vfio-pci by its override, which only a rebind would use
	for a in "${want[@]}"; do
		nl_dev_has "$a" reserved=1 state=held "rule=$RULE" || rc=1
		nl_dev_reason "$a" | grep -q "bound to $(pci_driver_of "$a")" || rc=1
		expect_pci_override "$a" vfio-pci || rc=1
	done
	nl_dev_has "$PB_NIC" state=free && nl_dev_lacks "$PB_NIC" reserved=1 || rc=1
	nl_dev_has 0000:03:00.0 state=free && nl_dev_lacks 0000:03:00.0 reserved=1 || rc=1
	pci_snapshot | cut -d' ' -f1,2 | diff -u <(cut -d' ' -f1,2 "$TMP/pci.before") - ||
		rc=1
	nl_rule_del "$RULE" || return 1
	for a in "${want[@]}"; do
		nl_dev_has "$a" state=free || rc=1
	done
	pci_snapshot | diff -u "$TMP/pci.before" - || rc=1
	return "$rc"
}

# Through the tool this time; gpuctl-nl and sysfs say what happened.
check_wildcard_binds() {
	gpuctl reserve add '15ad:*' >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err"; return 1; }
	cat "$TMP/out" "$TMP/err"
	[ ! -s "$TMP/err" ] || return 1
	gpuctl-nl rule-dump >"$TMP/rules" || return 1
	cat "$TMP/rules"
	grep -qx "rule id=[0-9]* match=15ad:\\* driver=vfio-pci source=netlink devices=$SVGA" \
		"$TMP/rules" || return 1
	RULE=$(sed -n 's/^rule id=\([0-9]*\) .*/\1/p' "$TMP/rules")
	RULES+=("$RULE")
	expect_pci_driver "$SVGA" vfio-pci 0 && expect_pci_override "$SVGA" vfio-pci || return 1
	nl_dev_has "$SVGA" reserved=1 state=reserved "rule=$RULE" driver=vfio-pci || return 1
	gpuctl reserve del '15ad:*' || return 1
	RULES=()
	expect_pci_override "$SVGA" "" && expect_pci_driver "$SVGA" "" 30 &&
	nl_dev_has "$SVGA" state=free && nl_dev_lacks "$SVGA" reserved=1
}

check_subsystem_mismatch() {
	local rc=0

	# every id but the subsystem device matches
	nl_rule_new 1002:5046:1af4:1101 || return 1
	grep -qx 'rule id=[0-9]* match=1002:5046:1af4:1101 driver=vfio-pci source=netlink devices=' \
		"$TMP/rule" || { echo "the rule reserves something"; rc=1; }
	expect_pci_driver "$ATI" "" 0 && expect_pci_override "$ATI" "" || rc=1
	nl_dev_has "$ATI" state=free && nl_dev_lacks "$ATI" reserved=1 || rc=1
	nl_rule_del "$RULE" || rc=1
	# nor with only the subsystem vendor wrong
	nl_rule_new 1002:5046:1af5:1100 || return 1
	grep -q ' devices=$' "$TMP/rule" || { echo "the rule reserves something"; rc=1; }
	nl_rule_del "$RULE" || rc=1
	return "$rc"
}

check_subsystem_match() {
	nl_rule_new 1002:5046:1AF4:1100 || return 1
	grep -qx "rule id=[0-9]* match=1002:5046:1af4:1100 driver=vfio-pci source=netlink devices=$ATI" \
		"$TMP/rule" || return 1
	expect_pci_driver "$ATI" vfio-pci 0 && expect_pci_override "$ATI" vfio-pci || return 1
	nl_dev_has "$ATI" reserved=1 state=reserved "rule=$RULE" || return 1
	nl_rule_del "$RULE" || return 1
	expect_pci_override "$ATI" "" && expect_pci_driver "$ATI" "" 30
}

# One parameter with every part of the grammar, and three bad rules:
# an unknown flag, flags before the driver, a driver that is not VFIO's;
# and a rule naming the SMBus controller, which no rule may reserve.
PARAM="$GPU@gpuctl-vfio-pci+take,$PB_GPU+force+take,1002:*@pci-stub,$MF_GPU,"
PARAM+="0000:04:00.0+bogus,15ad:0405:15ad:0405+take@vfio-pci,0000:06:00.0@e1000,"
PARAM+="0000:00:1f.3"

BRIDGE_DRV=
check_param_load() {
	local mark="test_rule_match.sh: loading gpuctl with reserve= ($$ $RANDOM)" bad

	nl_rules_cleanup
	BRIDGE_DRV=$(pci_driver_of 0000:08:00.0)
	gpuctl_unload || return 1
	[ ! -d /sys/module/gpuctl ] || { echo "gpuctl still loaded"; return 1; }
	echo "$mark" >/dev/kmsg
	gpuctl_load "reserve=$PARAM" || return 1
	dmesg | sed -n "\\|$mark|,\$p" | grep 'gpuctl' >"$TMP/dmesg"
	cat "$TMP/dmesg"
	for bad in "0000:04:00.0+bogus': unknown flag" \
		   "15ad:0405:15ad:0405+take@vfio-pci': unknown flag" \
		   "0000:06:00.0@e1000': "; do
		grep -qF "gpuctl: reserve: bad rule '$bad" "$TMP/dmesg" ||
			{ echo "no log line for '$bad'"; return 1; }
	done
	[ "$(grep -c 'bad rule' "$TMP/dmesg")" = 3 ] || return 1
	grep -qF "gpuctl: reserve: rule '0000:00:1f.3': 0000:00:1f.3 is an SMBus controller (class 0x0c0500): never reserved, skipped" \
		"$TMP/dmesg" || { echo "no log line for the SMBus rule"; return 1; }
	gpuctl-nl rule-dump >"$TMP/rules" || return 1
	cat "$TMP/rules"
	[ "$(wc -l <"$TMP/rules")" = 4 ] || return 1
	mapfile -t RULES < <(sed -n 's/^rule id=\([0-9]*\) .*/\1/p' "$TMP/rules")
	! grep -v ' source=param' "$TMP/rules"
}

param_rule() {	# MATCH KEY=VALUE...: its line in the dump has every pair
	local line p

	line=$(grep "^rule id=[0-9]* match=$1 " "$TMP/rules") ||
		{ echo "no rule for $1"; return 1; }
	shift
	for p in "$@"; do
		[[ " $line " == *" $p "* ]] || { echo "no $p in: $line"; return 1; }
	done
}

check_param_driver_take() {
	param_rule "$GPU" driver=gpuctl-vfio-pci take=1 "devices=$GPU" || return 1
	grep -q "match=$GPU .*force=1" "$TMP/rules" && return 1
	expect_pci_driver "$GPU" gpuctl-vfio-pci 30 &&
	expect_pci_override "$GPU" gpuctl-vfio-pci &&
	nl_dev_has "$GPU" reserved=1 state=reserved driver=gpuctl-vfio-pci
}

check_param_force_take() {
	local g

	param_rule "$PB_GPU" driver=vfio-pci force=1 take=1 || return 1
	grep "match=$PB_GPU " "$TMP/rules" >"$TMP/rule"
	nl_rule_has_dev "$PB_GPU" && nl_rule_has_dev "$PB_NIC" || return 1
	expect_pci_driver "$PB_GPU" vfio-pci 30 && expect_pci_driver "$PB_NIC" vfio-pci 30 ||
		return 1
	expect_pci_driver 0000:08:00.0 "$BRIDGE_DRV" 0 || return 1
	g=$(pci_group_of "$PB_GPU") || return 1
	gpuctl-nl group-get "$g" | grep -q ' viable=1 ' || { gpuctl-nl group-get "$g"; return 1; }
}

check_param_wildcard_driver() {
	param_rule '1002:\*' driver=pci-stub "devices=$ATI" || return 1
	expect_pci_driver "$ATI" pci-stub 30 && expect_pci_override "$ATI" pci-stub &&
	nl_dev_has "$ATI" reserved=1 state=reserved driver=pci-stub
}

check_param_no_take() {
	param_rule "$MF_GPU" driver=vfio-pci || return 1
	grep -q "match=$MF_GPU .*take=1" "$TMP/rules" && return 1
	expect_pci_driver "$MF_GPU" bochs-drm 0 && expect_pci_driver "$MF_HDA" snd_hda_intel 0 ||
		return 1
	nl_dev_has "$MF_GPU" reserved=1 state=held && nl_dev_has "$MF_HDA" reserved=1 state=held
}

check_param_release() {
	local rc=0 a

	nl_rules_cleanup
	gpuctl-nl rule-dump >"$TMP/rules" && [ ! -s "$TMP/rules" ] || return 1
	expect_pci_driver "$GPU" bochs-drm 30 || rc=1
	expect_pci_driver "$PB_GPU" bochs-drm 30 && expect_pci_driver "$PB_NIC" e1000 30 || rc=1
	expect_pci_driver "$ATI" "" 30 || rc=1
	expect_pci_driver "$MF_GPU" bochs-drm 0 && expect_pci_driver "$MF_HDA" snd_hda_intel 0 ||
		rc=1
	for a in "$GPU" "$PB_GPU" "$PB_NIC" "$ATI" "$MF_GPU" "$MF_HDA"; do
		expect_pci_override "$a" "" || rc=1
	done
	return "$rc"
}

ktap_header
ktap_plan 11
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }

ktap_run_stage "1234:* reserves every 1234 GPU and companion, held, no driver changes" \
	check_wildcard_held
ktap_run_stage "gpuctl reserve add '15ad:*': $SVGA on vfio-pci, del gives it back" \
	check_wildcard_binds
ktap_run_stage "subsystem ids: one wrong id matches nothing" check_subsystem_mismatch
ktap_run_stage "subsystem ids: all four right, $ATI on vfio-pci and back" \
	check_subsystem_match
ktap_run_stage "reserve= at load: 4 rules, 4 bad ones logged and skipped" check_param_load
ktap_run_stage "reserve= MATCH@gpuctl-vfio-pci+take: $GPU taken from bochs-drm" \
	check_param_driver_take
ktap_run_stage "reserve= MATCH+force+take: $PB_GPU and the e1000, never the bridge" \
	check_param_force_take
ktap_run_stage "reserve= 1002:*@pci-stub: $ATI on pci-stub" check_param_wildcard_driver
ktap_run_stage "reserve= MATCH alone: $MF_GPU and its HDA held on their drivers" \
	check_param_no_take
ktap_run_stage "rule-del of the parameter's rules gives every device back" \
	check_param_release
ktap_run_stage "module unloads" gpuctl_unload

ktap_finished
