#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: full
#
# Least privilege, checked with the independent client gpuctl-nl and with
# the tool:
# - an unprivileged user (uid 65534) reads the inventory, but gets EPERM
#   for rules, allocations and limits, reads included, and for joining the
#   "ledger" multicast group; its dev-get and its "monitor" events carry
#   no allocation or holder, and rule events never reach it;
# - root without CAP_SYS_ADMIN (but with CAP_NET_ADMIN, as host-network
#   containers and CNI agents have) gets EPERM, "needs CAP_SYS_ADMIN",
#   from every mutation, and changes nothing;
# - a rule naming a driver gpuctl does not know never makes the kernel run
#   modprobe for it, while vfio-pci and pci-stub are still loaded on
#   demand;
# - a device blocked because a VFIO user has it says so to root, naming
#   the VFIO driver, and only "in use" to uid 65534.
#
# Devices of the "full" topology (topologies/full): 01:00.0 (bochs),
# reserved on gpuctl-vfio-pci, allocated and opened by the test, and
# 02:00.0 (vmware-svga, which no driver keeps) for the driver loading and
# the blocked device.

# Stage functions run through ktap_run_stage or a trap; gpuctl_load takes
# optional insmod arguments.
# shellcheck disable=SC2317,SC2119
# shellcheck source=selftests/lib.sh
source "$(dirname "$0")/lib.sh"

set -o pipefail

TMP=$(mktemp -d /tmp/test_privilege.XXXXXX)
chmod 0755 "$TMP"
GPU=0000:01:00.0
UNBOUND=0000:02:00.0
OWNER=3c9e1a7b-5d2f-4e8a-b6c0-7f1d2e3a4b5c
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
# root, minus CAP_SYS_ADMIN: dropped from the bounding set, so the program
# setpriv runs has it in neither its permitted nor its effective set
NOSYSADMIN=(setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin)
MODPROBE0=$(cat /proc/sys/kernel/modprobe)
NOBODY_MON=

cleanup() {
	[ -n "$NOBODY_MON" ] && kill "$NOBODY_MON" 2>/dev/null
	echo "$MODPROBE0" >/proc/sys/kernel/modprobe
	lib_cleanup
	rm -rf "$TMP"
}
trap cleanup EXIT

# expect_eperm WHAT CMD...: CMD fails, and its error is EPERM.
expect_eperm() {
	local what=$1
	shift

	if "$@" >"$TMP/out" 2>"$TMP/err"; then
		echo "$what succeeded:"
		cat "$TMP/out"
		return 1
	fi
	cat "$TMP/err"
	grep -q -e 'Operation not permitted (errno 1)' -e 'Operation not permitted$' "$TMP/err" ||
		{ echo "$what: not EPERM"; return 1; }
}

# expect_sysadmin WHAT CMD...: EPERM, and the kernel says why.
expect_sysadmin() {
	expect_eperm "$@" || return 1
	grep -q 'needs CAP_SYS_ADMIN' "$TMP/err" || { echo "$1: no 'needs CAP_SYS_ADMIN'"; return 1; }
}

# The ledger's state as root sees it: rules, allocations and limits.
ledger_state() {
	gpuctl-nl rule-dump && gpuctl-nl alloc-dump && gpuctl-nl limit-dump
}

check_setup() {
	nl_rule_new "$GPU" driver gpuctl-vfio-pci take || return 1
	expect_pci_driver "$GPU" gpuctl-vfio-pci 0 || return 1
	nl_alloc_new owner "$OWNER" device "$GPU" name vm1 account acme uid 0 || return 1
	gpuctl-nl limit-set scope account name acme max-gpus 4 || return 1
	nl_dev_has "$GPU" "allocation=$ALLOC" || return 1
	modprobe vfio_iommu_type1 || return 1
	vfio_open_start "$GPU" || return 1
	ledger_state >"$TMP/state0" || return 1
	cat "$TMP/state0"
}

check_nobody_reads_inventory() {
	local line

	line=$("${NOBODY[@]}" gpuctl-nl dev-get "$GPU") || return 1
	echo "$line"
	case " $line " in
	*" allocation="* | *" holder_"* | *" open_match="*)
		echo "holder or allocation shown to uid 65534"; return 1 ;;
	*" state=reserved "*) ;;
	*) echo "no state=reserved"; return 1 ;;
	esac
	"${NOBODY[@]}" gpuctl-nl dev-dump >"$TMP/dump" || return 1
	grep -q "^dev address=$GPU " "$TMP/dump" || { echo "$GPU not in the dump"; return 1; }
	if grep -E ' (allocation|holder_[a-z]*|open_match)=' "$TMP/dump"; then
		echo "holder or allocation in uid 65534's dump"
		return 1
	fi
	"${NOBODY[@]}" gpuctl-nl group-dump >/dev/null || return 1
	# the tool too: JSON keys null
	"${NOBODY[@]}" gpuctl -j dev show "$GPU" >"$TMP/json" || return 1
	# shellcheck disable=SC2016 # jq code, not shell
	json_check --arg a "$GPU" '.devices | length == 1 and .[0].address == $a and
		.[0].allocation == null and .[0].holder == null' "$TMP/json"
}

check_root_sees_holder() {
	nl_dev_has "$GPU" "allocation=$ALLOC" "holder_pid=$VFIO_PID" holder_comm=vfio_open \
		holder_uid=0 open_match=owner || return 1
	gpuctl -j dev show "$GPU" >"$TMP/json" || return 1
	# shellcheck disable=SC2016 # jq code, not shell
	json_check --arg a "$GPU" --argjson id "$ALLOC" --argjson pid "$VFIO_PID" \
		'.devices | length == 1 and .[0].address == $a and
		 .[0].allocation == $id and .[0].holder.pid == $pid' "$TMP/json"
}

check_nobody_ledger_reads() {
	expect_eperm "alloc-dump" "${NOBODY[@]}" gpuctl-nl alloc-dump &&
	expect_eperm "alloc-get" "${NOBODY[@]}" gpuctl-nl alloc-get "$ALLOC" &&
	expect_eperm "rule-dump" "${NOBODY[@]}" gpuctl-nl rule-dump &&
	expect_eperm "rule-get" "${NOBODY[@]}" gpuctl-nl rule-get "$RULE" &&
	expect_eperm "limit-dump" "${NOBODY[@]}" gpuctl-nl limit-dump &&
	expect_eperm "limit-get" "${NOBODY[@]}" gpuctl-nl limit-get account acme &&
	expect_eperm "dev-set" "${NOBODY[@]}" gpuctl-nl dev-set "$GPU" 0
}

check_nobody_tool() {
	local cmd

	for cmd in "alloc show" "reserve show" "limit show"; do
		# shellcheck disable=SC2086 # two words
		expect_eperm "gpuctl $cmd" "${NOBODY[@]}" gpuctl $cmd || return 1
		grep -q '^Error: ' "$TMP/err" || { echo "no 'Error:' line"; return 1; }
	done
}

check_nobody_groups() {
	local rc

	expect_eperm "joining ledger" "${NOBODY[@]}" \
		gpuctl-nl monitor --group ledger --timeout 1 || return 1
	# exit 3: subscribed, and the second passed without an event
	"${NOBODY[@]}" gpuctl-nl monitor --group monitor --timeout 1 2>"$TMP/err"
	rc=$?
	cat "$TMP/err"
	[ "$rc" = 3 ] || { echo "gpuctl-nl monitor exited $rc, want 3"; return 1; }
	grep -q 'monitor: subscribed' "$TMP/err"
}

# uid 65534's "monitor" events: devices, never rules, allocations or holders.
check_nobody_events() {
	local gid

	gid=$(monitor_group_id monitor) || return 1
	"${NOBODY[@]}" gpuctl-nl monitor --group monitor >"$TMP/nmon" 2>"$TMP/nmon.err" &
	NOBODY_MON=$!
	wait_subscribed "$NOBODY_MON" "$gid" || return 1
	nlmon_mark
	vfio_open_stop
	nl_alloc_del "$ALLOC" && nl_rule_del "$RULE" || return 1
	expect_pci_driver "$GPU" bochs-drm 30 || return 1
	nlmon_wait "^dev-change-ntf address=$GPU .*action=released( |\$)" || return 1
	sleep 1
	kill "$NOBODY_MON"
	wait "$NOBODY_MON" 2>/dev/null
	NOBODY_MON=
	cat "$TMP/nmon"
	grep -q "^dev-change-ntf address=$GPU .*action=released" "$TMP/nmon" ||
		{ echo "uid 65534 missed the device events"; return 1; }
	if grep -E '^(rule|alloc|vfio)-|allocation=|holder_' "$TMP/nmon"; then
		echo "uid 65534 got ledger events or attributes"
		return 1
	fi
	# root's "ledger" had them
	nlmon_since_mark | grep "^rule-del-ntf " && nlmon_since_mark | grep "^alloc-del-ntf "
}

check_caps() {
	local eff

	eff=$("${NOSYSADMIN[@]}" sed -n 's/^CapEff:\t//p' /proc/self/status) || return 1
	echo "CapEff $eff"
	# CAP_NET_ADMIN is bit 12, CAP_SYS_ADMIN bit 21
	(( (0x$eff >> 12) & 1 )) && ! (( (0x$eff >> 21) & 1 ))
}

check_no_sysadmin_mutations() {
	nl_rule_new "$GPU" take || return 1
	nl_alloc_new owner "$OWNER" device "$GPU" || return 1
	ledger_state >"$TMP/state1" || return 1
	expect_sysadmin rule-new "${NOSYSADMIN[@]}" gpuctl-nl rule-new 0000:81:00.0 &&
	expect_sysadmin rule-del "${NOSYSADMIN[@]}" gpuctl-nl rule-del id "$RULE" &&
	expect_sysadmin alloc-new "${NOSYSADMIN[@]}" gpuctl-nl alloc-new owner "$OWNER" count 1 &&
	expect_sysadmin alloc-del "${NOSYSADMIN[@]}" gpuctl-nl alloc-del id "$ALLOC" &&
	expect_sysadmin limit-set "${NOSYSADMIN[@]}" \
		gpuctl-nl limit-set scope account name acme max-gpus 1 &&
	expect_sysadmin "limit-set remove" "${NOSYSADMIN[@]}" \
		gpuctl-nl limit-set scope account name acme &&
	expect_sysadmin dev-set "${NOSYSADMIN[@]}" gpuctl-nl dev-set "$GPU" 0 &&
	expect_sysadmin alloc-dump "${NOSYSADMIN[@]}" gpuctl-nl alloc-dump || return 1
	expect_sysadmin "gpuctl reserve add" "${NOSYSADMIN[@]}" gpuctl reserve add 0000:81:00.0 &&
	expect_sysadmin "gpuctl dev set" "${NOSYSADMIN[@]}" gpuctl dev set "$GPU" numvfs 0 &&
	expect_sysadmin "gpuctl alloc del" "${NOSYSADMIN[@]}" gpuctl alloc del "$ALLOC" &&
	expect_sysadmin "gpuctl limit set" "${NOSYSADMIN[@]}" gpuctl limit set account acme max 1 ||
		return 1
	ledger_state >"$TMP/state2" || return 1
	diff "$TMP/state1" "$TMP/state2" || { echo "the ledger changed"; return 1; }
	nl_dev_has "$GPU" state=reserved "allocation=$ALLOC"
}

check_request_module() {
	printf '#!/bin/sh\necho "$*" >>%s\nexec %s "$@"\n' \
		"$TMP/modprobe.log" "$MODPROBE0" >"$TMP/modprobe"
	chmod 0755 "$TMP/modprobe"
	: >"$TMP/modprobe.log"
	echo "# modprobe path: $TMP/modprobe (logs, then runs $MODPROBE0)"
	echo "$TMP/modprobe" >/proc/sys/kernel/modprobe
	expect_pci_driver "$UNBOUND" "" 0 || return 1
	# a name from a request is never handed to modprobe
	nl_rule_new "$UNBOUND" driver vfio-nosuch || return 1
	nl_dev_has "$UNBOUND" state=blocked || return 1
	nl_dev_reason "$UNBOUND" | grep 'driver vfio-nosuch is not available' ||
		{ echo "reason: $(nl_dev_reason "$UNBOUND")"; return 1; }
	cat "$TMP/modprobe.log"
	if grep -q nosuch "$TMP/modprobe.log"; then
		echo "modprobe ran for vfio-nosuch"
		return 1
	fi
	nl_rule_del "$RULE" || return 1
	# pci-stub, which gpuctl knows, is loaded when a rule needs it
	if grep -q '^pci_stub ' /proc/modules; then
		echo "# rmmod pci_stub"
		rmmod pci_stub || return 1
	fi
	nl_rule_new "$UNBOUND" driver pci-stub || return 1
	expect_pci_driver "$UNBOUND" pci-stub 0 || return 1
	cat "$TMP/modprobe.log"
	grep -q -- '-- pci-stub$' "$TMP/modprobe.log" ||
		{ echo "pci-stub was not loaded on demand"; return 1; }
	nl_rule_del "$RULE" || return 1
	expect_pci_driver "$UNBOUND" "" 30
}

# A rule from the module parameter takes UNBOUND from vfio-pci while a
# VFIO user has it: no handler refuses it, the worker finds the user and
# leaves the device blocked. Who holds it is the ledger's business. When
# the user goes, the worker takes it.
check_in_use_reason() {
	local line

	# what the setup left goes, so that the module can go
	vfio_open_stop
	nl_allocs_cleanup
	gpuctl-nl limit-set scope account name acme || return 1
	nl_rules_cleanup
	expect_pci_driver "$GPU" bochs-drm 30 || return 1
	[ -n "$NOBODY_MON" ] && kill "$NOBODY_MON" 2>/dev/null
	NOBODY_MON=
	nlmon_stop
	gpuctl_unload || return 1

	write_to vfio-pci "/sys/bus/pci/devices/$UNBOUND/driver_override" &&
	write_to "$UNBOUND" /sys/bus/pci/drivers_probe &&
	expect_pci_driver "$UNBOUND" vfio-pci 0 || return 1
	vfio_open_start "$UNBOUND" || return 1
	gpuctl_load "reserve=$UNBOUND@gpuctl-vfio-pci+take" || return 1
	wait_for 30 nl_dev_has "$UNBOUND" state=blocked || return 1
	line=$(nl_dev_reason "$UNBOUND")
	echo "# root: $line"
	[ "$line" = "open by a VFIO user through vfio-pci" ] || return 1
	line=$("${NOBODY[@]}" gpuctl-nl dev-get "$UNBOUND") || return 1
	echo "# uid 65534: $line"
	case "$line" in
	*" state=blocked "*"state_reason=in use by a VFIO user or an allocation") ;;
	*) echo "uid 65534 is not told 'in use'"; return 1 ;;
	esac
	"${NOBODY[@]}" gpuctl-nl dev-dump >"$TMP/dump" || return 1
	grep "^dev address=$UNBOUND " "$TMP/dump" | tee "$TMP/line" | grep -q 'state_reason=in use by a VFIO user or an allocation$' ||
		{ echo "uid 65534's dump is not told 'in use'"; return 1; }
	if grep 'state_reason=.*vfio-pci' "$TMP/line"; then
		echo "uid 65534's dump names the VFIO driver in the reason"
		return 1
	fi
	# shellcheck disable=SC2016 # jq code, not shell
	"${NOBODY[@]}" gpuctl -j dev show "$UNBOUND" >"$TMP/json" &&
	json_check '.devices | length == 1 and
		.[0].state_reason == "in use by a VFIO user or an allocation"' "$TMP/json" ||
		return 1

	# the user goes: the worker takes the device at once, not at its
	# next driver change
	vfio_open_stop
	expect_pci_driver "$UNBOUND" gpuctl-vfio-pci 30 || return 1
	wait_for 10 nl_dev_has "$UNBOUND" state=reserved >/dev/null ||
		nl_dev_has "$UNBOUND" state=reserved || return 1
	nl_rules_cleanup
	expect_pci_driver "$UNBOUND" "" 30 && expect_pci_override "$UNBOUND" ""
}

ktap_header
ktap_plan 11
gpuctl_load || { ktap_info "cannot load $GPUCTL_KO"; exit 1; }
nlmon_start || { ktap_info "gpuctl-nl monitor did not start"; exit 1; }

ktap_run_stage "setup: $GPU reserved, allocated, a limit; open on full" check_setup
ktap_run_stage "uid 65534 reads the inventory, without allocation or holder" \
	check_nobody_reads_inventory
ktap_run_stage "root sees the allocation and the holder" check_root_sees_holder
ktap_run_stage "uid 65534: EPERM for rule, allocation and limit reads, and dev-set" \
	check_nobody_ledger_reads
ktap_run_stage "uid 65534: gpuctl alloc/reserve/limit show fail with EPERM" check_nobody_tool
ktap_run_stage "uid 65534: joining ledger is EPERM, monitor is open" check_nobody_groups
ktap_run_stage "uid 65534's monitor: device events only, no ledger attributes" \
	check_nobody_events
ktap_run_stage "setpriv drops CAP_SYS_ADMIN and keeps CAP_NET_ADMIN" check_caps
ktap_run_stage "CAP_NET_ADMIN without CAP_SYS_ADMIN: every mutation EPERM" \
	check_no_sysadmin_mutations
ktap_run_stage "request_module: only drivers gpuctl knows" check_request_module
ktap_run_stage "blocked by a VFIO user: its driver told to root only; taken once it goes" \
	check_in_use_reason

ktap_finished
