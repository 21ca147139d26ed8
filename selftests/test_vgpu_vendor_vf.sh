#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# NVIDIA's vendor VFs (vGPU 17+): VFs that stay on the "nvidia" driver,
# each a VFIO device, given a vGPU type through nvidia/current_vgpu_type.
# The stand-in is selftests/modules/vgpu_test_vf.c on QEMU's nvme with
# SR-IOV (11:00.0, VFs at 11:00.1-4): an L40S-like card whose VFs take one
# type at a time, 4 of 1155, 2 of 1156 or 1 of 1157. Checked with sysfs,
# the independent client gpuctl-nl and a nested QEMU:
#   - a rule with driver nvidia reserves VFs on nvidia and blocks the PF
#     ("nvidia takes only vendor VFs; this is no VF"), which it never
#     unbinds, not even when the rule goes;
#   - dev show has the VGPU column and vgpu_type; vgpu types lists the
#     PF's types with the number of VFs that can take each;
#   - vgpu set gives and clears types, by id or name (completion offers
#     the VFs and the ids each can take); what the card
#     refuses (another type, no room) is named and changes nothing; a VF
#     that changes type and is refused keeps its old one;
#   - an allocated VF and an open VF (a nested QEMU has it) are refused;
#     a VF without a type cannot be opened at all;
#   - gpuctl.conf's "vf VF type ID" lines: apply sets them, is idempotent,
#     refuses a VF with another type and rolls back; a VF that appears
#     later gets its type from the udev rule when nvidia binds it.

# Stage functions run through ktap_run_stage or a trap; json_check's jq
# filters name jq variables in single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

SYS_PCI=/sys/bus/pci/devices
TMP=$(mktemp -d /tmp/test_vgpu_vendor_vf.XXXXXX)
SAMPLES=${GPUCTL_MDEV_SAMPLES:-$GPUCTL_ROOT/build/$(uname -r)/mdev}
PF=0000:11:00.0
VF1=0000:11:00.1
VF2=0000:11:00.2
VF3=0000:11:00.3
VF4=0000:11:00.4
GPU=0000:01:00.0
OWNER=5a0e4b52-3f1c-4d4e-9a51-3c1f2a0b7d21

cleanup() {
	qemu_kill
	wait 2>/dev/null
	gpuctl_udevd_stop
	nl_allocs_cleanup
	nl_rules_cleanup
	vendor_vf_rig_stop
	rm -rf "$TMP"
}
trap cleanup EXIT

# vf_creatable VF: the ids it lists as creatable, on one line
vf_creatable() {
	sed -n 's/^\([0-9][0-9]*\) *: .*/\1/p' \
		"$SYS_PCI/$1/nvidia/creatable_vgpu_types" | tr '\n' ' '
}

# set_fails REGEX VF TYPE: gpuctl vgpu set exits 2 with REGEX on stderr
set_fails() {
	local want=$1 rc

	gpuctl vgpu set "$2" type "$3" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	print_file "" "$TMP/out" "$TMP/err"
	[ "$rc" = 2 ] || { echo "exit $rc, not 2"; return 1; }
	grep -Eq "$want" "$TMP/err" || { echo "no \"$want\""; return 1; }
}

check_setup() {
	local vf

	grep -q '^gpuctl ' /proc/modules || gpuctl_load || return 1
	vendor_vf_rig_start || return 1
	nl_rule_new "$VF1" driver nvidia && nl_rule_new "$VF2" driver nvidia &&
	nl_rule_new "$VF3" driver nvidia || return 1
	echo 3 >"$SYS_PCI/$PF/sriov_numvfs" || return 1
	for vf in "$VF1" "$VF2" "$VF3"; do
		expect_pci_driver "$vf" nvidia 5 &&
		nl_dev_has "$vf" state=reserved "physfn=$PF" &&
		[ "$(vf_type "$vf")" = 0 ] || return 1
	done
	[ "$(vf_creatable "$VF1")" = "1155 1156 1157 " ]
}

# The PF is the host's: a rule naming it with nvidia blocks it, and
# neither the rule nor its removal touches its driver or override.
check_pf_blocked() {
	local id

	nl_rule_new "$PF" driver nvidia || return 1
	id=$RULE
	nl_dev_has "$PF" state=blocked || return 1
	nl_dev_reason "$PF" | grep -q 'nvidia takes only vendor VFs; this is no VF' ||
		{ nl_dev_reason "$PF"; return 1; }
	expect_pci_driver "$PF" nvidia 0 || return 1
	# not allocatable
	cmd_fails "$PF is blocked" gpuctl-nl alloc-new owner "$OWNER" device "$PF" ||
		return 1
	nl_rule_del "$id" || return 1
	sleep 1
	expect_pci_driver "$PF" nvidia 0 && expect_pci_override "$PF" nvidia &&
		cmd_fails 'No such device \(errno 19\)' gpuctl-nl dev-get "$PF"
}

check_dev_show() {
	gpuctl dev show >"$TMP/table" || return 1
	cat "$TMP/table"
	head -n1 "$TMP/table" | grep -Eq ' VFS +PF +VGPU +NAME *$' || return 1
	grep -Eq "^$VF1 .* $PF +none +Red Hat" "$TMP/table" &&
	grep -Eq "^$GPU .* - +- +- +Vendor 1234" "$TMP/table" || return 1
	gpuctl -j dev show >"$TMP/j" || return 1
	json_check --arg vf "$VF1" --arg gpu "$GPU" '
		(.devices | map(select(.address == $vf))[0].vgpu_type == 0) and
		(.devices | map(select(.address == $gpu))[0].vgpu_type == null)' \
		"$TMP/j"
}

check_types() {
	gpuctl vgpu types "$PF" >"$TMP/t" || return 1
	cat "$TMP/t"
	[ "$(wc -l <"$TMP/t")" = 3 ] &&
	grep -qx "$PF 1156 name \"NVIDIA L40S-24Q\" api vfio-pci available 3 kind vf" "$TMP/t" ||
		return 1
	gpuctl -j vgpu types >"$TMP/j" || return 1
	json_check --arg pf "$PF" '
		[.vgpu_types[] | select(.kind == "vf")] as $v |
		($v | length) == 3 and
		($v | map(.parent) | unique) == [$pf] and
		($v | map(.type)) == [1155, 1156, 1157] and
		($v | map(.available_instances)) == [3, 3, 3] and
		($v[2].name == "NVIDIA L40S-48Q") and ($v[0].max_instance == null)' \
		"$TMP/j"
}

check_set() {
	gpuctl vgpu set "$VF1" type 1156 >"$TMP/out" || return 1
	cat "$TMP/out"
	grep -Eq "^$VF1 .* reserved .* $PF +1156 +Red Hat" "$TMP/out" &&
		[ "$(vf_type "$VF1")" = 1156 ] || return 1
	# the card takes one type: the others see only 1156
	[ "$(vf_creatable "$VF2")" = "1156 " ] && [ "$(vf_creatable "$VF1")" = "" ] &&
	[ "$(complete_words gpuctl vgpu set "$VF2" type '' | tr '\n' ' ')" = "1156 none " ] ||
		return 1
	gpuctl vgpu types "$PF" >"$TMP/t" || return 1
	cat "$TMP/t"
	grep -qx "$PF 1156 name \"NVIDIA L40S-24Q\" api vfio-pci available 2 kind vf" "$TMP/t" &&
		[ "$(wc -l <"$TMP/t")" = 1 ] || return 1
	# by name; again is no change
	gpuctl vgpu set "$VF2" type "NVIDIA L40S-24Q" >/dev/null &&
		[ "$(vf_type "$VF2")" = 1156 ] || return 1
	gpuctl vgpu set "$VF2" type 1156 >/dev/null && [ "$(vf_type "$VF2")" = 1156 ] ||
		return 1
	gpuctl dev show "$VF2" | grep -Eq " $PF +1156 +Red Hat" || return 1
	# completion offers the vendor VFs, then what one can take now
	[ "$(complete_words gpuctl vgpu set '' | sed '/^$/d' | LC_ALL=C sort | tr '\n' ' ')" = \
		"$VF1 $VF2 $VF3 help " ] &&
	[ "$(complete_words gpuctl vgpu set "$VF3" type '' | tr '\n' ' ')" = "none " ] &&
	[ "$(complete_words gpuctl vgpu set "$VF3" '' | tr '\n' ' ')" = "type " ]
}

check_refusals() {
	# the card is full (2 of 1156) and has one type
	set_fails "^gpuctl: vgpu set: the card of $VF3 has no room for type 1156$" \
		"$VF3" 1156 || return 1
	set_fails "^gpuctl: vgpu set: the card of $VF3 has VFs of another type; it takes one type at a time$" \
		"$VF3" 1155 || return 1
	set_fails "^gpuctl: vgpu set: $VF3 cannot take type \"NVIDIA L40S-12Q\" now \(creatable: none\)$" \
		"$VF3" "NVIDIA L40S-12Q" || return 1
	[ "$(vf_type "$VF3")" = 0 ] || return 1
	# a change the card refuses leaves the old type
	set_fails "^gpuctl: vgpu set: the card of $VF1 has VFs of another type" \
		"$VF1" 1157 || return 1
	[ "$(vf_type "$VF1")" = 1156 ] || return 1
	set_fails "^gpuctl: vgpu set: $GPU is no vendor VF" "$GPU" 1156 || return 1
	set_fails "^gpuctl: vgpu set: the driver of $VF3 has no type 4242$" \
		"$VF3" 4242 || return 1
	# none twice is no error and no write
	gpuctl vgpu set "$VF3" type none >/dev/null && [ "$(vf_type "$VF3")" = 0 ]
}

check_allocated() {
	nl_alloc_new owner "$OWNER" device "$VF1" || return 1
	set_fails "^gpuctl: vgpu set: $VF1 is in allocation $ALLOC; delete the allocation first$" \
		"$VF1" none || return 1
	[ "$(vf_type "$VF1")" = 1156 ] || return 1
	nl_alloc_del "$ALLOC"
}

# A nested QEMU opens the typed VF: gpuctl sees the open, vgpu set and the
# driver refuse; once QEMU quit, the type goes. An untyped VF cannot open.
check_open() {
	command -v qemu-system-x86_64 && command -v socat || return 1
	ulimit -l unlimited || return 1
	qemu_start typed "vfio-pci,host=$VF1"
	qemu_ready || return 1
	nl_dev_wait "$QEMU_TIMEOUT" nl_dev_has "$VF1" holder_pid=0 open_match=unallocated ||
		{ cat "$QEMU_OUT"; return 1; }
	set_fails "^gpuctl: vgpu set: $VF1 is open by a VFIO user; stop the VM first$" \
		"$VF1" none || return 1
	# the driver's own refusal, for a writer that does not ask gpuctl
	write_to 0 "$SYS_PCI/$VF1/nvidia/current_vgpu_type" 2>"$TMP/err" && return 1
	grep -q 'busy' "$TMP/err" || { cat "$TMP/err"; return 1; }
	qemu_quit || return 1
	nl_dev_wait 10 nl_dev_has_not "$VF1" holder_pid || return 1
	gpuctl vgpu set "$VF1" type none >/dev/null && [ "$(vf_type "$VF1")" = 0 ] ||
		return 1
	# no type, no open
	qemu_start untyped "vfio-pci,host=$VF1"
	qemu_reap || return 1
	[ "$QEMU_RC" != 0 ] && grep -q 'No such device' "$QEMU_OUT"
}

# gpuctl.conf's vf lines: set in file order, again a no-op; a VF with
# another type is an error that changes nothing; a refusal takes back the
# types the run set.
check_apply() {
	local conf=$TMP/vf.conf

	gpuctl vgpu set "$VF2" type none >/dev/null || return 1
	printf 'vf %s type 1155\nvf %s type 1155\n' "$VF1" "$VF2" >"$conf"
	gpuctl -j apply "$conf" >"$TMP/out" || return 1
	cat "$TMP/out"
	json_check --arg a "$VF1" --arg b "$VF2" '.vf_types ==
		[{address: $a, type: 1155}, {address: $b, type: 1155}] and
		.vfs == [] and .vgpus == [] and .rules == []' "$TMP/out" &&
	[ "$(vf_type "$VF1")" = 1155 ] && [ "$(vf_type "$VF2")" = 1155 ] || return 1
	gpuctl -j apply "$conf" >"$TMP/out" || return 1
	json_check '.vf_types == []' "$TMP/out" || return 1

	printf 'vf %s type 1157\n' "$VF1" >"$conf"
	run_captured "$TMP/out" "$TMP/err" gpuctl apply "$conf" && return 1
	grep -qx "gpuctl: apply: $VF1 has type 1155" "$TMP/err" &&
	grep -qx "$conf:1: cannot give $VF1 type 1157" "$TMP/err" &&
	[ "$(vf_type "$VF1")" = 1155 ] || return 1

	# VF3 takes 1155, then VF2's 1156 is refused: VF3 is cleared again
	gpuctl vgpu set "$VF2" type none >/dev/null || return 1
	printf 'vf %s type 1155\nvf %s type 1156\n' "$VF3" "$VF2" >"$conf"
	run_captured "$TMP/out" "$TMP/err" gpuctl apply "$conf" && return 1
	grep -qx "gpuctl: apply: the card of $VF2 has VFs of another type; it takes one type at a time" "$TMP/err" &&
	grep -qx "$conf:2: cannot give $VF2 type 1156, rolling back" "$TMP/err" || return 1
	[ "$(vf_type "$VF3")" = 0 ] && [ "$(vf_type "$VF2")" = 0 ] &&
		[ "$(vf_type "$VF1")" = 1155 ]
}

# A VF that is not there yet is skipped with a note; the installed udev
# rule (pointed at this test's file and tool) applies the file again when
# nvidia binds it, once its PF enables it.
check_udev_late_vf() {
	local conf=$TMP/late.conf

	gpuctl vgpu set "$VF1" type none >/dev/null || return 1
	nl_rule_new "$VF4" driver nvidia || return 1
	printf 'vf %s type 1156\n' "$VF4" >"$conf"
	run_captured "$TMP/out" "$TMP/err" gpuctl apply "$conf" || return 1
	grep -qx "$conf:1: vendor VF $VF4 is not there yet; its type is set when it appears" \
		"$TMP/err" || return 1

	gpuctl_udevd_start "$conf" || return 1
	echo 0 >"$SYS_PCI/$PF/sriov_numvfs" && echo 4 >"$SYS_PCI/$PF/sriov_numvfs" ||
		return 1
	expect_pci_driver "$VF4" nvidia 10 || return 1
	udevadm settle -t 30
	wait_for 30 eval '[ "$(vf_type "$VF4")" = 1156 ]' ||
		{ echo "udev did not give $VF4 type 1156: $(vf_type "$VF4")"; return 1; }
	# the others keep none
	[ "$(vf_type "$VF1")" = 0 ] && [ "$(vf_type "$VF3")" = 0 ]
}

ktap_header
ktap_plan 10
ktap_run_stage "vendor VFs on nvidia, reserved by their rules, no type" check_setup
ktap_run_stage "a nvidia rule blocks the PF and never unbinds it" check_pf_blocked
ktap_run_stage "dev show: the VGPU column and vgpu_type" check_dev_show
ktap_run_stage "vgpu types: the PF's types, with the VFs that can take each" check_types
ktap_run_stage "vgpu set: by id and by name, the card's one type" check_set
ktap_run_stage "refusals name the reason and change nothing" check_refusals
ktap_run_stage "an allocated VF keeps its type" check_allocated
ktap_run_stage "a nested QEMU opens a typed VF: refused while open; no type, no open" \
	check_open
ktap_run_stage "gpuctl apply: vf lines, idempotent, refusals roll back" check_apply
ktap_run_stage "a late VF: apply skips it, the udev rule types it when nvidia binds it" \
	check_udev_late_vf
ktap_finished
