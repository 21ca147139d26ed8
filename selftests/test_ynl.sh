#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full noiommu
#
# The kernel's YNL CLI, driven only by the spec, is a client that shares no
# code with gpuctl: what it decodes from the module must be what the tool
# prints. Also the spec against the real genetlink-legacy schema, the
# kernel's answers to bad requests, rules, and the allocation ledger and
# its limits.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

KSRC=$GPUCTL_ROOT/build/linux-source-6.12
YNL=$KSRC/tools/net/ynl
SPEC=$GPUCTL_ROOT/Documentation/netlink/specs/gpuctl.yaml
TMP=$(mktemp -d /tmp/test_ynl.XXXXXX)
cleanup() {
	[ -n "$RULE_ID" ] && ynl --do rule-del --json "{\"id\": $RULE_ID}" >/dev/null 2>&1
	nl_allocs_cleanup
	gpuctl-nl limit-set scope account name ynl >/dev/null 2>&1
	nl_rules_cleanup
	rm -rf "$TMP"
}
trap cleanup EXIT

ynl() {
	/usr/bin/python3 "$YNL/cli.py" --spec "$SPEC" --no-schema --output-json "$@"
}

# One shape for both clients: the spec's attribute names, numbers as
# numbers, absent attributes left out, roles by name.
# shellcheck disable=SC2016 # jq code, not shell
JQ_HEX='def hexnum: if type == "number" then . else
	ltrimstr("0x") | ascii_downcase | explode |
	reduce .[] as $c (0; . * 16 + (if $c >= 97 then $c - 87 else $c - 48 end)) end;'

norm_tool_dev() {
	jq -S "$JQ_HEX"'del(.vendor, .device) | with_entries(.key |= gsub("_"; "-")) |
		with_entries(select(.value != null)) |
		.reserved |= (if type == "boolean" then (if . then 1 else 0 end) else . end) |
		.["vendor-id"] |= hexnum | .["device-id"] |= hexnum |
		.["subsystem-vendor-id"] |= hexnum |
		.["subsystem-device-id"] |= hexnum |
		.class |= hexnum | .revision |= hexnum'
}

check_schema() {
	PYTHONPATH=$YNL /usr/bin/python3 -c '
import sys
from lib import SpecFamily
SpecFamily(sys.argv[1], sys.argv[2])
' "$SPEC" "$KSRC/Documentation/netlink/genetlink-legacy.yaml"
}

check_schema_rejects() {
	# The schema check is live: a spec with an unknown attribute type fails.
	sed 's/type: u16/type: u17/' "$SPEC" >"$TMP/bad.yaml"
	! PYTHONPATH=$YNL /usr/bin/python3 -c '
import sys
from lib import SpecFamily
SpecFamily(sys.argv[1], sys.argv[2])
' "$TMP/bad.yaml" "$KSRC/Documentation/netlink/genetlink-legacy.yaml" 2>"$TMP/err"
}

check_dev_dump() {
	ynl --dump dev-get >"$TMP/ynl.json" || return 1
	gpuctl -j dev show >"$TMP/tool.json" || return 1
	jq -S 'sort_by(.address)' "$TMP/ynl.json" >"$TMP/a"
	jq -c '.devices | sort_by(.address)[]' "$TMP/tool.json" |
		while read -r d; do norm_tool_dev <<<"$d"; done | jq -s -S . >"$TMP/b"
	diff -u "$TMP/a" "$TMP/b" && [ "$(jq length "$TMP/a")" -gt 0 ]
}

# One CLI run sends a do request per device (--multi): Python starts once,
# which under TCG is most of the cost.
check_dev_do() {
	local args=() a

	for a in $(jq -r '.[].address' "$TMP/ynl.json"); do
		args+=(--multi dev-get "{\"address\": \"$a\"}")
	done
	ynl "${args[@]}" >"$TMP/do.json" || return 1
	diff -u <(jq -S 'sort_by(.address)' "$TMP/ynl.json") \
		<(jq -S 'sort_by(.address)' "$TMP/do.json")
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
	diff -u "$TMP/a" "$TMP/b"
}

check_group_do() {
	local args=() g

	for g in $(jq -r '.[].id' "$TMP/ygroups.json"); do
		args+=(--multi group-get "{\"id\": $g}")
	done
	[ ${#args[@]} -gt 0 ] || return 4	# no groups without an IOMMU
	ynl "${args[@]}" >"$TMP/do.json" || return 1
	diff -u <(jq -S 'sort_by(.id)' "$TMP/ygroups.json") \
		<(jq -S 'sort_by(.id)' "$TMP/do.json")
}

check_groups_hold_gpus() {
	# every dumped group has a GPU among the dumped devices, and every
	# device that has a group is in that group's member list
	jq -e -n --slurpfile d "$TMP/ynl.json" --slurpfile g "$TMP/ygroups.json" '
		($d[0] | map({key: .address, value: .}) | from_entries) as $dev |
		($g[0] | all(.device | any($dev[.].role == "gpu"))) and
		($d[0] | all(if has("iommu-group") then
			(.address as $a | .["iommu-group"] as $id |
			 $g[0] | any(.id == $id and (.device | index($a) != null)))
			else true end))' >/dev/null
}

ynl_fails() {	# OP JSON: the kernel refuses; print its error
	if ynl --do "$1" --json "$2" >"$TMP/err" 2>&1; then
		cat "$TMP/err"
		return 1
	fi
	cat "$TMP/err"
	grep -q -i 'error' "$TMP/err"
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
	jq -e '.match == "abcd:ef01" and .driver == "vfio-pci" and
		.source == "netlink" and has("take") and (has("force") | not) and
		(.id | type) == "number"' "$TMP/rule.json" >/dev/null || return 1
	RULE_ID=$(jq .id "$TMP/rule.json")
}

check_rule_dump() {
	[ -n "$RULE_ID" ] || return 1
	ynl --dump rule-get >"$TMP/rules.json" || return 1
	# the dump entry is the rule-new reply, and gpuctl-nl sees the same
	jq -e --slurpfile r "$TMP/rule.json" 'map(select(.id == $r[0].id)) == $r' \
		"$TMP/rules.json" >/dev/null || { cat "$TMP/rules.json"; return 1; }
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
	ynl --dump rule-get | jq -e --argjson id "$RULE_ID" 'all(.id != $id)' >/dev/null ||
		return 1
	RULE_ID=
	ynl_fails rule-del '{"match": "abcd:ef01"}' && grep -q 'error: -2$' "$TMP/err"
}

# The ledger through the CLI, on GPUs with no host driver, each alone in
# its IOMMU group (topology "full"; without an IOMMU none can be
# allocated). SPARE_GPU stays free, so that a count request gets past
# placement to the limit check.
ALLOC_GPU=0000:02:00.0
SPARE_GPU=0000:05:00.0
OWNER=6F1C2A9E-0D3B-4C5E-8A7F-1122334455AA
owner=6f1c2a9e-0d3b-4c5e-8a7f-1122334455aa
ALLOC_ID=

check_alloc_new() {
	[ -e "/sys/bus/pci/devices/$ALLOC_GPU/iommu_group" ] || return 4
	nl_rule_new "$ALLOC_GPU" && nl_rule_new "$SPARE_GPU" || return 1
	wait_for 20 nl_dev_has "$ALLOC_GPU" state=reserved driver=vfio-pci || return 1
	wait_for 20 nl_dev_has "$SPARE_GPU" state=reserved driver=vfio-pci || return 1
	ynl --do alloc-new --json "{\"owner\": \"$OWNER\", \"device\": [\"$ALLOC_GPU\"],
		\"name\": \"ynl-vm\", \"account\": \"ynl\", \"uid\": 107,
		\"detach-on-stop\": true}" >"$TMP/alloc.json" || return 1
	cat "$TMP/alloc.json"
	jq -e --arg o "$owner" --arg g "$ALLOC_GPU" '.owner == $o and
		.device == [$g] and .name == "ynl-vm" and .account == "ynl" and
		.uid == 107 and has("detach-on-stop") and .gpus == 1 and
		.state == "idle" and (has("end") | not) and
		(.id | type) == "number"' "$TMP/alloc.json" >/dev/null || return 1
	ALLOC_ID=$(jq .id "$TMP/alloc.json")
	ALLOCS+=("$ALLOC_ID")
	nl_dev_has "$ALLOC_GPU" "allocation=$ALLOC_ID"
}

check_alloc_get() {
	[ -n "$ALLOC_ID" ] || return 4
	ynl --do alloc-get --json "{\"id\": $ALLOC_ID}" >"$TMP/get.json" || return 1
	diff -u <(jq -S . "$TMP/alloc.json") <(jq -S . "$TMP/get.json") || return 1
	ynl --dump alloc-get >"$TMP/allocs.json" || return 1
	jq -e --slurpfile a "$TMP/alloc.json" 'map(select(.id == $a[0].id)) == $a' \
		"$TMP/allocs.json" >/dev/null || { cat "$TMP/allocs.json"; return 1; }
	# the independent client decodes the same allocation
	nl_alloc_has "$ALLOC_ID" "owner=$owner" "devices=$ALLOC_GPU" gpus=1 \
		state=idle detach_on_stop=1 uid=107 account=ynl name=ynl-vm
}

check_reject_alloc_busy() {
	[ -n "$ALLOC_ID" ] || return 4
	ynl_fails alloc-new "{\"owner\": \"$owner\", \"device\": [\"$ALLOC_GPU\"]}" &&
	grep -q 'error: -16' "$TMP/err" && grep -q "bad-attr': '.device'" "$TMP/err" &&
	grep -q "'msg': '$ALLOC_GPU is allocated to $ALLOC_ID'" "$TMP/err"
}

check_reject_alloc_owner() {
	ynl_fails alloc-new '{"count": 1}' &&
	grep -q 'error: -22' "$TMP/err" && grep -q "'miss-type': 'owner'" "$TMP/err" &&
	ynl_fails alloc-new '{"owner": "not-a-uuid", "count": 1}' &&
	grep -q 'error: -22' "$TMP/err" && grep -q "bad-attr': '.owner'" "$TMP/err"
}

check_limit_set() {
	local used=0

	[ -n "$ALLOC_ID" ] && used=1
	ynl --do limit-set --json '{"scope": "account", "name": "ynl", "max-gpus": 1}' \
		>"$TMP/limit.json" || return 1
	cat "$TMP/limit.json"
	jq -e --argjson u "$used" '.scope == "account" and .name == "ynl" and
		.["max-gpus"] == 1 and .used == $u' "$TMP/limit.json" >/dev/null || return 1
	ynl --do limit-get --json '{"scope": "account", "name": "ynl"}' >"$TMP/lget.json" ||
		return 1
	diff -u <(jq -S . "$TMP/limit.json") <(jq -S . "$TMP/lget.json") || return 1
	ynl --dump limit-get | jq -e --slurpfile l "$TMP/limit.json" \
		'map(select(.name == "ynl")) == $l' >/dev/null || return 1
	gpuctl-nl limit-get account ynl | grep -qx "limit scope=account name=ynl max_gpus=1 used=$used"
}

check_reject_alloc_limit() {
	[ -n "$ALLOC_ID" ] || return 4
	ynl_fails alloc-new "{\"owner\": \"$owner\", \"count\": 1, \"account\": \"ynl\"}" &&
	grep -q 'error: -122' "$TMP/err" && grep -q "bad-attr': '.account'" "$TMP/err" &&
	grep -q "'msg': 'account ynl is limited to 1 GPU, 1 in use'" "$TMP/err" &&
	nl_dev_has_not "$SPARE_GPU" allocation
}

check_limit_remove() {
	ynl --do limit-set --json '{"scope": "account", "name": "ynl"}' || return 1
	ynl_fails limit-get '{"scope": "account", "name": "ynl"}' &&
	grep -q 'error: -2$' "$TMP/err" &&
	ynl_fails limit-set '{"scope": "account", "name": "ynl"}' && grep -q 'error: -2$' "$TMP/err"
}

check_alloc_del() {
	[ -n "$ALLOC_ID" ] || return 4
	ynl --do alloc-del --json "{\"id\": $ALLOC_ID}" || return 1
	nl_dev_has_not "$ALLOC_GPU" allocation || return 1
	ynl_fails alloc-get "{\"id\": $ALLOC_ID}" && grep -q 'error: -2$' "$TMP/err" || return 1
	ynl_fails alloc-del "{\"id\": $ALLOC_ID}" && grep -q 'error: -2$' "$TMP/err" &&
	grep -q "bad-attr': '.id'" "$TMP/err" || return 1
	ALLOC_ID=
	ALLOCS=()
	nl_rules_cleanup
}

ktap_header
ktap_plan 26
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }

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
ktap_run_stage "YNL alloc-new of a reserved GPU: the reply is what was asked" check_alloc_new
ktap_run_stage "YNL alloc-get do and dump equal the reply, gpuctl-nl agrees" check_alloc_get
ktap_run_stage "reject alloc-new of an allocated GPU" check_reject_alloc_busy
ktap_run_stage "reject alloc-new without an owner, or with a bad one" check_reject_alloc_owner
ktap_run_stage "YNL limit-set and limit-get: used counts the allocation" check_limit_set
ktap_run_stage "reject alloc-new over the account's limit (EDQUOT)" check_reject_alloc_limit
ktap_run_stage "YNL limit-set without max-gpus removes the limit" check_limit_remove
ktap_run_stage "YNL alloc-del: gone from the device, a second del is ENOENT" check_alloc_del

gpuctl_unload
ktap_finished
