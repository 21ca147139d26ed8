#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# Promises of gpuctl.8 about the tool's own output, checked against the
# independent client gpuctl-nl: "group show ID" in text and JSON, and its
# refusals; the row order of "dev show" (DEV OBJECT: groups in the order
# of their first GPU, each GPU followed by the other functions of its
# slot, then the rest of the group), in the table and in JSON; and the bash
# completion of reserve, alloc and limit, with the live rule ids, matches,
# allocation ids and owners the module has.
#
# Devices of the "full" topology (topologies/full): 07:00.0 bochs + 07:00.1
# HDA in one group, 08:00.0 bridge + 09:01.0 bochs + 09:02.0 e1000 in one
# group, 01:00.0 bochs alone, 05:00.0 without a driver.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

TMP=$(mktemp -d /tmp/test_tool_cli.XXXXXX)
GPU=0000:01:00.0
PB_GPU=0000:09:01.0
PB_NIC=0000:09:02.0
FREE=0000:05:00.0
VM=3e8a1f0c-6d2b-4c59-b7e4-91a0d5c2f6e8

cleanup() {
	gpuctl-nl limit-set scope account name acme >/dev/null 2>&1
	nl_allocs_cleanup
	nl_rules_cleanup
	rm -rf "$TMP"
}
trap cleanup EXIT

# The group in gpuctl-nl's line format, from the tool's text on stdin
group_text_as_nl() {
	awk '
	/^group / { id = $2 }
	/^  devices:/ { sub(/^  devices: */, ""); gsub(/ /, ","); devs = $0 }
	/^  viable: / { viable = ($2 == "yes") ? 1 : 0 }
	/^  reason: / { sub(/^  reason: /, ""); reason = " reason=" $0 }
	END { printf "group id=%s viable=%d devices=%s%s\n", id, viable, devs, reason }'
}

group_json_as_nl() {
	jq -r '.groups[] | "group id=\(.id) viable=\(if .viable then 1 else 0 end)" +
		" devices=\(.devices | join(","))" +
		(if .reason != null then " reason=\(.reason)" else "" end)'
}

check_group_show_id() {
	local g rc=0

	for g in $(pci_group_of "$PB_GPU") $(pci_group_of "$GPU"); do
		gpuctl-nl group-get "$g" >"$TMP/nl" || return 1
		cat "$TMP/nl"
		run_captured "$TMP/out" "$TMP/err" gpuctl group show "$g" || return 1
		[ ! -s "$TMP/err" ] && [ "$(grep -c '^group ' "$TMP/out")" = 1 ] || rc=1
		group_text_as_nl <"$TMP/out" | diff -u "$TMP/nl" - || rc=1
		run_captured "$TMP/out" "$TMP/err" gpuctl -j group show "$g" || return 1
		json_check '.groups | length == 1' "$TMP/out" || rc=1
		group_json_as_nl <"$TMP/out" | diff -u "$TMP/nl" - || rc=1
	done
	# the bridge's group is not viable: a member is on a host driver
	gpuctl group show "$(pci_group_of "$PB_GPU")" >"$TMP/out" || return 1
	grep -q "^  viable: no$" "$TMP/out" &&
	grep -qE "^  reason: ($PB_GPU is bound to bochs-drm|$PB_NIC is bound to e1000)$" \
		"$TMP/out" || rc=1
	return "$rc"
}

check_group_show_refused() {
	local rc=0 st=0

	run_captured "$TMP/out" "$TMP/err" gpuctl group show 4000000 || st=$?
	[ "$st" = 2 ] && [ ! -s "$TMP/out" ] || rc=1
	grep -q '^Error: .*No such file or directory$' "$TMP/err" &&
	grep -qx 'gpuctl: cannot show IOMMU group 4000000' "$TMP/err" || rc=1
	st=0
	run_captured "$TMP/out" "$TMP/err" gpuctl group show x || st=$?
	[ "$st" = 1 ] && grep -qx 'gpuctl: invalid IOMMU group "x", expected a number' "$TMP/err" ||
		rc=1
	return "$rc"
}

# The order gpuctl.8 gives for dev show, computed from gpuctl-nl's dump:
# sorted by (first GPU of the group, the GPU of the row's slot or "~" for
# the rest, GPU before companions, address).
documented_order() {
	gpuctl-nl dev-dump | awk '
	{
		a = ""; g = ""; r = ""
		# up to the texts with spaces, which come last
		for (i = 2; i <= NF && $i !~ /^(refused|state_reason)=/; i++) {
			if ($i ~ /^address=/) a = substr($i, 9)
			else if ($i ~ /^iommu_group=/) g = substr($i, 13)
			else if ($i ~ /^role=/) r = substr($i, 6)
		}
		n++; addr[n] = a; grp[n] = g; role[n] = r
		if (r == "gpu" && g != "" && (!(g in first) || a < first[g]))
			first[g] = a
	}
	END {
		for (i = 1; i <= n; i++) {
			unit = (grp[i] != "" && grp[i] in first) ? first[grp[i]] : addr[i]
			key = "~"; rank = 2
			if (role[i] == "gpu") { key = addr[i]; rank = 0 }
			else if (role[i] == "companion") {
				for (j = 1; j <= n; j++)
					if (role[j] == "gpu" && grp[j] == grp[i] &&
					    substr(addr[j], 1, 10) == substr(addr[i], 1, 10) &&
					    (key == "~" || addr[j] < key))
						key = addr[j]
				if (key != "~") rank = 1
			}
			print unit, key, rank, addr[i]
		}
	}' | LC_ALL=C sort | awk '{ print $4 }'
}

check_dev_order() {
	documented_order >"$TMP/want" || return 1
	cat "$TMP/want"
	# the topology has a multi-function group and a bridge's group
	grep -qx 0000:07:00.1 "$TMP/want" && grep -qx 0000:08:00.0 "$TMP/want" || return 1
	gpuctl dev show | awk 'NR > 1 { print $1 }' | diff -u "$TMP/want" - || return 1
	gpuctl -j dev show | jq -r '.devices[].address' | diff -u "$TMP/want" - || return 1
	# the bridge sorts before its group's GPU by address, but comes after it
	grep -A2 -x "$PB_GPU" "$TMP/want" | tr '\n' ' ' |
		grep -qx "$PB_GPU 0000:08:00.0 $PB_NIC "
}

# completes WANT WORD...: the completions for the last WORD are exactly
# the words of WANT.
completes() {
	local want=$1
	shift

	complete_words gpuctl "$@" | sed '/^$/d' | LC_ALL=C sort -u >"$TMP/got" || return 1
	# shellcheck disable=SC2086 # one word per completion
	printf '%s\n' $want | sed '/^$/d' | LC_ALL=C sort -u >"$TMP/want"
	diff -u "$TMP/want" "$TMP/got" >"$TMP/diff" && return 0
	echo "gpuctl $* <TAB>:"
	cat "$TMP/diff"
	return 1
}

RULE_IDS=
RULE_MATCHES=
ALLOC_IDS=
check_complete_setup() {
	# a second rule, for a vendor no device has
	nl_rule_new "$FREE" && nl_rule_new abcd:1234 driver gpuctl-vfio-pci || return 1
	nl_alloc_new owner "$VM" device "$FREE" || return 1
	gpuctl-nl limit-set scope account name acme max-gpus 2 || return 1
	RULE_IDS=$(gpuctl-nl rule-dump | sed -n 's/^rule id=\([0-9]*\) .*/\1/p')
	RULE_MATCHES=$(gpuctl-nl rule-dump | sed -n 's/^rule id=[0-9]* match=\([^ ]*\) .*/\1/p')
	ALLOC_IDS=$(gpuctl-nl alloc-dump | sed -n 's/^alloc id=\([0-9]*\) .*/\1/p')
	[ -n "$RULE_IDS" ] && [ -n "$ALLOC_IDS" ]
}

check_complete_reserve() {
	local rc=0

	# the live ids and matches are the setup's two rules: without them
	# "help" alone would complete, and pass
	if ! grep -qx "abcd:1234" <<<"$RULE_MATCHES" ||
	   [ "$(wc -w <<<"$RULE_IDS")" -lt 2 ]; then
		echo "no rules to complete: ids '$RULE_IDS'"
		return 1
	fi
	completes "add del show help" reserve "" || rc=1
	completes "add" reserve a || rc=1
	completes "driver force take" reserve add "$FREE" "" || rc=1
	completes "driver force" reserve add "$FREE" take "" || rc=1
	completes "vfio-pci gpuctl-vfio-pci pci-stub" reserve add "$FREE" driver "" || rc=1
	completes "help $RULE_IDS $RULE_MATCHES" reserve del "" || rc=1
	completes "help $RULE_IDS" reserve show "" || rc=1
	return "$rc"
}

check_complete_alloc() {
	local rc=0 kw="owner name account project domain dev count match numa policy"

	kw+=" detach-on-stop uid gid id vgpu"
	completes "add del show save restore help" alloc "" || rc=1
	completes "$kw" alloc add "" || rc=1
	completes "${kw/owner /}" alloc add owner "$VM" "" || rc=1
	# dev (and vgpu) may come again; account only once
	completes "${kw/owner /}" alloc add owner "$VM" dev "$FREE" "" || rc=1
	kw=${kw/owner /}
	completes "${kw/account /}" alloc add owner "$VM" account acme "" || rc=1
	completes "$(gpuctl-nl dev-dump | sed -n 's/^dev address=\([^ ]*\) .*/\1/p')" \
		alloc add owner "$VM" dev "" || rc=1
	completes "required preferred legacy" alloc add count 1 numa 0 policy "" || rc=1
	completes "help id owner $ALLOC_IDS" alloc del "" || rc=1
	completes "$ALLOC_IDS" alloc del id "" || rc=1
	completes "$VM" alloc del owner "" || rc=1
	# an allocation's id, or its owner's UUID, may be followed by "keep"
	completes "keep" alloc del "${ALLOC_IDS%%$'\n'*}" "" || rc=1
	completes "keep" alloc del owner "$VM" "" || rc=1
	completes "help $ALLOC_IDS" alloc show "" || rc=1
	return "$rc"
}

check_complete_dev() {
	local rc=0 addrs

	addrs=$(gpuctl-nl dev-dump | sed -n 's/^dev address=\([^ ]*\) .*/\1/p')
	[ -n "$addrs" ] || return 1
	completes "show set help" dev "" || rc=1
	completes "help $addrs" dev set "" || rc=1
	completes "numvfs" dev set "$FREE" "" || rc=1
	return "$rc"
}

check_complete_limit() {
	local rc=0

	completes "set show help" limit "" || rc=1
	completes "account project domain" limit set "" || rc=1
	completes "account project domain" limit show "" || rc=1
	completes "project" limit set p || rc=1
	completes "max" limit set account acme "" || rc=1
	completes "none" limit set account acme max "" || rc=1
	return "$rc"
}

check_cleanup() {
	gpuctl-nl limit-set scope account name acme >/dev/null || return 1
	nl_allocs_cleanup
	nl_rules_cleanup
	expect_pci_driver "$FREE" "" 30 || return 1
	gpuctl-nl alloc-dump >"$TMP/left" && gpuctl-nl rule-dump >>"$TMP/left" &&
	gpuctl-nl limit-dump >>"$TMP/left" || return 1
	[ ! -s "$TMP/left" ] || { cat "$TMP/left"; return 1; }
}

ktap_header
ktap_plan 10
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }

ktap_run_stage "group show ID: the group gpuctl-nl gets, in text and JSON" check_group_show_id
ktap_run_stage "group show: an unknown id exits 2, a malformed one 1" check_group_show_refused
ktap_run_stage "dev show: rows in the order gpuctl.8 gives, table and JSON" check_dev_order
ktap_run_stage "completion setup: two rules, an allocation, a limit" check_complete_setup
ktap_run_stage "completion: reserve commands, flags, drivers, live ids and matches" \
	check_complete_reserve
ktap_run_stage "completion: alloc keywords once (dev again), policies, live ids and owners" \
	check_complete_alloc
ktap_run_stage "completion: limit scopes, max, none" check_complete_limit
ktap_run_stage "completion: dev commands, live addresses, numvfs" check_complete_dev
ktap_run_stage "cleanup: nothing left, devices back" check_cleanup
ktap_run_stage "module unloads" gpuctl_unload

ktap_finished
