#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# Allocations of NVIDIA vendor VFs by type: "gpuctl alloc add owner U vgpu
# ID count N" picks free vendor VFs (reserved by a rule with driver nvidia,
# in no allocation, not open), first those that have type ID, then those
# that can take it, gives them the type and names them to alloc-new as
# "device-typed"; "alloc del" takes the types away unless told to keep
# them. The rig is selftests/modules/vgpu_test_vf.c on QEMU's SR-IOV nvme
# (4 VFs; a card takes one type: 4 of 1155, 2 of 1156 or 1 of 1157).
# Checked with sysfs and the kernel's YNL CLI:
#   - three VFs typed and allocated, each counted as a GPU, device-typed
#     in the ledger;
#   - all or nothing: a request the card cannot fill in full, or a type
#     the card cannot take, changes no VF;
#   - alloc del clears what it typed, keep keeps it, and a VF that had
#     the type already is used without a write and left with it;
#   - two requests at once get disjoint VFs, each typed by its holder;
#     a request whose VF another took first is refused EBUSY and places
#     its VFs again (the race held open by hold_alloc_new.so);
#   - the module refuses device-typed for a function that is no VF;
#   - alloc save writes "dev VF typed", and restore brings the mark back.

# Stage functions run through ktap_run_stage or a trap; json_check's jq
# filters name jq variables in single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

SYS_PCI=/sys/bus/pci/devices
TMP=$(mktemp -d /tmp/test_vgpu_vendor_vf_alloc.XXXXXX)
SAMPLES=${GPUCTL_MDEV_SAMPLES:-$GPUCTL_ROOT/build/$(uname -r)/mdev}
PF=0000:11:00.0
HOLD_SO=$(dirname "$(command -v gpuctl-nl)")/hold_alloc_new.so
VFS=(0000:11:00.1 0000:11:00.2 0000:11:00.3 0000:11:00.4)
GPU=0000:01:00.0
VM1=5a0e4b52-3f1c-4d4e-9a51-3c1f2a0b7d31
VM2=5a0e4b52-3f1c-4d4e-9a51-3c1f2a0b7d32

cleanup() {
	nl_allocs_cleanup
	nl_rules_cleanup
	vendor_vf_rig_stop
	rm -rf "$TMP"
}
trap cleanup EXIT

types() {	# the four VFs' types, on one line
	local vf

	for vf in "${VFS[@]}"; do
		printf '%s ' "$(vf_type "$vf")"
	done
}

alloc_field() {	# ID FIELD: per YNL alloc-get, as JSON
	ynl --do alloc-get --json "{\"id\": $1}" | jq -c ".[\"$2\"]"
}

check_setup() {
	local vf

	grep -q '^gpuctl ' /proc/modules || gpuctl_load || return 1
	vendor_vf_rig_start || return 1
	for vf in "${VFS[@]}"; do
		nl_rule_new "$vf" driver nvidia || return 1
	done
	echo 4 >"$SYS_PCI/$PF/sriov_numvfs" || return 1
	for vf in "${VFS[@]}"; do
		expect_pci_driver "$vf" nvidia 5 && nl_dev_has "$vf" state=reserved ||
			return 1
	done
	[ "$(types)" = "0 0 0 0 " ] || return 1
	# completion offers the vendor VF types after "vgpu"
	[ "$(complete_words gpuctl alloc add owner "$VM1" vgpu '' | sed '/^$/d' |
		grep -E '^[0-9]+$' | tr '\n' ' ')" = "1155 1156 1157 " ]
}

check_alloc() {
	local id

	gpuctl -j alloc add owner "$VM1" vgpu 1155 count 3 >"$TMP/a" || return 1
	cat "$TMP/a"
	json_check --arg a "${VFS[0]}" --arg b "${VFS[1]}" --arg c "${VFS[2]}" '
		.allocations[0] | .devices == [$a, $b, $c] and
		.vf_typed == [$a, $b, $c] and .gpus == 3 and .vgpus == []' \
		"$TMP/a" || return 1
	[ "$(types)" = "1155 1155 1155 0 " ] || { types; return 1; }
	id=$(jq '.allocations[0].id' "$TMP/a") && echo "$id" >"$TMP/a.id" || return 1
	# the kernel's ledger, read by the independent client
	[ "$(alloc_field "$id" device-typed)" = \
		"[\"${VFS[0]}\",\"${VFS[1]}\",\"${VFS[2]}\"]" ] &&
	[ "$(alloc_field "$id" gpus)" = 3 ] || return 1
	gpuctl alloc show "$id" | grep -q "devices: ${VFS[0]} (typed) ${VFS[1]} (typed) ${VFS[2]} (typed)$"
}

check_all_or_nothing() {
	# one VF left: two asked for; the one typed on the way is cleared again
	run_captured "$TMP/out" "$TMP/err" gpuctl alloc add owner "$VM2" vgpu 1155 count 2 &&
		return 1
	grep -qx "gpuctl: alloc add: no free vendor VF can take type 1155 (got 1 of 2)" \
		"$TMP/err" || return 1
	[ "$(types)" = "1155 1155 1155 0 " ] || { types; return 1; }
	# the card has 1155: 1156 fits nowhere
	run_captured "$TMP/out" "$TMP/err" gpuctl alloc add owner "$VM2" vgpu 1156 &&
		return 1
	grep -qx "gpuctl: alloc add: no free vendor VF can take type 1156 (got 0 of 1)" \
		"$TMP/err" && [ "$(types)" = "1155 1155 1155 0 " ] || return 1
	# a type neither mdevs nor VFs have
	run_captured "$TMP/out" "$TMP/err" gpuctl alloc add owner "$VM2" vgpu 4242 &&
		return 1
	grep -q "no free vendor VF can take type 4242" "$TMP/err" &&
	[ "$(gpuctl-nl alloc-dump | grep -c "owner=$VM2")" = 0 ]
}

check_del() {
	local id

	id=$(cat "$TMP/a.id") || return 1
	gpuctl alloc del "$id" || return 1
	[ "$(types)" = "0 0 0 0 " ] || { types; return 1; }
	# keep: the types stay; a later request takes those VFs as they are
	gpuctl -j alloc add owner "$VM1" vgpu 1156 count 2 >"$TMP/a" || return 1
	id=$(jq '.allocations[0].id' "$TMP/a") || return 1
	gpuctl alloc del "$id" keep && [ "$(types)" = "1156 1156 0 0 " ] || return 1
	gpuctl -j alloc add owner "$VM2" vgpu 1156 count 2 >"$TMP/a" || return 1
	json_check --arg a "${VFS[0]}" --arg b "${VFS[1]}" '.allocations[0] |
		.devices == [$a, $b] and .vf_typed == []' "$TMP/a" || return 1
	id=$(jq '.allocations[0].id' "$TMP/a") || return 1
	[ "$(alloc_field "$id" device-typed)" = null ] || return 1
	gpuctl alloc del "$id" && [ "$(types)" = "1156 1156 0 0 " ] || return 1
	gpuctl vgpu set "${VFS[0]}" type none && gpuctl vgpu set "${VFS[1]}" type none &&
		[ "$(types)" = "0 0 0 0 " ]
}

# Two requests for two VFs each at once: each gets two of the four, none
# twice, and every VF is typed by the one request that holds it.
check_race() {
	local pids=() i id n=0

	for i in 1 2; do
		gpuctl -j alloc add owner "$VM1" vgpu 1155 count 2 >"$TMP/r$i" 2>"$TMP/e$i" &
		pids+=($!)
	done
	for i in 1 2; do
		wait "${pids[$((i - 1))]}" || { cat "$TMP/e$i"; return 1; }
	done
	jq -r '.allocations[0].vf_typed[]' "$TMP/r1" "$TMP/r2" | sort >"$TMP/typed"
	cat "$TMP/typed"
	[ "$(sort -u "$TMP/typed" | wc -l)" = 4 ] && [ "$(types)" = "1155 1155 1155 1155 " ] ||
		return 1
	for i in 1 2; do
		id=$(jq '.allocations[0].id' "$TMP/r$i") || return 1
		[ "$(alloc_field "$id" device-typed | jq length)" = 2 ] || return 1
		gpuctl alloc del "$id" && n=$((n + 1))
	done
	[ "$n" = 2 ] && [ "$(types)" = "0 0 0 0 " ]
}

# race_lost: a request for one VF of 1155 is held before its alloc-new
# (selftests/hold_alloc_new.c) while another owner takes the VF it placed,
# VF 0. The kernel refuses the request EBUSY, and the tool places it
# again: it gets VF 1, typed by it, and VF 0 keeps type 1155, which the
# other owner took it with.
race_lost() {
	local pid

	rm -f "$TMP/hold.held" "$TMP/hold.go"
	GPUCTL_HOLD=$TMP/hold LD_PRELOAD=$HOLD_SO \
		gpuctl -j alloc add owner "$VM2" vgpu 1155 >"$TMP/r" 2>"$TMP/e" &
	pid=$!
	wait_for 30 test -e "$TMP/hold.held" || { kill "$pid"; return 1; }
	[ "$(types)" = "1155 0 0 0 " ] || { types; kill "$pid"; return 1; }
	ynl --do alloc-new --json "{\"owner\": \"$VM1\", \"device\": [\"${VFS[0]}\"]}" ||
		{ kill "$pid"; return 1; }
	touch "$TMP/hold.go"
	wait "$pid" || { cat "$TMP/e"; return 1; }
	cat "$TMP/r" "$TMP/e"
	json_check --arg b "${VFS[1]}" '.allocations[0] |
		.devices == [$b] and .vf_typed == [$b]' "$TMP/r" &&
	[ "$(gpuctl-nl alloc-dump | grep -c "owner=$VM2")" = 1 ] &&
	[ "$(types)" = "1155 1155 0 0 " ] || return 1
	gpuctl alloc del owner "$VM2" && [ "$(types)" = "1155 0 0 0 " ] &&
	gpuctl alloc del owner "$VM1" && [ "$(types)" = "1155 0 0 0 " ]
}

check_race_lost() {
	# VF 0 untyped: the held request typed it
	race_lost || return 1
	# VF 0 typed already, by the first round: taken without a write
	race_lost || return 1
	gpuctl vgpu set "${VFS[0]}" type none >/dev/null &&
		[ "$(types)" = "0 0 0 0 " ]
}

check_not_vf() {
	nl_rule_new "$GPU" take || return 1
	cmd_fails "$GPU is no VF: only a vendor VF is typed" \
		ynl --do alloc-new --json "{\"owner\": \"$VM2\", \"device-typed\": [\"$GPU\"]}" &&
		out_has "error: -22"
}

check_save_restore() {
	local id

	gpuctl -j alloc add owner "$VM1" vgpu 1157 >"$TMP/a" || return 1
	id=$(jq '.allocations[0].id' "$TMP/a") || return 1
	gpuctl alloc save "$TMP/ledger" || return 1
	cat "$TMP/ledger"
	grep -qx "alloc add owner $VM1 dev ${VFS[0]} typed id $id" "$TMP/ledger" ||
		return 1
	# gone, but the type kept, as a module reload would leave it
	gpuctl alloc del "$id" keep && [ "$(types)" = "1157 0 0 0 " ] || return 1
	gpuctl alloc restore "$TMP/ledger" || return 1
	[ "$(alloc_field "$id" device-typed)" = "[\"${VFS[0]}\"]" ] || return 1
	gpuctl alloc del "$id" && [ "$(types)" = "0 0 0 0 " ]
}

ynl_start
ktap_header
ktap_plan 8
ktap_run_stage "four vendor VFs, reserved on nvidia, no type; completion offers their types" \
	check_setup
ktap_run_stage "vgpu 1155 count 3: three VFs typed, allocated, device-typed" check_alloc
ktap_run_stage "all or nothing: too few VFs or a type the card refuses changes none" \
	check_all_or_nothing
ktap_run_stage "alloc del clears what it typed; keep keeps; typed VFs reused as they are" \
	check_del
ktap_run_stage "two requests at once: disjoint VFs, each typed by its holder" check_race
ktap_run_stage "a VF another request takes first: EBUSY, placed again" \
	check_race_lost
ktap_run_stage "device-typed on a function that is no VF: EINVAL" check_not_vf
ktap_run_stage "alloc save writes dev VF typed; restore brings the mark back" \
	check_save_restore
ktap_finished
