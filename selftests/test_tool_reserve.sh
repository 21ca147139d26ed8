#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# The gpuctl tool's reservation commands against the module: reserve add,
# del and show, the reservation fields of dev show, monitor's rule events
# and actions, and apply with its config file (idempotence, a conflicting
# rule, rollback after a failed add, the modprobe line, an unprivileged
# caller). What the tool prints is checked against sysfs and against the
# independent client gpuctl-nl, never against the tool alone.
#
# Devices of the "full" topology (topologies/full): 02:00.0 and 05:00.0
# without a driver, 03:00.0 on qxl, 04:00.0 on cirrus, 07:00.0 bochs + 07:00.1 HDA in one
# group, 09:01.0 bochs + 09:02.0 e1000 behind one bridge, in one group.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments; json_check's jq filters name jq variables in
# single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

SYS_PCI=/sys/bus/pci/devices
TMP=$(mktemp -d /tmp/test_tool_reserve.XXXXXX)
CONF=$TMP/gpuctl.conf
MON_PID=
VFIO_PID=
OVERRIDDEN=

FREE=0000:05:00.0
FREE2=0000:02:00.0
QXL=0000:03:00.0
BYHAND=0000:04:00.0
BYHAND_DRV=
MF_GPU=0000:07:00.0
MF_HDA=0000:07:00.1
PB_GPU=0000:09:01.0
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

cleanup() {
	local id

	[ -n "$VFIO_PID" ] && kill "$VFIO_PID" 2>/dev/null
	[ -n "$MON_PID" ] && kill "$MON_PID" 2>/dev/null
	wait 2>/dev/null
	for id in $(gpuctl-nl rule-dump 2>/dev/null | sed -n 's/^rule id=\([0-9]*\) .*/\1/p'); do
		gpuctl-nl rule-del id "$id" >/dev/null 2>&1
	done
	if [ -n "$OVERRIDDEN" ]; then
		echo > "$SYS_PCI/$OVERRIDDEN/driver_override"
		[ -e "$SYS_PCI/$OVERRIDDEN/driver" ] &&
			echo "$OVERRIDDEN" > "$SYS_PCI/$OVERRIDDEN/driver/unbind"
		echo "$OVERRIDDEN" > /sys/bus/pci/drivers_probe
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

drv_of() {	# ADDR: its driver per sysfs, empty when none
	local l

	l=$(readlink "$SYS_PCI/$1/driver") || return 0
	echo "${l##*/}"
}

expect_driver() {	# ADDR DRIVER [SECONDS]: "" = no driver
	if ! wait_for "${3:-0}" _driver_is "$1" "$2"; then
		echo "$1 is on '$(drv_of "$1")', want '$2'"
		return 1
	fi
	echo "$1 on '$2'"
}

# The rules in gpuctl-nl's line format, from the tool's JSON on stdin
rules_as_nl() {
	jq -r '.rules[] | "rule id=\(.id) match=\(.match) driver=\(.driver)" +
		(if .force then " force=1" else "" end) +
		(if .take then " take=1" else "" end) +
		" source=\(.source) devices=\(.devices | join(","))" +
		([.warnings[] | " warning=" + .] | join("")) +
		(if (.orphans | length) > 0
		 then " orphans=" + (.orphans | join(",")) else "" end)'
}

rule_id() {	# MATCH: the id gpuctl-nl sees for it
	gpuctl-nl rule-dump | sed -n "s/^rule id=\([0-9]*\) match=$1 .*/\1/p"
}

# --- stages ---------------------------------------------------------------

check_add_json() {
	run_captured "$TMP/out" "$TMP/err" gpuctl -j reserve add "${FREE#0000:}" || return 1
	json_check --arg a "$FREE" '.rules | length == 1 and
		(.[0] | .match == $a and .driver == "vfio-pci" and
		 .force == false and .take == false and .source == "netlink" and
		 .devices == [$a] and .warnings == [] and (.id | type) == "number")' \
		"$TMP/out" || return 1
	[ ! -s "$TMP/err" ] || return 1
	# the reply came after enforcement: no waiting
	expect_driver "$FREE" vfio-pci || return 1
	rules_as_nl <"$TMP/out" >"$TMP/tool" &&
	gpuctl-nl rule-dump | grep " match=$FREE " >"$TMP/nl" &&
	diff -u "$TMP/nl" "$TMP/tool"
}

check_show() {
	gpuctl -j reserve show | rules_as_nl >"$TMP/tool" || return 1
	gpuctl-nl rule-dump >"$TMP/nl" || return 1
	diff -u "$TMP/nl" "$TMP/tool" || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl reserve show "$(rule_id "$FREE")" || return 1
	printf 'rule %s match %s driver vfio-pci source netlink\n  devices: %s\n' \
		"$(rule_id "$FREE")" "$FREE" "$FREE" | diff -u - "$TMP/out"
}

check_dev_show() {
	local id

	id=$(rule_id "$FREE")
	gpuctl -j dev show "$FREE" >"$TMP/out" || return 1
	cat "$TMP/out"
	json_check --argjson id "$id" '.devices | length == 1 and
		(.[0] | .reserved == true and .state == "reserved" and .rule == $id and
		 has("state_reason") and .state_reason == null and
		 has("action") and .action == null and
		 has("refused") and .refused == null)' "$TMP/out" || return 1
	gpuctl -j dev show "$QXL" | json_check '.devices | length == 1 and
		(.[0] | .reserved == false and .state == "free" and .rule == null)' ||
		return 1
	# the table: the STATE and RULE columns after DRIVER
	gpuctl dev show >"$TMP/table" || return 1
	head -n1 "$TMP/table" | grep -E '^ADDRESS +ROLE +DRIVER +STATE +RULE +IDS ' &&
	grep -E "^$FREE +gpu +vfio-pci +reserved +$id " "$TMP/table" &&
	grep -E "^$QXL +gpu +qxl +free +- " "$TMP/table"
}

check_add_exists() {
	local rc=0

	gpuctl-nl rule-dump >"$TMP/before" || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl reserve add "$FREE" driver pci-stub || rc=$?
	[ "$rc" = 2 ] && [ ! -s "$TMP/out" ] || return 1
	grep -q '^Error: .*: File exists$' "$TMP/err" &&
	grep -q "^gpuctl: cannot add rule $FREE\$" "$TMP/err" || return 1
	gpuctl-nl rule-dump | diff -u "$TMP/before" -
}

check_add_foreign_text() {
	local id

	run_captured "$TMP/out" "$TMP/err" gpuctl reserve add "$PB_GPU" || return 1
	id=$(rule_id "$PB_GPU")
	[ -n "$id" ] || return 1
	# human mode: the rule on stdout, its warnings on stderr only
	gpuctl-nl rule-dump | grep " match=$PB_GPU " >"$TMP/nl"
	grep -q ' warning=' "$TMP/nl" || { echo "the kernel gave no warning"; return 1; }
	grep -o ' warning=.*' "$TMP/nl" | sed 's/^ warning=//; s/ warning=/\n/g' |
		sed 's/^/Warning: /' | diff -u - "$TMP/err" || return 1
	printf 'rule %s match %s driver vfio-pci source netlink\n  devices: %s\n' \
		"$id" "$PB_GPU" "$PB_GPU" | diff -u - "$TMP/out" || return 1
	# held by bochs-drm, and dev show says so
	expect_driver "$PB_GPU" bochs-drm || return 1
	gpuctl -j dev show "$PB_GPU" | json_check --argjson id "$id" '.devices |
		length == 1 and (.[0] | .state == "held" and
		.state_reason == "bound to bochs-drm" and .rule == $id and
		.reserved == true)' || return 1
	gpuctl dev show | grep -E "^$PB_GPU .* held \(bound to bochs-drm\) +$id "
}

check_del_match() {
	run_captured "$TMP/out" "$TMP/err" gpuctl reserve del "${PB_GPU#0000:}" || return 1
	[ ! -s "$TMP/out" ] && [ ! -s "$TMP/err" ] || return 1
	[ -z "$(rule_id "$PB_GPU")" ] || return 1
	expect_driver "$PB_GPU" bochs-drm &&
	gpuctl -j dev show "$PB_GPU" | json_check '.devices | length == 1 and
		(.[0] | .state == "free" and .rule == null and .reserved == false)'
}

check_del_unknown() {
	local rc=0

	gpuctl-nl rule-dump >"$TMP/before" || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl reserve del 4000000000 || rc=$?
	[ "$rc" = 2 ] && grep -q '^Error: .*No such file or directory$' "$TMP/err" ||
		return 1
	gpuctl-nl rule-dump | diff -u "$TMP/before" -
}

# take, with gpuctl monitor running: rule-new, the actions, rule-del
check_take_monitor() {
	local id

	gpuctl -j monitor >"$TMP/mon" 2>"$TMP/mon.err" &
	MON_PID=$!
	wait_monitor_subscribed "$MON_PID" || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl -j reserve add "$MF_GPU" take || return 1
	id=$(rule_id "$MF_GPU")
	json_check --arg g "$MF_GPU" --arg h "$MF_HDA" '.rules | length == 1 and
		(.[0] | .take == true and (.devices | sort) == ([$g, $h] | sort))' \
		"$TMP/out" || return 1
	expect_driver "$MF_GPU" vfio-pci && expect_driver "$MF_HDA" vfio-pci || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl reserve del "$id" || return 1
	expect_driver "$MF_GPU" bochs-drm 30 && expect_driver "$MF_HDA" snd_hda_intel 30 ||
		return 1
	wait_for 20 grep -q "\"action\":\"released\"" "$TMP/mon"
	kill "$MON_PID"
	wait "$MON_PID"
	MON_PID=
	cat "$TMP/mon" "$TMP/mon.err"
	json_check --slurp --arg g "$MF_GPU" --argjson id "$id" '
		def ev($n): [.[] | select(.name == $n)];
		(ev("rule-new-ntf") | any(.msg.id == $id and .msg.match == $g and
					  .msg.take == true)) and
		(ev("rule-del-ntf") | any(.msg.id == $id)) and
		(ev("dev-change-ntf") | any(.msg.address == $g and
					    .msg.action == "taken")) and
		(ev("dev-change-ntf") | any(.msg.address == $g and
					    .msg.action == "released")) and
		([.[] | select(.name == "dev-change-ntf" and .msg.action != null)] |
		 all(.msg.action | IN("claimed", "bound", "restored", "taken",
				      "released", "blocked")))' "$TMP/mon"
}

check_apply_adds() {
	local before

	printf '# test\nreserve %s   # kept\n\nreserve %s\n' "${FREE#0000:}" \
		"$FREE2" >"$CONF"
	before=$(rule_id "$FREE")
	run_captured "$TMP/out" "$TMP/err" gpuctl -j apply "$CONF" || return 1
	json_check --arg a "$FREE2" '.rules | length == 1 and .[0].match == $a' \
		"$TMP/out" || return 1
	[ "$(rule_id "$FREE")" = "$before" ] && [ -n "$(rule_id "$FREE2")" ] &&
	expect_driver "$FREE2" vfio-pci
}

check_apply_again() {
	gpuctl-nl rule-dump >"$TMP/before" || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl apply "$CONF" || return 1
	[ ! -s "$TMP/out" ] && [ ! -s "$TMP/err" ] || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl -j apply "$CONF" || return 1
	[ "$(cat "$TMP/out")" = '{"rules":[],"vfs":[],"vf_types":[],"vgpus":[]}' ] || return 1
	gpuctl-nl rule-dump | diff -u "$TMP/before" -
}

check_apply_conflict() {
	local rc=0

	printf 'reserve %s\nreserve %s driver pci-stub\n' "$QXL" "$FREE" >"$CONF"
	gpuctl-nl rule-dump >"$TMP/before" || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl apply "$CONF" || rc=$?
	[ "$rc" = 1 ] || return 1
	grep -q "^$CONF:2: the kernel's rule $(rule_id "$FREE") for $FREE has driver vfio-pci, not driver pci-stub " \
		"$TMP/err" || return 1
	gpuctl-nl rule-dump | diff -u "$TMP/before" -
}

check_apply_syntax() {
	local rc=0

	printf 'reserve %s\nreserve %s driver nouveau\n' "$QXL" "$MF_GPU" >"$CONF"
	gpuctl-nl rule-dump >"$TMP/before" || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl apply "$CONF" || rc=$?
	[ "$rc" = 1 ] &&
	[ "$(cat "$TMP/err")" = "$CONF:2: driver nouveau is not a VFIO driver" ] ||
		return 1
	gpuctl-nl rule-dump | diff -u "$TMP/before" -
}

# A rule the kernel refuses after another was added: the GPU at $BYHAND,
# under no rule, moved to vfio-pci by hand and held open by vfio_open, so
# that a rule taking it for pci-stub fails with EBUSY.
check_apply_rollback() {
	local ids rc=0 _

	BYHAND_DRV=$(drv_of "$BYHAND")
	[ -n "$BYHAND_DRV" ] || return 1
	modprobe -a vfio-pci vfio_iommu_type1 || return 1
	OVERRIDDEN=$BYHAND
	write_to vfio-pci "$SYS_PCI/$BYHAND/driver_override"
	write_to "$BYHAND" "$SYS_PCI/$BYHAND/driver/unbind"
	write_to "$BYHAND" /sys/bus/pci/drivers_probe
	expect_driver "$BYHAND" vfio-pci 10 || return 1
	vfio_open "$BYHAND" >"$TMP/vfio" 2>&1 &
	VFIO_PID=$!
	for _ in $(seq 100); do
		grep -q '^open' "$TMP/vfio" && break
		kill -0 "$VFIO_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$TMP/vfio"
	grep -q '^open' "$TMP/vfio" || return 1

	ids=$(sed 's/^0x//' "$SYS_PCI/$BYHAND/vendor"):$(sed 's/^0x//' "$SYS_PCI/$BYHAND/device")
	printf 'reserve %s\nreserve %s driver pci-stub take\n' "$QXL" "$ids" >"$CONF"
	gpuctl-nl rule-dump >"$TMP/before" || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl apply "$CONF" || rc=$?
	[ "$rc" = 2 ] || return 1
	grep -q "^Error: .*: Device or resource busy$" "$TMP/err" &&
	grep -q "^$CONF:2: cannot add rule $ids, rolling back$" "$TMP/err" || return 1
	gpuctl-nl rule-dump | diff -u "$TMP/before" - || return 1
	expect_driver "$QXL" qxl 10
}

restore_byhand() {
	[ -n "$VFIO_PID" ] && { kill "$VFIO_PID"; wait "$VFIO_PID" 2>/dev/null; }
	VFIO_PID=
	[ -n "$OVERRIDDEN" ] || return 1
	OVERRIDDEN=
	write_to "" "$SYS_PCI/$BYHAND/driver_override"
	[ -e "$SYS_PCI/$BYHAND/driver" ] &&
		write_to "$BYHAND" "$SYS_PCI/$BYHAND/driver/unbind"
	write_to "$BYHAND" /sys/bus/pci/drivers_probe
	expect_driver "$BYHAND" "$BYHAND_DRV" 30
}

check_apply_unprivileged() {
	local rc=0

	printf 'reserve %s\nreserve 10DE:* driver pci-stub force take\n' "${QXL#0000:}" >"$CONF"
	chmod 644 "$CONF"
	chmod 755 "$TMP"
	run_captured "$TMP/out" "$TMP/err" "${NOBODY[@]}" gpuctl apply "$CONF" modprobe || return 1
	[ "$(cat "$TMP/out")" = "options gpuctl reserve=$QXL,10de:*@pci-stub+force+take" ] ||
		return 1
	run_captured "$TMP/out" "$TMP/err" "${NOBODY[@]}" gpuctl apply "$CONF" check || return 1
	[ ! -s "$TMP/out" ] || return 1
	gpuctl-nl rule-dump >"$TMP/before" || return 1
	run_captured "$TMP/out" "$TMP/err" "${NOBODY[@]}" gpuctl apply "$CONF" || rc=$?
	[ "$rc" = 2 ] && grep -q 'Operation not permitted' "$TMP/err" || return 1
	rc=0
	run_captured "$TMP/out" "$TMP/err" "${NOBODY[@]}" gpuctl reserve add "$QXL" || rc=$?
	[ "$rc" = 2 ] && grep -q 'Operation not permitted' "$TMP/err" || return 1
	gpuctl-nl rule-dump | diff -u "$TMP/before" -
}

check_del_all() {
	local id

	for id in $(gpuctl -j reserve show | jq -r '.rules[].id'); do
		gpuctl reserve del "$id" || return 1
	done
	[ "$(gpuctl -j reserve show)" = '{"rules":[]}' ] &&
	[ -z "$(gpuctl-nl rule-dump)" ] &&
	expect_driver "$FREE2" "" 30
}

ktap_header
ktap_plan 17
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }

ktap_run_stage "reserve add -j: the rule with its device, GPU on vfio-pci" check_add_json
ktap_run_stage "reserve show: the rules gpuctl-nl dumps; one rule as text" check_show
ktap_run_stage "dev show: reserved, state, rule in JSON and the table" check_dev_show
ktap_run_stage "reserve add: an existing match, exit 2 with the kernel's error" \
	check_add_exists
ktap_run_stage "reserve add: held GPU, the rule on stdout, Warning: on stderr" \
	check_add_foreign_text
ktap_run_stage "reserve del MATCH: the rule goes, the GPU stays on bochs-drm" check_del_match
ktap_run_stage "reserve del: an unknown id, exit 2, nothing changes" check_del_unknown
ktap_run_stage "reserve add take, del ID: monitor shows rule events and actions" \
	check_take_monitor
ktap_run_stage "apply: adds the file's new rules, keeps the kernel's" check_apply_adds
ktap_run_stage "apply: a second run changes nothing" check_apply_again
ktap_run_stage "apply: a rule with another driver is refused, nothing changes" \
	check_apply_conflict
ktap_run_stage "apply: FILE:LINE: on a bad line, nothing changes" check_apply_syntax
ktap_run_stage "apply: a failed add rolls back the rules this run added" \
	check_apply_rollback
ktap_run_stage "apply: the GPU vfio_open held goes back to its driver" restore_byhand
ktap_run_stage "apply as nobody: modprobe and check work, adding gets EPERM" \
	check_apply_unprivileged
ktap_run_stage "reserve del every rule: none left, devices released" check_del_all
ktap_run_stage "module unloads" gpuctl_unload
ktap_finished
