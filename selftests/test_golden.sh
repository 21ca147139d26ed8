#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# Golden notifications. The kernel's YNL code, subscribed to "ledger" the
# way its CLI's --subscribe is, records fixed scenarios; each capture,
# normalised with jq, must equal selftests/json/NAME.json:
#   rebind-remove    unbind and bind the first bochs GPU, remove the HDA
#                    companion;
#   reserve-release  a rule for the GPU no driver binds (05:00.0) binds it
#                    to vfio-pci, its deletion releases it.
# gpuctl -j monitor records the same scenarios and must agree with the
# CLI. The golden files hold the expected events for the "full" topology,
# checked by hand; with
# GPUCTL_GOLDEN_UPDATE=1 the capture is also written to $GPUCTL_OUT, to
# review when the topology or the ABI changes.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments; json_check's jq filters name jq variables in
# single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

JSON_DIR=$GPUCTL_ROOT/selftests/json
SYS_PCI=/sys/bus/pci/devices
# The longest the listener waits for the scenario to end, also on a loaded
# host where TCG guests crawl.
LISTEN=${GPUCTL_GOLDEN_LISTEN:-90}
TMP=$(mktemp -d /tmp/test_golden.XXXXXX)
PIDS=()
RESTORE=()

cleanup() {
	local p r

	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	# undo what a failed scenario left behind
	for r in "${RESTORE[@]}"; do
		eval "$r" >/dev/null 2>&1
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

# Normalised events: the notification name and every attribute that is
# the same on every run of the topology. The IOMMU group number is the
# only one that the IOMMU core picks, rule ids depend on the rules made
# before; both are kept as "present".
# shellcheck disable=SC2016 # jq code, not shell
JQ_NORM='def hex($w): [recurse(if . >= 16 then ./16 | floor else empty end) | . % 16] |
		map("0123456789abcdef"[.:. + 1]) | reverse | join("") |
		if length < $w then ("0" * ($w - length)) + . else . end;
	map({name, msg: (.msg |
		if has("iommu-group") then .["iommu-group"] = "present" else . end |
		if has("rule") then .rule = "present" else . end |
		if has("match") then .id = "present" else
		.["vendor-id"] |= hex(4) | .["device-id"] |= hex(4) |
		.["subsystem-vendor-id"] |= hex(4) |
		.["subsystem-device-id"] |= hex(4) |
		.class |= hex(6) | .revision |= hex(2) end)})'

# gpuctl's monitor lines in the CLI's shape: rules with their lists under
# the attribute's name and flags present only when set, devices with
# reserved as a number.
# shellcheck disable=SC2016 # jq code, not shell
JQ_TOOL='def hexnum: if type == "number" then . else
	ltrimstr("0x") | ascii_downcase | explode |
	reduce .[] as $c (0; . * 16 + (if $c >= 97 then $c - 87 else $c - 48 end)) end;
	def rule: {id, match, driver, source} +
		(if .force then {force: true} else {} end) +
		(if .take then {take: true} else {} end) +
		(if (.devices // []) == [] then {} else {device: .devices} end) +
		(if (.warnings // []) == [] then {} else {warning: .warnings} end);
	map(if (.name | startswith("rule-")) then {name, msg: (.msg | rule)} else
	    {name, msg: (.msg | del(.vendor, .device) |
		with_entries(.key |= gsub("_"; "-")) |
		with_entries(select(.value != null)) |
		.reserved |= (if type == "boolean" then (if . then 1 else 0 end) else . end) |
		.["vendor-id"] |= hexnum | .["device-id"] |= hexnum |
		.["subsystem-vendor-id"] |= hexnum |
		.["subsystem-device-id"] |= hexnum |
		.class |= hexnum | .revision |= hexnum)} end)'

find_by_driver() {	# DRIVER: the first device bound to it
	local d

	for d in "$SYS_PCI"/*; do
		[ -e "$d/driver" ] || continue
		[ "$(basename "$(readlink "$d/driver")")" = "$1" ] && { echo "${d##*/}"; return; }
	done
}

# Scenarios. Each prints nothing and leaves the system as it found it.
scenario_rebind_bochs() {
	local a

	a=$(find_by_driver bochs-drm)
	[ -n "$a" ] || return 1
	RESTORE+=("echo $a > /sys/bus/pci/drivers/bochs-drm/bind")
	write_to "$a" "$SYS_PCI/$a/driver/unbind"
	write_to "$a" /sys/bus/pci/drivers/bochs-drm/bind
}

# The rescan that brings the HDA back is not part of the golden scenario:
# where a re-added function lands is the IOMMU core's decision, and on
# Debian's 6.1 and 6.12 a function hot-added alone gets a group of its own
# (pci_scan_slot() marks it multifunction only after device_add()). So the
# HDA comes back as a separate group, not as the GPU's companion, and
# check_rescan_hda() holds the module to whatever the kernel decided.
scenario_remove_hda() {
	HDA=$(find_by_driver snd_hda_intel)
	[ -n "$HDA" ] || return 1
	RESTORE+=("echo 1 > /sys/bus/pci/rescan")
	write_to 1 "$SYS_PCI/$HDA/remove"
	[ ! -e "$SYS_PCI/$HDA" ]
}

group_of() {	# ADDRESS: its IOMMU group number, empty when none
	local g

	g=$(readlink "$SYS_PCI/$1/iommu_group") || return 0
	echo "${g##*/}"
}

# After the rescan the HDA is tracked, as its GPU's companion, exactly when
# the kernel put it back into the GPU's IOMMU group.
check_rescan_hda() {
	local gpu=${HDA%.*}.0 tracked want=absent

	write_to 1 /sys/bus/pci/rescan
	wait_for_path 30 "$SYS_PCI/$HDA" || { echo "$HDA did not come back"; return 1; }
	# gpuctl decided when the device was added; its driver binding
	# after that is the last event of the rescan
	wait_for_driver 30 "$HDA" snd_hda_intel ||
		{ echo "$HDA is back on '$(pci_driver_of "$HDA")', not snd_hda_intel"; return 1; }
	if [ -n "$(group_of "$HDA")" ] && [ "$(group_of "$HDA")" = "$(group_of "$gpu")" ]; then
		want=companion
	fi
	tracked=$(gpuctl -j dev show | jq -r --arg a "$HDA" \
		'[.devices[] | select(.address == $a) | .role] | first // "absent"')
	echo "$HDA: group $(group_of "$HDA"), GPU $gpu: group $(group_of "$gpu");" \
		"expected $want, gpuctl says $tracked"
	[ "$tracked" = "$want" ]
}

# Until FILE has not grown for a second (at most 100 s): the events of a
# scenario have all arrived.
wait_quiet() {	# FILE
	local size last=-1 _

	for _ in $(seq 100); do
		size=$(stat -c %s "$1") || return 1
		[ "$size" = "$last" ] && return 0
		last=$size
		sleep 1
	done
	echo "$1 still growing after 100 s"
	return 1
}

capture() {	# NAME SCENARIO
	local name=$1 scen=$2 gid ypid tpid

	gid=$(monitor_group_id ledger)
	[ -n "$gid" ] || { echo "no monitor group"; return 1; }
	echo "monitor group id $gid"
	gpuctl -j monitor >"$TMP/$name.tool" 2>"$TMP/$name.tool.err" &
	tpid=$!
	PIDS+=("$tpid")
	wait_subscribed "$tpid" "$gid" || { echo "gpuctl monitor did not subscribe"; return 1; }
	ynl_listen ledger "$LISTEN" >"$TMP/$name.ynl" 2>"$TMP/$name.ynl.err" &
	ypid=$!
	PIDS+=("$ypid")
	wait_subscribed "$ypid" "$gid" || { echo "YNL listener did not subscribe"; return 1; }
	"$scen" || { echo "scenario $scen failed"; return 1; }
	# the last events are in once the tool, on the same group, hears no more
	wait_quiet "$TMP/$name.tool" || return 1
	# A capture that ended before the scenario did would miss events.
	kill -0 "$ypid" 2>/dev/null ||
		{ echo "the scenario outlasted the listener's $LISTEN s"; return 1; }
	ynl_listen_end "$ypid" || { cat "$TMP/$name.ynl.err"; return 1; }
	kill -TERM "$tpid"
	wait "$tpid" || { echo "gpuctl monitor: exit $?"; return 1; }
	echo "YNL:"
	cat "$TMP/$name.ynl"
	echo "gpuctl:"
	cat "$TMP/$name.tool"
	jq -S "$JQ_NORM" "$TMP/$name.ynl" >"$TMP/$name.norm" || return 1
	jq -s "$JQ_TOOL" "$TMP/$name.tool" | jq -S "$JQ_NORM" >"$TMP/$name.tnorm"
}

check_golden() {	# NAME
	local name=$1

	if [ "${GPUCTL_GOLDEN_UPDATE:-0}" = 1 ]; then
		cp "$TMP/$name.norm" "$GPUCTL_OUT/$name.json"
		echo "wrote $GPUCTL_OUT/$name.json"
	fi
	diff -u "$JSON_DIR/$name.json" "$TMP/$name.norm"
}

check_agree() {	# NAME
	diff -u "$TMP/$1.norm" "$TMP/$1.tnorm" && json_check 'length > 0' "$TMP/$1.norm"
}

# The scenario of json/rebind-remove.json.
scenario_rebind_remove() {
	scenario_rebind_bochs && scenario_remove_hda
}

# The scenario of json/reserve-release.json, through gpuctl-nl. Both
# requests return once gpuctl acted, so the events are all sent by then.
FREE_GPU=0000:05:00.0
scenario_reserve_release() {
	local id

	[ -z "$(readlink "$SYS_PCI/$FREE_GPU/driver")" ] || return 1
	gpuctl-nl rule-new "$FREE_GPU" >"$TMP/rule" || return 1
	id=$(sed -n 's/^rule id=\([0-9]*\) .*/\1/p' "$TMP/rule")
	RESTORE+=("gpuctl-nl rule-del id $id")
	wait_for_driver 15 "$FREE_GPU" vfio-pci || return 1
	gpuctl-nl rule-del id "$id" || return 1
	wait_for 15 test ! -e "$SYS_PCI/$FREE_GPU/driver"
}

run_golden() {	# NAME SCENARIO
	local name=$1

	if ktap_run_stage "$name: scenario captured by YNL CLI and gpuctl" \
		capture "$name" "$2"; then
		ktap_run_stage "$name: YNL capture equals json/$name.json" \
			check_golden "$name"
		ktap_run_stage "$name: gpuctl -j monitor agrees with YNL" check_agree "$name"
	else
		ktap_fail "$name: YNL capture equals json/$name.json"
		ktap_fail "$name: gpuctl -j monitor agrees with YNL"
	fi
}

ktap_header
ktap_plan 7
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
ynl_start

run_golden rebind-remove scenario_rebind_remove
ktap_run_stage "rescanned HDA tracked iff back in its GPU's IOMMU group" check_rescan_hda
run_golden reserve-release scenario_reserve_release

gpuctl_unload
ktap_finished
