#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# gpuctl monitor as gpuctl.8 describes it: the text form (every other test
# reads -j), the exit status 0 on SIGINT, and "events lost" when the
# kernel drops events for a reader that fell behind. The events come from
# a scenario run with the independent client gpuctl-nl, which records
# them too: the tool must show the same events in the same order, and its
# text line for each must be what the man page says, field by field, built
# here from its JSON for the same event.
#
# Devices of the "full" topology (topologies/full): 02:00.0 and 05:00.0
# without a driver, 04:00.0 on cirrus.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

TMP=$(mktemp -d /tmp/test_tool_monitor.XXXXXX)
FREE=0000:05:00.0
FREE2=0000:02:00.0
HELD=0000:04:00.0
VM=7c0e3d1a-52b6-4f8e-9a41-0d2c6b8e1f37
TEXT_PID=
JSON_PID=
RMEM_DEFAULT=

cleanup() {
	local p

	for p in "$TEXT_PID" "$JSON_PID"; do
		[ -n "$p" ] && kill -CONT "$p" 2>/dev/null && kill "$p" 2>/dev/null
	done
	[ -n "$RMEM_DEFAULT" ] && sysctl -q -w "net.core.rmem_default=$RMEM_DEFAULT"
	lib_cleanup
	rm -rf "$TMP"
}
trap cleanup EXIT

# monitor_start NAME [OPTION]: gpuctl [OPTION] monitor into $TMP/NAME and
# $TMP/NAME.err, subscribed on return; its pid in MONITOR_PID.
MONITOR_PID=
monitor_start() {
	local name=$1
	shift

	gpuctl "$@" monitor >"$TMP/$name" 2>"$TMP/$name.err" &
	MONITOR_PID=$!
	wait_subscribed "$MONITOR_PID" "$(monitor_group_id ledger)" ||
		{ echo "gpuctl $* monitor did not subscribe"; return 1; }
}

# monitor_sigint PID NAME: SIGINT must end it with status 0 and nothing on
# stderr.
monitor_sigint() {
	local rc=0

	kill -INT "$1" || return 1
	timeout 10 tail --pid="$1" -f /dev/null || { echo "$2 ignored SIGINT"; return 1; }
	wait "$1" || rc=$?
	cat "$TMP/$2.err"
	[ "$rc" -eq 0 ] || { echo "$2: exit status $rc on SIGINT, want 0"; return 1; }
	[ ! -s "$TMP/$2.err" ]
}

# The text line gpuctl.8 gives for each event of a -j stream on stdin
# (MONITOR OBJECT): "[event]" and the device, rule or allocation as one
# line, "-" for a value that is not there.
json_as_text() {
	jq -r '
	def opt: if . == null then "-" else tostring end;
	def reason: if .state_reason == null then "" else " (\(.state_reason))" end;
	def list: if length == 0 then " -" else map(" " + .) | join("") end;
	def holder:
		if .holder == null then "-"
		else (if .holder.pid == 0 then "unknown"
		      else "\(.holder.comm // "?")[\(.holder.pid)]" end) +
		     (if .holder.match == "other" or .holder.match == "unallocated"
		      then " (\(.holder.match))" else "" end)
		end;
	def dev:
		"\(.address) \(.role) \(.driver | opt) state \(.state)\(reason)" +
		" rule \(.rule | opt) " +
		(if .action == null then "" else "action \(.action) " end) +
		"\(.vendor_id):\(.device_id) group \(.iommu_group | opt)" +
		" numa \(if .numa_node < 0 then "-" else .numa_node end)" +
		" root \(.pci_root | opt) alloc \(.allocation | opt) holder \(holder) " +
		(if .refused == null then "" else "refused \"\(.refused)\" " end) +
		"\(.vendor) \(.device)";
	def rule:
		"rule \(.id) match \(.match) driver \(.driver)" +
		(if .force then " force" else "" end) +
		(if .take then " take" else "" end) +
		" source \(.source) devices\(.devices | list)" +
		(.warnings | map(" warning \"\(.)\"") | join(""));
	def alloc:
		"alloc \(.id) owner \(.owner)" +
		([("name", "account", "project", "domain") as $k |
		  select(.[$k] != null) | " \($k) \(.[$k])"] | join("")) +
		" gpus \(.gpus) state \(.state)\(reason)" +
		(if .detach_on_stop then " detach-on-stop" else "" end) +
		(if .uid == null then "" else " uid \(.uid)" end) +
		(if .gid == null then "" else " gid \(.gid)" end) +
		(if .end == null then "" else " end \(.end)" end) +
		" devices\(.devices | list)";
	"[\(.name | rtrimstr("-ntf"))] " +
	(if (.name | startswith("rule-")) then .msg | rule
	 elif (.name | startswith("alloc-")) then .msg | alloc
	 else .msg | dev end)'
}

# "NAME ADDRESS" or "NAME id=ID" per event, from gpuctl-nl's monitor and
# from the tool's JSON
nl_events() {
	nlmon_since_mark | sed -E 's/^([a-z-]+) (address=|id=)([^ ]*).*/\1 \2\3/'
}

json_events() {
	jq -r 'if .msg.address then "\(.name) address=\(.msg.address)"
	       else "\(.name) id=\(.msg.id)" end' "$TMP/json"
}

# Rules, an allocation, a VFIO user and a refused open: every kind of
# text line but dev-add and dev-del, which print as dev-change does.
check_scenario() {
	nlmon_mark
	monitor_start text || return 1
	TEXT_PID=$MONITOR_PID
	monitor_start json -j || return 1
	JSON_PID=$MONITOR_PID

	modprobe vfio_iommu_type1 || return 1
	# gpuctl-vfio-pci, which knows its holders precisely
	nl_rule_new "$FREE" driver gpuctl-vfio-pci && nl_rule_new "$HELD" || return 1
	expect_pci_driver "$FREE" gpuctl-vfio-pci 0 || return 1
	nl_alloc_new owner "$VM" name vm1 account acme device "$FREE" detach-on-stop \
		uid 0 gid 0 || return 1
	vfio_open_start "$FREE" || return 1
	nl_alloc_has "$ALLOC" state=running || return 1
	vfio_open_stop
	nlmon_wait "^alloc-del-ntf id=$ALLOC .*end=detached" || return 1
	ALLOCS=()
	# gpuctl-vfio-pci refuses an open of a GPU without an allocation
	nl_rule_new "$FREE2" driver gpuctl-vfio-pci || return 1
	expect_pci_driver "$FREE2" gpuctl-vfio-pci 0 || return 1
	vfio_open_fails "$FREE2" "Operation not permitted" || return 1
	nlmon_wait "^vfio-open-ntf address=$FREE2 .*refused=" || return 1
	nl_rules_cleanup
	expect_pci_driver "$FREE" "" 30 && expect_pci_driver "$FREE2" "" 30 || return 1
	nlmon_wait "^dev-change-ntf address=$FREE2 .*action=released" || return 1
	# the last event of the scenario, in both of the tool's streams
	wait_for 20 grep -q "^\\[dev-change\\] $FREE2 .* action released " "$TMP/text" &&
	wait_for 20 grep -q "\"address\":\"$FREE2\".*\"action\":\"released\"" "$TMP/json"
}

check_sigint() {
	local rc=0

	monitor_sigint "$TEXT_PID" text || rc=1
	TEXT_PID=
	monitor_sigint "$JSON_PID" json || rc=1
	JSON_PID=
	return "$rc"
}

check_same_events() {
	nl_events >"$TMP/nl.events"
	json_events >"$TMP/tool.events" || return 1
	diff -u "$TMP/nl.events" "$TMP/tool.events" || return 1
	cat "$TMP/tool.events"
	# rule-new x3, alloc-new, vfio-open x2, vfio-close, alloc-del, rule-del x3
	[ "$(wc -l <"$TMP/tool.events")" -ge 12 ] || { echo "too few events"; return 1; }
	[ "$(wc -l <"$TMP/text")" -eq "$(wc -l <"$TMP/tool.events")" ]
}

check_text_lines() {
	local re

	cat "$TMP/text"
	json_as_text <"$TMP/json" >"$TMP/want" || return 1
	diff -u "$TMP/want" "$TMP/text" || return 1
	# and what the scenario must have shown, in text
	for re in "^\\[rule-new\\] rule [0-9]+ match $FREE driver gpuctl-vfio-pci source netlink devices $FREE\$" \
		  "^\\[alloc-new\\] alloc $ALLOC_ID owner $VM name vm1 account acme gpus 1 state idle detach-on-stop uid 0 gid 0 devices $FREE\$" \
		  "^\\[vfio-open\\] $FREE gpu gpuctl-vfio-pci state reserved rule [0-9]+ .* alloc $ALLOC_ID holder vfio_open\\[[0-9]+\\] " \
		  "^\\[alloc-change\\] alloc $ALLOC_ID .* state running " \
		  "^\\[alloc-del\\] alloc $ALLOC_ID .* end detached devices $FREE\$" \
		  "^\\[vfio-open\\] $FREE2 gpu gpuctl-vfio-pci .* alloc - holder vfio_open\\[[0-9]+\\] \\(unallocated\\) refused \"[^\"]+\" " \
		  "^\\[dev-change\\] $FREE2 gpu - state free rule - action released " \
		  "^\\[rule-del\\] rule [0-9]+ match $HELD "; do
		grep -qE -- "$re" "$TMP/text" || { echo "no line matching: $re"; return 1; }
	done
}

# A reader that stops reading: the kernel drops what its socket cannot
# hold, the tool says so once it reads again, and carries on.
check_events_lost() {
	local i n

	# the monitor's socket must overflow, not the selftest's
	RMEM_DEFAULT=$(sysctl -n net.core.rmem_default) || return 1
	# the tool's socket gets a small buffer; gpuctl-nl's keeps its own
	sysctl -w net.core.rmem_default=8192 || return 1
	monitor_start lost || return 1
	TEXT_PID=$MONITOR_PID
	sysctl -w "net.core.rmem_default=$RMEM_DEFAULT" || return 1
	RMEM_DEFAULT=
	nlmon_mark
	echo "# kill -STOP $TEXT_PID"
	kill -STOP "$TEXT_PID" || return 1
	# 40 rules for vendors no device has: 40 events, and nothing moves
	for i in $(seq 40); do
		printf 'reserve abcd:%04x\n' "$i"
	done >"$TMP/conf"
	gpuctl apply "$TMP/conf" >/dev/null || return 1
	nlmon_wait "^rule-new-ntf id=[0-9]+ match=abcd:0028 " || return 1
	echo "# kill -CONT $TEXT_PID"
	kill -CONT "$TEXT_PID" || return 1
	wait_for 20 grep -qx 'gpuctl: monitor: events lost' "$TMP/lost.err" || {
		cat "$TMP/lost.err"
		echo "no 'events lost' after 40 events to a stopped reader"
		return 1
	}
	cat "$TMP/lost.err"
	n=$(grep -c '^\[rule-new\] ' "$TMP/lost")
	echo "# the tool printed $n of the 40 rule-new events"
	[ "$n" -lt 40 ] || return 1
	# still listening: the next event is printed
	nl_rule_new abcd:ffff || return 1
	wait_for 20 grep -q "^\\[rule-new\\] rule $RULE match abcd:ffff " "$TMP/lost" ||
		{ echo "the monitor stopped after the loss"; return 1; }
	kill -0 "$TEXT_PID" || return 1
	: >"$TMP/lost.err"
	monitor_sigint "$TEXT_PID" lost || return 1
	TEXT_PID=
	nl_rules_cleanup
}

ALLOC_ID=
ktap_header
ktap_plan 6
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
nlmon_start || ktap_info "gpuctl-nl monitor did not start"

ktap_run_stage "scenario: rules, an allocation, vfio_open, a refused open" check_scenario
ALLOC_ID=$ALLOC
ktap_run_stage "SIGINT ends gpuctl monitor and gpuctl -j monitor with status 0" check_sigint
ktap_run_stage "the tool's events are gpuctl-nl's, in the same order, in both forms" \
	check_same_events
ktap_run_stage "text lines: the fields gpuctl.8 lists, as the JSON gives them" \
	check_text_lines
ktap_run_stage "a stopped reader: 'events lost' on stderr, then the next event" \
	check_events_lost
nlmon_stop
ktap_run_stage "module unloads" gpuctl_unload

ktap_finished
