#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# The kernel's YNL CLI, driven only by the spec, is a client that shares no
# code with gpuctl: what it decodes from the module must be what the tool
# prints. Also the spec against the real genetlink-legacy schema, and the
# kernel's answers to bad requests. The CLI runs in one Python process
# (ynl_start in lib.sh).

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments; json_check's jq filters name jq variables in
# single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

SCHEMA=$GPUCTL_ROOT/build/linux-source-6.12/Documentation/netlink/genetlink-legacy.yaml
TMP=$(mktemp -d /tmp/test_ynl.XXXXXX)
cleanup() {
	[ -n "$RULE_ID" ] && ynl --do rule-del --json "{\"id\": $RULE_ID}" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

# One shape for both clients: the spec's attribute names, numbers as
# numbers, absent attributes left out, roles by name.
# shellcheck disable=SC2016 # jq code, not shell
JQ_HEX='def hexnum: if type == "number" then . else
	ltrimstr("0x") | ascii_downcase | explode |
	reduce .[] as $c (0; . * 16 + (if $c >= 97 then $c - 87 else $c - 48 end)) end;'

# The tool's devices (gpuctl -j dev show on stdin) in that shape, sorted
# by address, in one jq run.
norm_tool_devs() {
	jq -S "$JQ_HEX"'.devices | sort_by(.address) | map(
		del(.vendor, .device, .migration_compat) |
		if .migration then .migration |= sort else . end |
		with_entries(.key |= gsub("_"; "-")) |
		with_entries(select(.value != null)) |
		.reserved |= (if type == "boolean" then (if . then 1 else 0 end) else . end) |
		.["vendor-id"] |= hexnum | .["device-id"] |= hexnum |
		.["subsystem-vendor-id"] |= hexnum |
		.["subsystem-device-id"] |= hexnum |
		.class |= hexnum | .revision |= hexnum)'
}

# The CLI validates the spec against the schema before it lists the ops.
check_schema() {
	ynl_cli --spec "$GPUCTL_SPEC" --schema "$SCHEMA" --list-ops >"$TMP/ops" || return 1
	grep -q '^dev-get ' "$TMP/ops" || { cat "$TMP/ops"; return 1; }
}

check_schema_rejects() {
	# The schema check is live: a spec with an unknown attribute type
	# fails, for that type.
	sed 's/type: u16/type: u17/' "$GPUCTL_SPEC" >"$TMP/bad.yaml"
	grep -q 'type: u17' "$TMP/bad.yaml" || { echo "no u16 attribute to break"; return 1; }
	cmd_fails "ValidationError: 'u17' is not one of" \
		ynl_cli --spec "$TMP/bad.yaml" --schema "$SCHEMA" --list-ops
}

check_dev_dump() {
	ynl --dump dev-get >"$TMP/ynl.json" || return 1
	gpuctl -j dev show >"$TMP/tool.json" || return 1
	# the CLI gives flags as a set, in no order
	jq -S 'sort_by(.address) | map(if .migration then .migration |= sort else . end)' \
		"$TMP/ynl.json" >"$TMP/a" || return 1
	norm_tool_devs <"$TMP/tool.json" >"$TMP/b" || return 1
	diff -u "$TMP/a" "$TMP/b" && json_check 'length > 0' "$TMP/a"
}

# One CLI run sends a do request per device (--multi): Python starts once,
# which under TCG is most of the cost.
check_dev_do() {
	local args=() a

	for a in $(jq -r '.[].address' "$TMP/ynl.json"); do
		args+=(--multi dev-get "{\"address\": \"$a\"}")
	done
	ynl "${args[@]}" >"$TMP/do.json" || return 1
	diff -u <(jq -S 'sort_by(.address) | map(if .migration then .migration |= sort else . end)' \
		"$TMP/ynl.json") \
		<(jq -S 'sort_by(.address) | map(if .migration then .migration |= sort else . end)' \
		"$TMP/do.json")
}

check_group_dump() {
	ynl --dump group-get >"$TMP/ygroups.json" || return 1
	gpuctl -j group show >"$TMP/tgroups.json" || return 1
	jq -S 'map({id, devices: ((.device // []) | sort),
		   viable: (.viable == 1), reason: (.reason // null)}) | sort_by(.id)' \
		"$TMP/ygroups.json" >"$TMP/a"
	jq -S '.groups | map({id, devices: ((.devices // []) | sort),
		   viable, reason: (.reason // null)}) | sort_by(.id)' \
		"$TMP/tgroups.json" >"$TMP/b"
	diff -u "$TMP/a" "$TMP/b" && json_check 'length > 0' "$TMP/a"
}

check_group_do() {
	local args=() g

	for g in $(jq -r '.[].id' "$TMP/ygroups.json"); do
		args+=(--multi group-get "{\"id\": $g}")
	done
	[ ${#args[@]} -gt 0 ] || { echo "no group dumped"; return 1; }
	ynl "${args[@]}" >"$TMP/do.json" || return 1
	diff -u <(jq -S 'sort_by(.id)' "$TMP/ygroups.json") \
		<(jq -S 'sort_by(.id)' "$TMP/do.json")
}

check_groups_hold_gpus() {
	# every dumped group has a GPU among the dumped devices, and every
	# device that has a group is in that group's member list
	json_check --slurpfile g "$TMP/ygroups.json" '
		. as $d | (map({key: .address, value: .}) | from_entries) as $dev |
		($g[0] | length > 0) and
		($g[0] | all(.device | any($dev[.].role == "gpu"))) and
		($d | all(if has("iommu-group") then
			(.address as $a | .["iommu-group"] as $id |
			 $g[0] | any(.id == $id and (.device | index($a) != null)))
			else true end))' "$TMP/ynl.json"
}

check_reject_unknown_addr() {
	# ENODEV, with the extack pointing at the address
	ynl_fails dev-get '{"address": "0000:ff:1f.7"}' &&
	grep -q 'error: -19' "$TMP/err" && grep -q "bad-attr': '.address'" "$TMP/err"
}

check_reject_long_addr() {
	# longer than address-len: the generated policy refuses it
	ynl_fails dev-get '{"address": "0000:00:01.0000"}' &&
	grep -q 'error: -22' "$TMP/err" && grep -q "'max-length': 12" "$TMP/err"
}

check_reject_missing_addr() {
	# the kernel names the missing attribute
	ynl_fails dev-get '{}' &&
	grep -q 'error: -22' "$TMP/err" && grep -q "'miss-type': 'address'" "$TMP/err"
}

check_reject_unknown_group() {
	ynl_fails group-get '{"id": 4000000}' &&
	grep -q 'error: -2$' "$TMP/err" && grep -q "bad-attr': '.id'" "$TMP/err"
}

# Rules through the CLI: an ids rule that matches no device, so nothing
# is bound anywhere, in upper case to see the canonical form come back.
RULE_ID=

check_rule_new() {
	ynl --do rule-new --json '{"match": "ABCD:EF01", "take": true}' \
		>"$TMP/rule.json" || return 1
	cat "$TMP/rule.json"
	json_check '.match == "abcd:ef01" and .driver == "vfio-pci" and
		.source == "netlink" and has("take") and (has("force") | not) and
		(.id | type) == "number"' "$TMP/rule.json" || return 1
	RULE_ID=$(jq .id "$TMP/rule.json")
}

check_rule_dump() {
	[ -n "$RULE_ID" ] || return 1
	ynl --dump rule-get >"$TMP/rules.json" || return 1
	# the dump entry is the rule-new reply, and gpuctl-nl sees the same
	json_check --slurpfile r "$TMP/rule.json" 'map(select(.id == $r[0].id)) == $r' \
		"$TMP/rules.json" || return 1
	jq -r '.[] | "\(.id) \(.match) \(.driver)"' "$TMP/rules.json" >"$TMP/a"
	gpuctl-nl rule-dump | sed -E 's/^rule id=([0-9]+) match=([^ ]+) driver=([^ ]+).*/\1 \2 \3/' \
		>"$TMP/b"
	diff -u "$TMP/a" "$TMP/b"
}

check_rule_get() {
	[ -n "$RULE_ID" ] || return 1
	ynl --do rule-get --json "{\"id\": $RULE_ID}" >"$TMP/get.json" || return 1
	diff -u <(jq -S . "$TMP/rule.json") <(jq -S . "$TMP/get.json")
}

check_reject_rule_match() {
	ynl_fails rule-new '{"match": "1234:11111"}' &&
	grep -q 'error: -22' "$TMP/err" && grep -q "bad-attr': '.match'" "$TMP/err"
}

check_reject_rule_driver() {
	ynl_fails rule-new '{"match": "abcd:ef02", "driver": "e1000"}' &&
	grep -q 'error: -22' "$TMP/err" && grep -q "bad-attr': '.driver'" "$TMP/err" &&
	grep -q "'msg': '[^']*e1000" "$TMP/err"
}

check_reject_rule_dup() {
	ynl_fails rule-new '{"match": "abcd:EF01"}' && grep -q 'error: -17' "$TMP/err"
}

check_rule_del() {
	[ -n "$RULE_ID" ] || return 1
	ynl --do rule-del --json "{\"id\": $RULE_ID}" || return 1
	ynl --dump rule-get | json_check --argjson id "$RULE_ID" 'all(.id != $id)' || return 1
	RULE_ID=
	ynl_fails rule-del '{"match": "abcd:ef01"}' && grep -q 'error: -2$' "$TMP/err"
}

ktap_header
ktap_plan 18
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
ynl_start

ktap_run_stage "spec validates against genetlink-legacy schema" check_schema
ktap_run_stage "schema check rejects a broken spec" check_schema_rejects
ktap_run_stage "YNL dev-get dump equals gpuctl -j dev show" check_dev_dump
ktap_run_stage "YNL dev-get do equals the dump entry, every device" check_dev_do
ktap_run_stage "YNL group-get dump equals gpuctl -j group show" check_group_dump
ktap_run_stage "YNL group-get do equals the dump entry, every group" check_group_do
ktap_run_stage "groups hold GPUs and list their devices" check_groups_hold_gpus
ktap_run_stage "reject dev-get of an unknown address" check_reject_unknown_addr
ktap_run_stage "reject dev-get with an over-long address" check_reject_long_addr
ktap_run_stage "reject dev-get without an address" check_reject_missing_addr
ktap_run_stage "reject group-get of an unknown group" check_reject_unknown_group
ktap_run_stage "YNL rule-new: canonical match, default driver, source netlink" check_rule_new
ktap_run_stage "YNL rule-get dump holds the reply, gpuctl-nl agrees" check_rule_dump
ktap_run_stage "YNL rule-get do equals the rule-new reply" check_rule_get
ktap_run_stage "reject rule-new with a malformed match" check_reject_rule_match
ktap_run_stage "reject rule-new with a non-VFIO driver" check_reject_rule_driver
ktap_run_stage "reject rule-new of an existing match" check_reject_rule_dup
ktap_run_stage "YNL rule-del: gone from the dump, a second del is ENOENT" check_rule_del

gpuctl_unload
ktap_finished
