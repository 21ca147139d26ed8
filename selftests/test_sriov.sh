#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# SR-IOV VFs and other functions that a rule names: gpuctl tracks GPUs and
# the members of their IOMMU groups, and also any function that a rule
# names by address or exact ids (a NIC, an NVMe drive, their VFs), which
# then is a unit like a GPU (role gpu). A "VVVV:*" rule names only GPUs,
# and the host's plumbing is never a unit. Checked with the independent client
# gpuctl-nl and sysfs:
#   - a tracked foreign NIC a rule names becomes a unit (dev-change-ntf),
#     held by its driver without "take", and foreign again after rule-del;
#   - a VF no rule names is not tracked; a wildcard rule tracks nothing
#     new; a rule naming the host's plumbing (a bridge, the SMBus) by
#     address is refused with EINVAL, naming what the function is;
#   - rule-new naming a VF by address tracks it (dev-add-ntf), binds it to
#     vfio-pci and lists it; the ledger can allocate it;
#   - rule-del releases it and stops tracking it (dev-del-ntf);
#   - a named VF that comes back when the PF enables its VFs again is
#     tracked and reserved as it appears.
#
# Devices of the "full" topology: 11:00.0, QEMU's nvme with SR-IOV (up to 4
# VFs at 11:00.1-4, each in a group of its own, 1b36:0010 like the PF), on
# nvme. The VFs are enabled with sriov_drivers_autoprobe 0, so that no host
# driver takes them (nvme would wait for controller resources QEMU's VFs
# lack until assigned).

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

SYS_PCI=/sys/bus/pci/devices
TMP=$(mktemp -d /tmp/test_sriov.XXXXXX)
PF=0000:11:00.0
VF=0000:11:00.1
VF2=0000:11:00.2
PORT=0000:00:1f.5
HOSTBRIDGE=0000:00:00.0
SMBUS=0000:00:1f.3
SATA=0000:00:1f.2
HDA=0000:07:00.1
NIC=0000:09:02.0
OWNER=5a0e4b52-3f1c-4d4e-9a51-3c1f2a0b7d11

cleanup() {
	nlmon_stop
	nl_allocs_cleanup
	nl_rules_cleanup
	echo 0 >"$SYS_PCI/$PF/sriov_numvfs"
	echo 1 >"$SYS_PCI/$PF/sriov_drivers_autoprobe"
	rm -rf "$TMP"
}
trap cleanup EXIT

untracked() {	# ADDR: gpuctl-nl dev-get fails with ENODEV
	cmd_fails 'No such device \(errno 19\)' gpuctl-nl dev-get "$1"
}

dev_count() {	# the number of devices gpuctl-nl dev-dump lists
	gpuctl-nl dev-dump | grep -c '^dev '
}

set_numvfs() {	# N
	echo "$1" >"$SYS_PCI/$PF/sriov_numvfs" &&
	[ "$(<"$SYS_PCI/$PF/sriov_numvfs")" = "$1" ]
}

check_start() {
	nlmon_start &&
	expect_pci_driver "$PF" nvme 0 &&
	[ "$(<"$SYS_PCI/$PF/sriov_totalvfs")" = 4 ] &&
	untracked "$PF" &&
	echo 0 >"$SYS_PCI/$PF/sriov_drivers_autoprobe" &&
	set_numvfs 2 &&
	wait_for_path 10 "$SYS_PCI/$VF2" &&
	[ "$(readlink -f "$SYS_PCI/$VF/physfn")" = "$(readlink -f "$SYS_PCI/$PF")" ] &&
	expect_pci_driver "$VF" "" 0 &&
	[ "$(pci_group_of "$VF")" != "$(pci_group_of "$PF")" ] &&
	untracked "$VF" && untracked "$VF2"
}

# "8086:*" matches the chipset (SATA, LPC) and the HD audio 07:00.1, but a
# wildcard names only GPUs, and the topology has no Intel GPU.
check_wildcard() {
	local before after

	before=$(dev_count) || return 1
	nl_rule_new 8086:\* || return 1
	after=$(dev_count) || return 1
	if [ "$before" -eq 0 ] || [ "$before" != "$after" ]; then
		echo "tracked $before devices before the rule, $after after"
		return 1
	fi
	untracked "$SATA" && nl_dev_has "$HDA" role=companion || return 1
	if grep -q ' devices=[^ ]' "$TMP/rule"; then
		echo "the rule lists devices"
		return 1
	fi
	nl_rule_del "$RULE"
}

# The e1000 behind the PCIe-to-PCI bridge is a foreign member of a GPU's
# group; named by a rule (without take) it is a unit held by e1000, and
# foreign again when the rule goes. Its driver is never touched.
check_foreign_named() {
	nl_dev_has "$NIC" role=foreign reserved=0 || return 1
	nlmon_mark
	nl_rule_new "$NIC" || return 1
	nlmon_wait "^dev-change-ntf address=$NIC .*role=gpu" &&
	nl_dev_has "$NIC" role=gpu reserved=1 state=held "rule=$RULE" &&
	expect_pci_driver "$NIC" e1000 0 || return 1
	nlmon_mark
	nl_rule_del "$RULE" || return 1
	nlmon_wait "^dev-change-ntf address=$NIC .*role=foreign" &&
	nl_dev_has "$NIC" role=foreign reserved=0 state=free &&
	expect_pci_driver "$NIC" e1000 0 &&
	expect_pci_override "$NIC" ""
}

# A rule naming by address the host's plumbing is refused: the root port,
# the host bridge, the SMBus controller. Nothing is tracked or left.
check_never() {
	local addr what

	for addr in "$PORT" "$HOSTBRIDGE" "$SMBUS"; do
		case $addr in
		"$SMBUS") what="an SMBus controller \\(class 0x0c0500\\)" ;;
		*) what="a bridge \\(class 0x060[04]00\\)" ;;
		esac
		cmd_fails "\\(errno 22\\): $addr is $what: never reserved" \
			gpuctl-nl rule-new "$addr" || return 1
		untracked "$addr" || return 1
	done
	if gpuctl-nl rule-dump | grep -q '^rule '; then
		echo "a rule was left"
		return 1
	fi
}

check_named() {
	nlmon_mark
	nl_rule_new "$VF" || return 1
	nl_rule_has_dev "$VF" &&
	nlmon_wait "^dev-add-ntf address=$VF " &&
	nl_dev_has "$VF" role=gpu reserved=1 state=reserved "rule=$RULE" \
		"physfn=$PF" "iommu_group=$(pci_group_of "$VF")" &&
	expect_pci_driver "$VF" vfio-pci &&
	expect_pci_override "$VF" vfio-pci &&
	untracked "$VF2" && untracked "$PF"
}

check_alloc() {
	local rule=$RULE

	nl_alloc_new owner "$OWNER" device "$VF" || return 1
	grep -q "devices=$VF\( \|$\)" "$TMP/alloc" ||
		{ echo "the allocation does not list $VF only"; return 1; }
	nl_dev_has "$VF" "allocation=$ALLOC" || return 1
	cmd_fails "\\(errno 16\\): $VF is allocated to $ALLOC; delete the allocation first" \
		gpuctl-nl rule-del id "$rule" || return 1
	nl_alloc_del "$ALLOC"
}

check_released() {
	nlmon_mark
	nl_rule_del "$RULE" || return 1
	nlmon_wait "^dev-del-ntf address=$VF " &&
	untracked "$VF" &&
	expect_pci_driver "$VF" "" &&
	expect_pci_override "$VF" ""
}

# The rule outlives its VF: disabling the VFs removes it from the table,
# enabling them again brings it back on vfio-pci, claimed as it appeared.
check_vf_returns() {
	nl_rule_new "$VF" || return 1
	expect_pci_driver "$VF" vfio-pci || return 1
	nlmon_mark
	set_numvfs 0 || return 1
	nlmon_wait "^dev-del-ntf address=$VF " &&
	untracked "$VF" || return 1
	nlmon_mark
	set_numvfs 2 || return 1
	nlmon_wait "^dev-add-ntf address=$VF " &&
	expect_pci_driver "$VF" vfio-pci &&
	nl_dev_has "$VF" role=gpu state=reserved "rule=$RULE" &&
	untracked "$VF2"
}

gpuctl_load || exit 1
ktap_header
ktap_plan 8
ktap_run_stage "2 VFs of $PF enabled, neither tracked" check_start
ktap_run_stage "rule 8086:* tracks no chipset function" check_wildcard
ktap_run_stage "the foreign e1000 named: a unit held by e1000, then foreign" check_foreign_named
ktap_run_stage "rules naming a bridge or the SMBus refused (EINVAL)" check_never
ktap_run_stage "rule-new $VF: tracked, role gpu, on vfio-pci" check_named
ktap_run_stage "the VF allocated; its rule cannot go meanwhile" check_alloc
ktap_run_stage "rule-del: $VF released and untracked" check_released
ktap_run_stage "VFs disabled and enabled: $VF back, reserved" check_vf_returns
ktap_finished
