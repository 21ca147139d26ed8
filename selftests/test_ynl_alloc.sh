#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# The allocation ledger and tenant limits through the kernel's YNL CLI,
# driven only by the spec: alloc-new, alloc-get (do and dump), alloc-del,
# limit-set and limit-get, the replies checked against what was asked and
# against the independent client gpuctl-nl, and the kernel's refusals with
# their errno, extack text and attribute. A script of its own, apart from
# test_ynl.sh, so that each keeps within the per-program timeout: every
# CLI run starts Python, seconds under TCG.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments; json_check's jq filters name jq variables in
# single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

TMP=$(mktemp -d /tmp/test_ynl_alloc.XXXXXX)
cleanup() {
	nl_allocs_cleanup
	gpuctl-nl limit-set scope account name ynl >/dev/null 2>&1
	nl_rules_cleanup
	rm -rf "$TMP"
}
trap cleanup EXIT

# The ledger through the CLI, on GPUs with no host driver, each alone in
# its IOMMU group (topology "full"; without an IOMMU none can be
# allocated). SPARE_GPU stays free, so that a count request gets past
# placement to the limit check.
ALLOC_GPU=0000:02:00.0
SPARE_GPU=0000:05:00.0
OWNER=6F1C2A9E-0D3B-4C5E-8A7F-1122334455AA
owner=6f1c2a9e-0d3b-4c5e-8a7f-1122334455aa
ALLOC_ID=

# The stages after the first work on its allocation: without it they fail.
have_alloc() {
	[ -n "$ALLOC_ID" ] && return 0
	echo "no allocation: YNL alloc-new failed"
	return 1
}

check_alloc_new() {
	[ -e "/sys/bus/pci/devices/$ALLOC_GPU/iommu_group" ] ||
		{ echo "$ALLOC_GPU is in no IOMMU group"; return 1; }
	nl_rule_new "$ALLOC_GPU" && nl_rule_new "$SPARE_GPU" || return 1
	wait_for 20 nl_dev_has "$ALLOC_GPU" state=reserved driver=vfio-pci || return 1
	wait_for 20 nl_dev_has "$SPARE_GPU" state=reserved driver=vfio-pci || return 1
	ynl --do alloc-new --json "{\"owner\": \"$OWNER\", \"device\": [\"$ALLOC_GPU\"],
		\"name\": \"ynl-vm\", \"account\": \"ynl\", \"uid\": 107,
		\"detach-on-stop\": true}" >"$TMP/alloc.json" || return 1
	cat "$TMP/alloc.json"
	json_check --arg o "$owner" --arg g "$ALLOC_GPU" '.owner == $o and
		.device == [$g] and .name == "ynl-vm" and .account == "ynl" and
		.uid == 107 and has("detach-on-stop") and .gpus == 1 and
		.state == "idle" and (has("end") | not) and
		(.id | type) == "number"' "$TMP/alloc.json" || return 1
	ALLOC_ID=$(jq .id "$TMP/alloc.json")
	ALLOCS+=("$ALLOC_ID")
	nl_dev_has "$ALLOC_GPU" "allocation=$ALLOC_ID"
}

check_alloc_get() {
	have_alloc || return 1
	ynl --do alloc-get --json "{\"id\": $ALLOC_ID}" >"$TMP/get.json" || return 1
	diff -u <(jq -S . "$TMP/alloc.json") <(jq -S . "$TMP/get.json") || return 1
	ynl --dump alloc-get >"$TMP/allocs.json" || return 1
	json_check --slurpfile a "$TMP/alloc.json" 'map(select(.id == $a[0].id)) == $a' \
		"$TMP/allocs.json" || return 1
	# the independent client decodes the same allocation
	nl_alloc_has "$ALLOC_ID" "owner=$owner" "devices=$ALLOC_GPU" gpus=1 \
		state=idle detach_on_stop=1 uid=107 account=ynl name=ynl-vm
}

check_reject_alloc_busy() {
	have_alloc || return 1
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
	local used=1 line

	have_alloc || return 1
	ynl --do limit-set --json '{"scope": "account", "name": "ynl", "max-gpus": 1}' \
		>"$TMP/limit.json" || return 1
	cat "$TMP/limit.json"
	json_check --argjson u "$used" '.scope == "account" and .name == "ynl" and
		.["max-gpus"] == 1 and .used == $u' "$TMP/limit.json" || return 1
	ynl --do limit-get --json '{"scope": "account", "name": "ynl"}' >"$TMP/lget.json" ||
		return 1
	diff -u <(jq -S . "$TMP/limit.json") <(jq -S . "$TMP/lget.json") || return 1
	ynl --dump limit-get | json_check --slurpfile l "$TMP/limit.json" \
		'map(select(.name == "ynl")) == $l' || return 1
	line=$(gpuctl-nl limit-get account ynl) || return 1
	[ "$line" = "limit scope=account name=ynl max_gpus=1 used=$used" ] ||
		{ echo "gpuctl-nl: $line"; return 1; }
}

check_reject_alloc_limit() {
	have_alloc || return 1
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
	have_alloc || return 1
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
ktap_plan 8
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
ynl_start

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
