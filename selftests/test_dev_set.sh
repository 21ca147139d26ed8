#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# dev-set: a tracked SR-IOV PF's number of VFs, set through gpuctl. The
# requests go through the kernel's YNL CLI (a client of the spec alone),
# gpuctl-nl (libnl) and the tool; sysfs and gpuctl-nl's monitor check what
# happened:
#   - an untracked PF, a device that is no PF, more VFs than the PF
#     supports, a request without a number: refused with the errno and
#     message each names, and nothing changes;
#   - 2 VFs enabled on the PF: sriov_numvfs, virtfn links, the PF's
#     dev-change-ntf; 3 more while it has 2 is EBUSY;
#   - while a VF a rule names is allocated, or open by a VFIO user, the
#     VFs cannot go (EBUSY naming the VF), and the VFs stay;
#   - while a VF no rule names is held by a nested QEMU on vfio-pci, the
#     VFs cannot go either: dev-set 0 fails with EBUSY at once (0.3 s),
#     naming the VF and its driver, where the disable would wait for the
#     VM; the VF stays open in QEMU throughout;
#   - gpuctl dev set disables them (the VF's dev-del-ntf) and enables them
#     again (the VF back on vfio-pci, reserved), printing the PF with its
#     VFS column; gpuctl dev show prints the VF's PF;
#   - taking the PF from its driver would destroy its VFs: a rule with
#     take on the PF is refused (EBUSY) while a VF is allocated, naming
#     the VF and the allocation, or held by a nested QEMU, naming the VF
#     and its driver; the PF stays on nvme;
#   - gpuctl-vfio-pci keeps vfio-pci's policy: it enables no VFs without
#     gpuctl.enable_sriov=1 (ENOENT, and the message says so); with it,
#     rule-del of the PF's rule is refused while a VF is allocated, and
#     the PF stays on gpuctl-vfio-pci with its VFs;
#   - the PF's driver refusing (vfio-pci without enable_sriov) is passed
#     on with the driver's errno and the switch it needs, and a driver
#     without sriov_configure (pci-stub) is named; nothing changes;
#   - gpuctl apply with "dev PF numvfs N" lines: rules first, then the
#     counts; idempotent; N to M through 0; a refusal names FILE:LINE and
#     changes nothing; a failing later line rolls back the earlier ones.
#
# Devices of the "full" topology: 11:00.0, QEMU's nvme with SR-IOV (up to 4
# VFs at 11:00.1-4, each in a group of its own), on nvme; 01:00.0 a GPU.
# sriov_drivers_autoprobe is 0, so that no host driver takes the VFs.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

SYS_PCI=/sys/bus/pci/devices
TMP=$(mktemp -d /tmp/test_dev_set.XXXXXX)
PF=0000:11:00.0
VF=0000:11:00.1
VF2=0000:11:00.2
GPU=0000:01:00.0
OWNER=7b1d2c4e-5f60-4a7b-8c9d-0e1f2a3b4c5d
PF_RULE=

cleanup() {
	qemu_kill
	echo 0 2>/dev/null >/sys/module/gpuctl/parameters/enable_sriov
	vfio_open_stop
	nlmon_stop
	nl_allocs_cleanup
	nl_rules_cleanup
	echo 0 >"$SYS_PCI/$PF/sriov_numvfs"
	echo 1 >"$SYS_PCI/$PF/sriov_drivers_autoprobe"
	[ -n "$(pci_driver_of "$PF")" ] || echo "$PF" >/sys/bus/pci/drivers_probe
	rm -rf "$TMP"
}
trap cleanup EXIT

untracked() {	# ADDR: gpuctl-nl dev-get fails with ENODEV
	cmd_fails 'No such device \(errno 19\)' gpuctl-nl dev-get "$1"
}

numvfs_is() {	# N: the PF has N VFs per sysfs
	local have

	have=$(<"$SYS_PCI/$PF/sriov_numvfs") || return 1
	[ "$have" = "$1" ] || { echo "$PF has $have VFs, want $1"; return 1; }
}

# ynl_set_fails NUMVFS ERRNO MESSAGE [ADDR]: the YNL CLI's dev-set is
# refused with ERRNO and MESSAGE.
ynl_set_fails() {
	ynl_fails dev-set "{\"address\": \"${4:-$PF}\", \"sriov-numvfs\": $1}" ||
		return 1
	grep -q "error: -$2\\b" "$TMP/err" || { echo "want errno $2"; return 1; }
	grep -q -- "$3" "$TMP/err" || { echo "want '$3'"; return 1; }
}

check_setup() {
	nlmon_start && ynl_start &&
	expect_pci_driver "$PF" nvme 0 &&
	numvfs_is 0 &&
	echo 0 >"$SYS_PCI/$PF/sriov_drivers_autoprobe" || return 1
	# Untracked: no dev-set, from any client.
	ynl_set_fails 2 19 "no such device" || return 1
	cmd_fails 'No such device \(errno 19\)' gpuctl-nl dev-set "$PF" 2 &&
	untracked "$PF" && numvfs_is 0 || return 1
	# Named without take: tracked, held by nvme.
	nl_rule_new "$PF" || return 1
	PF_RULE=$RULE
	nl_dev_has "$PF" role=gpu state=held sriov_totalvfs=4 sriov_numvfs=0
}

check_refused() {
	ynl_set_fails 2 95 "$GPU is not an SR-IOV PF" "$GPU" &&
	ynl_set_fails 5 34 "$PF supports 4 VFs, not 5" &&
	cmd_fails 'Numerical result out of range \(errno 34\)' \
		gpuctl-nl dev-set "$PF" 65535 || return 1
	ynl_fails dev-set "{\"address\": \"$PF\"}" &&
	grep -q 'error: -22\b' "$TMP/err" &&
	grep -q "'miss-type': 'sriov-numvfs'" "$TMP/err" || return 1
	numvfs_is 0 && nl_dev_has "$PF" sriov_numvfs=0
}

check_enable() {
	nlmon_mark
	ynl --do dev-set --json "{\"address\": \"$PF\", \"sriov-numvfs\": 2}" || return 1
	numvfs_is 2 &&
	[ -e "$SYS_PCI/$PF/virtfn0" ] && [ -e "$SYS_PCI/$PF/virtfn1" ] &&
	[ ! -e "$SYS_PCI/$PF/virtfn2" ] &&
	nlmon_wait "^dev-change-ntf address=$PF .*sriov_numvfs=2" &&
	nl_dev_has "$PF" sriov_numvfs=2 &&
	# N to M goes through 0
	ynl_set_fails 3 16 "$PF has 2 VFs: set 0 before 3" &&
	numvfs_is 2 &&
	# the same number again changes nothing and succeeds
	gpuctl-nl dev-set "$PF" 2 && numvfs_is 2
}

check_vf_in_use() {
	nl_rule_new "$VF" || return 1
	expect_pci_driver "$VF" vfio-pci || return 1
	nl_alloc_new owner "$OWNER" device "$VF" || return 1
	ynl_set_fails 0 16 "VF $VF of $PF is allocated to $ALLOC" &&
	numvfs_is 2 || return 1
	nl_alloc_del "$ALLOC" || return 1
	modprobe vfio_iommu_type1 &&
	vfio_open_start "$VF" || return 1
	ynl_set_fails 0 16 "VF $VF of $PF is open" &&
	numvfs_is 2 || return 1
	vfio_open_stop
	nl_dev_has "$VF" state=reserved
}

# VF2 is untracked (no rule names it): only the module's look at every VF
# of the PF, under the PF's locks, sees that QEMU holds it.
check_untracked_vf_open() {
	local start ms rc=0

	untracked "$VF2" || return 1
	echo vfio-pci >"$SYS_PCI/$VF2/driver_override" &&
	echo "$VF2" >/sys/bus/pci/drivers_probe &&
	expect_pci_driver "$VF2" vfio-pci || return 1
	ulimit -l unlimited || return 1
	if ! { qemu_start untracked "vfio-pci,host=$VF2" && qemu_ready; }; then
		qemu_kill
		return 1
	fi
	start=${EPOCHREALTIME/./}
	cmd_fails "Device or resource busy \(errno 16\): VF $VF2 of $PF is open by a VFIO user through vfio-pci" \
		timeout 10 gpuctl-nl dev-set "$PF" 0 || rc=1
	ms=$(( (${EPOCHREALTIME/./} - start) / 1000 ))
	# 0.3 s on a quiet machine; waiting for the VM would never end (the
	# timeout above), so the bound leaves room for a loaded TCG host
	echo "# dev-set refused in $ms ms"
	[ "$ms" -lt 5000 ] || { echo "dev-set took $ms ms, want < 5000"; rc=1; }
	numvfs_is 2 && kill -0 "$QEMU_PID" && [ -e "$SYS_PCI/$VF2" ] &&
	expect_pci_driver "$VF2" vfio-pci 0 || rc=1
	# the YNL CLI gets the same errno and message
	ynl_set_fails 0 16 "VF $VF2 of $PF is open by a VFIO user through vfio-pci" ||
		rc=1
	qemu_quit || { qemu_kill; rc=1; }
	echo >"$SYS_PCI/$VF2/driver_override"
	return "$rc"
}

# The PF with 2 VFs, held by nvme under PF_RULE (no take), VF reserved.
check_pf_unbind() {
	nl_alloc_new owner "$OWNER" device "$VF" || return 1
	nl_rule_del "$PF_RULE" || return 1
	PF_RULE=
	expect_pci_driver "$PF" nvme 0 || return 1
	# the PF is untracked now: the rule's look at every PCI function sees it
	cmd_fails "Device or resource busy \(errno 16\): VF $VF of $PF is allocated to $ALLOC" \
		gpuctl-nl rule-new "$PF" take || return 1
	expect_pci_driver "$PF" nvme 0 && numvfs_is 2 &&
	nl_dev_has "$VF" "allocation=$ALLOC" || return 1
	nl_alloc_del "$ALLOC" || return 1
	echo vfio-pci >"$SYS_PCI/$VF2/driver_override" &&
	echo "$VF2" >/sys/bus/pci/drivers_probe &&
	expect_pci_driver "$VF2" vfio-pci || return 1
	if ! { qemu_start untracked "vfio-pci,host=$VF2" && qemu_ready; }; then
		qemu_kill
		return 1
	fi
	if ! { cmd_fails "Device or resource busy \(errno 16\): VF $VF2 of $PF is open by a VFIO user through vfio-pci" \
		gpuctl-nl rule-new "$PF" take &&
	       expect_pci_driver "$PF" nvme 0 && numvfs_is 2 &&
	       kill -0 "$QEMU_PID"; }; then
		qemu_kill
		return 1
	fi
	qemu_quit || { qemu_kill; return 1; }
	echo >"$SYS_PCI/$VF2/driver_override"
	# gpuctl-vfio-pci: no VFs unless told
	nl_rule_new "$PF" || return 1
	PF_RULE=$RULE
	gpuctl-nl dev-set "$PF" 0 && numvfs_is 0 || return 1
	nl_rule_del "$PF_RULE" || return 1
	nl_rule_new "$PF" driver gpuctl-vfio-pci take || return 1
	PF_RULE=$RULE
	expect_pci_driver "$PF" gpuctl-vfio-pci || return 1
	ynl_set_fails 2 2 "gpuctl-vfio-pci needs gpuctl.enable_sriov=1 to enable VFs on $PF" &&
	numvfs_is 0 || return 1
	# vfio-pci-core gives a VF of its PF the PF's driver_override
	# (vfio_pci_bus_notifier()): the VF's rule names that driver too
	gpuctl-nl rule-del match "$VF" && nl_rule_new "$VF" driver gpuctl-vfio-pci ||
		return 1
	echo 1 >/sys/module/gpuctl/parameters/enable_sriov &&
	gpuctl-nl dev-set "$PF" 2 && numvfs_is 2 &&
	expect_pci_driver "$VF" gpuctl-vfio-pci || return 1
	nl_alloc_new owner "$OWNER" device "$VF" || return 1
	cmd_fails "Device or resource busy \(errno 16\): VF $VF of $PF is allocated to $ALLOC" \
		gpuctl-nl rule-del id "$PF_RULE" || return 1
	expect_pci_driver "$PF" gpuctl-vfio-pci 0 && numvfs_is 2 &&
	nl_dev_has "$VF" "allocation=$ALLOC" || return 1
	# as it was: the PF back on nvme under a rule without take, 2 VFs
	nl_alloc_del "$ALLOC" && gpuctl-nl dev-set "$PF" 0 || return 1
	echo 0 >/sys/module/gpuctl/parameters/enable_sriov
	nl_rule_del "$PF_RULE" || return 1
	PF_RULE=
	expect_pci_driver "$PF" nvme 30 || return 1
	gpuctl-nl rule-del match "$VF" && nl_rule_new "$VF" || return 1
	nl_rule_new "$PF" || return 1
	PF_RULE=$RULE
	gpuctl-nl dev-set "$PF" 2 && numvfs_is 2 &&
	expect_pci_driver "$VF" vfio-pci
}

check_tool() {
	nlmon_mark
	gpuctl dev set 11:00.0 numvfs 0 >"$TMP/out" 2>&1 || { cat "$TMP/out"; return 1; }
	cat "$TMP/out"
	# a header and the PF, its VFS 0 of 4, no PF of its own and no VGPU
	[ "$(wc -l <"$TMP/out")" = 2 ] &&
	head -n 1 "$TMP/out" | grep -Eq ' VFS +PF +VGPU +NAME$' &&
	grep -Eq "^$PF .* 0/4 +- +- +Red Hat" "$TMP/out" &&
	numvfs_is 0 && [ ! -e "$SYS_PCI/$VF" ] &&
	nlmon_wait "^dev-del-ntf address=$VF " || return 1
	nlmon_mark
	gpuctl -j dev set 11:00.0 numvfs 2 >"$TMP/out" 2>&1 || { cat "$TMP/out"; return 1; }
	cat "$TMP/out"
	# shellcheck disable=SC2016 # jq code, not shell
	json_check --arg pf "$PF" \
		'.devices | length == 1 and .[0].address == $pf and .[0].sriov_numvfs == 2' \
		"$TMP/out" &&
	numvfs_is 2 &&
	nlmon_wait "^dev-add-ntf address=$VF " &&
	expect_pci_driver "$VF" vfio-pci &&
	nl_dev_has "$VF" state=reserved || return 1
	gpuctl dev show "$VF" >"$TMP/out" || return 1
	cat "$TMP/out"
	grep -Eq "^$VF .* - +$PF +- +Red Hat" "$TMP/out" || return 1
	# the kernel's reason reaches the user
	if gpuctl dev set 11:00.0 numvfs 9 >"$TMP/out" 2>&1; then
		cat "$TMP/out"
		return 1
	fi
	cat "$TMP/out"
	grep -q "$PF supports 4 VFs, not 9" "$TMP/out" &&
	grep -q "cannot set 9 VFs on $PF" "$TMP/out" && numvfs_is 2
}

# The PF taken from nvme: on vfio-pci (loaded without enable_sriov), whose
# sriov_configure refuses; then on pci-stub, which has none.
check_driver_refuses() {
	gpuctl-nl dev-set "$PF" 0 && numvfs_is 0 || return 1
	nl_rule_del "$PF_RULE" || return 1
	nl_rule_new "$PF" take || return 1
	PF_RULE=$RULE
	expect_pci_driver "$PF" vfio-pci || return 1
	if grep -qx Y /sys/module/vfio_pci/parameters/enable_sriov 2>/dev/null; then
		echo "vfio-pci has enable_sriov set"
		return 1
	fi
	ynl_set_fails 2 2 "vfio-pci needs vfio_pci.enable_sriov=1 to enable VFs on $PF" &&
	numvfs_is 0 || return 1
	nl_rule_del "$PF_RULE" || return 1
	nl_rule_new "$PF" driver pci-stub take || return 1
	PF_RULE=$RULE
	expect_pci_driver "$PF" pci-stub || return 1
	ynl_set_fails 2 95 "driver pci-stub of $PF cannot set its VFs" &&
	numvfs_is 0 || return 1
	nl_rule_del "$PF_RULE"
}

# gpuctl apply: the file's rules first (one makes the PF tracked), then its
# VF count; a second run changes nothing; a new count goes through 0; a
# count the kernel refuses names its line and changes nothing; a later
# line that fails rolls back the counts before it.
check_apply() {
	local conf=$TMP/gpuctl.conf rc=0

	nl_rules_cleanup
	expect_pci_driver "$PF" nvme 30 && numvfs_is 0 || return 1
	untracked "$PF" || return 1
	printf '# the PF, a VF to hand out, its VFs\nreserve %s\nreserve %s\ndev %s numvfs 2\n' \
		"$PF" "$VF" "${PF#0000:}" >"$conf"
	run_captured "$TMP/out" "$TMP/err" gpuctl -j apply "$conf" || return 1
	# shellcheck disable=SC2016 # jq code, not shell
	json_check --arg pf "$PF" --arg vf "$VF" '[.rules[].match] == [$pf, $vf] and
		.vfs == [{"address": $pf, "numvfs": 2, "was": 0}]' "$TMP/out" &&
	numvfs_is 2 && expect_pci_driver "$VF" vfio-pci || return 1

	run_captured "$TMP/out" "$TMP/err" gpuctl apply "$conf" || return 1
	[ ! -s "$TMP/out" ] && [ ! -s "$TMP/err" ] && numvfs_is 2 || return 1

	sed -i 's/numvfs 2$/numvfs 3/' "$conf"
	run_captured "$TMP/out" "$TMP/err" gpuctl apply "$conf" || return 1
	grep -qx "dev $PF numvfs 3 (was 2)" "$TMP/out" && numvfs_is 3 &&
	expect_pci_driver "$VF" vfio-pci || return 1

	nl_alloc_new owner "$OWNER" device "$VF" || return 1
	sed -i 's/numvfs 3$/numvfs 1/' "$conf"
	run_captured "$TMP/out" "$TMP/err" gpuctl apply "$conf" || rc=$?
	[ "$rc" = 2 ] && [ ! -s "$TMP/out" ] &&
	grep -q "VF $VF of $PF is allocated to $ALLOC" "$TMP/err" &&
	grep -qx "$conf:4: cannot set 1 VFs on $PF" "$TMP/err" &&
	numvfs_is 3 && nl_dev_has "$VF" "allocation=$ALLOC" || return 1
	nl_alloc_del "$ALLOC" || return 1

	# 3 to 2 goes through, then the GPU (no PF) fails: back to 3
	sed -i 's/numvfs 1$/numvfs 2/' "$conf"
	echo "dev $GPU numvfs 1" >>"$conf"
	rc=0
	run_captured "$TMP/out" "$TMP/err" gpuctl apply "$conf" || rc=$?
	[ "$rc" = 2 ] && [ ! -s "$TMP/out" ] &&
	grep -q "$GPU is not an SR-IOV PF" "$TMP/err" &&
	grep -qx "$conf:5: cannot set 1 VFs on $GPU, rolling back" "$TMP/err" &&
	numvfs_is 3 && expect_pci_driver "$VF" vfio-pci
}

gpuctl_load || exit 1
ktap_header
ktap_plan 9
ktap_run_stage "$PF untracked: dev-set ENODEV; named by a rule, tracked" check_setup
ktap_run_stage "no PF, too many VFs, no number: refused, nothing changed" check_refused
ktap_run_stage "YNL dev-set 2: sysfs and the PF's event agree; 2 to 3 is EBUSY" check_enable
ktap_run_stage "$VF allocated, then open: the VFs cannot go (EBUSY)" check_vf_in_use
ktap_run_stage "$VF2 untracked, held by a nested QEMU: dev-set 0 is EBUSY at once" \
	check_untracked_vf_open
ktap_run_stage "taking the PF away is refused while a VF is allocated or open" \
	check_pf_unbind
ktap_run_stage "gpuctl dev set: VFs off and on, $VF back reserved" check_tool
ktap_run_stage "the PF's driver refuses, or has no sriov_configure" check_driver_refuses
ktap_run_stage "gpuctl apply: rules, then VF counts; again a no-op; refusal and rollback" \
	check_apply
ktap_finished
