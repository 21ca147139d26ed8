#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# vGPUs made and removed through gpuctl. The tool reads the mdev types and
# writes the mdev core's "create" and "remove" files; the module's view
# (mdev-get) confirms each change. The parents are the kernel's sample
# mdev drivers, built from Debian's linux-source of the running kernel:
# mbochs, whose three types share a 96 MB pool, and mtty. Sysfs and the
# kernel's YNL CLI (a client of the spec alone) are the independent
# witnesses:
#   - gpuctl vgpu types lists every type as sysfs has it, with capacity;
#   - vgpu add with a UUID creates that instance, shows it as mdev-get
#     does, announces it (mdev-add-ntf) and takes the pool's capacity;
#     without a UUID it makes a random (version 4) one;
#   - bad input (an unknown parent or type, a full type, a UUID in use, a
#     malformed UUID) is named in the error and changes nothing;
#   - two adds racing for the last instance: one gets it, the other is
#     told there is no capacity left;
#   - vgpu del removes the instance (mdev-del-ntf); an unknown UUID is the
#     kernel's error and changes nothing;
#   - gpuctl apply makes the vGPUs of a config file, and nothing the second
#     time; a UUID that exists as another type is an error, and a line
#     that fails removes what the run made before it, named as FILE:LINE;
#   - a parent that is not there yet: apply skips its vGPU and says so,
#     and the installed udev rule (run by a real systemd-udevd) makes it
#     when the parent registers;
#   - without the module, vgpu add refuses before it creates anything.

# Stage functions run through ktap_run_stage or a trap; json_check's jq
# filters name jq variables in single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

TMP=$(mktemp -d /tmp/test_vgpu_lifecycle.XXXXXX)
SAMPLES=${GPUCTL_MDEV_SAMPLES:-$GPUCTL_ROOT/build/$(uname -r)/mdev}
BUS=/sys/class/mdev_bus
MDEVS=/sys/bus/mdev/devices
U_LARGE=8e2f0c10-0000-4000-8000-0000000000a1
U_SMALL=8e2f0c10-0000-4000-8000-0000000000a2
U_MEDIUM=8e2f0c10-0000-4000-8000-0000000000a3
U_TTY=8e2f0c10-0000-4000-8000-0000000000a4
U_LATE=8e2f0c10-0000-4000-8000-0000000000a5
NTF_PID=

cleanup() {
	gpuctl_udevd_stop
	[ -n "$NTF_PID" ] && kill "$NTF_PID" 2>/dev/null
	mdevs_remove_all
	rmmod mbochs mtty 2>/dev/null
	grep -q '^gpuctl ' /proc/modules || gpuctl_load
	rm -rf "$TMP"
}
trap cleanup EXIT

# Every instance on the mdev bus, one UUID a line, sorted
mdevs_now() {
	find "$MDEVS" -mindepth 1 -maxdepth 1 -printf '%f\n' | LC_ALL=C sort
}

# What sysfs says of every type, in the shape of gpuctl -j vgpu types
sysfs_types() {
	local t parent desc

	for t in "$BUS"/*/mdev_supported_types/*; do
		parent=${t%/mdev_supported_types/*}
		desc=null
		[ -f "$t/description" ] && desc=$(jq -Rs 'rtrimstr("\n")' "$t/description")
		jq -n -c --arg parent "${parent##*/}" --arg type "${t##*/}" \
			--arg name "$(cat "$t/name")" \
			--arg api "$(cat "$t/device_api")" \
			--argjson avail "$(cat "$t/available_instances")" \
			--argjson desc "$desc" \
			'{parent: $parent, type: $type, name: $name,
			  device_api: $api, available_instances: $avail,
			  description: $desc, kind: "mdev"}'
	done | jq -s -S 'sort_by(.parent, .type)'
}

# gpuctl's types against sysfs, the description's fields left out
types_agree() {
	gpuctl -j vgpu types >"$TMP/types.json" || return 1
	jq -S '.vgpu_types | map(del(.max_instance, .framebuffer_mb,
		.num_heads, .max_resolution)) | sort_by(.parent, .type)' \
		"$TMP/types.json" >"$TMP/got" || return 1
	sysfs_types >"$TMP/want" || return 1
	diff -u "$TMP/want" "$TMP/got"
}

avail() {	# PARENT TYPE
	cat "$BUS/$1/mdev_supported_types/$2/available_instances"
}

check_setup() {
	grep -q '^gpuctl ' /proc/modules || gpuctl_load || return 1
	mdev_samples_load || return 1
	[ -z "$(mdevs_now)" ]
}

check_types() {
	types_agree || return 1
	# the pool starts at 24 small, 6 medium, 1 large
	json_check '.vgpu_types | map(select(.parent == "mbochs")) |
		map(.available_instances) == [1, 6, 24] and
		(map(.description) | all(test("MB video memory")))' \
		"$TMP/types.json" || return 1
	gpuctl vgpu types mtty >"$TMP/text" || return 1
	cat "$TMP/text"
	diff -u - "$TMP/text" <<-EOF || return 1
	mtty mtty-1 name "Single port serial" api vfio-pci available $(avail mtty mtty-1)
	mtty mtty-2 name "Dual port serial" api vfio-pci available $(avail mtty mtty-2)
	EOF
	# bash completion offers the parents, their types, then what is left
	completes "help mbochs mtty" gpuctl vgpu add '' &&
	completes "mbochs-large mbochs-medium mbochs-small" gpuctl vgpu add mbochs type '' &&
	completes "uuid" gpuctl vgpu add mbochs type mbochs-small ''
}

completes() {	# "WORDS" LINE...: completing LINE offers exactly WORDS
	local want=$1

	shift
	complete_words "$@" | sed '/^$/d' | LC_ALL=C sort >"$TMP/words" &&
	tr ' ' '\n' <<<"$want" | LC_ALL=C sort | diff -u - "$TMP/words"
}

# ntf_start SECONDS: YNL subscribed to "ledger" as root, for SECONDS at
# most; ntf_end: its mdev notifications, once the scenario is over.
ntf_start() {
	ynl_listen ledger "$1" >"$TMP/ntf" 2>"$TMP/ntf.err" &
	NTF_PID=$!
	wait_subscribed "$NTF_PID" "$(monitor_group_id ledger)"
}

ntf_end() {
	ynl_listen_end "$NTF_PID"
	NTF_PID=
	cat "$TMP/ntf.err"
	jq -c '.[] | select(.name | startswith("mdev-")) |
		[.name, .msg.uuid, .msg.type]' "$TMP/ntf"
}

check_add() {
	local group

	ntf_start 20 || return 1
	run_captured "$TMP/out" "$TMP/err" \
		gpuctl vgpu add mbochs type mbochs-large uuid "${U_LARGE^^}" || return 1
	[ -e "$MDEVS/$U_LARGE" ] || { echo "no $U_LARGE in sysfs"; return 1; }
	group=$(readlink "$MDEVS/$U_LARGE/iommu_group") || return 1
	grep -qx "$U_LARGE type mbochs-large name \"mbochs-large\" parent mbochs group ${group##*/} driver mbochs" \
		"$TMP/out" && [ "$(wc -l <"$TMP/out")" = 1 ] && [ ! -s "$TMP/err" ] || return 1
	# the module lists it, as the spec's client reads it
	ynl --do mdev-get --json "{\"uuid\": \"$U_LARGE\"}" >"$TMP/one" || return 1
	json_check '.type == "mbochs-large" and .parent == "mbochs" and
		.driver == "mbochs"' "$TMP/one" || return 1
	# the large type took 64 of 96 MB
	[ "$(avail mbochs mbochs-large)" = 0 ] && [ "$(avail mbochs mbochs-small)" = 8 ] &&
	types_agree || return 1

	gpuctl -j vgpu add mbochs type mbochs-small uuid "$U_SMALL" >"$TMP/small" || return 1
	jq -S '.vgpus[0] | del(.migration_compat) | with_entries(select(.value != null) |
		.key |= gsub("_"; "-")) | .open |= (if . then 1 else 0 end)' \
		"$TMP/small" >"$TMP/got" &&
	ynl --do mdev-get --json "{\"uuid\": \"$U_SMALL\"}" | jq -S . >"$TMP/want" &&
	diff -u "$TMP/want" "$TMP/got" || return 1

	ntf_end >"$TMP/events" || return 1
	cat "$TMP/events"
	diff -u - "$TMP/events" <<-EOF
	["mdev-add-ntf","$U_LARGE","mbochs-large"]
	["mdev-add-ntf","$U_SMALL","mbochs-small"]
	EOF
}

# refused REGEX EXIT ARGS...: gpuctl ARGS fails with EXIT and REGEX, and the
# mdev bus and the types are as they were.
refused() {
	local want=$1 code=$2 rc=0

	shift 2
	mdevs_now >"$TMP/before" && capacity >"$TMP/types.before" || return 1
	gpuctl "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
	echo "\$ gpuctl $*: exit $rc"
	cat "$TMP/out" "$TMP/err"
	[ "$rc" = "$code" ] || { echo "exit $rc, expected $code"; return 1; }
	grep -q -E -e "$want" "$TMP/err" || { echo "no '$want'"; return 1; }
	[ ! -s "$TMP/out" ] || return 1
	mdevs_now | diff -u "$TMP/before" - &&
	capacity | diff -u "$TMP/types.before" -
}

# Every type's available_instances, one "FILE:N" line each
capacity() {
	grep -H . "$BUS"/*/mdev_supported_types/*/available_instances
}

check_refusals() {
	refused "^gpuctl: vgpu add: mbochs has no capacity left for type mbochs-large$" 2 \
		vgpu add mbochs type mbochs-large || return 1
	refused "^gpuctl: vgpu add: mbochs has no mdev type \"mbochs-huge\" \(types: mbochs-large, mbochs-medium, mbochs-small\)$" 2 \
		vgpu add mbochs type mbochs-huge || return 1
	refused "^gpuctl: vgpu add: no mdev parent \"qxl\" \(parents: mbochs, mtty\)$" 2 \
		vgpu add qxl type mbochs-small || return 1
	refused "^gpuctl: vgpu add: mdev $U_SMALL exists already$" 2 \
		vgpu add mtty type mtty-1 uuid "$U_SMALL" || return 1
	refused "^gpuctl: vgpu add: malformed UUID \"8e2f0c10-0000\"$" 1 \
		vgpu add mtty type mtty-1 uuid 8e2f0c10-0000 || return 1
	refused "^gpuctl: vgpu types: no mdev parent \"qxl\"" 2 vgpu types qxl
}

check_generated() {
	local uuid

	gpuctl -j vgpu add mtty type mtty-1 >"$TMP/gen" || return 1
	cat "$TMP/gen"
	uuid=$(jq -r '.vgpus[0].uuid' "$TMP/gen") || return 1
	# version 4, RFC 4122 variant, as mdevctl makes them
	grep -qE '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' \
		<<<"$uuid" || { echo "not a v4 UUID: $uuid"; return 1; }
	[ "$(readlink "$MDEVS/$uuid/mdev_type")" ] &&
	[ "$(basename "$(readlink "$MDEVS/$uuid/mdev_type")")" = mtty-1 ] || return 1
	echo "$uuid" >"$TMP/gen.uuid"
}

# Two adds race for mbochs's last large instance: exactly one wins.
check_race() {
	local a b rc_a=0 rc_b=0

	echo 1 >"$MDEVS/$U_LARGE/remove" || return 1
	echo 1 >"$MDEVS/$U_SMALL/remove" || return 1
	[ "$(avail mbochs mbochs-large)" = 1 ] || return 1
	gpuctl -j vgpu add mbochs type mbochs-large >"$TMP/a" 2>"$TMP/a.err" & a=$!
	gpuctl -j vgpu add mbochs type mbochs-large >"$TMP/b" 2>"$TMP/b.err" & b=$!
	wait "$a" || rc_a=$?
	wait "$b" || rc_b=$?
	cat "$TMP/a" "$TMP/a.err" "$TMP/b" "$TMP/b.err"
	echo "exits $rc_a $rc_b"
	{ [ "$rc_a" = 0 ] && [ "$rc_b" = 2 ]; } ||
		{ [ "$rc_a" = 2 ] && [ "$rc_b" = 0 ]; } || return 1
	cat "$TMP/a.err" "$TMP/b.err" |
		grep -qx "gpuctl: vgpu add: mbochs has no capacity left for type mbochs-large" ||
		return 1
	[ "$(find "$BUS/mbochs/mdev_supported_types/mbochs-large/devices" -mindepth 1 | wc -l)" = 1 ] &&
	[ "$(ynl --dump mdev-get | jq 'map(select(.type == "mbochs-large")) | length')" = 1 ]
}

check_del() {
	local uuid

	uuid=$(cat "$TMP/gen.uuid") || return 1
	ntf_start 12 || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl vgpu del "$uuid" || return 1
	[ ! -s "$TMP/out" ] && [ ! -s "$TMP/err" ] && [ ! -e "$MDEVS/$uuid" ] || return 1
	ynl --dump mdev-get | jq -e --arg u "$uuid" 'map(select(.uuid == $u)) | length == 0' ||
		return 1
	ntf_end >"$TMP/events" || return 1
	cat "$TMP/events"
	diff -u - "$TMP/events" <<<"[\"mdev-del-ntf\",\"$uuid\",\"mtty-1\"]" || return 1

	refused "^Error: no such mdev: No such device$" 2 vgpu del "$uuid" &&
	grep -qx "gpuctl: cannot remove vGPU $uuid" "$TMP/err"
}

# gpuctl apply makes the vGPUs a config file declares, once; a line it
# cannot make is named, and what the run made before it is removed.
check_apply() {
	local conf=$TMP/gpuctl.conf rc=0

	printf 'vgpu mbochs type mbochs-medium uuid %s\nvgpu mtty type mtty-2 uuid %s  # console\n' \
		"$U_MEDIUM" "$U_TTY" >"$conf"
	run_captured "$TMP/out" "$TMP/err" gpuctl apply "$conf" || return 1
	diff -u - "$TMP/out" <<-EOF || return 1
	vgpu $U_MEDIUM type mbochs-medium parent mbochs
	vgpu $U_TTY type mtty-2 parent mtty
	EOF
	[ "$(basename "$(readlink "$MDEVS/$U_MEDIUM/mdev_type")")" = mbochs-medium ] &&
	[ "$(basename "$(readlink "$MDEVS/$U_TTY/mdev_type")")" = mtty-2 ] || return 1
	ynl --do mdev-get --json "{\"uuid\": \"$U_TTY\"}" >"$TMP/one" &&
	json_check '.type == "mtty-2" and .parent == "mtty"' "$TMP/one" || return 1

	# again: nothing to do, nothing printed
	mdevs_now >"$TMP/before" || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl -j apply "$conf" || return 1
	[ "$(cat "$TMP/out")" = '{"rules":[],"vfs":[],"vf_types":[],"vgpus":[]}' ] && [ ! -s "$TMP/err" ] &&
	mdevs_now | diff -u "$TMP/before" - || return 1

	# the UUID exists as another type: named, not replaced
	printf 'vgpu mtty type mtty-1 uuid %s\n' "$U_TTY" >"$conf"
	refused "^$conf:1: cannot make vgpu $U_TTY$" 2 apply "$conf" &&
	grep -qx "gpuctl: apply: mdev $U_TTY exists as type mtty-2 on mtty" "$TMP/err" ||
		return 1

	# the second line cannot be made: the first one's instance goes again
	printf 'vgpu mbochs type mbochs-small uuid %s\nvgpu mbochs type mbochs-large uuid %s\n' \
		"$U_SMALL" "$U_LARGE" >"$conf"
	refused "^$conf:2: cannot make vgpu $U_LARGE, rolling back$" 2 apply "$conf" &&
	grep -qx "gpuctl: apply: mbochs has no capacity left for type mbochs-large" "$TMP/err" ||
		return 1
	[ ! -e "$MDEVS/$U_SMALL" ] || rc=1
	# a file with an error changes nothing either, and says FILE:LINE
	printf 'vgpu mbochs type mbochs-small\n' >"$conf"
	refused "^$conf:1: uuid UUID is required" 1 apply "$conf" || return 1
	return "$rc"
}

# A parent that registers after gpuctl apply ran: apply skips its vGPU
# and says so; the installed udev rule (pointed at this test's file and
# tool) applies the file again when the mdev core announces the parent.
check_udev_late_parent() {
	local conf=$TMP/late.conf d

	for d in "$BUS"/mtty/mdev_supported_types/*/devices/*; do
		[ -e "$d/remove" ] && { echo 1 >"$d/remove" || return 1; }
	done
	rmmod mtty || return 1
	printf 'vgpu mtty type mtty-1 uuid %s\n' "$U_LATE" >"$conf"
	run_captured "$TMP/out" "$TMP/err" gpuctl apply "$conf" || return 1
	grep -qx "$conf:1: mdev parent mtty is not there yet; vgpu $U_LATE is made when it registers" \
		"$TMP/err" && [ ! -e "$MDEVS/$U_LATE" ] || return 1

	gpuctl_udevd_start "$conf" || return 1
	insmod "$SAMPLES/mtty.ko" || return 1
	udevadm settle -t 30
	wait_for_path 30 "$MDEVS/$U_LATE" || { echo "udev did not make $U_LATE"; return 1; }
	[ "$(basename "$(readlink "$MDEVS/$U_LATE/mdev_type")")" = mtty-1 ] &&
	ynl --do mdev-get --json "{\"uuid\": \"$U_LATE\"}" >/dev/null
}

check_no_module() {
	gpuctl_unload || return 1
	refused "^gpuctl: kernel module not loaded \(modprobe gpuctl\)$" 3 vgpu add mtty type mtty-2 || return 1
	gpuctl_load
}

ynl_start
ktap_header
ktap_plan 10
ktap_run_stage "mbochs and mtty loaded, no instance yet" check_setup
ktap_run_stage "vgpu types: every type as sysfs has it, with capacity" check_types
ktap_run_stage "vgpu add: the instance, its event and the pool it took" check_add
ktap_run_stage "refused: full type, unknown type and parent, UUID in use, malformed" \
	check_refusals
ktap_run_stage "vgpu add without a UUID makes a version 4 one" check_generated
ktap_run_stage "two adds race for the last instance: one gets it" check_race
ktap_run_stage "vgpu del: gone from sysfs and the dump, announced; unknown UUID" \
	check_del
ktap_run_stage "apply: declared vGPUs made once; a conflict or a failure rolls back" \
	check_apply
ktap_run_stage "a late parent: apply skips its vGPU, the udev rule makes it" \
	check_udev_late_parent
ktap_run_stage "without the module, vgpu add creates nothing" check_no_module
ktap_finished
