#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# mdev instances (vGPUs) in gpuctl's inventory. The parents are the
# kernel's own sample mdev drivers, built from Debian's linux-source of
# the running kernel (scripts/build-mdev-samples.sh): mbochs, a display
# with typed framebuffer sizes, and mtty, a serial port. The instances are made and removed through the mdev core's
# sysfs, as any other tool would; the kernel's YNL CLI (a client of the
# spec alone) reads gpuctl's view and its events, which must agree with
# sysfs:
#   - an instance made before gpuctl loads is listed (the load-time scan),
#     with its type, type name, parent, IOMMU group and driver as sysfs
#     has them; so is one a sysfs unbind left without driver (and without
#     group), until it is removed;
#   - instances made and removed while gpuctl runs come and go in the dump
#     and as mdev-add-ntf and mdev-del-ntf on "monitor", which an
#     unprivileged user may read, as the dump;
#   - mdev-get of one UUID, of an unknown one (ENODEV) and of a malformed
#     one (EINVAL), each with its message;
#   - gpuctl vgpu show: its JSON is the YNL dump, its text one line per
#     instance; an unknown UUID is the kernel's error (exit 2); bash
#     completion offers the live UUIDs;
#   - unloading a parent driver removes its instances from the inventory;
#     mdev.ko stays loaded while gpuctl follows its bus.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments; json_check's jq filters name jq variables in
# single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

TMP=$(mktemp -d /tmp/test_mdev.XXXXXX)
SAMPLES=${GPUCTL_MDEV_SAMPLES:-$GPUCTL_ROOT/build/$(uname -r)/mdev}
MBOCHS=/sys/class/mdev_bus/mbochs/mdev_supported_types
MTTY=/sys/class/mdev_bus/mtty/mdev_supported_types
MDEVS=/sys/bus/mdev/devices
# Fixed UUIDs, so that a failure names the instance.
U_EARLY=8e2f0c10-0000-4000-8000-000000000001
U_LATE=8e2f0c10-0000-4000-8000-000000000002
U_TTY=8e2f0c10-0000-4000-8000-000000000003
U_UNBOUND=8e2f0c10-0000-4000-8000-000000000004
NTF_PID=

cleanup() {
	local u

	[ -n "$NTF_PID" ] && kill "$NTF_PID" 2>/dev/null
	for u in "$U_EARLY" "$U_LATE" "$U_TTY" "$U_UNBOUND"; do
		[ -e "$MDEVS/$u" ] && echo 1 >"$MDEVS/$u/remove"
	done
	rmmod mbochs mtty 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# mdev_create DIR UUID: an instance of the type in DIR, through sysfs.
mdev_create() {
	echo "$2" >"$1/create" || return 1
	wait_for_path 10 "$MDEVS/$2"
}

# What sysfs says of instance UUID, in the shape of a YNL mdev-get reply
# to root; no VM opens it here.
sysfs_mdev() {	# UUID
	local d=$MDEVS/$1 type group driver

	type=$(readlink "$d/mdev_type") || return 1
	group=$(readlink "$d/iommu_group") || return 1
	driver=$(readlink "$d/driver") || return 1
	jq -n -S --arg uuid "$1" --arg type "${type##*/}" \
		--arg name "$(cat "$d/mdev_type/name")" \
		--arg parent "$(basename "$(readlink -f "$d/..")")" \
		--argjson group "${group##*/}" --arg driver "${driver##*/}" \
		'{uuid: $uuid, type: $type, "type-name": $name, parent: $parent,
		  "iommu-group": $group, driver: $driver, open: 0}'
}

# The dump, sorted by UUID, against sysfs for the UUIDs given (and no more).
dump_is() {	# UUID...
	local u

	ynl --dump mdev-get >"$TMP/dump" || return 1
	# what sysfs does not say: checked by check_migration
	jq -S 'sort_by(.uuid) | map(del(.migration))' "$TMP/dump" >"$TMP/got" || return 1
	for u in "$@"; do
		sysfs_mdev "$u" || return 1
	done | jq -s -S 'sort_by(.uuid)' >"$TMP/want" || return 1
	diff -u "$TMP/want" "$TMP/got"
}

check_setup() {
	local ko

	for ko in mbochs mtty; do
		[ -f "$SAMPLES/$ko.ko" ] || { echo "no $SAMPLES/$ko.ko"; return 1; }
	done
	# The instance must be older than gpuctl: the suite loaded it already.
	if grep -q '^gpuctl ' /proc/modules; then
		gpuctl_unload || return 1
	fi
	modprobe -a vfio_iommu_type1 mdev || return 1
	insmod "$SAMPLES/mbochs.ko" count=96 || return 1
	insmod "$SAMPLES/mtty.ko" || return 1
	# mbochs's large type takes 64 of the 96 MB, so one fits.
	mdev_create "$MBOCHS/mbochs-large" "$U_EARLY" || return 1
	# and one without driver: the scan lists it too
	mdev_create "$MBOCHS/mbochs-small" "$U_UNBOUND" &&
	write_to "$U_UNBOUND" /sys/bus/mdev/drivers/mbochs/unbind &&
	[ ! -e "$MDEVS/$U_UNBOUND/driver" ] || return 1
	gpuctl_load || return 1
	# gpuctl follows the mdev bus through mdev.ko, which stays while it does
	cmd_fails 'is in use' rmmod mdev
}

check_scan() {
	ynl --dump mdev-get >"$TMP/dump" || return 1
	# shellcheck disable=SC2016 # jq code, not shell
	json_check --arg u "$U_UNBOUND" 'map(select(.uuid == $u)) | length == 1 and
		.[0].type == "mbochs-small" and .[0].parent == "mbochs" and
		(.[0] | has("driver") | not) and (.[0] | has("iommu-group") | not)' \
		"$TMP/dump" || return 1
	write_to 1 "$MDEVS/$U_UNBOUND/remove" &&
	wait_for_no_path 10 "$MDEVS/$U_UNBOUND" || return 1
	dump_is "$U_EARLY" && json_check 'length == 1 and
		.[0].type == "mbochs-large" and .[0]["type-name"] == "mbochs-large"
		and .[0].parent == "mbochs" and .[0].driver == "mbochs"' "$TMP/got"
}

# ntf_start SECONDS: YNL subscribed to "monitor" as an unprivileged user,
# for SECONDS at most; ntf_end: its notifications, once the scenario is over.
ntf_start() {	# SECONDS
	ynl_listen monitor "$1" setpriv --reuid=nobody --regid=nogroup \
		--clear-groups >"$TMP/ntf" 2>"$TMP/ntf.err" &
	NTF_PID=$!
	wait_subscribed "$NTF_PID" "$(monitor_group_id monitor)"
}

ntf_end() {
	ynl_listen_end "$NTF_PID"
	NTF_PID=
	cat "$TMP/ntf.err"
	jq -c '.[] | [.name, .msg.uuid, .msg.type]' "$TMP/ntf"
}

check_events() {
	ntf_start 15 || return 1
	mdev_create "$MBOCHS/mbochs-small" "$U_LATE" || return 1
	mdev_create "$MTTY/mtty-2" "$U_TTY" || return 1
	echo 1 >"$MDEVS/$U_EARLY/remove" || return 1
	wait_for_no_path 10 "$MDEVS/$U_EARLY" || return 1
	dump_is "$U_LATE" "$U_TTY" || return 1
	json_check 'map(select(.type == "mtty-2"))[0]["type-name"] ==
		"Dual port serial"' "$TMP/got" || return 1
	# unprivileged readers get the dump too
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env PYTHONPATH="$YNL_DIR" /usr/bin/python3 "$YNL_DIR/cli.py" \
		--spec "$GPUCTL_SPEC" --no-schema --output-json \
		--dump mdev-get >"$TMP/nobody" || return 1
	# less whether it is open, which is root's, as a device's holder
	diff -u <(jq -S 'sort_by(.uuid) | map(del(.migration))' "$TMP/nobody") \
		<(jq -S 'map(del(.open))' "$TMP/got") || return 1

	ntf_end >"$TMP/events" || return 1
	cat "$TMP/events"
	diff -u - "$TMP/events" <<-EOF
	["mdev-add-ntf","$U_LATE","mbochs-small"]
	["mdev-add-ntf","$U_TTY","mtty-2"]
	["mdev-del-ntf","$U_EARLY","mbochs-large"]
	EOF
}

check_get() {
	ynl --do mdev-get --json "{\"uuid\": \"$U_LATE\"}" >"$TMP/one" || return 1
	diff -u <(sysfs_mdev "$U_LATE") <(jq -S 'del(.migration)' "$TMP/one") || return 1
	ynl_fails mdev-get "{\"uuid\": \"$U_EARLY\"}" | grep -q "'no such mdev'" &&
	grep -q 'error: -19' "$TMP/err" || return 1
	ynl_fails mdev-get '{"uuid": "8e2f0c10-0000-4000-8000-00000000000g"}' |
		grep -q "malformed uuid" && grep -q 'error: -22' "$TMP/err"
}

check_tool() {
	local rc=0 group

	gpuctl -j vgpu show >"$TMP/tool.json" || return 1
	# the tool's keys are the spec's names with "_" for "-"; null is absent
	jq -S '.vgpus | map(del(.migration_compat) | with_entries(select(.value != null) |
		.key |= gsub("_"; "-")) | if has("open") then
		.open |= (if . then 1 else 0 end) else . end |
		if .migration then .migration |= sort else . end) | sort_by(.uuid)' \
		"$TMP/tool.json" >"$TMP/tool" || return 1
	# the CLI gives flags as a set, in no order
	ynl --dump mdev-get | jq -S 'sort_by(.uuid) |
		map(if .migration then .migration |= sort else . end)' >"$TMP/ynl" || return 1
	diff -u "$TMP/ynl" "$TMP/tool" && json_check 'length == 2' "$TMP/tool" || return 1

	group=$(readlink "$MDEVS/$U_TTY/iommu_group") || return 1
	gpuctl vgpu show "$U_TTY" >"$TMP/text" || return 1
	cat "$TMP/text"
	grep -qx "$U_TTY type mtty-2 name \"Dual port serial\" parent mtty group ${group##*/} driver mtty\( migratable\)\?" \
		"$TMP/text" && [ "$(wc -l <"$TMP/text")" = 1 ] || return 1
	gpuctl vgpu show >"$TMP/text" || return 1
	[ "$(wc -l <"$TMP/text")" = 2 ] || return 1
	# bash completion offers the live UUIDs
	complete_words gpuctl vgpu show '' | sed '/^$/d' | LC_ALL=C sort >"$TMP/words" &&
	diff -u <(printf '%s\n' help "$U_LATE" "$U_TTY" | LC_ALL=C sort) "$TMP/words" || return 1

	run_captured "$TMP/out" "$TMP/err" gpuctl vgpu show "$U_EARLY" || rc=$?
	[ "$rc" = 2 ] && [ ! -s "$TMP/out" ] &&
	grep -qx "Error: no such mdev: No such device" "$TMP/err" &&
	grep -qx "gpuctl: cannot show vGPU $U_EARLY" "$TMP/err"
}

# What each driver registered for live migration, with the sample's own
# source as the witness: 6.12's mtty stop-copy, p2p, pre-copy and dirty
# tracking (samples/vfio-mdev/mtty.c, mtty_probe()), 6.1's mtty and
# mbochs nothing. The YNL CLI and the tool say the same; the tool adds
# the compatibility key and "migratable" in text.
check_migration() {
	local src want='[]' text

	src=$GPUCTL_ROOT/build/mdev-src/$(uname -r | cut -d. -f1-2)/mtty.c
	[ -f "$src" ] || { echo "no $src"; return 1; }
	grep -q 'vdev->mig_ops = &mtty_migration_ops' "$src" &&
		want='["dirty-tracking","p2p","pre-copy","stop-copy"]'
	echo "# mtty registers: $want"
	ynl --do mdev-get --json "{\"uuid\": \"$U_TTY\"}" >"$TMP/tty.json" || return 1
	json_check --argjson w "$want" '(.migration | sort) == $w' "$TMP/tty.json" ||
		return 1
	gpuctl -j vgpu show >"$TMP/v.json" || return 1
	json_check --arg t "$U_TTY" --arg l "$U_LATE" --argjson w "$want" '
		(.vgpus[] | select(.uuid == $t) | (.migration | sort) == $w and
		 (.migration_compat | test("^virtual:mtty/mtty-2/mtty@."))) and
		(.vgpus[] | select(.uuid == $l) | .migration == [] and
		 (.migration_compat | test("^virtual:mbochs/mbochs-.*/mbochs@.")))' \
		"$TMP/v.json" || return 1
	text=$(gpuctl vgpu show "$U_TTY") || return 1
	if [ "$want" = '[]' ]; then
		[[ $text != *" migratable" ]]
	else
		[[ $text == *" migratable" ]]
	fi
}

check_parent_gone() {
	rmmod mbochs || return 1
	dump_is "$U_TTY" || return 1
	rmmod mtty || return 1
	dump_is && json_check 'length == 0' "$TMP/got"
}

ynl_start
ktap_header
ktap_plan 7
ktap_run_stage "mbochs and mtty loaded, an instance made before gpuctl" check_setup
ktap_run_stage "the load-time scan lists the instances as sysfs has them, unbound too" \
	check_scan
ktap_run_stage "instances made and removed: dump and unprivileged events agree" \
	check_events
ktap_run_stage "mdev-get: one UUID, an unknown one (ENODEV), a malformed one" \
	check_get
ktap_run_stage "gpuctl vgpu show: JSON as YNL's, text, an unknown UUID, completion" check_tool
ktap_run_stage "migration: what mtty and mbochs registered, and the key" check_migration
ktap_run_stage "parent drivers unloaded: their instances leave the inventory" \
	check_parent_gone
ktap_finished
