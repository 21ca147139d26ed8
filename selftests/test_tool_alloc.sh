#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# The gpuctl tool's allocation and limit commands against the module:
# alloc add by device and by count, alloc show, the allocation and holder
# of dev show, refusals that change nothing, limit set and show, the
# monitor's allocation and VFIO events, alloc save and restore (the same
# ledger, ids included; a bad file; a rollback), and alloc del. What the
# tool prints is checked against the independent client gpuctl-nl and
# sysfs, never against the tool alone.
#
# Devices of the "full" topology (topologies/full): 02:00.0 and 05:00.0
# without a driver, 03:00.0 on qxl, 07:00.0 bochs + 07:00.1 HDA in one
# group, 81:00.0 bochs on NUMA node 1. The test reserves 02:00.0, 05:00.0,
# 07:00.0 (with its HDA) and 81:00.0, and leaves 03:00.0 alone.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments; json_check's jq filters name jq variables in
# single quotes.
# shellcheck disable=SC2317,SC2119,SC2016
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"
set -o pipefail

TMP=$(mktemp -d /tmp/test_tool_alloc.XXXXXX)
LEDGER=$TMP/ledger
MON_PID=

FREE2=0000:02:00.0
FREE=0000:05:00.0
QXL=0000:03:00.0
MF_GPU=0000:07:00.0
MF_HDA=0000:07:00.1
NODE1=0000:81:00.0
VM1=1b4e28ba-2fa1-11d2-883f-0016d3cca427
VM2=6f1c3a52-8d4e-4b9a-9c1e-2a7b5d9e0f11
VM3=0c9d2e41-7a55-4f0b-b3d8-95e6a1c4f702
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
ID1=''
ID2=''

cleanup() {
	vfio_open_stop
	[ -n "$MON_PID" ] && kill "$MON_PID" 2>/dev/null
	wait 2>/dev/null
	nl_allocs_cleanup
	for l in "account acme" "project p9"; do
		# shellcheck disable=SC2086
		gpuctl-nl limit-set scope ${l% *} name ${l#* } >/dev/null 2>&1
	done
	nl_rules_cleanup
	rm -rf "$TMP"
}
trap cleanup EXIT

# The allocations in gpuctl-nl's line format, from the tool's JSON on stdin
allocs_as_nl() {
	jq -r '.allocations[] | "alloc id=\(.id) owner=\(.owner)" +
		([("name", "account", "project", "domain") as $k |
		  select(.[$k] != null) | " \($k)=\(.[$k])"] | join("")) +
		" devices=\(.devices | join(",")) gpus=\(.gpus) state=\(.state)" +
		(if .detach_on_stop then " detach_on_stop=1" else "" end) +
		(if .uid != null then " uid=\(.uid)" else "" end) +
		(if .gid != null then " gid=\(.gid)" else "" end) +
		(if .state_reason != null then " state_reason=\(.state_reason)" else "" end)'
}

limits_as_nl() {
	jq -r '.limits[] | "limit scope=\(.scope) name=\(.name)" +
		(if .max != null then " max_gpus=\(.max)" else "" end) +
		" used=\(.used)"'
}

# The ledger as gpuctl-nl sees it: allocations, then limits
nl_ledger() {
	gpuctl-nl alloc-dump && gpuctl-nl limit-dump
}

# --- stages ---------------------------------------------------------------

setup_rules() {
	# 07:00.0 on gpuctl's own driver, where gpuctl sees who opens it
	nl_rule_new "$FREE" && nl_rule_new "$FREE2" &&
	nl_rule_new "$MF_GPU" driver gpuctl-vfio-pci take && nl_rule_new "$NODE1" take ||
		return 1
	expect_pci_driver "$FREE" vfio-pci && expect_pci_driver "$FREE2" vfio-pci &&
	expect_pci_driver "$MF_GPU" gpuctl-vfio-pci &&
	expect_pci_driver "$MF_HDA" gpuctl-vfio-pci &&
	expect_pci_driver "$NODE1" vfio-pci
}

check_add_dev() {
	# the owner in upper case: the kernel's form is lower case
	run_captured "$TMP/out" "$TMP/err" gpuctl -j alloc add owner "${VM1^^}" name vm1 \
		account acme dev "${MF_GPU#0000:}" || return 1
	[ ! -s "$TMP/err" ] || return 1
	json_check --arg o "$VM1" --arg g "$MF_GPU" --arg h "$MF_HDA" '
		.allocations | length == 1 and (.[0] |
		.owner == $o and .name == "vm1" and .account == "acme" and
		.project == null and .domain == null and .devices == [$g, $h] and
		.gpus == 1 and .state == "idle" and has("state_reason") and
		.state_reason == null and has("end") and .end == null and
		.detach_on_stop == false and .uid == null and .gid == null and
		(.id | type) == "number")' "$TMP/out" || return 1
	ID1=$(jq '.allocations[0].id' "$TMP/out")
	allocs_as_nl <"$TMP/out" >"$TMP/tool"
	gpuctl-nl alloc-get "$ID1" | diff -u - "$TMP/tool"
}

check_add_count() {
	run_captured "$TMP/out" "$TMP/err" gpuctl -j alloc add owner "$VM2" count 2 \
		account acme project p1 detach-on-stop uid 107 gid 108 || return 1
	# the first free GPUs in address order: 02:00.0 and 05:00.0
	json_check --arg a "$FREE2" --arg b "$FREE" '.allocations | length == 1 and
		(.[0] | .devices == [$a, $b] and .gpus == 2 and .detach_on_stop == true and
		 .uid == 107 and .gid == 108 and .project == "p1")' "$TMP/out" || return 1
	ID2=$(jq '.allocations[0].id' "$TMP/out")
	allocs_as_nl <"$TMP/out" >"$TMP/tool"
	gpuctl-nl alloc-get "$ID2" | diff -u - "$TMP/tool"
}

check_show() {
	gpuctl -j alloc show | allocs_as_nl >"$TMP/tool" || return 1
	gpuctl-nl alloc-dump >"$TMP/nl" || return 1
	diff -u "$TMP/nl" "$TMP/tool" || return 1
	[ "$(wc -l <"$TMP/nl")" -eq 2 ] || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl alloc show "$ID2" || return 1
	# vfio-pci registers no migration for QEMU's devices
	printf 'alloc %s owner %s account acme project p1 gpus 2 state idle detach-on-stop uid 107 gid 108\n  devices: %s %s\n  live-migration: no, cannot migrate: %s %s\n' \
		"$ID2" "$VM2" "$FREE2" "$FREE" "$FREE2" "$FREE" | diff -u - "$TMP/out" || return 1
	# the ledger names tenants' VMs: reading it needs privilege
	if run_captured "$TMP/out" "$TMP/err" "${NOBODY[@]}" gpuctl -j alloc show; then
		return 1
	fi
	[ ! -s "$TMP/out" ] && grep -qx 'Error: Operation not permitted' "$TMP/err"
}

check_dev_show() {
	gpuctl -j dev show "$MF_HDA" >"$TMP/out" || return 1
	cat "$TMP/out"
	json_check --argjson id "$ID1" '.devices | length == 1 and
		(.[0] | .allocation == $id and .holder == null)' "$TMP/out" || return 1
	nl_dev_has "$MF_HDA" "allocation=$ID1" || return 1
	gpuctl -j dev show "$QXL" | json_check '.devices | length == 1 and
		(.[0] | .allocation == null and .holder == null)' || return 1
	nl_dev_has_not "$QXL" allocation || return 1
	# the table: ALLOC and HOLDER after ROOT; "reserved" has no reason,
	# so the allocation is the 10th word and the holder the 11th
	gpuctl dev show >"$TMP/table" || return 1
	head -n1 "$TMP/table" | grep -E ' ROOT +ALLOC +HOLDER +VFS +PF +VGPU +NAME *$' || return 1
	if [ "$(awk -v a="$FREE" '$1 == a { print $10, $11 }' "$TMP/table")" != "$ID2 -" ] ||
	   [ "$(awk -v a="$QXL" '$1 == a { print $10, $11 }' "$TMP/table")" != "- -" ]; then
		cat "$TMP/table"
		return 1
	fi
}

# A refused request exits 2 with the kernel's reason and changes nothing
refused() {	# REGEX CMD...: the kernel's message matches REGEX
	local want=$1 rc=0

	shift
	nl_ledger >"$TMP/before" || return 1
	run_captured "$TMP/out" "$TMP/err" "$@" || rc=$?
	[ "$rc" = 2 ] && [ ! -s "$TMP/out" ] || return 1
	grep -qE "^Error: $want" "$TMP/err" || return 1
	grep -qE "^gpuctl: cannot " "$TMP/err" || return 1
	nl_ledger | diff -u "$TMP/before" -
}

check_add_taken() {
	refused "$FREE2 is allocated to $ID2: Device or resource busy$" \
		gpuctl alloc add owner "$VM3" dev "$FREE2"
}

check_add_unreserved() {
	refused "$QXL is not reserved: Device or resource busy$" \
		gpuctl alloc add owner "$VM3" dev "$NODE1" dev "$QXL"
}

check_add_too_many() {
	# one GPU, 81:00.0, is free
	refused "only 1 free GPU.*: No space left on device$" \
		gpuctl alloc add owner "$VM3" count 2
}

check_add_unprivileged() {
	refused ".*Operation not permitted$" \
		"${NOBODY[@]}" gpuctl alloc add owner "$VM3" count 1
}

check_limit_set() {
	# acme holds 1 + 2 GPUs
	run_captured "$TMP/out" "$TMP/err" gpuctl -j limit set account acme max 3 || return 1
	[ "$(cat "$TMP/out")" = '{"limits":[{"scope":"account","name":"acme","max":3,"used":3}]}' ] ||
		return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl limit set project p9 max 4 || return 1
	[ "$(cat "$TMP/out")" = 'project p9 max 4 used 0' ] || return 1
	gpuctl -j limit show | limits_as_nl >"$TMP/tool" || return 1
	gpuctl-nl limit-dump >"$TMP/nl" || return 1
	cat "$TMP/nl"
	diff -u "$TMP/nl" "$TMP/tool" &&
	[ "$(gpuctl limit show account acme)" = 'account acme max 3 used 3' ]
}

check_limit_refuses() {
	refused "account acme is limited to 3 GPUs, 3 in use: Disk quota exceeded$" \
		gpuctl alloc add owner "$VM3" account acme count 1
}

check_numa() {
	local node

	node=$(<"/sys/bus/pci/devices/$NODE1/numa_node")
	[ "$node" = 1 ] || { echo "$NODE1 is on node $node, the topology puts it on 1"; return 1; }
	refused "only 0 free GPU.* on node 0.*: No space left on device$" \
		gpuctl alloc add owner "$VM3" count 1 numa 0 policy required || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl -j alloc add owner "$VM3" count 1 \
		numa 1 policy required || return 1
	json_check --arg a "$NODE1" '.allocations | length == 1 and .[0].devices == [$a]' \
		"$TMP/out"
}

# vfio_open holds the allocation's GPU, as QEMU would: the holder in dev
# show, the events in gpuctl monitor, then the close
check_holder_monitor() {
	local pid

	gpuctl -j monitor >"$TMP/mon" 2>"$TMP/mon.err" &
	MON_PID=$!
	wait_monitor_subscribed "$MON_PID" || return 1
	vfio_open_start "$MF_GPU" || return 1
	pid=$VFIO_PID
	gpuctl -j dev show "$MF_GPU" >"$TMP/out" || return 1
	cat "$TMP/out"
	json_check --argjson pid "$pid" --argjson id "$ID1" '.devices | length == 1 and
		(.[0] | .allocation == $id and .holder.pid == $pid and
		 .holder.comm == "vfio_open" and .holder.uid == 0 and
		 .holder.match == "owner" and (.holder.since | type) == "number")' \
		"$TMP/out" || return 1
	nl_dev_has "$MF_GPU" "holder_pid=$pid" || return 1
	[ "$(gpuctl dev show | awk -v a="$MF_GPU" '$1 == a { print $11 }')" = \
	  "vfio_open[$pid]" ] || return 1
	gpuctl -j alloc show "$ID1" |
		json_check '.allocations | length == 1 and .[0].state == "running"' || return 1
	# a running VM's allocation cannot be deleted
	refused "$MF_GPU is open by vfio_open \\(pid $pid\\): Device or resource busy$" \
		gpuctl alloc del "$ID1" || return 1
	vfio_open_close || return 1
	wait_for 10 grep -q '"vfio-close-ntf"' "$TMP/mon" || return 1
	vfio_open_stop
	gpuctl -j dev show "$MF_GPU" |
		json_check '.devices | length == 1 and .[0].holder == null' || return 1
	wait_for 10 grep -q '"state":"idle"' "$TMP/mon"
	kill "$MON_PID"
	wait "$MON_PID"
	MON_PID=
	cat "$TMP/mon" "$TMP/mon.err"
	json_check --slurp --arg g "$MF_GPU" --argjson pid "$pid" --argjson id "$ID1" '
		def ev($n): [.[] | select(.name == $n)];
		(ev("vfio-open-ntf") | any(.msg.address == $g and
			.msg.holder.pid == $pid and .msg.holder.match == "owner" and
			.msg.allocation == $id)) and
		(ev("vfio-close-ntf") | any(.msg.address == $g and
			.msg.holder.pid == $pid)) and
		(ev("alloc-change-ntf") | map(select(.msg.id == $id) | .msg.state) |
			. == ["running", "idle"])' "$TMP/mon"
}

check_save() {
	nl_ledger >"$TMP/saved" || return 1
	cat "$TMP/saved"
	run_captured "$TMP/out" "$TMP/err" gpuctl alloc save "$LEDGER" || return 1
	[ ! -s "$TMP/out" ] && [ ! -s "$TMP/err" ] || return 1
	cat "$LEDGER"
	# GPUs only: the kernel brings the companions
	grep -qx "alloc add owner $VM1 name vm1 account acme dev $MF_GPU id $ID1" "$LEDGER" &&
	grep -qx "alloc add owner $VM2 account acme project p1 dev $FREE2 dev $FREE detach-on-stop uid 107 gid 108 id $ID2" \
		"$LEDGER" &&
	grep -qx 'limit set account acme max 3' "$LEDGER" &&
	grep -qx 'limit set project p9 max 4' "$LEDGER" &&
	# "-" is stdout, the same ledger
	gpuctl alloc save - | diff -u "$LEDGER" -
}

check_del_all() {
	local id dump

	dump=$(gpuctl-nl alloc-dump) || return 1
	if grep -q " owner=$VM3 " <<<"$dump"; then
		run_captured "$TMP/out" "$TMP/err" gpuctl alloc del owner "$VM3" || return 1
	fi
	for id in $(gpuctl -j alloc show | jq -r '.allocations[].id'); do
		run_captured "$TMP/out" "$TMP/err" gpuctl alloc del "$id" || return 1
		[ ! -s "$TMP/out" ] && [ ! -s "$TMP/err" ] || return 1
	done
	gpuctl limit set account acme max none >/dev/null &&
	gpuctl limit set project p9 max none >/dev/null || return 1
	[ "$(gpuctl -j alloc show)" = '{"allocations":[]}' ] &&
	[ "$(gpuctl -j limit show)" = '{"limits":[]}' ] &&
	[ -z "$(nl_ledger)" ] &&
	nl_dev_has_not "$MF_GPU" allocation
}

check_del_unknown() {
	refused ".*No such file or directory$" gpuctl alloc del 4000000000
}

check_restore() {
	# the ledger without VM3's allocation, which check_del_all ended too
	grep -v "$VM3" "$LEDGER" >"$TMP/ledger2"
	grep -v "$VM3" "$TMP/saved" >"$TMP/want"
	run_captured "$TMP/out" "$TMP/err" gpuctl -j alloc restore "$TMP/ledger2" || return 1
	json_check --argjson a "$ID1" --argjson b "$ID2" \
		'[.allocations[].id] == [$a, $b]' "$TMP/out" || return 1
	nl_ledger | diff -u "$TMP/want" -
}

# Restoring over the live ledger: the first GPU is taken, nothing changes
check_restore_exists() {
	local rc=0

	nl_ledger >"$TMP/before" || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl alloc restore "$TMP/ledger2" || rc=$?
	[ "$rc" = 2 ] && [ ! -s "$TMP/out" ] || return 1
	grep -q "^Error: $MF_GPU is allocated to $ID1: Device or resource busy\$" "$TMP/err" &&
	grep -qx "$TMP/ledger2:2: cannot restore the allocation of $VM1" "$TMP/err" ||
		return 1
	nl_ledger | diff -u "$TMP/before" -
}

check_restore_bad_file() {
	local rc=0 f=$TMP/bad

	printf '# bad\nalloc add owner %s dev %s\nalloc add owner %s dev %s bogus\nlimit set account acme max x\n' \
		"$VM3" "$NODE1" "$VM3" "$QXL" >"$f"
	nl_ledger >"$TMP/before" || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl alloc restore "$f" || rc=$?
	[ "$rc" = 1 ] && [ ! -s "$TMP/out" ] || return 1
	printf '%s:3: unexpected argument "bogus"\n%s:4: invalid max "x", expected a number or none\n' \
		"$f" "$f" | diff -u - "$TMP/err" || return 1
	nl_ledger | diff -u "$TMP/before" -
}

# The last line fails in the kernel: the allocation and the limits before
# it are undone, the acme limit back to 3, the p9 limit gone again
check_restore_rollback() {
	local rc=0 f=$TMP/fails

	printf 'alloc add owner %s dev %s id 77\nlimit set account acme max 1\nlimit set project p8 max 4\nlimit set domain nosuch max none\n' \
		"$VM3" "$NODE1" >"$f"
	nl_ledger >"$TMP/before" || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl alloc restore "$f" || rc=$?
	[ "$rc" = 2 ] && [ ! -s "$TMP/out" ] || return 1
	grep -q '^Error: .*No such file or directory$' "$TMP/err" &&
	grep -qx "$f:4: cannot set the limit of domain nosuch, rolling back" "$TMP/err" ||
		return 1
	! grep -q 'cannot roll back' "$TMP/err" &&
	nl_ledger | diff -u "$TMP/before" -
}

check_restore_rollback_alloc() {
	local rc=0 f=$TMP/fails

	printf 'alloc add owner %s dev %s id 77\nalloc add owner %s dev %s\n' \
		"$VM3" "$NODE1" "$VM3" "$QXL" >"$f"
	nl_ledger >"$TMP/before" || return 1
	run_captured "$TMP/out" "$TMP/err" gpuctl alloc restore - <"$f" || rc=$?
	[ "$rc" = 2 ] || return 1
	grep -q "^Error: $QXL is not reserved" "$TMP/err" &&
	grep -qx "<stdin>:2: cannot restore the allocation of $VM3, rolling back" "$TMP/err" ||
		return 1
	nl_ledger | diff -u "$TMP/before" -
}

# alloc-new and alloc-del as gpuctl monitor prints them; VM2's allocation
# has detach-on-stop, so the exit of the VM that opened its GPU (on plain
# vfio-pci, seen from the group: holder unknown to the module, found by
# the tool in /proc) ends the allocation
check_monitor_detach() {
	local id3

	gpuctl -j monitor >"$TMP/mon" 2>"$TMP/mon.err" &
	MON_PID=$!
	wait_monitor_subscribed "$MON_PID" || return 1
	gpuctl -j alloc add owner "$VM3" dev "$NODE1" >"$TMP/out" || return 1
	id3=$(jq '.allocations[0].id' "$TMP/out")
	vfio_open_start "$FREE" || return 1
	wait_for 10 sh -c "gpuctl-nl dev-get $FREE | grep -q ' holder_pid=0 '" || return 1
	# the module does not know the holder; root's tool finds it in /proc:
	# uid 0, where VM2's allocation says uid 107
	gpuctl -j dev show "$FREE" | json_check --arg a "$FREE" --argjson pid "$VFIO_PID" '
		.devices | length == 1 and .[0].address == $a and
		.[0].holder.pid == $pid and .[0].holder.comm == "vfio_open" and
		.[0].holder.found_by == "proc" and .[0].holder.uid == 0 and
		.[0].holder.match == "mismatch"' ||
		return 1
	[ "$(gpuctl dev show | awk -v a="$FREE" '$1 == a { print $11 }')" = "vfio_open[$VFIO_PID]" ] ||
		return 1
	vfio_open_stop
	wait_for 10 grep -q '"end":"detached"' "$TMP/mon" || return 1
	gpuctl alloc del owner "$VM3" || return 1
	wait_for 10 grep -q '"end":"deleted"' "$TMP/mon" || return 1
	kill "$MON_PID"
	wait "$MON_PID"
	MON_PID=
	cat "$TMP/mon" "$TMP/mon.err"
	cmd_fails 'No such file or directory \(errno 2\)' gpuctl-nl alloc-get "$ID2" || return 1
	json_check --slurp --arg vm "$VM3" --arg a "$NODE1" --argjson id3 "$id3" \
		--argjson id2 "$ID2" --arg g "$FREE" '
		def ev($n): [.[] | select(.name == $n) | .msg];
		(ev("alloc-new-ntf") | any(.id == $id3 and .owner == $vm and
			.devices == [$a] and has("end") and .end == null)) and
		(ev("vfio-open-ntf") | any(.address == $g and .holder.pid == 0 and
			.holder.match == "unknown" and .allocation == $id2)) and
		(ev("alloc-del-ntf") | map(select(.id == $id2 or .id == $id3) |
			"\(.id) \(.end)") == ["\($id2) detached", "\($id3) deleted"])' \
		"$TMP/mon"
}

check_help() {
	gpuctl help >"$TMP/out" && grep -q 'alloc | limit' "$TMP/out" &&
	gpuctl alloc help >"$TMP/out" && grep -q '^Usage: gpuctl alloc add owner UUID' "$TMP/out" &&
	gpuctl limit help >"$TMP/out" && grep -q '^Usage: gpuctl limit set SCOPE NAME' "$TMP/out"
}

check_cleanup() {
	local id

	for id in $(gpuctl -j alloc show | jq -r '.allocations[].id'); do
		gpuctl alloc del "$id" || return 1
	done
	gpuctl limit set account acme max none >/dev/null &&
	gpuctl limit set project p9 max none >/dev/null || return 1
	nl_ledger >"$TMP/left" || return 1
	[ ! -s "$TMP/left" ] || { cat "$TMP/left"; return 1; }
	nl_rules_cleanup
}

ktap_header
ktap_plan 25
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
modprobe -a vfio-pci vfio_iommu_type1 ||
	{ ktap_info "modprobe vfio-pci vfio_iommu_type1 failed"; exit 1; }

ktap_run_stage "setup: 02:00.0, 05:00.0, 07:00.0 and 81:00.0 reserved" setup_rules
ktap_run_stage "alloc add dev: the GPU and its companion, as gpuctl-nl sees it" \
	check_add_dev
ktap_run_stage "alloc add count 2: the first free GPUs, by address" check_add_count
ktap_run_stage "alloc show: the allocations gpuctl-nl dumps; one as text; as nobody" \
	check_show
ktap_run_stage "dev show: allocation and holder keys, the ALLOC and HOLDER columns" \
	check_dev_show
ktap_run_stage "alloc add: an allocated GPU, exit 2, nothing changes" check_add_taken
ktap_run_stage "alloc add: an unreserved GPU, no partial allocation" check_add_unreserved
ktap_run_stage "alloc add count: more than are free, exit 2, nothing changes" \
	check_add_too_many
ktap_run_stage "alloc add as nobody: EPERM, nothing changes" check_add_unprivileged
ktap_run_stage "limit set and show, as gpuctl-nl sees them" check_limit_set
ktap_run_stage "alloc add over a limit: EDQUOT names it, nothing changes" \
	check_limit_refuses
ktap_run_stage "alloc add count numa: required picks node 1's GPU only" check_numa
ktap_run_stage "vfio_open: holder in dev show, monitor's vfio and alloc events" \
	check_holder_monitor
ktap_run_stage "alloc save: GPUs with ids, then limits; - is stdout" check_save
ktap_run_stage "alloc del by owner and id, limits removed: the ledger is empty" \
	check_del_all
ktap_run_stage "alloc del: an unknown id, exit 2" check_del_unknown
ktap_run_stage "alloc restore: the same ledger, ids included" check_restore
ktap_run_stage "alloc restore over the live ledger: refused, nothing changes" \
	check_restore_exists
ktap_run_stage "alloc restore: a bad file names FILE:LINE, nothing changes" \
	check_restore_bad_file
ktap_run_stage "alloc restore: a limit the kernel refuses undoes the run" \
	check_restore_rollback
ktap_run_stage "alloc restore -: an allocation the kernel refuses undoes the run" \
	check_restore_rollback_alloc
ktap_run_stage "monitor: alloc-new, an observed open, detach-on-stop, alloc-del" \
	check_monitor_detach
ktap_run_stage "gpuctl help lists alloc and limit" check_help
ktap_run_stage "cleanup: allocations, limits and rules deleted" check_cleanup
ktap_run_stage "module unloads" gpuctl_unload
ktap_finished
